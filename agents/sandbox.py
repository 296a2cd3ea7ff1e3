"""Agents in their own process: what an untrusted tournament entrant may see, and its deadline.

An `IsolatedAgent` is the coordinator's handle on one entrant that runs in a child Python
process (a fresh interpreter, started with ``subprocess``, in its own session). The child builds
the agent with ``agents.load(spec)`` (one agent per seat it plays) and receives, for each
decision, a pickled copy of what ``env.observe(agent)`` and ``agents.agent_info`` return, and
nothing else: no env, no ``state()``, no wall, no other process's memory. It answers with a
small JSON message (the action id, or the error), never a pickle, so a hostile child cannot
run code in the coordinator.

The deadline is enforced from outside: when no answer arrives within the time limit, the child
(and everything in its session) is killed with ``SIGKILL``. That works against agents that
catch ``BaseException``, block in native code or loop forever. A child that exits
(``sys.exit``, ``os._exit``, a native crash) is seen at once. Each failure raises `AgentFault`
with ``kind`` ``timeout``, ``exit`` or ``crash``; the tournament books it as a forfeit of the
agent's seat (`agents.tournament.play`). Building the agent (``begin``) has its own, longer
limit (``load_timeout``): loading a model does not count against the move time limit.

This is process isolation, not a security sandbox: the child runs as the same user, with the
same filesystem and network. It keeps an agent from reading the game it is playing, and from
bending the tournament's books; it does not contain malware.

Cost: one decision is a round trip over a local socket (pickling the observation, about
19 KB, and the view). Measured with `RandomAgent` on a shared 2-core machine (load 5–6):
one decision 36 µs in-process, 170–260 µs isolated (28,000 vs 4,000–5,800 decisions/s, the
agent alone); in a whole tournament, where the agent's process must be woken for every
decision, 0.03 ms vs 1.6 ms per decision (1,600 vs 390 decisions/s, env included). Cheap for a
network agent (a forward pass costs about as much), significant for the random baseline:
``--isolate none`` trusts every entrant and skips it.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import socket
import subprocess
import sys
import time
import traceback
from multiprocessing.connection import Connection
from typing import Any

__all__ = ["AgentFault", "IsolatedAgent"]

_MESSAGE_LIMIT = 2000
_REPLY_LIMIT = 1 << 20
_THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
_BOOT = (
    "import sys, json; sys.path[:0] = json.loads(sys.argv[2]); from agents.sandbox import _child_main; _child_main()"
)


class AgentFault(Exception):  # noqa: N818 - a fault of the agent, booked as a forfeit, not an error of ours
    """An agent's failure: ``kind`` is ``crash``, ``timeout``, ``exit`` or ``illegal``."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message[-_MESSAGE_LIMIT:]


