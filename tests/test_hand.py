"""Hand analysis: completeness, waits, ready discards, decompositions, shanten (R8, R9, X3, C9).

Hand-written cases in tile notation, then the table answers against a slow brute-force
reference over the whole 34-count hand on thousands of seeded random hands.
"""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Callable
from functools import cache
from itertools import product
from pathlib import Path

import numpy as np
import pytest

from mahjong_env.hand import (
    Decomposition,
    decompositions,
    is_complete,
    is_seven_pairs,
    ready_discards,
    seven_pairs_luxury,
    seven_pairs_waits,
    shanten,
    shanten_seven_pairs,
    wait_kinds,
    waits,
)
from mahjong_env.tiles import counts_of, format_counts, format_tiles, parse_tiles

Reading = tuple[int, tuple[int, ...], tuple[int, ...]]


def hand(text: str) -> list[int]:
    return counts_of(parse_tiles(text))


def kinds(mask: int) -> str:
    return format_tiles(wait_kinds(mask))


# ---------------------------------------------------------------- hand-written cases


@pytest.mark.parametrize(
    ("text", "complete"),
    [
        ("123m456p789s11z", True),
        ("123m456p789s111z22z", True),
        ("11z", True),
        ("1z", False),
        ("12z", False),
        ("123z11m", False),
        ("11122233344455z", True),
        ("111222333444m55z", True),
        ("11223344556677z", False),
        ("1122m3344p5566s77z", False),
        ("11123456789999m", True),
        ("123m456p789s1122z", False),
        ("789m11p", True),
        ("891m11p", False),
        ("11112222333344m", True),
    ],
)
def test_r9_is_complete(text: str, complete: bool) -> None:
    assert is_complete(hand(text)) is complete


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1112345678999m", "123456789m"),  # nine gates 九莲宝灯
        ("13m456p789s111z22z", "2m"),  # closed wait 坎张
        ("12m456p789s111z22z", "3m"),  # edge wait 边张
        ("89m456p789s111z22z", "7m"),
        ("23m456p789s111z22z", "14m"),  # open wait 两面
        ("11m22p456p789s111z", "1m2p"),  # two pairs 对倒
        ("123m456p789s1112z", "2z"),
        ("1112m456p789s111z", "23m"),
        ("4445m456p789s111z", "356m"),
        ("1122z456p789s111m", "12z"),
        ("2345678m111p222s", "258m"),
        ("1111m456p789s111z", ""),  # 空听: waiting only on a fifth 1m
        ("1m", "1m"),
        ("1111m", ""),
        ("11m22p", "1m2p"),
        ("3334m", "245m"),
        ("123m456p789s11z", ""),  # 3n+2 tiles: no waits
        ("19m19p19s1234567z", ""),
    ],
)
def test_r8_waits(text: str, expected: str) -> None:
    assert kinds(waits(hand(text))) == expected


@pytest.mark.parametrize(
    ("text", "seven", "luxury"),
    [
        ("1122m3344p5566s77z", True, 0),
        ("1111m22m33p44p55s66z", True, 1),
        ("11112222m3333p77z", True, 3),
        ("11223344556677z", True, 0),
        ("123m456p789s11122z", False, 0),
        ("1122m3344p5566s7z", False, 0),
        ("111m22m33p44p55s66z7z", False, 0),
        ("1122m3344p5566s77z11s", False, 0),
    ],
)
def test_x3_seven_pairs(text: str, seven: bool, luxury: int) -> None:
    assert is_seven_pairs(hand(text)) is seven
    assert seven_pairs_luxury(hand(text)) == luxury


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1122m3344p5566s7z", "7z"),
        ("1122m3344p556s77z", "6s"),
        ("111m22m33p44p55s66z", "1m"),  # luxury: three of a kind waits on the fourth
        ("1111m2m33p44p55s66z", "2m"),
        ("1122m3344p5566s77z", ""),
        ("1122m3344p55s67z", ""),
        ("1234567m", ""),
    ],
)
def test_x3_seven_pairs_waits(text: str, expected: str) -> None:
    assert kinds(seven_pairs_waits(hand(text))) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("123m456p789s111z57z", "57z"),
        ("123m456p789s1122z3z", "3z"),
        ("123m456p789s111z22z", "123m456p789s12z"),
        ("1112345678999m1z", "258m1z"),
        ("19m19p19s1234567z1m", ""),
        ("123m456p789s11z", "123m456p789s1z"),
    ],
)
def test_r8_ready_discards(text: str, expected: str) -> None:
    assert kinds(ready_discards(hand(text))) == expected


