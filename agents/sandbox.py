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
dies with it (``PR_SET_PDEATHSIG``) and forfeits with ``exit``. In the sandbox the worker is
out of its sight (``SO_PEERCRED`` gives pid 0); outside it, an agent that hunts down the worker
(its pid is one ``/proc`` read away) is charged by the backends, which note whose request a
worker was waiting for (`agents.tournament.play.Flight`).

The sandbox. With a `Sandbox` whose ``confined`` is true (the tournament's default for every
untrusted entrant), the child runs under bubblewrap (``bwrap``, Debian's ``bubblewrap``): new
user, pid, network, IPC, UTS and cgroup namespaces (it sees no other process, so it can neither
signal nor read the worker, the coordinator or a rival; it has no network), a root of its own
in which only Python, its libraries, this package and the entrant's own files (copies checked
by SHA-256, `stage`, in a `Staging` folder of the temp dir that the run removes, or the next
run where a SIGKILL left it) are mounted read-only, a private ``/tmp`` of ``Limits.file_mb``, a uid of
its own (65534: the ``nobody`` user where the coordinator runs as root and Python is readable
by it, else inside its user namespace only), no controlling terminal (``--new-session``) and
``--die-with-parent``. In the child, before any entrant code, the keeper and the agent's
process set rlimits (`Limits`: address space, processes, file size, CPU seconds) and
``PR_SET_DUMPABLE`` 0, and the agent's stdout and stderr go through the keeper, which keeps
the first ``Limits.output_kb`` KiB (`Sandbox.log`) and drops the rest. `available` says whether
the machine can do it (a user namespace must be allowed: kernel user namespaces or root); the
tournament refuses an untrusted entrant without it unless the user accepts the risk
(``--allow-unsandboxed``: a plain child process, as below).

Without the sandbox this is process isolation only: the child runs as the same user, with the
same filesystem and network, and could look for the results database or signal other
processes. Either way one child serves every seat the entrant plays in a worker, hand after
hand, so copies of one entrant at one table can share what each sees.

Trust. `trusted` decides what may run outside any child process: the baseline agents of this
package, resolved to their class and its file, never from how the spec is spelt.

Cost: one decision is a round trip over a local socket (pickling the observation, about
19 KB, and the view). Measured with `RandomAgent` on a shared 2-core machine (load 5–6):
one decision 36 µs in-process, 170–260 µs isolated (28,000 vs 4,000–5,800 decisions/s, the
agent alone); in a whole tournament, where the agent's process must be woken for every
decision, 0.03 ms vs 1.6 ms per decision (1,600 vs 390 decisions/s, env included). Cheap for a
network agent (a forward pass costs about as much), significant for the random baseline:
``--isolate none`` trusts every entrant and skips it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import importlib.util
import json
import os
import pickle
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import threading
import time
import traceback
from pathlib import Path
from typing import Any

__all__ = [
    "REPLY_LIMITS",
    "TRUSTED_CLASSES",
    "AgentFault",
    "IsolatedAgent",
    "Limits",
    "Sandbox",
    "Staging",
    "available",
    "remove_stale_staging",
    "set_undumpable",
    "stage",
    "trusted",
]

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
_NOBODY = 65534
_PR_SET_DUMPABLE = 4
_PR_SET_PDEATHSIG = 1


@dataclasses.dataclass(frozen=True)
class Limits:
    """Resource limits of a sandboxed entrant's processes (set as rlimits, soft = hard, in the
    child before any entrant code runs). Over a limit the agent's call fails or its process
    dies: a forfeit of that agent (``crash`` or ``exit``), never of another."""

    memory_mb: int = 4096
    """RLIMIT_AS: address space of each process, MiB."""
    processes: int = 256
    """RLIMIT_NPROC: processes and threads of the sandbox's user, counted per sandbox (each has
    its own user namespace, and the kernel counts per namespace: one entrant's forks do not use
    up a rival's). Where that user maps to root outside (bubblewrap run as root: the coordinator
    is root and ``nobody`` cannot read Python, e.g. a pyenv under /root) the kernel does not
    enforce it, and the sandbox's processes are uid 0 outside, like the coordinator (no
    capabilities, read-only mounts); either way every fork stays in the sandbox's pid namespace
    and dies with it."""
    file_mb: int = 64
    """RLIMIT_FSIZE: the largest file it may write, MiB; also the size of its private ``/tmp``."""
    cpu_seconds: int = 3600
    """RLIMIT_CPU: CPU seconds of one process (an entrant's process serves many hands; when it
    is used up the process dies, that hand is forfeited and the next one starts a new process)."""
    output_kb: int = 256
    """Of the agent's stdout and stderr, the first this many KiB per process are kept."""

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"sandbox limit {field.name} must be a positive integer, got {value!r}")


