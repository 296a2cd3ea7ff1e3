"""Table state shared by every rule set: phases, melds, per-seat state, the discard history and
the engine's named kinds (RULES.md R5–R8, R10).

Hands are 34-length count lists (fast scalar updates); melds keep their tiles for display,
scoring and the C5 special groups. The string-valued enums (`WindowKind`, `WinMethod`,
`Outcome`) are plain strings to every reader (``==``, dict keys, JSON), so records and views
show their values; a `MeldKind` shows as its name in `MELD_KIND_NAMES`.
"""

from __future__ import annotations

from enum import Enum, IntEnum
from typing import NamedTuple

from mahjong_env import actions as A
from mahjong_env import hand

__all__ = [
    "Phase",
    "PHASE_NAMES",
    "TurnStart",
    "Context",
    "WindowKind",
    "WinMethod",
    "CLAIM_METHODS",
    "Outcome",
    "Discard",
    "Meld",
    "SeatState",
    "MeldKind",
    "MELD_KIND_NAMES",
    "KONG_KINDS",
    "SPECIAL_KINDS",
    "SPECIAL_KIND_OF_ACTION",
    "DECLARATION_ACTION",
]


class Phase(IntEnum):
    """What kind of decision the table waits for (``view()["phase"]``)."""

    TURN = 0
    CLAIM = 1
    ROB = 2
    BAO_VIEW = 3
    DUIBAO = 4
    FINAL_DRAW = 5  # a draw of the last-draws round (X4 分张, C14 final_draws): win or pass
    OVER = 6


PHASE_NAMES = ("turn", "claim", "rob", "bao_view", "duibao", "fenzhang", "over")
"""Each phase's public name (``view()["phase"]``, API.md): the last-draws phase keeps X4's name."""


class TurnStart(IntEnum):
    """What happens when a player is due to draw (the rule set's answer, `RuleSet.before_draw`)."""

    DRAW = 0
    """An ordinary draw from the head of the wall."""
    FINAL_DRAWS = 1
    """The last-draws round begins (X4 分张, C14 ``final_draws``)."""
    EXHAUSTED = 2
    """The wall is exhausted: the hand is drawn (荒庄)."""


class Context(IntEnum):
    """How the player to move got its 3n+2-th tile (R5)."""

    DEAL = 0  # the dealer's dealt 14 tiles
    DRAW = 1  # ordinary draw from the head
    REPLACEMENT = 2  # replacement draw after one's own kong (杠后补牌)
    CLAIM = 3  # a chow or pong: discard or ready only


class _StrEnum(str, Enum):
    """A str-valued enum whose members format and print as their values."""

    def __str__(self) -> str:
        return str.__str__(self)

    def __format__(self, spec: str) -> str:
        return str.__format__(self, spec)


class WindowKind(_StrEnum):
    """What a claim or robbing window is opened on (R6, R7; ``view()["claim"]["kind"]``)."""

    DISCARD = "discard"
    ADDED_KONG = "added_kong"  # 加杠: robbing window (抢杠)
    SPECIAL_ADD = "special_add"  # C6 addition to a special group: 抢胡 / 抢叉


class WinMethod(_StrEnum):
    """How a hand was won (result ``method``, R10)."""

    SELF_DRAW = "self_draw"  # 自摸
    KONG_BLOOM = "kong_bloom"  # 杠上开花 (X3)
    DISCARD = "discard"  # 点炮
    ROB_KONG = "rob_kong"  # 抢杠
    BAO_DRAW = "bao_draw"  # 摸宝 (C8)
    BAO_MATCH = "bao_match"  # 对宝 (C8)


CLAIM_METHODS = (WinMethod.DISCARD, WinMethod.ROB_KONG)
"""Win methods on another player's tile (a discard or a robbed kong)."""


class Outcome(_StrEnum):
    """How a hand ended (result ``outcome``)."""

    WIN = "win"
    DRAW = "draw"  # 荒庄
    ILLEGAL = "illegal"  # API.md illegal_action="penalize"


