"""Agents in their own process: what an untrusted tournament entrant may see, and its deadline.

An `IsolatedAgent` is the coordinator's handle on one entrant that runs in a child Python
process (a fresh interpreter, started with ``subprocess``, in its own session). The child builds
the agent with ``agents.load(spec)`` (one agent per seat it plays) and receives, for each
decision, a pickled copy of what ``env.observe(agent)`` and ``agents.agent_info`` return, and
nothing else: no env, no ``state()``, no wall, no other process's memory. It answers with a
small JSON message (the action id, or the error), never a pickle, so a hostile child cannot
run code in the coordinator.

The wire. Every message is one frame: a 4-byte big-endian length, then the payload. A request
is ``(id, command, ...)`` with a number that grows with every request; its reply is a JSON
object that repeats the ``id``. The coordinator reads a reply within the request's deadline
(a frame that stops halfway is a timeout, not a hang), of at most `REPLY_LIMITS` bytes for its
command, and takes it only if it decodes to exactly the shape that command expects, with the
current ``id``. Anything else (not JSON, nested too deep to decode, another shape, a reply
written ahead or left over from an earlier request) is the agent's fault: an agent that writes
on its own socket can only lose its hand, never answer a request it was not asked.

The deadline is enforced from outside: when no answer arrives within the time limit, the child
(and everything in its session) is killed with ``SIGKILL``. That works against agents that
catch ``BaseException``, block in native code or loop forever. A child that exits
(``sys.exit``, ``os._exit``, a native crash) is seen at once. Each failure raises `AgentFault`
with ``kind`` ``timeout``, ``exit`` or ``crash``; the tournament books it as a forfeit of the
agent's seat (`agents.tournament.play`). Building the agent (``begin``) has its own, longer
limit (``load_timeout``): loading a model does not count against the move time limit.

The child's first act is to fork: the process that ``subprocess`` started stays as a small
keeper that waits for the agent's process and ends as it ends, so the agent's parent is the
keeper, not the worker that plays the hand. An agent that kills its parent kills its keeper,
dies with it (``PR_SET_PDEATHSIG``) and forfeits with ``exit``. An agent that hunts down the
worker itself (its pid is one ``/proc`` read or ``SO_PEERCRED`` away) is charged by the
backends, which note whose request a worker was waiting for (`agents.tournament.play.Flight`).

This is process isolation, not a security sandbox: the child runs as the same user, with the
same filesystem and network. It keeps an agent from reading the game it is playing through the
env, and from bending the tournament's books; it does not contain malware, nor an agent that
goes looking for the results database (which holds the tournament's seed and the records of
finished hands). Nor does it keep an entrant's copies apart: one child serves every seat the
entrant plays in a worker, hand after hand, so copies at one table (two entrants' duplicate
seatings put each at two seats) can share what each sees, and a child can remember a deal
that a later seating plays again; separate processes would not stop that either, since they
could talk through files. Only an entrant that does not cheat that way can be trusted in such
formats; a competition between untrusted entrants needs each in its own OS sandbox (a user or
container of its own), which this module does not provide.

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
from typing import Any

__all__ = ["REPLY_LIMITS", "AgentFault", "IsolatedAgent"]

_MESSAGE_LIMIT = 2000
REPLY_LIMITS = {"describe": 1 << 20, "begin": 1 << 16, "act": 1 << 16}
"""The longest reply (bytes) to each command: an error's traceback, JSON-escaped, fits."""
_HEADER = 4
_EXIT_WAIT = 2.0
"""Seconds to wait for the child to be reaped once its socket closed, for its exit code."""
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


class _Late(Exception):  # noqa: N818 - the deadline passed while reading or writing
    pass


