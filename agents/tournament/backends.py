"""Where hands are played: in this process, in local worker processes, or on Ray.

All three run the same pure `play_hand` on the same `HandTask`s, so they give the same hands;
only the order in which results arrive differs, and the database is keyed by ``(deal, seating)``.

- ``inline`` (``--workers 0``): in the calling process, one hand after another.
- ``local`` (``--workers N``): N spawned worker processes, each fed one hand at a time over its
  own pipe, so the coordinator always knows which hand a worker is playing.
- ``ray``: one Ray task per hand, on the cluster of ``--ray-address`` or ``RAY_ADDRESS``, else
  on a local Ray with N CPUs (`agents.cluster.connect`). On a cluster the job ships the packages
  and every entrant's files (`shipping`); each node is checked before any hand goes there
  (`agents.cluster.probe`: the modules the entrants need, the shipped files' SHA-256 against
  the coordinator's; a node that fails gets no hands, with one warning line naming it and what it
  lacks), and every task checks the files again where it runs. Each hand is sent to one node
  (`_play_on_ray`); a hand whose node is lost, lacks something or whose worker dies is played
  again on another node, never on one where it failed, and reported to ``on_replay``.

A worker that dies while playing a hand (killed, out of memory, a crash in native code, or an
in-process agent calling ``os._exit``) is replaced and the hand is played again with every
agent isolated (``isolate="all"``), so that an agent that ends its own process is charged with
an ``exit`` forfeit instead of cancelling the hand. A local worker that dies while it waits for
an isolated agent (`agents.tournament.play.Flight`) was killed from outside. Sandboxed entrants
cannot see or signal a worker (their own pid namespace), so such a death is charged to nobody
and the hand is played again; for an entrant isolated without a sandbox (``--allow-unsandboxed``),
when the worker dies twice waiting for the same entrant, the next replay charges that entrant (a
`Charge`: it forfeits at that decision, ``exit``, without being asked again), whatever
``max_attempts`` says (`_Deaths`). The coordinator's watchdog looks at its busy workers every
second: a stopped one (SIGSTOP, which only in-process code or the machine's users can send) is
killed and counted as dead, so nothing hangs the run. Every worker sets ``PR_SET_DUMPABLE`` 0.
After ``max_attempts`` deaths the hand is reported as a failure (stored in the ``failures``
table, tried again by ``--resume``) and the tournament goes on. Tasks are taken from the
schedule as workers become free (lazily).

Where the charge cannot reach: with ``--workers 0`` the worker is the coordinator, so an agent
that kills it ends the run (``--resume`` continues it, and meets the agent again). On Ray, a
worker's death is charged to no entrant: the hand is played again (isolated, on another node
where there is one), and after ``max_attempts`` deaths stored as a failure that ``--resume``
plays again. A sandboxed agent cannot cause it (it sees no process outside its sandbox and
has no network to reach Ray), and a node that cannot run the sandbox gets no hands
(`_sandboxes_here`). An agent that can (one isolated without a sandbox, ``--allow-unsandboxed``,
or trusted in the worker by ``--isolate none``) runs as the Ray worker's user, beside the
cluster's address and token: it can run its own tasks on every node and forge whatever record a
charge would rest on, so none would be evidence (the run warns, `_warn_unsandboxed`). An agent
that kills only its own parent kills its keeper process and forfeits in every backend
(`agents.sandbox`).

Workers limit PyTorch and BLAS to one thread each (one hand per core).
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import math
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from agents.sandbox import set_undumpable
from agents.tournament import play
from agents.tournament.play import Flight, play_hand
from agents.tournament.schedule import Charge, HandTask

__all__ = ["BACKENDS", "execute", "shipping"]

logger = logging.getLogger(__name__)

BACKENDS = ("local", "ray")

OnResult = Callable[[dict[str, Any]], None]
OnFailure = Callable[[HandTask, int, str], None]
OnReplay = Callable[[HandTask, str, "str | None"], None]
"""``on_replay(task, why, place)``: a play of ``task`` was lost at ``place`` (a node or a local
worker) and the hand is played again."""

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
        box = dict(task.sandboxes).get(suspect)
        if box is not None and box.confined:  # it cannot see the worker: someone else killed it
            return _isolated(task) if retry else None
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
    entrants: dict[str, dict[str, Any]] | None = None,
    on_replay: OnReplay | None = None,
    on_head_lost: Callable[[str], None] | None = None,
) -> None:
    """Play every task, calling ``on_result(hand)`` (in this process) as each hand finishes,
    ``on_failure(task, attempts, error)`` for a hand given up, ``on_replay(task, why, place)``
    for a hand played again after its node or worker was lost, and ``on_head_lost(line)``
    (from another thread) when the cluster's head stops answering (without it the run raises
    `agents.cluster.ClusterError` when it notices). ``entrants``: their descriptions
    (`agents.tournament.runner.validate`), for what a cluster ships (`shipping`)."""
    queue = _Tasks(tasks)
    replayed = on_replay or (lambda task, why, place: None)
    if backend == "ray":
        _run_ray(
            queue, on_result, on_failure, replayed, workers, ray_address, max_attempts, entrants or {}, on_head_lost
        )
    elif workers == 0:
        set_undumpable()  # this process holds the game
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
        _run_local(queue, on_result, on_failure, replayed, workers, max_attempts)


# ---------------------------------------------------------------------- local processes


def _worker_main(conn: multiprocessing.connection.Connection, cells: Any) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the coordinator handles Ctrl-C
    set_undumpable()  # it holds the game: no /proc/PID/mem, no ptrace for other processes
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


def _run_local(
    queue: _Tasks, on_result: OnResult, on_failure: OnFailure, on_replay: OnReplay, workers: int, max_attempts: int
) -> None:
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
            ready = multiprocessing.connection.wait(waitables, timeout=_WATCH)
            stopped = {id(w) for w in busy if _stopped(w.process.pid)}
            for index, worker in enumerate(pool):
                if worker.task is None or (
                    worker.conn not in ready and worker.process.sentinel not in ready and id(worker) not in stopped
                ):
                    continue
                task = worker.task
                try:
                    status, value = worker.conn.recv() if worker.conn.poll() else ("dead", None)
                except (EOFError, OSError):
                    status, value = "dead", None
                was_stopped = id(worker) in stopped and status == "dead"
                if was_stopped:
                    logger.warning("a worker was stopped (SIGSTOP) while playing deal %d seating %d: killed", *task.key)
                if status == "dead":
                    pid = worker.process.pid
                    worker.kill()
                    attempts[task.key] += 1
                    code = worker.process.exitcode
                    waiting = worker.flight.last()
                    replay = deaths.replay(task, waiting, code, attempts[task.key] < max_attempts)
                    if replay is not None:
                        queue.again(replay)
                        on_replay(task, _death(task, code, was_stopped, waiting), f"local worker (pid {pid})")
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


_WATCH = 1.0
"""Seconds between the coordinator's looks at its workers (the watchdog)."""


