"""Past one machine (issue 29): a real two-node Ray cluster, joined with one flag or
``RAY_ADDRESS``, the code shipped to the nodes, and nothing lost when a node goes.

One run of this file's ``__main__`` part (the scenario) starts a cluster of two ``ray start``
processes, a head and a worker node, each with its own temp dir and ports, then:

- plays a tournament through ``RAY_ADDRESS`` while the worker node is killed midway: the hands
  it was playing are played again on the head, counted in the output, and every hand equals
  the one ``--workers 0`` plays on one machine;
- runs one PPO update with two Ray rollout actors through ``--ray-address`` while a fresh
  worker node is killed in the middle of the rollout: the actor is restarted on the head, the
  rollout played again, and the network equals the one-machine run's bit for bit;
- plays a tournament with a node whose Python lacks numpy: the node is named, with what it
  lacks, in one line, and gets no hands;
- trains one RLlib iteration with an env runner on the cluster through ``RAY_ADDRESS``;
- kills the head under a running tournament: the command ends with one line that says so and
  gives the resume command;
- on a new two-node cluster, kills the head after PPO's first update of six: PPO ends with one
  line that gives its ``--resume`` command; on a head started again at the same address, that
  command, run as printed, finishes the run with the network of an uninterrupted one-machine
  run, bit for bit.

One test runs the scenario (a cluster is slow to start) and checks every part of it, reporting
all the parts that fail.

Every worker node runs with a ``mahjong_env``, an ``agents`` and a ``training`` on its
``PYTHONPATH`` that refuse to import: the project is not installed there, so hands can only be played with the
code the job ships (``py_modules``, `agents.cluster`). A tournament entrant is a user file
(``slow.py``), shipped in the job's working dir and checksummed on the node.

Why a namespace. Ray binds its services to the machine's network interface and advertises that
address even when told 127.0.0.1, so a cluster started on a shared machine could be reached
from, and talk to, the network. The scenario therefore runs under ``unshare --net --pid --fork
--mount-proc``: its network namespace has only ``lo`` (brought up inside), so nothing it starts
can leave loopback; and its PID namespace ends every process started inside (Ray's daemons
included) when the scenario's first process exits, which it does when pytest goes away (its
stdin closes) or the fixture's finalizer kills it: nothing is left behind, even on failure,
and no Ray process outside is touched. That test skips, saying why, where namespaces cannot be
made (not Linux, no ``unshare``/``ip``, or not permitted).

The cluster authenticates with a token of its own (``RAY_AUTH_TOKEN_PATH`` in the test's temp
dir), so nothing is written to ``~/.ray``. The other tests here need no cluster: where an
address comes from, shipped files found and checked, what a tournament ships, resuming PPO from
its last update, PPO on a local Ray whose actors are killed, and the wait for a free CPU.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
RAY = str(Path(sys.executable).with_name("ray"))
UNSHARE = ["unshare", "--net", "--pid", "--fork", "--mount-proc", "--kill-child"]
PORT = 6390
ADDRESS = f"127.0.0.1:{PORT}"
SCENARIO_TIMEOUT = 360
RESUME_FILE = "resume.pt"  # training.ppo.RESUME_FILE, without loading torch in the scenario process

SLOW_AGENT = '''
import time

import numpy as np

from agents.random_agent import RandomAgent


class SlowRandom(RandomAgent):
    """Uniform over the legal actions, thinking {delay} s before its first decision of a hand."""

    def seed(self, seed):
        self.rng = np.random.default_rng(seed)
        self.fresh = True

    def act(self, observation, info=None):
        if getattr(self, "fresh", True):
            time.sleep({delay})
            self.fresh = False
        return super().act(observation, info)
'''

TOURNAMENT = ["--variant", "xinjiang", "--seed", "5", "--quiet", "--no-report"]
PPO = [
    "--variant", "changchun", "--seed", "3", "--num-envs", "8", "--num-steps", "320", "--total-steps", "2560",
    "--channels", "8", "--blocks", "1", "--hidden", "32", "--num-minibatches", "2", "--update-epochs", "2",
    "--opp-heuristic", "1", "--opp-snapshot", "0", "--no-tensorboard", "--no-progress",
]  # fmt: skip
PPO_RESUMED = [
    "--variant", "changchun", "--seed", "3", "--num-envs", "8", "--num-steps", "64", "--total-steps", "3072",
    "--channels", "8", "--blocks", "1", "--hidden", "32", "--num-minibatches", "2", "--update-epochs", "2",
    "--opp-heuristic", "1", "--opp-snapshot", "0", "--no-tensorboard", "--no-progress",
]  # fmt: skip
"""Six updates of 512 decisions (the head is lost after the first)."""


def stored(db: Path) -> list[tuple]:
    """Every hand's identity and outcome (not timings) in (deal, seating) order."""
    conn = sqlite3.connect(db)
    try:
        hands = conn.execute(
            "SELECT deal, seating, deal_seed, outcome, winner, result, record, forfeit_agent, forfeit_kind "
            "FROM hands ORDER BY deal, seating"
        ).fetchall()
        seats = conn.execute("SELECT deal, seating, seat, agent, points FROM seats ORDER BY deal, seating").fetchall()
    finally:
        conn.close()
    return hands + seats


