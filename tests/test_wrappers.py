"""`mahjong_env.adapters.wrappers`: ``env()``'s copies of PettingZoo's bounds and order wrappers.

They read PettingZoo's private attributes, so they are pinned to one PettingZoo version: a
different one fails here first, with what to check. The same episodes and the same misuse give
the same results, errors and warnings through them as through PettingZoo's own wrappers.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pettingzoo
import pytest
from pettingzoo.utils.env import AECIterable, AECIterator
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers import AssertOutOfBoundsWrapper, OrderEnforcingWrapper
from pettingzoo.utils.wrappers.order_enforcing import AECOrderEnforcingIterable, AECOrderEnforcingIterator

from mahjong_env import changchun_v0, xinjiang_v0
from mahjong_env.adapters.wrappers import PETTINGZOO_VERSION, BoundsChecked, OrderEnforced


def pettingzoo_stack(module: Any) -> OrderEnforcingWrapper:
    """The variant's raw env in PettingZoo's own wrappers, in ``env()``'s order."""
    return OrderEnforcingWrapper(AssertOutOfBoundsWrapper(module.raw_env()))


def test_pettingzoo_is_the_version_the_wrappers_were_written_against():
    assert pettingzoo.__version__ == PETTINGZOO_VERSION, (
        f"PettingZoo {pettingzoo.__version__} is installed; mahjong_env/adapters/wrappers.py copies "
        f"methods of PettingZoo {PETTINGZOO_VERSION}'s OrderEnforcingWrapper, AssertOutOfBoundsWrapper "
        "and AECOrderEnforcingIterator and reads their private attributes: compare them with the new "
        "sources, then set PETTINGZOO_VERSION"
    )


def test_the_private_attributes_they_read_exist_on_pettingzoos_wrappers():
    env = pettingzoo_stack(changchun_v0)
    assert env._has_reset is False and env._has_updated is False
    env.reset(seed=0)
    assert env._has_reset is True and env._has_updated is True
    iterable = env.agent_iter(7)
    assert isinstance(iterable, AECOrderEnforcingIterable) and isinstance(iterable, AECIterable)
    assert iterable.env is env and iterable.max_iter == 7
    iterator = iter(iterable)
    assert isinstance(iterator, AECOrderEnforcingIterator) and isinstance(iterator, AECIterator)
    assert iterator.env is env and iterator.iters_til_term == 7
    assert isinstance(env.unwrapped._cumulative_rewards, dict)  # AECEnv's, read by `last`
    for name in ("error_step_before_reset", "warn_step_after_terminated_truncated", "error_agent_iter_before_reset"):
        assert callable(getattr(EnvLogger, name)), name
    for cls, methods in (
        (OrderEnforcingWrapper, ("last", "step", "agent_iter", "__str__")),
        (AssertOutOfBoundsWrapper, ("step", "__str__")),
        (AECOrderEnforcingIterator, ("__next__",)),
        (AECOrderEnforcingIterable, ("__iter__",)),
    ):
        for method in methods:
            assert callable(getattr(cls, method, None)), f"{cls.__name__}.{method}"


def test_env_wraps_in_the_subclasses():
    env = changchun_v0.env()
    assert type(env) is OrderEnforced and isinstance(env, OrderEnforcingWrapper)
    assert type(env.env) is BoundsChecked and isinstance(env.env, AssertOutOfBoundsWrapper)
    assert env.unwrapped is env.env.env and str(env) == str(pettingzoo_stack(changchun_v0))


def _play(env: Any, seed: int) -> list[Any]:
    """Every agent and ``last()`` of a seeded random episode, and the record at the end."""
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    seen: list[Any] = []
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        seen.append(
            (agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward, termination, truncation)
        )
        seen.append(repr(info))
        env.step(None if termination or truncation else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    seen.append(env.unwrapped.record())
    return seen


@pytest.mark.parametrize("module", [xinjiang_v0, changchun_v0], ids=["xinjiang", "changchun"])
def test_the_same_episodes_as_through_pettingzoos_wrappers(module):
    for seed in (1, 2):
        assert _play(module.env(), seed) == _play(pettingzoo_stack(module), seed)


def _outcome(call: Any) -> tuple[str, str, list[str]]:
    """What ``call()`` did: the exception it raised (type and message) and its warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            call()
            error = ("", "")
        except Exception as err:  # compared, whatever it is
            error = (type(err).__name__, str(err))
    return (*error, [str(w.message) for w in caught])


def test_the_same_errors_and_warnings_on_misuse():
    def misuse(env: Any) -> list[tuple[str, str, list[str]]]:
        out = [_outcome(lambda: env.step(0)), _outcome(env.last), _outcome(env.agent_iter)]
        env.reset(seed=3)
        out.append(_outcome(lambda: env.step(500)))  # out of Discrete(182)
        out.append(_outcome(lambda: env.step(np.int64(181))))
        iterator = iter(env.agent_iter())
        out.append(_outcome(lambda: next(iterator)))
        out.append(_outcome(lambda: next(iterator)))  # no step in between
        env.unwrapped.agents = []
        out.append(_outcome(lambda: env.step(None)))
        return out

    ours, theirs = misuse(changchun_v0.env()), misuse(pettingzoo_stack(changchun_v0))
    assert ours == theirs
    assert ours[3][0] == "AssertionError" and ours[6][0] == "AssertionError"
