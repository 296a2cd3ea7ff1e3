"""Playing one hand of a tournament: agents, seeds, time limits and forfeits.

`play_hand(task)` is a pure function of its `HandTask` (apart from time limits, which depend on
the machine): every worker, process or Ray node that plays the same task returns the same hand.

Agents. For every hand each seat gets an agent seeded with the task's seed for that seat: an
agent that has a ``seed(seed)`` method is built once per worker (per entrant and seat) and
re-seeded with it before every hand (also the first); any other agent is built afresh with
``agents.load(spec, seed=...)`` for every hand. So an agent class that is expensive to build
should offer ``seed(seed)``, which must determine its state (and its play) completely.
``reset()`` is called before every hand, and Python's, NumPy's global and (if imported)
PyTorch's random generators are seeded per hand, so that agents that use them are reproducible
too.

Forfeits. An agent forfeits the hand when it raises (``crash``), returns something that is not
a legal action id (``illegal``), or takes longer than ``move_timeout`` seconds for a decision
(``timeout``; interrupted by ``SIGALRM`` where the worker runs in a main thread, otherwise
measured when the call returns). The hand then ends as the environment's ``illegal`` outcome
(``illegal_action="penalize"``, API.md): the offender pays 1 point to each other seat (−3 for
it, +1 for each other), kong payments already made stand, and the tournament goes on.
"""

from __future__ import annotations

import json
import operator
import random
import signal
import sys
import threading
import time
import traceback
from typing import Any

import numpy as np

import agents
from agents.base import agent_info
from agents.tournament.schedule import HandTask
from mahjong_env import actions as A

__all__ = ["AgentPool", "feeder", "play_hand"]

_MESSAGE_LIMIT = 2000
_FEEDING = ("discard", "ready", "added_kong", "special_add")


class _MoveTimeout(BaseException):
    """Raised inside an agent's ``act`` when its time is up (a BaseException, so that an
    agent's own ``except Exception`` cannot swallow it)."""


class _Fault(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message[-_MESSAGE_LIMIT:]


class AgentPool:
    """The agents of one worker, built once per (entrant, seat) where they can be re-seeded."""

    def __init__(self) -> None:
        self._agents: dict[tuple[str, str, int], Any] = {}

    def get(self, name: str, spec: str, seat: int, seed: int) -> Any:
        key = (name, spec, seat)
        agent = self._agents.get(key)
        if agent is None:
            agent = agents.load(spec, seed=seed)  # user classes are built without the seed
        if callable(getattr(agent, "seed", None)):
            agent.seed(seed)
            self._agents[key] = agent
        agent.reset()
        return agent

    def drop(self, name: str, spec: str, seat: int) -> None:
        """Forget an agent (after a fault it may be in any state)."""
        self._agents.pop((name, spec, seat), None)


_POOL = AgentPool()
_ENVS: dict[tuple[str, str], Any] = {}


def _env(variant: str, rules: tuple[tuple[str, Any], ...]) -> Any:
    key = (variant, json.dumps(rules))
    env = _ENVS.get(key)
    if env is None:
        from mahjong_env import changchun_v0, xinjiang_v0

        module = {"xinjiang": xinjiang_v0, "changchun": changchun_v0}[variant]
        env = module.raw_env(illegal_action="penalize", **dict(rules))
        _ENVS[key] = env
    return env


def _seed_globals(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)


def _on_alarm(signum: int, frame: Any) -> None:
    raise _MoveTimeout()


class _Clock:
    """Per-decision time limit: SIGALRM where possible, and always a check after the call."""

    def __init__(self, limit: float | None) -> None:
        self.limit = limit
        self.alarm = (
            limit is not None and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
        )
        self._previous: Any = None

    def __enter__(self) -> _Clock:
        if self.alarm:
            self._previous = signal.signal(signal.SIGALRM, _on_alarm)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self._previous)

    def call(self, fn: Any, *args: Any) -> tuple[Any, float]:
        """``fn(*args)`` and its duration; `_Fault` on an exception or when over the limit."""
        start = time.perf_counter()
        try:
            if self.alarm:
                signal.setitimer(signal.ITIMER_REAL, self.limit)
            try:
                value = fn(*args)
            finally:
                if self.alarm:
                    signal.setitimer(signal.ITIMER_REAL, 0)
        except _MoveTimeout:
            raise _Fault("timeout", f"no decision within {self.limit:g} s") from None
        except Exception as error:
            text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
            raise _Fault("crash", text) from None
        elapsed = time.perf_counter() - start
        if self.limit is not None and elapsed > self.limit:
            raise _Fault("timeout", f"decision took {elapsed:.3f} s, over the {self.limit:g} s limit")
        return value, elapsed


