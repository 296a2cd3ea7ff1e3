"""Train on the PettingZoo env with RLlib (PPO, action masking), against a fixed opponent.

RLlib's `PettingZooEnv` wrapper turns the AEC env into a multi-agent env; RLlib's
`ActionMaskingTorchRLModule` applies the mask, which it expects under the observation keys
``"observations"`` and ``"action_mask"``, so `RLlibObservations` renames ours and flattens the
planes.

Who learns. Seat ``player_0`` is played by the ``learner`` module, the three other seats by
``opponent``, a module of the same shape that is never trained (its initial weights: close to
uniform over the legal actions). So the learner's mean episode return is its points per hand
against a fixed opponent, and it rises as it learns. (With one shared policy in every seat, the
mean return over seats is zero by construction in a zero-sum game and says nothing.)

At the end the algorithm is saved to ``--checkpoint`` with a ``mahjong_meta.json`` that names
the variant and the module, so the checkpoint enters a tournament directly::

    python -m training.rllib_example --variant changchun --iterations 5 --checkpoint runs/rllib/changchun
    mahjong-tournament --variant changchun --agents rl=rllib:runs/rllib/changchun random heuristic

PyTorch, OpenMP and BLAS use one thread (set before they load, also for Ray's workers): on a
small machine more threads only contend (80–109 s per iteration with the defaults on 2 cores,
about 8 s with one thread). Needs the ``ray`` extra: ``pip install -e '.[ray]'``.
"""

from __future__ import annotations

import os

_THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
for _name in _THREAD_VARIABLES:  # before numpy, torch or ray load their thread pools
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from gymnasium import spaces  # noqa: E402
from pettingzoo.utils.wrappers import BaseWrapper  # noqa: E402

__all__ = ["LEARNER", "OPPONENT", "RLlibObservations", "build_config", "learner_return", "main", "make_env", "train"]

LEARNER = "learner"
OPPONENT = "opponent"
LEARNER_SEAT = "player_0"


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


def _policy(agent_id: str, *args: Any, **kwargs: Any) -> str:
    return LEARNER if agent_id == LEARNER_SEAT else OPPONENT


def build_config(variant: str, train_batch_size: int = 2000, hidden: int = 256) -> Any:
    """A PPO config: the trained ``learner`` in seat 0, the fixed ``opponent`` in the others."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
    from ray.tune.registry import register_env

    name = f"mahjong_{variant}"
    register_env(name, lambda _config: make_env(variant))
    module = {"fcnet_hiddens": [hidden, hidden], "head_fcnet_hiddens": [hidden]}
    return (
        PPOConfig()
        .environment(name)
        .multi_agent(policies={LEARNER, OPPONENT}, policy_mapping_fn=_policy, policies_to_train=[LEARNER])
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={
                    key: RLModuleSpec(module_class=ActionMaskingTorchRLModule, model_config=module)
                    for key in (LEARNER, OPPONENT)
                }
            )
        )
        .env_runners(num_env_runners=0)
        .training(train_batch_size=train_batch_size, minibatch_size=min(256, train_batch_size), num_epochs=2)
    )


def learner_return(result: dict[str, Any]) -> float:
    """The learner's mean episode return (points per hand against the fixed opponent) in one
    iteration's result; NaN when no episode finished in it."""
    runners = result.get("env_runners", {})
    value = (runners.get("module_episode_returns_mean") or {}).get(LEARNER)
    if value is None:
        value = (runners.get("agent_episode_returns_mean") or {}).get(LEARNER_SEAT)
    return float(value) if value is not None else math.nan


def train(
    variant: str = "changchun",
    iterations: int = 5,
    train_batch_size: int = 2000,
    checkpoint: str | Path | None = None,
) -> list[dict[str, Any]]:
    """Run PPO for some iterations, printing the learner's return; save the algorithm to
    ``checkpoint`` (if given) with ``mahjong_meta.json``. Returns RLlib's result dicts."""
    import ray
    import torch

    torch.set_num_threads(1)
    if not ray.is_initialized():
        ray.init(
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            runtime_env={"env_vars": {name: "1" for name in _THREAD_VARIABLES}},
        )
    algo = build_config(variant, train_batch_size).build_algo()
    results = []
    try:
        for i in range(iterations):
            started = time.perf_counter()
            result = algo.train()
            results.append(result)
            runners = result.get("env_runners", {})
            print(
                f"iteration {i + 1}: env steps {runners.get('num_env_steps_sampled_lifetime')}, "
                f"learner return mean {learner_return(result):+.3f} points per hand vs the fixed opponent "
                f"({time.perf_counter() - started:.1f} s)"
            )
        if checkpoint is not None:
            path = Path(checkpoint).resolve()
            algo.save_to_path(str(path))
            (path / "mahjong_meta.json").write_text(json.dumps({"variant": variant, "module": LEARNER}))
            print(f"checkpoint: {path} (tournament spec: rllib:{path})")
    finally:
        algo.stop()
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", choices=["xinjiang", "changchun"], default="changchun")
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--train-batch-size", type=int, default=2000)
    parser.add_argument(
        "--checkpoint", metavar="DIR", help="save the trained algorithm here (default runs/rllib/VARIANT)"
    )
    args = parser.parse_args(argv)
    if args.iterations < 1:
        parser.error(f"--iterations must be at least 1, got {args.iterations}")
    if args.train_batch_size < 1:
        parser.error(f"--train-batch-size must be at least 1, got {args.train_batch_size}")
    train(args.variant, args.iterations, args.train_batch_size, args.checkpoint or Path("runs", "rllib", args.variant))


if __name__ == "__main__":
    main()
