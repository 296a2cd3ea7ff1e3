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


# ---------------------------------------------------------------------- the stepping entry points

_VECTOR_GAMES = 4


def _vector(variant: str, seed: int, steps: int):
    """A `VectorMahjong` of ``seed`` after ``steps`` seeded random legal steps (a function of
    its arguments, as hypothesis needs)."""
    from mahjong_env.adapters.vector import VectorMahjong

    venv = VectorMahjong(variant, _VECTOR_GAMES, seed=seed)
    _, masks, _ = venv.reset()
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        _, masks, *_ = venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
    return venv


def _snapshot(venv) -> tuple:
    return (
        venv.obs.tobytes(),
        venv.masks.tobytes(),
        venv.seats.tobytes(),
        venv.states().tobytes(),
        [len(game.log) for game in venv.games],
    )


@st.composite
def batched_actions(draw: st.DrawFn, masks: np.ndarray) -> object:
    """Legal actions for every game, then bent: an entry replaced (out of range, negative,
    huge, illegal, a float, junk), another dtype, another shape, a masked array, a list."""
    legal = [int(draw(st.sampled_from(np.flatnonzero(m).tolist()))) for m in masks]
    bend = draw(st.sampled_from(["none", "entry", "dtype", "shape", "masked", "list", "scalar"]))
    if bend == "entry":
        i = draw(st.integers(0, len(legal) - 1))
        legal[i] = draw(st.one_of(st.integers(-(2**70), 2**70), st.integers(0, 200), _junk))
        return legal if draw(st.booleans()) else np.array(legal, dtype=object)
    array = np.array(legal, dtype=np.int64)
    if bend == "dtype":
        return array.astype(draw(_dtypes))
    if bend == "shape":
        shape = draw(st.sampled_from([(2, 2), (1, 4), (4, 1), (8,), (3,), (0,), (2, 2, 1)]))
        return np.resize(array, shape)
    if bend == "masked":
        return np.ma.array(array, mask=draw(st.lists(st.booleans(), min_size=4, max_size=4)))
    if bend == "list":
        return [draw(st.one_of(st.just(a), _junk, st.lists(st.integers(0, 181), max_size=2))) for a in legal]
    if bend == "scalar":
        return draw(st.one_of(st.integers(0, 181), _junk))
    return array


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    variant=st.sampled_from(["xinjiang", "changchun"]),
    seed=st.integers(0, 40),
    steps=st.integers(0, 60),
)
def test_vector_step_steps_legal_actions_or_raises_value_error_moving_nothing(
    data, variant: str, seed: int, steps: int
) -> None:
    """Constraint 4: `VectorMahjong.step` (compiled engine underneath) with bent action arrays
    either steps every game with its legal action or raises ValueError, every game, buffer and
    state unchanged; nothing else escapes."""
    venv = _vector(variant, seed, steps)
    before = _snapshot(venv)
    masks = venv.masks.copy()
    actions = data.draw(batched_actions(masks))
    try:
        venv.step(actions)
    except ValueError:
        assert _snapshot(venv) == before
        return
    acts = np.asarray(actions).reshape(-1)
    assert acts.dtype.kind in "iu" and acts.shape == (_VECTOR_GAMES,)
    assert all(masks[i, a] for i, a in enumerate(acts.tolist()))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), variant=st.sampled_from(["xinjiang", "changchun"]))
def test_engine_and_aec_step_take_legal_actions_or_raise_value_error(data, variant: str) -> None:
    """Constraint 4: the engine's `Game.step` and the AEC env's `step` with any action (ids
    in and out of range, numpy scalars of every dtype, floats, strings, None, lists) step with
    a legal one or raise ValueError with the state unchanged."""
    from mahjong_env import changchun_v0, xinjiang_v0

    env = (xinjiang_v0 if variant == "xinjiang" else changchun_v0).env()
    env.reset(seed=data.draw(st.integers(0, 50)))
    for _ in range(data.draw(st.integers(0, 30))):  # somewhere into the hand
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            break
        env.step(int(data.draw(st.sampled_from(np.flatnonzero(env.action_mask(agent)).tolist()))))
    agent = env.agent_selection
    if env.terminations[agent] or env.truncations[agent]:
        return
    legal = np.flatnonzero(env.action_mask(agent)).tolist()
    action = data.draw(
        st.one_of(
            st.integers(-(2**70), 2**70),
            st.integers(-2, 183),
            st.builds(lambda a, dtype: np.array(a).astype(dtype)[()], st.sampled_from(legal), _dtypes),
            st.lists(st.sampled_from(legal), max_size=2),
            _junk,
        )
    )
    raw = env.unwrapped
    game = raw.game
    # the engine and the raw env refuse with ValueError; env() adds PettingZoo's bounds check,
    # whose refusal of an action outside Discrete(182) is an AssertionError (API.md)
    for target, refusals in ((game.step, ValueError), (raw.step, ValueError), (env.step, (ValueError, AssertionError))):
        state, log = raw.state().tobytes(), len(game.log)
        try:
            target(action)
        except refusals:
            assert (raw.state().tobytes(), len(game.log)) == (state, log)
            continue
        assert isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_))
        assert action in legal and len(game.log) == log + 1
        return
