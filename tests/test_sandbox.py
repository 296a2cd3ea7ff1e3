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
    """The attacker's reports in its log; a line cut short (the log is capped, `Limits.output_kb`) is left out."""
    log = db.with_name(db.stem + "-logs") / f"{name}.log"
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    found = []
    for line in lines:
        if line.startswith("REPORT "):
            try:
                found.append(json.loads(line[len("REPORT ") :]))
            except json.JSONDecodeError:
                pass
    return found


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


# ---------------------------------------------------------------------- the seed, off every command line


def _seed_file(folder: Path, text: str, mode: int = 0o600) -> Path:
    path = folder / "seed"
    path.write_text(text)
    path.chmod(mode)
    return path


def _base_args(db: Path) -> list[str]:
    return ["--variant", "changchun", "--agents", "random", "heuristic", "--deals", "1", "--workers", "0",
            "--db", str(db), "--quiet", "--no-report"]  # fmt: skip


def test_a_seed_file_gives_the_seed_and_plays_what_seed_plays(tmp_path):
    seed_file = _seed_file(tmp_path, " 987654321\n")
    assert main([*_base_args(tmp_path / "f.sqlite"), "--seed-file", str(seed_file)]) == 0
    assert main([*_base_args(tmp_path / "s.sqlite"), "--seed", "987654321"]) == 0
    with ResultStore(tmp_path / "f.sqlite") as f, ResultStore(tmp_path / "s.sqlite") as s:
        assert f.config().seed == s.config().seed == 987654321
        assert [h["result"] for h in f.hands()] == [h["result"] for h in s.hands()]
    # --resume with the seed file again: it matches the stored seed, and nothing is played twice
    assert main([*_base_args(tmp_path / "f.sqlite"), "--resume", "--seed-file", str(seed_file)]) == 0


@pytest.mark.parametrize(
    "text, mode, expected",
    [
        ("12\n", 0o644, "mode 0644 lets its group or other users read or write it; the seed shows every deal: chmod"),
        ("12\n", 0o640, "mode 0640 lets its group"),
        ("12\n", 0o602, "mode 0602 lets its group"),
        ("twelve", 0o600, "must hold one whole number from 0 to 9223372036854775807 (and nothing else), found 'tw"),
        ("-12", 0o600, "must hold one whole number"),
        ("1 2", 0o600, "must hold one whole number"),
        ("", 0o600, "must hold one whole number"),
        ("1e3", 0o600, "must hold one whole number"),
        ("٣", 0o600, "must hold one whole number"),  # a digit to str.isdigit, not to a seed
        ("9223372036854775808", 0o600, "the seed must be at most 9223372036854775807"),
        ("1" * 200, 0o600, "must hold one whole number"),
    ],
)
def test_a_seed_file_others_may_read_or_that_holds_no_seed_is_refused_and_nothing_is_created(
    tmp_path, capsys, text, mode, expected
):
    seed_file = _seed_file(tmp_path, text, mode)
    db = tmp_path / "t.sqlite"
    with pytest.raises(SystemExit) as exit_info:
        main([*_base_args(db), "--seed-file", str(seed_file)])
    error = capsys.readouterr().err.strip().splitlines()
    assert exit_info.value.code == 2 and len(error) == 1, error
    assert error[0].startswith(f"mahjong-tournament: error: --seed-file {seed_file}: ") and expected in error[0], error
    assert not db.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["seed"]


def test_a_seed_file_that_is_not_a_private_regular_file_of_ours_is_refused(tmp_path, capsys):
    public = _seed_file(tmp_path, "12\n", 0o644)
    (tmp_path / "link").symlink_to(public)  # the mode checked is the file's, not the link's
    (tmp_path / "folder").mkdir(mode=0o700)
    cases = [
        (tmp_path / "link", "mode 0644"),
        (tmp_path / "folder", "not a regular file"),
        (tmp_path / "missing", "cannot open it (No such file or directory)"),
        (Path("/dev/null"), "not a regular file"),
    ]
    if os.geteuid() == 0:  # only root can read a private file of another user's
        theirs = tmp_path / "theirs"
        theirs.write_text("12\n")
        theirs.chmod(0o600)
        os.chown(theirs, 65534, 65534)
        cases.append((theirs, "owned by uid 65534, not by you (uid 0)"))
    for path, expected in cases:
        with pytest.raises(SystemExit) as exit_info:
            main([*_base_args(tmp_path / "t.sqlite"), "--seed-file", str(path)])
        error = capsys.readouterr().err.strip().splitlines()
        assert exit_info.value.code == 2 and len(error) == 1 and expected in error[0], (path, error)
    with pytest.raises(SystemExit):
        main([*_base_args(tmp_path / "t.sqlite"), "--seed", "3", "--seed-file", str(tmp_path / "missing")])
    assert "give the seed once: --seed N or --seed-file PATH" in capsys.readouterr().err
    assert not (tmp_path / "t.sqlite").exists()


