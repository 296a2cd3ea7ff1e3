"""Observation encoding: fixed-shape feature planes over the 34 tile kinds (RULES.md R13).

The observation of seat ``o`` is a ``float32`` array of shape ``(NUM_CHANNELS, 34)``. Seats are
relative to the observer, ``r = (seat - o) mod 4``: 0 self, 1 next player 下家, 2 opposite,
3 previous player 上家, so one policy serves every seat. It holds exactly what R13 lets ``o``
see. Public planes are kept per table in absolute seats and updated incrementally from the
discard history and melds; each call copies them rotated into one preallocated buffer.

Channels (``CHANNELS`` names every one):

| rows    | content                                                                        |
|---------|--------------------------------------------------------------------------------|
| 0–3     | own concealed tiles, thermometer: count ≥ 1, ≥ 2, ≥ 3, = 4                      |
| 4       | own drawn tile (one-hot)                                                       |
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
| 133     | the tile under claim or robbing (one-hot)                                       |
| 134     | the last discard (one-hot)                                                      |
| 135     | tiles visible to this seat (own hand, all public melds, rivers, seen bao)      |
| 136–138 | scalars, row-major (see ``SCALARS``)                                            |
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mahjong_env.engine.state import Phase

__all__ = [
    "NUM_CHANNELS",
    "CHANNELS",
    "SCALARS",
    "ObservationEncoder",
    "encode_batch",
    "RIVER_SLOTS",
    "STATE_SIZE",
    "encode_state",
]

RIVER_SLOTS = 24
SEAT_PLANES = 7 + RIVER_SLOTS
_PRIVATE = 9
_PUB = _PRIVATE
_CLAIM = _PUB + 4 * SEAT_PLANES
_LAST = _CLAIM + 1
_VISIBLE = _LAST + 1
_SCALAR = _VISIBLE + 1
NUM_CHANNELS = _SCALAR + 3

SCALARS: tuple[str, ...] = (
    *(f"phase_{p}" for p in ("turn", "claim", "rob", "bao_view", "duibao", "fenzhang", "over")),
    *(f"claim_from_{r}" for r in range(4)),
    "window_discard",
    "window_added_kong",
    "window_special_add",
    *(f"dealer_{r}" for r in range(4)),
    *(f"ready_{r}" for r in range(4)),
    *(f"xianggong_{r}" for r in range(4)),
    *(f"concealed_count_{r}/14" for r in range(4)),
    "wall_remaining/100",
    "hand_index/16",
    "bao_seen",
    "bao_active",
    *(f"score_gain_{r}/64" for r in range(4)),
    "bao_rolls/6",
    "last_dice/12",
    *(f"first_turn_{r}" for r in range(4)),
    *(f"context_{c}" for c in ("deal", "draw", "replacement", "claim")),
    "duibao_passed",
    *(f"special_{k}_{r}" for r in range(4) for k in ("winds", "dragons", "ones", "nines")),
    *(f"concealed_kongs_{r}/4" for r in range(4)),
    *(f"silver_{r}/3500" for r in range(4)),
    *(f"kongs_made_{r}/4" for r in range(4)),
    "tail_draws/8",
    "hidden_kong_count/4",
    *(f"score_loss_{r}/64" for r in range(4)),
)
assert len(SCALARS) <= 3 * 34

CHANNELS: tuple[str, ...] = (
    "hand>=1",
    "hand>=2",
    "hand>=3",
    "hand=4",
    "drawn",
    "passed_wins",
    "ready_waits",
    "bao",
    "own_concealed_kongs",
    *(
        name
        for r in range(4)
        for name in (
            f"seat{r}_meld_tiles",
            f"seat{r}_chows",
            f"seat{r}_pongs",
            f"seat{r}_kongs",
            f"seat{r}_specials",
            f"seat{r}_river",
            f"seat{r}_claimed",
            *(f"seat{r}_discard_{i}" for i in range(RIVER_SLOTS)),
        )
    ),
    "claim_tile",
    "last_discard",
    "visible",
    "scalars_0",
    "scalars_1",
    "scalars_2",
)
assert len(CHANNELS) == NUM_CHANNELS

_THRESHOLDS = np.array([[1], [2], [3], [4]], dtype=np.uint8)  # rows 0-3: count >= k
_SPECIAL_ORDER = ("special_winds", "special_dragons", "special_ones", "special_nines")
_WINDOW = {"discard": 0, "added_kong": 1, "special_add": 2}
_TURN, _CLAIM_PHASE, _ROB, _OVER = int(Phase.TURN), int(Phase.CLAIM), int(Phase.ROB), int(Phase.OVER)
_NUM_SCALARS = 3 * 34
_SEAT_SIZE = SEAT_PLANES * 34
_NO_MELDS = (0, 0)  # meld signature (melds, meld tiles) of a seat without melds
_RELATIVE = tuple(tuple((r, (seat + r) % 4) for r in range(4)) for seat in range(4))  # (r, absolute seat)
_SIZE = NUM_CHANNELS * 34
# flat offsets of single rows inside one observation
_AT_DRAWN, _AT_PASSED, _AT_WAITS, _AT_BAO, _AT_KONGS = (34 * row for row in range(4, 9))
_AT_MELDS, _AT_KONG_KINDS = 34 * _PUB, 34 * (_PUB + 3)
_AT_CLAIM, _AT_LAST = 34 * _CLAIM, 34 * _LAST


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
        self.public = np.zeros((4, SEAT_PLANES, 34), dtype=np.float32)
        self._public_rows = self.public.reshape(4 * SEAT_PLANES, 34)
        self._public_flat = self.public.reshape(-1)
        self._hist_done = 0
        self._last_claimed = 0
        self._meld_sig = [_NO_MELDS] * 4
        self._discards = [0, 0, 0, 0]
        self._hand_key: Any = None

    def _sync(self, game: Any) -> None:
        public = self.public
        if self._hand_key is not game.seats:
            public.fill(0.0)
            self._hist_done = 0
            self._last_claimed = 0
            self._meld_sig = [_NO_MELDS] * 4
            self._discards = [0, 0, 0, 0]
            self._hand_key = game.seats
        history = game.history
        done = self._hist_done
        flat = self._public_flat  # seat s, plane p, tile t at s * _SEAT_SIZE + 34 * p + t
        if done and history[done - 1][2] != self._last_claimed:  # the last discard was claimed
            seat, tile = history[done - 1][0], history[done - 1][1]
            at = seat * _SEAT_SIZE + tile
            flat[at + 5 * 34] -= 1
            flat[at + 6 * 34] += 1
        end = len(history)
        if done < end:
            discards = self._discards
            for i in range(done, end):
                seat, tile, claimed, _ = history[i]
                at = seat * _SEAT_SIZE + tile
                flat[at + (6 * 34 if claimed else 5 * 34)] += 1
                n = discards[seat]
                discards[seat] = n + 1
                if n < RIVER_SLOTS:
                    flat[at + 34 * (7 + n)] = 1.0
            self._hist_done = end
        self._last_claimed = history[-1][2] if history else 0
        meld_sig = self._meld_sig
        for seat, st in enumerate(game.seats):
            melds = st.melds
            sig = (len(melds), sum([len(m.tiles) for m in melds])) if melds else _NO_MELDS
            if sig == meld_sig[seat]:
                continue
            meld_sig[seat] = sig
            plane = public[seat]
            plane[0:5] = 0.0
            for meld in melds:
                kind = meld.kind
                if kind == "concealed_kong" and not self.concealed_kong_visible:
                    continue
                for t in meld.tiles:
                    plane[0, t] += 1
                if kind == "chow":
                    for t in meld.tiles:
                        plane[1, t] += 1
                elif kind == "pong":
                    plane[2, meld.tile] = 1.0
                elif meld.is_kong:
                    plane[3, meld.tile] = 1.0
                else:
                    for t in meld.tiles:
                        plane[4, t] += 1

    def encode(self, game: Any, seat: int, out: np.ndarray) -> np.ndarray:
        """Write seat ``seat``'s observation into ``out`` (shape ``(NUM_CHANNELS, 34)``)."""
        if out.flags.c_contiguous and out.dtype == np.float32:
            encode_batch((self,), (game,), (seat,), out.reshape(1, NUM_CHANNELS, 34))
        else:
            out[...] = encode_batch((self,), (game,), (seat,), np.empty((1, NUM_CHANNELS, 34), np.float32))[0]
        return out

    def _private(
        self,
        game: Any,
        seat: int,
        out: np.ndarray,
        base: int,
        index: list[int],
        value: list[float],
        scalars: list[Any],
    ) -> int | None:
        """One observation's table-specific part: sync, the rotated public block, the sparse
        private entries (flat ``index``/``value`` pairs from ``base``) and the scalars.
        Returns the bao's kind if this seat has seen it (it counts as visible)."""
        self._sync(game)
        st = game.seats[seat]
        phase = game.phase
        deciding = game.actor == seat
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
        own_kongs = [meld.tile for meld in st.melds if meld.kind == "concealed_kong"] if st.melds else ()
        hidden = not self.concealed_kong_visible
        for t in own_kongs:
            index.append(base + _AT_KONGS + t)
            value.append(1.0)
            if hidden:  # one's own concealed kongs are no secret to oneself
                index.extend((base + _AT_MELDS + t, base + _AT_KONG_KINDS + t))
                value.extend((4.0, 1.0))
        split = SEAT_PLANES * (4 - seat)  # rows of seats seat..3, then seats 0..seat-1
        rows = self._public_rows
        out[_PUB : _PUB + split] = rows[SEAT_PLANES * seat :]
        if seat:
            out[_PUB + split : _CLAIM] = rows[: SEAT_PLANES * seat]
        window = game.window
        claim_window = window is not None and deciding and (phase == _CLAIM_PHASE or phase == _ROB)
        if claim_window:
            index.append(base + _AT_CLAIM + window.tile)
            value.append(1.0)
        if game.last_discard is not None:
            index.append(base + _AT_LAST + game.last_discard[1])
            value.append(1.0)
        scalars += self._scalars(game, seat, st, deciding, claim_window, bao_seen)
        return bao if bao_seen else None

    def _scalars(
        self, game: Any, seat: int, st: Any, deciding: bool, claim_window: bool, bao_seen: bool
    ) -> list[Any]:
        s: list[Any] = [0.0] * _NUM_SCALARS
        phase = game.phase
        seats = game.seats
        # another player's private decision (a claim, the bao, 分张) shows as "turn" (R13)
        s[int(phase) if deciding or phase == _OVER else _TURN] = 1.0
        if claim_window:
            window = game.window
            s[7 + (window.source - seat) % 4] = 1.0
            s[11 + _WINDOW[window.kind]] = 1.0
        s[14 + (game.dealer - seat) % 4] = 1.0
        hidden_kongs = 0
        scores = game.scores
        silver = game.silver
        for r, o in _RELATIVE[seat]:
            other = seats[o]
            s[18 + r] = other.ready
            s[22 + r] = other.xianggong
            s[26 + r] = sum(other.counts) / 14.0
            score = scores[o]  # the next two are max(score, 0.0) / 64 and max(-score, 0.0) / 64
            s[38 + r] = 0.0 if score < 0.0 else score / 64.0
            s[83 + r] = 0.0 if score > 0.0 else -score / 64.0
            s[44 + r] = other.first_turn
            specials = other.specials
            if specials:
                for k, kind in enumerate(_SPECIAL_ORDER):
                    s[53 + 4 * r + k] = kind in specials
            if other.melds:
                concealed_kongs = 0
                for m in other.melds:
                    if m.kind == "concealed_kong":
                        concealed_kongs += 1
                if concealed_kongs:
                    s[69 + r] = concealed_kongs / 4.0
                    if r:
                        hidden_kongs += concealed_kongs
            money = silver[o]
            s[73 + r] = 0.0 if money < 0.0 else money / 3500.0
            s[77 + r] = other.kongs_made / 4.0
        wall = game.wall
        s[30] = wall.remaining / 100.0
        s[31] = game.hand_index / 16.0
        s[32] = bao_seen
        s[33] = game.bao is not None
        s[42] = game.bao_rolls / 6.0
        rolls = game.dice.rolls
        s[43] = rolls[-1] / 12.0 if rolls else 0.0
        if deciding and phase == _TURN:
            s[48 + int(game.context)] = 1.0
        s[52] = st.duibao_passed
        s[81] = wall.tail_draws / 8.0
        s[82] = 0.0 if self.concealed_kong_visible else hidden_kongs / 4.0
        return s


