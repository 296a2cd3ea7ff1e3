"""Queries over a hand's concealed counts: completeness, waits, decompositions, shanten.

This module owns the answers to "is this hand complete (和)", "what does it wait on (听)",
"which discards leave it ready (报听)", "how can it be read" and "how far is it from ready
(向听数)" for the standard form (four sets plus a pair, RULES.md R9) and for seven pairs
(七对, luxury 豪华七对 allowed: four of a kind counts as two pairs; X3, C9).

Every function takes ``counts``: 34 integers 0..4, the concealed tiles only (a list is fastest;
tuples and numpy arrays are accepted). A hand with ``k`` exposed melds holds ``14 - 3k`` or
``13 - 3k`` concealed tiles. Nothing here knows about players or rule variants; a variant's
extra conditions (C9 三色全, 幺九 …) are checked by its rule set on top of these answers.

Kind sets are returned as 34-bit masks: bit ``i`` is tile kind ``i`` (see :mod:`..tiles`);
:func:`wait_kinds` turns a mask into a list. Answers come from the per-group tables of
:mod:`.tables` combined over the four groups m, p, s, z; no query tries the 34 kinds one by one.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product
from operator import index, itemgetter
from typing import NamedTuple

from .tables import DECOMPOSITIONS, READY, SETS_AND_PAIR, SHANTEN_OPTIONS

__all__ = [
    "Decomposition",
    "decompositions",
    "is_complete",
    "is_seven_pairs",
    "ready_discards",
    "seven_pairs_luxury",
    "seven_pairs_waits",
    "shanten",
    "shanten_seven_pairs",
    "wait_kinds",
    "waits",
]

_M, _P, _S, _Z = READY
_not_sets = itemgetter(0)  # a group's status is 0 exactly when it splits into sets only
_ODD = bytes(n & 1 for n in range(256))
_ALL_KINDS = (1 << 34) - 1
_COUNTS_0_TO_4 = bytes(range(5))


def _key(counts: Sequence[int]) -> bytes:
    """The counts as 34 raw bytes; slices of it key the group tables."""
    try:
        if counts.__class__ is bytes:
            return counts
        return bytes(counts if counts.__class__ is list else [index(n) for n in counts])
    except (TypeError, ValueError):
        raise ValueError(
            f"hand counts must be a sequence of 34 integers 0..4 (concealed tiles only), "
            f"got {counts!r}; build one with mahjong_env.tiles.counts_of(parse_tiles(...))"
        ) from None


def _checked_key(counts: Sequence[int]) -> bytes:
    """:func:`_key` for queries that do not go through the group tables' own checks."""
    b = _key(counts)
    if len(b) != 34 or b.translate(None, _COUNTS_0_TO_4):  # a count above 4 survives deleting 0..4
        raise ValueError(
            f"hand counts must be a sequence of 34 integers 0..4 (concealed tiles only), "
            f"got {list(b)}"
        )
    return b


def melds_count(melds: object) -> int:
    """``melds`` as the number of a hand's exposed melds, an integer 0..4; ValueError otherwise."""
    try:
        count = index(melds)  # type: ignore[arg-type]
    except TypeError:
        count = -1
    if not 0 <= count <= 4:
        raise ValueError(f"melds is the number of exposed melds, an integer 0..4; got {melds!r}")
    return count


def is_complete(counts: Sequence[int]) -> bool:
    """Whether a 3n+2 hand splits into sets (sequences, triplets) plus exactly one pair (R9)."""
    b = _key(counts)
    return _M[b[:9]][0] + _P[b[9:18]][0] + _S[b[18:27]][0] + _Z[b[27:]][0] == 1


def waits(counts: Sequence[int]) -> int:
    """Mask of the kinds that complete a 3n+1 hand in standard form (R8).

    A kind whose four copies are all in ``counts`` never appears (空听 is not a wait). A hand
    whose size is not 3n+1 has no waits.
    """
    b = _key(counts)
    bad = tuple(filter(_not_sets, (_M[b[:9]], _P[b[9:18]], _S[b[18:27]], _Z[b[27:]])))
    if len(bad) == 1:  # that group takes the tile and holds the pair: its wb
        return bad[0][2]
    if len(bad) == 2:  # one group takes the tile into sets (its wa), the other holds the pair
        x, y = bad
        return (x[1] if y[0] == SETS_AND_PAIR else 0) | (y[1] if x[0] == SETS_AND_PAIR else 0)
    return 0


def ready_discards(counts: Sequence[int]) -> int:
    """Mask of the held kinds T such that ``waits(counts - T)`` is not empty (3n+2 hand, R8).

    Only the group that holds T changes with T: each group's removal masks are combined with
    the other groups' statuses and wait masks as :func:`waits` combines them.
    """
    b = _key(counts)
    groups = (_M[b[:9]], _P[b[9:18]], _S[b[18:27]], _Z[b[27:]])
    bad = tuple(filter(_not_sets, groups))  # the groups that are not sets only, in order
    n_bad = len(bad)
    if n_bad > 3:
        return 0
    mask = 0
    k = 0  # bad groups seen so far
    for group in groups:
        _, _, _, drop_sets, drop_pair, drop_wa, drop_wb = group
        if group[0]:  # the others are the bad groups but this one (bad[k])
            n_others = n_bad - 1
            others = bad[:k] + bad[k + 1 :]
            k += 1
        else:
            n_others = n_bad
            others = bad
        if not n_others:  # the rest is sets: the group minus T must wait alone
            mask |= drop_wb
        elif n_others == 1:
            y_status, y_wa, y_wb, _, _, _, _ = others[0]
            if y_wb:  # group minus T is sets, the other waits alone
                mask |= drop_sets
            if y_status == SETS_AND_PAIR:  # the other holds the pair, group minus T waits
                mask |= drop_wa
            if y_wa:  # group minus T holds the pair, the other waits
                mask |= drop_pair
        elif n_others == 2:  # group minus T must be sets, the other two wait together
            (y_status, y_wa, _, _, _, _, _), (z_status, z_wa, _, _, _, _, _) = others
            if (y_wa and z_status == SETS_AND_PAIR) or (z_wa and y_status == SETS_AND_PAIR):
                mask |= drop_sets
    return mask