def test_r9_decompositions_of_a_triple_run() -> None:
    assert sorted(decompositions(hand("111222333m55z"))) == [
        Decomposition(pair=31, sequences=(), triplets=(0, 1, 2)),
        Decomposition(pair=31, sequences=(0, 0, 0), triplets=()),
    ]


@pytest.mark.parametrize(
    ("text", "readings"),
    [
        ("112233m456p789s55z", {(31, (0, 0, 12, 24), ())}),
        (
            "111222333444m55z",
            {(31, (), (0, 1, 2, 3)), (31, (0, 0, 0), (3,)), (31, (1, 1, 1), (0,))},
        ),
        ("11123m", {(0, (0,), ())}),
        ("123m456p789s11z", {(27, (0, 12, 24), ())}),
        ("11m", {(0, (), ())}),
        ("11223344m", {(0, (1, 1), ()), (3, (0, 0), ())}),
        ("123m456p789s1122z", set()),
        ("1122m3344p5566s77z", set()),
    ],
)
def test_r9_decompositions(text: str, readings: set[Reading]) -> None:
    found = decompositions(hand(text))
    assert len(found) == len(set(found))
    assert set(found) == readings
    assert all(isinstance(d, Decomposition) for d in found)


@pytest.mark.parametrize(
    ("text", "melds", "expected"),
    [
        ("19m19p19s1234567z", 0, 8),
        ("147m258p369s1234z", 0, 8),
        ("123m456p789s1112z", 0, 0),
        ("123m456p789s11122z", 0, -1),
        ("1122m3344p5566s77z", 0, 3),
        ("1111m456p789s111z", 0, 0),  # counted ready although waits() is empty (空听)
        ("1112345678999m", 0, 0),
        ("123m456p78s12357z", 0, 3),
        ("1m", 4, 0),
        ("11m", 4, -1),
        ("15m", 4, 0),
        ("1m9p", 4, 0),
        ("135m79p", 3, 1),
        ("1379m", 3, 1),
        ("1359m", 3, 1),
        ("12345m", 3, 0),
    ],
)
def test_r9_shanten(text: str, melds: int, expected: int) -> None:
    assert shanten(hand(text), melds) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1122m3344p5566s77z", -1),
        ("1111m22m33p44p55s66z", -1),
        ("1122m3344p5566s7z", 0),
        ("111m22m33p44p55s66z", 0),
        ("19m19p19s1234567z", 6),
        ("1111222233334m", 0),
    ],
)
def test_x3_shanten_seven_pairs(text: str, expected: int) -> None:
    assert shanten_seven_pairs(hand(text)) == expected


def test_wait_kinds() -> None:
    assert wait_kinds(0) == []
    assert wait_kinds(0b101) == [0, 2]
    assert wait_kinds(1 << 33) == [33]
    with pytest.raises(ValueError, match="bits 0..33"):
        wait_kinds(1 << 34)


def test_accepts_tuples_and_numpy_arrays() -> None:
    counts = hand("1112345678999m")
    assert waits(tuple(counts)) == waits(np.array(counts)) == waits(counts) == (1 << 9) - 1
    assert is_complete(np.array(hand("123m456p789s11z"), dtype=np.int8))
    assert shanten(np.array(counts)) == 0