def _death(task: HandTask, code: int | None, stopped: bool, waiting: tuple[int, int, str] | None) -> str:
    """Why a local worker's play of ``task`` was lost, in words."""
    how = "was stopped (SIGSTOP) and killed" if stopped else f"died (exit code {code})"
    if waiting is None:
        return f"its worker process {how}"
    seat, step, phase = waiting
    what = "construction" if phase == "construction" else f"decision {step}"
    return f"its worker process {how} while it waited for {task.seats[seat]}'s {what} (seat {seat})"


def _stopped(pid: int | None) -> bool:
    """Whether process ``pid`` is stopped (SIGSTOP, ptrace): it would never answer."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rpartition(b")")[2].split()[0] in (b"T", b"t")
    except (OSError, IndexError):
        return False


def _dispatch(worker: _Worker, queue: _Tasks) -> None:
    worker.task = queue.next()
    if worker.task is not None:
        worker.conn.send(worker.task)


# ---------------------------------------------------------------------- Ray

_REQUIREMENTS = ("numpy", "gymnasium", "pettingzoo", "agents.tournament.play")
_KIND_REQUIREMENTS = {
    "torch": ("torch",),
    "sb3": ("torch", "stable_baselines3", "sb3_contrib"),
    "rllib": ("torch", "ray.rllib", "training.rllib_module"),
}
_REFRESH = 5.0
"""Seconds between looks for nodes that joined or left."""


def _ray_play(task: HandTask, shipment: Any) -> tuple[str, Any]:
    """A Ray task: the hand, with the entrants' files taken from this node's copy of the
    shipment once their checksums match the coordinator's ("node" and the problems if not)."""
    _one_thread()
    problems = shipment.problems()
    if problems:
        return "node", "; ".join(problems)
    task = dataclasses.replace(task, specs=tuple(shipment.localize(spec) for spec in task.specs))
    try:
        task = _sandboxes_here(task)
    except RuntimeError as error:
        return "node", str(error)
    return _play_safely(task)


