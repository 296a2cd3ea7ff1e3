"""Joining or starting Ray, for every command that runs on it, with the code going along.

``mahjong-tournament --backend ray``, ``python -m training.ppo --backend ray`` and
``python -m training.rllib_example`` all call `connect`, so they find a cluster the same way:

- the address is ``--ray-address``, else the ``RAY_ADDRESS`` environment variable (Ray's own
  order); ``auto`` joins the cluster that ``ray start`` runs on this machine;
- joining passes no resource argument (the nodes declare their own CPUs; Ray refuses
  ``num_cpus`` when joining) and ships the code with the job through Ray's ``runtime_env``:
  ``py_modules`` carries this package, ``mahjong_env`` and the caller's packages, and
  ``working_dir`` a folder of files (a tournament's entrants, `Shipment`), so every node runs
  the coordinator's code whatever it has installed. What cannot be shipped (Python, numpy,
  torch, Ray itself) must be installed on each node (docs/cluster.md); `probe` checks a node
  for it before work goes there (`Cluster.start_probe`, `Cluster.check_nodes`);
- without an address a new local Ray is started with ``num_cpus`` CPUs (``address="local"``:
  never a cluster that merely happens to run on this machine), its workers given this process's
  ``sys.path``.

Failures are one line (`ClusterError`): a cluster that cannot be reached or asks for a token,
no free CPU after a stated wait (`Cluster.wait_for_cpus`), a node that lacks something
(`Cluster.probe_problem`), and a lost head: after joining, a thread knocks on the head's GCS
port every second and `Cluster.head_lost` says when it stopped answering for `HEAD_TIMEOUT`
seconds (`Cluster.on_head_lost` with `exiting` makes a command end with one line instead of
Ray's minute of retries and a bare exit status 1). Ray's own notices about the cluster (a node
marked dead) go to stderr: the commands keep stdout for their results.

PyTorch, OpenMP and BLAS use one thread in every Ray worker (one task or actor per CPU), and
``MAHJONG_ENV_PURE`` is passed on when it is set here.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import re
import shutil
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import agents

__all__ = [
    "ADDRESS_VARIABLE",
    "CPU_WAIT",
    "HEAD_TIMEOUT",
    "Cluster",
    "ClusterError",
    "Node",
    "ShippedFile",
    "Shipment",
    "connect",
    "exiting",
    "last_line",
    "probe",
    "resolve_address",
]

log = logging.getLogger(__name__)

ADDRESS_VARIABLE = "RAY_ADDRESS"
HEAD_TIMEOUT = 10.0
"""Seconds without an answer from the head's GCS port before the head counts as lost."""
CPU_WAIT = 60.0
"""Seconds to wait for a free CPU (or a node's check to start) before saying there is none."""
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
_PASSED_ON = ("MAHJONG_ENV_PURE",)
_TOKEN_HELP = (
    "set RAY_AUTH_MODE=token and the cluster's token in RAY_AUTH_TOKEN or a file named by RAY_AUTH_TOKEN_PATH "
    "(docs/cluster.md)"
)


class ClusterError(RuntimeError):
    """Something about the Ray cluster, said in one line (module docstring)."""


def resolve_address(flag: str | None) -> tuple[str | None, str]:
    """(the address to join, where it came from): the flag, else ``RAY_ADDRESS``, else None
    (start a local Ray)."""
    if flag:
        return flag, "--ray-address"
    if os.environ.get(ADDRESS_VARIABLE):
        return os.environ[ADDRESS_VARIABLE], ADDRESS_VARIABLE
    return None, "a local Ray"


@dataclasses.dataclass(frozen=True)
class Node:
    """An alive node of the cluster."""

    id: str
    ip: str
    cpus: float
    head: bool

    @property
    def label(self) -> str:
        return f"{self.ip} (node {self.id[:8]})"


# ---------------------------------------------------------------------- shipped files


@dataclasses.dataclass(frozen=True)
class ShippedFile:
    """One file or folder of the job: ``path`` as the coordinator names it, ``shipped`` its place
    relative to the job's working dir on every node (None: used where it is, on a local Ray)."""

    path: str
    shipped: str | None
    sha256: str

    def local(self) -> Path:
        return Path(self.path) if self.shipped is None else Path.cwd() / self.shipped


