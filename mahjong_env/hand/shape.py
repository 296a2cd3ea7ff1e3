"""Shanten of a hand and of every hand one tile away from it (向听数, RULES.md R8, R9).

This module owns the incremental questions that players (rule-based agents and the analysis
features of `mahjong_env.features`) ask many times per decision: "what is the shanten after
discarding T", "which draws lower the shanten". It combines the per-group option tables of
:data:`.tables.SHANTEN_OPTIONS` as :func:`.analysis.shanten` does, but keeps the combination
of the other three groups, so a one-tile change costs one table lookup and one combination.
Nothing here knows about players or rule variants.

A group's options are kept as a *profile*: 10 bytes, byte ``5 * pair + sets`` holding one more
than the most partial sets (搭子) any cut of the group reaches with that many sets and pairs (0:
no cut has them). Shanten ``8 - 2 * sets - min(partials, 4 - sets) - pair`` never gets worse
with more partials, so the most partials per (sets, pair) decide it, exactly as the full option
sets did; a hand of 14 tiles holds at most four sets, so ``sets`` runs 0..4. The profile is a
fixed-size byte string so that the compiled core (``shape.pxd``) combines two of them in C.
"""

from __future__ import annotations

from collections.abc import Sequence

from .analysis import _checked_key, melds_count
from .tables import GROUP_SLICES, SHANTEN_OPTIONS

__all__ = ["Shape", "NEAR", "useful_kinds"]

