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
too (in the worker with seat 0's seed; in an isolated entrant's process, which serves all its
seats, with the seed of its first seat in the hand, so that no entrant learns the seed a
rival's agent plays with). Building an agent does not count against the move time limit.

Isolation (``task.isolate``). ``"auto"`` (the default) runs every entrant that is not one of
this package's baseline agents (`agents.sandbox.trusted`, decided from the class the spec
resolves to and its file, never from the spec's spelling) in its own process
(`agents.sandbox.IsolatedAgent`), confined by the entrant's `agents.sandbox.Sandbox` from
``task.sandboxes``; ``"all"`` every entrant, ``"none"`` none. An isolated agent gets copies of
its observation and info and nothing else, and its deadline is enforced by killing its process.
Every agent, isolated or not, gets copies: the legality of its action is judged by the env's own
mask, never by the agent's copy.

Forfeits. An agent forfeits the hand when it raises (``crash``), returns something that is not
a legal action id (``illegal``), takes longer than ``move_timeout`` seconds for a decision
(``timeout``; an isolated agent's process is killed then; an in-process one is interrupted by
``SIGALRM`` where the worker runs in a main thread, otherwise measured when the call returns),
or ends its process or calls ``sys.exit`` (``exit``). The hand then ends as the environment's
``illegal`` outcome (``illegal_action="penalize"``, API.md) and the tournament goes on. In
tournament points the offender pays `forfeit_payment` instead of the env's 1 point to each other
seat: 3 × 2^(fan_cap−1) + 408 (600 in Changchun, 504 in Xinjiang with the default caps), the most
a win can take from all its payers plus a bound on every kong payment the hand could move,
shared by the seats of other entrants (`hand_points`). So a forfeit costs at least the most the
hand could have cost that seat, or its entrant's seats together: no strategy gains by
forfeiting. Kong payments already made stand. An in-process agent that kills its worker process
(``os._exit``, a native crash) cannot be told from the others at that moment: the backends play
such a hand again with every agent isolated, which charges the agent that ends its process
(`agents.tournament.backends`).

Killed workers. While the worker waits for an isolated agent (its construction or a decision),
`Flight` notes the seat and the decision number in memory shared with the coordinator. None of
the agent's code runs in the worker then, so a worker that dies while it waits was killed from
outside. A sandboxed agent cannot have done it (it sees no process outside its sandbox), and
neither can any rival sandboxed one: the hand is played again, charged to nobody. An agent
isolated without a sandbox (``--allow-unsandboxed``) can find the worker's pid: when the worker
dies twice waiting for the same such entrant, the backends replay the hand with a `Charge`: the
agent forfeits (``exit``) at that decision without being asked again.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import operator
import signal
import threading
import time
import traceback
from typing import Any

import numpy as np

import agents
from agents.base import agent_info, seed_globals
from agents.sandbox import AgentFault, IsolatedAgent, Sandbox, trusted
from agents.tournament.schedule import Charge, HandTask
from mahjong_env import actions as A

__all__ = [
    "ISOLATION",
    "KONG_ALLOWANCE",
    "AgentPool",
    "Flight",
    "feeder",
    "forfeit_payment",
    "hand_points",
    "isolated",
    "play_hand",
    "seed_globals",
]

ISOLATION = ("auto", "all", "none")
_FEEDING = ("discard", "ready", "added_kong", "special_add")
_ALARM_LIMIT = 1e6
"""Longest time limit SIGALRM is armed for (``setitimer`` overflows near 1e10 s)."""


class _MoveTimeout(BaseException):
    """Raised inside an in-process agent's ``act`` when its time is up (a BaseException, so
    that an agent's own ``except Exception`` cannot swallow it)."""


def isolated(spec: str, mode: str) -> bool:
    """Whether an entrant with ``spec`` runs in its own process under isolation ``mode``
    (``auto``: unless `agents.sandbox.trusted`, which looks at the class the spec resolves to)."""
    if mode not in ISOLATION:
        raise ValueError(f"isolation must be one of {', '.join(ISOLATION)}, got {mode!r}")
    return mode == "all" or (mode == "auto" and not _trusted(spec))


@functools.lru_cache(maxsize=256)
def _trusted(spec: str) -> bool:
    return trusted(spec)


class Flight:
    """Which isolated agent a worker is waiting for, in memory that outlives the worker: four
    int64 ``cells`` shared with the coordinator (waiting 0/1, seat, decision number, phase
    0 construction / 1 decision; `agents.tournament.backends` reads them after a death)."""

    def __init__(self, cells: Any) -> None:
        self.cells = cells

    @contextlib.contextmanager
    def waiting(self, seat: int, step: int, phase: int) -> Any:
        self.cells[1], self.cells[2], self.cells[3] = seat, step, phase
        self.cells[0] = 1
        try:
            yield
        finally:
            self.cells[0] = 0

    def last(self) -> tuple[int, int, str] | None:
        """(seat, decision number, phase) of the request in flight, None if none was."""
        if not self.cells[0]:
            return None
        return int(self.cells[1]), int(self.cells[2]), "decision" if self.cells[3] else "construction"


def _waiting(flight: Flight | None, seat: int, step: int, phase: int) -> Any:
    return contextlib.nullcontext() if flight is None else flight.waiting(seat, step, phase)


class _Seat:
    """One seat's agent for one hand: in this process, or in an `IsolatedAgent`."""

    def __init__(self, seat: int, agent: Any = None, proxy: IsolatedAgent | None = None) -> None:
        self.seat = seat
        self.agent = agent
        self.proxy = proxy

    def act(
        self,
        clock: _Clock,
        observation: dict[str, np.ndarray],
        info: dict[str, Any],
        flight: Flight | None,
        step: int,
    ) -> tuple[Any, float]:
        if self.proxy is not None:
            with _waiting(flight, self.seat, step, 1):
                return self.proxy.act(self.seat, observation, info, clock.limit)
        return clock.call(self.agent.act, observation, info)


class AgentPool:
    """The agents of one worker: in-process ones built once per (entrant, seat) where they can
    be re-seeded, and one `IsolatedAgent` process per isolated entrant."""

    def __init__(self) -> None:
        self._agents: dict[tuple[str, str, int], Any] = {}
        self._proxies: dict[tuple[str, str], IsolatedAgent] = {}

    def get(
        self,
        name: str,
        spec: str,
        seat: int,
        seed: int,
        global_seed: int,
        isolate: str,
        load_timeout: float,
        flight: Flight | None = None,
        sandbox: Sandbox | None = None,
    ) -> _Seat:
        """The seat's agent, ready for a hand; `AgentFault` if it cannot be built."""
        if isolated(spec, isolate):
            proxy = self._proxies.get((name, spec))
            if proxy is None or proxy.sandbox != sandbox:
                if proxy is not None:
                    proxy.kill()
                proxy = self._proxies[(name, spec)] = IsolatedAgent(spec, load_timeout, sandbox)
            proxy.load_timeout = load_timeout
            with _waiting(flight, seat, 0, 0):
                proxy.begin(seat, seed, global_seed)
            return _Seat(seat, proxy=proxy)
        key = (name, spec, seat)
        try:
            agent = self._agents.get(key)
            if agent is None:
                agent = agents.load(spec, seed=seed)  # user classes are built without the seed
            if callable(getattr(agent, "seed", None)):
                agent.seed(seed)
                self._agents[key] = agent
            agent.reset()
        except Exception as error:
            raise AgentFault("crash", _traceback(error)) from None
        return _Seat(seat, agent=agent)

    def drop(self, name: str, spec: str, seat: int) -> None:
        """Forget an agent after a fault (it may be in any state); an isolated one's process ends."""
        self._agents.pop((name, spec, seat), None)
        proxy = self._proxies.pop((name, spec), None)
        if proxy is not None:
            proxy.kill()

    def close(self) -> None:
        for proxy in self._proxies.values():
            proxy.kill()
        self._proxies.clear()
        self._agents.clear()


_POOL = AgentPool()
_ENVS: dict[tuple[str, str], Any] = {}


def _env(variant: str, rules: tuple[tuple[str, Any], ...]) -> Any:
    key = (variant, json.dumps(rules))
    env = _ENVS.get(key)
    if env is None:
        from mahjong_env.variants import get_variant

        env = get_variant(variant).raw_env(illegal_action="penalize", **dict(rules))
        _ENVS[key] = env
    return env


def _traceback(error: BaseException) -> str:
    return "".join(traceback.format_exception(type(error), error, error.__traceback__))


class _Clock:
    """Per-decision time limit of in-process agents: SIGALRM where possible, and always a check
    after the call (isolated agents are timed by `IsolatedAgent`)."""

    def __init__(self, limit: float | None) -> None:
        self.limit = limit
        self.alarm = (
            limit is not None
            and math.isfinite(limit)
            and 0 < limit <= _ALARM_LIMIT
            and hasattr(signal, "setitimer")
            and threading.current_thread() is threading.main_thread()
        )
        self._previous: Any = None
        self._timing = False

    def _on_alarm(self, signum: int, frame: Any) -> None:
        if self._timing:  # an alarm that arrives after the call returned is ignored
            raise _MoveTimeout()

    def __enter__(self) -> _Clock:
        if self.alarm:
            self._previous = signal.signal(signal.SIGALRM, self._on_alarm)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self._previous)

    def call(self, fn: Any, *args: Any) -> tuple[Any, float]:
        """``fn(*args)`` and its duration; `AgentFault` on an exception, ``sys.exit`` or when
        over the limit. Ctrl-C (KeyboardInterrupt) is not the agent's and passes through."""
        start = time.perf_counter()
        try:
            try:  # the alarm may ring at once (a limit of microseconds): arm it inside the try
                if self.alarm:
                    self._timing = True
                    signal.setitimer(signal.ITIMER_REAL, self.limit)
                value = fn(*args)
            finally:
                self._timing = False
                if self.alarm:
                    signal.setitimer(signal.ITIMER_REAL, 0)
        except _MoveTimeout:
            raise AgentFault("timeout", f"no decision within {self.limit:g} s") from None
        except KeyboardInterrupt:
            raise
        except SystemExit as error:
            raise AgentFault("exit", f"the agent called sys.exit({error.code!r})") from None
        except BaseException as error:
            raise AgentFault("crash", _traceback(error)) from None
        elapsed = time.perf_counter() - start
        if self.limit is not None and elapsed > self.limit:
            raise AgentFault("timeout", f"decision took {elapsed:.3f} s, over the {self.limit:g} s limit")
        return value, elapsed


