"""Baseline agents: random, heuristic, torch, and `agents.load` (agents/).

Scenario deals are written in tile notation (`scenario.deal`); the other seats hold ``IDLE``
hands (no pair, no two tiles within a chow's reach), so they never claim or win.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
import torch
from scenario import act, deal, legal

import agents
from agents import RandomAgent, agent_info
from agents.heuristic import HeuristicAgent
from agents.network import PolicyNetwork, save_checkpoint
from agents.torch_agent import TorchAgent
from mahjong_env import actions as A
from mahjong_env import changchun_v0, xinjiang_v0
from mahjong_env.actions import action_id
from mahjong_env.tiles import parse_tiles, tile_index
from mahjong_env.variants import all_variants
from training.evaluate import duplicate_eval

VARIANTS = {v.name: v.env_module for v in all_variants()}
CHECKPOINTS = Path(agents.__file__).parent / "checkpoints"
IDLE = ("147m258p369s1256z", "258m369p147s1347z", "258m147p258s2345z")


pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py


def play_hands(module, players, seeds, on_decision=None):
    """Play one hand per seed with ``players[seat]``; asserts every action is legal.
    ``on_decision(env, agent_name, obs, info, action)`` is called before each step."""
    decisions = 0
    env = module.env()
    for seed in seeds:
        env.reset(seed=seed)
        for player in players:
            player.reset()
        for name in env.agent_iter():
            obs, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
                continue
            info = agent_info(env, name)
            action = players[int(name[-1])].act(obs, info)
            assert obs["action_mask"][action], f"{players[int(name[-1])].name} chose illegal {A.action_name(action)}"
            if on_decision is not None:
                on_decision(env, name, obs, info, action)
            env.step(action)
            decisions += 1
    return decisions


def neutral_step(env) -> None:
    """Pass where offered, else discard the drawn tile."""
    names = legal(env)
    if "pass" in names:
        act(env, "pass")
        return
    drawn = env.view(env.agent_selection)["drawn"]
    act(env, f"discard {drawn}" if drawn and f"discard {drawn}" in names else min(names))


def heuristic_choice(env, seat: int = 0) -> str:
    name = f"player_{seat}"
    assert env.agent_selection == name
    return A.action_name(HeuristicAgent(seed=0).act(env.observe(name), agent_info(env, name)))


def tiny_checkpoint(path: Path, variant: str = "changchun") -> Path:
    torch.manual_seed(0)
    return save_checkpoint(path, PolicyNetwork(channels=8, blocks=1, hidden=32), variant, {"trainer": "test"})


# ---------------------------------------------------------------------- random agent


@pytest.mark.parametrize("variant", VARIANTS)
def test_random_agent_plays_only_legal_actions_and_is_seeded(variant):
    chosen: list[list[int]] = [[], []]
    for run in range(2):
        players = [RandomAgent(seed=seat) for seat in range(4)]
        play_hands(VARIANTS[variant], players, [3, 4], lambda e, n, o, i, a, run=run: chosen[run].append(a))
    assert chosen[0] == chosen[1] and len(chosen[0]) > 50


# ---------------------------------------------------------------------- heuristic agent


@pytest.mark.parametrize("variant", VARIANTS)
def test_heuristic_legal_wins_views_bao_and_never_xianggong(variant):
    """Hundreds of decisions against random players (odd states included): only legal
    actions, ``win`` whenever legal, ``view_bao`` whenever offered, and no 相公 kong (X5)."""
    heuristic = HeuristicAgent(seed=1)
    players = [heuristic, RandomAgent(1), heuristic, RandomAgent(2)]
    seen = {"decisions": 0, "win": 0, "view_bao": 0, "ready_kong": 0}
    env = VARIANTS[variant].env()
    for seed in range(12):
        env.reset(seed=seed)
        for name in env.agent_iter():
            obs, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
                continue
            seat = int(name[-1])
            info = agent_info(env, name)
            mask = obs["action_mask"]
            action = players[seat].act(obs, info)
            assert mask[action]
            env.step(action)
            if players[seat] is not heuristic:
                continue
            seen["decisions"] += 1
            if mask[A.WIN]:
                assert action == A.WIN
                seen["win"] += 1
            elif mask[A.VIEW_BAO]:
                assert action == A.VIEW_BAO
                seen["view_bao"] += 1
            if info["view"]["ready"][seat] and (A.CONCEALED_KONG <= action < A.SPECIAL_ADD or action == A.KONG):
                seen["ready_kong"] += 1
                assert not env.unwrapped.view(name)["xianggong"][seat], "the heuristic's kong made it 相公"
    assert seen["decisions"] > 200 and seen["win"] > 0
    if variant == "changchun":
        assert seen["view_bao"] > 0


def xinjiang_ready_deal(fourth: str):
    """Dealer seat 0 holds 1233367m456p789s + 1z: ``ready 1z`` waits on 5m/8m; seats 1–3 draw
    2z 3z 4z and seat 0 then draws ``fourth``."""
    return deal(xinjiang_v0, ["1233367m456p789s1z", *IDLE], wall=f"2z3z4z{fourth}")


def test_heuristic_declares_ready_in_xinjiang():
    env = xinjiang_ready_deal("9p")
    assert "ready 1z" in legal(env)
    assert heuristic_choice(env) == "ready 1z"


def test_heuristic_wins_on_self_draw_after_ready():
    env = xinjiang_ready_deal("5m")
    act(env, "player_0: ready 1z")
    while env.agent_selection != "player_0":
        neutral_step(env)
    assert "win" in legal(env)
    assert heuristic_choice(env) == "win"


def test_heuristic_never_makes_a_xianggong_kong():
    """X5: ready on 5m/8m with 333m in hand, drawing the fourth 3m: the concealed kong is legal
    but would leave 1267m456p789s, not ready, so the heuristic discards 3m instead."""
    env = xinjiang_ready_deal("3m")
    act(env, "player_0: ready 1z")
    while env.agent_selection != "player_0":
        neutral_step(env)
    assert "concealed_kong 3m" in legal(env)
    assert heuristic_choice(env) == "discard 3m"


def test_heuristic_declares_ready_and_views_the_bao_in_changchun():
    """C7/C8: 123m456p789s666z + 1z 7z: ready on a single wait that satisfies C9 (三色全, 幺九,
    一叉 by 666z); then, once the bao is rolled, it looks at it."""
    env = deal(changchun_v0, ["123m456p789s666z17z", *IDLE[:2], "369m147p258s2345z"])
    choice = heuristic_choice(env)
    assert choice in ("ready 1z", "ready 7z")
    act(env, f"player_0: {choice}")
    for _ in range(20):
        if env.agent_selection == "player_0" and "view_bao" in legal(env):
            break
        neutral_step(env)
    assert "view_bao" in legal(env)
    assert heuristic_choice(env) == "view_bao"


CLAIM_HANDS = ["147m258p369s1235z7z", None, IDLE[1], "258m147p258s2344z"]


@pytest.mark.parametrize(
    "seat1, expected",
    [
        ("123m456p789s55z67z", "pong"),  # 1-shanten → ready (tanki) after pong 5z, discard 6z
        ("123m456p789s12s55z", "pass"),  # ready on 3s (4 unseen); pong would leave a 3-tile tanki
    ],
)
def test_heuristic_claims_only_when_it_helps(seat1, expected):
    env = deal(xinjiang_v0, [CLAIM_HANDS[0], seat1, *CLAIM_HANDS[2:]])
    act(env, "player_0: discard 5z")
    assert env.agent_selection == "player_1" and legal(env) == {"pong", "pass"}
    assert heuristic_choice(env, 1) == expected


def test_heuristic_beats_random_in_both_variants():
    for variant in VARIANTS:
        table = duplicate_eval(variant, {"heuristic": "heuristic", "random": "random"}, hands=100, seed=5)
        assert table["heuristic"]["mean"] - table["heuristic"]["ci95"] > 0, (variant, table)
        assert table["heuristic"]["mean"] > table["random"]["mean"]


def test_heuristic_is_fast():
    """Target < 1 ms per decision on average; the bound here leaves room for a loaded CI box."""
    heuristic = HeuristicAgent(seed=0)
    spent = []
    original = heuristic.act

    def timed(observation, info=None):
        start = time.perf_counter()
        action = original(observation, info)
        spent.append(time.perf_counter() - start)
        return action

    heuristic.act = timed  # type: ignore[method-assign]
    play_hands(changchun_v0, [heuristic] * 4, range(100, 106))
    assert len(spent) > 200 and sum(spent) / len(spent) < 0.005


def test_heuristic_needs_the_view():
    env = changchun_v0.env()
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    with pytest.raises(ValueError, match="agent_info"):
        HeuristicAgent().act(obs, None)


# ---------------------------------------------------------------------- torch agent


def collect_observations(variant: str, n: int) -> list[tuple[dict, dict]]:
    out = []
    play_hands(
        VARIANTS[variant], [RandomAgent(s) for s in range(4)], [11, 12], lambda e, name, o, i, a: out.append((o, i))
    )
    return out[:n]


def test_torch_agent_loads_with_weights_only_and_acts_legally(tmp_path):
    path = tiny_checkpoint(tmp_path / "tiny.pt")
    payload = torch.load(path, weights_only=True)
    assert payload["variant"] == "changchun" and payload["obs_shape"] == [139, 34]
    agent = TorchAgent.from_checkpoint(path, device="cpu")
    pairs = collect_observations("changchun", 120)
    actions = [agent.act(o, i) for o, i in pairs]
    assert all(o["action_mask"][a] for (o, _), a in zip(pairs, actions))
    assert agent.act_batch([o for o, _ in pairs]) == actions


def test_torch_agent_sampling_is_seeded_and_legal(tmp_path):
    path = tiny_checkpoint(tmp_path / "tiny.pt")
    pairs = collect_observations("xinjiang", 80)
    runs = []
    for _ in range(2):
        agent = TorchAgent.from_checkpoint(path, device="cpu", greedy=False, seed=7)
        runs.append(agent.act_batch([o for o, _ in pairs]))
    assert runs[0] == runs[1]
    assert all(o["action_mask"][a] for (o, _), a in zip(pairs, runs[0]))


def test_torch_agent_auto_device_and_bad_files(tmp_path):
    path = tiny_checkpoint(tmp_path / "tiny.pt")
    agent = TorchAgent.from_checkpoint(path, device="auto")
    assert agent.device.type == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ValueError, match="does not exist"):
        TorchAgent.from_checkpoint(tmp_path / "missing.pt")
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError):
        TorchAgent.from_checkpoint(tmp_path / "junk.pt")
    torch.save({"weights": torch.zeros(1)}, tmp_path / "other.pt")
    with pytest.raises(ValueError, match="not a mahjong policy checkpoint"):
        TorchAgent.from_checkpoint(tmp_path / "other.pt")


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("metadata", [1, 2], "metadata must be a dict, got [1, 2]"),
        ("variant", 7, "variant must be a variant name, got 7"),
        ("obs_shape", 5, "was trained for observations 5"),
        ("obs_shape", "ab", "was trained for observations ab"),
    ],
)
def test_a_tampered_checkpoint_field_is_a_value_error(tmp_path, key, value, message):
    payload = torch.load(tiny_checkpoint(tmp_path / "tiny.pt"), weights_only=True)
    payload[key] = value
    torch.save(payload, tmp_path / "tampered.pt")
    with pytest.raises(ValueError, match=re.escape(message)):
        TorchAgent.from_checkpoint(tmp_path / "tampered.pt", device="cpu")


@pytest.mark.parametrize("variant", VARIANTS)
def test_shipped_checkpoints_load_and_act_legally(variant):
    path = CHECKPOINTS / f"{variant}.pt"
    assert path.is_file(), f"missing shipped checkpoint {path}"
    assert path.stat().st_size < 5_000_000
    agent = agents.load(f"torch:{path}", device="cpu")
    assert agent.variant == variant
    play_hands(VARIANTS[variant], [agent, RandomAgent(1), HeuristicAgent(2), agent], [21, 22])


TEACHERS = {"changchun": HeuristicAgent(lookahead=True), "xinjiang": HeuristicAgent(lookahead=True, kongs="first")}
"""The rule-based players the shipped networks were trained to imitate (agents/checkpoints/README.md)."""


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_shipped_checkpoints_depart_from_the_heuristic_where_their_teacher_does(variant):
    """The shipped networks read the default heuristic's choice (prior planes) and the eleven
    analysis rows, and learnt where their teacher departs from the default: in Changchun the
    lookahead discard of 13678m34p6789s222z (1m, whose ready hands wait wider: C9, R8); in
    Xinjiang, trained on ``lookahead=True, kongs="first"``, the kong of 2222m1346m456p79s1z
    that the default declines (R7, X8) and the kong of 1111m23m456p789s12z before the ready
    declaration. Elsewhere they play their teacher's choice."""
    agent = agents.load(f"torch:{CHECKPOINTS / variant}.pt", device="cpu")
    assert agent.network.prior_planes and agent.network.analysis_rows == 11
    module = VARIANTS[variant]

    def choice(hand):
        env = deal(module, [hand, None, None, None])
        return heuristic_choice(env), A.action_name(agent.act(env.observe("player_0"), agent_info(env, "player_0")))

    if variant == "changchun":
        assert choice("13678m34p6789s222z") == ("discard 9s", "discard 1m")
        assert choice("2222m1346m456p79s1z") == ("discard 1z", "discard 1z")
    else:
        assert choice("2222m1346m456p79s1z") == ("discard 1z", "concealed_kong 2m")
        assert choice("1111m23m456p789s12z") == ("ready 2z", "concealed_kong 1m")
    teacher = TEACHERS[variant]
    agree = []

    def compare(env, name, obs, info, action):
        agree.append(action == teacher.act(obs, info))

    play_hands(module, [agent] * 4, [31, 32], on_decision=compare)
    assert len(agree) > 50 and sum(agree) / len(agree) > 0.97


