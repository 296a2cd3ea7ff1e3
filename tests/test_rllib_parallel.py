"""RLlib multi-agent PPO on the parallel env (``changchun_v0.parallel_env()``) through RLlib's
``ParallelPettingZooEnv``, with action masking: one training iteration on RLlib's current API
stack (RLModule, EnvRunner) that emits no deprecation warning. Skipped when the ``ray`` extra is
not installed. `build_config` is the snippet docs/api.md points to; the masking module is
`training.rllib_module.ActionMaskingPPOModule`, which reads the env's own planes too."""

from __future__ import annotations

import logging
import warnings

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

from training.rllib_module import ActionMaskingPPOModule  # after the skip: needs ray


def make_rllib_env(_config=None):
    """Changchun's parallel env as an RLlib multi-agent env. ``illegal_action="penalize"``: RLlib's
    env check steps one unmasked random action."""
    from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv

    from mahjong_env import changchun_v0

    return ParallelPettingZooEnv(changchun_v0.parallel_env(illegal_action="penalize"))


def build_config(train_batch_size: int):
    """One shared policy for the four seats, masked PPO, sampling in the driver."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    register_env("changchun_parallel", make_rllib_env)
    return (
        PPOConfig()
        .environment("changchun_parallel")
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, episode, **kwargs: "shared")
        .rl_module(
            rl_module_spec=RLModuleSpec(
                module_class=ActionMaskingPPOModule,
                model_config={"fcnet_hiddens": [32], "head_fcnet_hiddens": [32]},
            )
        )
        .env_runners(num_env_runners=0)
        .training(train_batch_size=train_batch_size, minibatch_size=128, num_epochs=1)
    )


def test_the_rllib_env_observes_every_seat_and_ignores_the_others_actions():
    env = make_rllib_env()
    obs, _ = env.reset(seed=3)
    assert set(obs) == {f"player_{i}" for i in range(4)}
    movers = [agent for agent, o in obs.items() if o["action_mask"].any()]
    assert len(movers) == 1
    assert all(env.observation_space[agent].contains(o) for agent, o in obs.items())
    actions = {agent: 181 for agent in obs}  # RLlib sends an action for every agent it observed
    actions[movers[0]] = int(np.flatnonzero(obs[movers[0]]["action_mask"])[0])
    obs, rewards, terminateds, truncateds, _ = env.step(actions)
    assert set(rewards) == set(obs) == {f"player_{i}" for i in range(4)}
    assert terminateds["__all__"] is False and truncateds["__all__"] is False


def test_rllib_ppo_one_iteration_on_the_parallel_env(caplog):
    import ray

    ray.init(num_cpus=2, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    try:
        with warnings.catch_warnings(record=True) as caught, caplog.at_level(logging.WARNING):
            warnings.simplefilter("always")
            algo = build_config(train_batch_size=256).build_algo()
            try:
                result = algo.train()
            finally:
                algo.stop()
    finally:
        ray.shutdown()
    runners = result["env_runners"]
    assert runners["num_env_steps_sampled_lifetime"] >= 256
    # every seat observes every step (its mask zero while another seat decides)
    assert runners["num_agent_steps_sampled_lifetime"] == {
        f"player_{i}": runners["num_env_steps_sampled_lifetime"] for i in range(4)
    }
    assert runners["num_episodes_lifetime"] >= 1
    assert np.isfinite(runners["episode_return_mean"])
    assert result["learners"]["shared"]["num_module_steps_trained"] > 0
    deprecations = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    deprecations += [r.getMessage() for r in caplog.records if "deprecat" in r.getMessage().lower()]
    # RLlib 2.60's own RLModule constructor builds an RLModuleConfig, which warns for every module
    # (RLlib's default PPO module on CartPole too): not a call of ours
    deprecations = [m for m in deprecations if "RLModule(config=[RLModuleConfig object])" not in m]
    assert not deprecations, deprecations
