"""`ActionMaskingPPOModule`: RLlib's default PPO torch module with action masking (RLlib's current
API: `DefaultPPOTorchRLModule`), for `training.rllib_example`.

The env's observation is a dict of the planes and ``"action_mask"`` (0/1 per action): either
``"observations"``, the planes flattened (`training.rllib_example.RLlibObservations`), or
``"observation"``, the env's own ``(C, 34)`` planes (``parallel_env()`` through RLlib's
``ParallelPettingZooEnv``), flattened here. The module builds PPO's default encoder, policy and
value heads for the planes only, and adds ``log(mask)`` (clamped to the lowest
float) to the policy's logits, so illegal actions are never sampled and get no gradient. A saved
module reloads through ``RLModule.from_checkpoint`` (`agents.adapters.RLlibAgent`), which imports
this class by name: it needs the ``ray`` extra.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import torch
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core.columns import Columns
from ray.rllib.utils.torch_utils import FLOAT_MIN

__all__ = ["ActionMaskingPPOModule"]

OBSERVATIONS = "observations"
PLANES = "observation"
ACTION_MASK = "action_mask"


class ActionMaskingPPOModule(DefaultPPOTorchRLModule):
    """PPO's default torch RLModule over the planes of a dict observation, its logits masked by
    the ``"action_mask"`` (module docstring)."""

    def __init__(self, *, observation_space: gym.Space | None = None, **kwargs: Any) -> None:
        keys = set(observation_space.spaces) if isinstance(observation_space, gym.spaces.Dict) else set()
        if keys == {OBSERVATIONS, ACTION_MASK}:
            self.planes_key, planes = OBSERVATIONS, observation_space[OBSERVATIONS]
        elif keys == {PLANES, ACTION_MASK}:
            box = observation_space[PLANES]
            self.planes_key, planes = PLANES, gym.spaces.Box(box.low.ravel(), box.high.ravel(), dtype=box.dtype)
        else:
            raise ValueError(
                f"ActionMaskingPPOModule needs a Dict observation space with {ACTION_MASK!r} and {OBSERVATIONS!r} "
                f"(flat planes) or {PLANES!r} (the env's planes), got {observation_space!r}"
            )
        self.masked_observation_space = observation_space
        super().__init__(observation_space=planes, **kwargs)

    def setup(self) -> None:
        super().setup()  # the networks, built for the planes
        self.observation_space = self.masked_observation_space  # what the env gives and a checkpoint stores

    def _split(self, batch: dict[str, Any]) -> tuple[torch.Tensor, dict[str, Any]]:
        """(the action mask, a shallow copy of the batch whose observation is the flat planes)."""
        obs = batch[Columns.OBS]
        if not isinstance(obs, dict):
            raise ValueError(f"ActionMaskingPPOModule: the batch's observation is not a dict with {ACTION_MASK!r}")
        planes = obs[self.planes_key]
        if self.planes_key == PLANES:
            planes = planes.flatten(start_dim=-2)
        return obs[ACTION_MASK], {**batch, Columns.OBS: planes}

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, batch = self._split(batch)
        return _masked(super()._forward(batch, **kwargs), mask)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, batch = self._split(batch)
        return _masked(super()._forward_train(batch, **kwargs), mask)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        if embeddings is None:
            _, batch = self._split(batch)
        return super().compute_values(batch, embeddings)


def _masked(output: dict[str, Any], mask: torch.Tensor) -> dict[str, Any]:
    output[Columns.ACTION_DIST_INPUTS] = output[Columns.ACTION_DIST_INPUTS] + torch.clamp(
        torch.log(mask.float()), min=FLOAT_MIN
    )
    return output