_NODE_STAGING: dict[str, Any] = {}


def _sandboxes_here(task: HandTask) -> HandTask:
    """The task's sandboxes with their files staged on this node, where the coordinator's
    copies are not (another machine of a Ray cluster); RuntimeError if it cannot sandbox."""
    from agents.sandbox import Staging, available, stage

    boxes = []
    for name, box in task.sandboxes:
        if box.confined:  # the spec names this node's copies of the shipped files: mount those
            spec = task.specs[task.seats.index(name)]
            if spec not in _NODE_STAGING:
                uid, why = available()
                if why is not None:
                    raise RuntimeError(f"cannot sandbox entrant {name} here: {why}")
                if "folder" not in _NODE_STAGING:  # for this worker's life; a later run removes it (`Staging`)
                    import atexit

                    _NODE_STAGING["folder"] = Staging()
                    atexit.register(_NODE_STAGING["folder"].close)
                binds, paths, _ = stage(spec, _NODE_STAGING["folder"].path)
                _NODE_STAGING[spec] = dataclasses.replace(box, binds=binds, paths=paths, uid=uid, log=None)
            box = _NODE_STAGING[spec]
        boxes.append((name, box))
    return dataclasses.replace(task, sandboxes=tuple(boxes))


def shipping(entrants: dict[str, dict[str, Any]]) -> tuple[list[tuple[str, str, str | None]], list[str], list[Any]]:
    """What a tournament on a cluster ships and needs on every node, from the entrants of
    `agents.tournament.runner.validate`: (files as `agents.cluster.Shipment.stage` takes them,
    modules each node must import, packages to ship besides ``mahjong_env`` and ``agents``). A
    user module's top-level package goes to the job's working dir, so it imports there as it
    does from the coordinator's folder; every other source file goes to its own place."""
    import importlib
    import importlib.util

    import agents

    files: list[tuple[str, str, str | None]] = []
    needs = list(_REQUIREMENTS)
    packages: list[Any] = []
    for entry in entrants.values():
        parsed = agents.parse_spec(entry["spec"])
        needs += [name for name in _KIND_REQUIREMENTS.get(parsed.kind, ()) if name not in needs]
        if parsed.kind == "rllib" and not packages:
            packages.append(importlib.import_module("training"))  # the RLModule class a checkpoint names
        if parsed.kind == "module" and not play._trusted(entry["spec"]):
            top = parsed.target.split(".")[0]
            found = importlib.util.find_spec(top)  # finds it without running it (the entrant may be isolated)
            if found is not None and found.origin:
                place = Path(found.origin).parent if found.submodule_search_locations else Path(found.origin)
                files.append((str(place), agents.file_sha256(place), place.name))
            continue
        files += [(source["path"], source["sha256"], None) for source in entry.get("sources", [])]
    return files, needs, packages


