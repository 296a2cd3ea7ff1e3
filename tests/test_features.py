"""Analysis features (mahjong_env.features): golden values, danger, rule fields, the env option
and R13 (they derive from the player's own view, so twin deals must give the same planes)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from scenario import deal
from test_properties import hidden_info_comparisons, play_checked

import agents
from agents.network import PolicyNetwork
from agents.torch_agent import TorchAgent
from mahjong_env import changchun_v0, xinjiang_v0
from mahjong_env.features import (
    ANALYSIS_CHANNELS,
    MeldSummary,
    PlayerAnalysis,
    analysis_planes,
    discard_danger,
    rule_set,
    unseen_counts,
)
from mahjong_env.observation import NUM_CHANNELS, OBSERVATION_LAYOUT
from mahjong_env.tiles import TERMINALS_AND_HONORS, tile_index

ROW = {name: i for i, name in enumerate(ANALYSIS_CHANNELS)}


def test_golden_discard_planes_of_a_ready_shape():
    """R8/X3: 123m456p789s1122z3z: discarding 3z leaves a shanpon wait on 1z/2z (two unseen
    each), discarding anything else leaves the hand one step away."""
    env = deal(xinjiang_v0, ["123m456p789s1122z3z", None, None, None], dealer=0)
    view = env.view("player_0")
    planes = analysis_planes(view, "xinjiang", env.config.to_dict(), env.action_mask("player_0"))
    assert planes.shape == (len(ANALYSIS_CHANNELS), 34)
    z3, m1 = tile_index("3z"), tile_index("1m")
    assert planes[ROW["discard_shanten"], z3] == pytest.approx(1 / 9)
    assert planes[ROW["discard_shanten"], m1] == pytest.approx(2 / 9)
    assert planes[ROW["discard_best"]].nonzero()[0].tolist() == [z3]
    assert planes[ROW["discard_ready_live"], z3] == pytest.approx(0.1 + 4 / 20)
    assert planes[ROW["discard_ready_live"], m1] == 0
    assert planes[ROW["discard_shanten"], tile_index("5m")] == 0  # not held
    # seven pairs (X3): 1z and 2z are the only pairs, so discarding 3z leaves 6 - 2 = 4 steps
    assert planes[ROW["seven_pairs"], z3] == pytest.approx(5 / 7)
    assert planes[ROW["unseen"], tile_index("1z")] == pytest.approx(2 / 4)
    assert not planes[ROW["danger"]].any()  # nobody is ready


def test_golden_discard_prospects():
    """R8, C9: 13678m34p6789s222z (Changchun dealer, first turn) is one step from ready after
    its six best discards, whose `PlayerAnalysis.ready_prospects` (the unseen winning tiles
    their useful draws lead to) are 120, 108 and 24 (tests/test_agents.py counts them with the
    rule set's readings): ``discard_prospects`` is 1 for the best (1m, 3m), half their share of
    120 for the others, and nothing elsewhere. A ready shape (one best discard that declares)
    has no prospects row."""
    env = deal(changchun_v0, ["13678m34p6789s222z", None, None, None])
    planes = analysis_planes(env.view("player_0"), "changchun", env.config.to_dict(), env.action_mask("player_0"))
    row = planes[ROW["discard_prospects"]]
    expected = {"1m": 120, "3m": 120, "3p": 24, "4p": 24, "6s": 108, "9s": 108}
    assert {int(t): float(row[t]) for t in row.nonzero()[0]} == pytest.approx(
        {tile_index(k): 1.0 if v == 120 else 0.5 * v / 120 for k, v in expected.items()}
    )
    analysis = PlayerAnalysis(env.view("player_0"), "changchun", env.config.to_dict())
    assert {k: analysis.ready_prospects(tile_index(k)) for k in expected} == expected
    assert set(row.nonzero()[0]) == set(planes[ROW["discard_best"]].nonzero()[0])
    ready = deal(xinjiang_v0, ["123m456p789s1122z3z", None, None, None], dealer=0)
    planes = analysis_planes(ready.view("player_0"), "xinjiang", ready.config.to_dict(), ready.action_mask("player_0"))
    assert not planes[ROW["discard_prospects"]].any()


def test_seven_pairs_follow_the_rule_field():
    """C9: seven pairs count in Changchun only with allow_seven_pairs; X3 allows them."""
    view = {
        "seat": 0,
        "hand": "1155m2299p3377s46z",
        "melds": [[], [], [], []],
        "discards": [[], [], [], []],
        "ready": [False] * 4,
        "xianggong": [False] * 4,
        "bao": None,
        "claim": None,
        "history": [],
    }
    off = PlayerAnalysis(view, "changchun", {"allow_seven_pairs": False})
    on = PlayerAnalysis(view, "changchun", {"allow_seven_pairs": True})
    assert not off.seven_pairs and on.seven_pairs and PlayerAnalysis(view, "xinjiang", {}).seven_pairs
    assert on.effective(on.counts, on.melds) < off.effective(off.counts, off.melds)


def test_danger_marks_what_a_ready_player_let_pass_as_safe():
    """R8/C7: a ready player's winning tiles are fixed; a tile discarded after its declaration
    that it did not win on is safe against it; its own declaration tile is not."""
    view = {
        "seat": 0,
        "hand": "123m456p789s1122z3z",
        "melds": [[], [], [], []],
        "discards": [["7z"], ["5m"], ["3p"], ["9s"]],
        "ready": [False, True, False, False],
        "xianggong": [False] * 4,
        "bao": None,
        "claim": None,
        "history": [[0, "7z", False, False], [1, "5m", False, True], [2, "3p", False, False], [3, "9s", False, False]],
    }
    danger = discard_danger(view)
    assert danger[tile_index("3p")] == 0 and danger[tile_index("9s")] == 0
    assert danger[tile_index("5m")] == 1.0 and danger[tile_index("7z")] > 0  # before the declaration
    assert danger[tile_index("1m")] < danger[tile_index("5m")]  # terminals are safer than middle tiles
    assert unseen_counts(view)[tile_index("7z")] == 3
    assert discard_danger(dict(view, xianggong=[False, True, False, False])) == [0.0] * 34  # 相公 cannot win


def test_env_option_appends_the_planes_and_its_space_holds_them():
    env = changchun_v0.env(analysis_features=True)
    env.reset(seed=3)
    space = env.observation_space("player_0")["observation"]
    assert space.shape == (NUM_CHANNELS + len(ANALYSIS_CHANNELS), 34)
    for step, name in enumerate(env.agent_iter()):
        if step == 40:
            break
        obs, _, term, trunc, _ = env.last()
        assert space.contains(obs["observation"])
        raw = env.unwrapped
        expected = analysis_planes(raw.view(name), "changchun", raw.config.to_dict(), obs["action_mask"])
        np.testing.assert_array_equal(obs["observation"][NUM_CHANNELS:], expected)
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    with pytest.raises(ValueError, match="analysis_features"):
        changchun_v0.env(analysis_features="yes")
    assert changchun_v0.env().observation_space("player_0")["observation"].shape == (NUM_CHANNELS, 34)


def test_torch_agent_reads_the_planes_from_the_env_or_computes_them_from_its_view():
    network = PolicyNetwork(8, 1, 32, extra_planes=len(ANALYSIS_CHANNELS), advantage_head=True)
    agent = TorchAgent(network, variant="changchun", device="cpu")

    def choose(name, plain, rich):
        a = agent.act(plain.observe(name), agents.agent_info(plain, name))
        assert a == agent.act(rich.observe(name), agents.agent_info(rich, name))
        assert plain.observe(name)["action_mask"][a]
        return a

    play_in_lockstep(choose)


def play_in_lockstep(choose, steps=30):
    """A Changchun deal in the default env and in ``analysis_features=True`` side by side: at
    each of the first ``steps`` decisions ``choose(name, plain, rich)`` returns the action both
    envs take."""
    plain, rich = changchun_v0.env(), changchun_v0.env(analysis_features=True)
    plain.reset(seed=9)
    rich.reset(seed=9)
    for _ in range(steps):
        action = choose(plain.agent_selection, plain, rich)
        plain.step(action)
        rich.step(action)
        if all(plain.terminations.values()):
            break


@pytest.mark.parametrize("prior", [False, True])
def test_a_network_made_before_discard_prospects_reads_the_first_ten_rows(prior):
    """A network trained on the ten analysis rows that existed before ``discard_prospects``
    (extra_planes 10, or 12 with the prior planes) gets exactly those rows, whether the agent
    computes them or the env (``analysis_features=True``, 11 rows) carries them; the prior
    planes follow them. An arch with more analysis rows than exist is refused."""
    from agents.network import LEGACY_ANALYSIS_ROWS, PRIOR_ROWS

    extra = LEGACY_ANALYSIS_ROWS + (PRIOR_ROWS if prior else 0)
    network = PolicyNetwork(8, 1, 32, extra_planes=extra, prior_planes=prior)
    assert network.analysis_rows == LEGACY_ANALYSIS_ROWS < len(ANALYSIS_CHANNELS)
    agent = TorchAgent(network, variant="changchun", device="cpu")

    def choose(name, plain, rich):
        obs, info = plain.observe(name), agents.agent_info(plain, name)
        rows = agent._stack([obs], [info])[0]
        assert rows.shape == (NUM_CHANNELS + extra, 34)
        planes = analysis_planes(info["view"], "changchun", info["config"], obs["action_mask"])
        legacy = slice(NUM_CHANNELS, NUM_CHANNELS + LEGACY_ANALYSIS_ROWS)
        np.testing.assert_array_equal(rows[legacy], planes[:LEGACY_ANALYSIS_ROWS])
        np.testing.assert_array_equal(agent._stack([rich.observe(name)], [agents.agent_info(rich, name)])[0], rows)
        return agent.act(obs, info)

    play_in_lockstep(choose)
    with pytest.raises(ValueError, match="analysis rows"):
        PolicyNetwork(8, 1, 32, extra_planes=len(ANALYSIS_CHANNELS) + 1)


@pytest.mark.parametrize(
    "variant,module,profile",
    [("xinjiang", xinjiang_v0, "seed"), ("changchun", changchun_v0, "seed"), ("changchun", changchun_v0, "mil2024")],
)
def test_r13_analysis_planes_reveal_nothing_hidden(variant, module, profile):
    """R13: twin deals (others' tiles or the undrawn wall swapped) give the observer the same
    observation, analysis planes included, until its own information differs."""
    rng = random.Random(31)
    compared = 0
    for seed in range(12):
        raw, _, _ = play_checked(module, seed, seed, profile=profile)
        hand = raw.record()["hands"][0]
        compared += hidden_info_comparisons(
            module, seed, hand, rng.randrange(4), rng, profile=profile, analysis_features=True
        )
    assert compared >= 60


def test_the_analysis_waits_are_the_rule_sets():
    """`PlayerAnalysis.waits` asks the rule set's C9 predicates: a Changchun hand that lacks a
    suit waits on nothing, the same shape in Xinjiang waits; C9.4 手把一: a single tile beside an
    exposed chow never wins, and a concealed kong's tiles count as concealed (C3), as the
    engine's `ChangchunRules.readings` judges them."""
    table = {
        "seat": 0,
        "melds": [[], [], [], []],
        "discards": [[], [], [], []],
        "ready": [False] * 4,
        "xianggong": [False] * 4,
    }
    one_suit = dict(table, hand="1112345678999m")  # nine gates: every m tile completes it
    changchun = PlayerAnalysis(one_suit, "changchun")
    xinjiang = PlayerAnalysis(one_suit, "xinjiang")
    assert changchun.waits(changchun.counts, changchun.melds) == 0  # C9 三色全
    assert xinjiang.waits(xinjiang.counts, xinjiang.melds) == sum(1 << t for t in range(9))
    chows = [{"kind": "chow", "tiles": tiles, "from": 3} for tiles in ("123m", "123p", "789s", "789m")]
    single = PlayerAnalysis(dict(table, hand="5z", melds=[chows, [], [], []]), "changchun")
    assert single.waits(single.counts, single.melds) == 0  # C9.4 手把一
    melded = PlayerAnalysis(dict(table, hand="5z", melds=[chows, [], [], []]), "xinjiang")
    assert melded.waits(melded.counts, melded.melds) == 1 << 31
    kong = [*chows[:3], {"kind": "concealed_kong", "tiles": "5555p", "from": None}]
    concealed = PlayerAnalysis(dict(table, hand="5z", melds=[kong, [], [], []]), "changchun")
    assert concealed.waits(concealed.counts, concealed.melds) == 1 << 31  # its kong counts as concealed
    exposed = [*chows[:3], {"kind": "kong", "tiles": "5555p", "from": 2}]
    shown = PlayerAnalysis(dict(table, hand="5z", melds=[exposed, [], [], []]), "changchun")
    assert shown.waits(shown.counts, shown.melds) == 0


def _shortfall_by_the_words_of_c9(counts: list[int], suits: int, yaojiu: bool, triplet: bool) -> float:
    """C9's missing conditions read off the rule: a suit neither held nor melded (三色全), no
    1, 9 or honor anywhere (幺九), and no triplet: none melded, none held, no dragon pair
    (一叉; half where a pair may still grow into one)."""
    missing = sum(1.0 for s in range(3) if not suits >> s & 1 and not any(counts[9 * s : 9 * s + 9]))
    if not yaojiu and not any(counts[t] for t in TERMINALS_AND_HONORS):
        missing += 1.0
    if not triplet and max(counts) < 3 and max(counts[31:34]) < 2:
        missing += 0.5 if max(counts) >= 2 else 1.0
    return missing


def test_c9_shortfall_as_players_weigh_it():
    """`ChangchunRules.tile_condition_shortfall` (one pass over the kinds, typed when compiled)
    counts C9's missing conditions as the rule's words do, for 20,000 seeded hands and melds."""
    rules = rule_set("changchun")
    rng = random.Random(9)
    for _ in range(20_000):
        counts = [0] * 34
        for _ in range(rng.randint(0, 14)):
            t = rng.randrange(34)
            counts[t] += counts[t] < 4
        melds = MeldSummary()
        melds.suits, melds.yaojiu, melds.triplet = rng.randrange(8), rng.random() < 0.3, rng.random() < 0.3
        expected = _shortfall_by_the_words_of_c9(counts, melds.suits, melds.yaojiu, melds.triplet)
        assert rules.tile_condition_shortfall(counts, melds) == expected, (counts, melds.suits)


@pytest.mark.parametrize("module", [xinjiang_v0, changchun_v0])
def test_the_visible_row_gives_the_unseen_counts_of_the_view(module):
    """R13: the observation's ``visible`` row counts what the view shows (own hand, every shown
    meld, every river, the bao once seen), so the analysis and the heuristic read the unseen
    tiles from it and decide as they do from the view alone, at every decision of seeded games."""
    row = OBSERVATION_LAYOUT.offset["visible"]
    heuristic = agents.load("heuristic?lookahead=true")
    env = module.env()
    variant = module.__name__.rsplit(".", 1)[-1].removesuffix("_v0")
    checked = 0
    for seed in range(8):
        env.reset(seed=seed)
        for agent in env.agent_iter():
            observation, _, done, cut, _ = env.last()
            if done or cut:
                env.step(None)
                continue
            view = env.view(agent)
            info = {"view": view, "variant": variant, "config": env.config.to_dict()}
            analysis = PlayerAnalysis(view, variant, info["config"], observation["observation"][row])
            assert analysis.unseen == unseen_counts(view)
            action = heuristic.act(observation, info)
            assert action == heuristic.act({"action_mask": observation["action_mask"]}, info)
            checked += 1
            env.step(action)
    assert checked > 300
