"""Train on the PettingZoo env with RLlib (PPO, one shared policy, action masking).

RLlib's `PettingZooEnv` wrapper turns the AEC env into a multi-agent env; RLlib's
`ActionMaskingTorchRLModule` applies the mask, which it expects under the observation keys
``"observations"`` and ``"action_mask"``, so `RLlibObservations` renames ours and flattens the
planes. All four seats share one policy (self-play with parameter sharing).

    python -m training.rllib_example --variant changchun --iterations 5

Needs the ``ray`` extra: ``pip install -e '.[ray]'``.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo.utils.wrappers import BaseWrapper

__all__ = ["RLlibObservations", "make_env", "build_config", "train", "main"]


class RLlibObservations(BaseWrapper):
    """Observation dict ``{"observations": flat float32, "action_mask": float32}`` for RLlib."""

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        inner = env.observation_space(env.possible_agents[0])["observation"]
        size = int(np.prod(inner.shape))
        self._space = spaces.Dict(
            {
                "observations": spaces.Box(-np.inf, np.inf, (size,), np.float32),
                "action_mask": spaces.Box(0.0, 1.0, (env.action_space(env.possible_agents[0]).n,), np.float32),
            }
        )

    def observation_space(self, agent: str) -> spaces.Space:
        return self._space

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = self.env.observe(agent)
        return {
            "observations": obs["observation"].reshape(-1),
            "action_mask": obs["action_mask"].astype(np.float32),
        }


def make_env(variant: str) -> Any:
    """The RLlib multi-agent env for a variant."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    from mahjong_env.variants import get_variant

    return PettingZooEnv(RLlibObservations(get_variant(variant).env()))


def build_config(variant: str, train_batch_size: int = 2000, hidden: int = 256) -> Any:
    """A PPO config with one shared, action-masked policy for all four seats."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
    from ray.tune.registry import register_env

    name = f"mahjong_{variant}"
    register_env(name, lambda _config: make_env(variant))
    return (
        PPOConfig()
        .environment(name)
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, *args, **kwargs: "shared")
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={
                    "shared": RLModuleSpec(
                        module_class=ActionMaskingTorchRLModule,
                        model_config={"fcnet_hiddens": [hidden, hidden], "head_fcnet_hiddens": [hidden]},
                    )
                }
            )
        )
        .env_runners(num_env_runners=0)
        .training(train_batch_size=train_batch_size, minibatch_size=min(256, train_batch_size), num_epochs=2)
    )


def train(variant: str = "changchun", iterations: int = 5, train_batch_size: int = 2000) -> list[dict[str, Any]]:
    """Run PPO for some iterations; returns RLlib's result dicts."""
    import ray

    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    algo = build_config(variant, train_batch_size).build_algo()
    results = []
    try:
        for i in range(iterations):
            result = algo.train()
            results.append(result)
            runners = result.get("env_runners", {})
            print(
                f"iteration {i + 1}: env steps {runners.get('num_env_steps_sampled_lifetime')}, "
                f"episode return mean {runners.get('episode_return_mean')}"
            )
    finally:
        algo.stop()
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", choices=["xinjiang", "changchun"], default="changchun")
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--train-batch-size", type=int, default=2000)
    args = parser.parse_args(argv)
    train(args.variant, args.iterations, args.train_batch_size)


if __name__ == "__main__":
    main()
