"""Batched self-play: `VectorMahjong` equals separate AEC envs, `ParallelVectorMahjong` equals
`VectorMahjong` (local processes and Ray), and the credit-assignment helper."""

from __future__ import annotations

import numpy as np
import pytest

from mahjong_env import changchun_v0, replay
from mahjong_env.adapters.vector import RewardAccumulator, VectorMahjong, episode_seed, seat_advantages
from mahjong_env.adapters.workers import ParallelVectorMahjong
from mahjong_env.observation import NUM_CHANNELS, ObservationEncoder, encode_batch
from mahjong_env.variants import all_variants

MODULES = {v.name: v.env_module for v in all_variants()}


def random_actions(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    """One uniformly random legal action per row."""
    return np.array([rng.choice(np.flatnonzero(row)) for row in masks])


@pytest.mark.parametrize("variant", ["xinjiang", "changchun"])
@pytest.mark.parametrize("num_hands", [1, 2])
def test_vector_equals_separate_aec_envs(variant: str, num_hands: int) -> None:
    n, seed, steps = 4, 11, 400
    venv = VectorMahjong(variant, n, seed=seed, num_hands=num_hands)
    envs = [MODULES[variant].raw_env(num_hands=num_hands) for _ in range(n)]
    episodes = [0] * n
    for i, env in enumerate(envs):
        env.reset(seed=episode_seed(seed, i, 0))
    obs, masks, seats = venv.reset()
    rng = np.random.default_rng(5)
    finished = 0
    for _ in range(steps):
        for i, env in enumerate(envs):
            agent = env.agent_selection
            assert seats[i] == int(agent[-1])
            seen = env.observe(agent)
            np.testing.assert_array_equal(obs[i], seen["observation"])
            np.testing.assert_array_equal(masks[i], seen["action_mask"])
        actions = random_actions(rng, masks)
        obs, masks, seats, rewards, dones, infos = venv.step(actions)
        assert np.all(rewards.sum(axis=1) == 0.0)
        for i, env in enumerate(envs):
            env.step(int(actions[i]))
            assert rewards[i].tolist() == [env.rewards[f"player_{s}"] for s in range(4)]
            if "result" in infos[i]:
                assert infos[i]["result"] == env.infos["player_0"]["result"]
                assert infos[i]["seed"] == episode_seed(seed, i, episodes[i])
            assert bool(dones[i]) == all(env.terminations.values())
            if dones[i]:
                finished += 1
                episodes[i] += 1
                env.reset(seed=episode_seed(seed, i, episodes[i]))
    assert finished >= 2  # auto-reset happened and was checked


def test_episode_seeds_and_auto_reset() -> None:
    assert episode_seed(0, 1, 2) == episode_seed(0, 1, 2)
    assert len({episode_seed(s, i, k) for s in range(3) for i in range(3) for k in range(3)}) == 27
    venv = VectorMahjong("xinjiang", 3, seed=2, record=True)
    _, masks, _ = venv.reset()
    rng = np.random.default_rng(0)
    ends = 0
    while ends < 4:
        obs, masks, seats, rewards, dones, infos = venv.step(random_actions(rng, masks))
        assert rewards.dtype == np.float32 and np.all(rewards.sum(axis=1) == 0.0)
        for i in np.flatnonzero(dones):
            ends += 1
            info = infos[i]
            assert info["record"]["seed"] == info["seed"]
            assert replay(info["record"]) == [info["result"]]
            assert venv.episodes[i] == info["episode"] + 1
            assert masks[i].sum() > 0  # the next episode is already waiting for a decision
    assert obs.shape == (3, NUM_CHANNELS, 34) and masks.dtype == np.int8 and seats.dtype == np.int64


def test_illegal_action_moves_no_game() -> None:
    venv = VectorMahjong("changchun", 2, seed=0)
    masks = venv.reset()[1]
    logs = [len(g.log) for g in venv.games]
    actions = [int(np.flatnonzero(masks[0])[0]), int(np.flatnonzero(masks[1] == 0)[0])]
    with pytest.raises(ValueError, match="game 1: illegal action"):
        venv.step(actions)
    assert [len(g.log) for g in venv.games] == logs
    pen = VectorMahjong("changchun", 2, seed=0, illegal_action="penalize", record=True)
    offender = int(pen.reset()[2][1])
    _, _, _, rewards, dones, infos = pen.step(actions)
    assert dones.tolist() == [False, True] and infos[1]["result"]["outcome"] == "illegal"
    assert rewards[1].sum() == 0.0 and rewards[1, offender] == -3.0
    aec = changchun_v0.raw_env(illegal_action="penalize")
    aec.reset(seed=episode_seed(0, 1, 0))
    aec.step(actions[1])
    assert infos[1]["record"] == aec.record() and replay(infos[1]["record"]) == [infos[1]["result"]]


@pytest.mark.parametrize("mode", ["raise", "penalize"])
@pytest.mark.parametrize("bad", [[5.0, 5.0], [5.6, 5.6], [True, False], ["5", "5"], np.array([1.0, 2.0], np.float32)])
def test_non_integer_actions_move_no_game(mode: str, bad: object) -> None:
    """Issue 13: float actions passed the legality check (``5.0 in legal``), logged, and
    crashed mid-batch; the whole batch is now checked before any game moves."""
    venv = VectorMahjong("changchun", 2, seed=0, illegal_action=mode)
    obs, masks, seats = (a.copy() for a in venv.reset())
    logs = [list(map(tuple, g.log)) for g in venv.games]
    with pytest.raises(ValueError, match=r"integer action ids.*no game was stepped"):
        venv.step(bad)
    assert [list(map(tuple, g.log)) for g in venv.games] == logs
    np.testing.assert_array_equal(venv.obs, obs)
    np.testing.assert_array_equal(venv.masks, masks)
    np.testing.assert_array_equal(venv.seats, seats)
    legal = [int(np.flatnonzero(m)[0]) for m in masks]
    venv.step(np.array(legal, np.int16))  # integer dtypes of any width are fine
    assert [len(g.log) for g in venv.games] == [len(log) + 1 for log in logs]
    with pytest.raises(ValueError, match="one action per game"):
        venv.step(legal + legal)


@pytest.mark.parametrize(
    "bad, why",
    [
        (np.zeros((2, 2), np.int64), r"shape \(4,\), got shape \(2, 2\)"),  # four actions, but not one per game
        (np.zeros((4, 1, 1), np.int64), r"got shape \(4, 1, 1\)"),
        (np.int64(0), r"got shape \(\)"),
        (np.ma.masked_array([0, 0, 0, 0], mask=[0, 1, 0, 0]), "masked entries"),
    ],
)
def test_actions_of_the_wrong_shape_or_masked_move_no_game(bad: object, why: str) -> None:
    """Issue "A compiled core", constraint 4: a (2, 2) array passed for 4 games and a masked
    array's mask was ignored. Now the shape is checked and a masked entry refused."""
    venv = VectorMahjong("changchun", 4, seed=0)
    masks = venv.reset()[1].copy()
    logs = [len(g.log) for g in venv.games]
    with pytest.raises(ValueError, match=why):
        venv.step(bad)
    assert [len(g.log) for g in venv.games] == logs
    np.testing.assert_array_equal(venv.masks, masks)
    legal = np.array([int(np.flatnonzero(m)[0]) for m in masks])
    venv.step(legal[:, None])  # a column of one action per game is fine, as is an unmasked masked array
    legal = np.array([int(np.flatnonzero(m)[0]) for m in venv.masks])
    venv.step(np.ma.masked_array(legal, mask=False))
    assert [len(g.log) for g in venv.games] == [n + 2 for n in logs]


def test_parallel_penalize_refuses_non_integer_actions() -> None:
    """Issue 13: ParallelVectorMahjong truncated 5.6 to 5 in penalize mode."""
    with ParallelVectorMahjong("changchun", 2, num_workers=1, seed=0, illegal_action="penalize") as venv:
        masks = venv.reset()[1].copy()
        with pytest.raises(ValueError, match="integer action ids"):
            venv.step([5.6, 5.6])
        np.testing.assert_array_equal(venv.masks, masks)
        _, _, _, rewards, dones, _ = venv.step([int(np.flatnonzero(m)[0]) for m in masks])
        assert not dones.any() and rewards.sum() == 0.0


def test_encode_batch_equals_single_encodes() -> None:
    venv = VectorMahjong("changchun", 5, seed=3)
    masks = venv.reset()[1]
    rng = np.random.default_rng(1)
    for _ in range(60):
        _, masks, *_ = venv.step(random_actions(rng, masks))
    for seat in range(4):  # every seat's view, not only the mover's
        batch = np.zeros((5, NUM_CHANNELS, 34), np.float32)
        encode_batch(venv.encoders, venv.games, [seat] * 5, batch)
        for i, game in enumerate(venv.games):
            single = ObservationEncoder(venv.config.concealed_kong_visible).encode(
                game, seat, np.full((NUM_CHANNELS, 34), 9.0, np.float32)
            )
            np.testing.assert_array_equal(batch[i], single)
            strided = np.zeros((NUM_CHANNELS, 68), np.float32)[:, ::2]  # not C-contiguous
            venv.encoders[i].encode(game, seat, strided)
            np.testing.assert_array_equal(strided, single)


def test_reward_accumulator_credits_each_seat() -> None:
    n, horizon = 3, 300
    venv = VectorMahjong("xinjiang", n, seed=4)
    acc = RewardAccumulator(n, horizon)
    _, masks, seats = venv.reset()
    rng = np.random.default_rng(2)
    total = np.zeros((n, 4))
    seat_rows = np.zeros((horizon, n), np.int64)
    for t in range(horizon):
        acc.decide(t, seats)
        seat_rows[t] = seats
        _, masks, seats, rewards, dones, _ = venv.step(random_actions(rng, masks))
        acc.receive(rewards, dones)
        total += rewards
    credited = np.zeros((n, 4))
    for t in range(horizon):
        for i in range(n):
            credited[i, seat_rows[t, i]] += acc.rewards[t, i]
            nxt = acc.next_index[t, i]
            if nxt >= 0:  # the successor is the same seat's next decision, later, same episode
                assert nxt > t and seat_rows[nxt, i] == seat_rows[t, i] and not acc.dones[t, i]
    np.testing.assert_allclose(credited + acc.unassigned, total, atol=1e-4)
    assert acc.dones.any() and acc.pending().any()
    values = rng.normal(size=(horizon, n))
    adv, ret = seat_advantages(values, acc, gamma=1.0, lam=1.0)
    t, i = map(int, np.argwhere(acc.dones)[0])
    assert adv[t, i] == pytest.approx(acc.rewards[t, i] - values[t, i], abs=1e-5)
    np.testing.assert_allclose(ret, adv + values, atol=1e-4)


def _run(venv, steps: int, seed: int) -> list:
    rng = np.random.default_rng(seed)
    obs, masks, seats = venv.reset()
    trace = [(obs.copy(), masks.copy(), seats.copy())]
    for _ in range(steps):
        obs, masks, seats, rewards, dones, infos = venv.step(random_actions(rng, masks))
        trace.append((obs.copy(), masks.copy(), seats.copy(), rewards.copy(), dones.copy(), infos))
    return trace


def _assert_same(a: list, b: list) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b):
        for u, v in zip(x, y):
            if isinstance(u, np.ndarray):
                np.testing.assert_array_equal(u, v)
            else:
                assert u == v


