"""Fuzzing the compiled core's entry points (issue "A compiled core", constraint 4).

Every public entry point of a compiled module is called with whatever hypothesis makes of its
argument types: counts of every length and value (negative, above 4, above 255), floats,
strings, ``None``, numpy arrays of every integer and float dtype, masks out of range. The
contract is the pure core's: an answer, or a ``ValueError`` that names the problem; never
another exception, never a crash of the interpreter (a crash would end this test run). The
same calls run on whichever core is loaded: the compiled one in CI, the pure one under
``MAHJONG_ENV_PURE=1``. What was tried is written in docs/architecture.md.

The agreement of `Shape` (the C-typed shanten of the heuristic, `mahjong_env.hand.shape`) with
the plain queries of `mahjong_env.hand.analysis` on valid hands is checked here too (R8, R9).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mahjong_env import hand
from mahjong_env.hand import shape as shape_module
from mahjong_env.hand.shape import NEAR, Shape, useful_kinds
from mahjong_env.tiles import counts_of, parse_tiles

QUERIES = [
    hand.is_complete,
    hand.waits,
    hand.ready_discards,
    hand.decompositions,
    hand.shanten,
    hand.is_seven_pairs,
    hand.seven_pairs_luxury,
    hand.seven_pairs_waits,
    hand.shanten_seven_pairs,
]

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_ints = st.integers(min_value=-300, max_value=300)
_small = st.integers(min_value=0, max_value=5)
_junk = st.one_of(st.none(), st.floats(allow_nan=True), st.text(max_size=3), st.booleans(), st.just(object()))
_dtypes = st.sampled_from(["int8", "uint8", "int16", "int32", "int64", "uint64", "float32", "float64", "bool"])

counts_like = st.one_of(
    st.lists(_small, min_size=34, max_size=34),  # near the valid ones: counts 0..5
    st.lists(_ints, min_size=0, max_size=40),  # any length, any value
    st.lists(st.one_of(_small, _junk), min_size=34, max_size=34),  # a stray non-integer
    st.builds(lambda xs, dtype: np.array(xs).astype(dtype), st.lists(_small, min_size=30, max_size=36), _dtypes),
    _junk,
)


def _valid_hand(draw: st.DrawFn, size: int) -> list[int]:
    kinds = draw(st.lists(st.integers(0, 33), min_size=size, max_size=size))
    counts = [0] * 34
    for k in kinds:
        if counts[k] < 4:
            counts[k] += 1
    while sum(counts) < size:  # a kind drawn a fifth time goes to the first kind with room
        counts[counts.index(min(counts))] += 1
    return counts


@st.composite
def valid_hands(draw: st.DrawFn) -> tuple[list[int], int]:
    """A concealed hand of 13 - 3k or 14 - 3k tiles and its k exposed melds."""
    melds = draw(st.integers(0, 4))
    size = 14 - 3 * melds - draw(st.integers(0, 1))
    return _valid_hand(draw, size), melds


@FUZZ
@given(counts=counts_like, query=st.sampled_from(QUERIES))
def test_hand_queries_answer_or_raise_value_error(counts: object, query) -> None:
    try:
        query(counts)
    except ValueError:
        pass


@FUZZ
@given(mask=st.one_of(st.integers(-(2**70), 2**70), _junk))
def test_wait_kinds_answers_or_raises_value_error(mask: object) -> None:
    try:
        kinds = hand.wait_kinds(mask)  # type: ignore[arg-type]
    except (ValueError, TypeError):  # TypeError: not a number at all (a float, None, a string)
        return
    assert kinds == [k for k in range(34) if mask >> k & 1]  # type: ignore[operator]


@FUZZ
@given(counts=counts_like, melds=st.one_of(st.integers(-3, 8), _junk), seven_pairs=st.booleans())
def test_shape_answers_or_raises_value_error(counts: object, melds: object, seven_pairs: bool) -> None:
    for build in (Shape, useful_kinds):
        try:
            build(counts, melds, seven_pairs)  # type: ignore[arg-type]
        except (ValueError, TypeError):  # TypeError: melds that are not an integer
            pass


@settings(max_examples=400, deadline=None)
@given(valid_hands(), st.booleans())
def test_r9_shape_agrees_with_shanten_and_its_changes(case: tuple[list[int], int], seven_pairs: bool) -> None:
    """`Shape` (C-typed profiles) gives `hand.shanten`, with seven pairs where allowed, for the
    hand and for every hand one tile away (X3, C9: four of a kind counts as two pairs)."""
    counts, melds = case

    def expected(c: list[int]) -> int:
        value = hand.shanten(c, melds)
        if seven_pairs and melds == 0:
            value = min(value, hand.shanten_seven_pairs(c))
        return value

    shape = Shape(counts, melds, seven_pairs)
    assert shape.shanten == expected(counts)
    size = sum(counts) + 3 * melds
    for t in range(34):
        if counts[t] and size == 14:
            counts[t] -= 1
            assert shape.changed(t, -1) == expected(counts), t
            counts[t] += 1
        if counts[t] < 4 and size == 13:
            counts[t] += 1
            assert shape.changed(t, 1) == expected(counts), t
            counts[t] -= 1
    if size == 13:
        base = expected(counts)
        useful = []
        for u in range(34):
            if counts[u] < 4 and any(counts[n] for n in NEAR[u]):
                counts[u] += 1
                if expected(counts) < base:
                    useful.append(u)
                counts[u] -= 1
        assert useful_kinds(counts, melds, seven_pairs) == tuple(useful)
        shape_module._USEFUL_CACHE.clear()  # again, from the per-group draw tables `_draws` kept
        assert useful_kinds(counts, melds, seven_pairs) == tuple(useful)


def test_shape_refuses_a_hand_of_more_than_14_tiles() -> None:
    with pytest.raises(ValueError, match="14 tiles at most"):
        Shape(counts_of(parse_tiles("123456789m123p44s1z")), 1, False)


@FUZZ
@given(text=st.text(alphabet="0123456789mpsz ,[]'\"xX-_\n\u4e00", max_size=30))
def test_tile_notation_parses_or_raises_value_error(text: str) -> None:
    try:
        tiles = parse_tiles(text)
    except ValueError:
        return
    assert all(0 <= t < 34 for t in tiles)