@dataclasses.dataclass(frozen=True)
class Sandbox:
    """Where an `IsolatedAgent`'s child runs (module docstring)."""

    confined: bool = True
    """Under bubblewrap; False: a plain child process (the user accepted the risk)."""
    binds: tuple[tuple[str, str], ...] = ()
    """Read-only mounts besides Python and this package: (file or folder here, path inside)."""
    paths: tuple[str, ...] = ()
    """Folders put in front of the child's ``sys.path`` (where a module entrant is found)."""
    limits: Limits = Limits()
    log: str | None = None
    """File the kept output is appended to; None: discarded."""
    uid: int | None = None
    """Run bubblewrap as this user (``nobody`` where the coordinator is root, `available`)."""


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

    def __init__(self, spec: str, load_timeout: float = 300.0, sandbox: Sandbox | None = None) -> None:
        self.spec = spec
        self.load_timeout = load_timeout
        self.sandbox = sandbox
        self._process: subprocess.Popen | None = None
        self._socket: socket.socket | None = None
        self._requests = 0

    # ------------------------------------------------------------------ lifecycle

    def _start(self) -> None:
        parent, child = socket.socketpair()
        sandbox = self.sandbox or Sandbox(confined=False)
        paths = list(sandbox.paths) + [p for p in sys.path if p]
        limits = json.dumps(dataclasses.asdict(sandbox.limits)) if sandbox.confined else "{}"
        boot = [sys.executable, "-c", _BOOT, str(child.fileno()), json.dumps(paths)]
        if sandbox.confined:
            command = [*_bwrap(sandbox), *boot, "0", limits]
            env = _clean_env()
        else:
            command = [*boot, str(os.getpid()), limits]
            env = dict(os.environ)
            for name in _THREAD_VARIABLES:
                env.setdefault(name, "1")
        output = _log(sandbox)
        try:
            self._process = subprocess.Popen(
                command,
                pass_fds=(child.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=output,
                env=env,
                start_new_session=True,
                **_as_user(sandbox.uid if sandbox.confined else None),
            )
        finally:
            child.close()
            if output not in (None, subprocess.DEVNULL):
                os.close(output)
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


# ---------------------------------------------------------------------- the sandbox

TRUSTED_CLASSES = frozenset(
    {
        ("agents.random_agent", "RandomAgent"),
        ("agents.heuristic", "HeuristicAgent"),
        *(
            ("agents.tournament.testing", name)
            for name in ("CrashingAgent", "DieOnceAgent", "IllegalAgent", "MisbehavingAgent", "SlowAgent")
        ),
    }
)
"""The classes that may run in the worker itself: (module, class name) of the class object a
spec resolves to, whose file must be in this installed package."""


def _package_dir() -> Path:
    return Path(__file__).resolve().parent


def trusted(spec: str) -> bool:
    """Whether ``spec`` builds only this package's baseline code, decided from what it resolves
    to: ``random``, ``heuristic``, a ``torch:`` checkpoint (data only, ``weights_only=True``), or
    a ``module:Class`` whose class object is one of `TRUSTED_CLASSES` and was loaded from a file
    of the installed ``agents`` package. Anything else (a file, another module, a function such
    as ``agents:load`` that builds whatever its keywords name, SB3 and RLlib files) is not."""
    import inspect

    import agents

    parsed = agents.parse_spec(spec)
    if parsed.kind in ("random", "heuristic", "torch"):
        return True
    if parsed.kind != "module" or parsed.target.split(".")[0] != "agents":
        return False
    found = importlib.util.find_spec(parsed.target)
    if found is None or not found.origin or not _inside(Path(found.origin), _package_dir()):
        return False
    module = importlib.import_module(parsed.target)  # this package's own module: safe to import
    cls = getattr(module, parsed.attribute, None)
    if not inspect.isclass(cls) or (cls.__module__, cls.__qualname__) not in TRUSTED_CLASSES:
        return False
    source = inspect.getsourcefile(cls)
    return source is not None and _inside(Path(source), _package_dir())


def _inside(path: Path, folder: Path) -> bool:
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except OSError:
        return False


def set_undumpable() -> None:
    """``prctl(PR_SET_DUMPABLE, 0)`` (Linux): no core dump, and ``/proc/PID/mem`` and ptrace
    closed to processes without ``CAP_SYS_PTRACE``. Every process that holds a game calls it."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(_PR_SET_DUMPABLE, 0)
    except (OSError, AttributeError):
        pass


def _roots() -> list[str]:
    """Folders the child needs read-only: Python, its libraries, this package's and the
    environment's code (never the current folder: the results database may be there)."""
    found: list[str] = []
    for name in ("stdlib", "platstdlib", "purelib", "platlib"):
        for scheme in (None, "venv"):
            with contextlib.suppress(KeyError, ValueError):
                found.append(sysconfig.get_path(name) if scheme is None else sysconfig.get_path(name, scheme))
    found += [sys.prefix, sys.base_prefix, sys.exec_prefix, str(Path(sys.executable).resolve().parent.parent)]
    found += [p for p in sys.path if p.endswith(".zip") or "site-packages" in p or "dist-packages" in p]
    for package in ("agents", "mahjong_env", "training"):
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            found += list(spec.submodule_search_locations)
    roots: list[str] = []
    for path in sorted({str(Path(p).resolve()) for p in found if p and Path(p).exists()}, key=len):
        if path not in ("/", "/usr") and not any(Path(path).is_relative_to(r) for r in [*roots, "/usr"]):
            roots.append(path)
    return roots


@functools.lru_cache(maxsize=1)
def _system_arguments() -> tuple[str, ...]:
    arguments = ["--ro-bind", "/usr", "/usr"]
    for link in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(link):
            arguments += ["--symlink", os.readlink(link), link]
        elif os.path.isdir(link):
            arguments += ["--ro-bind", link, link]
    for name in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime"):
        arguments += ["--ro-bind-try", name, name]
    for root in _roots():
        arguments += ["--ro-bind", root, root]
    help_text = subprocess.run(["bwrap", "--help"], capture_output=True, text=True).stdout
    if "--disable-userns" in help_text:
        arguments.append("--disable-userns")
    return tuple(arguments)


def _bwrap(sandbox: Sandbox) -> list[str]:
    """The bubblewrap command line that confines a child (module docstring)."""
    command = ["bwrap", "--unshare-all", "--unshare-user", "--uid", str(_NOBODY), "--gid", str(_NOBODY)]
    command += ["--die-with-parent", "--new-session", "--cap-drop", "ALL", "--proc", "/proc", "--dev", "/dev"]
    command += ["--size", str(sandbox.limits.file_mb << 20), "--tmpfs", "/tmp", *_system_arguments()]
    for source, target in sandbox.binds:
        command += ["--ro-bind", source, target]
    return [*command, "--chdir", "/tmp"]


def _clean_env() -> dict[str, str]:
    """The sandboxed child's environment: nothing of the coordinator's but what Python needs."""
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
    env.update({name: "1" for name in _THREAD_VARIABLES})
    return env


def _as_user(uid: int | None) -> dict[str, Any]:
    if uid is None or os.geteuid() != 0 or uid == 0:
        return {}
    return {"user": uid, "group": uid, "extra_groups": []}


_LOG_FACTOR = 64
"""A log file stops growing at this many times ``Limits.output_kb`` (all the entrant's processes)."""


def _log(sandbox: Sandbox) -> int:
    """An fd for the child's output: the end of ``sandbox.log`` while it is not full, else /dev/null."""
    if sandbox.log is None:
        return subprocess.DEVNULL
    with contextlib.suppress(OSError):
        if os.path.getsize(sandbox.log) >= _LOG_FACTOR * 1024 * sandbox.limits.output_kb:
            return subprocess.DEVNULL
    try:
        return os.open(sandbox.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    except OSError:
        return subprocess.DEVNULL


_PROBE = "import sys, json; sys.path[:0] = json.loads(sys.argv[1]); import agents.sandbox, mahjong_env, numpy"


@functools.lru_cache(maxsize=1)
def available() -> tuple[int | None, str | None]:
    """Whether this machine can run the sandbox: ``(uid, None)`` with the user bubblewrap runs
    as (``nobody`` where we are root and it can read Python, else None: ourselves), or
    ``(None, why)`` when it cannot (no ``bwrap``, user namespaces not allowed)."""
    if shutil.which("bwrap") is None:
        return None, "bubblewrap (bwrap) is not installed: apt-get install bubblewrap"
    tries = [_NOBODY, None] if os.geteuid() == 0 else [None]
    why = ""
    for uid in tries:
        command = [*_bwrap(Sandbox()), sys.executable, "-c", _PROBE, json.dumps([p for p in sys.path if p])]
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, env=_clean_env(), timeout=120, **_as_user(uid)
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            why = str(error)
            continue
        if done.returncode == 0:
            return uid, None
        why = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
    return None, f"bubblewrap cannot start a sandbox here ({why}); kernel user namespaces must be allowed"


def stage(spec: str, folder: str | Path) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...], list[dict[str, str]]]:
    """Copy the files an entrant is built from (its ``.py`` file or module, checkpoint,
    keyword values naming files) into ``folder`` (readable by the sandbox's user, writable by
    none of them) and return the `Sandbox` ``binds`` that mount each copy where the original
    is, the ``paths`` to put on ``sys.path`` and the ``sources`` with each copy's SHA-256: what
    runs is what was checksummed, whatever happens to the originals during the run."""
    import agents

    parsed = agents.parse_spec(spec)
    originals: list[Path] = []
    paths: list[str] = []
    if parsed.kind in ("file", "sb3", "rllib") or (
        parsed.kind == "torch" and not agents.is_checkpoint_name(parsed.target)
    ):
        originals.append(Path(parsed.target))
    elif parsed.kind == "module":
        from importlib.machinery import PathFinder

        top = parsed.target.split(".")[0]
        found = PathFinder.find_spec(top, [*[p for p in sys.path if p], os.getcwd()])  # found, not run
        if found is not None and found.origin and found.has_location:
            place = Path(found.origin).parent if found.submodule_search_locations else Path(found.origin)
            if not any(_inside(place, Path(root)) for root in [*_roots(), "/usr"]):
                originals.append(place)
                paths.append(str(place.resolve().parent))
    originals += [Path(v) for _, v in parsed.kwargs if agents._path_like(v)]
    binds, sources = [], []
    for original in originals:
        original = original.resolve()
        if not original.exists():
            continue
        target = Path(folder) / hashlib.sha256(str(original).encode()).hexdigest()[:16] / original.name
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            if original.is_dir():
                shutil.copytree(original, target, symlinks=False)
            else:
                shutil.copyfile(original, target)
            _readable(target.parent)
        binds.append((str(target), str(original)))
        sources.append({"path": str(original), "sha256": agents.file_sha256(target)})
    return tuple(binds), tuple(paths), sources