class Decomposition(NamedTuple):
    """One reading of a complete hand's concealed tiles as a pair plus sets (R9)."""

    pair: int
    """Kind of the pair (将)."""
    sequences: tuple[int, ...]
    """Lowest kind of each sequence (顺子), sorted."""
    triplets: tuple[int, ...]
    """Kind of each triplet (刻子), sorted."""


def decompositions(counts: Sequence[int]) -> list[Decomposition]:
    """Every distinct standard-form reading of a complete 3n+2 hand; ``[]`` if not complete.

    ``111222333m55z`` reads both as three triplets and as three sequences.
    """
    b = _key(counts)
    keys = (b[:9], b[9:18], b[18:27], b[27:])
    if sum(table[key][0] for table, key in zip(READY, keys)) != 1:
        return []
    readings = []
    for parts in product(*(table[key] for table, key in zip(DECOMPOSITIONS, keys))):
        pair = max(p for p, _, _ in parts)
        sequences = tuple(s for _, seqs, _ in parts for s in seqs)
        triplets = tuple(t for _, _, trips in parts for t in trips)
        readings.append(Decomposition(pair, sequences, triplets))
    return readings


def shanten(counts: Sequence[int], melds: int = 0) -> int:
    """Standard-form shanten (向听数): -1 complete, 0 ready, k: k useful draws from ready.

    ``melds`` is the number of exposed melds, so ``counts`` holds ``13 - 3 * melds`` or
    ``14 - 3 * melds`` tiles. The value is ``8 - 2 * sets - partials - pair`` maximised over
    every cut of the hand into sets, partial sets (two of a kind, two adjacent, two with a gap),
    at most one pair and isolated tiles, with exposed melds counted as sets and partials limited
    to ``4 - sets``. Like the usual count it ignores where the copies needed are (a hand waiting
    only on a kind it holds four of is reported ready although :func:`waits` is empty).
    """
    melds = melds_count(melds)
    b = _checked_key(counts)
    size = sum(b) + 3 * melds
    if size != 13 and size != 14:
        raise ValueError(
            f"a hand with {melds} exposed meld(s) holds {13 - 3 * melds} or {14 - 3 * melds} "
            f"concealed tiles, got {sum(b)}; pass the concealed counts and the number of melds"
        )
    states = {(melds, 0, 0)}
    for table, key in zip(SHANTEN_OPTIONS, (b[:9], b[9:18], b[18:27], b[27:])):
        options = table[key]
        if len(options) == 1 and options[0] == (0, 0, 0):
            continue
        states = {
            (m + m2, min(d + d2, 4 - m - m2), p + p2)
            for m, d, p in states
            for m2, d2, p2 in options
            if p + p2 <= 1
        }
    return min(8 - 2 * m - d - p for m, d, p in states)


def is_seven_pairs(counts: Sequence[int]) -> bool:
    """Whether the hand is exactly 14 tiles in seven pairs; four of a kind is two pairs (X3)."""
    b = _checked_key(counts)
    return sum(b) == 14 and not b.translate(_ODD).count(1)


def seven_pairs_luxury(counts: Sequence[int]) -> int:
    """Number of four-of-a-kinds in a seven-pairs hand (豪华七对); 0 if not seven pairs."""
    return _checked_key(counts).count(4) if is_seven_pairs(counts) else 0


def seven_pairs_waits(counts: Sequence[int]) -> int:
    """Mask of the kind completing a 13-tile hand into seven pairs (three of a kind waits on
    the fourth); 0 when the hand is not 13 tiles one tile away from seven pairs."""
    b = _checked_key(counts)
    odd = b.translate(_ODD)
    if sum(b) != 13 or odd.count(1) != 1:
        return 0
    return 1 << odd.index(1)


def shanten_seven_pairs(counts: Sequence[int]) -> int:
    """Seven-pairs shanten of a closed 13- or 14-tile hand: ``6 - pairs``, four of a kind
    counting as two pairs (consistent with :func:`is_seven_pairs`)."""
    b = _checked_key(counts)
    if sum(b) not in (13, 14):
        raise ValueError(
            f"seven pairs needs a closed hand of 13 or 14 tiles, got {sum(b)} concealed tiles"
        )
    return 6 - sum(n >> 1 for n in b)


def wait_kinds(mask: int) -> list[int]:
    """The kinds in a 34-bit mask, sorted: ``wait_kinds(0b101) == [0, 2]``."""
    if not 0 <= mask <= _ALL_KINDS:
        raise ValueError(f"a kind mask has bits 0..33 only, got {mask!r}")
    return [i for i in range(34) if mask >> i & 1]