# ---------------------------------------------------------------------- agents.load


def test_load_every_spec_form(tmp_path):
    assert isinstance(agents.load("random"), RandomAgent)
    assert isinstance(agents.load("heuristic", seed=3), HeuristicAgent)
    path = tiny_checkpoint(tmp_path / "tiny.pt")
    assert isinstance(agents.load(f"torch:{path}", device="cpu"), TorchAgent)
    assert isinstance(agents.load("agents.heuristic:HeuristicAgent"), HeuristicAgent)


@pytest.mark.parametrize(
    "spec, message",
    [
        ("", "non-empty"),
        ("alphago", "unknown agent spec"),
        ("torch:/no/such/file.pt", "does not exist"),
        ("no_such_module_xyz:Agent", "cannot import"),
        ("agents.heuristic:NoSuchClass", "has no"),
    ],
)
def test_load_rejects_unknown_specs(spec, message):
    with pytest.raises(ValueError, match=message):
        agents.load(spec)


def test_action_ids_used_by_the_heuristic_match_the_table():
    assert action_id("ready 1z") == A.READY + 27
    assert action_id("concealed_kong 3m") == A.CONCEALED_KONG + 2


# ---------------------------------------------------------------------- heuristic options


@pytest.mark.parametrize("module", [xinjiang_v0, changchun_v0])
def test_heuristic_kongs_always_takes_the_kong_it_would_decline(module):
    """R7, X8, C12: 2222m1346m456p79s1z, the dealer's first turn: the concealed kong of 2m is legal
    but leaves 1346m456p79s1z further from ready, so the default heuristic discards 1z;
    ``kongs="always"`` (a kong pays at once: X8 1 point, C12 2 points from each other player)
    takes it, and the kong's payment arrives when it stands."""
    env = deal(module, ["2222m1346m456p79s1z", None, None, None])
    assert "concealed_kong 2m" in legal(env)
    assert heuristic_choice(env) == "discard 1z"
    info = agent_info(env, "player_0")
    choice = HeuristicAgent(kongs="always").act(env.observe("player_0"), info)
    assert A.action_name(choice) == "concealed_kong 2m"
    act(env, "player_0: concealed_kong 2m")
    per_payer = 1.0 if module is xinjiang_v0 else 2.0
    assert env.rewards == {"player_0": 3 * per_payer, **{f"player_{s}": -per_payer for s in (1, 2, 3)}}


