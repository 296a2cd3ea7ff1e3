"""PettingZoo's bounds and order wrappers for ``env()``, reading the raw env directly.

Why this module exists: PettingZoo's `OrderEnforcingWrapper` and `AssertOutOfBoundsWrapper`
reach every attribute of the env they wrap through `BaseWrapper.__getattr__`; with the two
stacked, one decision (``last``, ``step``, the ``agent_iter`` loop) costs about 18 forwarded
reads, a large share of a step of this env. `OrderEnforced` and `BoundsChecked` subclass them
and override only the per-decision calls to read the raw env at once; the checks, errors,
warnings and results are PettingZoo's, and every other attribute is forwarded as before.

A speed trick fenced off in one place: these overrides read PettingZoo's private attributes
(the order wrapper's ``_has_reset`` and ``_has_updated``, the iterator's ``env`` and
``iters_til_term``, the iterable's ``env`` and ``max_iter``) and copy the bodies of the methods
they replace, as in PettingZoo `PETTINGZOO_VERSION`. ``tests/test_wrappers.py`` fails when
another PettingZoo is installed, checks that those attributes still exist on PettingZoo's own
wrappers, and plays the same episodes through these and through PettingZoo's: on a new
PettingZoo, compare the methods above with its sources, then update `PETTINGZOO_VERSION`.
"""

from __future__ import annotations

from typing import Any

from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers.order_enforcing import AECOrderEnforcingIterable, AECOrderEnforcingIterator

from mahjong_env import actions as A

__all__ = ["PETTINGZOO_VERSION", "BoundsChecked", "OrderEnforced", "wrap"]

PETTINGZOO_VERSION = "1.27.0"
"""The PettingZoo whose wrappers these copy and whose private attributes they read."""


class BoundsChecked(wrappers.AssertOutOfBoundsWrapper):
    """PettingZoo's `AssertOutOfBoundsWrapper` with `step` reading the env it wraps directly.

    The base class reads ``agent_selection``, ``terminations`` and the action space through
    `BaseWrapper.__getattr__`; the check and its message are the same."""

    def step(self, action: Any) -> None:
        env = self.env
        if action.__class__ is not int or not 0 <= action < A.NUM_ACTIONS:  # else in Discrete(182) for sure
            agent = env.agent_selection
            # an int out of range is refused here: Discrete.contains raises OverflowError past int64
            assert (action is None and (env.terminations[agent] or env.truncations[agent])) or (
                action.__class__ is not int and env.action_space(agent).contains(action)
            ), "action is not in action space"
        env.step(action)

    def __str__(self) -> str:
        return str(self.env)


class _OrderIterator(AECOrderEnforcingIterator):
    """`AECOrderEnforcingIterator` reading the raw env's ``agents`` and ``agent_selection``
    directly instead of through two wrappers' ``__getattr__``; the same checks."""

    def __next__(self) -> str:
        wrapper = self.env
        raw = wrapper._raw  # type: ignore[attr-defined]
        if not raw.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        agent = raw.agent_selection
        assert wrapper._has_updated, "need to call step() or reset() in a loop over `agent_iter`"  # type: ignore[attr-defined]
        wrapper._has_updated = False  # type: ignore[attr-defined]
        return agent


class _OrderIterable(AECOrderEnforcingIterable):
    def __iter__(self) -> _OrderIterator:
        return _OrderIterator(self.env, self.max_iter)


class OrderEnforced(wrappers.OrderEnforcingWrapper):
    """PettingZoo's `OrderEnforcingWrapper` whose per-decision calls (`last`, `step`,
    `agent_iter`) read the raw env directly: the base class reads every attribute through two
    wrappers' ``__getattr__`` (about 18 forwarded reads per decision). Same checks, errors,
    warnings and results; other attributes are forwarded as before."""

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        self._raw = env.unwrapped

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        raw = self._raw
        agent = raw.agent_selection
        assert agent is not None
        return (
            raw.observe(agent) if observe else None,
            raw._cumulative_rewards[agent],
            raw.terminations[agent],
            raw.truncations[agent],
            raw.infos[agent],
        )

    def step(self, action: Any) -> None:
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        elif not self._raw.agents:
            self._has_updated = True
            EnvLogger.warn_step_after_terminated_truncated()
        else:
            self._has_updated = True
            self.env.step(action)

    def agent_iter(self, max_iter: int = 2**63) -> _OrderIterable:
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _OrderIterable(self, max_iter)

    def __str__(self) -> str:
        return str(self.env) if hasattr(self, "metadata") else repr(self)


def wrap(raw: AECEnv) -> AECEnv:
    """``raw`` in `BoundsChecked` then `OrderEnforced`, as ``env()`` gives it (API.md)."""
    return OrderEnforced(BoundsChecked(raw))