def test_parallel_local_equals_vector() -> None:
    single = VectorMahjong("changchun", 5, seed=8)
    expected = _run(single, 250, 3)
    with ParallelVectorMahjong("changchun", 5, num_workers=2, seed=8) as venv:
        assert venv.blocks == [(0, 2), (2, 5)] or venv.blocks == [(0, 3), (3, 5)]
        got = _run(venv, 250, 3)
        assert venv.views([4, 0]) == single.views([4, 0])
        np.testing.assert_array_equal(venv.states(), single.states())
        masks = venv.masks
        bad = int(np.flatnonzero(masks[0] == 0)[0])
        with pytest.raises(ValueError, match="game 0: illegal action"):
            venv.step([bad] + [int(np.flatnonzero(m)[0]) for m in masks[1:]])
    _assert_same(got, expected)
    assert any(d.any() for *_, d, _ in expected[1:])


def test_ray_backend_smoke() -> None:
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    try:
        expected = _run(VectorMahjong("xinjiang", 4, seed=1), 30, 0)
        venv = ParallelVectorMahjong("xinjiang", 4, num_workers=2, seed=1, backend="ray")
        got = _run(venv, 30, 0)
        venv.close()
        _assert_same(got, expected)
    finally:
        ray.shutdown()


@pytest.mark.parametrize("variant", ["xinjiang", "changchun"])
def test_restore_rebuilds_every_game_from_its_episode_and_actions(variant: str) -> None:
    rng = np.random.default_rng(2)
    originals = [VectorMahjong(variant, 4, seed=6, num_hands=2) for _ in range(2)]  # one per rebuilt copy
    for venv in originals:
        venv.reset()
    episodes, actions = [0] * 4, [[] for _ in range(4)]
    for _ in range(300):  # some games end episodes on the way: their actions start again
        acts = random_actions(rng, originals[0].masks)
        dones = originals[0].step(acts)[4].copy()
        originals[1].step(acts)
        for i in range(4):
            episodes[i], actions[i] = (episodes[i] + 1, []) if dones[i] else (episodes[i], [*actions[i], int(acts[i])])
    assert any(episodes) and all(actions)
    with ParallelVectorMahjong(variant, 4, num_workers=2, seed=6, num_hands=2) as workers:
        for original, rebuilt in zip(originals, (VectorMahjong(variant, 4, seed=6, num_hands=2), workers)):
            rebuilt.reset()
            for got, want in zip(rebuilt.restore(episodes, actions), (original.obs, original.masks, original.seats)):
                np.testing.assert_array_equal(got, want)
            assert rebuilt.views() == original.views()
            for _ in range(60):  # and they go on alike
                acts = random_actions(rng, original.masks)
                _assert_same([rebuilt.step(acts)], [original.step(acts)])
