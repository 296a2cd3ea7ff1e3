"""The agent protocol every baseline, user agent and tournament entrant follows.

An agent sees what one player may see (RULES.md R13): its observation dict
(``{"observation", "action_mask"}``) and an ``info`` dict that carries its readable view of the
table under ``"view"`` (API.md ``view(agent)``), the variant name under ``"variant"`` and the
rule fields under ``"config"``. Never the env object, never ``state()``. The tournament holds
its entrants to this: every agent gets copies, and an entrant that is not this package's own
code plays in its own process, which receives only these two dicts (`agents.sandbox`).
"""

from __future__ import annotations

import random
import sys
from typing import Any

import numpy as np

from mahjong_env.variants import get_variant

__all__ = ["Agent", "agent_info", "seed_globals"]


class Agent:
    """Base class: subclasses implement `act`; `reset` is called at the start of every hand."""

    name: str = "agent"

    def act(self, observation: dict[str, np.ndarray], info: dict[str, Any] | None = None) -> int:
        raise NotImplementedError

    def act_batch(
        self, observations: list[dict[str, np.ndarray]], infos: list[dict[str, Any] | None] | None = None
    ) -> list[int]:
        """Actions for several decisions at once (override where batching pays off)."""
        infos = infos if infos is not None else [None] * len(observations)
        return [self.act(o, i) for o, i in zip(observations, infos)]

    def reset(self) -> None:
        return None


def agent_info(env: Any, agent: str) -> dict[str, Any]:
    """The ``info`` an agent receives: its own view of the table, the variant name and the
    rule fields (``config``: public, every player knows the rules being played)."""
    raw = env.unwrapped
    return {"view": raw.view(agent), "variant": get_variant(raw.metadata["name"]).name, "config": raw.config.to_dict()}


def seed_globals(seed: int) -> None:
    """Seed Python's, NumPy's global and (if imported) PyTorch's generators: what the tournament
    does before an entrant plays, in its own process or the coordinator's."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)
