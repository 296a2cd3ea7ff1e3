"""Misbehaving agents for testing the tournament runner (and a user's fault handling).

Each plays uniformly at random over the legal actions and misbehaves on its third decision of
a hand (`MisbehavingAgent`, also the base of the hostile agents in
``tests/test_hostile_agents.py``): `CrashingAgent` raises (in about half of its hands, drawn
from its per-hand seed), `IllegalAgent` returns an action that is not legal, `SlowAgent` sleeps
``SlowAgent.delay`` seconds. `DieOnceAgent` kills its own process on its first decision if the
file named by ``$MAHJONG_TOURNAMENT_DIE_ONCE`` does not exist yet (it creates it), to test that
a dead worker's hand is played again.
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

from agents.random_agent import RandomAgent

__all__ = ["CrashingAgent", "DieOnceAgent", "IllegalAgent", "MisbehavingAgent", "SlowAgent"]


class MisbehavingAgent(RandomAgent):
    """Random play that calls `misbehave` on decision ``at_decision`` of a hand, in a share
    ``probability`` of hands (drawn from the per-hand seed); subclasses say how."""

    at_decision = 3
    probability = 1.0

    def __init__(self, seed: int | None = 0, probability: float | None = None) -> None:
        super().__init__(seed)
        if probability is not None:
            self.probability = float(probability)
        self.decisions = 0
        self.misbehaving = True

    def seed(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        self.decisions = 0
        self.misbehaving = self.rng.random() < self.probability

    def act(self, observation: dict[str, np.ndarray], info: dict[str, Any] | None = None) -> int:
        self.decisions += 1
        if self.misbehaving and self.decisions == self.at_decision:
            return self.misbehave(observation)
        return super().act(observation, info)

    def misbehave(self, observation: dict[str, np.ndarray]) -> int:
        raise NotImplementedError


class CrashingAgent(MisbehavingAgent):
    probability = 0.5

    def misbehave(self, observation: dict[str, np.ndarray]) -> int:
        raise RuntimeError("CrashingAgent crashes on purpose")


class IllegalAgent(MisbehavingAgent):
    def misbehave(self, observation: dict[str, np.ndarray]) -> int:
        return int(np.flatnonzero(observation["action_mask"] == 0)[0])


class SlowAgent(MisbehavingAgent):
    delay = 1.0

    def misbehave(self, observation: dict[str, np.ndarray]) -> int:
        time.sleep(self.delay)
        return int(np.flatnonzero(observation["action_mask"])[0])


class DieOnceAgent(RandomAgent):
    def act(self, observation: dict[str, np.ndarray], info: dict[str, Any] | None = None) -> int:
        marker = os.environ.get("MAHJONG_TOURNAMENT_DIE_ONCE")
        if marker and not os.path.exists(marker):
            with open(marker, "w") as f:
                f.write(str(os.getpid()))
            os._exit(17)
        return super().act(observation, info)
