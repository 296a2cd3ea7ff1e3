"""The sandbox of untrusted tournament entrants (issue 27, `agents.sandbox`).

Each attack of the issue is rebuilt as a hostile entrant (``tests/hostile/sandbox_attacks.py``)
run through the tournament: it either fails, or is charged to the attacker. The attackers report
what they found on stdout, which the sandbox keeps in the entrant's log. Then trust by origin,
the refusal without a sandbox, the database's mode and its verification, and the forfeit rule.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from agents import sandbox
from agents.sandbox import Limits, trusted
from agents.tournament.cli import main
from agents.tournament.config import TournamentConfig
from agents.tournament.play import _env, forfeit_payment
from agents.tournament.runner import TournamentError, load_summary, run_tournament
from agents.tournament.storage import ResultStore

ATTACKS = Path(__file__).resolve().parent / "hostile" / "sandbox_attacks.py"
needs_sandbox = pytest.mark.skipif(
    sandbox.available()[1] is not None, reason=f"no sandbox here: {sandbox.available()[1]}"
)


def attacker(cls: str, **options: Any) -> str:
    query = "&".join(f"{k}={v}" for k, v in options.items())
    return f"{ATTACKS}:{cls}" + (f"?{query}" if query else "")


def hexed(path: Path) -> str:
    return str(path).encode().hex()


def config(agents: tuple[tuple[str, str], ...], deals: int = 1, **kwargs: Any) -> TournamentConfig:
    return TournamentConfig(variant="changchun", agents=agents, deals=deals, seed=kwargs.pop("seed", 5), **kwargs)


def reports(db: Path, name: str) -> list[dict[str, Any]]:
    log = db.with_name(db.stem + "-logs") / f"{name}.log"
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    return [json.loads(line[len("REPORT ") :]) for line in lines if line.startswith("REPORT ")]


def forfeits(db: Path) -> list[tuple[str, str]]:
    with ResultStore(db) as store:
        return [(h["forfeit"]["agent"], h["forfeit"]["kind"]) for h in store.hands() if h["forfeit"]]


# ---------------------------------------------------------------------- trust by origin


@pytest.mark.parametrize(
    "spec, expected",
    [
        ("random", True),
        ("heuristic?lookahead=false", True),
        ("torch:changchun", True),
        ("agents:RandomAgent", True),
        ("agents.heuristic:HeuristicAgent", True),
        ("agents.tournament.testing:CrashingAgent", True),
        ("agents:load?spec=/tmp/cheat.py:Cheater", False),  # trusted by its prefix before
        ("agents.adapters:SB3Agent", False),
        ("agents:describe", False),
        (f"{Path(sandbox.__file__).parent / 'random_agent.py'}:RandomAgent", False),  # a file: not by its path
        ("os:system", False),
        ("sb3:/tmp/model.zip", False),
    ],
)
def test_trust_is_decided_by_the_class_a_spec_resolves_to(spec, expected):
    assert trusted(spec) is expected


def test_a_spec_that_loads_a_file_through_agents_load_never_runs_in_the_worker(tmp_path):
    marker = tmp_path / "ran-in-the-worker"
    cheat = tmp_path / "cheat.py"
    cheat.write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).touch()\n"
        "from agents import RandomAgent\n\nclass Cheater(RandomAgent):\n    pass\n"
    )
    entrants = (("evil", f"agents:load?spec={cheat}:Cheater"), ("rand", "random"))
    try:
        run_tournament(config(entrants), tmp_path / "t.sqlite", workers=0, allow_unsandboxed=True)
    except TournamentError as error:
        assert "cannot be loaded" in str(error)  # in the sandbox it cannot even see the file
    else:
        with ResultStore(tmp_path / "t.sqlite") as store:
            assert store.entrants()["evil"]["isolated"]
    assert not marker.exists() or sandbox.available()[1] is not None


def test_without_a_sandbox_an_untrusted_entrant_is_refused_unless_the_risk_is_accepted(tmp_path, monkeypatch, capsys):
    from agents.tournament import runner

    monkeypatch.setattr(runner, "available", lambda: (None, "bubblewrap (bwrap) is not installed"))
    mine = tmp_path / "mine.py"
    mine.write_text("from agents import RandomAgent\n\nclass Mine(RandomAgent):\n    pass\n")
    args = ["--variant", "changchun", "--agents", f"m={mine}:Mine", "random", "--deals", "1", "--workers", "0",
            "--db", str(tmp_path / "t.sqlite"), "--quiet", "--no-report"]  # fmt: skip
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    error = capsys.readouterr().err.strip().splitlines()
    assert exit_info.value.code == 2 and len(error) == 1
    assert "must run in a sandbox" in error[0] and "--allow-unsandboxed" in error[0]
    assert main([*args, "--allow-unsandboxed"]) == 0
    assert main(["--variant", "changchun", "--agents", "random", "heuristic", "--deals", "1", "--workers", "0",
                 "--db", str(tmp_path / "u.sqlite"), "--quiet", "--no-report"]) == 0  # fmt: skip


# ---------------------------------------------------------------------- processes


@needs_sandbox
def test_an_entrant_sees_no_other_process_and_cannot_signal_or_read_one(tmp_path):
    db = tmp_path / "t.sqlite"
    entrants = (("hunter", attacker("ProcessHunter")), ("rival", attacker("Forfeiter", at=10**6)))
    summary = run_tournament(config(entrants, move_timeout=5.0), db, workers=1)
    assert summary.hands_played == 2 and not summary.failures
    assert not forfeits(db)  # before: the rival was charged 'exit' or 'timeout' for what the hunter did
    found = reports(db, "hunter")
    assert len(found) == 4  # each of its two seats, in each of the two hands
    for seen in found:
        assert set(seen["seen"]) <= {1, 2, 3}  # its own namespace: bwrap's init, its keeper, itself
        assert seen["read_mem"] == [] and seen["signalled"] == []
        assert not any("sqlite" in line or "--seed" in line for line in seen["cmdlines"])


@needs_sandbox
def test_an_entrant_cannot_reach_the_database_or_a_rivals_file(tmp_path):
    db = tmp_path / "t.sqlite"
    rival = tmp_path / "rival.py"
    rival.write_text("from agents import RandomAgent\n\nclass Rival(RandomAgent):\n    pass\n")
    before = rival.read_bytes()
    entrants = (
        ("dbhunter", attacker("FileHunter", where=hexed(db))),
        ("filehunter", attacker("FileHunter", where=hexed(rival))),
        ("rival", f"{rival}:Rival"),
    )
    summary = run_tournament(config(entrants), db, workers=2)
    assert summary.hands_played == 6 and not forfeits(db)
    for name in ("dbhunter", "filehunter"):
        found = reports(db, name)
        assert found and all(not f["read"] and not f["written"] and f["sqlite"] == [] for f in found), found
    assert rival.read_bytes() == before
    for file in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
        if file.exists():
            assert stat.S_IMODE(file.stat().st_mode) == 0o600, file


def test_the_database_is_created_readable_by_its_owner_alone(tmp_path):
    db = tmp_path / "t.sqlite"
    with ResultStore(db) as store:
        store.save_config(config((("a", "random"), ("b", "random"))))
        modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir()}
    assert modes and all(mode == 0o600 for mode in modes.values()), modes


def test_staged_copies_run_whatever_happens_to_the_originals(tmp_path):
    mine = tmp_path / "mine.py"
    mine.write_text("X = 1\n")
    staged = tmp_path / "staged"
    staged.mkdir()
    binds, _, sources = sandbox.stage(f"{mine}:Mine", staged)
    mine.write_text("X = 2  # rewritten mid-run\n")
    ((copy, original),) = binds
    assert original == str(mine) and Path(copy).read_text() == "X = 1\n"
    assert stat.S_IMODE(Path(copy).stat().st_mode) == 0o644 and sources[0]["path"] == str(mine)


# ---------------------------------------------------------------------- limits


@needs_sandbox
def test_memory_over_the_limit_is_charged_to_the_hog(tmp_path):
    db = tmp_path / "t.sqlite"
    entrants = (("hog", attacker("Hog", mb=1500)), ("rand", "random"))
    run_tournament(config(entrants), db, workers=0, limits=Limits(memory_mb=1024))
    assert forfeits(db) == [("hog", "crash"), ("hog", "crash")]  # MemoryError in its own process


@needs_sandbox
def test_no_process_outlives_the_run_and_forks_are_limited(tmp_path):
    mark = f"mark-{uuid.uuid4().hex}"
    db = tmp_path / "t.sqlite"
    entrants = (
        ("daemon", attacker("Daemon", mark=mark)),
        ("bomb", attacker("ForkBomb", tries=60)),
        ("rand", "random"),
    )
    run_tournament(config(entrants), db, workers=1, limits=Limits(processes=32))
    if sandbox.available()[0] is not None:  # RLIMIT_NPROC counts per user: it binds where bwrap runs as nobody
        assert all(f["forks"] < 32 for f in reports(db, "bomb"))
    time.sleep(0.5)
    left = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            left += [pid] if mark in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace") else []
        except OSError:
            pass
    assert not left  # before: setsid children outlived the run


@needs_sandbox
def test_output_is_captured_and_capped(tmp_path):
    db = tmp_path / "t.sqlite"
    result = subprocess.run(
        [sys.executable, "-m", "agents.tournament", "--variant", "changchun", "--agents",
         f"shout={attacker('Shouter', mb=20)}", "random", "--deals", "1", "--workers", "1", "--db", str(db),
         "--quiet", "--no-report", "--limit", "output_kb=64"],
        capture_output=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    assert len(result.stdout) + len(result.stderr) < 100_000  # before: 2 GB into the terminal
    log = db.with_name("t-logs") / "shout.log"
    assert 0 < log.stat().st_size <= 64 * 64 * 1024


# ---------------------------------------------------------------------- the watchdog


def test_a_stopped_worker_does_not_hang_the_tournament_and_the_stopper_is_charged(tmp_path):
    db = tmp_path / "t.sqlite"
    entrants = (("stopper", attacker("Stopper")), ("rand", "random"))
    started = time.monotonic()
    run_tournament(
        config(entrants, move_timeout=2.0), db, workers=1, isolate="none", allow_unsandboxed=True
    )  # trusted in-process, it stops its worker; the replay isolates it, and it stops only itself
    assert time.monotonic() - started < 120
    assert forfeits(db) == [("stopper", "timeout"), ("stopper", "timeout")]


# ---------------------------------------------------------------------- results that cannot be edited


def _played(tmp_path: Path, forfeiter: bool = False) -> Path:
    db = tmp_path / "t.sqlite"
    first = ("f", attacker("Forfeiter", at=2)) if forfeiter else ("a", "random")
    assert main(["--variant", "changchun", "--agents", f"{first[0]}={first[1]}", "b=random", "--deals", "2",
                 "--seed", "4", "--workers", "0", "--db", str(db), "--quiet", "--no-report",
                 "--allow-unsandboxed"]) == 0  # fmt: skip
    return db


@pytest.mark.parametrize(
    "edit, named",
    [
        ("UPDATE seats SET points = points + 100 WHERE deal = 1 AND seating = 0 AND seat = 0", "deal 1 seating 0"),
        (
            "UPDATE seats SET points = points + CASE seat WHEN 0 THEN 5 WHEN 1 THEN -5 ELSE 0 END "
            "WHERE deal = 0 AND seating = 1",
            "deal 0 seating 1",
        ),
        (
            "UPDATE hands SET result = json_set(result, '$.deltas[0]', 99) WHERE deal = 1 AND seating = 1",
            "deal 1 seating 1",
        ),
        (
            "UPDATE seats SET agent = CASE agent WHEN 'a' THEN 'b' ELSE 'a' END WHERE deal = 0 AND seating = 0",
            "deal 0 seating 0",
        ),
    ],
)
def test_an_edited_hand_is_refused_and_named(tmp_path, capsys, edit, named):
    db = _played(tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute(edit)
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        main(["export", "--db", str(db), "--jsonl", str(tmp_path / "x.jsonl")])
    error = capsys.readouterr().err.strip().splitlines()
    assert exit_info.value.code == 2 and len(error) == 1 and named in error[0], error
    with pytest.raises(TournamentError, match=named):
        load_summary(db)


# ---------------------------------------------------------------------- forfeits


def test_a_forfeit_costs_at_least_the_most_a_hand_could_cost(tmp_path):
    payment = forfeit_payment(_env("changchun", ()))
    assert payment == 3 * 2**6 + 3 * 136 and forfeit_payment(_env("xinjiang", ())) == 3 * 2**5 + 3 * 136
    db = _played(tmp_path, forfeiter=True)
    with ResultStore(db) as store:
        for hand in store.hands():
            seat = hand["forfeit"]["seat"]
            kong = hand["result"]["kong_deltas"]  # kong payments made before the forfeit stand
            assert hand["points"][seat] == kong[seat] - payment
            assert hand["points"][seat ^ 2] == kong[seat ^ 2]  # its copy at the table (ABAB) neither pays nor receives


def test_random_play_that_forfeits_scores_no_better_than_without(tmp_path):
    (tmp_path / "plain").mkdir()
    (tmp_path / "forfeit").mkdir()
    plain = {row.name: row.mean for row in load_summary(_played(tmp_path / "plain")).agents}
    forfeiting = {row.name: row.mean for row in load_summary(_played(tmp_path / "forfeit", forfeiter=True)).agents}
    assert forfeiting["f"] < plain["a"]  # before: forfeiting scored −3.38 per seat-hand against −6.67
    assert forfeiting["f"] == -forfeit_payment(_env("changchun", ())) / 2  # one forfeit per hand, two seats


# ---------------------------------------------------------------------- the Lows


@needs_sandbox
def test_a_microsecond_move_timeout_with_a_sandboxed_entrant_and_no_workers(tmp_path, capsys):
    db = tmp_path / "t.sqlite"
    args = ["--variant", "changchun", "--agents", f"x={attacker('Forfeiter', at=10**6)}", "random", "--deals", "1",
            "--move-timeout", "1e-6", "--workers", "0", "--db", str(db), "--quiet", "--no-report"]  # fmt: skip
    assert main(args) == 0
    assert "Traceback" not in capsys.readouterr().err
    assert forfeits(db) and all(kind == "timeout" for _, kind in forfeits(db))