class Discard(NamedTuple):
    """One discard of the hand, in order: ``history`` entries, read by views and encoders."""

    seat: int
    tile: int
    claimed: bool
    """Taken by a chow, pong or kong (or a 抢叉 on an addition, recorded as a discard)."""
    ready: bool
    """Discarded with a ready declaration (R8)."""


class MeldKind(IntEnum):
    """What a meld is (R7, C5); views and records show it by its name in `MELD_KIND_NAMES`."""

    CHOW = 0
    PONG = 1
    KONG = 2  # exposed kong on a discard (直杠/明杠)
    ADDED_KONG = 3  # 加杠: the fourth tile added to one's pong
    CONCEALED_KONG = 4  # 暗杠
    SPECIAL_WINDS = 5  # C5 旋风杠
    SPECIAL_DRAGONS = 6  # C5 喜杠
    SPECIAL_ONES = 7  # C5 幺蛋
    SPECIAL_NINES = 8  # C5 九蛋


MELD_KIND_NAMES = tuple(kind.name.lower() for kind in MeldKind)
"""Each meld kind's public name (``"chow"`` … ``"special_nines"``: views, API.md)."""
KONG_KINDS = frozenset({MeldKind.KONG, MeldKind.ADDED_KONG, MeldKind.CONCEALED_KONG})
"""The kongs of R7 (a C5 special group is none of them)."""
SPECIAL_KINDS = (MeldKind.SPECIAL_WINDS, MeldKind.SPECIAL_DRAGONS, MeldKind.SPECIAL_ONES, MeldKind.SPECIAL_NINES)
"""C5's special groups, in the order of their declaration actions (``A.SPECIAL_DECLARATIONS``)."""
SPECIAL_KIND_OF_ACTION: dict[int, MeldKind] = dict(zip(A.SPECIAL_DECLARATIONS, SPECIAL_KINDS))
"""The special group each declaration action declares (C5)."""
DECLARATION_ACTION: dict[MeldKind, int] = dict(zip(SPECIAL_KINDS, A.SPECIAL_DECLARATIONS))
"""The declaration action of each special group (C5)."""


class Meld:
    """One exposed or concealed meld. ``tile`` is the lowest tile (chow) or the kind."""

    __slots__ = ("kind", "tiles", "tile", "source")

    def __init__(self, kind: MeldKind, tiles: list[int], tile: int, source: int | None) -> None:
        self.kind = kind
        self.tiles = tiles
        self.tile = tile
        self.source = source

    @property
    def kind_name(self) -> str:
        """The kind's public name (``"pong"``, ``"special_winds"``; API.md views)."""
        return MELD_KIND_NAMES[self.kind]

    @property
    def is_kong(self) -> bool:
        """An exposed, added or concealed kong (not a C5 special group)."""
        return self.kind in KONG_KINDS

    def __repr__(self) -> str:
        return f"Meld({self.kind_name}, {self.tiles}, from={self.source})"