_STAGING_PREFIX = "mahjong-entrants-"
_STAGING_LOCK = ".lock"


class Staging:
    """A folder for `stage` in the temp dir, readable by the sandbox's user and written only by
    us, removed by `close` (a context manager). While it is open its process holds an exclusive
    ``flock`` on the folder's ``.lock`` file; the kernel drops that lock when the process ends,
    however it ends. So a folder left behind by a process killed with SIGKILL (a coordinator,
    a Ray worker) is known by a lock that can be taken, and every new `Staging` first removes
    those of this user (`remove_stale_staging`), whatever pid namespace made them."""

    def __init__(self) -> None:
        import fcntl
        import tempfile

        remove_stale_staging()
        self.path = Path(tempfile.mkdtemp(prefix=f"{_STAGING_PREFIX}{os.getpid()}-"))
        making = self.path / f"{_STAGING_LOCK}-making"
        self._lock: int | None = os.open(making, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        fcntl.flock(self._lock, fcntl.LOCK_EX)
        os.rename(making, self.path / _STAGING_LOCK)  # locked before it has the name others look for
        os.chmod(self.path, 0o755)  # the sandbox's user reads the copies; only we write them

    def close(self) -> None:
        if self._lock is None:
            return
        shutil.rmtree(self.path, ignore_errors=True)
        os.close(self._lock)
        self._lock = None

    def __enter__(self) -> Staging:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def remove_stale_staging(folder: str | Path | None = None) -> list[Path]:
    """Remove the `Staging` folders in ``folder`` (the temp dir) that this user owns and whose
    process is gone (the lock on their ``.lock`` can be taken); returns them. A folder of
    another user, a link, or one without a lock file (being made at this moment, or not ours)
    is left alone."""
    import fcntl
    import tempfile

    removed = []
    top = Path(folder if folder is not None else tempfile.gettempdir())
    try:
        entries = [e for e in os.scandir(top) if e.name.startswith(_STAGING_PREFIX)]
    except OSError:
        return removed
    for entry in entries:
        try:
            if not entry.is_dir(follow_symlinks=False) or entry.stat(follow_symlinks=False).st_uid != os.geteuid():
                continue
            lock = os.open(Path(entry.path) / _STAGING_LOCK, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # its process holds it: in use
            os.close(lock)
            continue
        try:
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(Path(entry.path))
        finally:
            os.close(lock)
    return removed


def _readable(path: Path) -> None:
    """Folders 0755 and files 0644 (owned by us): the sandbox's user reads, nobody else writes."""
    for folder, _, files in os.walk(path):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o644)


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
    """The child (started by `IsolatedAgent._start`: its socket's fd, ``sys.path``, the
    worker's pid (0 in the sandbox, whose ``--die-with-parent`` does that) and the `Limits` as
    JSON in argv): limits, fork, keep the agent's process as the keeper, serve requests in it."""
    fd, worker, limits = int(sys.argv[1]), int(sys.argv[3]), json.loads(sys.argv[4])
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the coordinator handles Ctrl-C
    if worker:
        _die_with_parent(worker)
    if limits:
        _set_limits(Limits(**limits))
    set_undumpable()
    cap = 1024 * int(limits.get("output_kb", 1 << 30))
    read_end, write_end = os.pipe()
    keeper = os.getpid()
    agent_process = os.fork()
    if agent_process:
        os.close(fd)
        os.close(write_end)
        _keep(agent_process, read_end, cap)
    os.close(read_end)
    os.dup2(write_end, 1)
    os.dup2(write_end, 2)
    os.close(write_end)
    _die_with_parent(keeper)
    _serve(socket.socket(fileno=fd))


def _set_limits(limits: Limits) -> None:
    import resource

    mib = 1 << 20
    for which, value in (
        (resource.RLIMIT_AS, limits.memory_mb * mib),
        (resource.RLIMIT_NPROC, limits.processes),
        (resource.RLIMIT_FSIZE, limits.file_mb * mib),
        (resource.RLIMIT_CPU, limits.cpu_seconds),
        (resource.RLIMIT_CORE, 0),
    ):
        _, hard = resource.getrlimit(which)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (value, value))


def _keep(pid: int, output: int, cap: int) -> None:
    """The keeper: copy the first ``cap`` bytes of the agent's output to its own stdout (the
    rest is read and dropped), wait for the agent's process and end as it ended."""

    def copy() -> None:
        kept = 0
        while chunk := os.read(output, 1 << 16):
            if kept < cap:
                with contextlib.suppress(OSError):
                    os.write(1, chunk[: cap - kept])
                kept += len(chunk)

    threading.Thread(target=copy, daemon=True).start()
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
    from agents.base import seed_globals

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

        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:
        os._exit(0)
