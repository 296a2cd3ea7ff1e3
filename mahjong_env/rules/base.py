"""What a rule set must answer, and the helpers both rule sets share.

A rule set is a small object holding its frozen configuration. The engine
(`mahjong_env.engine.game.Game`) asks it every variant question: which claims a player has,
which wins are legal and how they score, who pays for a kong, when the wall is exhausted.
Rule sets keep no per-hand state of their own: everything lives in the `Game`.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from typing import Any, ClassVar

from mahjong_env import hand
from mahjong_env.engine.state import Meld, SeatState

__all__ = ["RuleSet", "RuleConfig", "make_config", "held_four_mask", "bits", "DEFAULT_PROFILE"]

DEFAULT_PROFILE = "seed"


@dataclasses.dataclass(frozen=True)
class RuleConfig:
    """Fields every variant has (RULES.md R5, R7, R8)."""

    allow_tianhu: bool = False
    """R5: allow a win on the dealer's dealt 14 tiles (天胡). Off in both seeds."""
    passed_win_lock: bool = True
    """R8 过手胡: a player who passes a win on another's tile cannot win on that kind by a claim
    until its next draw."""
    concealed_kong_visible: bool = False
    """R7: whether the other players see a concealed kong's tile."""

    profiles: ClassVar[Mapping[str, Mapping[str, Any]]] = {DEFAULT_PROFILE: {}}
    """Named sets of field values (the constructor keyword ``profile``, RULES.md C14): the one
    table of a variant's profiles. ``"seed"`` is the defaults, the rules of the seed document."""

    def to_dict(self) -> dict[str, Any]:
        return {f.name: _jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)}


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    return value


def _check_value(cls: type, name: str, value: Any, expected: Any) -> Any:
    origin = typing.get_origin(expected)
    if expected is bool:
        if not isinstance(value, bool):
            raise ValueError(f"{cls.__name__}.{name} must be True or False, got {value!r}")
        return value
    if expected is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{cls.__name__}.{name} must be an int, got {value!r}")
        return value
    if expected is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{cls.__name__}.{name} must be a number, got {value!r}")
        return float(value)
    if origin is tuple:
        if not isinstance(value, (tuple, list)):
            raise ValueError(f"{cls.__name__}.{name} must be a sequence of (name, fan) pairs, got {value!r}")
        pairs = []
        for item in value:
            if (
                not isinstance(item, (tuple, list))
                or len(item) != 2
                or not isinstance(item[0], str)
                or isinstance(item[1], bool)
                or not isinstance(item[1], int)
            ):
                raise ValueError(f"{cls.__name__}.{name}: each entry must be a (name, fan) pair, got {item!r}")
            pairs.append((item[0], item[1]))
        return tuple(pairs)
    return value


def make_config(cls: type[RuleConfig], overrides: Mapping[str, Any]) -> Any:
    """Build a frozen config from keyword overrides; unknown or ill-typed fields raise ValueError.

    ``overrides`` may hold ``profile``, a name in ``cls.profiles`` (default ``"seed"``): its
    field values apply first and every other keyword overrides them (C14). The config holds
    the resolved fields only, so a record's ``config`` replays without the profile table.
    """
    values = dict(overrides)
    profile = values.pop("profile", DEFAULT_PROFILE)
    profiles = cls.profiles
    if not isinstance(profile, str) or profile not in profiles:
        raise ValueError(
            f"unknown profile {profile!r} for {cls.__name__}; valid profiles: {', '.join(sorted(profiles))}"
        )
    hints = typing.get_type_hints(cls)
    fields = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - fields)
    if unknown:
        raise ValueError(
            f"unknown rule option(s) {', '.join(unknown)} for {cls.__name__}; "
            f"valid fields: {', '.join(sorted(fields))} (and profile)"
        )
    values = {**profiles[profile], **values}
    checked = {k: _check_value(cls, k, v, hints[k]) for k, v in values.items()}
    config = cls(**checked)
    validate = getattr(config, "validate", None)
    if validate is not None:
        validate()
    return config


