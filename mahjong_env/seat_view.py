"""What one seat knows (RULES.md R7, R13): the one place that decides it.

Every reader of a seat's knowledge reads one typed object, so a privacy rule is written once
(the shape of libriichi's ``PlayerState`` and OpenSpiel's observer):

- `TableMemory` keeps the public knowledge of one table (the discard history, the rivers, every
  seat's melds as the others see them, the tiles they show), updated incrementally from the
  `Game` as it moves: one per table, shared by every seat's view of it;
- `SeatView` is one seat's knowledge at one decision, typed: its concealed tiles and drawn
  tile, every seat's melds (another's face-down kong only as such, R7), rivers and history,
  the visible count of every kind, ready / 相公 / first turn per seat, its own waits, passed
  wins and bao (only once seen), the phase, claim window and mover as it may see them (another
  player's private decision shows as an ordinary turn), scores, silver, dice, the wall, and the
  rule set (public: every player knows the rules being played). `seat_view(game, seat, memory)`
  builds it (``seat=None``: the full table, every hand face up);
- `SeatView.to_dict` is API.md's ``view()`` dict, `SeatView.from_dict` reads one back;
  `decision_info` is the ``info`` every agent receives.

The observation encoder (`mahjong_env.observation`), the readable view (`mahjong_env.view`),
the analysis features (`mahjong_env.features`), the agents' info and the replay narrator
(`mahjong_env.tools.narrator`) all read a `SeatView` or ask `sees_decider` and
`concealed_kong_hidden` here. Seats in a `SeatView` are absolute (``melds[s]`` is seat ``s``'s),
as in the view dict; `SeatView.relative` turns a relative seat into an absolute one.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from operator import add
from typing import TYPE_CHECKING, Any, NamedTuple

from mahjong_env.engine.hotpath import MELD_CHOW, MELD_CONCEALED_KONG, PHASE_CLAIM, PHASE_OVER, PHASE_ROB, PHASE_TURN
from mahjong_env.engine.state import (
    KONG_KINDS,
    MELD_KIND_NAMES,
    PHASE_NAMES,
    SPECIAL_KINDS,
    Context,
    Discard,
    Meld,
    MeldKind,
    Phase,
    WindowKind,
)
from mahjong_env.tiles import NUM_KINDS, TILE_NAMES, format_counts, parse_tiles

if TYPE_CHECKING:
    from mahjong_env.engine.game import Game
    from mahjong_env.rules.base import RuleConfig, RuleSet

__all__ = [
    "ClaimView",
    "MeldView",
    "SeatView",
    "TableMemory",
    "concealed_kong_hidden",
    "decision_info",
    "rules_for",
    "seat_view",
    "sees_decider",
]

_PHASES = tuple(Phase)
_COMPACT_KINDS = frozenset((MELD_CHOW, *SPECIAL_KINDS))  # written in table order, suit by suit
_KIND_OF_NAME = {name: MeldKind(i) for i, name in enumerate(MELD_KIND_NAMES)}
_SUIT_OF_NAME = tuple(name[1] for name in TILE_NAMES)
_RANK_OF_NAME = tuple(name[0] for name in TILE_NAMES)
_INDEX_OF_NAME = {name: i for i, name in enumerate(TILE_NAMES)}
_ZEROS = (0,) * NUM_KINDS


# ---------------------------------------------------------------------- who sees what


def sees_decider(game: Game, seat: int | None) -> bool:
    """R13: whether ``seat`` (None: the full table) sees the current decision as it is: the
    phase of a private decision (a claim or robbing window, the bao view, 对宝, 分张), its
    window and who is to move. Only the decider does; every other seat sees an ordinary turn.
    Whose turn it is, and the end of the hand, are public."""
    phase = game.phase
    return seat is None or phase == PHASE_TURN or phase == PHASE_OVER or game.actor == seat


def concealed_kong_hidden(owner: int, viewer: int | None, visible: bool) -> bool:
    """R7: whether ``viewer`` (None: the full table) sees ``owner``'s concealed kong face down:
    unless the rule set shows concealed kongs (``concealed_kong_visible``), only its owner and
    the full table see its tile."""
    return not visible and viewer is not None and viewer != owner


# ---------------------------------------------------------------------- typed pieces


class MeldView(NamedTuple):
    """One meld as a seat sees it (API.md ``view()["melds"]``)."""

    kind: MeldKind
    """Its kind (the view shows its name, `kind_name`)."""
    tiles: tuple[int, ...] | None
    """Its tiles in table order (a special group grows with each addition, C6); None for
    another seat's face-down concealed kong (R7)."""
    tile: int | None
    """The lowest tile of a chow, the kind of a pong or kong, the first tile of a special
    group; None when face down."""
    source: int | None
    """The seat whose discard it took (None: made from the own hand, or face down)."""

    @property
    def kind_name(self) -> str:
        """The kind's public name: ``"chow"``, ``"pong"``, ``"concealed_kong"``, ``"special_winds"`` …"""
        return MELD_KIND_NAMES[self.kind]

    @property
    def hidden(self) -> bool:
        """A face-down concealed kong (R7): it shows that it exists, not its tile."""
        return self.tiles is None

    @property
    def is_kong(self) -> bool:
        """An exposed, added or concealed kong (not a C5 special group)."""
        return self.kind in KONG_KINDS

    def notation(self) -> str | None:
        """Its tiles in compact notation as the view writes them (``"555m"``; chows and
        special groups keep their order, ``"12341z"``); None when face down."""
        tiles = self.tiles
        if tiles is None:
            return None
        if self.kind in _COMPACT_KINDS:
            return _compact(tiles)
        return "".join([_RANK_OF_NAME[t] for t in tiles]) + _SUIT_OF_NAME[tiles[0]]

    def engine_meld(self) -> Meld:
        """The engine's `Meld` of these tiles (for the rule set's predicates); a face-down
        meld has none to give."""
        if self.tiles is None:
            raise ValueError("a face-down concealed kong has no tiles to give to the rule set")
        return Meld(self.kind, list(self.tiles), self.tiles[0] if self.tile is None else self.tile, self.source)