@dataclasses.dataclass(frozen=True)
class Shipment:
    """The files a job's code reads besides the packages (a tournament's checkpoints and agent
    files), found on a node by their coordinator path and checked there by SHA-256."""

    files: tuple[ShippedFile, ...] = ()

    @classmethod
    def stage(cls, sources: Iterable[tuple[str, str, str | None]], folder: Path | None) -> Shipment:
        """The shipment of ``sources`` (path, sha256, place): copied into ``folder`` (the job's
        working dir) at ``place``, by default ``files/<sha256 prefix>/<name>``; used in place when
        ``folder`` is None."""
        files: dict[str, ShippedFile] = {}
        for path, digest, place in sources:
            if path in files:
                continue
            shipped = None
            if folder is not None:
                shipped = place or f"files/{digest[:16]}/{Path(path).name}"
                _copy(Path(path), folder / shipped)
            files[path] = ShippedFile(path, shipped, digest)
        return cls(tuple(files.values()))

    def local(self, path: str) -> str:
        """Where the file the coordinator calls ``path`` is on this node (``path`` itself when it
        is not part of the shipment)."""
        for file in self.files:
            if file.path == path:
                return str(file.local())
        return path

    def localize(self, spec: str) -> str:
        """An agent spec with every shipped path it names (target, keyword values) replaced by
        this node's copy."""
        if not self.files or not any(file.path in spec for file in self.files):
            return spec
        parsed = agents.parse_spec(spec)
        kwargs = tuple((key, self.local(value) if isinstance(value, str) else value) for key, value in parsed.kwargs)
        return dataclasses.replace(parsed, target=self.local(parsed.target), kwargs=kwargs).text()

    def problems(self) -> list[str]:
        """What differs on this node from the coordinator: missing files, other checksums
        (checked once per process)."""
        return list(_problems(self.files))


def _copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.is_dir():
        shutil.copytree(source, target)
        return
    try:
        os.link(source, target)  # the same bytes without a copy when the staging folder is on that filesystem
    except OSError:
        shutil.copy2(source, target)


@functools.lru_cache(maxsize=64)
def _problems(files: tuple[ShippedFile, ...]) -> tuple[str, ...]:
    found = []
    for file in files:
        local = file.local()
        if not local.exists():
            found.append(f"lacks {file.path} (looked for it at {local})")
            continue
        digest = agents.file_sha256(local)
        if digest != file.sha256:
            found.append(f"has {file.path} with sha256 {digest[:12]}…, the coordinator's is {file.sha256[:12]}…")
    return tuple(found)


def probe(requirements: Sequence[str], shipment: Shipment) -> list[str]:
    """Run on a node: what it lacks to do the job (modules that do not import, shipped files
    missing or changed); empty when it has everything."""
    import importlib

    found = []
    for name in requirements:
        try:
            importlib.import_module(name)
        except ImportError as error:
            found.append(f"lacks {getattr(error, 'name', None) or name} ({type(error).__name__}: {error})")
    return found + shipment.problems()


# ---------------------------------------------------------------------- the connection


def connect(
    address: str | None = None,
    *,
    num_cpus: int | None = None,
    modules: Sequence[ModuleType] = (),
    files: Iterable[tuple[str, str, str | None]] = (),
    log_to_driver: bool = False,
) -> Cluster:
    """Join the cluster at ``address`` (else ``RAY_ADDRESS``) or start a local Ray with
    ``num_cpus`` CPUs (module docstring). ``modules``: the caller's packages to ship besides
    `mahjong_env` and `agents`; ``files``: (path, sha256, place or None) of the files to ship (`Shipment.stage`).
    Reuses a Ray this process already initialised (shipping nothing). `ClusterError` when the
    cluster cannot be joined."""
    try:
        import ray
    except ImportError:
        raise ClusterError("running on Ray needs Ray: pip install -e '.[ray]'") from None
    files = list(files)
    if ray.is_initialized():
        gcs = ray.get_runtime_context().gcs_address
        return Cluster(gcs, "this process's Ray", False, False, Shipment.stage(files, None))
    address, source = resolve_address(address)
    variables = {name: "1" for name in THREAD_VARIABLES}
    variables.update({name: os.environ[name] for name in _PASSED_ON if name in os.environ})
    if address is None:
        path = os.pathsep.join(p for p in sys.path if p and os.path.isdir(p))
        ray.init(
            address="local",
            num_cpus=num_cpus,
            include_dashboard=False,
            log_to_driver=log_to_driver,
            runtime_env={"env_vars": {**variables, "PYTHONPATH": path}},
        )
        return Cluster(None, source, True, False, Shipment.stage(files, None))
    _knock(address, source)
    import mahjong_env

    staging = Path(tempfile.mkdtemp(prefix="mahjong-job-"))
    shipment = Shipment.stage(files, staging)
    shipped = list(dict.fromkeys([mahjong_env, agents, *modules]))
    runtime_env: dict[str, Any] = {"py_modules": shipped, "env_vars": variables}
    if shipment.files:
        runtime_env["working_dir"] = str(staging)
    try:
        ray.init(address=address, log_to_driver=log_to_driver, runtime_env=runtime_env)
    except Exception as error:  # Ray raises ConnectionError, RuntimeError or ValueError here
        raise ClusterError(_join_error(address, source, error)) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # ray.init has uploaded it
    _notices_to_stderr()
    cluster = Cluster(ray.get_runtime_context().gcs_address, source, True, True, shipment)
    cluster.watch_head()
    names = ", ".join(module.__name__ for module in shipped)
    log.info(
        "joined the Ray cluster at %s (%s): %d nodes, %g CPUs; shipped %s%s",
        address,
        source,
        len(cluster.nodes()),
        ray.cluster_resources().get("CPU", 0.0),
        names,
        f" and {len(shipment.files)} entrant files" if shipment.files else "",
    )
    return cluster