def held_four_mask(st: SeatState, counts: list[int]) -> int:
    """Kinds whose four copies this seat holds in hand and melds (R8 空听: not a winning tile)."""
    mask = 0
    held: dict[int, int] = {}
    for meld in st.melds:
        for t in meld.tiles:
            held[t] = held.get(t, 0) + 1
    for t, n in held.items():
        if n + counts[t] >= 4:
            mask |= 1 << t
    return mask


def bits(mask: int) -> list[int]:
    """Tile kinds set in a 34-bit mask, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


class RuleSet:
    """Base of the variant rule sets; the defaults describe a variant with no extras."""

    name: ClassVar[str] = ""
    uses_bao: ClassVar[bool] = False
    priority: ClassVar[dict[int, int]] = {}

    def __init__(self, config: RuleConfig) -> None:
        self.config = config

    # --- claims and ranks (R6)

    def claim_rank(self, action: int) -> int:
        return self.priority[action]

    # --- hooks with neutral defaults

    def hand_base(self, game: Any) -> float:
        return 1.0

    def special_actions(self, game: Any, seat: int) -> list[int]:
        return []

    def special_group_tiles(self, kind: str) -> tuple[int, ...]:
        raise KeyError(kind)

    def forced_win(self, game: Any, seat: int) -> bool:
        return False

    def fenzhang_win(self, game: Any, seat: int) -> bool:
        return False

    def ready_locks(self, game: Any, seat: int) -> bool:
        return True

    def may_declare_ready(self, game: Any, seat: int) -> bool:
        return not game.seats[seat].xianggong

    def after_kong(self, game: Any, seat: int) -> None:
        return None

    def drawn_hand_refunds(self, game: Any) -> list[tuple[int, int, float]]:
        return []

    def finish_result(self, game: Any, result: dict[str, Any]) -> None:
        return None

    def bao_exhausted(self, game: Any, kind: int) -> bool:
        return False

    def duibao_possible(self, game: Any, seat: int) -> bool:
        return False

    def defer_bao_roll(self, game: Any) -> bool:
        """Whether the first ready declaration's bao roll waits for the declarer's next turn."""
        return False

    def fenzhang_draws(self, game: Any) -> int:
        """How many last draws the 分张 round makes (X4: 4)."""
        return 4

    def fenzhang_method(self, game: Any, seat: int) -> str:
        """The win method of a win on a 分张 draw (X4: a self-draw)."""
        return "self_draw"

    def declaration_tiles(self, game: Any, seat: int, kind: str) -> list[int]:
        """The tiles a special-group declaration of ``kind`` takes from the hand (C5)."""
        return list(self.special_group_tiles(kind))

    def special_add_target(self, st: SeatState, tile: int) -> Meld:
        """The declared special group that an addition of ``tile`` joins (C6)."""
        return next(m for m in st.specials.values() if tile in self.special_group_tiles(m.kind))

    def win_passed(self, game: Any, seat: int, tile: int, kind: str, source: int) -> None:
        """``seat`` was offered a win on ``source``'s ``tile`` and did something else (R8 过手胡)."""
        game.seats[seat].passed_wins |= 1 << tile

    # --- shared helpers

    @staticmethod
    def all_tiles(st: SeatState, counts: list[int]) -> list[int]:
        """Counts of the whole hand: concealed ``counts`` plus every meld's tiles."""
        total = list(counts)
        for meld in st.melds:
            for t in meld.tiles:
                total[t] += 1
        return total

    @staticmethod
    def passed(st: SeatState, tile: int) -> bool:
        return bool(st.passed_wins >> tile & 1)

    def standard_waits(self, st: SeatState, counts: list[int], seven_pairs: bool) -> int:
        """Winning kinds of a 3n+1 concealed hand in standard form (and seven pairs if allowed),
        without the kinds this seat already holds four of (R8 空听)."""
        mask = hand.waits(counts)
        if seven_pairs and not st.melds and sum(counts) == 13:
            mask |= hand.seven_pairs_waits(counts)
        if mask and st.melds:
            mask &= ~held_four_mask(st, counts)
        return mask

    @staticmethod
    def has_chow(st: SeatState) -> bool:
        return any(m.kind == "chow" for m in st.melds)

    @staticmethod
    def meld_kinds(melds: list[Meld]) -> set[str]:
        return {m.kind for m in melds}
