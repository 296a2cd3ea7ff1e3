"""Shanten of a hand and of every hand one tile away from it (向听数, RULES.md R8, R9).

This module owns the incremental questions that players (rule-based agents and the analysis
features of `mahjong_env.features`) ask many times per decision: "what is the shanten after
discarding T", "which draws lower the shanten". It combines the per-group option tables of
:data:`.tables.SHANTEN_OPTIONS` as :func:`.analysis.shanten` does, but keeps the combination
of the other three groups, so a one-tile change costs one table lookup and one combination.
Nothing here knows about players or rule variants.
"""

from __future__ import annotations

from collections.abc import Sequence

from .tables import GROUP_SLICES, SHANTEN_OPTIONS

__all__ = ["Shape", "NEAR", "useful_kinds"]

_GROUP_OF = tuple(min(t // 9, 3) for t in range(34))
NEAR: tuple[tuple[int, ...], ...] = tuple(
    (t,) if t >= 27 else tuple(u for u in range(t - 2, t + 3) if u // 9 == t // 9 and 0 <= u < 27) for t in range(34)
)
"""Kinds that can combine with a held kind: itself and suited neighbours within two ranks."""

_State = tuple[int, int, int]


def _combine(states: set[_State], options: tuple[_State, ...]) -> set[_State]:
    return {(m + m2, min(d + d2, 4 - m - m2), p + p2) for m, d, p in states for m2, d2, p2 in options if p + p2 <= 1}


def _best(states: set[_State], options: tuple[_State, ...]) -> int:
    best = 8
    for m, d, p in states:
        for m2, d2, p2 in options:
            if p + p2 <= 1:
                sets = m + m2
                value = 8 - 2 * sets - min(d + d2, 4 - sets) - p - p2
                if value < best:
                    best = value
    return best


class Shape:
    """Shanten of a hand (``counts``: concealed tiles, ``melds``: exposed melds) and of the
    hands one tile away; with ``seven_pairs`` the seven-pairs shanten counts too (closed hands
    only, four of a kind counting as two pairs)."""

    __slots__ = ("key", "pairs", "rest", "seven_pairs", "shanten", "standard")

    def __init__(self, counts: Sequence[int], melds: int, seven_pairs: bool) -> None:
        key = bytes(counts)
        options = [SHANTEN_OPTIONS[g][key[a:b]] for g, (a, b) in enumerate(GROUP_SLICES)]
        self.key = key
        self.rest: list[set[_State]] = []
        for g in range(4):
            states = {(melds, 0, 0)}
            for h in range(4):
                if h != g:
                    states = _combine(states, options[h])
            self.rest.append(states)
        self.seven_pairs = seven_pairs and melds == 0
        self.pairs = sum(n >> 1 for n in key)
        self.standard = _best(self.rest[0], options[0])
        self.shanten = self._total(self.standard, self.pairs)

    def _total(self, standard: int, pairs: int) -> int:
        return min(standard, 6 - pairs) if self.seven_pairs else standard

    def changed(self, tile: int, delta: int) -> int:
        """Shanten of the hand with ``delta`` (±1) copies of ``tile`` more."""
        g = _GROUP_OF[tile]
        start, stop = GROUP_SLICES[g]
        key = self.key
        n = key[tile]
        group = bytearray(key[start:stop])
        group[tile - start] = n + delta
        standard = _best(self.rest[g], SHANTEN_OPTIONS[g][bytes(group)])
        return self._total(standard, self.pairs - (n >> 1) + ((n + delta) >> 1))

    def seven_pairs_changed(self, tile: int, delta: int) -> int:
        """Seven-pairs shanten (``6 - pairs``) after a ±1 change of ``tile``; 99 if the hand has melds."""
        if not self.seven_pairs:
            return 99
        n = self.key[tile]
        return 6 - (self.pairs - (n >> 1) + ((n + delta) >> 1))


_USEFUL_CACHE: dict[tuple[bytes, int, bool], tuple[int, ...]] = {}
_USEFUL_CACHE_SIZE = 200_000


def useful_kinds(counts: Sequence[int], melds: int, seven_pairs: bool) -> tuple[int, ...]:
    """Kinds whose draw lowers the shanten of a 3n+1 hand (有效牌), ascending; memoised
    (hands recur from turn to turn). A kind held four times is never useful."""
    cache_key = (bytes(counts), melds, seven_pairs)
    found = _USEFUL_CACHE.get(cache_key)
    if found is not None:
        return found
    shape = Shape(counts, melds, seven_pairs)
    near: set[int] = set()
    for t in range(34):
        if counts[t]:
            near.update(NEAR[t])
    base = shape.shanten
    found = tuple(u for u in sorted(near) if counts[u] < 4 and shape.changed(u, 1) < base)
    if len(_USEFUL_CACHE) >= _USEFUL_CACHE_SIZE:
        _USEFUL_CACHE.clear()
    _USEFUL_CACHE[cache_key] = found
    return found