def hand_count(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        conn = sqlite3.connect(db, timeout=1)
        try:
            return conn.execute("SELECT COUNT(*) FROM hands").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:  # not created yet
        return 0


def write_agent(folder: Path, delay: float) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "slow.py").write_text(SLOW_AGENT.replace("{delay}", str(delay)))
    return f"slow={folder / 'slow.py'}:SlowRandom"


# ---------------------------------------------------------------------- the scenario (in the namespace)


class Scenario:
    """The cluster and the commands run on it, inside the namespace (module docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.results: dict[str, Any] = {}
        self.env = {
            **os.environ,
            "RAY_AUTH_MODE": "token",
            "RAY_AUTH_TOKEN_PATH": str(root / "token"),
            "RAY_USAGE_STATS_ENABLED": "0",
            "PYTHONUNBUFFERED": "1",
        }
        self.env.pop("RAY_ADDRESS", None)
        (root / "token").write_text(secrets.token_hex(32))
        self.stub = root / "not-installed"  # a node where the project is not installed
        for package in ("mahjong_env", "agents", "training"):
            (self.stub / package).mkdir(parents=True, exist_ok=True)
            (self.stub / package / "__init__.py").write_text(
                f"raise ImportError('{package} is not installed on this node: it must come with the job')\n"
            )
        self.no_numpy = root / "no-numpy"
        (self.no_numpy / "numpy").mkdir(parents=True, exist_ok=True)
        (self.no_numpy / "numpy" / "__init__.py").write_text(
            "raise ModuleNotFoundError(\"No module named 'numpy'\", name='numpy')\n"
        )

    def save(self, key: str, value: Any) -> None:
        self.results[key] = value
        (self.root / "results.json").write_text(json.dumps(self.results, indent=1))

    def ray_start(self, name: str, *args: str, pythonpath: list[Path] = ()) -> None:
        env = dict(self.env)
        if pythonpath:
            env["PYTHONPATH"] = os.pathsep.join(str(p) for p in pythonpath)
        common = ["--temp-dir", str(self.root / name), "--node-ip-address", "127.0.0.1", "--disable-usage-stats"]
        common += ["--object-store-memory", str(100 * 1024 * 1024)]
        command = [RAY, "start", *args, *common]
        proc = subprocess.run(command, env=env, cwd=self.root, capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            raise RuntimeError(f"ray start {name} failed: {proc.stdout[-2000:]}{proc.stderr[-2000:]}")

    def start_head(self, name: str = "head") -> None:
        health = json.dumps({"health_check_period_ms": 500, "health_check_failure_threshold": 3})
        self.ray_start(name, "--head", "--port", str(PORT), "--num-cpus", "2", "--include-dashboard", "false",
                       "--system-config", health)  # fmt: skip

    def add_node(self, name: str, *extra: Path) -> None:
        self.ray_start(name, "--address", ADDRESS, "--num-cpus", "2", pythonpath=[*extra, self.stub])

    def processes(self) -> dict[int, tuple[int, str]]:
        """pid -> (parent pid, command line) of every process in the namespace."""
        found = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            found[int(entry.name)] = (int(stat.rsplit(")", 1)[1].split()[1]), cmdline)
        return found

    def node_pids(self, name: str) -> set[int]:
        """The processes of node ``name``: those naming its temp dir, and their descendants."""
        table = self.processes()
        marker = str(self.root / name) + "/"
        pids = {pid for pid, (_, cmdline) in table.items() if marker in cmdline}
        grew = True
        while grew:
            more = {pid for pid, (parent, _) in table.items() if parent in pids and pid not in pids}
            pids |= more
            grew = bool(more)
        return pids

    def kill_node(self, name: str) -> int:
        pids = self.node_pids(name)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return len(pids)

    def clear(self) -> None:
        """End every process in the namespace but this one, before a head starts again at the
        same address: a killed head leaves processes that name no temp dir (Ray's client proxy)
        and would talk to the new head as if it were the old one."""
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            alive = [pid for pid in self.processes() if pid != os.getpid() and not _zombie(pid)]
            if not alive:
                return
            for pid in alive:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.2)

    def run(self, command: list[str], extra_env: dict[str, str] | None = None, watch: Any = None) -> dict[str, Any]:
        """Run a command to its end (``watch(proc)`` is called every 0.05 s while it runs)."""
        started = time.monotonic()
        proc = subprocess.Popen(
            command, cwd=self.root, env={**self.env, **(extra_env or {})}, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        out: list[str] = []
        reader = threading.Thread(target=lambda: out.append(proc.stdout.read()), daemon=True)
        err: list[str] = []
        errors = threading.Thread(target=lambda: err.append(proc.stderr.read()), daemon=True)
        reader.start()
        errors.start()
        while proc.poll() is None:
            if watch is not None:
                watch(proc)
            if time.monotonic() - started > 150:
                proc.kill()
            time.sleep(0.05)
        reader.join(10)
        errors.join(10)
        return {
            "rc": proc.returncode,
            "stdout": "".join(out),
            "stderr": "".join(err)[-20000:],
            "seconds": round(time.monotonic() - started, 1),
        }

    def kill_when(self, condition: Any, node: str) -> Any:
        """A ``watch`` that kills ``node`` once ``condition()`` holds, and notes when."""
        state = {"killed": None}

        def watch(proc: Any) -> None:
            if state["killed"] is None and condition():
                state["killed"] = self.kill_node(node)

        watch.state = state  # type: ignore[attr-defined]
        return watch

    # ------------------------------------------------------------------ the steps

    def tournament_with_a_node_killed(self) -> None:
        db = self.root / "t1.sqlite"
        entrant = write_agent(self.root / "entrant", 0.4)
        watch = self.kill_when(lambda: hand_count(db) >= 3, "w1")
        command = [PYTHON, "-m", "agents.tournament", *TOURNAMENT, "--deals", "8", "--backend", "ray"]
        result = self.run([*command, "--agents", "rand=random", entrant, "--db", str(db)], {"RAY_ADDRESS": ADDRESS},
                          watch)  # fmt: skip
        self.save("tournament", {**result, "killed": watch.state["killed"], "db": str(db), "entrant": entrant})

    def ppo_with_a_node_killed(self) -> None:
        def actor_running() -> bool:  # a rollout actor on w2 is stepping games: the rollout has begun
            table = self.processes()
            return any("_RayWorker.step" in table.get(pid, (0, ""))[1] for pid in self.node_pids("w2"))

        watch = self.kill_when(actor_running, "w2")
        out = self.root / "ppo"
        command = [PYTHON, "-m", "training.ppo", *PPO, "--backend", "ray", "--rollout-workers", "2"]
        result = self.run([*command, "--ray-address", ADDRESS, "--out-dir", str(out)], watch=watch)
        self.save("ppo", {**result, "killed": watch.state["killed"]})

    def tournament_with_a_node_lacking_numpy(self) -> None:
        db = self.root / "t2.sqlite"
        command = [PYTHON, "-m", "agents.tournament", *TOURNAMENT, "--deals", "2", "--backend", "ray"]
        result = self.run([*command, "--agents", "random", "heuristic", "--db", str(db)], {"RAY_ADDRESS": ADDRESS})
        self.save("lacking", {**result, "db": str(db)})

    def rllib(self) -> None:
        command = [PYTHON, "-m", "training.rllib_example", "--iterations", "1", "--train-batch-size", "200"]
        command += ["--env-runners", "1", "--checkpoint", str(self.root / "rllib"), "--no-progress"]
        self.save("rllib", self.run(command, {"RAY_ADDRESS": ADDRESS}))

    def head_lost(self) -> None:
        db = self.root / "t3.sqlite"
        entrant = write_agent(self.root / "entrant3", 1.0)
        watch = self.kill_when(lambda: hand_count(db) >= 1, "head")
        command = [PYTHON, "-m", "agents.tournament", *TOURNAMENT, "--deals", "40", "--backend", "ray"]
        result = self.run([*command, "--agents", "rand=random", entrant, "--db", str(db), "--ray-address", ADDRESS],
                          watch=watch)  # fmt: skip
        self.save("head", {**result, "killed": watch.state["killed"], "hands": hand_count(db)})

    def ppo_with_the_head_lost(self) -> None:
        """On a new cluster (head2, w4), PPO whose head is killed once its first update is saved;
        then, on a head started again at the same address, the command its last line gives."""
        self.clear()
        self.start_head("head2")
        self.add_node("w4")
        out = self.root / "ppo-resumed"
        watch = self.kill_when(lambda: any(out.glob(f"*/{RESUME_FILE}")), "head2")
        command = [PYTHON, "-m", "training.ppo", *PPO_RESUMED, "--backend", "ray", "--rollout-workers", "2"]
        lost = self.run([*command, "--ray-address", ADDRESS, "--out-dir", str(out)], watch=watch)
        self.save("ppo_head", {"lost": {**lost, "killed": watch.state["killed"]}})
        self.clear()  # w4's raylet would wait a minute for the head before it ends
        self.start_head("head3")
        given = lost["stderr"].rpartition("continue with: ")[2].strip()
        if not given.startswith("python -m training.ppo "):
            return
        resumed = self.run([PYTHON, *shlex.split(given)[1:]])
        self.save("ppo_head", {"lost": {**lost, "killed": watch.state["killed"]}, "given": given, "resumed": resumed})


def _zombie(pid: int) -> bool:
    """Whether ``pid`` has ended (killed, not yet reaped: it holds no port any more)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def _scenario(root: Path) -> None:
    """The body of the namespace's first process (module docstring)."""
    threading.Thread(target=lambda: (sys.stdin.read(), os._exit(3)), daemon=True).start()  # pytest is gone
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    scenario = Scenario(root)
    started = time.monotonic()
    scenario.start_head()
    scenario.add_node("w1")
    scenario.save("cluster_seconds", round(time.monotonic() - started, 1))
    scenario.tournament_with_a_node_killed()
    scenario.add_node("w2")
    scenario.ppo_with_a_node_killed()
    scenario.add_node("w3", scenario.no_numpy)
    scenario.tournament_with_a_node_lacking_numpy()
    scenario.kill_node("w3")
    scenario.rllib()
    scenario.head_lost()
    scenario.ppo_with_the_head_lost()
    scenario.save("seconds", round(time.monotonic() - started, 1))


if __name__ == "__main__":
    _scenario(Path(sys.argv[1]))
    sys.exit(0)


# ---------------------------------------------------------------------- the tests


def _namespaces_refused() -> str | None:
    """Why a network and PID namespace cannot be made here, None when it can."""
    if not sys.platform.startswith("linux"):
        return "network namespaces are Linux only"
    for tool in ("unshare", "ip"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (util-linux, iproute2)"
    if not Path(RAY).exists():
        return "the ray command is not installed (pip install -e '.[ray]')"
    try:
        proc = subprocess.run([*UNSHARE, "ip", "link", "set", "lo", "up"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"unshare failed: {error}"
    if proc.returncode != 0:
        return f"namespaces are not permitted here: {proc.stderr.strip() or proc.returncode}"
    return None


@pytest.fixture
def scenario(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> dict[str, Any]:
    """The scenario's results (module docstring), run in its own namespaces."""
    pytest.importorskip("ray")
    reason = _namespaces_refused()
    if reason:
        pytest.skip(reason)
    # Ray's AF_UNIX socket paths must stay under 108 bytes: pytest's temp dirs are too deep under
    # xdist (/tmp/pytest-of-root/pytest-N/popen-gw0/...), so the scenario gets a short one of its own
    root = Path(tempfile.mkdtemp(prefix="mjray", dir="/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(root, ignore_errors=True))
    proc = subprocess.Popen(
        [*UNSHARE, PYTHON, str(Path(__file__).resolve()), str(root)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip

    def end() -> None:  # the namespace dies with its first process, and every Ray process in it
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(30)

    request.addfinalizer(end)
    output: list[str] = []  # stdin stays open: the scenario ends itself when it closes
    reader = threading.Thread(target=lambda: output.append(proc.stdout.read()), daemon=True)
    reader.start()
    try:
        proc.wait(timeout=SCENARIO_TIMEOUT)
    except subprocess.TimeoutExpired:
        end()
        output.append("(timed out)")
    reader.join(10)
    results_file = root / "results.json"
    results = json.loads(results_file.read_text()) if results_file.exists() else {}
    results["log"] = "".join(output)[-5000:]
    return results


def test_a_two_node_cluster_loses_nothing_and_says_in_one_line_what_went_wrong(scenario, tmp_path):
    """One scenario (module docstring; a cluster is slow to start), every part checked: all the
    parts that fail are reported."""
    failures = []
    for key, check in CHECKS.items():
        if key not in scenario:
            failures.append(f"{check.__name__}: the scenario did not reach it:\n{scenario.get('log', '')}")
            continue
        try:
            check(scenario[key], tmp_path / key)
        except AssertionError as error:
            failures.append(f"{check.__name__}: {error}")
    assert not failures, "\n\n".join(failures)


def a_tournament(run: dict[str, Any], tmp_path: Path) -> None:
    """Spread over two nodes, the worker node killed midway: nothing lost, same hands as one machine."""
    from agents.tournament.cli import main

    assert run["rc"] == 0, run["stderr"]
    assert run["killed"], "the worker node was not killed midway"
    replays = [line for line in run["stderr"].splitlines() if "is played again: the node" in line]
    assert replays, run["stderr"]  # hands were on the worker node (it has no project: the code was shipped)
    assert f"played again: {len(replays)} hand(s)" in run["stdout"]
    assert "cannot do this job" not in run["stderr"]
    entrant = write_agent(tmp_path, 0.0)  # the same player, without the wait
    local = tmp_path / "local.sqlite"
    argv = [*TOURNAMENT, "--deals", "8", "--agents", "rand=random", entrant, "--workers", "0", "--db", str(local)]
    assert main(argv) == 0
    assert stored(Path(run["db"])) == stored(local)


def a_ppo_update(run: dict[str, Any], tmp_path: Path) -> None:
    """One update on two nodes, the node of a rollout actor killed midway: the one-machine network."""
    torch = pytest.importorskip("torch")
    from training import ppo

    assert run["rc"] == 0, run["stderr"]
    assert run["killed"], "the worker node was not killed while the rollout ran"
    assert "a rollout worker was lost" in run["stderr"], run["stderr"]
    remote = Path(run["stdout"].strip().splitlines()[-1])
    local = ppo.main([*PPO, "--out-dir", str(tmp_path)])
    first = torch.load(remote, weights_only=True)["state_dict"]
    second = torch.load(local, weights_only=True)["state_dict"]
    assert all(torch.equal(first[k], second[k]) for k in first)


def a_node_lacking_numpy(run: dict[str, Any], tmp_path: Path) -> None:
    """Named in one line with what it lacks; it gets no hands and the others play them all."""
    assert run["rc"] == 0, run["stderr"]
    lines = [line for line in run["stderr"].splitlines() if "cannot do this job" in line]
    assert len(lines) == 1 and "lacks numpy" in lines[0] and "no hands go there" in lines[0], run["stderr"]
    assert len(stored(Path(run["db"]))) == 4 * 5  # 4 hands, 4 seat rows each


def the_rllib_example(run: dict[str, Any], tmp_path: Path) -> None:
    """Joins a running cluster through RAY_ADDRESS (it crashed on num_cpus) with a remote env runner."""
    assert run["rc"] == 0, run["stderr"]
    assert "num_cpus and num_gpus must not be provided" not in run["stderr"]
    assert Path(run["stdout"].strip().splitlines()[-1], "mahjong_meta.json").is_file()


def a_lost_head(run: dict[str, Any], tmp_path: Path) -> None:
    """One line that says so and gives the resume command, without Ray's minute of retries."""
    assert run["killed"] and run["rc"] == 1, run
    errors = [line for line in run["stderr"].splitlines() if line.startswith("mahjong-tournament: error:")]
    assert len(errors) == 1, run["stderr"]
    assert f"lost the Ray head at {ADDRESS}" in errors[0] and "--resume" in errors[0]
    assert run["seconds"] < 60, "it must not wait for Ray's minute of retries"


def a_ppo_run_resumed_after_its_head_was_lost(run: dict[str, Any], tmp_path: Path) -> None:
    """One line with the --resume command; that command, typed on the cluster started again,
    finishes the run with the network of an uninterrupted run on one machine."""
    torch = pytest.importorskip("torch")
    from training import ppo

    lost = run["lost"]
    assert lost["killed"] and lost["rc"] == 1, lost
    errors = [line for line in lost["stderr"].splitlines() if line.startswith("python -m training.ppo: error:")]
    assert len(errors) == 1, lost["stderr"]
    assert f"lost the Ray head at {ADDRESS}" in errors[0] and "continue with: " in errors[0], errors[0]
    assert lost["seconds"] < 60, "it must not wait for Ray's minute of retries"
    assert "resumed" in run, f"the command it gave was not run: {errors[0]}"
    resumed = run["resumed"]
    assert resumed["rc"] == 0, f"{run['given']}\n{resumed['stderr']}"
    (after,) = re.findall(r"resuming \S+ after update (\d) of 6", resumed["stderr"])
    assert 1 <= int(after) < 6, resumed["stderr"]  # the run was cut in the middle
    assert RESUME_FILE == ppo.RESUME_FILE
    remote = Path(resumed["stdout"].strip().splitlines()[-1])
    local = ppo.main([*PPO_RESUMED, "--out-dir", str(tmp_path)])
    first = torch.load(remote, weights_only=True)["state_dict"]
    second = torch.load(local, weights_only=True)["state_dict"]
    assert all(torch.equal(first[k], second[k]) for k in first)


CHECKS = {
    "tournament": a_tournament,
    "ppo": a_ppo_update,
    "lacking": a_node_lacking_numpy,
    "rllib": the_rllib_example,
    "head": a_lost_head,
    "ppo_head": a_ppo_run_resumed_after_its_head_was_lost,
}
"""The checks of the cluster test, by the scenario step whose results each reads."""


# ---------------------------------------------------------------------- without a cluster


def test_the_address_is_the_flag_then_ray_address_then_a_local_ray(monkeypatch):
    from agents.cluster import resolve_address

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert resolve_address(None) == (None, "a local Ray")
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.1:6379")
    assert resolve_address(None) == ("10.0.0.1:6379", "RAY_ADDRESS")
    assert resolve_address("auto") == ("auto", "--ray-address")


def test_shipped_files_are_found_by_their_coordinator_path_and_checked_where_they_run(tmp_path, monkeypatch):
    import agents
    import agents.cluster as cluster_module
    from agents.cluster import Shipment

    model = tmp_path / "coordinator" / "model.pt"
    model.parent.mkdir()
    model.write_bytes(b"weights")
    job = tmp_path / "job"
    shipment = Shipment.stage([(str(model), agents.file_sha256(model), None)], job)
    monkeypatch.chdir(job)  # a node runs the job in its working dir
    local = shipment.local(str(model))
    assert Path(local).read_bytes() == b"weights" and Path(local).parent != model.parent
    spec = f"mine={tmp_path}/agent.py:Mine?ckpt={model}&depth=2".split("=", 1)[1]
    assert shipment.localize(spec) == f"{tmp_path}/agent.py:Mine?ckpt={local}&depth=2"
    assert shipment.problems() == []
    Path(local).write_bytes(b"other weights")  # a copy that differs from the coordinator's
    assert shipment.problems() == []  # checked once per process
    cluster_module._problems.cache_clear()  # a new process
    (problem,) = shipment.problems()
    assert problem.startswith(f"has {model} with sha256 ") and "the coordinator's is" in problem


def test_a_tournament_ships_user_packages_whole_and_names_what_each_node_needs(tmp_path, monkeypatch):
    import agents
    from agents.tournament.backends import shipping

    package = tmp_path / "teamagent"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "bot.py").write_text("from agents.random_agent import RandomAgent as Bot\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    checkpoint = agents.checkpoint_path("changchun")
    entrants = {
        "team": {"spec": "teamagent.bot:Bot", "sources": [{"path": str(package / "bot.py"), "sha256": "x"}]},
        "net": {"spec": f"torch:{checkpoint}", "sources": [{"path": str(checkpoint), "sha256": "y"}]},
        "heur": {"spec": "heuristic", "sources": []},
    }
    files, needs, packages = shipping(entrants)
    assert (str(package), agents.file_sha256(package), "teamagent") in files  # importable from the job's folder
    assert (str(checkpoint), "y", None) in files
    assert {"numpy", "torch", "agents.tournament.play"} <= set(needs) and not packages


def ppo_args(tmp_path: Path, name: str, **kwargs: Any) -> Any:
    from training import ppo

    common = dict(
        variant="changchun", total_steps=3 * 96, num_envs=4, num_steps=24, channels=8, blocks=1, hidden=32,
        num_minibatches=2, update_epochs=2, opp_heuristic=0.5, opp_random=0.3, opp_snapshot=0.2, snapshot_every=1,
        max_snapshots=1, tensorboard=False, progress=False, out_dir=str(tmp_path / name),
    )  # fmt: skip
    return ppo.Args(**{**common, **kwargs})


def weights(path: Path) -> dict[str, Any]:
    import torch

    return torch.load(path, weights_only=True)["state_dict"]


def same_weights(a: Path, b: Path) -> bool:
    import torch

    first, second = weights(a), weights(b)
    return first.keys() == second.keys() and all(torch.equal(first[k], second[k]) for k in first)


def test_ppo_resumed_from_its_last_update_gives_the_uninterrupted_checkpoint(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    from training import ppo

    uninterrupted = ppo.train(ppo_args(tmp_path, "full"))
    save = ppo._save_resume

    class Stop(Exception):  # noqa: N818 - the run is stopped, not failing
        pass

    def stop_after_two(run_dir: Path, state: dict[str, Any]) -> None:
        save(run_dir, state)
        if state["update"] == 2:
            raise Stop

    monkeypatch.setattr(ppo, "_save_resume", stop_after_two)
    with pytest.raises(Stop):
        ppo.train(ppo_args(tmp_path, "cut"))
    monkeypatch.setattr(ppo, "_save_resume", save)
    (run_dir,) = (tmp_path / "cut").iterdir()
    resumed = ppo.train(ppo.Args(resume=str(run_dir), progress=False))
    assert same_weights(uninterrupted, resumed)
    rows = (run_dir / "metrics.csv").read_text().splitlines()
    assert len(rows) == len((uninterrupted.parent / "metrics.csv").read_text().splitlines())
    with pytest.raises(ppo.InputError, match="--num-envs 8 differs from its 4"):
        ppo.check_args(ppo.Args(resume=str(run_dir), num_envs=8))


def test_ppo_on_a_local_ray_plays_a_rollout_again_when_an_actor_is_killed(tmp_path, monkeypatch, caplog):
    ray = pytest.importorskip("ray")
    pytest.importorskip("torch")
    from mahjong_env.adapters import workers
    from training import ppo

    uninterrupted = ppo.train(ppo_args(tmp_path, "plain", total_steps=2 * 96))
    step_ = workers.ParallelVectorMahjong.step
    calls = []

    def step_and_kill(self: Any, actions: Any) -> Any:
        calls.append(1)
        if len(calls) in (10, 30):
            ray.kill(self._actors[len(calls) % 2], no_restart=False)  # Ray restarts it, as after a lost node
        return step_(self, actions)

    monkeypatch.setattr(workers.ParallelVectorMahjong, "step", step_and_kill)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with caplog.at_level("WARNING", logger="training.rollout"):
        on_ray = ppo.train(ppo_args(tmp_path, "ray", total_steps=2 * 96, backend="ray", rollout_workers=2))
    assert not ray.is_initialized()
    assert sum("a rollout worker was lost" in r.getMessage() for r in caplog.records) == 2
    assert same_weights(uninterrupted, on_ray)


def hold(seconds: float) -> None:
    time.sleep(seconds)


def test_no_free_cpu_is_said_in_one_line_after_the_stated_wait(tmp_path, monkeypatch):
    ray = pytest.importorskip("ray")
    import agents.cluster
    from agents.cluster import ClusterError, connect
    from agents.tournament.config import TournamentConfig
    from agents.tournament.runner import run_tournament

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    cluster = connect(num_cpus=1)
    try:
        with pytest.raises(ClusterError, match="need 2 CPUs; this local Ray has 1"):
            cluster.wait_for_cpus(2, "2 rollout workers", wait=0.5)
        holder = ray.remote(num_cpus=1)(hold).remote(30)  # another job holds the only CPU
        while ray.available_resources().get("CPU", 0.0) > 0:
            time.sleep(0.1)
        started = time.monotonic()
        with pytest.raises(ClusterError, match="no free CPU for 1 rollout worker after 1 s"):
            cluster.wait_for_cpus(1, "1 rollout worker", wait=1.0)
        monkeypatch.setattr(agents.cluster, "CPU_WAIT", 2.0)
        config = TournamentConfig(variant="xinjiang", agents=(("a", "random"), ("b", "random")), deals=1, seed=1)
        with pytest.raises(ClusterError, match=r"no free CPU on any node of the Ray cluster .* for 2 s"):
            run_tournament(config, tmp_path / "t.sqlite", backend="ray")
        assert time.monotonic() - started < 20
        ray.cancel(holder, force=True)
    finally:
        cluster.close()