_FACE_DOWN = MeldView(MELD_CONCEALED_KONG, None, None, None)


def _compact(tiles: Sequence[int]) -> str:
    """Tiles in order, each run of one suit written once (``"123m"``, ``"12341z"``, ``"1m1p1s"``)."""
    out: list[str] = []
    suit = None
    for t in tiles:
        letter = _SUIT_OF_NAME[t]
        if suit is not None and letter != suit:
            out.append(suit)
        out.append(_RANK_OF_NAME[t])
        suit = letter
    if suit is not None:
        out.append(suit)
    return "".join(out)


class ClaimView(NamedTuple):
    """A claim or robbing window as the player asked sees it (R6, R7)."""

    source: int
    """The seat whose discard or kong addition is under claim."""
    tile: int
    kind: WindowKind
    """What the window is opened on: a discard, an added kong, a special-group addition."""


# ---------------------------------------------------------------------- the table's memory


class TableMemory:
    """The public knowledge of one table, kept up to date from the `Game` (`sync`).

    Everything here is what every seat sees (R13): the discard history, the rivers, every seat's
    melds as the other seats see them (``melds``: a face-down concealed kong when
    ``concealed_kong_visible`` is off, R7) and as their owner sees them (``own_melds``), the
    count of every kind shown in the rivers and those melds (``shown``), the kongs each seat
    made, the scores and silver, the dice. A changed piece is a new tuple, so a reader may keep
    a piece and compare it by identity; a new hand (new seats in the game) starts the memory
    afresh. It also keeps the last `SeatView` of each seat until the game moves (a new entry in
    its action log), so the observation, the view and the agent's info of one decision share one.
    """

    __slots__ = (
        "concealed_kong_visible",
        "deals",
        "history",
        "rivers",
        "melds",
        "own_melds",
        "shown",
        "kongs_made",
        "scores",
        "silver",
        "base",
        "_dice",
        "_views",
        "_views_log",
        "_views_steps",
        "_seats",
        "_paid",
        "_done",
        "_last_claimed",
        "_meld_versions",
        "_meld_clock",
        "_meld_shown",
        "_shown",
    )

    def __init__(self, concealed_kong_visible: bool) -> None:
        self.concealed_kong_visible = concealed_kong_visible
        self.deals = 0
        """Hands this memory has started (a reader that keeps its own copy compares it)."""
        self._seats: Any = None
        self._reset()

    def _reset(self) -> None:
        self.history: tuple[Discard, ...] = ()
        self.rivers: tuple[tuple[int, ...], ...] = ((), (), (), ())
        self.melds: tuple[tuple[MeldView, ...], ...] = ((), (), (), ())
        self.own_melds: tuple[tuple[MeldView, ...], ...] = ((), (), (), ())
        self.shown: tuple[int, ...] = _ZEROS
        self.kongs_made: tuple[int, ...] = (0, 0, 0, 0)
        self.scores: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0)
        self.silver: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0)
        self.base = 1.0
        self._dice: tuple[int, ...] = ()
        self._views: list[SeatView | None] = [None, None, None, None]  # the last view of each seat
        self._views_log: Any = None  # the game's action log when they were made, and its length
        self._views_steps = -1
        self._paid = -1  # the hand's payments when ``scores`` were read
        self._done = 0
        self._last_claimed = False
        self._meld_versions = [0, 0, 0, 0]
        self._meld_clock = 0
        self._meld_shown: list[list[int]] = [[0] * NUM_KINDS for _ in range(4)]  # per seat: its public meld tiles
        self._shown = [0] * NUM_KINDS

    def sync(self, game: Game) -> None:
        """Catch up with ``game``: its new discards, a claim of the last one, changed melds."""
        seats = game.seats
        if self._seats is not seats:
            self._seats = seats
            self.deals += 1
            self._reset()
        history = game.history
        done = self._done
        end = len(history)
        changed = False
        if done and history[done - 1][2] != self._last_claimed:  # the last discard was claimed
            seat, tile = history[done - 1][0], history[done - 1][1]
            self._shown[tile] -= 1  # it is in the claimer's meld now
            rivers = list(self.rivers)
            rivers[seat] = rivers[seat][:-1]  # it was the last tile of its river
            self.rivers = tuple(rivers)
            changed = True
        if done < end:
            shown = self._shown
            rivers = list(self.rivers)
            for i in range(done, end):
                seat, tile, claimed, _ = history[i]
                if not claimed:  # a claimed one never lay in the river (抢叉: a robbed addition)
                    shown[tile] += 1
                    rivers[seat] += (tile,)
            self.rivers = tuple(rivers)
            self._done = end
            changed = True
        if changed:
            self.history = tuple(history)
            self._last_claimed = history[-1][2]
        clock = seats[0].table_melds[0] if seats else 0
        if clock != self._meld_clock:
            self._meld_clock = clock
            self._sync_melds(seats)
            changed = True
        if changed:
            self.shown = tuple(self._shown)
        ledger = game.ledger
        paid = len(ledger.payments)
        if paid != self._paid:  # points and silver move only with a payment
            self._paid = paid
            self.scores = tuple(ledger.scores)
            self.silver = tuple(ledger.silver)
            self.base = ledger.base

    def dice(self, game: Game) -> tuple[int, ...]:
        """Every dice roll of the hand (a tuple kept until the next roll)."""
        rolls = game.dice.rolls
        if len(rolls) != len(self._dice):
            self._dice = tuple(rolls)
        return self._dice

    def _sync_melds(self, seats: Sequence[Any]) -> None:
        versions = self._meld_versions
        melds = list(self.melds)
        own_melds = list(self.own_melds)
        hide = not self.concealed_kong_visible
        shown = self._shown
        for seat, st in enumerate(seats):
            if st.meld_version == versions[seat]:
                continue
            versions[seat] = st.meld_version
            own = tuple([MeldView(m.kind, tuple(m.tiles), m.tile, m.source) for m in st.melds])
            public = (
                tuple([_FACE_DOWN if m.kind == MELD_CONCEALED_KONG else m for m in own])
                if hide and any(m.kind == MELD_CONCEALED_KONG for m in own)
                else own
            )
            own_melds[seat] = own
            melds[seat] = public
            before = self._meld_shown[seat]
            for t in range(NUM_KINDS):
                if before[t]:
                    shown[t] -= before[t]
            counted = [0] * NUM_KINDS
            for m in public:
                if m.tiles is not None:
                    for t in m.tiles:
                        counted[t] += 1
            for t in range(NUM_KINDS):
                if counted[t]:
                    shown[t] += counted[t]
            self._meld_shown[seat] = counted
        self.melds = tuple(melds)
        self.own_melds = tuple(own_melds)
        self.kongs_made = tuple([st.kongs_made for st in seats])


