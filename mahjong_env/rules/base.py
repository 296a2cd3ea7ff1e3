"""The rule-set contract: what the engine asks a variant, and the helpers both rule sets share.

A rule set is a small object holding its frozen configuration. The engine
(`mahjong_env.engine.game.Game`) asks it every variant question: which claims a player has,
which wins are legal and how they score, who pays for a kong, when the wall is exhausted.
`RuleSet` declares every question the engine asks (the methods and attributes below, each with
its contract); code outside ``rules/`` never reads a variant's own config fields nor asks a
variant's name. Rule sets keep no per-hand state of their own: everything lives in the `Game`,
and a question never changes it (predicates work on copies of the counts they test).
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping, Sequence
from enum import Enum
from typing import TYPE_CHECKING, ClassVar, NamedTuple, Protocol, TypeVar

from mahjong_env import hand
from mahjong_env.engine.hotpath import MELD_CHOW
from mahjong_env.engine.state import Meld, MeldKind, SeatState, TurnStart, WindowKind, WinMethod

if TYPE_CHECKING:
    from mahjong_env.engine.game import Game

__all__ = [
    "RuleSet",
    "MeldFacts",
    "RuleConfig",
    "TurnStart",
    "Fan",
    "FanKey",
    "FAN_TERMS",
    "Owed",
    "Settlement",
    "make_config",
    "held_four_mask",
    "bits",
    "DEFAULT_PROFILE",
    "MAX_SILVER",
    "ConfigValue",
    "JSONValue",
]

DEFAULT_PROFILE = "seed"

MAX_SILVER = 1e12
"""Largest silver amount a match may start with (X7: `RuleSet.starting_silver`, the reset option)."""

ConfigValue = bool | int | float | str | tuple[tuple[str, int], ...]
"""The value of a rule field: a flag, a number, a name, or (name, fan) pairs (X6's fan table)."""
JSONValue = bool | int | float | str | None | list["JSONValue"] | dict[str, "JSONValue"]
"""A value as a record's JSON holds it."""


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

    profiles: ClassVar[Mapping[str, Mapping[str, ConfigValue]]] = {DEFAULT_PROFILE: {}}
    """Named sets of field values (the constructor keyword ``profile``, RULES.md C14): the one
    table of a variant's profiles. ``"seed"`` is the defaults, the rules of the seed document."""

    def validate(self) -> None:
        """Reject values no table plays (ValueError naming the field); variants add their checks."""
        return None

    def to_dict(self) -> dict[str, JSONValue]:
        return {f.name: _jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)}


def _jsonable(value: ConfigValue | tuple[str, int]) -> JSONValue:
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    return value


def _check_value(cls: type, name: str, value: object, expected: object) -> ConfigValue:
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
    return typing.cast(ConfigValue, value)  # a field of another type (str): taken as given


_Config = TypeVar("_Config", bound="RuleConfig")


def make_config(cls: type[_Config], overrides: Mapping[str, object]) -> _Config:
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
    config = cls(**checked)  # type: ignore[arg-type]  # each value checked against its field's type above
    config.validate()
    return config


def held_four_mask(melds: Sequence[Meld], counts: Sequence[int]) -> int:
    """Kinds whose four copies a seat holds in ``counts`` and its ``melds`` (R8 空听: not a
    winning tile)."""
    mask = 0
    held: dict[int, int] = {}
    for meld in melds:
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


class FanKey(str, Enum):
    """The fan keys of both rule sets (result ``fans``; registered X6 patterns add their own names)."""

    PINGHU = "pinghu"
    PENGPENGHU = "pengpenghu"
    QIDUI = "qidui"
    HAOHUA_QIDUI = "haohua_qidui"
    QINGYISE = "qingyise"
    GANGSHANG_KAIHUA = "gangshang_kaihua"
    GANG = "gang"
    DIANPAO = "dianpao"
    ZIMO = "zimo"
    JIAHU = "jiahu"
    MOBAO = "mobao"
    DUIBAO = "duibao"
    PIAOHU = "piaohu"
    ZHUANGHU = "zhuanghu"
    LIHU = "lihu"

    def __str__(self) -> str:
        return str.__str__(self)

    def __format__(self, spec: str) -> str:
        return str.__format__(self, spec)