def test_heuristic_kongs_always_claims_the_exposed_kong():
    """R6/X2: player_1 holds 555p3467p and may pong or kong player_0's 5p; the default heuristic
    pongs (the kong breaks 345p/567p), ``kongs="always"`` kongs."""
    env = deal(xinjiang_v0, ["147m258p369s12356z", "555p3467p123m78m9s", None, None])
    act(env, "player_0: discard 5p")
    assert env.agent_selection == "player_1" and {"pong", "kong"} <= legal(env)
    assert heuristic_choice(env, 1) == "pong"
    info = agent_info(env, "player_1")
    assert A.action_name(HeuristicAgent(kongs="always").act(env.observe("player_1"), info)) == "kong"


def test_heuristic_kongs_first_takes_the_kong_before_the_ready_declaration():
    """1111m23m456p789s12z: ``ready 2z`` and the concealed kong of 1m are both legal; the default
    heuristic and ``kongs="always"`` declare ready, ``kongs="first"`` kongs (measured better in
    Xinjiang, README)."""
    env = deal(xinjiang_v0, ["1111m23m456p789s12z", None, None, None])
    info = agent_info(env, "player_0")
    obs = env.observe("player_0")
    assert heuristic_choice(env) == "ready 2z"
    assert A.action_name(HeuristicAgent(kongs="always").act(obs, info)) == "ready 2z"
    assert A.action_name(HeuristicAgent(kongs="first").act(obs, info)) == "concealed_kong 1m"


