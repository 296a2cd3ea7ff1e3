"""Registration in RL frameworks: Gymnasium (check_env, make_vec sync and async, action_masks,
render modes), Stable-Baselines3's make_vec_env (DummyVecEnv and SubprocVecEnv) and
sb3-contrib's MaskablePPO."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import mahjong_env  # noqa: F401  (registers the environments)
from mahjong_env.adapters.picture import table_picture
from mahjong_env.view import table_view

GYM_IDS = ["mahjong_env/Xinjiang-v0", "mahjong_env/Changchun-v0"]


@pytest.mark.parametrize("env_id", GYM_IDS)
def test_gymnasium_check_env(env_id):
    env = gym.make(env_id)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=True)


@pytest.mark.parametrize("env_id", GYM_IDS)
def test_gymnasium_episode_rewards_match_result(env_id):
    env = gym.make(env_id, opponents="random", seat=2)
    _obs, info = env.reset(seed=11)
    assert info["seat"] == 2
    total, done = 0.0, False
    while not done:
        mask = env.unwrapped.action_masks()
        assert mask.dtype == bool and mask.any()
        assert (mask == info["action_mask"].astype(bool)).all()
        _, reward, done, _, info = env.step(int(np.flatnonzero(mask)[-1]))
        total += reward
    result = info["result"]
    assert total == pytest.approx(result["deltas"][2] + result["kong_deltas"][2])


def test_gymnasium_opponents_forms_and_errors():
    calls = []

    def first_legal(observation):
        calls.append(1)
        return int(np.flatnonzero(observation["action_mask"])[0])

    env = gym.make("mahjong_env/Changchun-v0", opponents=[first_legal, "random", "random"], seat=0)
    env.reset(seed=3)
    for _ in range(20):
        _, _, done, _, _ = env.step(int(np.flatnonzero(info_mask(env))[0]))
        if done:
            break
    assert calls
    with pytest.raises(ValueError, match="opponents"):
        gym.make("mahjong_env/Changchun-v0", opponents=["random", "random"])
    with pytest.raises(ValueError, match="seat"):
        gym.make("mahjong_env/Xinjiang-v0", seat=7)


def info_mask(env):
    return env.unwrapped.action_masks()


def test_gymnasium_make_vec():
    envs = gym.make_vec("mahjong_env/Changchun-v0", num_envs=3, vectorization_mode="sync")
    obs, info = envs.reset(seed=0)
    assert obs.shape[0] == 3
    for _ in range(30):
        # a finished sub-env shows an empty mask; its next step is the autoreset (action ignored)
        actions = [int(np.flatnonzero(m)[0]) if m.any() else 0 for m in info["action_mask"]]
        obs, rewards, _, _, info = envs.step(np.array(actions))
        assert rewards.shape == (3,)
    envs.close()


def _evaluate(policy, env_id, episodes, seed):
    """Mean reward per episode, and how often `win` was legal and how often it was taken."""
    env = gym.make(env_id, opponents="random", seat="random")
    total, offered, taken = 0.0, 0, 0
    for episode in range(episodes):
        obs, _info = env.reset(seed=seed + episode)
        done = False
        while not done:
            mask = env.unwrapped.action_masks()
            action = policy(obs, mask)
            offered += bool(mask[175])
            taken += bool(mask[175]) and action == 175
            obs, reward, done, _, _ = env.step(action)
            total += reward
    return total / episodes, offered, taken


def test_sb3_maskable_ppo_learns():
    """MaskablePPO trained a few thousand steps against random opponents beats a uniformly
    random learner on the same deals."""
    sb3 = pytest.importorskip("sb3_contrib")
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    torch.set_num_threads(1)  # small network: one thread is fastest and leaves the other core free
    env = gym.make("mahjong_env/Changchun-v0", opponents="random", seat="random")
    model = sb3.MaskablePPO("MlpPolicy", env, n_steps=512, batch_size=128, n_epochs=4, seed=0, verbose=0)
    model.learn(total_timesteps=4096)
    rng = np.random.default_rng(0)

    def trained(obs, mask):
        return int(model.predict(obs, action_masks=mask, deterministic=True)[0])

    def uniform(obs, mask):
        return int(rng.choice(np.flatnonzero(mask)))

    learned, offered, taken = _evaluate(trained, "mahjong_env/Changchun-v0", 100, 1000)
    baseline, _, _ = _evaluate(uniform, "mahjong_env/Changchun-v0", 100, 1000)
    assert learned > baseline, (learned, baseline)
    # it takes every win it is offered (how often a win comes up depends on what the short run
    # learned: 0 to 7 times in these 100 deals across training seeds)
    assert taken == offered


def _masked_choices(masks, rng):
    return np.array([int(rng.choice(np.flatnonzero(m))) for m in masks])


def test_sb3_make_vec_env_dummy_with_maskable_ppo():
    """SB3's standard recipe (make_vec_env passes render_mode="rgb_array") trains MaskablePPO."""
    sb3 = pytest.importorskip("sb3_contrib")
    torch = pytest.importorskip("torch")
    from stable_baselines3.common.env_util import make_vec_env

    torch.manual_seed(0)
    venv = make_vec_env("mahjong_env/Changchun-v0", n_envs=2, seed=0, env_kwargs={"opponents": "random"})
    assert venv.render_mode == "rgb_array"
    model = sb3.MaskablePPO("MlpPolicy", venv, n_steps=128, batch_size=64, n_epochs=1, seed=0, verbose=0)
    model.learn(total_timesteps=256)
    assert model.num_timesteps >= 256
    frames = venv.get_images()
    assert len(frames) == 2 and all(f.dtype == np.uint8 and f.ndim == 3 and f.shape[2] == 3 for f in frames)
    venv.close()