FAN_TERMS: dict[str, tuple[str, str]] = {
    FanKey.PINGHU: ("平胡", "basic win"),
    FanKey.PENGPENGHU: ("碰碰胡", "all pongs"),
    FanKey.QIDUI: ("七对", "seven pairs"),
    FanKey.HAOHUA_QIDUI: ("豪华七对", "luxury seven pairs"),
    FanKey.QINGYISE: ("清一色", "full flush"),
    FanKey.GANGSHANG_KAIHUA: ("杠上开花", "kong bloom"),
    FanKey.GANG: ("杠", "kongs"),
    FanKey.DIANPAO: ("点炮", "dealt in"),
    FanKey.ZIMO: ("自摸", "self-draw"),
    FanKey.JIAHU: ("夹胡", "edge, closed or single wait"),
    FanKey.MOBAO: ("宝牌", "bao win"),
    FanKey.DUIBAO: ("对宝", "bao match"),
    FanKey.PIAOHU: ("飘胡", "all triplets"),
    FanKey.ZHUANGHU: ("庄胡", "dealer wins"),
    FanKey.LIHU: ("立胡", "closed hand"),
}
"""Chinese term and English gloss of every fan key (API.md "Results"): the one glossary."""


class Fan(NamedTuple):
    """One scored fan of a win: its key (``"pinghu"``) and value; ``[name, fan]`` in results."""

    name: str
    fan: int


class Owed(NamedTuple):
    """One payment a win settles: ``payer`` owes the winner ``points`` for ``reason``."""

    payer: int
    points: float
    reason: str


@dataclasses.dataclass(frozen=True)
class Settlement:
    """How a win scores and who pays (`RuleSet.settle`)."""

    fans: tuple[Fan, ...]
    """The winner's fan list, in the order the result shows it."""
    total_fan: int
    """The hand's fan total (capped; the highest payer's fan where fans differ per payer)."""
    owed: tuple[Owed, ...]
    """The payments to the winner, in order."""
    payer_fans: tuple[int | None, ...] | None
    """Each seat's fan as a payer (None: not a payer) where they differ between payers, else None."""


class MeldFacts(Protocol):
    """What a player's melds contribute to the tile conditions of a win (C9), as
    `mahjong_env.features.MeldSummary` keeps them."""

    suits: int
    """Bit ``s`` set: a meld holds a tile of suit ``s`` (0 characters, 1 dots, 2 bamboo)."""
    yaojiu: bool
    """A meld holds a 1, a 9 or an honor (幺九)."""
    triplet: bool
    """A meld is not a chow (a pong, a kong or a special group)."""
    chow: bool
    """A meld is a chow (C9.4 手把一 forbids a single concealed tile beside one)."""
    concealed_kong: bool
    """A meld is a concealed kong (its tiles count as concealed for 手把一, C9.4, C3)."""