def _look_at_processes(found: dict[int, tuple[int, bytes]]) -> None:
    """Every readable process's parent, command line and environment, by pid."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            parent = int(Path(f"/proc/{name}/stat").read_bytes().rpartition(b")")[2].split()[1])
            text = Path(f"/proc/{name}/cmdline").read_bytes() + b"\0" + Path(f"/proc/{name}/environ").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        found[int(name)] = (parent, found.get(int(name), (0, b""))[1] + b"\0" + text)


def _descendants(found: dict[int, tuple[int, bytes]], root: int) -> dict[int, bytes]:
    family, grew = {root}, True
    while grew:
        more = {pid for pid, (parent, _) in found.items() if parent in family} - family
        family |= more
        grew = bool(more)
    return {pid: found[pid][1] for pid in family if pid in found}


@needs_sandbox
@pytest.mark.parametrize("backend", ["local", pytest.param("ray", marks=pytest.mark.slow)])
def test_the_seed_appears_on_no_command_line_and_in_no_environment_during_a_run(tmp_path, monkeypatch, backend):
    """A run with a seed file, two workers (local processes, or a local Ray's) and a sandboxed
    entrant: /proc is read over and over while it plays, and the seed is on no process's
    command line or in its environment (workers get their hands through pipes or Ray's object
    store, the sandbox its requests through its socket, and none gets the tournament seed,
    only the seeds derived for one hand)."""
    import secrets

    seed = 10**18 + secrets.randbelow(10**18)  # 19 digits that occur nowhere else
    seed_file = _seed_file(tmp_path, str(seed))
    db = tmp_path / "t.sqlite"
    command = [sys.executable, "-m", "agents.tournament", "--variant", "changchun", "--agents",
               f"x={attacker('Forfeiter', at=10**6)}", "random", "--deals", "6", "--workers", "2",
               "--seed-file", str(seed_file), "--db", str(db), "--quiet", "--no-report",
               "--backend", backend]  # fmt: skip
    if backend == "ray":
        pytest.importorskip("ray")
        monkeypatch.delenv("RAY_ADDRESS", raising=False)
    seen: dict[int, tuple[int, bytes]] = {}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    while process.poll() is None:
        _look_at_processes(seen)
        time.sleep(0.005)
    _, err = process.communicate()
    assert process.returncode == 0, err[-2000:]
    with ResultStore(db) as store:
        assert store.config().seed == seed and store.count() == 12
    ours = _descendants(seen, process.pid)
    worker = b"spawn_main" if backend == "local" else b"ray::"
    assert sum(worker in text for text in ours.values()) >= 2, "the workers were not seen: nothing was checked"
    assert any(b"bwrap" in text for text in ours.values()), "no sandbox was seen: nothing was checked"
    assert any(b"agents.sandbox" in text for text in ours.values()), "no entrant process was seen"
    assert [pid for pid, text in ours.items() if str(seed).encode() in text] == []
    assert [pid for pid, (_, text) in seen.items() if str(seed).encode() in text] == []


# ---------------------------------------------------------------------- one hostile entrant of each kind

HONEST_FILE = "from agents import RandomAgent\n\n\nclass Honest(RandomAgent):\n    pass\n"


def _hostile_field(
    tmp_path: Path, db: Path, mark: str, kinds: tuple[str, ...]
) -> tuple[list[str], list[str], dict[str, str]]:
    """The entrants of both runs: (hostile run's, honest run's, forfeit kind expected of each
    entrant that forfeits). Two honest entrants: ``heuristic`` (this package's, in the worker)
    and ``honest`` (a user file: sandboxed, the rivals' target); then the hostile ``kinds``.
    Each hostile entrant plays at random from its seed apart from its attack
    (`tests.hostile.sandbox_attacks.Attacker`); its twin in the honest run is the honest play
    that attack leaves: ``random`` (the same moves from the same seed) where the attack fails,
    and a forfeit at the same decision where it is charged to the attacker (``Forfeiter``: Hog
    and Stopper forfeit at their first decision)."""
    honest = tmp_path / "honest.py"
    honest.write_text(HONEST_FILE)
    common = {"heuristic": "heuristic", "honest": f"{honest}:Honest"}
    hostile = {
        "hunter": (attacker("ProcessHunter"), "random"),  # kills, stops, reads /proc/PID/mem and cmdlines
        "dbreader": (attacker("FileHunter", where=hexed(db)), "random"),  # reads and writes the database
        "rewriter": (attacker("FileHunter", where=hexed(honest)), "random"),  # rewrites a rival's source
        "forkbomb": (attacker("ForkBomb", tries=60, once="true"), "random"),  # over --limit processes=32
        "daemon": (attacker("Daemon", mark=mark, seconds=30), "random"),  # outlives its hand
        "shouter": (attacker("Shouter", mb=2), "random"),  # floods stdout and stderr
        "hog": (attacker("Hog", mb=5000), attacker("Forfeiter", at=1)),  # over the memory limit: crash
        "stopper": (attacker("Stopper"), attacker("Forfeiter", at=1)),  # stops itself: timeout
        "forfeiter": (attacker("Forfeiter", at=3), attacker("Forfeiter", at=3)),  # forfeits on purpose
    }
    hostile = {name: hostile[name] for name in kinds}
    hostile_run = [f"{n}={s}" for n, s in common.items()] + [f"{n}={s}" for n, (s, _) in hostile.items()]
    honest_run = [f"{n}={s}" for n, s in common.items()] + [f"{n}={s}" for n, (_, s) in hostile.items()]
    charged = {"hog": "crash", "stopper": "timeout", "forfeiter": "illegal"}
    return hostile_run, honest_run, {name: kind for name, kind in charged.items() if name in kinds}


def _seat_points(db: Path) -> dict[tuple[int, int, int], tuple[str, float]]:
    with ResultStore(db) as store:
        return {(h["deal"], h["seating"], k): (h["seats"][k], h["points"][k]) for h in store.hands() for k in range(4)}


def _honest_rows(db: Path, names: set[str]) -> dict[str, dict[str, Any]]:
    """The honest entrants' leaderboard rows, all but the time per move (the machine's)."""
    import dataclasses

    rows = {row.name: dataclasses.asdict(row) for row in load_summary(db).agents if row.name in names}
    return {
        name: {k: "NaN" if isinstance(v, float) and v != v else v for k, v in row.items() if k != "ms_per_move"}
        for name, row in rows.items()
    }


def _hostile_tournament(tmp_path: Path, deals: int, workers: int, kinds: tuple[str, ...]) -> None:
    """Issue 27's "done when": the leaderboard of a tournament with one hostile entrant of
    each kind equals the honest one for the honest entrants.

    Read literally: the honest entrants' rows of the hostile run's leaderboard (and their
    points in every hand they played) equal those of the same tournament (same seed, deals,
    seatings, names) in which every hostile entrant is replaced by its twin, the honest play
    its attack leaves (`_hostile_field`), run without any isolation (``--isolate none``: no
    code in it attacks). A duplicate tournament compares entrants over the same walls and
    tables, so an honest entrant's points depend on its table's play: what the attackers may
    change is only what their own legal play and their own forfeits change, and those the twins
    reproduce. Any attack that reached an honest entrant (a rival framed, killed, stopped or
    timed out, its file rewritten, the database edited, a hand voided or replayed differently)
    would change a row. Both runs go through the CLI, as separate processes."""
    import uuid

    db, reference = tmp_path / "hostile.sqlite", tmp_path / "honest.sqlite"
    mark = f"mark-{uuid.uuid4().hex}"
    hostile_run, honest_run, charged = _hostile_field(tmp_path, db, mark, kinds)
    honest_source = (tmp_path / "honest.py").read_bytes()
    seed_file = _seed_file(tmp_path, "20240527")
    common = ["--variant", "changchun", "--deals", str(deals), "--seed-file", str(seed_file), "--move-timeout", "2",
              "--limit", "processes=32", "--quiet", "--no-report"]  # fmt: skip
    for entrants, where, extra in ((hostile_run, db, ["--workers", str(workers)]),
                                   (honest_run, reference, ["--workers", "0", "--isolate", "none"])):  # fmt: skip
        done = subprocess.run(
            [sys.executable, "-m", "agents.tournament", *common, "--agents", *entrants, "--db", str(where), *extra],
            capture_output=True,
            timeout=3600,
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        assert len(done.stdout) + len(done.stderr) < 200_000  # the shouter's output stays in its log
    honest = {"heuristic", "honest"}
    hostile_points, honest_points = _seat_points(db), _seat_points(reference)
    assert len(hostile_points) == len(honest_points) == 16 * deals  # every hand played, none voided
    assert {name for name, _ in hostile_points.values()} == {"heuristic", "honest", *kinds}
    assert [(*key, name) for key, (name, _) in hostile_points.items()] == [
        (*key, name) for key, (name, _) in honest_points.items()
    ]
    played = [key for key, (name, _) in hostile_points.items() if name in honest]
    assert len({name for name, _ in hostile_points.values()} & honest) == 2 and played
    assert {key: hostile_points[key] for key in played} == {key: honest_points[key] for key in played}
    assert _honest_rows(db, honest) == _honest_rows(reference, honest)
    # every forfeit of the hostile run is its attacker's, of the kind its attack earns, in the
    # seat and hand where its twin forfeits
    with ResultStore(db) as store, ResultStore(reference) as twins:
        hands, twin_hands = list(store.hands()), list(twins.hands())
        assert not store.failures()
    for hand, twin in zip(hands, twin_hands):
        forfeit = hand["forfeit"]
        assert (forfeit and (forfeit["seat"], forfeit["agent"])) == (twin["forfeit"] and (
            twin["forfeit"]["seat"], twin["forfeit"]["agent"])), (hand["deal"], hand["seating"])  # fmt: skip
        if forfeit is not None:
            assert charged.get(forfeit["agent"]) == forfeit["kind"], forfeit
    assert {h["forfeit"]["agent"] for h in hands if h["forfeit"]} == set(charged)  # each was charged
    # the attacks ran, and failed
    for found in reports(db, "hunter"):
        assert set(found["seen"]) <= {1, 2, 3} and found["read_mem"] == [] and found["signalled"] == []
    for name in ("dbreader", "rewriter"):
        assert all(not f["read"] and not f["written"] and f["sqlite"] == [] for f in reports(db, name))
    if sandbox.available()[0] is not None:  # RLIMIT_NPROC binds where bwrap runs as nobody (Limits.processes)
        assert all(f["forks"] < 32 for f in reports(db, "forkbomb"))
    for name in {"hunter", "dbreader", "rewriter", "forkbomb"} & set(kinds):
        assert reports(db, name), f"{name} never reported: did it attack?"
    assert (tmp_path / "honest.py").read_bytes() == honest_source
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    time.sleep(0.5)
    assert not [pid for pid, text in _descendants_of_all() if mark.encode() in text]


def _descendants_of_all() -> list[tuple[int, bytes]]:
    found: dict[int, tuple[int, bytes]] = {}
    _look_at_processes(found)
    return [(pid, text) for pid, (_, text) in found.items()]


@needs_sandbox
def test_hostile_entrants_leave_the_honest_leaderboard_as_it_is(tmp_path):
    """`_hostile_tournament`, 40 hands with the attacks on processes, the database and a
    rival's file (the slow test below has every kind)."""
    _hostile_tournament(tmp_path, deals=10, workers=1, kinds=("hunter", "dbreader", "rewriter"))


@needs_sandbox
@pytest.mark.slow
def test_hostile_entrants_leave_the_honest_leaderboard_of_a_thousand_hands_as_it_is(tmp_path):
    """`_hostile_tournament`: 1,000 hands (250 deals of four seatings), one hostile entrant of
    each kind."""
    kinds = ("hunter", "dbreader", "rewriter", "forkbomb", "daemon", "shouter", "hog", "stopper", "forfeiter")
    _hostile_tournament(tmp_path, deals=250, workers=2, kinds=kinds)


# ---------------------------------------------------------------------- staging folders after a SIGKILL

HOLD_STAGING = (
    "import time\nfrom agents import sandbox\nheld = sandbox.Staging()\nprint(held.path, flush=True)\ntime.sleep(600)"
)


def _holder(top: Path) -> tuple[subprocess.Popen, Path]:
    """A process that opened a `Staging` folder in ``top`` and holds it."""
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD_STAGING], stdout=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(top)}
    )
    return process, Path(process.stdout.readline().strip())


