"""Observation encoding: fixed-shape feature planes over the 34 tile kinds (RULES.md R13), and
the privileged ``state()`` vector.

The observation of seat ``o`` is a ``float32`` array of shape ``(NUM_CHANNELS, 34)``. Seats are
relative to the observer, ``r = (seat - o) mod 4``: 0 self, 1 next player 下家, 2 opposite,
3 previous player 上家, so one policy serves every seat. It holds exactly what R13 lets ``o``
see. Public planes are kept per table in absolute seats and updated incrementally from the
discard history and melds; each call copies them rotated into one preallocated buffer.

Every layout is declared once, as ``(name, size)`` pieces (`Piece`, `Layout`): the rows of the
observation (`OBSERVATION_LAYOUT`, names in `CHANNELS`), the scalar slots of its last three rows
(`SCALAR_LAYOUT`, names in `SCALARS`) and the state vector (`STATE_LAYOUT`, names in
`STATE_NAMES`). Names, offsets and the spaces' bounds (`observation_box`, `state_box`) are
derived from them, and the encoder writes every slot through a named offset.
``SCALARS[i]`` names scalar slot ``i``, read as ``obs[NUM_CHANNELS - 3:].reshape(-1)[i]``, or by
name with ``scalar(obs, "ready_1")``. Slots named ``unused_<i>`` are always 0: they keep the
positions the shipped checkpoints were trained on.

Rows (``CHANNELS`` names every one):

| rows    | content                                                                        |
|---------|--------------------------------------------------------------------------------|
| 0–3     | own concealed tiles, thermometer: count ≥ 1, ≥ 2, ≥ 3, = 4                      |
| 4       | own drawn tile (one-hot), while this seat decides its turn                     |
| 5       | own 过手胡 kinds (R8: may not win on them by a claim until the next draw)        |
| 6       | own winning tiles as fixed at the ready declaration                            |
| 7       | the bao's kind, only once this seat has viewed the current bao (C8)            |
| 8       | own concealed kongs (kinds)                                                    |
| 9 + 31r + 0 | seat r: tiles in its exposed melds (counts; concealed kongs only if public) |
| 9 + 31r + 1 | seat r: chow tiles (counts)                                                 |
| 9 + 31r + 2 | seat r: pong kinds                                                          |
| 9 + 31r + 3 | seat r: kong kinds (exposed, added, public concealed)                       |
| 9 + 31r + 4 | seat r: special-group tiles 旋风杠/喜杠/幺蛋/九蛋 with additions (counts)    |
| 9 + 31r + 5 | seat r: its river, tiles still lying there (counts)                         |
| 9 + 31r + 6 | seat r: its discards that were claimed (counts)                             |
| 9 + 31r + 7…30 | seat r: its discards in order, one-hot, slot i = i-th discard (first 24)  |
| 133     | the tile under claim or robbing (one-hot), only to the player asked            |
| 134     | the last discard (one-hot)                                                      |
| 135     | tiles visible to this seat (own hand, all public melds, rivers, seen bao)      |
| 136–138 | scalars, row-major (``SCALARS``)                                                |

Scalars (``r`` a relative seat; "/k" means the value is divided by k):

| slots   | names                          | content                                               |
|---------|--------------------------------|-------------------------------------------------------|
| 0–6     | ``phase_<name>``               | phase one-hot; another player's private decision shows as ``turn`` (R13) |
| 7       | ``unused_7``                   | always 0                                              |
| 8–10    | ``claim_from_<r>``, r = 1..3   | seat whose tile is under claim or robbing (only to the player asked) |
| 11–13   | ``window_<kind>``              | that window's kind: discard, added_kong, special_add |
| 14–17   | ``dealer_<r>``                 | the dealer                                            |
| 18–21   | ``ready_<r>``                  | ready 听 flags                                         |
| 22–25   | ``xianggong_<r>``              | 相公 flags (X5)                                        |
| 26–29   | ``concealed_count_<r>/14``     | concealed tile counts                                 |
| 30, 31  | ``wall_remaining/100``, ``hand_index/16`` |                                            |
| 32, 33  | ``bao_seen``, ``bao_active``   | this seat has seen the current bao; a bao is set aside |
| 34–37   | ``unused_34`` … ``unused_37``  | always 0                                              |
| 38–41   | ``score_gain_<r>/64``          | max(points so far, 0)                                 |
| 42, 43  | ``bao_rolls/6``, ``last_dice/12`` |                                                    |
| 44–47   | ``first_turn_<r>``             | before the seat's first discard (C5)                  |
| 48–51   | ``context_<how>``              | own turn: got its tile by deal, draw, replacement, claim |
| 52      | ``duibao_passed``              | this seat passed 对宝 on the current bao (C8)           |
| 53–68   | ``special_<kind>_<r>``         | declared special groups, 4 per seat (winds, dragons, ones, nines) |
| 69–72   | ``concealed_kongs_<r>/4``      | concealed kongs made                                  |
| 73–76   | ``silver_<r>/3500``            | silver (X7), 0 when negative                          |
| 77–80   | ``kongs_made_<r>/4``           | kongs made this hand                                  |
| 81      | ``tail_draws/8``               | replacement draws this hand                           |
| 82      | ``hidden_kong_count/4``        | other seats' concealed kongs whose tiles are hidden (R7) |
| 83–86   | ``score_loss_<r>/64``          | max(−points so far, 0)                                |
| 87–101  | ``unused_87`` … ``unused_101`` | always 0                                              |

Optional blocks of rows can be appended after these (`observation_layout` with extra pieces);
the encoder here fills the first ``NUM_CHANNELS`` rows and leaves the others to their own
encoder.
"""

