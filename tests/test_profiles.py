"""Rule profiles (RULES.md C14): the ``profile`` keyword of every constructor, the profile table,
records that replay without it, bounds on the numeric fields, and the MIL 2024 profile under
play (legal masks, hidden information, agents, a tournament).

The expected MIL values are transcribed from RULES.md C14, not read from the code's table.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from test_properties import hidden_info_comparisons, play_checked

import agents
from agents.tournament.cli import main as tournament_main
from agents.tournament.storage import ResultStore
from mahjong_env import changchun_v0, replay, xinjiang_v0
from mahjong_env.actions import action_id, action_name
from mahjong_env.adapters.vector import VectorMahjong
from mahjong_env.engine.state import MeldKind, Phase
from mahjong_env.rules.base import make_config
from mahjong_env.rules.changchun import PROFILES, ChangchunConfig
from mahjong_env.rules.xinjiang import XinjiangConfig
from mahjong_env.tiles import NUM_KINDS, format_tiles, parse_tiles
from mahjong_env.variants import get_variant

# RULES.md C14: every field profile="mil2024" sets, and its MIL value
MIL2024 = {
    "bao_dice": 1,
    "bao_change_counts_melds": True,
    "concealed_kong_keeps_closed": True,
    "discard_all_pay": True,
    "dealer_pays_extra": True,
    "unready_discarder_pays_all": True,
    "allow_seven_pairs": True,
    "rob_added_kong": True,
    "concealed_kong_visible": False,
    "require_ready_to_win": False,
    "fan_cap": 7,
    "max_bao_rolls": 6,
    "xuanfeng_three_winds": True,
    "yaoji_wild": True,
    "claimed_first_turn_no_add": True,
    "ready_needs_terminal": True,
    "passed_win_lock_by_fan": True,
    "final_draws": 4,
    "bao_roll_at_next_turn": True,
    "mobao_fan": 1,
    "duibao_fan": 1,
}
C14_FIELDS = (
    "xuanfeng_three_winds",
    "yaoji_wild",
    "claimed_first_turn_no_add",
    "ready_needs_terminal",
    "passed_win_lock_by_fan",
    "final_draws",
    "bao_roll_at_next_turn",
    "mobao_fan",
    "duibao_fan",
)


# ---------------------------------------------------------------------------------- the table


def test_mil2024_sets_every_mil_value_and_nothing_else():
    config = changchun_v0.raw_env(profile="mil2024").config
    defaults = ChangchunConfig().to_dict()
    for name, value in config.to_dict().items():
        assert value == MIL2024.get(name, defaults[name]), name
    assert PROFILES["mil2024"] == MIL2024


def test_the_seed_profile_is_the_defaults_and_keeps_todays_behaviour():
    assert changchun_v0.raw_env(profile="seed").config == changchun_v0.raw_env().config == ChangchunConfig()
    assert xinjiang_v0.raw_env(profile="seed").config == XinjiangConfig()
    defaults = ChangchunConfig()
    # C14: every new field is off (or the seed's value) by default
    assert [getattr(defaults, f) for f in C14_FIELDS] == [False, False, False, False, False, 0, False, 2, 2]


def test_explicit_keywords_override_the_profile():
    config = changchun_v0.raw_env(profile="mil2024", bao_dice=2, final_draws=0, yaoji_wild=False).config
    assert (config.bao_dice, config.final_draws, config.yaoji_wild) == (2, 0, False)
    assert config.discard_all_pay and config.xuanfeng_three_winds and config.mobao_fan == 1


@pytest.mark.parametrize(
    "module,profile,valid",
    [(changchun_v0, "mil2023", "mil2024, seed"), (xinjiang_v0, "mil2024", "seed"), (changchun_v0, 7, "mil2024, seed")],
    ids=["changchun_typo", "xinjiang_has_only_seed", "not_a_name"],
)
def test_unknown_profile_is_a_value_error_naming_the_valid_ones(module, profile, valid):
    with pytest.raises(ValueError, match=f"unknown profile {profile!r}.*valid profiles: {valid}"):
        module.raw_env(profile=profile)


@pytest.mark.parametrize(
    "field,value",
    [
        ("fan_cap", 0),
        ("fan_cap", 31),
        ("max_bao_rolls", 0),
        ("max_bao_rolls", 10_000),
        ("bao_dice", 3),
        ("bao_dice", 0),
        ("final_draws", -1),
        ("final_draws", 40),
        ("mobao_fan", 0),
        ("mobao_fan", 99),
        ("duibao_fan", -1),
        ("duibao_fan", 11),
    ],
)
def test_numeric_fields_are_bounded(field, value):
    with pytest.raises(ValueError, match=f"ChangchunConfig.{field} must be"):
        changchun_v0.raw_env(**{field: value})
    with pytest.raises(ValueError, match=f"ChangchunConfig.{field} must be"):
        changchun_v0.raw_env(profile="mil2024", **{field: value})


def test_record_holds_the_resolved_fields_and_replays_without_the_table():
    raw, _, _ = play_checked(changchun_v0, 21, 4, num_hands=2, profile="mil2024")
    record = json.loads(json.dumps(raw.record()))
    assert "profile" not in record["config"]
    assert record["config"] == raw.config.to_dict()
    assert {name: record["config"][name] for name in MIL2024} == MIL2024
    assert replay(record) == [h["result"] for h in record["hands"]]


# ------------------------------------------------------------------------------ the docs

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _doc_table(text: str, heading: str) -> tuple[list[str], dict[str, list]]:
    """The profile names and the rows (field -> values) of the table under ``heading``."""
    section = text.split(f"## {heading}", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    profiles = re.findall(r"`([^`]+)`", lines[0])
    rows = {}
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0].strip("`")] = [json.loads(c.strip("`")) for c in cells[2:]]
    return profiles, rows


@pytest.mark.parametrize("heading,cls", [("Changchun", ChangchunConfig), ("Xinjiang", XinjiangConfig)])
def test_profiles_doc_lists_every_profile_and_field_as_the_code_resolves_them(heading, cls):
    profiles, rows = _doc_table((DOCS / "profiles.md").read_text(encoding="utf-8"), heading)
    assert sorted(profiles) == sorted(cls.profiles)
    resolved = {p: make_config(cls, {"profile": p}).to_dict() for p in profiles}
    assert set(rows) == set(resolved["seed"]), "docs/profiles.md: the fields differ from the config's"
    for field, values in rows.items():
        assert values == [resolved[p][field] for p in profiles], field


def test_every_section_cited_in_the_code_is_in_docs_rules():
    # the code cites RULES.md sections in comments (# C8); docs/rules.md keeps their numbers
    sections = set(re.findall(r"^\*\*([RXC]\d+) ", (DOCS / "rules.md").read_text(encoding="utf-8"), re.M))
    root = DOCS.parent
    cited = set()
    for path in [*root.glob("mahjong_env/**/*.py"), *root.glob("agents/**/*.py")]:
        for line in path.read_text(encoding="utf-8").splitlines():
            if "#" in line:
                cited.update(re.findall(r"(?<![A-Za-z0-9_])([RXC]\d{1,2})(?![0-9])", line.split("#", 1)[1]))
    assert {"R13", "C8", "C14", "X5"} <= cited
    assert cited <= sections, sorted(cited - sections)


# ---------------------------------------------------------------------- every constructor


def test_gymnasium_and_vector_envs_take_the_profile():
    env = gym.make("mahjong_env/Changchun-v0", profile="mil2024", opponents="random")
    try:
        assert env.unwrapped.aec.config.final_draws == 4
        env.reset(seed=3)
    finally:
        env.close()
    with pytest.raises(ValueError, match="valid profiles: seed"):
        gym.make("mahjong_env/Xinjiang-v0", profile="mil2024")
    vector = VectorMahjong("changchun", 2, seed=5, profile="mil2024", final_draws=2)
    assert vector.config.final_draws == 2 and vector.config.bao_dice == 1


def test_tournament_rule_profile(tmp_path, capsys):
    db = tmp_path / "mil.sqlite"
    args = ["--variant", "changchun", "--agents", "random", "random", "--hands", "2", "--seed", "1"]
    assert (
        tournament_main(
            args + ["--rule", "profile=mil2024", "--db", str(db), "--workers", "0", "--quiet", "--no-report"]
        )
        == 0
    )
    with ResultStore(db) as store:
        hands = list(store.hands(with_record=True))
    assert hands
    for hand in hands:
        record = hand["record"]
        assert record["config"]["final_draws"] == 4 and record["config"]["bao_dice"] == 1
        assert replay(record) == [h["result"] for h in record["hands"]]
    bad = tmp_path / "bad.sqlite"
    with pytest.raises(SystemExit) as exit_info:
        tournament_main(args + ["--rule", "profile=mil2023", "--db", str(bad), "--quiet"])
    assert exit_info.value.code == 2 and "valid profiles: mil2024, seed" in capsys.readouterr().err


# ------------------------------------------------------------------- MIL 2024 under play

# dealt groups that the C14 declarations use (three winds, a 1s standing in), per seat
_SPECIAL_SEEDS = ("123z1s56z", "9m9p1s234z", "1m1p1s567z", "124z9s9m7z")


def special_rich_deal(seed: int) -> dict:
    """A deal (reset options) in which every seat is dealt tiles for C5 groups under the C14
    fields, the rest shuffled from ``seed``; seat 0 deals."""
    rng = random.Random(seed)
    left = [t for t in range(NUM_KINDS) for _ in range(4)]
    hands = []
    for part in _SPECIAL_SEEDS:
        tiles = parse_tiles(part)
        for t in tiles:
            left.remove(t)
        hands.append(tiles)
    rng.shuffle(left)
    for seat, tiles in enumerate(hands):
        need = (14 if seat == 0 else 13) - len(tiles)
        tiles.extend(left[:need])
        del left[:need]
    return {"hands": [format_tiles(h) for h in hands], "wall": format_tiles(left)}


def _eager_choice(names: list[str], rng: random.Random) -> str:
    """Random play that favours declarations, additions, ready, the bao view, and passes a
    win now and then (so the C14 lock by fan comes into play)."""
    for prefix, chance in (("special", 0.9), ("view_bao", 0.8), ("ready", 0.7)):
        options = [n for n in names if n.startswith(prefix)]
        if options and rng.random() < chance:
            return rng.choice(options)
    if "win" in names:
        return "win" if rng.random() < 0.5 or "pass" not in names else "pass"
    return rng.choice(names)


def eager_hand(seed: int) -> tuple[dict, dict]:
    """One mil2024 hand of `_eager_choice` play on a `special_rich_deal`; checks at every step
    that the mask and ``legal_actions`` agree and the rewards sum to zero. Returns the hand's
    record and counts of what happened."""
    raw = changchun_v0.raw_env(profile="mil2024")
    raw.reset(seed=seed, options=special_rich_deal(seed))
    rng = random.Random(seed)
    seen = {"fenzhang": 0, "three_winds": 0, "wild": 0, "fan_lock": 0, "deferred_roll": 0}
    for _ in range(1000):
        if all(raw.terminations.values()):
            break
        agent = raw.agent_selection
        names = raw.legal_actions(agent)
        mask = raw.observe(agent)["action_mask"]
        assert sorted(names) == sorted(action_name(i) for i in np.flatnonzero(mask))
        game = raw.game
        seen["fenzhang"] += game.phase == Phase.FINAL_DRAW
        seen["fan_lock"] += any(st.passed_fan for st in game.seats)
        seen["deferred_roll"] += game.bao_roll_due is not None
        raw.step(action_id(_eager_choice(names, rng)))
        assert abs(sum(raw.rewards.values())) < 1e-9
    else:
        raise AssertionError("the hand did not end")
    for st in raw.game.seats:
        for meld in st.melds:
            declared = meld.tiles[:3]  # C14: a 旋风杠 is declared with three winds, the rest are additions
            seen["three_winds"] += meld.kind is MeldKind.SPECIAL_WINDS and len(set(declared) - {18}) == 3
            seen["wild"] += meld.kind is not MeldKind.SPECIAL_ONES and 18 in meld.tiles
    return raw.record()["hands"][0], seen


def test_mil2024_hidden_information_with_the_c14_masks():
    """R13 under mil2024 on deals rich in C14 declarations: twin deals (another seat's tiles or
    the deep wall changed) look the same to the observer; the play covers 3-wind 旋风杠, the 1s
    standing in, the deferred bao roll, the lock by fan and the final draws."""
    rng = random.Random(14)
    compared = 0
    total: dict[str, int] = {}
    for seed in range(30):
        hand, seen = eager_hand(seed)
        for key, n in seen.items():
            total[key] = total.get(key, 0) + n
        compared += hidden_info_comparisons(changchun_v0, seed, hand, rng.randrange(4), rng, profile="mil2024")
    assert compared >= 150
    assert all(total.values()), total


@pytest.mark.parametrize(
    "variant,profile",
    [("xinjiang", "seed"), ("changchun", "seed"), ("changchun", "mil2024")],
)
def test_heuristic_plays_legally_under_every_profile(variant, profile):
    module = get_variant(variant).env_module
    agent = agents.load("heuristic")
    for seed in range(12):
        env = module.env(profile=profile)  # illegal_action="raise": an illegal move fails here
        env.reset(seed=seed)
        for name in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            env.step(None if term or trunc else agent.act(obs, agents.agent_info(env, name)))
