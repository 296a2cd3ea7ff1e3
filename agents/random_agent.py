"""`RandomAgent`: uniform over the legal actions, seeded."""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.base import Agent

__all__ = ["RandomAgent"]


class RandomAgent(Agent):
    name = "random"

    def __init__(self, seed: int | None = 0) -> None:
        self._seed = seed
        self.rng = np.random.default_rng(seed)

    def act(self, observation: dict[str, np.ndarray], info: dict[str, Any] | None = None) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        if len(legal) == 0:
            raise ValueError("RandomAgent.act: the action mask has no legal action")
        return int(legal[self.rng.integers(len(legal))])