from __future__ import annotations

import dataclasses
import functools
import struct
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np
from gymnasium import spaces

from mahjong_env.engine.hotpath import MELD_CONCEALED_KONG
from mahjong_env.engine.state import MELD_KIND_NAMES, PHASE_NAMES, SPECIAL_KINDS, MeldKind, Phase
from mahjong_env.tiles import NUM_KINDS, TILE_NAMES
from mahjong_env.visibility import sees_decider

__all__ = [
    "CHANNELS",
    "NUM_CHANNELS",
    "OBSERVATION_LAYOUT",
    "RIVER_SLOTS",
    "SCALARS",
    "SCALAR_LAYOUT",
    "STATE_LAYOUT",
    "STATE_NAMES",
    "STATE_SIZE",
    "UNBOUNDED",
    "Layout",
    "ObservationEncoder",
    "Piece",
    "encode_batch",
    "encode_state",
    "observation_box",
    "observation_layout",
    "scalar",
    "state_box",
]

UNBOUNDED = 1e4
"""Bound of the slots that have no natural maximum (points, silver, hand index, roll and draw
counts, all scaled): finite so that gymnasium's checker accepts the Box; no reachable match
comes near it."""


@dataclasses.dataclass(frozen=True)
class Piece:
    """``size`` consecutive slots of a layout, every value in ``[low, high]``.

    ``labels`` names each slot (default: ``name`` for one slot, ``name_<i>`` for several). An
    ``unused`` piece is padding that stays 0: its slots are named ``unused_<slot>``.
    """

    name: str
    size: int
    high: float = 1.0
    labels: tuple[str, ...] = ()
    low: float = 0.0
    unused: bool = False

    def __post_init__(self) -> None:
        if self.size < 1:
            raise ValueError(f"piece {self.name!r} must have a positive size, got {self.size}")
        if self.labels and len(self.labels) != self.size:
            raise ValueError(f"piece {self.name!r} has {len(self.labels)} labels for {self.size} slots")


def _unused(size: int) -> Piece:
    # always 0; bounded by [0, 1] all the same: gymnasium's checker rejects a Box with low == high
    return Piece("unused", size, unused=True)


class Layout:
    """Pieces laid end to end: a name and bounds for every slot, an offset for every piece.

    ``offset[name]`` is a piece's first slot, ``index[label]`` a slot's position, ``names`` the
    label of each slot, ``low``/``high`` the bounds of each slot, ``unused`` the padding slots.
    A ``size`` larger than the pieces pads the end with unused slots.
    """

    __slots__ = ("high", "index", "low", "names", "offset", "pieces", "size", "unused")

    def __init__(self, pieces: Sequence[Piece], size: int | None = None) -> None:
        laid = list(pieces)
        used = sum(p.size for p in laid)
        if size is not None:
            if size < used:
                raise ValueError(f"layout of {used} slots does not fit in {size}")
            if size > used:
                laid.append(_unused(size - used))
        offsets: dict[str, int] = {}
        names: list[str] = []
        low: list[float] = []
        high: list[float] = []
        unused: list[int] = []
        at = 0
        for piece in laid:
            if piece.unused:
                unused.extend(range(at, at + piece.size))
                names.extend(f"unused_{i}" for i in range(at, at + piece.size))
            else:
                if piece.name in offsets:
                    raise ValueError(f"piece name {piece.name!r} is declared twice")
                offsets[piece.name] = at
                if piece.labels:
                    names.extend(piece.labels)
                elif piece.size == 1:
                    names.append(piece.name)
                else:
                    names.extend(f"{piece.name}_{i}" for i in range(piece.size))
            low.extend([piece.low] * piece.size)
            high.extend([piece.high] * piece.size)
            at += piece.size
        index = {name: i for i, name in enumerate(names)}
        if len(index) != len(names):
            raise ValueError("slot labels must be unique")
        self.pieces: tuple[Piece, ...] = tuple(laid)
        self.size = at
        self.names: tuple[str, ...] = tuple(names)
        self.offset: Mapping[str, int] = MappingProxyType(offsets)
        self.index: Mapping[str, int] = MappingProxyType(index)
        self.low = np.array(low, dtype=np.float32)
        self.high = np.array(high, dtype=np.float32)
        self.unused: tuple[int, ...] = tuple(unused)

    def span(self, name: str) -> slice:
        """The slots of piece ``name``."""
        at = self.offset[name]
        return slice(at, at + next(p.size for p in self.pieces if p.name == name and not p.unused))


def _per_seat(pattern: str) -> tuple[str, ...]:
    return tuple(pattern.format(r=r) for r in range(4))


RIVER_SLOTS = 24
"""Discards per seat kept in order in the observation (the first 24)."""

_SPECIAL_ORDER = SPECIAL_KINDS  # C5, in declaration-action order
_WINDOW_KINDS = ("discard", "added_kong", "special_add")
_CONTEXTS = ("deal", "draw", "replacement", "claim")  # engine.state.Context order