def encode_batch(
    encoders: Sequence[ObservationEncoder], games: Sequence[Any], seats: Sequence[int], out: np.ndarray
) -> np.ndarray:
    """Write seat ``seats[i]``'s observation of ``games[i]`` into ``out[i]`` for every ``i``.

    ``out`` is a C-contiguous ``float32`` array of shape ``(n, NUM_CHANNELS, 34)``;
    ``encoders[i]`` is game ``i``'s own encoder. Equal to ``encoders[i].encode(games[i],
    seats[i], out[i])`` for each ``i``, with the numpy work done once for the whole batch.
    """
    n = len(games)
    if out.shape != (n, NUM_CHANNELS, 34) or out.dtype != np.float32 or not out.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous float32 array of shape ({n}, {NUM_CHANNELS}, 34)")
    index: list[int] = []
    value: list[float] = []
    scalars: list[Any] = []
    counts = []
    baos = []
    for i in range(n):
        game, seat = games[i], seats[i]
        counts.append(bytes(game.seats[seat].counts))
        bao = encoders[i]._private(game, seat, out[i], i * _SIZE, index, value, scalars)
        if bao is not None:
            baos.append((i, bao))
    held = np.frombuffer(b"".join(counts), dtype=np.uint8).reshape(n, 1, 34)
    np.greater_equal(held, _THRESHOLDS, out=out[:, 0:4])
    out[:, 4:_PUB] = 0.0
    out[:, _CLAIM:_SCALAR] = 0.0
    out.reshape(-1)[index] = value
    # visible: own hand, every seat's meld tiles (plane 0) and river (plane 5), the seen bao
    public = out[:, _PUB:_CLAIM].reshape(n, 4, SEAT_PLANES, 34)
    visible = out[:, _VISIBLE]
    np.add.reduce(public[:, :, 0:6:5], axis=(1, 2), out=visible)
    visible += held[:, 0]
    for i, bao in baos:
        visible[i, bao] += 1
    out[:, _SCALAR:] = np.array(scalars, dtype=np.float32).reshape(n, 3, 34)
    return out


STATE_SIZE = 4 * 34 + 136 + 34 + 4 + 4 + 4


def encode_state(game: Any) -> np.ndarray:
    """The privileged global state (API.md ``state()``): every concealed hand, the wall in draw
    order (tile index + 1, 0 = empty), the bao, the dealer, scores and ready flags."""
    out = np.zeros(STATE_SIZE, dtype=np.float32)
    for seat, st in enumerate(game.seats):
        out[34 * seat : 34 * seat + 34] = st.counts
    live = game.wall.live_tiles()
    out[136 : 136 + len(live)] = np.asarray(live, dtype=np.float32) + 1.0
    if game.bao is not None:
        out[272 + game.bao] = 1.0
    out[306 + game.dealer] = 1.0
    out[310:314] = np.asarray(game.scores, dtype=np.float32) / 64.0
    out[314:318] = [st.ready for st in game.seats]
    return out
