"""Hostile tournament entrants that attack the sandbox (issue 27), for ``tests/test_sandbox.py``.

Each plays at random and attacks on its first decision of a hand (`Attacker`). They report
what they found on stdout, which the sandbox keeps in the entrant's log
(``DB-logs/NAME.log``), as one line ``REPORT {json}``; paths they go after are given in hex
(``where=...``), so that the runner does not take them for files the entrant is built from.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from typing import Any

import numpy as np

from agents.random_agent import RandomAgent


def report(**found: Any) -> None:
    print("REPORT " + json.dumps(found), flush=True)


class Attacker(RandomAgent):
    """Random play; `attack` once per hand, at its first decision."""

    def __init__(self, seed: int | None = 0, where: str = "", **options: Any) -> None:
        super().__init__(seed)
        self.where = bytes.fromhex(where).decode() if where else ""
        self.options = options
        self.first = True

    def seed(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        self.first = True

    def act(self, observation: dict[str, np.ndarray], info: dict[str, Any] | None = None) -> int:
        if self.first:
            self.first = False
            self.attack()
        return super().act(observation, info)

    def attack(self) -> None:
        raise NotImplementedError


def _pids() -> list[int]:
    return sorted(int(name) for name in os.listdir("/proc") if name.isdigit())


class ProcessHunter(Attacker):
    """Reads every visible process's command line and memory, then SIGSTOPs and SIGKILLs every
    one but itself and its parent (rivals, workers, the coordinator, as it did unsandboxed)."""

    def attack(self) -> None:
        me, parent = os.getpid(), os.getppid()
        seen, read_mem, cmdlines = [], [], []
        for pid in _pids():
            seen.append(pid)
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmdlines.append(f.read().decode(errors="replace"))
            except OSError:
                pass
            if pid != me:
                try:
                    with open(f"/proc/{pid}/mem", "rb") as f:
                        f.read(1)
                    read_mem.append(pid)
                except OSError:
                    pass
        signalled = []
        for pid in seen:
            if pid in (me, parent, 1):
                continue
            for sig in (signal.SIGSTOP, signal.SIGKILL):
                try:
                    os.kill(pid, sig)
                    signalled.append(pid)
                except OSError:
                    pass
        report(me=me, seen=seen, read_mem=read_mem, signalled=signalled, cmdlines=cmdlines)


class FileHunter(Attacker):
    """Goes after the file ``where`` names (the results database, a rival's source): reads it,
    writes it, and looks for anything ending in .sqlite (once per process: the search walks
    every folder it can see); reports what worked."""

    searched: list[str] | None = None

    def attack(self) -> None:
        found: dict[str, Any] = {"read": False, "written": False}
        try:
            with open(self.where, "rb") as f:
                found["read"] = bool(f.read(16)) or True
        except OSError as error:
            found["read_error"] = type(error).__name__
        try:
            with open(self.where, "ab") as f:
                f.write(b"# rewritten by a rival\n")
            found["written"] = True
        except OSError as error:
            found["write_error"] = type(error).__name__
        if FileHunter.searched is None:
            FileHunter.searched = []
            for top in ("/tmp", "/work", "/root", "/home", "/var"):
                for folder, _, files in os.walk(top):
                    FileHunter.searched += [os.path.join(folder, n) for n in files if n.endswith(".sqlite")]
        report(**found, sqlite=FileHunter.searched)


class Hog(Attacker):
    """Holds ``mb`` MiB of memory (touched), then plays on."""

    def attack(self) -> None:
        block = bytearray(int(self.options.get("mb", 3000)) << 20)
        block[:: 1 << 12] = b"x" * len(block[:: 1 << 12])
        self.block = block


class Daemon(Attacker):
    """Starts a daemon (forked twice, in a session of its own, its parent gone) that sleeps
    ``seconds`` (an hour), named by ``mark`` on its command line, so that the test can look for
    it after the run."""

    def attack(self) -> None:
        child = os.fork()
        if child == 0:
            os.setsid()
            if os.fork() == 0:
                sleep = f"import time; time.sleep({float(self.options.get('seconds', 3600))})"
                os.execv(sys.executable, [sys.executable, "-c", sleep, str(self.options["mark"])])
            os._exit(0)
        os.waitpid(child, 0)


class ForkBomb(Attacker):
    """Forks until it cannot, at most ``tries`` times (each child sleeps an hour), and reports
    how many it got; with ``once=true``, only in the first hand its process plays (where
    RLIMIT_NPROC binds, later hands' forks would fail at once anyway)."""

    bombed = False

    def attack(self) -> None:
        if self.options.get("once") and ForkBomb.bombed:
            return
        ForkBomb.bombed = True
        count = 0
        for _ in range(int(self.options.get("tries", 500))):
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                time.sleep(3600)
                os._exit(0)
            count += 1
        report(forks=count)


class Shouter(Attacker):
    """Writes ``mb`` MiB to stdout and to stderr."""

    def attack(self) -> None:
        line = b"x" * 1023 + b"\n"
        for _ in range(int(self.options.get("mb", 50)) << 10):
            os.write(1, line)
            os.write(2, line)


class WorkerKiller(Attacker):
    """Kills the process that plays the hand: the parent of its keeper (its own parent), a
    local worker or a Ray worker, as an agent that is losing would."""

    def attack(self) -> None:
        with open(f"/proc/{os.getppid()}/stat", "rb") as f:
            worker = int(f.read().rpartition(b")")[2].split()[1])
        report(worker=worker)
        os.kill(worker, signal.SIGKILL)


class Stopper(Attacker):
    """Stops the process it runs in (the worker, when the user trusts it in-process)."""

    def attack(self) -> None:
        os.kill(os.getpid(), signal.SIGSTOP)


class Forfeiter(Attacker):
    """Random play that forfeits (plays an illegal action) at its ``at``-th decision of every hand."""

    def reset(self) -> None:
        super().reset()
        self.decisions = 0

    def act(self, observation: dict[str, np.ndarray], info: dict[str, Any] | None = None) -> int:
        self.decisions += 1
        if self.decisions == int(self.options.get("at", 3)):
            return int(np.flatnonzero(observation["action_mask"] == 0)[0])
        return super().act(observation, info)

    def attack(self) -> None:
        return None