SCALAR_LAYOUT = Layout(
    (
        Piece("phase", len(PHASE_NAMES), labels=tuple(f"phase_{p}" for p in PHASE_NAMES)),
        _unused(1),  # a claim's source is never the seat asked (relative seat 0)
        Piece("claim_from", 3, labels=tuple(f"claim_from_{r}" for r in (1, 2, 3))),
        Piece("window", 3, labels=tuple(f"window_{k}" for k in _WINDOW_KINDS)),
        Piece("dealer", 4),
        Piece("ready", 4),
        Piece("xianggong", 4),
        Piece("concealed_count", 4, labels=_per_seat("concealed_count_{r}/14")),
        Piece("wall_remaining", 1, labels=("wall_remaining/100",)),
        Piece("hand_index", 1, UNBOUNDED, labels=("hand_index/16",)),
        Piece("bao_seen", 1),
        Piece("bao_active", 1),
        _unused(4),
        Piece("score_gain", 4, UNBOUNDED, labels=_per_seat("score_gain_{r}/64")),
        Piece("bao_rolls", 1, UNBOUNDED, labels=("bao_rolls/6",)),
        Piece("last_dice", 1, labels=("last_dice/12",)),
        Piece("first_turn", 4),
        Piece("context", 4, labels=tuple(f"context_{c}" for c in _CONTEXTS)),
        Piece("duibao_passed", 1),
        Piece(
            "special",
            16,
            labels=tuple(f"{MELD_KIND_NAMES[k]}_{r}" for r in range(4) for k in _SPECIAL_ORDER),
        ),
        Piece("concealed_kongs", 4, labels=_per_seat("concealed_kongs_{r}/4")),
        Piece("silver", 4, UNBOUNDED, labels=_per_seat("silver_{r}/3500")),
        Piece("kongs_made", 4, labels=_per_seat("kongs_made_{r}/4")),
        Piece("tail_draws", 1, UNBOUNDED, labels=("tail_draws/8",)),
        Piece("hidden_kong_count", 1, 3.0, labels=("hidden_kong_count/4",)),  # up to 12 kongs
        Piece("score_loss", 4, UNBOUNDED, labels=_per_seat("score_loss_{r}/64")),
    ),
    size=3 * NUM_KINDS,
)
SCALARS: tuple[str, ...] = SCALAR_LAYOUT.names
_SCALAR_ROWS = SCALAR_LAYOUT.size // NUM_KINDS

_SEAT_PIECES = (
    Piece("meld_tiles", 1, 4.0),
    Piece("chows", 1, 4.0),
    Piece("pongs", 1),
    Piece("kongs", 1),
    Piece("specials", 1, 4.0),
    Piece("river", 1, 4.0),
    Piece("claimed", 1, 4.0),
    Piece("discard", RIVER_SLOTS),
)
_SEAT_LAYOUT = Layout(_SEAT_PIECES)  # one seat's public planes, in absolute seats in the encoder
SEAT_PLANES = _SEAT_LAYOUT.size

_BASE_ROWS: tuple[Piece, ...] = (
    Piece("hand", 4, labels=("hand>=1", "hand>=2", "hand>=3", "hand=4")),
    Piece("drawn", 1),
    Piece("passed_wins", 1),
    Piece("ready_waits", 1),
    Piece("bao", 1),
    Piece("own_concealed_kongs", 1),
    *(
        Piece(f"seat{r}_{p.name}", p.size, p.high)  # seat<r>_river, seat<r>_discard_<i>, ...
        for r in range(4)
        for p in _SEAT_PIECES
    ),
    Piece("claim_tile", 1),
    Piece("last_discard", 1),
    Piece("visible", 1, 4.0),
    Piece("scalars", _SCALAR_ROWS, UNBOUNDED),  # per-slot bounds: SCALAR_LAYOUT
)


def observation_layout(extra: Sequence[Piece] = ()) -> Layout:
    """The observation's rows: the base rows, then ``extra`` (optional blocks, e.g. analysis
    features, each appended after the base so the base rows keep their positions)."""
    return Layout(_BASE_ROWS + tuple(extra))


OBSERVATION_LAYOUT = observation_layout()
CHANNELS: tuple[str, ...] = OBSERVATION_LAYOUT.names
NUM_CHANNELS = OBSERVATION_LAYOUT.size


def observation_box(extra: Sequence[Piece] = ()) -> spaces.Box:
    """The ``"observation"`` Box of the AEC and Gymnasium envs, bounds from the layouts
    (rows of ``extra`` as `observation_layout`)."""
    layout = observation_layout(extra)
    low = np.repeat(layout.low, NUM_KINDS).reshape(layout.size, NUM_KINDS)
    high = np.repeat(layout.high, NUM_KINDS).reshape(layout.size, NUM_KINDS)
    rows = OBSERVATION_LAYOUT.span("scalars")
    low[rows] = SCALAR_LAYOUT.low.reshape(_SCALAR_ROWS, NUM_KINDS)
    high[rows] = SCALAR_LAYOUT.high.reshape(_SCALAR_ROWS, NUM_KINDS)
    return spaces.Box(low, high, dtype=np.float32)