class IsolatedAgent:
    """One entrant in a child process; ``act`` for any seat it plays (module docstring)."""

    def __init__(self, spec: str, load_timeout: float = 300.0) -> None:
        self.spec = spec
        self.load_timeout = load_timeout
        self._process: subprocess.Popen | None = None
        self._conn: Connection | None = None

    # ------------------------------------------------------------------ lifecycle

    def _start(self) -> None:
        parent, child = socket.socketpair()
        env = dict(os.environ)
        for name in _THREAD_VARIABLES:
            env.setdefault(name, "1")
        paths = [p for p in sys.path if p]
        self._process = subprocess.Popen(
            [sys.executable, "-c", _BOOT, str(child.fileno()), json.dumps(paths)],
            pass_fds=(child.fileno(),),
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
        child.close()
        self._conn = Connection(parent.detach())

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def kill(self) -> None:
        """End the child and everything it started (its session)."""
        process, self._process = self._process, None
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if process is None:
            return
        if process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                process.kill()
        process.wait()

    close = kill

    def __del__(self) -> None:
        try:
            self.kill()
        except Exception:  # interpreter shutdown: nothing left to clean
            pass

    # ------------------------------------------------------------------ requests

    def _request(self, message: tuple, limit: float | None, what: str) -> tuple[dict[str, Any], float]:
        if not self.alive:
            self.kill()
            self._start()
        assert self._conn is not None and self._process is not None
        start = time.perf_counter()
        try:
            self._conn.send(message)
            ready = self._conn.poll(limit)
        except (OSError, EOFError):
            ready = True  # the child is gone: recv below says so
        if not ready:
            self.kill()
            raise AgentFault("timeout", f"no {what} within {limit:g} s (the agent's process was killed)")
        try:
            raw = self._conn.recv_bytes(_REPLY_LIMIT)
        except (OSError, EOFError):
            code = self._process.wait() if self._process is not None else None
            self.kill()
            raise AgentFault("exit", f"the agent's process ended during {what} (exit code {code})") from None
        elapsed = time.perf_counter() - start
        try:
            reply = json.loads(raw)
            if not isinstance(reply, dict):
                raise ValueError("not an object")
        except ValueError:
            self.kill()
            raise AgentFault("crash", f"the agent's process sent a malformed reply during {what}") from None
        if "error" in reply:
            self.kill()
            raise AgentFault("crash", str(reply["error"]))
        if limit is not None and elapsed > limit:
            raise AgentFault("timeout", f"{what} took {elapsed:.3f} s, over the {limit:g} s limit")
        return reply, elapsed

    def describe(self) -> dict[str, Any]:
        """Build the agent once and return `agents.describe` of it plus ``has_act``."""
        reply, _ = self._request(("describe", self.spec), self.load_timeout, "agent construction")
        return reply

    def begin(self, seat: int, seed: int, global_seed: int) -> None:
        """Get the agent of ``seat`` ready for a hand: built (or re-seeded, if it has
        ``seed(seed)``), ``reset()``, and the child's global generators seeded."""
        self._request(("begin", self.spec, seat, seed, global_seed), self.load_timeout, "agent construction")

    def act(
        self, seat: int, observation: dict[str, Any], info: dict[str, Any], limit: float | None
    ) -> tuple[Any, float]:
        """The agent's action and the round-trip time; `AgentFault` on any failure."""
        reply, elapsed = self._request(("act", seat, observation, info), limit, "decision")
        if "action" in reply:
            return reply["action"], elapsed
        raise AgentFault("illegal", f"act returned {str(reply.get('invalid'))[:200]}, not an action id")


# ---------------------------------------------------------------------- the child


def _child_main() -> None:
    """The child's loop (started by `IsolatedAgent._start`, fd of its socket in argv[1])."""
    import operator

    conn = Connection(int(sys.argv[1]))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the coordinator handles Ctrl-C
    _die_with_parent()
    import numpy as np

    import agents
    from agents.tournament.play import seed_globals

    seated: dict[int, Any] = {}

    def reply(payload: dict[str, Any]) -> None:
        conn.send_bytes(json.dumps(payload).encode())

    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError, pickle.UnpicklingError):
            return
        command = message[0]
        try:
            if command == "describe":
                agent = agents.load(message[1], seed=0)
                reply({**agents.describe(message[1], agent), "has_act": callable(getattr(agent, "act", None))})
            elif command == "begin":
                _, spec, seat, seed, global_seed = message
                agent = seated.get(seat)
                if agent is None or not callable(getattr(agent, "seed", None)):
                    agent = seated[seat] = agents.load(spec, seed=seed)
                if callable(getattr(agent, "seed", None)):
                    agent.seed(seed)
                agent.reset()
                seed_globals(global_seed)
                reply({"ok": True})
            elif command == "act":
                _, seat, observation, info = message
                action = seated[seat].act(observation, info)
                if isinstance(action, (bool, np.bool_)):
                    reply({"invalid": repr(action)})
                else:
                    try:
                        reply({"action": operator.index(action)})
                    except TypeError:
                        reply({"invalid": f"{action!r} ({type(action).__name__})"})
        except Exception as error:  # the agent's own error: the coordinator books it
            text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
            reply({"error": text[-_MESSAGE_LIMIT:]})


def _die_with_parent() -> None:
    """Linux: be killed when the worker that started us dies, so no agent outlives its run."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() == 1:
        os._exit(0)
