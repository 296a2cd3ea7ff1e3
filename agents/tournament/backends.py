"""Where hands are played: in this process, in local worker processes, or on Ray.

All three run the same pure `play_hand` on the same `HandTask`s, so they give the same hands;
only the order in which results arrive differs, and the database is keyed by ``(deal, seating)``.

- ``inline`` (``--workers 0``): in the calling process, one hand after another.
- ``local`` (``--workers N``): N spawned worker processes, each fed one hand at a time over its
  own pipe, so the coordinator always knows which hand a worker is playing.
- ``ray``: one Ray task per hand, ``ray.init(address=...)`` or a local Ray with N CPUs. Agent
  modules must be importable on the Ray workers (installed, or shipped with Ray's ``runtime_env``).

A worker that dies while playing a hand (killed, out of memory, a crash in native code, or an
in-process agent calling ``os._exit``) is replaced and the hand is played again with every
agent isolated (``isolate="all"``), so that an agent that ends its own process is charged with
an ``exit`` forfeit instead of cancelling the hand. A local worker that dies while it waits for
an isolated agent (`agents.tournament.play.Flight`) was killed from outside: when it dies twice
waiting for the same entrant, the next replay charges that entrant (a `Charge`: it forfeits at
that decision, ``exit``, without being asked again), whatever ``max_attempts`` says (`_Deaths`).
After ``max_attempts`` deaths the hand is reported as a failure (stored in the ``failures``
table, tried again by ``--resume``) and the tournament goes on. Tasks are taken from the
schedule as workers become free (lazily).

Where the charge cannot reach: with ``--workers 0`` the worker is the coordinator, so an agent
that kills it ends the run (``--resume`` continues it, and meets the agent again); on Ray, a
dead task is replayed isolated but not charged. An agent that kills only its own parent kills
its keeper process and forfeits in every backend (`agents.sandbox`).

Workers limit PyTorch and BLAS to one thread each (one hand per core).
"""

from __future__ import annotations

import collections
import dataclasses
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import traceback
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from agents.tournament import play
from agents.tournament.play import Flight, play_hand
from agents.tournament.schedule import Charge, HandTask

__all__ = ["BACKENDS", "execute"]

BACKENDS = ("local", "ray")

OnResult = Callable[[dict[str, Any]], None]
OnFailure = Callable[[HandTask, int, str], None]

_THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def _one_thread() -> None:
    for name in _THREAD_VARIABLES:
        os.environ.setdefault(name, "1")
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


def _play_safely(task: HandTask, flight: Flight | None = None) -> tuple[str, Any]:
    try:
        return "ok", play_hand(task, flight=flight)
    except Exception:  # a bug outside the agents (they are handled in play_hand)
        return "error", traceback.format_exc()


class _Tasks:
    """The schedule, taken lazily, with hands to play again put in front."""

    def __init__(self, tasks: Iterable[HandTask]) -> None:
        self._iterator: Iterator[HandTask] = iter(tasks)
        self._again: collections.deque[HandTask] = collections.deque()

    def next(self) -> HandTask | None:
        if self._again:
            return self._again.popleft()
        return next(self._iterator, None)

    def again(self, task: HandTask) -> None:
        self._again.append(task)


def _isolated(task: HandTask) -> HandTask:
    return dataclasses.replace(task, isolate="all")


class _Deaths:
    """Whom the local workers that died were waiting for, per hand, and what to replay.

    A worker that dies while it waits for an isolated entrant's request was killed from
    outside. The first time, the hand is played again as it was (isolated) to see whether the
    death follows that entrant: another entrant could have killed the worker while a rival's
    request happened to be in flight. A second death waiting for the same entrant is charged
    to it (`Charge`), on the next replay, whatever ``max_attempts`` says."""

    def __init__(self) -> None:
        self._suspects: dict[tuple[int, int], str] = {}

    def replay(
        self, task: HandTask, waiting: tuple[int, int, str] | None, code: int | None, retry: bool
    ) -> HandTask | None:
        """The task to play after a death, None to give up (``retry``: attempts are left)."""
        if waiting is None or task.charge is not None:
            return _isolated(task) if retry else None
        seat, step, phase = waiting
        suspect = task.seats[seat]
        if self._suspects.get(task.key) == suspect:
            message = (
                f"the worker process playing the hand died (exit code {code}) while it waited for this agent's "
                f"{phase} in its own process, twice: none of the agent's code runs in the worker, so the agent "
                "is held to have killed it"
            )
            return dataclasses.replace(task, isolate="all", charge=Charge(seat, step, "exit", message))
        first = task.key not in self._suspects
        self._suspects[task.key] = suspect
        return _isolated(task) if retry or first else None


def execute(
    tasks: Iterable[HandTask],
    on_result: OnResult,
    on_failure: OnFailure,
    backend: str = "local",
    workers: int = 1,
    ray_address: str | None = None,
    max_attempts: int = 3,
) -> None:
    """Play every task, calling ``on_result(hand)`` (in this process) as each hand finishes."""
    queue = _Tasks(tasks)
    if backend == "ray":
        _run_ray(queue, on_result, on_failure, workers, ray_address, max_attempts)
    elif workers == 0:
        try:
            while (task := queue.next()) is not None:
                status, value = _play_safely(task)
                if status == "ok":
                    on_result(value)
                else:
                    on_failure(task, 1, value)
        finally:
            play._POOL.close()
    else:
        _run_local(queue, on_result, on_failure, workers, max_attempts)