# ---------------------------------------------------------------------- one seat's view


class SeatView(NamedTuple):
    """One seat's knowledge at one decision (module docstring); ``seat`` None is the full
    table. Immutable (a named tuple: cheap to make at every decision, to share and to pickle);
    every container in it is a tuple."""

    seat: int | None
    """The viewer, or None for the full table (every hand face up, ``hands``)."""
    rules: RuleSet | None
    """The rule set being played (public, with its typed ``config``); None only in a view read
    back from a dict without its variant (`from_dict`)."""
    dealer: int
    hand_index: int
    phase: Phase
    """The phase as this seat may see it: another player's private decision (a claim or
    robbing window, the bao view, 对宝, 分张) shows as `Phase.TURN` (R13)."""
    to_move: int | None
    """The player to move, where this seat may see it (None: another's private decision, or
    the hand is over)."""
    claim: ClaimView | None
    """The claim or robbing window, only to the player asked."""
    context: Context | None
    """How this seat got its 3n+2-th tile, while it decides its own turn (R5)."""
    counts: tuple[int, ...] | None
    """Its concealed tiles (34 counts), the drawn tile included; None for the full table."""
    drawn: int | None
    """Its tile just drawn (or last drawn), if any."""
    waits: int
    """Its winning kinds as fixed at its ready declaration (a 34-bit mask; 0: not ready)."""
    passed_wins: int
    """Kinds it may not win on by a claim until its next draw (R8 过手胡; a 34-bit mask)."""
    duibao_passed: bool
    """It passed 对宝 on the current bao (C8)."""
    bao: int | None
    """The bao's kind, only once this seat has viewed the current bao (C8); the full table
    sees it."""
    bao_seen: bool
    melds: tuple[tuple[MeldView, ...], ...]
    """Every seat's melds, by seat (another's face-down kong as `MeldView` with no tiles, R7)."""
    rivers: tuple[tuple[int, ...], ...]
    """Every seat's discards still lying in its river, in order."""
    history: tuple[Discard, ...]
    """Every discard of the hand in order: (seat, tile, claimed, declared ready with it)."""
    last_discard: tuple[int, int] | None
    """(seat, tile) of the last discard."""
    shown: tuple[int, ...]
    """Copies of each kind this seat sees outside its concealed hand: every shown meld tile
    (its own concealed kongs included), the rivers and the bao once seen (the full table: every
    hand too). `visible` adds its hand."""
    ready: tuple[bool, ...]
    xianggong: tuple[bool, ...]
    """相公 flags (X5)."""
    first_turn: tuple[bool, ...]
    """Whether each seat is still before its first discard (C5)."""
    concealed_counts: tuple[int, ...]
    kongs_made: tuple[int, ...]
    bao_active: bool
    """Whether a bao indicator is set aside (its rolls are public, C8)."""
    bao_rolls: int
    dice: tuple[int, ...]
    """Every dice roll of the hand (R3: public)."""
    wall_remaining: int
    tail_draws: int
    """Replacement draws from the wall's tail this hand (R4)."""
    scores: tuple[float, ...]
    silver: tuple[float, ...]
    """Each seat's silver (X7)."""
    base: float
    """Silver per point in this hand (X7)."""
    hands: tuple[tuple[int, ...], ...] | None = None
    """The full table only: every seat's concealed tiles (34 counts)."""
    drawn_tiles: tuple[int | None, ...] | None = None
    """The full table only: every seat's drawn tile."""

    # ------------------------------------------------------------------ derived

    @property
    def config(self) -> RuleConfig:
        """The rule fields being played (typed, frozen)."""
        return self._rules().config

    @property
    def variant(self) -> str:
        """The variant's name in the registry (``"changchun"``, `mahjong_env.variants`)."""
        return _variant_name(type(self._rules()))

    def _rules(self) -> RuleSet:
        if self.rules is None:
            raise ValueError("this view was read without its variant: SeatView.from_dict(view, variant, config)")
        return self.rules

    @property
    def phase_name(self) -> str:
        """``"turn"``, ``"claim"``, …: the phase as API.md names it."""
        return PHASE_NAMES[self.phase]

    @property
    def own_melds(self) -> tuple[MeldView, ...]:
        """This seat's own melds (every tile shown to itself)."""
        if self.seat is None:
            raise ValueError("the full table has no own melds: read melds[seat]")
        return self.melds[self.seat]

    def relative(self, r: int) -> int:
        """The absolute seat of relative seat ``r`` (0 self, 1 next 下家, 2 opposite, 3 previous 上家)."""
        return ((self.seat or 0) + r) % 4

    @property
    def visible(self) -> tuple[int, ...]:
        """Copies of each kind this seat sees: its own hand and `shown`."""
        counts = self.counts
        return self.shown if counts is None else tuple([a + b for a, b in zip(self.shown, counts)])

    def unseen(self) -> list[int]:
        """Copies of each kind this seat cannot see: 4 minus `visible` (never below 0)."""
        return [4 - n if n < 4 else 0 for n in self.visible]

    # ------------------------------------------------------------------ the view dict

    def to_dict(self) -> dict[str, Any]:
        """API.md's ``view()`` dict of this view (a new dict of new lists at every call)."""
        names = TILE_NAMES
        seat = self.seat
        claim = self.claim
        last = self.last_discard
        bao = self.bao
        view: dict[str, Any] = {
            "seat": seat,
            "dealer": self.dealer,
            "hand": _hand_text(self.counts) if self.counts is not None else None,
            "drawn": names[self.drawn] if self.drawn is not None else None,
            "melds": [
                [
                    {"kind": MELD_KIND_NAMES[m.kind], "tiles": None, "from": None}
                    if m.tiles is None
                    else {"kind": MELD_KIND_NAMES[m.kind], "tiles": m.notation(), "from": m.source}
                    for m in melds
                ]
                for melds in self.melds
            ],
            "discards": [[names[t] for t in river] for river in self.rivers],
            "ready": list(self.ready),
            "xianggong": list(self.xianggong),
            "concealed_counts": list(self.concealed_counts),
            "bao": names[bao] if bao is not None else None,
            "bao_seen": self.bao_seen,
            "dice": list(self.dice),
            "wall_remaining": self.wall_remaining,
            "scores": list(self.scores),
            "hand_index": self.hand_index,
            "phase": PHASE_NAMES[self.phase],
            # .value: a plain str, as API.md gives it (WindowKind is a str enum)
            "claim": {"seat": claim.source, "tile": names[claim.tile], "kind": claim.kind.value} if claim else None,
            "last_discard": {"seat": last[0], "tile": names[last[1]]} if last is not None else None,
            # every discard of the hand in order: [seat, tile, claimed, declared ready with it] (R13)
            "history": [[h[0], names[h[1]], h[2], h[3]] for h in self.history],  # Discard's flags are bools
        }
        if seat is None:
            view["hands"] = [_hand_text(c) for c in self.hands or ()]
            view["drawn_tiles"] = [names[t] if t is not None else None for t in self.drawn_tiles or ()]
        if self.to_move is not None:
            view["to_move"] = self.to_move
        return view

    @classmethod
    def from_dict(
        cls, view: Mapping[str, Any], variant: str | None = None, config: Mapping[str, Any] | None = None
    ) -> SeatView:
        """A seat's view read back from a ``view()`` dict (an agent's ``info["view"]``), with
        its variant's name and rule fields (``info["variant"]``, ``info["config"]``; absent
        fields take the variant's defaults; without a variant, ``rules`` is None and what
        needs them cannot be asked). ``to_dict()`` of the result equals a ``view()`` dict.

        What the dict does not carry takes a neutral value: ``context`` None, ``waits``,
        ``passed_wins`` and ``tail_draws`` 0, ``duibao_passed`` False, ``first_turn`` all
        False, ``kongs_made`` all 0, ``silver`` all 0.0, ``base`` 1.0; ``bao_rolls`` is the
        number of dice rolls and ``bao_active`` whether the bao is shown. So does a key that a
        hand-made view leaves out, except ``seat``, ``hand``, ``melds`` and ``discards``
        (no flags, no dice, no scores, phase ``turn``)."""
        index = _INDEX_OF_NAME
        seat = view["seat"]
        hand = view["hand"]
        counts = _counts(hand) if hand is not None else None
        drawn = view.get("drawn")
        melds = tuple(
            tuple(
                _FACE_DOWN if m["tiles"] is None else _meld_of(_KIND_OF_NAME[m["kind"]], _tiles(m["tiles"]), m["from"])
                for m in seat_melds
            )
            for seat_melds in view["melds"]
        )
        rivers = tuple(tuple(index[name] for name in river) for river in view["discards"])
        history = tuple(
            [_NEW_DISCARD(Discard, (h[0], index[h[1]], bool(h[2]), bool(h[3]))) for h in view.get("history") or ()]
        )
        bao = index[view["bao"]] if view.get("bao") else None
        claim = view.get("claim")
        last = view.get("last_discard")
        hands = tuple(_counts(h) for h in view["hands"]) if seat is None and "hands" in view else None
        shown = [0] * NUM_KINDS  # what it sees outside its concealed hand
        for held in hands or ():
            shown = list(map(add, shown, held))
        for river in rivers:
            for t in river:
                shown[t] += 1
        for seat_melds in melds:
            for m in seat_melds:
                for t in m.tiles or ():
                    shown[t] += 1
        if bao is not None:
            shown[bao] += 1
        dice = tuple(view.get("dice") or ())
        no_flags = (False, False, False, False)
        return cls(
            seat=seat,
            rules=rules_for(variant, config) if variant is not None else None,
            dealer=view.get("dealer", 0),
            hand_index=view.get("hand_index", 0),
            phase=_PHASES[PHASE_NAMES.index(view.get("phase", "turn"))],
            to_move=view.get("to_move"),
            claim=ClaimView(claim["seat"], index[claim["tile"]], WindowKind(claim["kind"])) if claim else None,
            context=None,
            counts=counts,
            drawn=index[drawn] if drawn is not None else None,
            waits=0,
            passed_wins=0,
            duibao_passed=False,
            bao=bao,
            bao_seen=bool(view.get("bao_seen")),
            melds=melds,
            rivers=rivers,
            history=history,
            last_discard=(last["seat"], index[last["tile"]]) if last else None,
            shown=tuple(shown),
            ready=tuple(view.get("ready") or no_flags),
            xianggong=tuple(view.get("xianggong") or no_flags),
            first_turn=no_flags,
            concealed_counts=tuple(view.get("concealed_counts") or (0, 0, 0, 0)),
            kongs_made=(0, 0, 0, 0),
            bao_active=bao is not None,
            bao_rolls=len(dice),
            dice=dice,
            wall_remaining=view.get("wall_remaining", 0),
            tail_draws=0,
            scores=tuple(view.get("scores") or (0.0, 0.0, 0.0, 0.0)),
            silver=(0.0, 0.0, 0.0, 0.0),
            base=1.0,
            hands=hands,
            drawn_tiles=tuple(index[t] if t is not None else None for t in view["drawn_tiles"])
            if seat is None and "drawn_tiles" in view
            else None,
        )


