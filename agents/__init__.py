"""Baseline agents and the tournament runner.

``agents.load(spec)`` builds an agent from a string:

- ``"random"``: `RandomAgent`, uniform over legal actions;
- ``"heuristic"``: `HeuristicAgent`, the rule-based baseline;
- ``"torch:path/to/ckpt.pt"``: `TorchAgent` from a checkpoint (``torch.load(weights_only=True)``);
- ``"module.path:ClassName"``: a user agent class, built with no arguments.
"""

from __future__ import annotations

import importlib
from typing import Any

from agents.base import Agent, agent_info
from agents.random_agent import RandomAgent

__all__ = ["Agent", "RandomAgent", "agent_info", "load"]


def load(spec: str, seed: int | None = 0, **kwargs: Any) -> Agent:
    """Build an agent from a spec string (see the module docstring); ValueError if unknown."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec must be a non-empty string, got {spec!r}")
    spec = spec.strip()
    if spec == "random":
        return RandomAgent(seed=seed)
    if spec == "heuristic":
        from agents.heuristic import HeuristicAgent

        return HeuristicAgent(seed=seed, **kwargs)
    if spec.startswith("torch:"):
        path = spec[len("torch:") :]
        try:
            from agents.torch_agent import TorchAgent
        except ImportError as error:
            raise ValueError(f"agent spec {spec!r} needs PyTorch: pip install -e '.[train]' ({error})") from None
        return TorchAgent.from_checkpoint(path, seed=seed, **kwargs)
    if ":" in spec:
        module_name, _, class_name = spec.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:
            raise ValueError(f"agent spec {spec!r}: cannot import module {module_name!r} ({error})") from None
        cls = getattr(module, class_name, None)
        if cls is None:
            raise ValueError(f"agent spec {spec!r}: module {module_name!r} has no {class_name!r}")
        agent = cls(**kwargs)
        if not callable(getattr(agent, "act", None)):
            raise ValueError(f"agent spec {spec!r}: {class_name} has no act(observation, info) method")
        return agent
    raise ValueError(
        f"unknown agent spec {spec!r}: use 'random', 'heuristic', 'torch:path/to/ckpt.pt' "
        "or 'module.path:ClassName'"
    )