def test_heuristic_lookahead_discards_for_the_wider_ready_hands():
    """R8, C9: the Changchun dealer's first turn with 13678m34p6789s222z is one step from ready
    after discarding 1m, 3m, 3p, 4p, 6s or 9s. The default heuristic keeps the most acceptance
    (discard 9s: 24 unseen useful tiles, against 17 for 1m); ``lookahead=True`` discards 1m
    (3m ties with it; the default order breaks the tie), whose useful draws lead to ready
    hands waiting on 120 unseen winning tiles in all (draw copies times live waits, counted
    here with the rule set's own C9 readings) against 108 for 9s and 6s and 24 for 3p and 4p."""
    env = deal(changchun_v0, ["13678m34p6789s222z", None, None, None])
    info = agent_info(env, "player_0")
    obs = env.observe("player_0")
    assert heuristic_choice(env) == "discard 9s"
    assert A.action_name(HeuristicAgent(lookahead=True).act(obs, info)) == "discard 1m"
    rules = env.unwrapped.game.rules
    counts = [0] * 34
    for t in parse_tiles("13678m34p6789s222z"):
        counts[t] += 1
    unseen = [4 - n for n in counts]  # nothing else is visible on the first turn

    def prospects(discard: int) -> int:
        total = 0
        for draw in range(34):
            hand14 = list(counts)
            hand14[discard] -= 1
            hand14[draw] += 1
            if not unseen[draw] or hand14[draw] > 4:
                continue
            best = 0
            for out in (t for t in range(34) if hand14[t]):
                hand14[out] -= 1
                live = 0
                for w in range(34):
                    if hand14[w] < 4:
                        hand14[w] += 1
                        if rules.readings([], hand14):
                            live += unseen[w] - (w == draw)
                        hand14[w] -= 1
                hand14[out] += 1
                best = max(best, live)
            total += unseen[draw] * best
        return total

    assert [prospects(tile_index(t)) for t in ("3m", "1m", "9s", "6s", "3p", "4p")] == [120, 120, 108, 108, 24, 24]


def test_heuristic_lookahead_changes_nothing_away_from_one_step():
    """The lookahead only breaks ties one step from ready: a ready declaration and a hand two
    steps away play as the default heuristic does."""
    for hand in ("123m456p789s1122z3z", "147m258p369s12356z", "2222m1346m456p79s1z"):
        env = deal(changchun_v0, [hand, None, None, None])
        info = agent_info(env, "player_0")
        obs = env.observe("player_0")
        assert HeuristicAgent(lookahead=True).act(obs, info) == HeuristicAgent().act(obs, info)


def test_heuristic_rejects_unknown_options():
    with pytest.raises(ValueError, match="lookahead"):
        HeuristicAgent(lookahead="yes")
    with pytest.raises(ValueError, match="lookahead"):
        agents.load("heuristic?lookahead=1")
    with pytest.raises(ValueError, match="kongs"):
        HeuristicAgent(kongs="sometimes")
    with pytest.raises(ValueError, match="kongs"):
        agents.load('heuristic?kongs="never"')