_GROUP_OF = tuple(min(t // 9, 3) for t in range(34))
NEAR: tuple[tuple[int, ...], ...] = tuple(
    (t,) if t >= 27 else tuple(u for u in range(t - 2, t + 3) if u // 9 == t // 9 and 0 <= u < 27) for t in range(34)
)
"""Kinds that can combine with a held kind: itself and suited neighbours within two ranks."""
_NEAR_MASK = tuple(sum(1 << u for u in near) for near in NEAR)
"""`NEAR` as bit masks (the relation is symmetric: ``u in NEAR[t]`` exactly when ``t in NEAR[u]``)."""

_SIZE = 10
"""Bytes of a profile: 5 set counts (0..4) times 2 pair counts (0, 1)."""


def _profile(options: tuple[tuple[int, int, int], ...]) -> bytes:
    """The profile of a group's (sets, partials, pair) options."""
    out = bytearray(_SIZE)
    for sets, partials, pair in options:
        i = 5 * pair + sets
        if partials + 1 > out[i]:
            out[i] = partials + 1
    return bytes(out)


_PROFILES: tuple[dict[int, bytes], ...] = ({}, {}, {}, {})
"""Each group's profiles by the group's base-5 code ``sum(counts[r] * 5**r)``, filled from
`SHANTEN_OPTIONS` on first use (`_group_profile`). A code is one integer, and a one-tile change
moves it by a power of 5, so `Shape.changed` looks a neighbour up without building its count
bytes."""


def _group_profile(group: int, code: int) -> bytes:
    """The profile of group ``group`` (0..3) holding the counts of base-5 ``code``."""
    table = _PROFILES[group]
    found = table.get(code)
    if found is not None:
        return found
    start, stop = GROUP_SLICES[group]
    digits = bytearray(stop - start)
    rest = code
    for r in range(stop - start):
        rest, digits[r] = divmod(rest, 5)
    if rest or code < 0:
        raise ValueError(f"a group's base-5 code is 0..5**{stop - start}, got {code}")
    found = table[code] = _profile(SHANTEN_OPTIONS[group][bytes(digits)])
    return found


_POWER = tuple(5 ** (t - GROUP_SLICES[_GROUP_OF[t]][0]) for t in range(34))
"""The step of a group's code for one more tile of kind ``t``."""


_JOINED: dict[bytes, bytes] = {}
"""`_join` by ``a + b``: hands take few group profiles (a game of 48,000 decisions joins about
3,700 distinct pairs, 1.8 million times), so a join is nearly always a lookup."""
_JOINED_SIZE = 100_000


def _join(a: bytes, b: bytes) -> bytes:
    """The profile of two parts of a hand together: sets and partials add, one pair at most."""
    pair = a + b
    found = _JOINED.get(pair)
    if found is not None:
        return found
    out = bytearray(_SIZE)
    pa, pb = a, b
    for p in range(2):
        for m in range(5):
            x = pa[5 * p + m]
            if x:
                for q in range(2 - p):
                    for n in range(5 - m):
                        y = pb[5 * q + n]
                        k = 5 * (p + q) + m + n
                        if y and x + y - 1 > out[k]:
                            out[k] = x + y - 1
    if len(_JOINED) >= _JOINED_SIZE:
        _JOINED.clear()
    found = _JOINED[pair] = bytes(out)
    return found


def _best(a: bytes, b: bytes) -> int:
    """The standard shanten of two parts that make a whole hand."""
    best = 8
    pa, pb = a, b
    for p in range(2):
        for m in range(5):
            x = pa[5 * p + m]
            if x:
                for q in range(2 - p):
                    for n in range(5 - m):
                        y = pb[5 * q + n]
                        if y:
                            sets = m + n
                            partials = x + y - 2
                            if partials > 4 - sets:
                                partials = 4 - sets
                            value = 8 - 2 * sets - partials - p - q
                            if value < best:
                                best = value
    return best


def _scan(key: bytes) -> tuple[list[int], int, int]:
    """The four groups' codes, the number of pairs (four of a kind counting two) and the number
    of tiles of a hand; ValueError for a count above 4."""
    codes = [0, 0, 0, 0]
    code = pairs = tiles = 0
    power = 1
    pk = key
    for t in range(34):
        n = pk[t]
        if n > 4:
            raise ValueError(f"a hand's counts are 0..4, got {n} of kind {t}")
        code += n * power
        power *= 5
        pairs += n >> 1
        tiles += n
        if t == 8 or t == 17 or t == 26 or t == 33:
            codes[t // 9] = code
            code = 0
            power = 1
    return codes, pairs, tiles


def _rests(parts: list[bytes], melds: int) -> list[bytes]:
    """For each group g, the profile of the exposed melds and the three groups other than g."""
    start = bytearray(_SIZE)
    start[melds] = 1  # the exposed melds: sets with no partials and no pair
    before = [bytes(start)]  # before[g]: the melds and the groups before g
    for g in range(3):
        before.append(_join(before[g], parts[g]))
    after = parts[3]  # the groups after g, from the last one down
    rest = [b"", b"", b"", before[3]]
    for g in (2, 1, 0):
        rest[g] = _join(before[g], after)
        after = _join(parts[g], after)
    return rest


class Shape:
    """Shanten of a hand (``counts``: concealed tiles, ``melds``: exposed melds) and of the
    hands one tile away; with ``seven_pairs`` the seven-pairs shanten counts too (closed hands
    only, four of a kind counting as two pairs)."""

    def __init__(self, counts: Sequence[int], melds: int, seven_pairs: bool) -> None:
        self._build(_checked_key(counts), melds_count(melds), seven_pairs)

    def _build(self, key: bytes, melds: int, seven_pairs: bool) -> None:
        """The shape of a checked ``key`` (`_checked_key`) beside ``melds`` (0..4)."""
        codes, pairs, tiles = _scan(key)
        if tiles + 3 * melds > 14:
            raise ValueError(
                f"a hand holds 14 tiles at most, each exposed meld counted as 3; got {tiles} concealed "
                f"tiles and {melds} meld(s)"
            )
        parts = [_group_profile(g, codes[g]) for g in range(4)]
        rest = _rests(parts, melds)
        self.key = key
        self.codes = codes
        self.rest = rest
        self.seven_pairs = seven_pairs and melds == 0
        self.pairs = pairs
        self.standard = _best(rest[0], parts[0])
        self.shanten = self._total(self.standard, pairs)

    def _total(self, standard: int, pairs: int) -> int:
        return min(standard, 6 - pairs) if self.seven_pairs else standard

    def changed(self, tile: int, delta: int) -> int:
        """Shanten of the hand with ``delta`` (±1) copies of ``tile`` more."""
        g = _GROUP_OF[tile]
        code = self.codes[g] + delta * _POWER[tile]
        return self._after(_best(self.rest[g], _group_profile(g, code)), tile, delta)

    def _after(self, standard: int, tile: int, delta: int) -> int:
        """Shanten of the hand with ``delta`` copies of ``tile`` more, whose standard shanten
        is ``standard`` (the seven-pairs shanten counts the pairs that change)."""
        n = self.key[tile]
        return self._total(standard, self.pairs - (n >> 1) + ((n + delta) >> 1))

    def seven_pairs_changed(self, tile: int, delta: int) -> int:
        """Seven-pairs shanten (``6 - pairs``) after a ±1 change of ``tile``; 99 if the hand has melds."""
        if not self.seven_pairs:
            return 99
        n = self.key[tile]
        return 6 - (self.pairs - (n >> 1) + ((n + delta) >> 1))


_DRAWS: tuple[dict[tuple[bytes, int], bytes], ...] = ({}, {}, {}, {})
_DRAWS_SIZE = 50_000  # entries per group
_FOUR_HELD = 255


def _draws(group: int, rest: bytes, code: int) -> bytes:
    """The standard shanten plus one of a hand after one more tile of each rank of ``group``
    (byte ``r``: rank ``r + 1``; `_FOUR_HELD` where four are held), the group holding the
    counts of base-5 ``code`` and the other groups and melds having the profile ``rest``.
    Memoised by group: the same groups recur beside the same rests from hand to hand (about
    four lookups in five are found in a game of the heuristic's)."""
    table = _DRAWS[group]
    found = table.get((rest, code))
    if found is not None:
        return found
    start, stop = GROUP_SLICES[group]
    out = bytearray(stop - start)
    for r in range(stop - start):
        power = _POWER[start + r]
        if code // power % 5 < 4:
            out[r] = _best(rest, _group_profile(group, code + power)) + 1
        else:
            out[r] = _FOUR_HELD
    if len(table) >= _DRAWS_SIZE:
        table.clear()
    found = table[(rest, code)] = bytes(out)
    return found


_USEFUL_CACHE: dict[tuple[bytes, int, bool], tuple[int, ...]] = {}
_USEFUL_CACHE_SIZE = 200_000


def useful_kinds(counts: Sequence[int], melds: int, seven_pairs: bool) -> tuple[int, ...]:
    """Kinds whose draw lowers the shanten of a 3n+1 hand (有效牌), ascending; memoised
    (hands recur from turn to turn). A kind held four times is never useful."""
    key = _checked_key(counts)
    melds = melds_count(melds)
    cache_key = (key, melds, bool(seven_pairs))
    found = _USEFUL_CACHE.get(cache_key)
    if found is not None:
        return found
    shape = Shape.__new__(Shape)  # the key is checked: build without checking it again
    shape._build(key, melds, seven_pairs)
    base = shape.shanten
    near = 0  # kinds near a held kind: a kind far from every held tile cannot help
    for t in range(34):
        if key[t]:
            near |= _NEAR_MASK[t]
    useful = []
    for g in range(4):
        start, stop = GROUP_SLICES[g]
        draws = None  # the group's `_draws`, looked up once a kind of it may help
        for u in range(start, stop):
            if near >> u & 1 and key[u] < 4:
                if draws is None:
                    draws = _draws(g, shape.rest[g], shape.codes[g])
                if shape._after(draws[u - start] - 1, u, 1) < base:  # shape.changed(u, 1), memoised
                    useful.append(u)
    found = tuple(useful)
    if len(_USEFUL_CACHE) >= _USEFUL_CACHE_SIZE:
        _USEFUL_CACHE.clear()
    _USEFUL_CACHE[cache_key] = found
    return found