class IsolatedAgent:
    """One entrant in a child process; ``act`` for any seat it plays (module docstring)."""

    def __init__(self, spec: str, load_timeout: float = 300.0) -> None:
        self.spec = spec
        self.load_timeout = load_timeout
        self._process: subprocess.Popen | None = None
        self._socket: socket.socket | None = None
        self._requests = 0

    # ------------------------------------------------------------------ lifecycle

    def _start(self) -> None:
        parent, child = socket.socketpair()
        env = dict(os.environ)
        for name in _THREAD_VARIABLES:
            env.setdefault(name, "1")
        paths = [p for p in sys.path if p]
        self._process = subprocess.Popen(
            [sys.executable, "-c", _BOOT, str(child.fileno()), json.dumps(paths), str(os.getpid())],
            pass_fds=(child.fileno(),),
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
        child.close()
        self._socket = parent

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def kill(self) -> None:
        """End the child and everything it started (its session)."""
        process, self._process = self._process, None
        if self._socket is not None:
            self._socket.close()
            self._socket = None
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

    def _request(self, command: str, arguments: tuple, limit: float | None, what: str) -> tuple[dict[str, Any], float]:
        if self._process is not None and not self.alive and command == "act":
            raise self._ended(what, None)  # it died after its last reply: it holds no agent now
        if not self.alive:
            self.kill()
            self._start()
        assert self._socket is not None and self._process is not None
        self._requests += 1
        request = pickle.dumps((self._requests, command, *arguments), protocol=pickle.HIGHEST_PROTOCOL)
        start = time.perf_counter()
        deadline = None if limit is None else start + limit
        try:
            _write(self._socket, request, deadline)
            raw = _read(self._socket, REPLY_LIMITS[command], deadline)
        except _Late:
            self.kill()
            raise AgentFault("timeout", f"no {what} within {limit:g} s (the agent's process was killed)") from None
        except (OSError, EOFError) as error:
            raise self._ended(what, error) from None
        elapsed = time.perf_counter() - start
        reply = _decode(raw, self._requests, command)
        if reply is None:
            self.kill()
            shown = _shown(raw, REPLY_LIMITS[command])
            raise AgentFault("crash", f"the agent's process sent a malformed reply during {what}: {shown}")
        if self._process.poll() is not None:  # it answered, but its keeper is gone: it killed its parent
            raise self._ended(what, None)
        if "error" in reply:
            self.kill()
            raise AgentFault("crash", reply["error"])
        return reply, elapsed

    def _ended(self, what: str, error: BaseException | None) -> AgentFault:
        """The fault of a child whose socket failed: ``exit`` with its exit code once it is
        reaped, ``crash`` if it lives on (it closed its socket or wrote an impossible frame)."""
        assert self._process is not None
        try:
            code = self._process.wait(_EXIT_WAIT)
        except subprocess.TimeoutExpired:
            self.kill()
            return AgentFault("crash", f"the agent's process broke its connection during {what} ({error})")
        self.kill()
        return AgentFault("exit", f"the agent's process ended during {what} (exit code {code})")

    def describe(self) -> dict[str, Any]:
        """Build the agent once and return `agents.describe` of it plus ``has_act``."""
        reply, _ = self._request("describe", (self.spec,), self.load_timeout, "agent construction")
        return {key: value for key, value in reply.items() if key != "id"}

    def begin(self, seat: int, seed: int, global_seed: int) -> None:
        """Get the agent of ``seat`` ready for a hand: built (or re-seeded, if it has
        ``seed(seed)``), ``reset()``, and the child's global generators seeded."""
        self._request("begin", (self.spec, seat, seed, global_seed), self.load_timeout, "agent construction")

    def act(
        self, seat: int, observation: dict[str, Any], info: dict[str, Any], limit: float | None
    ) -> tuple[Any, float]:
        """The agent's action and the round-trip time; `AgentFault` on any failure."""
        reply, elapsed = self._request("act", (seat, observation, info), limit, "decision")
        if "action" in reply:
            return reply["action"], elapsed
        raise AgentFault("illegal", f"act returned {reply['invalid'][:200]}, not an action id")


# ---------------------------------------------------------------------- the wire


def _write(sock: socket.socket, payload: bytes, deadline: float | None) -> None:
    _timeout(sock, deadline)
    try:
        sock.sendall(len(payload).to_bytes(_HEADER, "big") + payload)
    except TimeoutError:
        raise _Late from None


def _read(sock: socket.socket, limit: int, deadline: float | None) -> bytes | None:
    """One frame, None if it announces more than ``limit`` bytes; `_Late` past ``deadline``,
    EOFError when the other end closed."""
    size = int.from_bytes(_exactly(sock, _HEADER, deadline), "big")
    if size > limit:
        return None
    return _exactly(sock, size, deadline)


def _exactly(sock: socket.socket, count: int, deadline: float | None) -> bytes:
    data = bytearray()
    while len(data) < count:
        _timeout(sock, deadline)
        try:
            chunk = sock.recv(min(count - len(data), 1 << 16))
        except TimeoutError:
            raise _Late from None
        if not chunk:
            raise EOFError("the connection closed")
        data += chunk
    return bytes(data)


def _timeout(sock: socket.socket, deadline: float | None) -> None:
    if deadline is None:
        sock.settimeout(None)
        return
    remaining = deadline - time.perf_counter()
    if remaining <= 0:
        raise _Late
    sock.settimeout(remaining)


def _decode(raw: bytes | None, request: int, command: str) -> dict[str, Any] | None:
    """The reply to request number ``request``, or None if ``raw`` is anything but the shape
    that ``command`` answers with (too long, not JSON, too deep to decode, another request's)."""
    if raw is None:
        return None
    try:
        reply = json.loads(raw)
    except Exception:  # ValueError, RecursionError, MemoryError: whatever the agent wrote, it is not a reply
        return None
    if not isinstance(reply, dict) or type(reply.get("id")) is not int or reply["id"] != request:
        return None
    body = {key: value for key, value in reply.items() if key != "id"}
    if set(body) == {"error"}:
        return reply if isinstance(body["error"], str) else None
    return reply if _SHAPES[command](body) else None


def _is_act(body: dict[str, Any]) -> bool:
    if set(body) == {"action"}:
        return type(body["action"]) is int
    return set(body) == {"invalid"} and isinstance(body["invalid"], str)


def _is_begin(body: dict[str, Any]) -> bool:
    return body == {"ok": True}


def _is_description(body: dict[str, Any]) -> bool:
    sources = body.get("sources")
    return (
        set(body) == {"variant", "sources", "has_act"}
        and isinstance(body["has_act"], bool)
        and (body["variant"] is None or isinstance(body["variant"], str))
        and isinstance(sources, list)
        and all(
            isinstance(s, dict) and set(s) == {"path", "sha256"} and all(isinstance(v, str) for v in s.values())
            for s in sources
        )
    )


_SHAPES = {"act": _is_act, "begin": _is_begin, "describe": _is_description}


def _shown(raw: bytes | None, limit: int) -> str:
    if raw is None:
        return f"longer than {limit} bytes"
    text = raw[:80].decode("utf-8", "replace")
    return f"{len(raw)} bytes, {text!r}" + ("…" if len(raw) > 80 else "")


# ---------------------------------------------------------------------- the child


def _child_main() -> None:
    """The child (started by `IsolatedAgent._start`: its socket's fd, ``sys.path`` and the
    worker's pid in argv): fork, keep the agent's process as the keeper, serve requests in it."""
    fd, worker = int(sys.argv[1]), int(sys.argv[3])
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the coordinator handles Ctrl-C
    _die_with_parent(worker)
    keeper = os.getpid()
    agent_process = os.fork()
    if agent_process:
        os.close(fd)
        _keep(agent_process)
    _die_with_parent(keeper)
    _serve(socket.socket(fileno=fd))


def _keep(pid: int) -> None:
    """The keeper: wait for the agent's process and end as it ended (its exit code or signal)."""
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        if -code not in (signal.SIGKILL, signal.SIGSTOP):  # the two that cannot be handled
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        code = 128 - code  # a signal that does not end a process by default
    os._exit(code)


def _serve(sock: socket.socket) -> None:
    import operator

    import numpy as np

    import agents
    from agents.tournament.play import seed_globals

    seated: dict[int, Any] = {}
    while True:
        try:
            frame = _exactly(sock, int.from_bytes(_exactly(sock, _HEADER, None), "big"), None)
            request, command, *arguments = pickle.loads(frame)
        except (EOFError, OSError, pickle.UnpicklingError):
            return

        def reply(payload: dict[str, Any], request: int = request) -> None:
            _write(sock, json.dumps({"id": request, **payload}).encode(), None)

        try:
            if command == "describe":
                agent = agents.load(arguments[0], seed=0)
                reply({**agents.describe(arguments[0], agent), "has_act": callable(getattr(agent, "act", None))})
            elif command == "begin":
                spec, seat, seed, global_seed = arguments
                agent = seated.get(seat)
                if agent is None or not callable(getattr(agent, "seed", None)):
                    agent = seated[seat] = agents.load(spec, seed=seed)
                if callable(getattr(agent, "seed", None)):
                    agent.seed(seed)
                agent.reset()
                seed_globals(global_seed)
                reply({"ok": True})
            elif command == "act":
                seat, observation, info = arguments
                action = seated[seat].act(observation, info)
                if isinstance(action, (bool, np.bool_)):
                    reply({"invalid": repr(action)})
                else:
                    try:
                        reply({"action": operator.index(action)})
                    except TypeError:
                        reply({"invalid": f"{repr(action)[:200]} ({type(action).__name__[:100]})"})
        except Exception as error:  # the agent's own error: the coordinator books it
            text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
            reply({"error": text[-_MESSAGE_LIMIT:]})


def _die_with_parent(parent: int) -> None:
    """Linux: be killed when our parent dies (the worker, for the keeper; the keeper, for the
    agent's process), so no agent outlives its run; end now if it is already gone."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:
        os._exit(0)
