"""RLlib smoke test: PPO through RLlib's PettingZoo wrapper with action masking (skipped only
when the ``ray`` extra is not installed)."""

from __future__ import annotations

import pytest

pytest.importorskip("ray.rllib")


def test_rllib_ppo_trains_one_iteration_with_masking():
    from training.rllib_example import make_env, train

    env = make_env("changchun")
    obs, _ = env.reset(seed=1)
    (agent, first), = obs.items()
    assert set(first) == {"observations", "action_mask"} and first["action_mask"].sum() >= 1
    results = train("changchun", iterations=1, train_batch_size=400)
    runners = results[0]["env_runners"]
    assert runners["num_env_steps_sampled_lifetime"] >= 400