class RuleSet:
    """Base of the variant rule sets: every question the engine asks, with its contract.

    Methods without a neutral default raise NotImplementedError; a variant answers them all.
    ``game`` is the asking `Game`, ``seat`` a seat 0-3, ``tile`` a tile kind 0-33, masks are
    34-bit masks of tile kinds. No method changes ``game``, except the two hooks that say so
    (`after_kong`, `win_passed`).
    """

    name: ClassVar[str] = ""
    """The rule set's name (``"xinjiang"``); for display and the registry only."""
    uses_bao: ClassVar[bool] = False
    """Whether the variant has a bao (C8): the engine then rolls, offers views and 对宝."""
    uses_silver: ClassVar[bool] = False
    """Whether a match carries silver and a per-hand base (X7) that the env reports."""
    closed_waits_win: ClassVar[bool] = False
    """Whether every standard-form wait of a closed hand is a winning tile (no extra winning
    condition): `ready_discards` then trusts `hand.ready_discards` for closed hands."""
    priority: ClassVar[dict[int, int]] = {}
    """Claim rank of each claim action (R6: higher wins the window)."""
    extra_win_conditions: ClassVar[bool] = False
    """Whether a complete hand must also meet conditions on the tiles it holds (Changchun's C9):
    `tile_condition_shortfall` and `meets_tile_conditions` then say more than their defaults."""
    ready_kongs_keep_waits: ClassVar[bool] = False
    """Whether a ready player is offered only the kongs that keep its waits (Changchun's C7), so
    a player need not check them itself; where False, a kong may cost a ready hand its waits
    (Xinjiang's X5: it becomes 相公)."""

    def __init__(self, config: RuleConfig) -> None:
        self.config = config

    # --- facts about the match

    @property
    def starting_silver(self) -> float:
        """Each player's silver at the start of a match (X7); 0 where the variant has none."""
        return 0.0

    @property
    def dice_count(self) -> int:
        """Dice rolled at once for a bao roll (C8), and so the dice of a forced roll."""
        return 2

    @property
    def max_bao_rolls(self) -> int:
        """Bao rolls in a hand after which the hand has no bao (C8)."""
        return 0

    @property
    def allows_seven_pairs(self) -> bool:
        """Whether seven pairs (七对) is a winning form."""
        return False

    @property
    def wins_on_discards(self) -> bool:
        """Whether a player may win on another player's discard (so a discard may be dangerous)."""
        return False

    def hand_base(self, game: Game) -> float:
        """The money value of one point in the hand now starting (X7); 1 by default."""
        return 1.0

    # --- the player to move (R5, R8)

    def winning_mask(self, game: Game, seat: int, counts: Sequence[int]) -> int:
        """Kinds that would win for ``seat`` holding the 3n+1 concealed ``counts`` (its melds as
        they are); ``counts`` is not changed."""
        raise NotImplementedError

    def self_win(self, game: Game, seat: int) -> WinMethod | None:
        """The win method if ``seat`` may win on its own 3n+2 hand now, else None."""
        raise NotImplementedError

    def forced_win(self, game: Game, seat: int) -> bool:
        """Whether ``seat``, able to win, must win (no other action is legal)."""
        return False

    def ready_locks(self, game: Game, seat: int) -> bool:
        """Whether a ready ``seat`` may only discard the tile it drew (R8)."""
        return True

    def may_declare_ready(self, game: Game, seat: int) -> bool:
        """Whether ``seat`` (not yet ready) may declare ready this turn."""
        return True

    def ready_discards(self, game: Game, seat: int) -> int:
        """R8: the kinds T for which ``ready T`` is legal: after discarding T the hand waits
        (`winning_mask` not empty) and `keeps_ready` holds."""
        st = game.seats[seat]
        melds = st.melds
        counts = st.counts
        standard = hand.ready_discards(counts)
        candidates = standard
        # seven pairs: six pairs held (a 4 of a kind is two), any held kind may be the discard
        if self.allows_seven_pairs and not melds and counts.count(2) + counts.count(3) + 2 * counts.count(4) >= 6:
            candidates |= sum(1 << t for t in range(34) if counts[t])
        out = standard if self.closed_waits_win and not melds else 0
        unchecked = candidates & ~out
        if unchecked:
            scratch = list(counts)
            for t in bits(unchecked):
                scratch[t] -= 1
                if self.keeps_ready(game, seat, scratch):
                    out |= 1 << t
                scratch[t] += 1
        return out

    def keeps_ready(self, game: Game, seat: int, counts: list[int]) -> bool:
        """Whether ``seat`` holding the 3n+1 ``counts`` (after a discard) may be ready with them;
        ``counts`` is the caller's scratch copy and comes back unchanged."""
        return bool(self.winning_mask(game, seat, counts))

    def special_actions(self, game: Game, seat: int) -> list[int]:
        """Extra turn actions of ``seat`` (C5 declarations, C6 additions), unsorted."""
        return []

    # --- kongs (R7)

    def wall_allows_kong(self, game: Game) -> bool:
        """Whether the wall has a replacement tile for a kong now."""
        raise NotImplementedError

    def kong_allowed(self, game: Game, seat: int, kind: MeldKind, tile: int) -> bool:
        """Whether ``seat`` may make a kong of ``kind`` (`MeldKind.CONCEALED_KONG` or
        `MeldKind.ADDED_KONG`) of ``tile`` this turn, the wall allowing it."""
        raise NotImplementedError

    def kong_payments(
        self, game: Game, seat: int, kind: MeldKind, tile: int, source: int | None
    ) -> list[tuple[int, float]]:
        """``(payer, points)`` owed to ``seat`` when its kong of ``kind`` and ``tile`` stands:
        a kong, a C5 special group, or a C6 addition of ``tile`` to the group of ``kind``;
        ``source`` is the discarder of a kong on a discard."""
        raise NotImplementedError

    def after_kong(self, game: Game, seat: int) -> None:
        """Hook after ``seat``'s kong stood, before its replacement draw; may change ``seat``'s
        ready state (X5 相公)."""
        return None

    def declaration_tiles(self, game: Game, seat: int, kind: MeldKind) -> list[int]:
        """The tiles a special-group declaration of ``kind`` takes from the hand (C5)."""
        raise NotImplementedError

    def special_add_target(self, st: SeatState, tile: int) -> Meld:
        """The declared special group that an addition of ``tile`` joins (C6)."""
        raise NotImplementedError

    # --- claim and robbing windows (R6, R7, R8)

    def claim_rank(self, action: int) -> int:
        """The R6 rank of a claim action (higher wins the window)."""
        return self.priority[action]

    def claim_options(self, game: Game, seat: int, tile: int, source: int, distance: int) -> list[int]:
        """The claims (not pass) ``seat`` has on ``source``'s discard of ``tile``; ``distance``
        is 1 for the next player."""
        raise NotImplementedError

    def rob_options(self, game: Game, seat: int, tile: int, konger: int, kind: WindowKind) -> list[int]:
        """The claims (not pass) ``seat`` has on ``konger``'s addition of ``tile`` (``kind``
        `WindowKind.ADDED_KONG` or `WindowKind.SPECIAL_ADD`): a robbing win, C6 抢叉."""
        raise NotImplementedError

    def win_passed(self, game: Game, seat: int, tile: int, kind: WindowKind, source: int) -> None:
        """Hook: ``seat`` was offered a win on ``source``'s ``tile`` and did something else;
        records the R8 过手胡 lock on ``seat``."""
        game.seats[seat].passed_wins |= 1 << tile

    # --- the wall's end (X4, C13, C14)

    def before_draw(self, game: Game, seat: int) -> TurnStart:
        """What happens when ``seat`` is due to draw: a draw, the last-draws round, or a drawn hand."""
        raise NotImplementedError

    def final_draws(self, game: Game) -> int:
        """How many draws the last-draws round makes (X4 分张, C14 ``final_draws``)."""
        raise NotImplementedError

    def final_draw_win(self, game: Game, seat: int) -> bool:
        """Whether ``seat`` may win on its last-round draw (it is asked only then)."""
        return False

    def final_draw_method(self, game: Game, seat: int) -> WinMethod:
        """The win method of a win on a last-round draw."""
        return WinMethod.SELF_DRAW

    # --- the bao (C8)

    def defer_bao_roll(self, game: Game) -> bool:
        """Whether the first ready declaration's bao roll waits for the declarer's next turn."""
        return False

    def bao_exhausted(self, game: Game, kind: int) -> bool:
        """Whether a bao of ``kind`` is used up (换宝: it is put back and rolled again)."""
        return False

    def duibao_possible(self, game: Game, seat: int) -> bool:
        """Whether ``seat``, having just seen the bao, may win on it at once (对宝)."""
        return False

    # --- hand end (R10, R12)

    def settle(self, game: Game, winner: int, method: WinMethod, tile: int | None, payer: int | None) -> Settlement:
        """How ``winner``'s win by ``method`` on ``tile`` scores and who pays; ``payer`` is the
        discarder or robbed konger of a claim win."""
        raise NotImplementedError

    def drawn_hand_refunds(self, game: Game) -> list[tuple[int, int, float]]:
        """``(payer, payee, points)`` of each kong payment returned on a drawn hand (X8)."""
        return []

    # --- what a player can check from its own tiles (pure: for `mahjong_env.features`)

    def tile_condition_shortfall(self, counts: Sequence[int], melds: MeldFacts) -> float:
        """About how many steps the concealed ``counts`` with ``melds`` still lack for the
        conditions of `extra_win_conditions` (a shanten-like estimate for players); 0 where
        there are none. ``counts`` is not changed."""
        return 0.0

    def meets_tile_conditions(self, counts: Sequence[int], melds: MeldFacts) -> bool:
        """Whether the complete hand ``counts`` (concealed) with ``melds`` meets the conditions of
        `extra_win_conditions`, as a player checks its waits; True where there are none.
        ``counts`` is not changed."""
        return True

    # --- shared helpers

    @staticmethod
    def all_tiles(melds: Sequence[Meld], counts: Sequence[int]) -> list[int]:
        """Counts of the whole hand: concealed ``counts`` plus every meld's tiles."""
        total = list(counts)
        for meld in melds:
            for t in meld.tiles:
                total[t] += 1
        return total

    @staticmethod
    def passed(st: SeatState, tile: int) -> bool:
        """Whether ``st`` passed a win on ``tile`` since its last draw (R8 过手胡)."""
        return bool(st.passed_wins >> tile & 1)

    @staticmethod
    def standard_waits(melds: Sequence[Meld], counts: Sequence[int], seven_pairs: bool) -> int:
        """Winning kinds of a 3n+1 concealed hand in standard form (and seven pairs if allowed),
        without the kinds the seat already holds four of (R8 空听)."""
        mask = hand.waits(counts)
        if seven_pairs and not melds and sum(counts) == 13:
            mask |= hand.seven_pairs_waits(counts)
        if mask and melds:
            mask &= ~held_four_mask(melds, counts)
        return mask

    @staticmethod
    def has_chow(melds: Sequence[Meld]) -> bool:
        """Whether the melds hold an exposed chow."""
        return any(m.kind is MELD_CHOW for m in melds)