_NEW_VIEW = tuple.__new__
"""`seat_view` makes a `SeatView` from its fields in ``SeatView._fields`` order, without the
keyword parsing of ``SeatView(...)`` (a view is made at every observation)."""


_NEW_DISCARD = tuple.__new__  # a `Discard` from its four fields, as `_NEW_VIEW`


@functools.lru_cache(maxsize=4096)
def _hand_text(counts: tuple[int, ...]) -> str:
    """`format_counts` of a hand (kept: a hand is written for the view and the info alike)."""
    return format_counts(counts)


@functools.lru_cache(maxsize=4096)
def _tiles(text: str) -> tuple[int, ...]:
    """`parse_tiles` of a view's tile string (kept: melds and hands recur from view to view)."""
    return tuple(parse_tiles(text))


@functools.lru_cache(maxsize=4096)
def _counts(text: str) -> tuple[int, ...]:
    counts = [0] * NUM_KINDS
    for t in parse_tiles(text):
        counts[t] += 1
    return tuple(counts)


def _meld_of(kind: MeldKind, tiles: tuple[int, ...], source: int | None) -> MeldView:
    """A shown meld read from the view: its ``tile`` is the lowest of a chow, else the first."""
    return MeldView(kind, tiles, min(tiles) if kind is MELD_CHOW else tiles[0], source)