# ---------------------------------------------------------------------- local processes


def _worker_main(conn: multiprocessing.connection.Connection, cells: Any) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the coordinator handles Ctrl-C
    _one_thread()
    flight = Flight(cells)
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            play._POOL.close()
            return
        conn.send(_play_safely(task, flight))


class _Worker:
    def __init__(self, context: Any) -> None:
        self.conn, child = context.Pipe()
        self.flight = Flight(context.RawArray("q", 4))
        self.process = context.Process(target=_worker_main, args=(child, self.flight.cells), daemon=True)
        self.process.start()
        child.close()
        self.task: HandTask | None = None

    def stop(self) -> None:
        try:
            self.conn.send(None)
        except (OSError, ValueError):
            pass

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)
        self.conn.close()


def _run_local(queue: _Tasks, on_result: OnResult, on_failure: OnFailure, workers: int, max_attempts: int) -> None:
    context = multiprocessing.get_context("spawn")
    attempts: dict[tuple[int, int], int] = collections.defaultdict(int)
    deaths = _Deaths()
    first = [t for t in (queue.next() for _ in range(workers)) if t is not None]
    pool = [_Worker(context) for _ in first]
    try:
        for worker, task in zip(pool, first):
            worker.task = task
            worker.conn.send(task)
        while any(w.task is not None for w in pool):
            busy = [w for w in pool if w.task is not None]
            waitables: list[Any] = [w.conn for w in busy] + [w.process.sentinel for w in busy]
            ready = multiprocessing.connection.wait(waitables)
            for index, worker in enumerate(pool):
                if worker.task is None or (worker.conn not in ready and worker.process.sentinel not in ready):
                    continue
                task = worker.task
                try:
                    status, value = worker.conn.recv() if worker.conn.poll() else ("dead", None)
                except (EOFError, OSError):
                    status, value = "dead", None
                if status == "dead":
                    worker.kill()
                    attempts[task.key] += 1
                    code = worker.process.exitcode
                    replay = deaths.replay(task, worker.flight.last(), code, attempts[task.key] < max_attempts)
                    if replay is not None:
                        queue.again(replay)
                    else:
                        on_failure(task, attempts[task.key], f"worker process died (exit code {code}) on every attempt")
                    pool[index] = worker = _Worker(context)
                    _dispatch(worker, queue)
                    continue
                _dispatch(worker, queue)  # keep the worker busy while the result is stored
                if status == "ok":
                    on_result(value)
                else:
                    on_failure(task, attempts[task.key] + 1, value)
    finally:
        for worker in pool:
            worker.stop()
        for worker in pool:
            worker.process.join(2)
            worker.kill()


def _dispatch(worker: _Worker, queue: _Tasks) -> None:
    worker.task = queue.next()
    if worker.task is not None:
        worker.conn.send(worker.task)


# ---------------------------------------------------------------------- Ray


def _ray_play(task: HandTask) -> tuple[str, Any]:
    _one_thread()
    return _play_safely(task)


def _run_ray(
    queue: _Tasks,
    on_result: OnResult,
    on_failure: OnFailure,
    workers: int,
    address: str | None,
    max_attempts: int,
) -> None:
    try:
        import ray
    except ImportError:
        raise RuntimeError("the ray backend needs Ray: pip install -e '.[ray]'") from None
    started_here = not ray.is_initialized()
    if started_here:
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            path = os.pathsep.join(p for p in sys.path if p and os.path.isdir(p))
            ray.init(
                num_cpus=max(1, workers),
                include_dashboard=False,
                log_to_driver=False,
                runtime_env={"env_vars": {"PYTHONPATH": path, **{v: "1" for v in _THREAD_VARIABLES}}},
            )
    remote = ray.remote(num_cpus=1, max_retries=0)(_ray_play)
    window = 2 * max(1, int(ray.available_resources().get("CPU", workers) or 1))
    attempts: dict[tuple[int, int], int] = collections.defaultdict(int)
    running: dict[Any, HandTask] = {}
    exhausted = False
    try:
        while not exhausted or running:
            while not exhausted and len(running) < window:
                task = queue.next()
                if task is None:
                    exhausted = True
                else:
                    running[remote.remote(task)] = task
            if not running:
                break
            done, _ = ray.wait(list(running), num_returns=1)
            for ref in done:
                task = running.pop(ref)
                try:
                    status, value = ray.get(ref)
                except ray.exceptions.RayError as error:
                    attempts[task.key] += 1
                    if attempts[task.key] < max_attempts:
                        running[remote.remote(_isolated(task))] = task
                    else:
                        on_failure(task, attempts[task.key], f"Ray task failed on every attempt: {error}")
                    continue
                if status == "ok":
                    on_result(value)
                else:
                    on_failure(task, 1, value)
    finally:
        for ref in running:
            ray.cancel(ref, force=True)
        if started_here:
            ray.shutdown()
