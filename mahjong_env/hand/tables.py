"""Per-suit lookup tables behind hand analysis, filled lazily (RULES.md R8, R9).

This module owns everything computed for one suit at a time. A hand's 34 counts split into four
groups: characters ``m`` (kinds 0–8), dots ``p`` (9–17), bamboo ``s`` (18–26) and honors ``z``
(27–33); honors form no sequences (顺子). A group is keyed by its counts written as raw bytes,
``bytes(counts)[start:stop]``: the digits of the group's base-5 code ``sum(c[r] * 5**r)``, one
byte each, which is the cheapest hashable form a query can cut out of a hand.

Nothing is built at import time. Each table is a dict that computes a missing key on its first
query and keeps it; equal values are shared, so a filled table costs little more than its keys.

* :data:`READY` (one table per group, masks already shifted to the group's 34-kind bits):
  ``(status, wa, wb, drop_sets, drop_pair, drop_wa, drop_wb)`` where ``status`` is
  :data:`SETS` (sets only: sequences and triplets, 面子), :data:`SETS_AND_PAIR` (sets plus
  exactly one pair, 将) or :data:`OTHER`; ``wa`` / ``wb`` are the kinds whose addition makes the
  group SETS / SETS_AND_PAIR (only kinds whose count stays at most 4); ``drop_sets`` /
  ``drop_pair`` are the held kinds whose removal makes it SETS / SETS_AND_PAIR, and ``drop_wa``
  / ``drop_wb`` the held kinds whose removal leaves a non-empty ``wa`` / ``wb`` (for ready
  discards, 报听).
* :data:`DECOMPOSITIONS`: every reading of the group as sets plus at most one pair.
* :data:`SHANTEN_OPTIONS`: the Pareto-optimal (sets, partial sets, pair) counts of the group.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

__all__ = [
    "DECOMPOSITIONS",
    "GROUP_SLICES",
    "OTHER",
    "READY",
    "SETS",
    "SETS_AND_PAIR",
    "SHANTEN_OPTIONS",
    "RawDecomposition",
    "ShantenOption",
]

SETS = 0
"""Group status: the group splits into sets only (an empty group included)."""
SETS_AND_PAIR = 1
"""Group status: the group splits into sets plus exactly one pair."""
OTHER = 4
"""Group status: neither. Chosen so that four statuses sum to 1 exactly for a complete hand."""

GROUP_SLICES: tuple[tuple[int, int], ...] = ((0, 9), (9, 18), (18, 27), (27, 34))
"""Start and stop kind of each group: m, p, s, z."""

_LETTERS = "mpsz"

RawDecomposition = tuple[int, tuple[int, ...], tuple[int, ...]]
"""(pair kind or -1, sequence starts, triplet kinds), each tuple sorted."""

ShantenOption = tuple[int, int, int]
"""(sets, partial sets, pair) found in one group; pair is 0 or 1."""

_T = TypeVar("_T")
_SHARED: dict[object, object] = {}


def _shared(value: _T) -> _T:
    """One object per distinct value, so that filled tables hold few objects."""
    return cast(_T, _SHARED.setdefault(value, value))


def _first(c: bytes) -> int:
    """Position of the lowest held kind, -1 for an empty group."""
    i = len(c) - len(c.lstrip(b"\0"))
    return i if i < len(c) else -1


def _minus(c: bytes, *kinds: int) -> bytes:
    out = bytearray(c)
    for k in kinds:
        out[k] -= 1
    return bytes(out)


def _has_sequence(c: bytes, i: int) -> bool:
    """Whether ``c`` holds the sequence starting at position ``i`` (never for honors)."""
    return len(c) == 9 and i <= 6 and c[i + 1] > 0 and c[i + 2] > 0


_STATUS: dict[bytes, int] = {}


def _status(c: bytes, rest: int) -> int:
    """SETS, SETS_AND_PAIR or OTHER, by trying the lowest held kind in every set it can start.

    ``rest`` is ``sum(c) % 3``, which the callers know: only a 3n group can be SETS and only a
    3n+2 group SETS_AND_PAIR."""
    if rest == 1:
        return OTHER
    known = _STATUS.get(c)
    if known is not None:
        return known
    i = _first(c)
    if i < 0:
        status = SETS
    else:  # the lowest held kind i is the pair, a triplet or the start of a sequence
        want = SETS if rest == 0 else SETS_AND_PAIR
        n = c[i]
        less = bytearray(c)  # c less that pair or set
        ok = False
        if rest == 2 and n >= 2:
            less[i] = n - 2
            ok = _status(bytes(less), 0) == SETS
        if not ok and n >= 3:
            less[i] = n - 3
            ok = _status(bytes(less), rest) == want
        if not ok and _has_sequence(c, i):
            less[i] = n - 1
            less[i + 1] -= 1
            less[i + 2] -= 1
            ok = _status(bytes(less), rest) == want
        status = want if ok else OTHER
    _STATUS[c] = status
    return status


_ADD_MASKS: dict[bytes, tuple[int, int]] = {}
_NO_MASKS = (0, 0)


def _add_masks(c: bytes, rest: int) -> tuple[int, int]:
    """(wa, wb): kinds whose addition makes ``c`` SETS / SETS_AND_PAIR; ``rest`` is ``sum(c)
    % 3`` (memoised: the groups one tile smaller than a `READY` key recur across keys)."""
    if not rest:  # a 3n group plus one tile is 3n+1: neither status, no addition counts
        return _NO_MASKS
    known = _ADD_MASKS.get(c)
    if known is not None:
        return known
    # 3n+1 plus a tile can only be SETS_AND_PAIR (wb), 3n+2 plus a tile only SETS (wa)
    target, bigger = (SETS_AND_PAIR, 2) if rest == 1 else (SETS, 0)
    found = 0
    b = bytearray(c)  # one buffer for every addition
    for r, n in enumerate(c):
        if n < 4:
            b[r] = n + 1
            if _status(bytes(b), bigger) == target:
                found |= 1 << r
            b[r] = n
    masks = _ADD_MASKS[c] = _shared((0, found) if rest == 1 else (found, 0))
    return masks


def _ready_entry(c: bytes) -> tuple[int, ...]:
    """The READY tuple of one group in local positions (bit ``r`` is the group's kind ``r``)."""
    rest = sum(c) % 3
    smaller_rest = (rest + 2) % 3
    wa, wb = _add_masks(c, rest)
    drop_sets = drop_pair = drop_wa = drop_wb = 0
    b = bytearray(c)  # one buffer for every removal
    for r, n in enumerate(c):
        if n:
            b[r] = n - 1
            smaller = bytes(b)
            b[r] = n
            status = _status(smaller, smaller_rest)
            bit = 1 << r
            if status == SETS:
                drop_sets |= bit
            elif status == SETS_AND_PAIR:
                drop_pair |= bit
            smaller_wa, smaller_wb = _add_masks(smaller, smaller_rest)
            if smaller_wa:
                drop_wa |= bit
            if smaller_wb:
                drop_wb |= bit
    return (_status(c, rest), wa, wb, drop_sets, drop_pair, drop_wa, drop_wb)


_DECOMPOSITION_MEMO: dict[bytes, tuple[RawDecomposition, ...]] = {}


def _decompose(c: bytes) -> tuple[RawDecomposition, ...]:
    """Every distinct reading of ``c`` as sets plus at most one pair, local positions."""
    known = _DECOMPOSITION_MEMO.get(c)
    if known is not None:
        return known
    i = _first(c)
    rest = sum(c) % 3
    found: set[RawDecomposition] = set()
    if i < 0:
        found.add((-1, (), ()))
    elif rest != 1:
        if rest == 2 and c[i] >= 2:
            for _, seqs, trips in _decompose(_minus(c, i, i)):
                found.add((i, seqs, trips))
        if c[i] >= 3:
            for pair, seqs, trips in _decompose(_minus(c, i, i, i)):
                found.add((pair, seqs, (i, *trips)))
        if _has_sequence(c, i):
            for pair, seqs, trips in _decompose(_minus(c, i, i + 1, i + 2)):
                found.add((pair, (i, *seqs), trips))
    result = tuple(sorted(found))
    _DECOMPOSITION_MEMO[c] = result
    return result


def _pareto(options: set[ShantenOption]) -> tuple[ShantenOption, ...]:
    """Drop options beaten in both sets and partials by another option with the same pair."""
    kept = [
        (m, d, p)
        for (m, d, p) in options
        if not any(
            p2 == p and m2 >= m and d2 >= d and (m2, d2) != (m, d) for (m2, d2, p2) in options
        )
    ]
    return tuple(sorted(kept, reverse=True))


def _shanten_options(
    c: bytes, table: dict[bytes, tuple[ShantenOption, ...]]
) -> tuple[ShantenOption, ...]:
    """Pareto-optimal (sets, partials, pair) counts over every way to cut ``c`` into blocks.

    Blocks are sets (sequence or triplet), partial sets (搭子: two of a kind, two adjacent,
    or two with a gap), at most one pair kept as the head, and isolated tiles. ``table`` is the
    memo for the smaller groups.
    """
    i = _first(c)
    if i < 0:
        return ((0, 0, 0),)
    suited = len(c) == 9
    cuts: list[tuple[bytes, ShantenOption]] = [(_minus(c, i), (0, 0, 0))]
    if c[i] >= 3:
        cuts.append((_minus(c, i, i, i), (1, 0, 0)))
    if _has_sequence(c, i):
        cuts.append((_minus(c, i, i + 1, i + 2), (1, 0, 0)))
    if c[i] >= 2:
        cuts.append((_minus(c, i, i), (0, 0, 1)))
        cuts.append((_minus(c, i, i), (0, 1, 0)))
    if suited and i <= 7 and c[i + 1]:
        cuts.append((_minus(c, i, i + 1), (0, 1, 0)))
    if suited and i <= 6 and c[i + 2]:
        cuts.append((_minus(c, i, i + 2), (0, 1, 0)))
    options: set[ShantenOption] = set()
    for rest, (m, d, p) in cuts:
        for m2, d2, p2 in table[rest]:
            if p + p2 <= 1:
                options.add((m + m2, d + d2, p + p2))
    return _pareto(options)


class _LazyTable(dict[bytes, Any]):
    """A dict that computes a missing key's value with ``build(key)`` and keeps it."""

    def __init__(self, build: Callable[[bytes], object]) -> None:
        super().__init__()
        self._build = build

    def __missing__(self, key: bytes) -> Any:
        value = self._build(key)
        self[key] = value
        return value


def _check_key(key: bytes, group: int) -> None:
    start, stop = GROUP_SLICES[group]
    if len(key) != stop - start or max(key, default=0) > 4:
        raise ValueError(
            f"hand counts must be a sequence of 34 integers 0..4 (concealed tiles only); "
            f"the {_LETTERS[group]} part reads {list(key)} instead of {stop - start} counts 0..4"
        )


def _ready_builder(group: int) -> Callable[[bytes], tuple[int, ...]]:
    shift = GROUP_SLICES[group][0]

    def build(key: bytes) -> tuple[int, ...]:
        _check_key(key, group)
        if group in (1, 2):  # dots and bamboo shift the characters' entry
            status, *masks = READY[0][key]
        else:
            status, *masks = _ready_entry(key)
        return _shared((status, *(mask << shift for mask in masks)))

    return build


def _decomposition_builder(group: int) -> Callable[[bytes], tuple[RawDecomposition, ...]]:
    shift = GROUP_SLICES[group][0]

    def build(key: bytes) -> tuple[RawDecomposition, ...]:
        _check_key(key, group)
        return tuple(
            (
                pair + shift if pair >= 0 else -1,
                tuple(s + shift for s in seqs),
                tuple(t + shift for t in trips),
            )
            for pair, seqs, trips in _decompose(key)
        )

    return build


def _shanten_table(group: int) -> dict[bytes, tuple[ShantenOption, ...]]:
    def build(key: bytes) -> tuple[ShantenOption, ...]:
        _check_key(key, group)
        return _shared(_shanten_options(key, table))

    table: dict[bytes, tuple[ShantenOption, ...]] = _LazyTable(build)
    return table


READY: tuple[dict[bytes, tuple[int, ...]], ...] = tuple(
    _LazyTable(_ready_builder(g)) for g in range(4)
)
"""Per group (m, p, s, z): count bytes → (status, wa, wb, drop_sets, drop_pair, drop_wa,
drop_wb), masks at 34-kind bit positions."""

DECOMPOSITIONS: tuple[dict[bytes, tuple[RawDecomposition, ...]], ...] = tuple(
    _LazyTable(_decomposition_builder(g)) for g in range(4)
)
"""Per group: count bytes → every reading as sets plus at most one pair, 34-kind indices."""

_SUIT_SHANTEN = _shanten_table(0)
SHANTEN_OPTIONS: tuple[dict[bytes, tuple[ShantenOption, ...]], ...] = (
    _SUIT_SHANTEN,
    _SUIT_SHANTEN,
    _SUIT_SHANTEN,
    _shanten_table(3),
)
"""Per group: count bytes → Pareto-optimal (sets, partials, pair) counts; the three suits share
one table."""
