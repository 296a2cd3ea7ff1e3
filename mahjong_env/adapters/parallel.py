"""PettingZoo's Parallel API over the AEC env, one mover at a time (``parallel_env()``).

For frameworks that accept only parallel environments (Sample Factory, PufferLib, RLlib's
``ParallelPettingZooEnv``). It is PettingZoo's turn-based conversion
(``pettingzoo.utils.conversions.turn_based_aec_to_parallel``) written out over
`mahjong_env.adapters.aec.MahjongEnv`, which keeps every rule, check and record:

- Every live agent is in each step's observations, rewards, terminations, truncations and
  infos. Its observation is exactly the AEC env's ``observe(agent)`` (RULES.md R13): the agent
  that must act (one per step) has a non-zero ``action_mask``, every other agent an all-zero one.
- ``step(actions)`` needs an action for the agent to move; the other agents' entries are
  ignored (any value, or absent), so a framework may send an action for every agent. A missing
  mover action, a key that is not a live agent or an ``actions`` that is not a dict raises
  ``ValueError``; the mover's action is checked as in the AEC env (``illegal_action``:
  ``"raise"`` gives ``ValueError`` naming the legal actions, ``"penalize"`` the ``illegal``
  outcome). A refused step changes nothing.
- Rewards are each step's point changes (zero-sum, R12); summed over an episode they are each
  seat's ``deltas + kong_deltas``. Terminations, truncations and infos are the AEC env's
  (``info["result"]`` on the step that ends a hand); the infos are copies.
- When the episode ends every agent gets its final observation with ``terminated`` True and
  ``agents`` becomes empty; ``step`` then raises RuntimeError until ``reset``.
- No info names the agent to move: in a claim window that is private (R13), and the masks say it
  to whoever holds every observation. An agent's policy that keeps state over the steps on
  which its mask is zero sees that steps happened (that someone was asked); a recurrent learner
  should read only its own decisions, as the AEC env gives them.

``state()`` and ``state_space`` are the AEC env's privileged global state; ``render()`` the AEC
env's; ``aec`` is the AEC env itself (``view``, ``legal_actions``, ``record``). The keyword
arguments are the AEC env's (API.md "Environments").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from mahjong_env.variants import DEFAULT_VARIANT, get_variant

__all__ = ["MahjongParallelEnv", "make_parallel_factory"]


class MahjongParallelEnv(ParallelEnv):
    """The ``variant``'s AEC env (made with ``**kwargs``) as a parallel env; see the module
    docstring. Registered in PettingZoo's parallel registry under the AEC env's id."""

    def __init__(self, variant: str = DEFAULT_VARIANT, **kwargs: Any) -> None:
        self.aec = get_variant(variant).raw_env(**kwargs)
        self.metadata = self.aec.metadata
        self.possible_agents = list(self.aec.possible_agents)
        self.agents: list[str] = []
        self.render_mode = self.aec.render_mode
        self.state_space = self.aec.state_space

    def observation_space(self, agent: str) -> spaces.Space:
        return self.aec.observation_space(agent)

    def action_space(self, agent: str) -> spaces.Space:
        return self.aec.action_space(agent)

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, dict[str, Any]]]:
        """Start an episode (the AEC env's seed and options, checked before anything changes)."""
        aec = self.aec
        aec.reset(seed=seed, options=options)
        self.agents = list(aec.agents)
        return {a: aec.observe(a) for a in self.agents}, {a: dict(aec.infos[a]) for a in self.agents}

    def _mover_action(self, actions: Any) -> Any:
        """The action of the agent to move in ``actions``; ValueError if ``actions`` is not a
        dict of live agents holding it."""
        if not self.agents:
            raise RuntimeError("step() called before reset() or after the episode ended: call reset()")
        if not isinstance(actions, Mapping):
            raise ValueError(f"actions must be a dict {{agent: action}}, got {type(actions).__name__}")
        unknown = [a for a in actions if a not in self.agents]
        if unknown:
            raise ValueError(f"actions names {unknown!r}, not among the live agents {self.agents}")
        mover = self.aec.agent_selection
        if mover not in actions:
            raise ValueError(
                f"actions has no action for {mover}, the agent to move (the one whose action_mask is non-zero)"
            )
        return actions[mover]

    def step(
        self, actions: Mapping[str, Any]
    ) -> tuple[
        dict[str, dict[str, np.ndarray]],
        dict[str, float],
        dict[str, bool],
        dict[str, bool],
        dict[str, dict[str, Any]],
    ]:
        """Play the mover's action; see the module docstring."""
        action = self._mover_action(actions)
        aec = self.aec
        aec.step(action)  # an illegal action raises before anything changes (illegal_action="raise")
        live = self.agents
        observations = {a: aec.observe(a) for a in live}
        rewards = {a: float(aec.rewards[a]) for a in live}
        terminations = {a: aec.terminations[a] for a in live}
        truncations = {a: aec.truncations[a] for a in live}
        infos = {a: dict(aec.infos[a]) for a in live}
        self.agents = [a for a in live if not (terminations[a] or truncations[a])]
        return observations, rewards, terminations, truncations, infos

    def state(self) -> np.ndarray:
        """Privileged global state for centralised critics (never given to tournament agents)."""
        return self.aec.state()

    def render(self) -> str | np.ndarray | None:
        return self.aec.render()

    def close(self) -> None:
        self.aec.close()


def make_parallel_factory(raw_cls: type) -> Callable[..., MahjongParallelEnv]:
    """A variant module's ``parallel_env(**kwargs)``: its ``raw_env`` as a `MahjongParallelEnv`."""
    variant = raw_cls.metadata["name"]

    def parallel_env(**kwargs: Any) -> MahjongParallelEnv:
        return MahjongParallelEnv(variant, **kwargs)

    parallel_env.__doc__ = (
        f"``{variant}`` under PettingZoo's Parallel API, one mover at a time "
        "(`mahjong_env.adapters.parallel`); the keyword arguments are ``env()``'s."
    )
    parallel_env.__module__ = raw_cls.__module__
    parallel_env.__qualname__ = "parallel_env"
    return parallel_env