class _Nodes:
    """The cluster's nodes as the Ray backend sees them: checked (`agents.cluster.probe`)
    before any hand goes there, usable, lost, or lacking something."""

    def __init__(self, cluster: Any, needs: list[str]) -> None:
        self.cluster, self.needs = cluster, needs
        self.usable: dict[str, Any] = {}
        self.unusable: dict[str, str] = {}  # node id -> why
        self.lacking: set[str] = set()  # unusable because their check failed: that will not change
        self.seen: dict[str, Any] = {}  # every node met, by id
        self.probing: dict[Any, Any] = {}  # probe ref -> node
        self.busy: collections.Counter[str] = collections.Counter()
        self._looked = -math.inf
        self._since = time.monotonic()  # since when no node has been usable

    def refresh(self) -> None:
        """Probe the nodes that joined, forget the ones that left (every `_REFRESH` seconds)."""
        if time.monotonic() - self._looked < _REFRESH:
            return
        self._looked = time.monotonic()
        alive = {node.id: node for node in self.cluster.nodes()}
        self.seen.update(alive)
        for node_id in [n for n in self.usable if n not in alive]:
            self.lose(node_id, "it left the cluster")
        probed = {node.id for node in self.probing.values()}
        for node_id, node in alive.items():
            if node_id not in self.usable and node_id not in self.unusable and node_id not in probed:
                self.probing[self.cluster.start_probe(node, self.needs)] = node

    def probed(self, ref: Any) -> None:
        node = self.probing.pop(ref)
        problem = self.cluster.probe_problem(node, ref)
        if problem and not self.cluster.alive(node):  # it left meanwhile
            self.unusable[node.id] = f"node {node.label} left the cluster"
        elif problem:
            self.unusable[node.id] = problem
            self.lacking.add(node.id)
            logger.warning("%s: no hands go there", problem)
        else:
            self.usable[node.id] = node

    def lose(self, node_id: str, why: str, lacking: bool = False) -> None:
        """No more hands for ``node_id``: it was lost, or (``lacking``) it lacks something."""
        node = self.usable.pop(node_id, None)
        if node is not None:
            self.unusable[node_id] = f"node {node.label} {why}"
            if lacking:
                self.lacking.add(node_id)
            logger.warning("node %s %s: no more hands go there", node.label, why)

    def place(self, exclude: set[str]) -> Any:
        """A usable node outside ``exclude`` with room for one more hand (the least busy), else None."""
        free = [n for n in self.usable.values() if n.id not in exclude and self.busy[n.id] < 2 * max(1, int(n.cpus))]
        return min(free, key=lambda n: self.busy[n.id] / n.cpus) if free else None

    def check_stalled(self, running: bool) -> None:
        """`ClusterError` when no node could take a hand for `CPU_WAIT` seconds, or at once when
        every node was checked and lacks something."""
        from agents.cluster import CPU_WAIT, ClusterError

        if self.usable or running:
            self._since = time.monotonic()
            return
        where = self.cluster.where
        if self.unusable and set(self.unusable) == self.lacking and not self.probing:
            raise ClusterError(f"no node of the Ray cluster {where} can play: " + "; ".join(self.unusable.values()))
        if time.monotonic() - self._since <= CPU_WAIT:
            return
        if self.probing:
            raise ClusterError(
                f"no free CPU on any node of the Ray cluster {where} for {CPU_WAIT:g} s ({len(self.probing)} "
                "waiting for one to be checked): free some, add a node (ray start --address ...) or wait until "
                "other jobs finish"
            )
        gone = "; ".join(self.unusable.values()) or "no node with a CPU"
        raise ClusterError(f"no node of the Ray cluster {where} could take a hand for {CPU_WAIT:g} s: {gone}")


def _warn_unsandboxed(entrants: dict[str, dict[str, Any]]) -> None:
    """On Ray, a warning for each entrant isolated without a sandbox (module docstring)."""
    for name, entry in entrants.items():
        if entry.get("isolated") and not entry.get("sandboxed"):
            logger.warning(
                "agent %s runs on Ray without a sandbox: it runs as the Ray worker's user, with the cluster's "
                "address and token within reach, so a worker it kills cannot be charged to it; such a hand is played "
                "again, then stored as a failure after --max-attempts",
                name,
            )


def _run_ray(
    queue: _Tasks,
    on_result: OnResult,
    on_failure: OnFailure,
    on_replay: OnReplay,
    workers: int,
    address: str | None,
    max_attempts: int,
    entrants: dict[str, dict[str, Any]],
    on_head_lost: Callable[[str], None] | None,
) -> None:
    from agents.cluster import connect

    _warn_unsandboxed(entrants)
    files, needs, packages = shipping(entrants)
    cluster = connect(address, num_cpus=max(1, workers), modules=packages, files=files)
    if on_head_lost is not None:
        cluster.on_head_lost(on_head_lost)
    try:
        _play_on_ray(cluster, queue, on_result, on_failure, on_replay, max_attempts, needs)
    finally:
        cluster.close()