def seat_view(game: Game, seat: int | None, memory: TableMemory) -> SeatView:
    """What ``seat`` knows now (``seat=None``: the full table, every hand face up), from
    ``game`` and ``memory``, the table's `TableMemory` (brought up to date here)."""
    memory.sync(game)
    if seat is None:
        return _full_table(game, memory)
    log = game.log
    cached = memory._views
    if memory._views_log is log and memory._views_steps == len(log):  # the game has not moved since
        view = cached[seat]
        if view is not None:
            return view
    else:
        memory._views_log, memory._views_steps = log, len(log)
        cached[:] = [None, None, None, None]
    cached[seat] = view = _seat_view(game, seat, memory)
    return view


def _seat_view(game: Game, seat: int, memory: TableMemory) -> SeatView:
    s0, s1, s2, s3 = seats = game.seats
    me = seats[seat]
    phase = game.phase
    actor = game.actor
    shown = phase == PHASE_TURN or phase == PHASE_OVER or actor == seat  # `sees_decider`
    window = game.window
    bao = game.bao
    counts = tuple(me.counts)
    own = memory.own_melds[seat]
    melds = memory.melds
    bao_seen = me.bao_seen and bao is not None
    seen = memory.shown  # shared by every seat that sees no more than the table shows
    if melds[seat] is not own or bao_seen:
        total = list(seen)
        if melds[seat] is not own:  # its own concealed kongs: face down to the others, not to itself
            melds = melds[:seat] + (own,) + melds[seat + 1 :]
            for meld in own:
                if meld.kind is MELD_CONCEALED_KONG:
                    total[meld.tile] += 4
        if bao_seen:
            total[bao] += 1
        seen = tuple(total)
    wall = game.wall
    return _NEW_VIEW(
        SeatView,
        (
            seat,
            game.rules,
            game.dealer,
            game.hand_index,
            phase if shown else PHASE_TURN,
            actor if shown and phase != PHASE_OVER else None,  # to_move
            ClaimView(window.source, window.tile, window.kind)
            if window is not None and shown and (phase == PHASE_CLAIM or phase == PHASE_ROB)
            else None,  # claim
            game.context if actor == seat and phase == PHASE_TURN else None,  # context
            counts,
            me.drawn,
            me.ready_waits,  # waits
            me.passed_wins,
            me.duibao_passed,
            bao if bao_seen else None,  # bao
            bao_seen,
            melds,
            memory.rivers,
            memory.history,
            game.last_discard,
            seen,  # shown
            (s0.ready, s1.ready, s2.ready, s3.ready),
            (s0.xianggong, s1.xianggong, s2.xianggong, s3.xianggong),
            (s0.first_turn, s1.first_turn, s2.first_turn, s3.first_turn),
            (s0.held, s1.held, s2.held, s3.held),  # concealed_counts
            memory.kongs_made,
            bao is not None,  # bao_active
            game.bao_rolls,
            memory.dice(game),
            wall.remaining,
            wall.tail_draws,
            memory.scores,
            memory.silver,
            memory.base,
            None,  # hands: the full table's only
            None,  # drawn_tiles
        ),
    )