def _knock(address: str, source: str) -> None:
    """`ClusterError` at once when nothing answers at a ``host:port`` address (Ray itself would
    retry for minutes); ``auto`` and ``ray://`` addresses are left to Ray."""
    host, sep, port = address.rpartition(":")
    if address == "auto" or "://" in address or not sep or not port.isdigit():
        return
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=5.0):
            return
    except OSError as error:
        reason = error.strerror or type(error).__name__
    raise ClusterError(
        f"cannot join the Ray cluster at {address} ({source}): nothing answers there ({reason}); is `ray start "
        "--head` running on that machine, and its port open to this one?"
    )


def _join_error(address: str, source: str, error: BaseException) -> str:
    from ray.exceptions import AuthenticationError

    chain: list[BaseException] = []
    cause: BaseException | None = error
    while cause is not None and cause not in chain:
        chain.append(cause)
        cause = cause.__cause__ or cause.__context__
    if any(isinstance(e, AuthenticationError) or "InvalidAuthToken" in str(e) for e in chain):
        return f"the Ray cluster at {address} ({source}) refused this process's token: {_TOKEN_HELP}"
    last = " ".join((str(error).strip().splitlines() or [type(error).__name__])[-1].split())
    if address == "auto":
        return f"no Ray cluster runs on this machine (--ray-address auto): start one with `ray start --head` ({last})"
    return f"cannot join the Ray cluster at {address} ({source}): {last}; is `ray start --head` running there?"


