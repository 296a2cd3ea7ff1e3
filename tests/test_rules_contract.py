"""The rule-set contract (issue 12): `RuleSet` declares every question the engine asks, and a
rule set's answers never change the game; the single sources of game facts the engine, the rule
sets and the envs share (chow shapes, the illegal-action wording, R7/R13 visibility)."""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

from mahjong_env import actions as A
from mahjong_env._native import source_path
from mahjong_env.engine import game as game_module
from mahjong_env.engine.state import MeldKind, Phase, SeatState, WindowKind
from mahjong_env.rules.base import RuleConfig, RuleSet
from mahjong_env.tiles import parse_tiles
from mahjong_env.variants import get_variant
from mahjong_env.visibility import concealed_kong_hidden

CONFIGS = [
    ("xinjiang", {}),
    ("xinjiang", {"allow_discard_win": True}),
    ("changchun", {}),
    ("changchun", {"profile": "mil2024"}),
]


def test_ruleset_declares_every_question_the_engine_asks() -> None:
    source = source_path(game_module.__name__).read_text(encoding="utf-8")  # compiled or not
    asked = set(re.findall(r"(?<![\w.])(?:self\.)?rules\.(\w+)", source))
    assert {"settle", "before_draw", "claim_options", "winning_mask"} <= asked
    for name in sorted(asked - {"config"}):
        member = inspect.getattr_static(RuleSet, name, None)
        assert member is not None, f"the engine asks rules.{name}, which RuleSet does not declare"
        if callable(member) or isinstance(member, property):
            assert inspect.getdoc(getattr(RuleSet, name)), f"RuleSet.{name} has no contract docstring"
    fields = set(RuleConfig.__dataclass_fields__)
    for name in re.findall(r"\brules\.config\.(\w+)", source):
        assert name in fields, f"the engine reads config.{name}, which is not a field every variant has"


def _snapshot(game) -> tuple:
    def seat(st: SeatState) -> tuple:
        melds = [(m.kind, list(m.tiles), m.tile, m.source) for m in st.melds]
        return (
            list(st.counts),
            list(st.dealt),
            melds,
            sorted(st.specials),
            st.drawn,
            st.ready,
            st.ready_waits,
            st.xianggong,
            st.passed_wins,
            st.passed_fan,
            st.bao_seen,
        )

    wall = game.wall
    return (
        [seat(st) for st in game.seats],
        list(game.history),
        (wall.head, wall.tail, wall.gap, wall.tail_draws),
        game.bao,
        list(game.dice.rolls),
        [dict(p) for p in game.payments],
    )


def _ask_everything(game) -> None:
    """Every rule question that makes sense in the current position, for every seat."""
    rules = game.rules
    rules.wall_allows_kong(game)
    for s, st in enumerate(game.seats):
        size = sum(st.counts)
        rules.self_win(game, s) if size % 3 == 2 else rules.winning_mask(game, s, st.counts)
        if size % 3 == 2:
            rules.ready_discards(game, s)
            rules.special_actions(game, s)
            for t in range(34):
                if st.counts[t] == 4:
                    rules.kong_allowed(game, s, MeldKind.CONCEALED_KONG, t)
            for m in st.melds:
                if m.kind is MeldKind.PONG and st.counts[m.tile]:
                    rules.kong_allowed(game, s, MeldKind.ADDED_KONG, m.tile)
            continue
        if game.bao is not None:
            rules.duibao_possible(game, s)
        source = (s + 3) % 4
        for t in range(34):
            if st.counts[t] < 4:
                rules.claim_options(game, s, t, source, 1)
                rules.rob_options(game, s, t, source, WindowKind.ADDED_KONG)
                rules.rob_options(game, s, t, source, WindowKind.SPECIAL_ADD)


@pytest.mark.parametrize(("variant", "config"), CONFIGS, ids=[f"{v}-{c}" for v, c in CONFIGS])
def test_rule_questions_leave_the_game_unchanged(variant: str, config: dict) -> None:
    """Issue 12: predicates ask without editing seat state (no count edits, no phantom melds)."""
    env = get_variant(variant).raw_env(**config)
    rng = np.random.default_rng(12)
    asked = 0
    for seed in range(8):
        env.reset(seed=seed)
        game = env.game
        while game.phase != Phase.OVER:
            if asked % 3 == 0:
                before = _snapshot(game)
                _ask_everything(game)
                assert _snapshot(game) == before
            asked += 1
            legal = game.legal_actions()
            action = A.WIN if A.WIN in legal and rng.random() < 0.3 else legal[int(rng.integers(len(legal)))]
            game.step(action)
    assert asked > 200


@pytest.mark.parametrize(
    ("hand", "tile", "expected"),
    [
        ("23m", "1m", ["chow_low"]),
        ("13m", "2m", ["chow_mid"]),
        ("1245m", "3m", ["chow_low", "chow_mid", "chow_high"]),
        ("78m", "9m", ["chow_high"]),
        ("89m1p", "9m", []),  # a chow never crosses suits
        ("12p", "3p", ["chow_high"]),
        ("56z", "7z", []),  # honors make no chow
        ("", "5s", []),
    ],
)
def test_chow_actions(hand: str, tile: str, expected: list[str]) -> None:
    counts = [0] * 34
    for t in parse_tiles(hand):
        counts[t] += 1
    assert [A.action_name(a) for a in A.chow_actions(counts, parse_tiles(tile)[0])] == expected


def test_illegal_action_message_names_the_action_and_the_legal_ones() -> None:
    message = A.illegal_action_message(A.PONG, "player_2", [A.DISCARD, A.PASS])
    assert message == "illegal action pong for player_2; legal actions: discard 1m, pass"
    assert "illegal action 999 for" in A.illegal_action_message(999, "player_0", [])


@pytest.mark.parametrize(
    ("owner", "viewer", "visible", "hidden"),
    [
        (1, 2, False, True),  # R7: another seat sees it face down
        (1, 1, False, False),  # its owner knows it
        (1, None, False, False),  # the full table shows everything
        (1, 2, True, False),  # a rule set that shows concealed kongs
    ],
)
def test_r7_concealed_kong_hidden(owner: int, viewer: int | None, visible: bool, hidden: bool) -> None:
    assert concealed_kong_hidden(owner, viewer, visible) is hidden