def _check_action(action: Any, mask: np.ndarray) -> int:
    try:
        if isinstance(action, (bool, np.bool_)):
            raise TypeError
        action = operator.index(action)
    except TypeError:
        text = repr(action)[:200]
        raise AgentFault("illegal", f"act returned {text} ({type(action).__name__}), not an action id") from None
    if not 0 <= action < A.NUM_ACTIONS or not mask[action]:
        shown = A.action_name(action) if 0 <= action < A.NUM_ACTIONS else repr(action)
        legal = ", ".join(A.action_name(int(a)) for a in np.flatnonzero(mask))
        raise AgentFault("illegal", f"illegal action {shown}; legal actions: {legal}")
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


KONG_ALLOWANCE = 3 * 136.0
"""A bound on the kong payments, additions and refunds a hand can move (at most 3 points per
tile of the 136: a concealed 大蛋 kong of 4 tiles takes 4 from each of three seats)."""


def forfeit_payment(env: Any) -> float:
    """What a forfeit costs: the most a win can take from its payers together under the rules'
    fan cap (3 × 2^(cap−1)) plus `KONG_ALLOWANCE`: at least the most the hand could have cost
    the forfeiter's seat, or all the seats its entrant holds at the table, had it played on."""
    cap = int(getattr(env.game.rules.config, "fan_cap", 30))
    return 3.0 * 2 ** (cap - 1) + KONG_ALLOWANCE