class Cluster:
    """This process's connection to Ray (`connect`): where it is, what it shipped, its nodes."""

    def __init__(self, gcs: str | None, source: str, owned: bool, joined: bool, shipment: Shipment) -> None:
        self.gcs = gcs
        """The head's GCS address ``host:port`` (None: a local Ray started here)."""
        self.source = source
        self.owned = owned
        """Whether `connect` called ``ray.init`` (so `close` shuts Ray down)."""
        self.joined = joined
        """Whether `connect` joined a cluster by its address (a local Ray, or one this process
        started before, is not watched and counts as one machine)."""
        self.shipment = shipment
        self._lost_since: float | None = None
        self._watching = threading.Event()

    @property
    def where(self) -> str:
        return f"at {self.gcs} ({self.source})" if self.gcs else f"({self.source})"

    def nodes(self) -> list[Node]:
        """The alive nodes with at least one CPU."""
        import ray

        found = []
        for node in ray.nodes():
            resources = node.get("Resources", {})
            if node.get("Alive") and resources.get("CPU", 0) > 0:
                head = "node:__internal_head__" in resources
                found.append(Node(node["NodeID"], node.get("NodeManagerAddress", "?"), resources["CPU"], head))
        return found

    # ------------------------------------------------------------------ nodes

    def pin(self, node: Node) -> dict[str, Any]:
        """``.options(**cluster.pin(node))``: run a task on ``node`` and nowhere else."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        return {"scheduling_strategy": NodeAffinitySchedulingStrategy(node.id, soft=False)}

    def start_probe(self, node: Node, requirements: Sequence[str]) -> Any:
        """Start `probe` on ``node`` (one CPU); `probe_problem` reads its answer."""
        import ray

        remote = ray.remote(num_cpus=1, max_retries=0)(probe)
        return remote.options(**self.pin(node)).remote(list(requirements), self.shipment)

    @staticmethod
    def probe_problem(node: Node, ref: Any) -> str | None:
        """The one-line problem a finished probe found on ``node``, None when there is none."""
        import ray

        try:
            found = ray.get(ref)
        except ray.exceptions.RayError as error:  # a node without numpy cannot even load the probe
            line = last_line(error)
            missing = re.search(r"No module named '([\w.]+)'", line)
            found = [f"lacks {missing.group(1)} ({line})" if missing else line]
        return f"node {node.label} cannot do this job: {'; '.join(found)}" if found else None

    def check_nodes(self, requirements: Sequence[str], wait: float = CPU_WAIT) -> None:
        """Probe every node; `ClusterError` naming the first that lacks something, or when a
        probe cannot start within ``wait`` seconds (no free CPU there)."""
        import ray

        nodes = self.nodes()
        if not nodes:
            raise ClusterError(f"the Ray cluster {self.where} has no alive node with a CPU: start one with ray start")
        refs = {self.start_probe(node, requirements): node for node in nodes}
        ready, late = ray.wait(list(refs), num_returns=len(refs), timeout=wait)
        for ref in ready:
            problem = self.probe_problem(refs[ref], ref)
            if problem and self.alive(refs[ref]):  # a node that left meanwhile is no problem
                raise ClusterError(problem)
        if late:
            for ref in late:
                ray.cancel(ref, force=True)
            labels = ", ".join(refs[ref].label for ref in late)
            raise ClusterError(f"no free CPU on {labels} of the Ray cluster {self.where} in {wait:g} s: {_CPU_HELP}")

    def alive(self, node: Node) -> bool:
        """Whether ``node`` is still in the cluster."""
        return any(other.id == node.id for other in self.nodes())

    def wait_for_cpus(self, count: float, what: str, wait: float = CPU_WAIT) -> None:
        """Return once ``count`` CPUs are free; `ClusterError` after ``wait`` seconds, or at once
        when the whole cluster has fewer."""
        import ray

        deadline = time.monotonic() + wait
        while True:
            free = ray.available_resources().get("CPU", 0.0)
            if free >= count:
                return
            total = ray.cluster_resources().get("CPU", 0.0)
            if total < count and not self.joined:
                raise ClusterError(f"{what} need {count:g} CPUs; this local Ray has {total:g}")
            if time.monotonic() >= deadline:
                raise ClusterError(
                    f"no free CPU for {what} after {wait:g} s: they need {count:g}, the Ray cluster {self.where} has "
                    f"{total:g} CPUs, {free:g} free; {_CPU_HELP}"
                )
            time.sleep(0.5)

    # ------------------------------------------------------------------ the head

    def watch_head(self) -> None:
        """Start the thread that knocks on the head's GCS port every second (module docstring)."""
        if not self.joined or self._watching.is_set():
            return
        self._watching.set()
        host, _, port = self.gcs.rpartition(":")
        threading.Thread(target=self._watch, args=(host, int(port)), name="ray-head-watch", daemon=True).start()

    def _watch(self, host: str, port: int) -> None:
        while self._watching.is_set():
            try:
                with socket.create_connection((host, port), timeout=1.0):
                    self._lost_since = None
            except OSError:
                if self._lost_since is None:
                    self._lost_since = time.monotonic()
            time.sleep(1.0)

    @property
    def head_lost(self) -> str | None:
        """One line when the head has not answered for `HEAD_TIMEOUT` seconds, else None."""
        since = self._lost_since
        if since is None or time.monotonic() - since < HEAD_TIMEOUT:
            return None
        return f"lost the Ray head at {self.gcs}: no answer for {HEAD_TIMEOUT:g} s (stopped, or its machine is gone)"

    def on_head_lost(self, callback: Callable[[str], None]) -> None:
        """Call ``callback(one line)`` from a watching thread once the head is lost (`head_lost`),
        whatever the main thread is blocked in (Ray's calls wait a minute for a lost head)."""

        def watch() -> None:
            while self._watching.is_set():
                message = self.head_lost
                if message:
                    callback(message)
                    return
                time.sleep(0.5)

        if self.joined:
            threading.Thread(target=watch, name="ray-head-lost", daemon=True).start()

    def close(self) -> None:
        """Stop watching the head; shut Ray down if `connect` started or joined it here."""
        self._watching.clear()
        if self.owned and self.head_lost is None:
            import ray

            ray.shutdown()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def exiting(prog: str, then: Callable[[], str]) -> Callable[[str], None]:
    """A `Cluster.on_head_lost` callback for a command: print ``PROG: error: <what happened>;
    <then()>`` and end the process with status 1 (Ray would retry for a minute, then exit 1
    without a word). Finished work must already be on disk."""

    def end(message: str) -> None:
        print(f"{prog}: error: {message}; {then()}", file=sys.stderr, flush=True)
        os._exit(1)

    return end


def _notices_to_stderr() -> None:
    """Ray's driver prints the cluster's notices (a node marked dead, ...) on stdout, where our
    commands print only their results: send them to stderr."""
    from ray._private import worker

    original = getattr(worker, "print_to_stdstream", None)
    if original is None or getattr(original, "to_stderr", False):
        return

    def to_stderr(data: dict[str, Any], ignore_prefix: bool) -> None:
        original({**data, "is_err": True}, ignore_prefix)

    to_stderr.to_stderr = True  # type: ignore[attr-defined]
    worker.print_to_stdstream = to_stderr


_CPU_HELP = (
    "other jobs hold them, or too few nodes joined: free some, add a node (ray start --address ...) or ask for less"
)


def last_line(error: BaseException) -> str:
    """The last line of an error's text (where a traceback names the exception), as one line."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    return " ".join((lines[-1] if lines else type(error).__name__).split())