def _full_table(game: Game, memory: TableMemory) -> SeatView:
    """`seat_view` of the full table: every hand and every concealed kong face up, the bao."""
    seats = game.seats
    phase = game.phase
    window = game.window
    bao = game.bao
    total = list(memory.shown)
    for st in seats:
        total = list(map(add, total, st.counts))
    for own, public in zip(memory.own_melds, memory.melds):
        if own is not public:
            for meld in own:
                if meld.kind is MELD_CONCEALED_KONG:
                    total[meld.tile] += 4
    if bao is not None:
        total[bao] += 1
    wall = game.wall
    return SeatView(
        seat=None,
        rules=game.rules,
        dealer=game.dealer,
        hand_index=game.hand_index,
        phase=phase,
        to_move=game.actor if phase != PHASE_OVER else None,
        claim=ClaimView(window.source, window.tile, window.kind)
        if window is not None and (phase == PHASE_CLAIM or phase == PHASE_ROB)
        else None,
        context=None,
        counts=None,
        drawn=None,
        waits=0,
        passed_wins=0,
        duibao_passed=False,
        bao=bao,
        bao_seen=False,
        melds=memory.own_melds,
        rivers=memory.rivers,
        history=memory.history,
        last_discard=game.last_discard,
        shown=tuple(total),
        ready=tuple([st.ready for st in seats]),
        xianggong=tuple([st.xianggong for st in seats]),
        first_turn=tuple([st.first_turn for st in seats]),
        concealed_counts=tuple([st.held for st in seats]),
        kongs_made=memory.kongs_made,
        bao_active=bao is not None,
        bao_rolls=game.bao_rolls,
        dice=memory.dice(game),
        wall_remaining=wall.remaining,
        tail_draws=wall.tail_draws,
        scores=memory.scores,
        silver=memory.silver,
        base=memory.base,
        hands=tuple([tuple(st.counts) for st in seats]),
        drawn_tiles=tuple([st.drawn for st in seats]),
    )