def hand_points(result: dict[str, Any], seats: list[str], forfeit_seat: int | None, payment: float) -> list[float]:
    """Each seat's tournament points for a hand: the settlement and the kong payments that
    stand. After a forfeit the forfeiter pays ``payment`` (`forfeit_payment`) instead of the
    env's 3 points, shared equally by the seats of other entrants (copies of the forfeiter
    neither pay nor receive), so that no entrant gains by forfeiting."""
    points = [float(d + k) for d, k in zip(result["deltas"], result["kong_deltas"])]
    if forfeit_seat is None:
        return points
    points = [p + 3.0 if s == forfeit_seat else p - 1.0 for s, p in enumerate(points)]  # undo the env's penalty
    rivals = [s for s in range(4) if seats[s] != seats[forfeit_seat]]
    points[forfeit_seat] -= payment
    for s in rivals:
        points[s] += payment / len(rivals)
    return points


def _charge(charge: Charge | None, seat: int, step: int) -> None:
    """Book the replay's `Charge` instead of asking ``seat``'s agent, when it is due."""
    if charge is not None and charge.seat == seat and step >= charge.step:
        raise AgentFault(charge.kind, charge.message)


def play_hand(task: HandTask, pool: AgentPool | None = None, flight: Flight | None = None) -> dict[str, Any]:
    """Play one hand; returns its outcome as stored in the results database. ``flight``
    notes which isolated agent the worker waits for (`Flight`)."""
    pool = pool or _POOL
    started = time.perf_counter()
    env = _env(task.variant, task.rules)
    seed_globals(task.agent_seeds[0])
    decisions = [0] * 4
    think = [0.0] * 4
    forfeit = None
    seats: list[_Seat] = []
    env.reset(seed=task.deal_seed)
    sandboxes = dict(task.sandboxes)
    own: dict[str, int] = {}  # each entrant's first seat: its isolated process is seeded with that seat's seed
    for k, name in enumerate(task.seats):
        own.setdefault(name, k)
    with _Clock(task.move_timeout) as clock:
        seat = 0
        try:
            for seat in range(4):
                _charge(task.charge, seat, 0)
                seats.append(
                    pool.get(
                        task.seats[seat],
                        task.specs[seat],
                        seat,
                        task.agent_seeds[seat],
                        task.agent_seeds[own[task.seats[seat]]],  # an isolated child's generators: not a rival's seed
                        task.isolate,
                        task.load_timeout,
                        flight,
                        sandboxes.get(task.seats[seat]),
                    )
                )
            while not all(env.terminations.values()):
                name = env.agent_selection
                seat = int(name.rsplit("_", 1)[1])
                observation = env.observe(name)
                legal = np.array(observation["action_mask"], copy=True)  # the env's mask decides legality
                given = {key: np.array(value, copy=True) for key, value in observation.items()}
                _charge(task.charge, seat, sum(decisions))
                action, elapsed = seats[seat].act(clock, given, agent_info(env, name), flight, sum(decisions))
                decisions[seat] += 1
                think[seat] += elapsed
                env.step(_check_action(action, legal))
        except AgentFault as fault:
            forfeit = {
                "seat": seat,
                "agent": task.seats[seat],
                "kind": fault.kind,
                "message": fault.message,
                "step": sum(decisions),
            }
            pool.drop(task.seats[seat], task.specs[seat], seat)
            # the env's "illegal" outcome: the offender pays 1 to each other seat; recorded as
            # "illegal -1" (no action), by a seat that need not be the one to move (replay accepts it)
            env.game.penalize(seat, -1)
    result = json.loads(json.dumps(env.game.result))
    record = env.record()
    record["players"] = list(task.seats)
    return {
        "deal": task.deal,
        "seating": task.seating,
        "deal_seed": task.deal_seed,
        "seats": list(task.seats),
        "points": hand_points(
            result, list(task.seats), None if forfeit is None else forfeit["seat"], forfeit_payment(env)
        ),
        "result": result,
        "record": record,
        "feeder": feeder(result, record["hands"][-1]["actions"]),
        "forfeit": forfeit,
        "decisions": decisions,
        "think_time": think,
        "duration": time.perf_counter() - started,
    }