def _play_on_ray(
    cluster: Any,
    queue: _Tasks,
    on_result: OnResult,
    on_failure: OnFailure,
    on_replay: OnReplay,
    max_attempts: int,
    needs: list[str],
) -> None:
    """One Ray task per hand, each sent to a checked node with room (`_Nodes`). A hand whose
    node was lost, or lacks something, or whose worker died, is played again on another node;
    a hand is never sent again to a node where it failed (on a local Ray, its one node replays
    a hand whose worker died). Crashed workers count against ``max_attempts``; lost nodes do not
    (each can fail a hand only once)."""
    import ray
    from ray import exceptions as rex

    from agents.cluster import ClusterError, last_line

    remote = ray.remote(num_cpus=1, max_retries=0)(_ray_play)
    nodes = _Nodes(cluster, needs)
    attempts: collections.Counter[tuple[int, int]] = collections.Counter()
    failed_on: dict[tuple[int, int], set[str]] = collections.defaultdict(set)
    running: dict[Any, tuple[HandTask, str]] = {}
    held: HandTask | None = None  # taken from the queue, waiting for a node with room
    local = not cluster.joined

    def replay(task: HandTask, node_id: str, why: str, crashed: bool) -> None:
        key = task.key
        if crashed:
            attempts[key] += 1
        if not local:
            failed_on[key].add(node_id)
        usable_left = [n for n in nodes.usable if n not in failed_on[key]]
        if attempts[key] >= max_attempts or not usable_left:
            more = "" if usable_left else " (no other node left to play it: --resume plays it again)"
            on_failure(task, max(1, attempts[key]), f"{why}{more}")
            return
        on_replay(task, why, nodes.seen[node_id].label if node_id in nodes.seen else node_id)
        queue.again(_isolated(task) if crashed else task)

    try:
        while True:
            lost = cluster.head_lost
            if lost:
                raise ClusterError(lost)
            nodes.refresh()
            while (task := held if held is not None else queue.next()) is not None:
                held = None
                node = nodes.place(failed_on.get(task.key, set()))
                if node is None:
                    held = task
                    break
                running[remote.options(**cluster.pin(node)).remote(task, cluster.shipment)] = (task, node.id)
                nodes.busy[node.id] += 1
            if held is None and not running:  # the schedule and the hands to play again are all done
                return
            nodes.check_stalled(bool(running))
            done, _ = ray.wait([*running, *nodes.probing], num_returns=1, timeout=1.0)
            for ref in done:
                if ref in nodes.probing:
                    nodes.probed(ref)
                    continue
                task, node_id = running.pop(ref)
                nodes.busy[node_id] -= 1
                label = nodes.seen[node_id].label
                try:
                    status, value = ray.get(ref)
                except (rex.NodeDiedError, rex.TaskUnschedulableError):
                    nodes.lose(node_id, "was lost")
                    replay(task, node_id, f"the node {label} playing it was lost", crashed=False)
                    continue
                except rex.RayTaskError as error:  # the task could not even start: the node lacks something
                    nodes.lose(node_id, f"cannot play: {last_line(error)}", lacking=True)
                    replay(task, node_id, f"the node {label} cannot play: {last_line(error)}", crashed=False)
                    continue
                except rex.RayError as error:  # the worker died (an agent ending it, memory)
                    replay(task, node_id, f"its worker on {label} died: {last_line(error)}", crashed=True)
                    continue
                if status == "node":
                    nodes.lose(node_id, value, lacking=True)
                    replay(task, node_id, f"the node {label} {value}", crashed=False)
                elif status == "ok":
                    on_result(value)
                else:
                    on_failure(task, attempts[task.key] + 1, value)
    finally:
        if not cluster.head_lost:
            for ref in [*running, *nodes.probing]:
                ray.cancel(ref, force=True)