def _check_action(action: Any, mask: np.ndarray) -> int:
    try:
        if isinstance(action, (bool, np.bool_)):
            raise TypeError
        action = operator.index(action)
    except TypeError:
        raise _Fault("illegal", f"act returned {action!r} ({type(action).__name__}), not an action id") from None
    if not 0 <= action < A.NUM_ACTIONS or not mask[action]:
        shown = A.action_name(action) if 0 <= action < A.NUM_ACTIONS else repr(action)
        legal = ", ".join(A.action_name(int(a)) for a in np.flatnonzero(mask))
        raise _Fault("illegal", f"illegal action {shown}; legal actions: {legal}")
    return action


def feeder(result: dict[str, Any], actions: list[list[Any]]) -> int | None:
    """The seat whose tile was won (点炮 dianpao: the discarder; robbing a kong: the konger),
    None for a self-drawn win (自摸, 摸宝, 对宝) or no win."""
    if result.get("outcome") != "win" or result.get("method") not in ("discard", "rob_kong"):
        return None
    for seat, name in reversed(actions):
        if seat != result["winner"] and name.split(" ", 1)[0] in _FEEDING:
            return int(seat)
    return None


def play_hand(task: HandTask, pool: AgentPool | None = None) -> dict[str, Any]:
    """Play one hand; returns its outcome as stored in the results database."""
    pool = pool or _POOL
    started = time.perf_counter()
    env = _env(task.variant, task.rules)
    _seed_globals(task.agent_seeds[0])
    decisions = [0] * 4
    think = [0.0] * 4
    forfeit = None
    seat_agents: list[Any] = []
    env.reset(seed=task.deal_seed)
    with _Clock(task.move_timeout) as clock:
        seat = 0
        try:
            for seat in range(4):
                agent, _ = clock.call(pool.get, task.seats[seat], task.specs[seat], seat, task.agent_seeds[seat])
                seat_agents.append(agent)
            while not all(env.terminations.values()):
                name = env.agent_selection
                seat = int(name.rsplit("_", 1)[1])
                observation = env.observe(name)
                action, elapsed = clock.call(seat_agents[seat].act, observation, agent_info(env, name))
                decisions[seat] += 1
                think[seat] += elapsed
                env.step(_check_action(action, observation["action_mask"]))
        except _Fault as fault:
            forfeit = {
                "seat": seat,
                "agent": task.seats[seat],
                "kind": fault.kind,
                "message": fault.message,
                "step": sum(decisions),
            }
            pool.drop(task.seats[seat], task.specs[seat], seat)
            env.game.penalize(seat)  # the env's "illegal" outcome: the offender pays 1 to each other seat
    result = json.loads(json.dumps(env.game.result))
    record = env.record()
    return {
        "deal": task.deal,
        "seating": task.seating,
        "deal_seed": task.deal_seed,
        "seats": list(task.seats),
        "points": [float(d + k) for d, k in zip(result["deltas"], result["kong_deltas"])],
        "result": result,
        "record": record,
        "feeder": feeder(result, record["hands"][-1]["actions"]),
        "forfeit": forfeit,
        "decisions": decisions,
        "think_time": think,
        "duration": time.perf_counter() - started,
    }