def test_sb3_make_vec_env_subproc():
    """SubprocVecEnv builds each env in a fresh process (forkserver) from the id and kwargs: the
    "module:id" form imports mahjong_env there (pytest's main module does not); opponents named
    as strings are built in the worker."""
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import SubprocVecEnv

    venv = make_vec_env(
        "mahjong_env:mahjong_env/Changchun-v0",
        n_envs=2,
        seed=0,
        env_kwargs={"opponents": "heuristic"},
        vec_env_cls=SubprocVecEnv,
    )
    try:
        rng = np.random.default_rng(0)
        venv.reset()
        episodes = 0
        for _ in range(300):
            masks = np.stack(venv.env_method("action_masks"))
            assert masks.shape == (2, 182) and masks.any(axis=1).all()
            _, _, dones, infos = venv.step(_masked_choices(masks, rng))
            for done, info in zip(dones, infos):
                if done:  # SB3 resets at once; the finished episode's result is in its info
                    episodes += 1
                    assert "result" in info and info["result"]["outcome"] in ("win", "draw")
        assert episodes >= 2
        frames = venv.get_images()
        assert len(frames) == 2 and frames[0].shape == frames[1].shape and frames[0].dtype == np.uint8
    finally:
        venv.close()


def test_gymnasium_make_vec_async_with_rgb_frames():
    envs = gym.make_vec(
        "mahjong_env/Changchun-v0", num_envs=2, vectorization_mode="async", render_mode="rgb_array", opponents="random"
    )
    try:
        _obs, info = envs.reset(seed=0)
        first = envs.render()
        rng = np.random.default_rng(0)
        for _ in range(60):
            masks = info["action_mask"].astype(bool)
            actions = [int(rng.choice(np.flatnonzero(m))) if m.any() else 0 for m in masks]  # empty: autoreset step
            _, _, _, _, info = envs.step(np.array(actions))
        later = envs.render()
        assert len(first) == len(later) == 2
        assert all(f.shape == first[0].shape and f.dtype == np.uint8 for f in first + later)
        assert not np.array_equal(first[0], later[0])
    finally:
        envs.close()


@pytest.mark.filterwarnings("ignore:.*render_mode='video'")  # Gymnasium's own warning before ours raises
@pytest.mark.parametrize("env_id", GYM_IDS)
def test_gymnasium_check_env_renders_every_mode(env_id):
    for mode in ("rgb_array", "ansi"):
        env = gym.make(env_id, render_mode=mode)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            check_env(env.unwrapped)
    with pytest.raises(ValueError, match="render_mode"):
        gym.make(env_id, render_mode="video")


def test_gymnasium_rgb_frames_show_the_learners_view_and_change_with_the_game():
    env = gym.make("mahjong_env/Xinjiang-v0", render_mode="rgb_array", seat=1)
    env.reset(seed=2)
    first = env.render()
    assert first.dtype == np.uint8 and first.ndim == 3 and first.shape[2] == 3
    env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
    second = env.render()
    assert second.shape == first.shape and not np.array_equal(first, second)
    # the learner's view, not the full table (R13)
    raw = env.unwrapped.aec
    np.testing.assert_array_equal(second, table_picture(raw.view("player_1"), "xinjiang_v0"))
    assert not np.array_equal(second, table_picture(table_view(raw.game, None, True), "xinjiang_v0"))


def test_gymnasium_human_mode_prints_the_learners_view_each_step(capsys):
    env = gym.make("mahjong_env/Changchun-v0", render_mode="human", seat=0)
    env.reset(seed=4)
    shown = capsys.readouterr().out
    assert shown.strip() == env.unwrapped.aec.render_view("player_0")
    env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
    assert capsys.readouterr().out.strip() == env.unwrapped.aec.render_view("player_0")
    assert env.render() is None