def test_a_staging_folder_left_by_a_killed_process_is_removed_by_the_next_and_nothing_else_is(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    killed, left = _holder(tmp_path)
    live, used = _holder(tmp_path)
    try:
        killed.kill()
        killed.wait()
        assert left.is_dir() and (left / ".lock").exists()  # SIGKILL ran no cleanup
        unlocked = tmp_path / "mahjong-entrants-made-by-hand"  # no lock file: not known to be ours
        unlocked.mkdir()
        free = tmp_path / "elsewhere"
        free.mkdir()
        (free / ".lock").touch()
        (tmp_path / "mahjong-entrants-link").symlink_to(free)  # a link is never followed
        theirs = None
        if os.geteuid() == 0:  # another user's folder, its lock free: left alone
            theirs = tmp_path / "mahjong-entrants-theirs"
            theirs.mkdir()
            (theirs / ".lock").touch()
            os.chown(theirs, 65534, 65534)
        with sandbox.Staging() as mine:
            assert not left.exists()
            assert used.is_dir() and unlocked.is_dir() and (free / ".lock").exists()
            assert theirs is None or theirs.is_dir()
            assert mine.path.parent == tmp_path and stat.S_IMODE(mine.path.stat().st_mode) == 0o755
            assert sandbox.remove_stale_staging(tmp_path) == []  # its own, held, is not stale either
        assert not mine.path.exists()
    finally:
        live.kill()
        live.wait()
    assert sandbox.remove_stale_staging(tmp_path) == [used]


@needs_sandbox
def test_the_staging_folder_of_a_coordinator_killed_with_sigkill_is_removed_by_the_resumed_run(tmp_path):
    import shutil
    import signal
    import tempfile

    top = Path(tempfile.mkdtemp(dir="/tmp"))  # the sandbox's user must reach the copies: not under pytest's 0700
    top.chmod(0o755)
    try:
        db = tmp_path / "t.sqlite"
        command = [sys.executable, "-m", "agents.tournament", "--variant", "changchun", "--agents",
                   f"x={attacker('Forfeiter', at=10**6)}", "random", "--deals", "3", "--seed", "3", "--workers", "1",
                   "--db", str(db), "--quiet", "--no-report"]  # fmt: skip
        env = {**os.environ, "TMPDIR": str(top)}
        coordinator = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        started = time.monotonic()
        while not _stored_hands(db) and coordinator.poll() is None and time.monotonic() - started < 120:
            time.sleep(0.05)
        coordinator.send_signal(signal.SIGKILL)
        coordinator.wait()
        (left,) = top.glob(f"mahjong-entrants-{coordinator.pid}-*")
        assert list(left.glob("*/*.py")), "it held no copy of the entrant's file"
        resumed = subprocess.run([*command, "--resume"], env=env, capture_output=True, timeout=300)
        assert resumed.returncode == 0, resumed.stderr[-2000:]
        assert _stored_hands(db) == 6
        assert list(top.iterdir()) == []  # the killed run's folder, and the resumed run's own
    finally:
        shutil.rmtree(top, ignore_errors=True)


def _stored_hands(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            return conn.execute("SELECT COUNT(*) FROM hands").fetchone()[0]
    except sqlite3.Error:
        return 0


# ---------------------------------------------------------------------- a worker killed by an entrant, on Ray


@pytest.mark.slow
def test_a_worker_killed_by_an_unsandboxed_entrant_is_charged_to_it_locally_and_on_ray_to_no_one(
    tmp_path, monkeypatch, caplog
):
    """Issue 27 point 3, as far as it can hold (`agents.tournament.backends`, "Where the charge
    cannot reach"): an entrant run without a sandbox that kills the worker playing its hand is
    charged locally (the worker's flight record is out of its reach), while on Ray the hand is
    played again, then given up as a failure (for ``--resume``), stored as replays, charged to
    no one: not to the rival either; the run warns that it cannot charge it."""
    import logging

    pytest.importorskip("ray")
    from agents.tournament import runner

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(runner, "available", lambda: (None, "no sandbox in this test"))
    entrants = (("killer", attacker("WorkerKiller")), ("rand", "random"))
    local, on_ray = tmp_path / "local.sqlite", tmp_path / "ray.sqlite"
    run_tournament(config(entrants), local, workers=1, allow_unsandboxed=True, max_attempts=2)
    assert forfeits(local) == [("killer", "exit"), ("killer", "exit")]
    with caplog.at_level(logging.WARNING, logger="agents.tournament"):
        summary = run_tournament(
            config(entrants), on_ray, workers=2, backend="ray", allow_unsandboxed=True, max_attempts=2
        )
    assert "agent killer runs on Ray without a sandbox" in caplog.text
    assert summary.hands_played == 0 and len(summary.failures) == 2 and not forfeits(on_ray)
    with ResultStore(on_ray) as store:
        replays = store.replays()
    assert [(r["deal"], r["seating"], r["attempt"]) for r in replays] == [(0, 0, 1), (0, 1, 1)]
    assert all(r["reason"].startswith("its worker on ") and " died" in r["reason"] for r in replays)
    assert len({f["worker"] for f in reports(on_ray, "killer")}) >= 2  # it did kill Ray workers