_BAD_COUNTS = [
    [0] * 33,
    [0] * 35,
    [5] + [0] * 33,
    [-1] + [0] * 33,
    [0.5] + [0] * 33,
    np.zeros(33, dtype=np.int64),
    "1112m",
]
_QUERIES = [
    is_complete,
    waits,
    ready_discards,
    decompositions,
    shanten,
    is_seven_pairs,
    seven_pairs_luxury,
    seven_pairs_waits,
    shanten_seven_pairs,
]


@pytest.mark.parametrize("counts", _BAD_COUNTS)
@pytest.mark.parametrize("query", _QUERIES)
def test_bad_counts_raise_value_error(counts: object, query: Callable[[object], object]) -> None:
    with pytest.raises(ValueError, match="34 integers 0..4"):
        query(counts)


def test_tables_are_built_lazily() -> None:
    script = (
        "from mahjong_env.hand import tables\n"
        "assert not any(tables.READY) and not any(tables.SHANTEN_OPTIONS)\n"
        "assert not any(tables.DECOMPOSITIONS)\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, cwd=Path(__file__).parents[1])


def test_shanten_checks_hand_size() -> None:
    with pytest.raises(ValueError, match="7 or 8 concealed tiles"):
        shanten(hand("123m456p789s11z"), melds=2)
    with pytest.raises(ValueError, match="0..4"):
        shanten(hand("11z"), melds=5)
    with pytest.raises(ValueError, match="13 or 14 tiles"):
        shanten_seven_pairs(hand("11z"))


# ---------------------------------------------------------------- brute-force reference


def _is_suited_run_start(i: int) -> bool:
    return i < 27 and i % 9 <= 6


def _minus(c: tuple[int, ...], *kinds: int) -> tuple[int, ...]:
    out = list(c)
    for k in kinds:
        out[k] -= 1
    return tuple(out)


@cache
def _ref_split(c: tuple[int, ...], need_pair: bool) -> bool:
    """Sets plus (if need_pair) one pair, trying the lowest tile in every role."""
    i = next((k for k, n in enumerate(c) if n), -1)
    if i < 0:
        return not need_pair
    if need_pair and c[i] >= 2 and _ref_split(_minus(c, i, i), False):
        return True
    if c[i] >= 3 and _ref_split(_minus(c, i, i, i), need_pair):
        return True
    return (
        _is_suited_run_start(i)
        and c[i + 1] > 0
        and c[i + 2] > 0
        and _ref_split(_minus(c, i, i + 1, i + 2), need_pair)
    )


def _ref_complete(c: list[int]) -> bool:
    return sum(c) % 3 == 2 and _ref_split(tuple(c), True)


def _ref_waits(c: list[int]) -> int:
    mask = 0
    for t in range(34):
        if c[t] < 4:
            c[t] += 1
            if _ref_complete(c):
                mask |= 1 << t
            c[t] -= 1
    return mask


def _ref_seven_pairs_waits(c: list[int]) -> int:
    mask = 0
    for t in range(34):
        if c[t] < 4:
            c[t] += 1
            if sum(c) == 14 and all(n % 2 == 0 for n in c):
                mask |= 1 << t
            c[t] -= 1
    return mask


def _ref_ready_discards(c: list[int]) -> int:
    mask = 0
    for t in range(34):
        if c[t]:
            c[t] -= 1
            if _ref_waits(c):
                mask |= 1 << t
            c[t] += 1
    return mask


def _ref_decompositions(c: tuple[int, ...], pair: int) -> set[Reading]:
    """Every reading of the whole hand as sets plus exactly one pair."""
    i = next((k for k, n in enumerate(c) if n), -1)
    if i < 0:
        return {(pair, (), ())} if pair >= 0 else set()
    found = set()
    if pair < 0 and c[i] >= 2:
        found |= _ref_decompositions(_minus(c, i, i), i)
    if c[i] >= 3:
        found |= {
            (p, s, tuple(sorted((i, *t))))
            for p, s, t in _ref_decompositions(_minus(c, i, i, i), pair)
        }
    if _is_suited_run_start(i) and c[i + 1] and c[i + 2]:
        found |= {
            (p, tuple(sorted((i, *s))), t)
            for p, s, t in _ref_decompositions(_minus(c, i, i + 1, i + 2), pair)
        }
    return found


@cache
def _ref_blocks(c: tuple[int, ...]) -> frozenset[tuple[int, int, int]]:
    """Every (sets, partials, pair) reachable by cutting the whole hand, no pruning."""
    i = next((k for k, n in enumerate(c) if n), -1)
    if i < 0:
        return frozenset({(0, 0, 0)})
    cuts = [(_minus(c, i), 0, 0, 0)]
    if c[i] >= 3:
        cuts.append((_minus(c, i, i, i), 1, 0, 0))
    if _is_suited_run_start(i) and c[i + 1] and c[i + 2]:
        cuts.append((_minus(c, i, i + 1, i + 2), 1, 0, 0))
    if c[i] >= 2:
        cuts += [(_minus(c, i, i), 0, 1, 0), (_minus(c, i, i), 0, 0, 1)]
    if i < 27 and i % 9 <= 7 and c[i + 1]:
        cuts.append((_minus(c, i, i + 1), 0, 1, 0))
    if _is_suited_run_start(i) and c[i + 2]:
        cuts.append((_minus(c, i, i + 2), 0, 1, 0))
    return frozenset(
        (m + m2, d + d2, p + p2)
        for rest, m, d, p in cuts
        for m2, d2, p2 in _ref_blocks(rest)
        if p + p2 <= 1
    )


def _ref_shanten(c: list[int], melds: int) -> int:
    return min(
        8 - 2 * (m + melds) - min(d, 4 - m - melds) - p for m, d, p in _ref_blocks(tuple(c))
    )


# ---------------------------------------------------------------- random hands


def _from_pool(rng: random.Random, pool: list[int], size: int) -> list[int]:
    return counts_of(rng.sample(pool, size))


_WALL = [k for k in range(34) for _ in range(4)]
_SUIT_POOLS = [[k for k in range(9 * s, 9 * s + 9) for _ in range(4)] for s in range(3)]
_HONOR_POOL = [k for k in range(27, 34) for _ in range(4)]


def _complete_hand(rng: random.Random, sets: int, suits: list[int]) -> list[int]:
    """A random complete hand of ``sets`` sets plus a pair drawn from the given suits."""
    while True:
        c = [0] * 34
        for _ in range(sets):
            s = rng.choice(suits)
            if s == 3 or rng.random() < 0.35:
                k = rng.randrange(27, 34) if s == 3 else 9 * s + rng.randrange(9)
                c[k] += 3
            else:
                k = 9 * s + rng.randrange(7)
                for j in (k, k + 1, k + 2):
                    c[j] += 1
        s = rng.choice(suits)
        k = rng.randrange(27, 34) if s == 3 else 9 * s + rng.randrange(9)
        c[k] += 2
        if max(c) <= 4:
            return c


@cache
def _random_hands(remainder: int) -> list[tuple[list[int], int]]:
    """4000 seeded (counts, melds) of size 3n + remainder: a mix of uniform, one-suit, two-suit
    and near-complete hands; exposed melds make the smaller sizes. Shared: restore any count
    a test changes."""
    rng = random.Random(remainder)
    hands = []
    for j in range(4000):
        melds = rng.choice((0, 0, 0, 1, 2, 3, 4))
        size = 12 - 3 * melds + remainder
        kind = j % 4
        if kind == 0:
            c = _from_pool(rng, _WALL, size)
        elif kind == 1:
            c = _from_pool(rng, rng.choice(_SUIT_POOLS), size)
        elif kind == 2:
            two_suits = _SUIT_POOLS[0] + _SUIT_POOLS[1]
            pool = rng.choice(_SUIT_POOLS) + _HONOR_POOL if rng.random() < 0.5 else two_suits
            c = _from_pool(rng, pool, size)
        else:
            suits = rng.choice(([0], [1], [2], [0, 3], [0, 1], [0, 1, 2, 3]))
            c = _complete_hand(rng, 4 - melds, suits)
            for _ in range(2 - remainder):
                c[rng.choice([k for k in range(34) if c[k]])] -= 1
            if remainder == 2 and rng.random() < 0.5:
                c[rng.choice([k for k in range(34) if c[k]])] -= 1
                c[rng.choice([k for k in range(34) if c[k] < 4])] += 1
        hands.append((c, melds))
    return hands


def _hands_13() -> list[tuple[list[int], int]]:
    return _random_hands(1)


def _hands_14() -> list[tuple[list[int], int]]:
    return _random_hands(2)


def test_r9_is_complete_matches_brute_force() -> None:
    for c, _ in _hands_14() + _hands_13():
        assert is_complete(c) == _ref_complete(c), format_counts(c)


def test_r8_waits_match_brute_force() -> None:
    ready = 0
    for c, _ in _hands_13() + _hands_14():
        expected = _ref_waits(c)
        assert waits(c) == expected, format_counts(c)
        ready += expected != 0
    assert ready > 500  # the mix really exercises waits


def test_x3_seven_pairs_match_brute_force() -> None:
    rng = random.Random(7)
    for c, _ in _hands_13()[:1000]:
        pairs = [rng.randrange(34) for _ in range(6)]
        paired = counts_of(pairs + pairs + [rng.randrange(34)])
        for counts in (c, paired):
            if max(counts) <= 4:
                expected = _ref_seven_pairs_waits(counts)
                assert seven_pairs_waits(counts) == expected, format_counts(counts)


def test_r8_ready_discards_match_brute_force() -> None:
    for c, _ in _hands_14()[:1500]:
        assert ready_discards(c) == _ref_ready_discards(c), format_counts(c)


def test_r9_decompositions_match_brute_force() -> None:
    for c, _ in _hands_14():
        found = decompositions(c)
        assert len(found) == len(set(found))
        assert {tuple(d) for d in found} == _ref_decompositions(tuple(c), -1), format_counts(c)


def test_r9_shanten_matches_brute_force() -> None:
    for c, melds in _hands_13()[:2000] + _hands_14()[:2000]:
        assert shanten(c, melds) == _ref_shanten(c, melds), (format_counts(c), melds)


def test_r9_shanten_agrees_with_completeness_and_waits() -> None:
    for c, melds in _hands_14():
        assert (shanten(c, melds) == -1) == is_complete(c), format_counts(c)
    for c, melds in _hands_13():
        s = shanten(c, melds)
        if waits(c):
            assert s == 0, format_counts(c)
        elif s == 0:  # ready only on kinds the hand holds four of
            assert 4 in c, format_counts(c)


def test_r9_shanten_moves_one_step_per_draw() -> None:
    for c, melds in _hands_14()[:600]:
        s = shanten(c, melds)
        after = []
        for t in range(34):
            if c[t]:
                c[t] -= 1
                after.append(shanten(c, melds))
                c[t] += 1
        assert min(after) == max(s, 0), format_counts(c)
        assert max(after) <= s + 1
    for c, melds in _hands_13()[:600]:
        s = shanten(c, melds)
        for t in range(34):
            if c[t] < 4:
                c[t] += 1
                assert shanten(c, melds) >= s - 1, format_counts(c)
                c[t] -= 1


def test_x3_shanten_seven_pairs_matches_counts() -> None:
    for c, melds in _hands_14() + _hands_13():
        if melds == 0:
            s = shanten_seven_pairs(c)
            assert (s == -1) == is_seven_pairs(c)
            if sum(c) == 13:
                assert (s == 0) == (seven_pairs_waits(c) != 0), format_counts(c)


@pytest.mark.slow
@pytest.mark.parametrize(("start", "size", "max_tiles"), [(9, 9, 11), (27, 7, 14)])
def test_r9_every_small_one_group_hand_matches_brute_force(
    start: int, size: int, max_tiles: int
) -> None:
    for group in product(range(5), repeat=size):
        total = sum(group)
        if total > max_tiles or total % 3 == 0:
            continue
        c = [0] * 34
        c[start : start + size] = group
        if total % 3 == 1:
            assert waits(c) == _ref_waits(c), format_counts(c)
        else:
            assert is_complete(c) == _ref_complete(c), format_counts(c)
            assert ready_discards(c) == _ref_ready_discards(c), format_counts(c)
            found = {tuple(d) for d in decompositions(c)}
            assert found == _ref_decompositions(tuple(c), -1), format_counts(c)


def test_drawn_may_complete_never_rejects_a_complete_hand() -> None:
    """`SeatState.drawn_may_complete` (the engine's cheap pre-test of a self-draw, R9) says
    False only when the hand is neither complete nor, closed, seven pairs, whichever held tile
    was the one drawn; and it does reject most incomplete hands."""
    from mahjong_env.engine.state import Meld, MeldKind, SeatState

    rng = random.Random(11)
    sevens = []  # closed seven-pairs hands (luxury ones too)
    while len(sevens) < 300:
        pairs = [rng.randrange(34) for _ in range(7)]
        if max(counts_of(pairs + pairs)) <= 4:
            sevens.append((counts_of(pairs + pairs), 0))
    rejected = 0
    for c, melds in _hands_14() + sevens:
        for drawn in [k for k in range(34) if c[k]][:4]:
            st = SeatState([])
            st.counts = list(c)
            st.melds = [Meld(MeldKind.PONG, [0, 0, 0], 0, 1)] * melds
            st.drawn = drawn
            complete = is_complete(c) or (not melds and is_seven_pairs(c))
            if not st.drawn_may_complete():
                assert not complete, (format_counts(c), drawn, melds)
                rejected += 1
            assert st.counts == c  # asks without editing the seat
    assert rejected > 5000
    st = SeatState(parse_tiles("123m456p789s1122z"))
    assert st.drawn_may_complete()  # no tile drawn (the dealer's dealt hand): not pre-judged


def test_seat_state_caches_follow_every_change() -> None:
    """`SeatState.remove`/`receive` keep ``held`` and the version-keyed shape-waits cache: after
    any sequence of draws, discards and melds, `shape_waits` and `drawn_may_complete` answer as
    the hand library computes them from the counts as they are (R8, R9)."""
    from mahjong_env.engine.state import Meld, MeldKind, SeatState
    from mahjong_env.hand import seven_pairs_waits, waits

    rng = random.Random(5)
    for _ in range(300):
        wall = list(range(34)) * 4
        rng.shuffle(wall)
        st = SeatState(wall[:13])
        wall = wall[13:]
        for _ in range(20):
            st.shape_waits()  # fill the cache of the 13-tile hand, as the claim checks do
            st.receive(wall.pop())
            before = list(st.counts)
            before[st.drawn] -= 1
            expected = waits(before) | (0 if st.melds else seven_pairs_waits(before))
            assert st.drawn_may_complete() == bool(expected >> st.drawn & 1)
            held = [t for t in range(34) if st.counts[t]]
            if rng.random() < 0.1 and any(st.counts[t] >= 3 for t in held):
                tile = next(t for t in held if st.counts[t] >= 3)
                st.remove(tile, 3)
                st.add_meld(Meld(MeldKind.PONG, [tile] * 3, tile, 1))
            st.remove(rng.choice([t for t in range(34) if st.counts[t]]))
            assert st.held == sum(st.counts)
            assert st.shape_waits() == waits(st.counts) | (0 if st.melds else seven_pairs_waits(st.counts))
