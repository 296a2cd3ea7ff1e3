"""Opponent policies for the single-agent envs, without a dependency on any agent package.

The environment package never imports ``agents`` (or any other agent code). A policy given by
name is resolved through the ``mahjong_env.policies`` entry-point group: an entry ``kind =
"package.module:factory"`` declares that spec strings of that kind (``"kind"`` or
``"kind:argument..."``, the part before the first ``:`` or ``?``) are built by
``factory(spec, seed=seed)``. This distribution's ``pyproject.toml`` declares ``random``,
``heuristic``, ``torch``, ``sb3`` and ``rllib`` (all built by ``agents.load``); another package
can add its own kinds the same way. Anything else is passed as an object: an agent with
``act(observation, info)`` (``agents.load("mymodule:MyAgent")`` gives one) or a callable taking
the observation dict.

`policy_kinds` lists the registered kinds, `check_policy_spec` validates a spec without
building anything, `build_policy` builds one, and `decision_info` is the ``info`` an agent
receives with each observation (its readable view, the variant and the rule fields), the same
as ``agents.agent_info`` gives it in the tournament.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from typing import Any

import numpy as np

from mahjong_env.variants import get_variant

__all__ = ["ENTRY_POINT_GROUP", "CallablePolicy", "build_policy", "check_policy_spec", "decision_info", "policy_kinds"]

ENTRY_POINT_GROUP = "mahjong_env.policies"


def _entry_points() -> dict[str, EntryPoint]:
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def policy_kinds() -> list[str]:
    """The policy spec kinds registered in the ``mahjong_env.policies`` entry-point group."""
    return sorted(_entry_points())


def _kind(spec: str) -> str:
    return spec.strip().partition("?")[0].partition(":")[0]


def check_policy_spec(spec: Any) -> None:
    """ValueError unless ``spec`` is a string whose kind is registered (nothing is built)."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"a policy name must be a non-empty string, got {spec!r}")
    kinds = policy_kinds()
    if _kind(spec) not in kinds:
        if not kinds:
            raise ValueError(
                f"policy {spec!r}: no policy names are registered in the {ENTRY_POINT_GROUP!r} entry-point group "
                "(install the package: pip install -e .), so pass an agent object or a callable"
            )
        raise ValueError(
            f"unknown policy {spec!r}: valid names are {', '.join(kinds)} (e.g. 'heuristic', 'torch:path/to/ckpt.pt'); "
            "or pass an agent object with act(observation, info) or a callable taking the observation dict"
        )


def build_policy(spec: str, seed: int) -> Any:
    """Build the agent a registered spec names, seeded with ``seed``."""
    check_policy_spec(spec)
    factory: Callable[..., Any] = _entry_points()[_kind(spec)].load()
    agent = factory(spec.strip(), seed=seed)
    if not callable(getattr(agent, "act", None)):
        raise ValueError(
            f"policy {spec!r}: its factory built {type(agent).__name__}, which has no act(observation, info)"
        )
    return agent


def decision_info(env: Any, agent: str) -> dict[str, Any]:
    """The ``info`` an agent gets with its observation: its readable view, the variant name and
    the rule fields (``config``: public, every player knows the rules being played)."""
    raw = env.unwrapped
    return {"view": raw.view(agent), "variant": get_variant(raw.metadata["name"]).name, "config": raw.config.to_dict()}


class CallablePolicy:
    """An agent around a callable that takes the observation dict and returns an action id."""

    def __init__(self, fn: Callable[[dict[str, np.ndarray]], int]) -> None:
        self.fn = fn

    def act(self, observation: dict[str, np.ndarray], info: dict[str, Any] | None = None) -> int:
        return self.fn(observation)

    def reset(self) -> None:
        return None
