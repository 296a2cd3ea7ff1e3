"""`TorchAgent`: plays a trained `agents.network.PolicyNetwork` from a data-only checkpoint.

It sees only its observation dict (planes and action mask); ``info`` is not needed. Greedy by
default (the most probable legal action); ``greedy=False`` samples from the masked policy with
its own seeded generator, so a given seed replays the same choices on CPU and GPU.
``act_batch`` runs one forward pass for many observations.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.base import Agent
from agents.network import PolicyNetwork, load_checkpoint, masked_logits

__all__ = ["TorchAgent", "resolve_device"]


def resolve_device(device: str | torch.device) -> torch.device:
    """``"auto"`` → CUDA when available, else CPU; anything else as ``torch.device``."""
    if isinstance(device, str) and device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        return torch.device(device)
    except (RuntimeError, TypeError) as error:
        raise ValueError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got {device!r} ({error})") from None


class TorchAgent(Agent):
    """A policy network as an `Agent`; build one with `from_checkpoint` or from a network."""

    name = "torch"

    def __init__(
        self,
        network: PolicyNetwork,
        *,
        variant: str | None = None,
        device: str | torch.device = "auto",
        greedy: bool = True,
        seed: int | None = 0,
    ) -> None:
        self.device = resolve_device(device)
        self.network = network.to(self.device).eval()
        self.variant = variant
        self.greedy = greedy
        self._seed = seed
        self.rng = np.random.default_rng(seed)
        self._warned = False

    @classmethod
    def from_checkpoint(
        cls, path: str | Path, *, seed: int | None = 0, device: str | torch.device = "auto", greedy: bool = True
    ) -> TorchAgent:
        """Load a checkpoint written by `agents.network.save_checkpoint` (``weights_only=True``)."""
        target = resolve_device(device)
        network, meta = load_checkpoint(path, target)
        agent = cls(network, variant=meta.get("variant"), device=target, greedy=greedy, seed=seed)
        agent.name = f"torch:{Path(path).name}"
        return agent

    def reset(self) -> None:
        return None

    def seed(self, seed: int | None) -> None:
        """Re-seed: the agent then plays as ``from_checkpoint(path, seed=seed)`` would (the
        tournament re-seeds one loaded agent per hand instead of loading it again)."""
        self._seed = seed
        self.rng = np.random.default_rng(seed)

    def act(self, observation: dict[str, np.ndarray], info: dict[str, Any] | None = None) -> int:
        return self.act_batch([observation], [info])[0]

    def act_batch(
        self, observations: list[dict[str, np.ndarray]], infos: list[dict[str, Any] | None] | None = None
    ) -> list[int]:
        if not observations:
            return []
        self._check_variant(infos)
        obs = torch.from_numpy(np.stack([o["observation"] for o in observations]).astype(np.float32, copy=False))
        mask = np.stack([o["action_mask"] for o in observations])
        if not mask.any(axis=1).all():
            raise ValueError("TorchAgent.act: an action mask has no legal action")
        with torch.inference_mode():
            logits, _ = self.network(obs.to(self.device))
            logits = masked_logits(logits, torch.from_numpy(mask).to(self.device)).float().cpu().numpy()
        if not self.greedy:  # Gumbel-max: a sample from the masked softmax, from our own generator
            logits = logits + self.rng.gumbel(size=logits.shape)
            logits[mask == 0] = -np.inf
        return [int(a) for a in logits.argmax(axis=1)]

    def _check_variant(self, infos: list[dict[str, Any] | None] | None) -> None:
        if self._warned or not infos or self.variant is None:
            return
        played = next((i.get("variant") for i in infos if i), None)
        if played is not None and played != self.variant:
            self._warned = True
            warnings.warn(
                f"TorchAgent trained on {self.variant!r} is playing {played!r}; it will play, but badly",
                stacklevel=3,
            )