class SeatState:
    """Everything about one seat in the current hand.

    Every change of ``counts`` goes through `remove` and `receive`, every change of ``melds``
    through `add_meld`, `remove_meld` and `grow_meld`: they keep the cache and the change marks
    at the end of the slots, which only speed things up (``held``, the shape-waits cache, the
    encoders' meld rows).
    """

    __slots__ = (
        # the rules' state
        "counts",
        "dealt",
        "melds",
        "river",
        "drawn",
        "ready",
        "ready_waits",
        "xianggong",
        "passed_wins",
        "passed_fan",
        "bao_seen",
        "duibao_passed",
        "first_turn",
        "first_turn_claimed",
        "specials",
        "kongs_made",
        # a cache and change marks (speed only)
        "held",
        "hand_version",
        "meld_version",
        "table_melds",
        "_before_draw",
        "_wait_version",
        "_wait_mask",
    )

    def __init__(self, tiles: list[int], table_melds: list[int] | None = None) -> None:
        counts = [0] * 34
        for t in tiles:
            counts[t] += 1
        self.counts = counts
        self.dealt = list(counts)  # C5: the dealt tiles not yet used by a declaration
        self.melds: list[Meld] = []
        self.river: list[int] = []
        self.drawn: int | None = None
        self.ready = False
        self.ready_waits = 0
        self.xianggong = False  # X5 相公: a dead hand, public
        self.passed_wins = 0  # R8 过手胡: bitmask of kinds this seat may not win on by a claim
        self.passed_fan = 0  # C14 passed_win_lock_by_fan: the highest passed win's fan, 0 for none
        self.bao_seen = False
        self.duibao_passed = False
        self.first_turn = True  # C5: before its first discard
        self.first_turn_claimed = False  # C14: its first turn was entered by a chow, pong or kong
        self.specials: dict[MeldKind, Meld] = {}
        self.kongs_made = 0
        self.held = len(tiles)  # sum(counts), kept by `remove` and `receive`
        # change marks: ``hand_version`` counts this seat's changes of ``counts`` or ``melds``
        # (the key of the shape-waits cache); ``table_melds`` is the meld clock the table's four
        # seats share, ticking at every change of any seat's melds, and ``meld_version`` is its
        # tick at this seat's last one (encoders redraw a seat's meld rows when it moves)
        self.hand_version = 0
        self.meld_version = 0
        self.table_melds = [0] if table_melds is None else table_melds
        self._before_draw = -2  # ``hand_version`` before the last `receive`
        self._wait_version = -1  # the ``hand_version`` whose shape waits ``_wait_mask`` holds
        self._wait_mask = 0

    def remove(self, tile: int, n: int = 1) -> None:
        """Take ``n`` tiles of kind ``tile`` from the concealed hand."""
        self.counts[tile] -= n
        self.held -= n
        self.hand_version += 1

    def receive(self, tile: int) -> None:
        """Draw ``tile`` into the concealed hand: it is the ``drawn`` tile now."""
        version = self.hand_version
        self._before_draw = version
        self.counts[tile] += 1
        self.held += 1
        self.hand_version = version + 1
        self.drawn = tile

    def add_meld(self, meld: Meld) -> None:
        """Expose ``meld``."""
        self.melds.append(meld)
        self._melds_changed()

    def remove_meld(self, index: int) -> Meld:
        """Take back meld ``index`` (an added kong's pong, R7: the kong is added after)."""
        self._melds_changed()
        return self.melds.pop(index)

    def grow_meld(self, meld: Meld, tile: int) -> None:
        """Add ``tile`` to one of this seat's melds (a C6 addition to a special group)."""
        meld.tiles.append(tile)
        self._melds_changed()

    def _melds_changed(self) -> None:
        clock = self.table_melds
        clock[0] += 1
        self.meld_version = clock[0]
        self.hand_version += 1  # the shape waits depend on the melds (seven pairs: none)

    def shape_waits(self) -> int:
        """Kinds that complete the concealed hand in standard form or, closed, seven pairs
        (no variant condition applied): a superset of the winning tiles, cached until the
        hand changes. Rule sets use it to reject a discard win cheaply."""
        if self._wait_version != self.hand_version:
            self._wait_mask = self._shape_waits(self.counts)
            self._wait_version = self.hand_version
        return self._wait_mask

    def drawn_may_complete(self) -> bool:
        """False when the tile just drawn cannot complete the 3n+2 hand in any form: it is not
        among the `shape_waits` of the hand without it (usually cached since the other
        players' discards were checked). True when no drawn tile is held. Rule sets use it to
        skip the winning-hand test of a turn cheaply: a complete hand less any of its tiles
        waits on that tile."""
        drawn = self.drawn
        if drawn is None or not self.counts[drawn]:
            return True
        before = self._before_draw
        if self.hand_version == before + 1 and before >= 0:  # the draw was the last change: the hand before it
            if self._wait_version != before:
                self._wait_mask = self._shape_waits(self._without(drawn))
                self._wait_version = before
            mask = self._wait_mask
        else:
            mask = self._shape_waits(self._without(drawn))
        return bool(mask >> drawn & 1)

    def _without(self, tile: int) -> list[int]:
        counts = list(self.counts)
        counts[tile] -= 1
        return counts

    def _shape_waits(self, counts: list[int]) -> int:
        mask = hand.waits(counts)
        if not self.melds:
            mask |= hand.seven_pairs_waits(counts)
        return mask