# ---------------------------------------------------------------------- rules and infos


@functools.lru_cache(maxsize=64)
def _variant_name(rules_class: type) -> str:
    """The registered variant whose rule set ``rules_class`` is (its rule set's own name if none)."""
    from mahjong_env.variants import all_variants

    found = next((v.name for v in all_variants() if v.rules_class is rules_class), None)
    return found if found is not None else str(rules_class.name)  # type: ignore[attr-defined]


_RULES_CACHE: list[tuple[str, Mapping[str, Any] | None, dict[str, Any] | None, RuleSet]] = []
_RULES_CACHE_SIZE = 8


def rules_for(variant: str, config: Mapping[str, Any] | None = None) -> RuleSet:
    """The rule set of ``variant`` (its name or env name, `mahjong_env.variants.get_variant`)
    with the rule fields ``config`` (a ``config.to_dict()``, partial or None: the rest take
    their defaults). Kept for the last few configs, so an agent that reads ``info`` at every
    decision builds it once."""
    from mahjong_env.variants import build_table, get_variant

    found = get_variant(variant)
    name = found.name
    for cached_name, given, kept, rules in _RULES_CACHE:
        if cached_name == name and (given is config or kept == config):
            return rules
    rules = build_table(found, dict(config or {})).rules
    _RULES_CACHE.insert(0, (name, config, dict(config) if config is not None else None, rules))
    del _RULES_CACHE[_RULES_CACHE_SIZE:]
    return rules


def decision_info(view: SeatView) -> dict[str, Any]:
    """The ``info`` an agent receives with its observation (`agents.base.Agent.act`): its
    readable view (API.md ``view()``), the variant's name, the rule fields (public: every
    player knows the rules being played) and the `SeatView` itself::

        {"view": view.to_dict(), "variant": "changchun", "config": {...}, "seat_view": view}

    Every call gives new dicts and lists; the `SeatView` is immutable (and pickles, so an
    agent in its own process gets it too, `agents.sandbox`)."""
    return {"view": view.to_dict(), "variant": view.variant, "config": _config_dict(view.config), "seat_view": view}


def _config_dict(config: RuleConfig) -> dict[str, Any]:
    """``config.to_dict()``, made once per config and copied (lists too) for every info."""
    try:
        items = _config_items(config)
    except TypeError:  # a config made by hand with a list in a field: not hashable
        return config.to_dict()
    return {key: _fresh(value) for key, value in items}


@functools.lru_cache(maxsize=16)
def _config_items(config: RuleConfig) -> tuple[tuple[str, Any], ...]:
    return tuple(config.to_dict().items())


def _fresh(value: Any) -> Any:
    return [_fresh(v) for v in value] if value.__class__ is list else value
