"""Hostile agents against the tournament (issue 13, "The tournament can be bent").

The agents below are tournament entrants written as an adversary would: one that catches
``BaseException`` and sleeps through its time limit, one that loops forever (also catching
everything), one that ends its process (``sys.exit`` or ``os._exit``), one that reads the
runner's module globals to see the wall and every hand, and one that forges its copy of the
action mask; then some that attack the sandbox itself: writing malformed, stale or half
replies on their own socket, killing their parent or the worker that plays the hand (and one
that kills the worker while a rival thinks, to get the rival blamed). They enter as
``tests/test_hostile_agents.py:Class?key=value`` specs, so by default each runs in its own
process (`agents.sandbox`). Every test checks that the hand is accounted for: played, the
forfeit charged to the offender's seat (it pays 1 point to each other seat), and shown in the
report. Then the tournament seed (secret unless given), and the CLI's inputs: numeric flags,
resumed databases (specs and checksums), locked and hostile database files, a huge schedule,
report escaping.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agents.tournament import storage
from agents.tournament.cli import main
from agents.tournament.config import TournamentConfig
from agents.tournament.play import hand_points
from agents.tournament.report import write_report
from agents.tournament.runner import TournamentError, run_tournament
from agents.tournament.schedule import derive_seed
from agents.tournament.storage import ResultStore
from agents.tournament.testing import MisbehavingAgent

HERE = Path(__file__).resolve()
FORFEIT_PAYMENT = 3 * 2.0**6 + 3 * 136  # Changchun's default fan cap 7 (agents.tournament.play.forfeit_payment)
REPO = HERE.parents[1]


# ---------------------------------------------------------------------- the hostile agents


class TimeoutCatcher(MisbehavingAgent):
    """Catches every exception (the runner's alarm included) and keeps sleeping."""

    seconds = 30.0

    def __init__(self, seed: int | None = 0, probability: float | None = None, seconds: float = 30.0) -> None:
        super().__init__(seed, probability)
        self.seconds = seconds

    def misbehave(self, observation: dict[str, np.ndarray]) -> int:
        deadline = time.monotonic() + self.seconds
        while time.monotonic() < deadline:
            try:
                time.sleep(0.05)
            except BaseException:
                pass
        return int(np.flatnonzero(observation["action_mask"])[0])


class InfiniteLooper(MisbehavingAgent):
    """Never returns, whatever is raised inside it."""

    def misbehave(self, observation: dict[str, np.ndarray]) -> int:
        while True:
            try:
                while True:
                    pass
            except BaseException:
                pass


class Exiter(MisbehavingAgent):
    """Ends its process: ``how="sys"`` calls ``sys.exit(3)``, ``how="os"`` ``os._exit(3)``."""

    def __init__(self, seed: int | None = 0, probability: float | None = None, how: str = "sys") -> None:
        super().__init__(seed, probability)
        self.how = how

    def misbehave(self, observation: dict[str, np.ndarray]) -> int:
        if self.how == "os":
            os._exit(3)
        sys.exit(3)


class Cheater(MisbehavingAgent):
    """Looks for the runner's envs in its own process and raises with what it could see, so
    that the forfeit's message tells (a sandboxed agent can write no file of ours)."""

    def misbehave(self, observation: dict[str, np.ndarray]) -> int:
        import agents.tournament.play as play

        seen = [len(env.game.wall.tiles) if hasattr(env.game, "wall") else 1 for env in play._ENVS.values()]
        raise RuntimeError("CHEAT " + json.dumps({"envs": len(play._ENVS), "seen": seen}))


def cheats(forfeits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the `Cheater`s saw, from their forfeits' messages."""
    found = [f["message"].rsplit("CHEAT ", 1)[1] for f in forfeits if "CHEAT " in f["message"]]
    return [json.loads(text.splitlines()[0]) for text in found]


_PEEKED: list[list[Any]] = []


class SeedPeeker(MisbehavingAgent):
    """Draws from Python's global generator at each of its seats' first decision of a hand (the
    seed its process was given; one process serves both its seats) and, once both have drawn,
    raises with the draws, so that the forfeit's message tells them."""

    def reset(self) -> None:
        super().reset()
        _PEEKED.clear()

    def act(self, observation: dict[str, np.ndarray], info: dict[str, Any] | None = None) -> int:
        if self.decisions == 0:
            import random

            _PEEKED.append([(info or {})["view"]["seat"], random.random()])
            if len(_PEEKED) == 2:
                raise RuntimeError("SEEDS " + json.dumps(_PEEKED))
        self.decisions += 1
        return super(MisbehavingAgent, self).act(observation)


class MaskForger(MisbehavingAgent):
    """Marks an illegal action legal in its copy of the mask and plays it."""

    def misbehave(self, observation: dict[str, np.ndarray]) -> int:
        illegal = int(np.flatnonzero(observation["action_mask"] == 0)[0])
        observation["action_mask"][illegal] = 1
        return illegal


class WireWriter(MisbehavingAgent):
    """Writes on its own sandbox socket (its fd is ``sys.argv[1]`` in the child), then plays.
    ``how``: ``nested`` (JSON nested too deep to decode, under the size limit), ``huge``
    (200 KB of nesting), ``not-object``, ``no-id`` and ``stale-id`` (a well-formed answer
    without the request's id, or with the id of an earlier request, written ahead of the real
    reply), ``half-frame`` (a frame that stops halfway, then sleeps through everything)."""

    def __init__(self, seed: int | None = 0, probability: float | None = None, how: str = "nested") -> None:
        super().__init__(seed, probability)
        self.how = how

    def misbehave(self, observation: dict[str, np.ndarray]) -> int:
        legal = int(np.flatnonzero(observation["action_mask"])[0])
        payloads = {
            "nested": b"[" * 30_000 + b"]" * 30_000,
            "huge": b"[" * 100_000 + b"]" * 100_000,
            "not-object": json.dumps([legal]).encode(),
            "no-id": json.dumps({"action": legal}).encode(),
            "stale-id": json.dumps({"id": 1, "action": legal}).encode(),
        }
        fd = int(sys.argv[1])
        if self.how == "half-frame":
            os.write(fd, (1000).to_bytes(4, "big") + b'{"id": ')
            while True:
                try:
                    time.sleep(100)
                except BaseException:
                    pass
        payload = payloads[self.how]
        os.write(fd, len(payload).to_bytes(4, "big") + payload)
        return legal


class Killer(MisbehavingAgent):
    """Kills a process with SIGKILL: ``whom="parent"`` its parent, ``whom="peer"`` the process
    at the other end of its sandbox socket (the worker that plays the hand: ``SO_PEERCRED``)."""

    def __init__(self, seed: int | None = 0, probability: float | None = None, whom: str = "parent") -> None:
        super().__init__(seed, probability)
        self.whom = whom

    def misbehave(self, observation: dict[str, np.ndarray]) -> int:
        import signal
        import socket
        import struct

        if self.whom == "parent":
            os.kill(os.getppid(), signal.SIGKILL)
        else:
            peer = socket.socket(fileno=os.dup(int(sys.argv[1])))
            pid, _, _ = struct.unpack("3i", peer.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
            os.kill(pid, signal.SIGKILL)
        time.sleep(5)
        return int(np.flatnonzero(observation["action_mask"])[0])


class Thinker(MisbehavingAgent):
    """Creates the file ``flag`` and thinks for half a second (well within the time limit)."""

    def __init__(self, seed: int | None = 0, probability: float | None = None, flag: str = "") -> None:
        super().__init__(seed, probability)
        self.flag = flag

    def misbehave(self, observation: dict[str, np.ndarray]) -> int:
        Path(self.flag).touch()
        time.sleep(0.5)
        return int(np.flatnonzero(observation["action_mask"])[0])


class Framer(MisbehavingAgent):
    """On its first decision starts a thread that, once, kills the worker (the peer of its
    socket) while the worker waits for a `Thinker`'s decision, so that the Thinker is blamed."""

    at_decision = 1

    def __init__(self, seed: int | None = 0, probability: float | None = None, flag: str = "", done: str = "") -> None:
        super().__init__(seed, probability)
        self.flag, self.done = Path(flag), Path(done)

    def misbehave(self, observation: dict[str, np.ndarray]) -> int:
        import signal
        import socket
        import struct
        import threading

        def frame() -> None:
            deadline = time.monotonic() + 30
            while not self.flag.exists() and time.monotonic() < deadline:
                time.sleep(0.005)
            if self.done.exists():
                return
            self.done.touch()
            peer = socket.socket(fileno=os.dup(int(sys.argv[1])))
            pid, _, _ = struct.unpack("3i", peer.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
            os.kill(pid, signal.SIGKILL)

        threading.Thread(target=frame, daemon=True).start()
        return super(MisbehavingAgent, self).act(observation)


def spec(cls: type, **kwargs: Any) -> str:
    query = "&".join(f"{k}={v}" for k, v in kwargs.items())
    return f"{HERE}:{cls.__name__}" + (f"?{query}" if query else "")


def config(agents: tuple[tuple[str, str], ...], deals: int = 1, **kwargs: Any) -> TournamentConfig:
    return TournamentConfig(variant="changchun", agents=agents, deals=deals, seed=kwargs.pop("seed", 5), **kwargs)


def run_cli(tmp_path: Path, entrant: str, *extra: str, workers: int = 1, timeout: float = 120) -> None:
    """``python -m agents.tournament``: ``entrant`` (``name=spec``) against random for one deal
    into ``tmp_path/t.sqlite``, in a subprocess (an agent may kill it); it must exit 0."""
    result = subprocess.run(
        [sys.executable, "-m", "agents.tournament", "--variant", "changchun", "--agents", entrant, "random",
         "--deals", "1", *extra, "--workers", str(workers), "--db", "t.sqlite", "--quiet", "--no-report"],
        cwd=tmp_path, capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip
    assert result.returncode == 0, (result.returncode, result.stderr)


def check_accounted(db: Path, expected: int) -> Counter:
    """Every hand is stored once, zero-sum, with each forfeit charged to the seat that made it
    (the env's −3 for it, +1 for each other seat, API.md "Actions"; in points, it pays each
    entrants' seats `FORFEIT_PAYMENT` in all); returns (agent, kind) counts."""
    kinds: Counter = Counter()
    with ResultStore(db) as store:
        hands = list(store.hands())
        assert not store.failures()
    assert len(hands) == expected and len({(h["deal"], h["seating"]) for h in hands}) == expected
    for hand in hands:
        assert abs(sum(hand["points"])) < 1e-9
        forfeit = hand["forfeit"]
        if forfeit is None:
            assert hand["result"]["outcome"] in ("win", "draw")
            continue
        seat = forfeit["seat"]
        assert hand["seats"][seat] == forfeit["agent"]
        assert hand["result"]["outcome"] == "illegal"
        assert hand["result"]["deltas"] == [-3.0 if s == seat else 1.0 for s in range(4)]
        assert hand["points"] == hand_points(hand["result"], hand["seats"], seat, FORFEIT_PAYMENT)
        kinds[(forfeit["agent"], forfeit["kind"])] += 1
    return kinds


# ---------------------------------------------------------------------- time limits


def test_an_agent_that_catches_base_exception_is_killed_at_the_deadline(tmp_path):
    entrants = (("catcher", spec(TimeoutCatcher, seconds=30)), ("rand", "random"))
    started = time.monotonic()
    summary = run_tournament(config(entrants, move_timeout=0.5), tmp_path / "t.sqlite", workers=0)
    assert time.monotonic() - started < 20  # two 30 s sleeps without a hard deadline
    assert check_accounted(tmp_path / "t.sqlite", 2) == {("catcher", "timeout"): 2}
    assert all("killed" in f["message"] for f in summary.forfeits)


def test_an_infinite_loop_that_catches_everything_does_not_hang_the_tournament(tmp_path):
    run_cli(tmp_path, f"loop={spec(InfiniteLooper)}", "--move-timeout", "0.5")
    assert check_accounted(tmp_path / "t.sqlite", 2) == {("loop", "timeout"): 2}


def test_building_a_slow_agent_does_not_count_against_the_move_timeout(tmp_path):
    slow_file = tmp_path / "slow_build.py"
    slow_file.write_text(
        "import time\nfrom agents import RandomAgent\n\n"
        "class SlowBuild(RandomAgent):\n"
        "    def __init__(self):\n        time.sleep(0.6)\n        super().__init__(0)\n"
    )
    entrants = (("slowbuild", f"{slow_file}:SlowBuild"), ("rand", "random"))
    summary = run_tournament(config(entrants, move_timeout=0.3), tmp_path / "t.sqlite", workers=0)
    assert summary.hands_played == 2 and not summary.forfeits


# ---------------------------------------------------------------------- processes that end


@pytest.mark.parametrize("how", ["sys", "os"])
@pytest.mark.parametrize("workers", [0, 1])
def test_an_agent_that_ends_its_process_forfeits_and_is_charged(tmp_path, how, workers):
    entrants = (("exiter", spec(Exiter, how=how)), ("rand", "random"))
    summary = run_tournament(config(entrants), tmp_path / "t.sqlite", workers=workers)
    assert check_accounted(tmp_path / "t.sqlite", 2) == {("exiter", "exit"): 2}
    assert summary.hands_played == 2 and not summary.failures


def test_sys_exit_in_process_with_no_workers_does_not_end_the_run(tmp_path):
    entrants = (("exiter", spec(Exiter, how="sys")), ("rand", "random"))
    run_tournament(config(entrants, deals=2), tmp_path / "t.sqlite", workers=0, isolate="none")
    assert check_accounted(tmp_path / "t.sqlite", 4) == {("exiter", "exit"): 4}


def test_os_exit_in_process_kills_the_worker_and_the_replay_charges_the_agent(tmp_path):
    entrants = (("exiter", spec(Exiter, how="os")), ("rand", "random"))
    summary = run_tournament(config(entrants), tmp_path / "t.sqlite", workers=1, isolate="none")
    assert check_accounted(tmp_path / "t.sqlite", 2) == {("exiter", "exit"): 2}
    assert not summary.failures  # not a silent "failure" left out of the statistics


# ---------------------------------------------------------------------- replies on the wire


@pytest.mark.parametrize("how", ["nested", "huge", "not-object", "no-id", "stale-id"])
def test_a_malformed_or_stale_reply_is_a_forfeit_of_the_agent_that_wrote_it(tmp_path, how):
    entrants = (("writer", spec(WireWriter, how=how)), ("rand", "random"))
    summary = run_tournament(config(entrants), tmp_path / "t.sqlite", workers=0)
    assert check_accounted(tmp_path / "t.sqlite", 2) == {("writer", "crash"): 2}
    assert all("malformed reply" in f["message"] for f in summary.forfeits)


def test_a_reply_that_stops_halfway_times_out_instead_of_hanging(tmp_path):
    run_cli(tmp_path, f"writer={spec(WireWriter, how='half-frame')}", "--move-timeout", "0.5", workers=0, timeout=60)
    assert check_accounted(tmp_path / "t.sqlite", 2) == {("writer", "timeout"): 2}


# ---------------------------------------------------------------------- killed workers


@pytest.mark.parametrize("workers", [0, 1])
def test_an_agent_that_kills_its_parent_forfeits_and_the_run_goes_on(tmp_path, workers):
    run_cli(tmp_path, f"killer={spec(Killer, whom='parent')}", workers=workers)  # before: the run (or its hands) died
    assert check_accounted(tmp_path / "t.sqlite", 2) == {("killer", "exit"): 2}


def unsandboxed(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a machine without bubblewrap, with ``--allow-unsandboxed``: isolated entrants run
    in plain processes, which can see and signal the worker."""
    from agents.tournament import runner

    monkeypatch.setattr(runner, "available", lambda: (None, "no sandbox in this test"))


def test_an_agent_that_kills_the_worker_is_charged_on_the_replay(tmp_path, monkeypatch):
    unsandboxed(monkeypatch)
    entrants = (("killer", spec(Killer, whom="peer")), ("rand", "random"))
    summary = run_tournament(
        config(entrants), tmp_path / "t.sqlite", workers=1, max_attempts=1, allow_unsandboxed=True
    )
    assert check_accounted(tmp_path / "t.sqlite", 2) == {("killer", "exit"): 2}
    assert all("held to have killed it" in f["message"] for f in summary.forfeits)
    assert not summary.failures


def test_an_agent_that_kills_the_worker_while_a_rival_thinks_does_not_get_the_rival_charged(tmp_path, monkeypatch):
    unsandboxed(monkeypatch)
    flag, done = tmp_path / "thinking", tmp_path / "killed"
    entrants = (("thinker", spec(Thinker, flag=flag)), ("framer", spec(Framer, flag=flag, done=done)))
    summary = run_tournament(config(entrants), tmp_path / "t.sqlite", workers=1, allow_unsandboxed=True)
    assert done.exists()  # the framer did kill the worker while the thinker's decision was in flight
    assert check_accounted(tmp_path / "t.sqlite", 2) == {}  # the replay did not die again: nobody is charged
    assert summary.hands_played == 2


# ---------------------------------------------------------------------- hidden information


def _seeds(db: Path) -> tuple[int, list[int]]:
    """The stored tournament seed and the deal seeds of the stored hands."""
    with ResultStore(db) as store:
        seed = store.config().seed
        return seed, [hand["deal_seed"] for hand in store.hands()]


def test_without_a_seed_each_tournament_draws_a_secret_one_that_resume_keeps(tmp_path, capsys):
    args = ["--variant", "changchun", "--agents", "a=random", "b=random", "--deals", "1", "--workers", "0",
            "--quiet", "--no-report"]  # fmt: skip
    assert main([*args, "--db", str(tmp_path / "one.sqlite")]) == 0
    printed = capsys.readouterr().out
    assert main([*args, "--db", str(tmp_path / "two.sqlite")]) == 0
    one, one_deals = _seeds(tmp_path / "one.sqlite")
    two, two_deals = _seeds(tmp_path / "two.sqlite")
    assert one != two and one_deals != two_deals
    assert derive_seed(0, 0, 0) not in one_deals + two_deals  # not the deals an entrant can compute
    assert f"--seed {one} plays these deals again" in printed  # told after the run
    assert main(["--db", str(tmp_path / "one.sqlite"), "--resume", "--agents", "a=random", "b=random",
                 "--deals", "2", "--workers", "0", "--quiet", "--no-report"]) == 0  # fmt: skip
    seed, deals = _seeds(tmp_path / "one.sqlite")
    assert seed == one and deals == [derive_seed(one, 0, d) for d in (0, 0, 1, 1)]


def test_an_explicit_seed_plays_the_deals_it_always_did(tmp_path):
    db = tmp_path / "t.sqlite"
    assert main(["--variant", "changchun", "--agents", "a=random", "b=random", "--deals", "2", "--seed", "987",
                 "--workers", "0", "--db", str(db), "--quiet", "--no-report"]) == 0  # fmt: skip
    assert _seeds(db) == (987, [derive_seed(987, 0, d) for d in (0, 0, 1, 1)])
    assert derive_seed(987, 0, 0) == 2576534143788353288  # the deal seeds of earlier versions


def test_an_isolated_agent_cannot_read_the_runner_globals(tmp_path):
    entrants = (("cheater", spec(Cheater)), ("rand", "random"))
    summary = run_tournament(config(entrants, deals=2), tmp_path / "t.sqlite", workers=0)
    seen = cheats(summary.forfeits)
    assert len(seen) == 4 and all(line["envs"] == 0 for line in seen)  # the cheater looked and saw no env


def test_an_isolated_agent_is_seeded_with_its_own_seats_seed_not_a_rivals(tmp_path):
    # its process (one for both its seats) starts its global generators from the agent seed of
    # its own first seat in the hand: seeded with seat 0's, as before, it learnt a rival's seed
    import random

    from agents.tournament.schedule import schedule

    entrants = (("rand", "random"), ("peeker", spec(SeedPeeker)))
    tournament = config(entrants, deals=1)
    summary = run_tournament(tournament, tmp_path / "t.sqlite", workers=0)
    draws = [d for f in summary.forfeits for _, d in json.loads(f["message"].rsplit("SEEDS ", 1)[1].splitlines()[0])]
    expected = []
    for task in schedule(tournament):  # two seatings, the peeker at seats 1, 3 and then 0, 2
        stream = random.Random(task.agent_seeds[task.seats.index("peeker")])
        expected += [stream.random(), stream.random()]
    assert len(draws) == 4 and sorted(draws) == sorted(expected)


def test_the_cheater_does_see_the_game_when_trusted_in_process(tmp_path):
    """The cheater works: in-process (``isolate="none"``, the user trusting it) it finds the env."""
    entrants = (("cheater", spec(Cheater)), ("rand", "random"))
    summary = run_tournament(config(entrants), tmp_path / "t.sqlite", workers=0, isolate="none")
    seen = cheats(summary.forfeits)
    assert seen and all(line["envs"] >= 1 for line in seen)


@pytest.mark.parametrize("isolate", ["auto", "none"])
def test_a_forged_mask_is_judged_by_the_env_and_forfeits(tmp_path, isolate):
    entrants = (("forger", spec(MaskForger)), ("rand", "random"))
    summary = run_tournament(config(entrants), tmp_path / "t.sqlite", workers=0, isolate=isolate)
    assert check_accounted(tmp_path / "t.sqlite", 2) == {("forger", "illegal"): 2}
    assert all("illegal action" in f["message"] for f in summary.forfeits)


# ---------------------------------------------------------------------- every hand accounted for


def _hostile_field(tmp_path: Path, probability: float) -> tuple[tuple[str, str], ...]:
    return (
        ("catcher", spec(TimeoutCatcher, probability=probability, seconds=30)),
        ("looper", spec(InfiniteLooper, probability=probability)),
        ("sysexit", spec(Exiter, probability=probability, how="sys")),
        ("osexit", spec(Exiter, probability=probability, how="os")),
        ("cheater", spec(Cheater, probability=probability)),
        ("forger", spec(MaskForger, probability=probability)),
        ("rand", "random"),
    )


def _accounting(tmp_path: Path, deals: int, probability: float, workers: int) -> None:
    field = _hostile_field(tmp_path, probability)
    db = tmp_path / "field.sqlite"
    summary = run_tournament(
        config(field, deals=deals, seed=9, move_timeout=1.0), db, workers=workers, load_timeout=120
    )
    kinds = check_accounted(db, 4 * deals)
    expected = {
        "catcher": "timeout",
        "looper": "timeout",
        "sysexit": "exit",
        "osexit": "exit",
        "forger": "illegal",
        "cheater": "crash",
    }
    caught = {agent for (agent, kind) in kinds if expected.get(agent) == kind}
    assert caught == set(expected)  # every kind of hostile agent was caught, as what it did
    slow = [f for f in summary.forfeits if (f["agent"], f["kind"]) not in expected.items()]
    for forfeit in slow:  # on a loaded machine a plain decision may take over the limit: a fair timeout
        assert forfeit["kind"] == "timeout" and forfeit["message"].startswith("decision took"), forfeit
    assert len(slow) <= len(summary.forfeits) // 10
    assert summary.hands_played == 4 * deals and not summary.failures
    assert all(line["envs"] == 0 for line in cheats(summary.forfeits))
    with ResultStore(db) as store:
        write_report(summary, store, tmp_path / "report")
    text = (tmp_path / "report" / "report.md").read_text()
    assert text.count("\n- deal ") >= sum(kinds.values())  # every forfeit listed in the report


def test_a_field_of_hostile_agents_leaves_every_hand_accounted_for(tmp_path):
    _accounting(tmp_path, deals=7, probability=1.0, workers=2)


@pytest.mark.slow
def test_a_thousand_hands_with_hostile_agents_are_all_accounted_for(tmp_path):
    _accounting(tmp_path, deals=250, probability=0.1, workers=2)


# ---------------------------------------------------------------------- flags


@pytest.mark.parametrize(
    "flag, value",
    [
        ("--move-timeout", "inf"),
        ("--move-timeout", "1e10"),
        ("--move-timeout", "nan"),
        ("--move-timeout", "0"),
        ("--move-timeout", "3601"),
        ("--deals", "10000000000"),
        ("--seed", "-1"),
        ("--seed", str(2**64)),
        ("--workers", "100000"),
        ("--max-attempts", "0"),
        ("--load-timeout", "inf"),
    ],
)
def test_numeric_flags_out_of_range_fail_with_one_line_naming_the_flag(tmp_path, capsys, flag, value):
    db = tmp_path / "x.sqlite"
    with pytest.raises(SystemExit) as exit_info:
        main(["--variant", "changchun", "--agents", "random", "heuristic", flag, value, "--db", str(db), "--quiet"])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert f"argument {flag}" in error and "Traceback" not in error
    assert not db.exists()


def test_a_huge_number_of_deals_starts_playing_at_once(tmp_path):
    class Stop(Exception):  # noqa: N818 - a signal to stop the run, not an error
        pass

    def stop(hand):
        raise Stop

    started = time.monotonic()
    with pytest.raises(Stop):
        run_tournament(
            config((("a", "random"), ("b", "random")), deals=10_000_000), tmp_path / "t.sqlite", workers=0, on_hand=stop
        )
    assert time.monotonic() - started < 15  # scheduling 20 million hands up front takes minutes and gigabytes


# ---------------------------------------------------------------------- resumed databases


def _tamper_specs(db: Path, specs: list[list[str]]) -> None:
    with sqlite3.connect(db) as conn:
        data = json.loads(conn.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()[0])
        data["agents"] = specs
        conn.execute("UPDATE meta SET value = ? WHERE key = 'config'", (json.dumps(data),))


def test_resume_never_runs_specs_stored_in_the_database(tmp_path):
    db = tmp_path / "t.sqlite"
    assert main(["--variant", "changchun", "--agents", "a=random", "b=random", "--deals", "1", "--workers", "0",
                 "--db", str(db), "--quiet", "--no-report"]) == 0  # fmt: skip
    _tamper_specs(db, [["a", "os:abort"], ["b", "random"]])
    for extra in ([], ["--agents", "a=random", "b=random"]):
        result = subprocess.run(
            [sys.executable, "-m", "agents.tournament", "--db", str(db), "--resume", "--deals", "2", "--workers", "0",
             "--quiet", "--no-report", *extra],
            cwd=tmp_path, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert result.returncode == 2, (result.returncode, result.stderr)  # not killed by os.abort
        assert "--agents" in result.stderr or "differ" in result.stderr
        assert "Traceback" not in result.stderr


def test_resume_refuses_an_entrant_whose_file_changed_and_works_from_another_folder(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "mine.py").write_text("from agents import RandomAgent\n\nclass Mine(RandomAgent):\n    pass\n")
    args = ["--variant", "changchun", "--deals", "1", "--workers", "0", "--quiet", "--no-report"]
    run = dict(capture_output=True, text=True, timeout=120)
    first = subprocess.run(
        [sys.executable, "-m", "agents.tournament", *args, "--agents", "m=mine.py:Mine", "random", "--db", "t.sqlite"],
        cwd=work, **run,
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    mine = f"m={work / 'mine.py'}:Mine"
    elsewhere = [sys.executable, "-m", "agents.tournament", "--db", str(work / "t.sqlite"), "--resume",
                 "--agents", mine, "random", "--workers", "0", "--quiet", "--no-report"]  # fmt: skip
    second = subprocess.run([*elsewhere, "--deals", "2"], cwd=tmp_path, **run)
    assert second.returncode == 0, second.stderr  # the stored spec names the file by its absolute path
    (work / "mine.py").write_text("from agents import RandomAgent\n\nclass Mine(RandomAgent):\n    cheat = 1\n")
    third = subprocess.run([*elsewhere, "--deals", "3"], cwd=tmp_path, **run)
    assert third.returncode == 2 and "changed" in third.stderr and "mine.py" in third.stderr
    with ResultStore(work / "t.sqlite") as store:
        assert len(store.done()) == 4


# ---------------------------------------------------------------------- database files


def test_a_locked_database_gives_a_clear_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(storage, "LOCK_TIMEOUT", 0.05)
    db = tmp_path / "t.sqlite"
    ResultStore(db).close()
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(SystemExit) as exit_info:
            main(["--variant", "changchun", "--agents", "random", "random", "--deals", "1", "--workers", "0",
                  "--db", str(db), "--quiet", "--no-report"])  # fmt: skip
    finally:
        holder.close()
    assert exit_info.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "locked by another process" in error[0]


def _hostile_databases(tmp_path: Path) -> dict[str, Path]:
    good = tmp_path / "good.sqlite"
    assert main(["--variant", "changchun", "--agents", "a=random", "b=random", "--deals", "1", "--workers", "0",
                 "--db", str(good), "--quiet", "--no-report"]) == 0  # fmt: skip
    files = {}

    def variant(name: str, sql: str) -> None:
        path = tmp_path / f"{name}.sqlite"
        path.write_bytes(good.read_bytes())
        with sqlite3.connect(path) as conn:
            conn.executescript(sql)
        files[name] = path

    (tmp_path / "text.sqlite").write_text("this is not a database\n" * 100)
    files["text"] = tmp_path / "text.sqlite"
    variant("config-not-json", "UPDATE meta SET value = '{oops' WHERE key = 'config';")
    variant("config-wrong-types", """UPDATE meta SET value = '{"variant": 3, "agents": 5}' WHERE key = 'config';""")
    variant("config-huge-deals", """UPDATE meta SET value = json_set(value, '$.deals', 1e300) WHERE key = 'config';""")
    variant("record-not-json", "UPDATE hands SET record = 'nope', result = '[1' ;")
    variant("missing-seats", "DELETE FROM seats WHERE seat = 2;")
    variant("trigger", "CREATE TRIGGER t AFTER INSERT ON hands BEGIN DELETE FROM seats; END;")
    variant("wrong-table", "DROP TABLE hands; CREATE TABLE hands (x);")
    variant("newer-schema", "UPDATE meta SET value = '99' WHERE key = 'schema';")
    variant("unknown-entrant", "UPDATE seats SET agent = 'zzz' WHERE seat = 1;")
    variant(
        "result-wrong-types", """UPDATE hands SET result = '{"outcome": "win", "winner": 0, "total_fan": "many"}';"""
    )
    variant("points-text", "UPDATE seats SET points = 'lots';")
    return files


def test_hostile_database_files_give_one_line_errors(tmp_path, capsys):
    for name, path in _hostile_databases(tmp_path).items():
        for argv in (
            ["export", "--db", str(path), "--jsonl", str(tmp_path / "out.jsonl")],
            ["--db", str(path), "--resume", "--trust-db", "--workers", "0", "--quiet", "--no-report"],
        ):
            with pytest.raises(SystemExit) as exit_info:
                main(argv)
            error = capsys.readouterr().err.strip().splitlines()
            assert exit_info.value.code == 2, (name, error)
            assert len(error) == 1 and "error:" in error[0] and "Traceback" not in error[0], (name, error)


# ---------------------------------------------------------------------- the report


class Shouter(MisbehavingAgent):
    """Raises an exception whose text is markup and a Markdown link."""

    def misbehave(self, observation: dict[str, np.ndarray]) -> int:
        raise RuntimeError("<script>alert(1)</script> [click](javascript:alert(2)) | table | **bold**")


def test_the_report_escapes_agent_exception_text(tmp_path):
    entrants = (("shouter", spec(Shouter)), ("rand", "random"))
    db = tmp_path / "t.sqlite"
    summary = run_tournament(config(entrants), db, workers=0)
    assert summary.forfeits
    with ResultStore(db) as store:
        write_report(summary, store, tmp_path / "report")
    md = (tmp_path / "report" / "report.md").read_text()
    page = (tmp_path / "report" / "report.html").read_text()
    assert "&lt;script&gt;alert" in md and "<script>" not in md
    assert "\\[click\\](javascript:" in md and not re.search(r"(?<!\\)\]\(javascript:", md)  # no live link
    assert "<script>alert" not in page


def test_run_tournament_rejects_an_unknown_isolation_mode(tmp_path):
    with pytest.raises(TournamentError, match="isolate"):
        run_tournament(config((("a", "random"), ("b", "random"))), tmp_path / "t.sqlite", isolate="some")