def scalar(observation: np.ndarray, name: str) -> float:
    """The scalar slot ``name`` (a `SCALARS` entry) of one observation."""
    if name not in SCALAR_LAYOUT.index:
        raise ValueError(f"unknown scalar {name!r}; names are in mahjong_env.observation.SCALARS")
    block = observation[_ROW_SCALARS : _ROW_SCALARS + _SCALAR_ROWS].reshape(-1)
    return float(block[SCALAR_LAYOUT.index[name]])


# ---------------------------------------------------------------------- named offsets

_ROW = OBSERVATION_LAYOUT.offset
_PUB = _ROW["seat0_meld_tiles"]  # the four seat blocks, relative seat order
_PUB_END = _PUB + 4 * SEAT_PLANES
_ROW_CLAIM = _ROW["claim_tile"]
_ROW_VISIBLE = _ROW["visible"]
_ROW_SCALARS = _ROW["scalars"]
assert _ROW_SCALARS + _SCALAR_ROWS == NUM_CHANNELS and _ROW["seat3_meld_tiles"] == _PUB + 3 * SEAT_PLANES
assert _PUB_END <= _ROW_CLAIM < _ROW_VISIBLE and _ROW["last_discard"] < _ROW_VISIBLE  # zeroed together

# planes inside one seat block
_P = _SEAT_LAYOUT.offset
_P_MELD, _P_CHOW, _P_PONG, _P_KONG, _P_SPECIAL = (_P[k] for k in ("meld_tiles", "chows", "pongs", "kongs", "specials"))
_P_RIVER, _P_CLAIMED, _P_DISCARD = _P["river"], _P["claimed"], _P["discard"]
assert (_P_MELD, _P_CHOW, _P_PONG, _P_KONG, _P_SPECIAL) == (0, 1, 2, 3, 4)  # melds are re-drawn as rows 0-4

# flat offsets of single rows inside one observation
_AT_DRAWN, _AT_PASSED, _AT_WAITS, _AT_BAO, _AT_KONGS = (
    NUM_KINDS * _ROW[k] for k in ("drawn", "passed_wins", "ready_waits", "bao", "own_concealed_kongs")
)
_AT_MELDS, _AT_KONG_KINDS = NUM_KINDS * (_PUB + _P_MELD), NUM_KINDS * (_PUB + _P_KONG)
_AT_CLAIM, _AT_LAST = NUM_KINDS * _ROW_CLAIM, NUM_KINDS * _ROW["last_discard"]
_AT_VISIBLE, _AT_SCALARS = NUM_KINDS * _ROW_VISIBLE, NUM_KINDS * _ROW_SCALARS
_SEAT_SIZE = SEAT_PLANES * NUM_KINDS
_AT_RIVER, _AT_CLAIMED, _AT_DISCARD = (NUM_KINDS * p for p in (_P_RIVER, _P_CLAIMED, _P_DISCARD))

# scalar slots
_S = SCALAR_LAYOUT.offset
_S_PHASE = _S["phase"]
_S_CLAIM_FROM = _S["claim_from"] - 1  # + relative seat 1..3
_S_WINDOW = _S["window"]
_S_DEALER = _S["dealer"]
_S_READY = _S["ready"]
_S_XIANGGONG = _S["xianggong"]
_S_CONCEALED = _S["concealed_count"]
_S_WALL = _S["wall_remaining"]
_S_HAND_INDEX = _S["hand_index"]
_S_BAO_SEEN = _S["bao_seen"]
_S_BAO_ACTIVE = _S["bao_active"]
_S_GAIN = _S["score_gain"]
_S_BAO_ROLLS = _S["bao_rolls"]
_S_LAST_DICE = _S["last_dice"]
_S_FIRST_TURN = _S["first_turn"]
_S_CONTEXT = _S["context"]
_S_DUIBAO_PASSED = _S["duibao_passed"]
_S_SPECIAL = _S["special"]
_S_CONCEALED_KONGS = _S["concealed_kongs"]
_S_SILVER = _S["silver"]
_S_KONGS_MADE = _S["kongs_made"]
_S_TAIL_DRAWS = _S["tail_draws"]
_S_HIDDEN_KONGS = _S["hidden_kong_count"]
_S_LOSS = _S["score_loss"]

# by held count c (column): the four thermometer rows hand>=1 ... hand=4, then c itself
_COUNT_ROWS = np.array([[c >= 1, c >= 2, c >= 3, c == 4, c] for c in range(5)], dtype=np.float32).T.copy()
# by held count c (column): the rows before the public block (thermometer, then zeros), then c
_HEAD_ROWS = np.zeros((_PUB + 1, 5), np.float32)
_HEAD_ROWS[0:4] = _COUNT_ROWS[0:4]
_HEAD_ROWS[_PUB] = _COUNT_ROWS[4]
_PACK_SCALARS_INTO = struct.Struct(f"{SCALAR_LAYOUT.size}f").pack_into  # float32 bytes, as numpy rounds
_BYTE_AT_SCALARS = 4 * _AT_SCALARS
_WINDOW = {kind: i for i, kind in enumerate(_WINDOW_KINDS)}
_TURN, _CLAIM_PHASE, _ROB = int(Phase.TURN), int(Phase.CLAIM), int(Phase.ROB)
_NUM_SCALARS = SCALAR_LAYOUT.size
_ROTATIONS = tuple(tuple((seat + r) % 4 for r in range(4)) for seat in range(4))  # per observer: seats by r
_SEAT_SLOTS = tuple(
    tuple((o, _S_READY + r, _S_XIANGGONG + r, _S_CONCEALED + r, _S_FIRST_TURN + r) for r, o in enumerate(order))
    for order in _ROTATIONS
)  # per observer: the absolute seat of relative seat r, then its flag and count slots
_MELD_SLOTS = tuple(
    tuple((r, o, _S_SPECIAL + 4 * r, _S_CONCEALED_KONGS + r, _S_KONGS_MADE + r) for r, o in enumerate(order))
    for order in _ROTATIONS
)  # per observer: relative seat r, its absolute seat, its slots of the scalars kept from the melds


