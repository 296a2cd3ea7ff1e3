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

from typing import Any

import numpy as np

from mahjong_env.engine.state import Phase

__all__ = ["NUM_CHANNELS", "CHANNELS", "SCALARS", "ObservationEncoder", "RIVER_SLOTS", "STATE_SIZE", "encode_state"]

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

_THERMO = np.array([[c >= k for k in (1, 2, 3, 4)] for c in range(5)], dtype=np.float32)
_ROTATION = [np.array([(o + r) % 4 for r in range(4)]) for o in range(4)]
_SPECIAL_ORDER = ("special_winds", "special_dragons", "special_ones", "special_nines")
_WINDOW = {"discard": 0, "added_kong": 1, "special_add": 2}


class ObservationEncoder:
    """Fills observations for one `Game`; keep one encoder per table."""

    def __init__(self, concealed_kong_visible: bool) -> None:
        self.concealed_kong_visible = concealed_kong_visible
        self.public = np.zeros((4, SEAT_PLANES, 34), dtype=np.float32)
        self._hist_done = 0
        self._last_claimed = 0
        self._meld_sig = [(-1, -1)] * 4
        self._discards = [0, 0, 0, 0]
        self._hand_key: Any = None

    def _sync(self, game: Any) -> None:
        public = self.public
        if self._hand_key is not game.seats:
            public.fill(0.0)
            self._hist_done = 0
            self._last_claimed = 0
            self._meld_sig = [(-1, -1)] * 4
            self._discards = [0, 0, 0, 0]
            self._hand_key = game.seats
        history = game.history
        done = self._hist_done
        if done and history[done - 1][2] != self._last_claimed:  # the last discard was claimed
            seat, tile = history[done - 1][0], history[done - 1][1]
            public[seat, 5, tile] -= 1
            public[seat, 6, tile] += 1
        for i in range(done, len(history)):
            seat, tile, claimed, _ = history[i]
            plane = public[seat]
            plane[6 if claimed else 5, tile] += 1
            n = self._discards[seat]
            self._discards[seat] = n + 1
            if n < RIVER_SLOTS:
                plane[7 + n, tile] = 1.0
        self._hist_done = len(history)
        self._last_claimed = history[-1][2] if history else 0
        for seat, st in enumerate(game.seats):
            sig = (len(st.melds), sum(len(m.tiles) for m in st.melds))
            if sig == self._meld_sig[seat]:
                continue
            self._meld_sig[seat] = sig
            plane = public[seat]
            plane[0:5] = 0.0
            for meld in st.melds:
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
        self._sync(game)
        st = game.seats[seat]
        out[0:4] = _THERMO[st.counts].T
        out[4:_PUB] = 0.0
        if st.drawn is not None and game.actor == seat and game.phase == Phase.TURN:
            out[4, st.drawn] = 1.0
        for t in range(34):
            if st.passed_wins >> t & 1:
                out[5, t] = 1.0
            if st.ready_waits >> t & 1:
                out[6, t] = 1.0
        bao_seen = st.bao_seen and game.bao is not None
        if bao_seen:
            out[7, game.bao] = 1.0
        for meld in st.melds:
            if meld.kind == "concealed_kong":
                out[8, meld.tile] = 1.0
        rot = _ROTATION[seat]
        out[_PUB:_CLAIM] = self.public[rot].reshape(4 * SEAT_PLANES, 34)
        if not self.concealed_kong_visible:
            for meld in st.melds:  # one's own concealed kongs are no secret to oneself
                if meld.kind == "concealed_kong":
                    out[_PUB, meld.tile] += 4
                    out[_PUB + 3, meld.tile] = 1.0
        out[_CLAIM:] = 0.0
        window = game.window
        if window is not None and game.phase in (Phase.CLAIM, Phase.ROB) and game.actor == seat:
            out[_CLAIM, window.tile] = 1.0
        if game.last_discard is not None:
            out[_LAST, game.last_discard[1]] = 1.0
        visible = out[_VISIBLE]
        np.add(out[0], out[1], out=visible)
        visible += out[2]
        visible += out[3]
        for r in range(4):
            base = _PUB + SEAT_PLANES * r
            visible += out[base]
            visible += out[base + 5]
        if bao_seen:
            visible[game.bao] += 1
        self._scalars(game, seat, st, bao_seen, out[_SCALAR:].reshape(-1))
        return out

    def _scalars(self, game: Any, seat: int, st: Any, bao_seen: bool, s: np.ndarray) -> None:
        seats = game.seats
        deciding = game.actor == seat
        # another player's private decision (a claim, the bao, 分张) shows as "turn" (R13)
        s[int(game.phase) if deciding or game.phase == Phase.OVER else int(Phase.TURN)] = 1.0
        window = game.window
        if window is not None and game.phase in (Phase.CLAIM, Phase.ROB) and deciding:
            s[7 + (window.source - seat) % 4] = 1.0
            s[11 + _WINDOW[window.kind]] = 1.0
        s[14 + (game.dealer - seat) % 4] = 1.0
        hidden_kongs = 0
        for r in range(4):
            other = seats[(seat + r) % 4]
            s[18 + r] = other.ready
            s[22 + r] = other.xianggong
            s[26 + r] = sum(other.counts) / 14.0
            score = game.scores[(seat + r) % 4]
            s[38 + r] = max(score, 0.0) / 64.0
            s[83 + r] = max(-score, 0.0) / 64.0
            s[44 + r] = other.first_turn
            for k, kind in enumerate(_SPECIAL_ORDER):
                s[53 + 4 * r + k] = kind in other.specials
            concealed_kongs = sum(1 for m in other.melds if m.kind == "concealed_kong")
            s[69 + r] = concealed_kongs / 4.0
            if r:
                hidden_kongs += concealed_kongs
            s[73 + r] = max(game.silver[(seat + r) % 4], 0.0) / 3500.0
            s[77 + r] = other.kongs_made / 4.0
        s[30] = game.wall.remaining / 100.0
        s[31] = game.hand_index / 16.0
        s[32] = bao_seen
        s[33] = game.bao is not None
        s[42] = game.bao_rolls / 6.0
        rolls = game.dice.rolls
        s[43] = rolls[-1] / 12.0 if rolls else 0.0
        if game.actor == seat and game.phase == Phase.TURN:
            s[48 + int(game.context)] = 1.0
        s[52] = st.duibao_passed
        s[81] = game.wall.tail_draws / 8.0
        s[82] = 0.0 if self.concealed_kong_visible else hidden_kongs / 4.0


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