_MELD_BLOCKS: dict[tuple[MeldKind, int, tuple[int, ...]], np.ndarray] = {}
_NO_MELD_SCALARS: tuple[int, tuple[bool, ...] | None, int] = (0, None, 0)  # no concealed kongs, specials or kongs


def _meld_block(key: tuple[MeldKind, int, tuple[int, ...]], is_kong: bool) -> np.ndarray:
    """One meld's part of a seat's meld rows (meld tiles, chows, pongs, kongs, specials), by
    ``(kind, tile, tiles)``; kept, since a table has few distinct melds."""
    kind, tile, tiles = key
    block = np.zeros((_P_SPECIAL + 1, NUM_KINDS), np.float32)
    for t in tiles:
        block[_P_MELD, t] += 1
    if kind is MeldKind.CHOW:
        for t in tiles:
            block[_P_CHOW, t] += 1
    elif kind is MeldKind.PONG:
        block[_P_PONG, tile] = 1.0
    elif is_kong:
        block[_P_KONG, tile] = 1.0
    else:
        for t in tiles:
            block[_P_SPECIAL, t] += 1
    block.flags.writeable = False
    _MELD_BLOCKS[key] = block
    return block


class ObservationEncoder:
    """Fills observations for one `Game`; keep one encoder per table.

    Public planes are kept per absolute seat in ``public`` and updated from the game's
    discard history and melds when they change. `encode` (one observation) and `encode_batch`
    (one observation for each of several tables, as vectorised self-play needs) share the same
    steps: per table, the public block is copied rotated in two slices, the sparse private
    entries are listed as flat indices and the scalars as a list; then one numpy call per
    kind of row fills every observation of the batch.
    """

    def __init__(self, concealed_kong_visible: bool) -> None:
        self.concealed_kong_visible = concealed_kong_visible
        self.public = np.zeros((4, SEAT_PLANES, NUM_KINDS), dtype=np.float32)
        self._public_rows = self.public.reshape(4 * SEAT_PLANES, NUM_KINDS)
        self._public_flat = memoryview(self.public).cast("B").cast("f")  # one slot at a time: no numpy scalars
        self._hist_done = 0
        self._last_claimed = 0
        self._meld_seen = [0, 0, 0, 0]  # the `SeatState.meld_version` of each seat's meld rows
        self._table_melds_seen = 0  # the seats' shared `SeatState.table_melds` clock when they were compared
        self._meld_scalars = [_NO_MELD_SCALARS] * 4  # per seat, from its melds: (concealed kongs, specials, kongs)
        self._meld_scalars_set = False  # some seat's `_meld_scalars` are not `_NO_MELD_SCALARS`
        self._points_at = -1  # the payments made when `_points` was computed
        self._points: list[tuple[list[float], list[float], list[float]]] = []  # per observer: gain, loss, silver by r
        self._discards = [0, 0, 0, 0]
        self._hand_key: Any = None
        self._visible = np.zeros(NUM_KINDS, dtype=np.float32)  # every seat's meld tiles + river
        self._visible_flat = memoryview(self._visible).cast("B").cast("f")
        self._single = np.empty((1, NUM_CHANNELS, NUM_KINDS), np.float32)
        self._out: np.ndarray | None = None  # the last ``out`` of `encode` and its batch view
        self._out_batch = self._single
        buf = self._buf = np.zeros((NUM_CHANNELS, NUM_KINDS), np.float32)  # `observation` writes here
        self._buf_head = buf[0 : _PUB + 1]  # the hand rows, zeros, then the counts in the first public row
        self._buf_counts = buf[_PUB]
        self._buf_visible = buf[_ROW_VISIBLE]
        self._buf_unset = buf[_PUB_END:_ROW_VISIBLE]  # rows of sparse entries only
        self._buf_flat = memoryview(buf).cast("B").cast("f")  # one slot at a time: no numpy scalars

    def _sync(self, game: Any) -> None:
        public = self.public
        visible = self._visible
        if self._hand_key is not game.seats:
            public.fill(0.0)
            visible.fill(0.0)
            self._hist_done = 0
            self._last_claimed = 0
            self._meld_seen = [0, 0, 0, 0]
            self._table_melds_seen = 0
            self._meld_scalars = [_NO_MELD_SCALARS] * 4
            self._meld_scalars_set = False
            self._points_at = -1
            self._discards = [0, 0, 0, 0]
            self._hand_key = game.seats
        history = game.history
        done = self._hist_done
        flat = self._public_flat  # seat s, plane p, tile t at s * _SEAT_SIZE + 34 * p + t
        seen = self._visible_flat
        if done and history[done - 1][2] != self._last_claimed:  # the last discard was claimed
            seat, tile = history[done - 1][0], history[done - 1][1]
            at = seat * _SEAT_SIZE + tile
            flat[at + _AT_RIVER] -= 1
            flat[at + _AT_CLAIMED] += 1
            seen[tile] -= 1  # it is in the claimer's meld tiles now
        end = len(history)
        if done < end:
            discards = self._discards
            for i in range(done, end):
                seat, tile, claimed, _ = history[i]
                at = seat * _SEAT_SIZE + tile
                if claimed:
                    flat[at + _AT_CLAIMED] += 1
                else:
                    flat[at + _AT_RIVER] += 1
                    seen[tile] += 1
                n = discards[seat]
                discards[seat] = n + 1
                if n < RIVER_SLOTS:
                    flat[at + _AT_DISCARD + NUM_KINDS * n] = 1.0
            self._hist_done = end
        self._last_claimed = history[-1][2] if history else 0
        seats = game.seats
        clock = seats[0].table_melds[0]
        if clock == self._table_melds_seen:  # no seat's melds changed
            return
        self._table_melds_seen = clock
        meld_seen = self._meld_seen
        for seat, st in enumerate(seats):
            version = st.meld_version
            if version == meld_seen[seat]:
                continue
            meld_seen[seat] = version
            melds = st.melds
            plane = public[seat]
            visible -= plane[_P_MELD]
            block = plane[_P_MELD : _P_SPECIAL + 1]
            block[...] = 0.0
            concealed_kongs = 0
            for meld in melds:
                if meld.kind is MELD_CONCEALED_KONG:
                    concealed_kongs += 1
                    if not self.concealed_kong_visible:
                        continue
                key = (meld.kind, meld.tile, tuple(meld.tiles))
                drawn = _MELD_BLOCKS.get(key)
                block += drawn if drawn is not None else _meld_block(key, meld.is_kong)
            visible += plane[_P_MELD]
            specials = st.specials
            scalars = (
                concealed_kongs,
                tuple(kind in specials for kind in _SPECIAL_ORDER) if specials else None,
                st.kongs_made,  # bumped with the kong's meld, in the same step
            )
            self._meld_scalars[seat] = scalars
            if scalars != _NO_MELD_SCALARS:
                self._meld_scalars_set = True

    def encode(self, game: Any, seat: int, out: np.ndarray) -> np.ndarray:
        """Write seat ``seat``'s observation into ``out`` (shape ``(NUM_CHANNELS, 34)``, or more
        rows: see `encode_batch`)."""
        if out is not self._out:  # the env passes the same buffer every time: keep its view
            direct = out.flags.c_contiguous and out.dtype == np.float32
            self._out, self._out_batch = out, out.reshape(1, *out.shape) if direct else self._single
        batch = self._out_batch
        encode_batch((self,), (game,), (seat,), batch)
        if batch is self._single:
            out[:NUM_CHANNELS] = batch[0]
        return out

    def observation(self, game: Any, seat: int) -> np.ndarray:
        """Seat ``seat``'s observation as a new ``(NUM_CHANNELS, 34)`` array: the same values
        as `encode` (and `encode_batch`), with the numpy work of a single observation.

        It is written into this encoder's own buffer, through views made once, and returned
        as a copy."""
        buf = self._buf
        self._sync(game)
        # counts are 0..4, so "clip" never clips; it spares the bounds check's buffered copy of ``out``
        _HEAD_ROWS.take(game.seats[seat].counts, axis=1, out=self._buf_head, mode="clip")
        np.add(self._visible, self._buf_counts, out=self._buf_visible)  # meld tiles, rivers, own hand
        index: list[int] = []
        value: list[float] = []
        scalars: list[Any] = []
        extra: list[tuple[int, float]] = []
        self._private(game, seat, buf, 0, index, value, scalars, extra)  # over the counts row
        self._buf_unset.fill(0.0)
        flat = self._buf_flat
        for at, v in zip(index, value):
            flat[at] = v
        for at, count in extra:
            flat[at] += count
        _PACK_SCALARS_INTO(buf, _BYTE_AT_SCALARS, *scalars)  # float32 bytes written in place
        return buf.copy()

    def _private(
        self,
        game: Any,
        seat: int,
        out: np.ndarray,
        base: int,
        index: list[int],
        value: list[float],
        scalars: list[Any],
        extra: list[tuple[int, float]],
    ) -> None:
        """One observation's table-specific part, after `_sync` (``_visible`` then holds every
        seat's meld tiles and river): the rotated public block, the sparse private entries (flat
        ``index``/``value`` pairs from ``base``) and the scalars. ``extra`` gets the flat
        ``(index, count)`` pairs that the own hand does not show but that are visible all the
        same (the seen bao, own hidden kongs)."""
        st = game.seats[seat]
        phase = game.phase
        deciding = game.actor == seat
        shown = sees_decider(game, seat)  # R13: else a private decision shows as an ordinary turn
        if st.drawn is not None and deciding and phase == _TURN:
            index.append(base + _AT_DRAWN + st.drawn)
            value.append(1.0)
        if st.passed_wins or st.ready_waits:
            for row, mask in ((_AT_PASSED, st.passed_wins), (_AT_WAITS, st.ready_waits)):
                while mask:
                    low = mask & -mask
                    index.append(base + row + low.bit_length() - 1)
                    value.append(1.0)
                    mask ^= low
        bao = game.bao
        bao_seen = st.bao_seen and bao is not None
        if bao_seen:
            index.append(base + _AT_BAO + bao)
            value.append(1.0)
            extra.append((base + _AT_VISIBLE + bao, 1.0))
        own_kongs = (
            [meld.tile for meld in st.melds if meld.kind is MELD_CONCEALED_KONG] if self._meld_scalars[seat][0] else ()
        )  # `_sync` counted them
        hidden = not self.concealed_kong_visible
        for t in own_kongs:
            index.append(base + _AT_KONGS + t)
            value.append(1.0)
            if hidden:  # one's own concealed kongs are no secret to oneself
                index.extend((base + _AT_MELDS + t, base + _AT_KONG_KINDS + t))
                value.extend((4.0, 1.0))
                extra.append((base + _AT_VISIBLE + t, 4.0))
        split = SEAT_PLANES * (4 - seat)  # rows of seats seat..3, then seats 0..seat-1
        rows = self._public_rows
        out[_PUB : _PUB + split] = rows[SEAT_PLANES * seat :]
        if seat:
            out[_PUB + split : _PUB_END] = rows[: SEAT_PLANES * seat]
        window = game.window
        claim_window = window is not None and shown and (phase == _CLAIM_PHASE or phase == _ROB)
        if claim_window:
            index.append(base + _AT_CLAIM + window.tile)
            value.append(1.0)
        if game.last_discard is not None:
            index.append(base + _AT_LAST + game.last_discard[1])
            value.append(1.0)
        scalars += self._scalars(game, seat, st, deciding, shown, claim_window, bao_seen)

    def _scalars(
        self, game: Any, seat: int, st: Any, deciding: bool, shown: bool, claim_window: bool, bao_seen: bool
    ) -> list[Any]:
        s: list[Any] = [0.0] * _NUM_SCALARS
        phase = game.phase
        seats = game.seats
        s[_S_PHASE + (int(phase) if shown else _TURN)] = 1.0
        if claim_window:
            window = game.window
            s[_S_CLAIM_FROM + (window.source - seat) % 4] = 1.0
            s[_S_WINDOW + _WINDOW[window.kind]] = 1.0
        s[_S_DEALER + (game.dealer - seat) % 4] = 1.0
        hidden_kongs = 0
        payments = len(game.ledger.payments)  # points and silver move only with a payment
        if payments != self._points_at:
            self._points_at = payments
            by_seat = [
                # max(score, 0.0) / 64, max(-score, 0.0) / 64 (a zero score: 0.0 and -0.0), silver
                (
                    0.0 if score < 0.0 else score / 64.0,
                    0.0 if score > 0.0 else -score / 64.0,
                    0.0 if money < 0.0 else money / 3500.0,
                )
                for score, money in zip(game.scores, game.silver)
            ]
            self._points = [
                ([by_seat[o][0] for o in order], [by_seat[o][1] for o in order], [by_seat[o][2] for o in order])
                for order in _ROTATIONS
            ]
        gains, losses, monies = self._points[seat]
        s[_S_GAIN : _S_GAIN + 4] = gains
        s[_S_LOSS : _S_LOSS + 4] = losses
        s[_S_SILVER : _S_SILVER + 4] = monies
        # slots start at 0.0: flags and counts are written only when set (the same float32 bytes)
        for o, ready, xianggong, concealed, first in _SEAT_SLOTS[seat]:
            other = seats[o]
            if other.ready:
                s[ready] = True
            if other.xianggong:
                s[xianggong] = True
            s[concealed] = other.held / 14.0
            if other.first_turn:
                s[first] = True
        if self._meld_scalars_set:
            meld_scalars = self._meld_scalars
            for r, o, special, ckongs, kongs_at in _MELD_SLOTS[seat]:
                concealed_kongs, specials, kongs = meld_scalars[o]  # kept by `_sync`
                if specials:
                    s[special : special + len(specials)] = specials
                if concealed_kongs:
                    s[ckongs] = concealed_kongs / 4.0
                    if r:
                        hidden_kongs += concealed_kongs
                if kongs:
                    s[kongs_at] = kongs / 4.0
        wall = game.wall
        s[_S_WALL] = wall.remaining / 100.0
        s[_S_HAND_INDEX] = game.hand_index / 16.0
        s[_S_BAO_SEEN] = bao_seen
        s[_S_BAO_ACTIVE] = game.bao is not None
        s[_S_BAO_ROLLS] = game.bao_rolls / 6.0
        rolls = game.dice.rolls
        s[_S_LAST_DICE] = rolls[-1] / 12.0 if rolls else 0.0
        if deciding and phase == _TURN:
            s[_S_CONTEXT + int(game.context)] = 1.0
        s[_S_DUIBAO_PASSED] = st.duibao_passed
        s[_S_TAIL_DRAWS] = wall.tail_draws / 8.0
        s[_S_HIDDEN_KONGS] = 0.0 if self.concealed_kong_visible else hidden_kongs / 4.0
        return s


@functools.lru_cache(maxsize=16)
def _pack_batch(n: int) -> Callable[..., bytes]:
    """``struct.pack`` of ``n`` observations' scalars as float32."""
    return struct.Struct(f"{n * _NUM_SCALARS}f").pack


def encode_batch(
    encoders: Sequence[ObservationEncoder], games: Sequence[Any], seats: Sequence[int], out: np.ndarray
) -> np.ndarray:
    """Write seat ``seats[i]``'s observation of ``games[i]`` into ``out[i]`` for every ``i``.

    ``out`` is a C-contiguous ``float32`` array of shape ``(n, rows, 34)`` with ``rows >=
    NUM_CHANNELS``; the first ``NUM_CHANNELS`` rows are written, rows after them (optional
    blocks of `observation_layout`) are left as they are. ``encoders[i]`` is game ``i``'s own
    encoder. Equal to ``encoders[i].encode(games[i], seats[i], out[i])`` for each ``i``, with
    the numpy work done once for the whole batch.
    """
    n = len(games)
    if (
        out.ndim != 3
        or out.shape[0] != n
        or out.shape[1] < NUM_CHANNELS
        or out.shape[2] != NUM_KINDS
        or out.dtype != np.float32
        or not out.flags.c_contiguous
    ):
        raise ValueError(f"out must be a C-contiguous float32 array of shape ({n}, {NUM_CHANNELS}, 34)")
    stride = out.shape[1] * NUM_KINDS
    index: list[int] = []
    value: list[float] = []
    scalars: list[Any] = []
    extra: list[tuple[int, float]] = []
    counts = []
    visibles = np.empty((n, NUM_KINDS), np.float32)
    for i in range(n):
        game, seat = games[i], seats[i]
        counts.append(bytes(game.seats[seat].counts))
        encoder = encoders[i]
        encoder._sync(game)
        encoder._private(game, seat, out[i], i * stride, index, value, scalars, extra)
        visibles[i] = encoder._visible
    held = _COUNT_ROWS.take(np.frombuffer(b"".join(counts), dtype=np.uint8).reshape(n, NUM_KINDS), axis=1, mode="clip")
    out[:, 0:4] = held[0:4].swapaxes(0, 1)
    out[:, 4:_PUB] = 0.0
    out[:, _PUB_END:_ROW_VISIBLE] = 0.0
    flat = out.reshape(-1)
    flat[index] = value
    # visible: every seat's meld tiles and river (each table's own), the own hand, the extras
    np.add(visibles, held[4], out=out[:, _ROW_VISIBLE])
    for at, count in extra:
        flat[at] += count
    if n == 1:  # one contiguous run: packed straight into ``out``
        _PACK_SCALARS_INTO(out, _BYTE_AT_SCALARS, *scalars)
    else:
        packed = np.frombuffer(_pack_batch(n)(*scalars), np.float32)  # float32 as numpy rounds, faster
        out[:, _ROW_SCALARS:NUM_CHANNELS] = packed.reshape(n, _SCALAR_ROWS, NUM_KINDS)
    return out


STATE_LAYOUT = Layout(
    (
        *(Piece(f"hand_{s}", NUM_KINDS, 4.0, tuple(f"hand_{s}_{t}" for t in TILE_NAMES)) for s in range(4)),
        Piece("wall", 4 * NUM_KINDS, float(NUM_KINDS)),  # tile index + 1 in draw order, 0 = empty
        Piece("bao", NUM_KINDS, labels=tuple(f"bao_{t}" for t in TILE_NAMES)),
        Piece("dealer", 4),
        Piece("score", 4, UNBOUNDED, _per_seat("score_{r}/64"), low=-UNBOUNDED),
        Piece("ready", 4),
    )
)
"""The ``state()`` vector; seats here are absolute (``hand_0`` is player_0's)."""
STATE_NAMES: tuple[str, ...] = STATE_LAYOUT.names
STATE_SIZE = STATE_LAYOUT.size
_T = STATE_LAYOUT.offset
_T_HANDS, _T_WALL, _T_BAO, _T_DEALER, _T_SCORE, _T_READY = (
    _T[k] for k in ("hand_0", "wall", "bao", "dealer", "score", "ready")
)
assert _T["hand_3"] == _T_HANDS + 3 * NUM_KINDS


def state_box() -> spaces.Box:
    """The ``state_space`` Box, bounds from `STATE_LAYOUT`."""
    return spaces.Box(STATE_LAYOUT.low, STATE_LAYOUT.high, dtype=np.float32)


def encode_state(game: Any) -> np.ndarray:
    """The privileged global state (API.md ``state()``): every concealed hand, the wall in draw
    order (tile index + 1, 0 = empty), the bao, the dealer, scores and ready flags."""
    out = np.zeros(STATE_SIZE, dtype=np.float32)
    for seat, st in enumerate(game.seats):
        at = _T_HANDS + NUM_KINDS * seat
        out[at : at + NUM_KINDS] = st.counts
    live = game.wall.live_tiles()
    out[_T_WALL : _T_WALL + len(live)] = np.asarray(live, dtype=np.float32) + 1.0
    if game.bao is not None:
        out[_T_BAO + game.bao] = 1.0
    out[_T_DEALER + game.dealer] = 1.0
    out[_T_SCORE : _T_SCORE + 4] = np.asarray(game.scores, dtype=np.float32) / 64.0
    out[_T_READY : _T_READY + 4] = [st.ready for st in game.seats]
    return out
