"""The tournament runner (agents/tournament): seatings, determinism across workers and
backends, resume after an interruption, forfeits, confidence intervals and the CLI."""

from __future__ import annotations

import itertools
import json
import logging
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from agents.tournament.cli import main, parse_agents
from agents.tournament.config import TournamentConfig
from agents.tournament.report import _describe, _md, leaderboard_text, rules_text, write_report
from agents.tournament.runner import TournamentError, resolve_config, run_tournament
from agents.tournament.schedule import schedule, seatings_for_deal
from agents.tournament.stats import bootstrap_ratio, summarize, t_quantile
from agents.tournament.storage import ResultStore
from mahjong_env import replay
from mahjong_env.tools.narrator import METHOD_TERMS

TESTING = "agents.tournament.testing"
REPO = Path(__file__).resolve().parents[1]


def small(variant: str = "changchun", deals: int = 3, **kwargs) -> TournamentConfig:
    agents = kwargs.pop("agents", (("rand", "random"), ("heur", "heuristic"), ("rand2", "random")))
    return TournamentConfig(variant=variant, agents=tuple(agents), deals=deals, seed=kwargs.pop("seed", 11), **kwargs)


def stored(db: Path) -> list[tuple]:
    """Every hand's identity and outcome (not timings) in (deal, seating) order."""
    conn = sqlite3.connect(db)
    try:
        hands = conn.execute(
            "SELECT deal, seating, deal_seed, outcome, winner, result, record, forfeit_agent, forfeit_kind "
            "FROM hands ORDER BY deal, seating"
        ).fetchall()
        seats = conn.execute(
            "SELECT deal, seating, seat, agent, points FROM seats ORDER BY deal, seating, seat"
        ).fetchall()
    finally:
        conn.close()
    return hands + seats


# ---------------------------------------------------------------------- schedule


@pytest.mark.parametrize("num_agents", [2, 3, 4])
def test_duplicate_seating_covers_every_seat_of_every_deal(num_agents):
    for deal in range(12):
        seatings = seatings_for_deal(num_agents, "duplicate", deal, seed=5)
        for agent in range(num_agents):
            assert {seat for s in seatings for seat in range(4) if s[seat] == agent} == {0, 1, 2, 3}
        per_seat = [Counter(s[seat] for s in seatings) for seat in range(4)]
        assert all(len(set(c.values())) == 1 and len(c) == num_agents for c in per_seat)  # equally often


def test_duplicate_four_agents_balances_neighbours_over_six_deals():
    before = Counter()
    for deal in range(6):
        for s in seatings_for_deal(4, "duplicate", deal, seed=0):
            before.update((s[i], s[(i + 1) % 4]) for i in range(4))
    assert len(before) == 12 and len(set(before.values())) == 1


@pytest.mark.parametrize("num_agents", [5, 6])
def test_more_than_four_agents_meet_pairwise_equally(num_agents):
    block = len(list(itertools.combinations(range(num_agents), 4)))
    meetings, played = Counter(), Counter()
    for deal in range(2 * block):
        seatings = seatings_for_deal(num_agents, "duplicate", deal, seed=3)
        table = set(seatings[0])
        assert len(table) == 4
        for agent in table:  # each seat of the deal, as with four entrants
            assert {seat for s in seatings for seat in range(4) if s[seat] == agent} == {0, 1, 2, 3}
        played.update(table)
        meetings.update(itertools.combinations(sorted(table), 2))
    assert len(set(played.values())) == 1
    assert len(meetings) == num_agents * (num_agents - 1) // 2 and len(set(meetings.values())) == 1


@pytest.mark.parametrize("num_agents", [2, 3, 4, 6])
def test_random_seats_draws_a_valid_table(num_agents):
    for deal in range(20):
        (seating,) = seatings_for_deal(num_agents, "random-seats", deal, seed=1)
        assert len(seating) == 4 and set(seating) <= set(range(num_agents))
        assert len(set(seating)) == min(num_agents, 4)


def test_schedule_is_a_function_of_the_seed():
    config = small(deals=4)
    assert schedule(config) == schedule(config)
    other = schedule(TournamentConfig(**{**config.__dict__, "seed": 12}))
    assert [t.deal_seed for t in other] != [t.deal_seed for t in schedule(config)]
    assert schedule(config)[:6] == schedule(TournamentConfig(**{**config.__dict__, "deals": 9}))[:6]


# ---------------------------------------------------------------------- determinism


def test_same_results_with_zero_one_and_two_workers(tmp_path):
    config = small(deals=2)
    results = []
    for workers in (0, 1, 2):
        db = tmp_path / f"w{workers}.sqlite"
        summary = run_tournament(config, db, workers=workers)
        assert summary.hands_played == 12
        results.append(stored(db))
    assert results[0] == results[1] == results[2]


def test_same_results_with_ray(tmp_path):
    pytest.importorskip("ray")
    config = small(variant="xinjiang", deals=2)
    run_tournament(config, tmp_path / "local.sqlite", workers=0)
    run_tournament(config, tmp_path / "ray.sqlite", workers=2, backend="ray")
    assert stored(tmp_path / "local.sqlite") == stored(tmp_path / "ray.sqlite")


def test_resume_after_an_exception_gives_the_uninterrupted_results(tmp_path):
    config = small(deals=3)
    run_tournament(config, tmp_path / "full.sqlite", workers=0)
    full = stored(tmp_path / "full.sqlite")

    class Stop(Exception):  # noqa: N818 - a signal to stop the run, not an error
        pass

    count = 0

    def stop_after_five(hand):
        nonlocal count
        count += 1
        if count == 5:
            raise Stop

    db = tmp_path / "cut.sqlite"
    with pytest.raises(Stop):
        run_tournament(config, db, workers=2, on_hand=stop_after_five)
    assert len(ResultStore(db).done()) == 5
    resumed = resolve_config(db, None, resume=True, given_fields=set(), trust_db=True)
    summary = run_tournament(resumed, db, workers=2)
    assert stored(db) == full
    assert summary.hands_played == 18
    reference = run_tournament(config, tmp_path / "full.sqlite", workers=0)  # nothing left to play
    assert [a.__dict__ for a in summary.agents] != [] and [a.mean for a in summary.agents] == [
        a.mean for a in reference.agents
    ]
    assert [(a.ci_low, a.ci_high, a.ordinal) for a in summary.agents] == [
        (a.ci_low, a.ci_high, a.ordinal) for a in reference.agents
    ]


def test_killing_the_cli_and_resuming_loses_and_repeats_nothing(tmp_path):
    args = [
        "--variant",
        "changchun",
        "--agents",
        "random",
        "heuristic",
        "--hands",
        "40",
        "--seed",
        "3",
        "--quiet",
        "--no-report",
    ]
    full = tmp_path / "full.sqlite"
    assert main(args + ["--workers", "0", "--db", str(full)]) == 0
    db = tmp_path / "killed.sqlite"
    process = subprocess.Popen(
        [sys.executable, "-m", "agents.tournament", *args, "--workers", "1", "--db", str(db)],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        count = 0
        while count < 8 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.02)
            try:
                with sqlite3.connect(db, timeout=5) as conn:
                    count = conn.execute("SELECT COUNT(*) FROM hands").fetchone()[0]
            except sqlite3.OperationalError:
                count = 0
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait()
    with sqlite3.connect(db) as conn:
        cut = conn.execute("SELECT COUNT(*) FROM hands").fetchone()[0]
    assert 8 <= cut < 48, "the run was not interrupted midway"
    resume = ["--db", str(db), "--resume", "--workers", "2", "--quiet", "--no-report"]
    assert main(resume + ["--agents", "random", "heuristic"]) == 0
    assert stored(db) == stored(full)


# ---------------------------------------------------------------------- faults


def test_crashing_slow_and_illegal_agents_forfeit_and_the_tournament_goes_on(tmp_path):
    config = small(
        deals=2,
        agents=(
            ("rand", "random"),
            ("crash", f"{TESTING}:CrashingAgent"),
            ("slow", f"{TESTING}:SlowAgent"),
            ("illegal", f"{TESTING}:IllegalAgent"),
        ),
        move_timeout=0.5,
    )
    db = tmp_path / "faults.sqlite"
    summary = run_tournament(config, db, workers=2)
    assert summary.hands_played == 8 and not summary.failures
    store = ResultStore(db)
    kinds = Counter()
    for hand in store.hands():
        forfeit = hand["forfeit"]
        if forfeit is None:
            continue
        kinds[(forfeit["agent"], forfeit["kind"])] += 1
        seat = forfeit["seat"]
        assert hand["seats"][seat] == forfeit["agent"]
        assert hand["result"]["outcome"] == "illegal"
        # the env's illegal outcome: the offender pays 1 point to each other seat
        assert hand["result"]["deltas"] == [-3.0 if s == seat else 1.0 for s in range(4)]
    assert set(kinds) <= {("crash", "crash"), ("slow", "timeout"), ("illegal", "illegal")}
    assert kinds  # the third decision of the first misbehaving agent to reach it ends each hand
    messages = [f["message"] for f in summary.forfeits]
    assert any("CrashingAgent crashes on purpose" in m for m in messages if "Traceback" in m)
    assert "Forfeits:" in leaderboard_text(summary)
    run_tournament(config, tmp_path / "inline.sqlite", workers=0)
    assert stored(tmp_path / "inline.sqlite") == stored(db)  # forfeits are as reproducible as hands


def test_slow_agent_is_interrupted_at_the_time_limit(tmp_path):
    config = small(deals=1, agents=(("slow", f"{TESTING}:SlowAgent"), ("rand", "random")), move_timeout=0.2)
    started = time.monotonic()
    summary = run_tournament(config, tmp_path / "slow.sqlite", workers=0)
    assert time.monotonic() - started < 1.5  # SlowAgent sleeps 1 s per hand without the alarm
    assert {f["kind"] for f in summary.forfeits} == {"timeout"} and len(summary.forfeits) == 2


def test_a_killed_worker_hand_is_played_again(tmp_path, monkeypatch):
    monkeypatch.setenv("MAHJONG_TOURNAMENT_DIE_ONCE", str(tmp_path / "died"))
    config = small(deals=2, agents=(("die", f"{TESTING}:DieOnceAgent"), ("rand", "random")))
    summary = run_tournament(config, tmp_path / "die.sqlite", workers=1)
    assert (tmp_path / "died").exists()
    assert summary.hands_played == 4 and not summary.failures and not summary.forfeits
    monkeypatch.delenv("MAHJONG_TOURNAMENT_DIE_ONCE")
    run_tournament(config, tmp_path / "clean.sqlite", workers=0)
    assert stored(tmp_path / "die.sqlite") == stored(tmp_path / "clean.sqlite")


def test_hands_played_again_are_stored_reported_and_counted_over_resumed_runs(tmp_path, monkeypatch, capsys):
    """Issue 29 (d): a local worker killed once (DieOnceAgent ends its worker) makes its hand be
    played again; the replay is stored (``replays``: hand, play number, reason, where), counted
    after the leaderboard and listed in report.md and report.html, and a resumed run that loses
    another play adds to it (play numbers per hand go on over runs)."""
    db, report = tmp_path / "t.sqlite", tmp_path / "report"
    argv = ["--variant", "changchun", "--agents", f"die={TESTING}:DieOnceAgent", "rand=random", "--seed", "11",
            "--workers", "1", "--quiet", "--db", str(db), "--report", str(report)]  # fmt: skip
    monkeypatch.setenv("MAHJONG_TOURNAMENT_DIE_ONCE", str(tmp_path / "died-1"))
    assert main([*argv, "--deals", "1"]) == 0
    out, err = capsys.readouterr()
    assert "played again: 1 hand(s), after their node or worker was lost" in out
    assert re.search(r"deal 0 seating \d is played again: its worker process died \(exit code 17\)", err), err
    with ResultStore(db) as store:
        (first,) = store.replays()
    assert first["attempt"] == 1 and first["place"].startswith("local worker (pid ")
    assert first["reason"] == "its worker process died (exit code 17)"  # it ran in the worker: nobody was awaited
    line = f"deal 0, seating {first['seating']}, play 1 on {first['place']}: its worker process died (exit code 17)"
    assert f"## Played again\n\n- {line}" in (report / "report.md").read_text()
    assert "<h2>Played again</h2>" in (report / "report.html").read_text()

    monkeypatch.setenv("MAHJONG_TOURNAMENT_DIE_ONCE", str(tmp_path / "died-2"))  # dies once more
    assert main([*argv, "--deals", "2", "--resume"]) == 0
    assert "played again: 2 hand(s), after their node or worker was lost" in capsys.readouterr().out
    with ResultStore(db) as store:
        replays = store.replays()
        assert store.count() == 4 and not store.failures()
    assert replays[0] == first and len(replays) == 2 and replays[1]["deal"] == 1
    page = (report / "report.md").read_text()
    assert all(f"deal {r['deal']}, seating {r['seating']}, play 1 on local worker" in page for r in replays)
    assert main(["export", "--db", str(db), "--report", str(tmp_path / "again")]) == 0  # from the database alone
    assert "played again: 2 hand(s)" in capsys.readouterr().out
    assert (tmp_path / "again" / "report.md").read_text().count("play 1 on local worker") == 2


def test_replays_are_numbered_per_hand_over_every_opening_of_the_database(tmp_path):
    db = tmp_path / "t.sqlite"
    with ResultStore(db) as store:
        assert store.replays() == []
        assert store.add_replay(3, 1, "its worker process died (exit code -9)", "local worker (pid 7)") == 1
        assert store.add_replay(0, 0, "the node 10.0.0.7 playing it was lost", None) == 1
    with ResultStore(db) as store:
        assert store.add_replay(3, 1, "its worker on node x died", "x") == 2
        assert [(r["deal"], r["seating"], r["attempt"], r["place"]) for r in store.replays()] == [
            (0, 0, 1, None), (3, 1, 1, "local worker (pid 7)"), (3, 1, 2, "x"),
        ]  # fmt: skip


def test_a_hand_whose_ray_worker_dies_is_played_again_counted_and_the_same(tmp_path, monkeypatch, capsys):
    pytest.importorskip("ray")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setenv("MAHJONG_TOURNAMENT_DIE_ONCE", str(tmp_path / "died"))  # set before Ray starts its workers
    argv = ["--variant", "changchun", "--agents", f"die={TESTING}:DieOnceAgent", "rand=random", "--deals", "2",
            "--seed", "11", "--isolate", "none", "--quiet", "--no-report"]  # fmt: skip
    assert main([*argv, "--backend", "ray", "--workers", "2", "--db", str(tmp_path / "ray.sqlite")]) == 0
    out, err = capsys.readouterr()
    assert (tmp_path / "died").exists()
    assert re.search(r"deal \d seating \d is played again: its worker on .+ died", err), err
    assert "played again: 1 hand(s), after their node or worker was lost" in out
    monkeypatch.delenv("MAHJONG_TOURNAMENT_DIE_ONCE")
    assert main([*argv, "--workers", "0", "--db", str(tmp_path / "local.sqlite")]) == 0
    assert stored(tmp_path / "ray.sqlite") == stored(tmp_path / "local.sqlite")


def test_an_unreachable_ray_address_ends_the_run_in_one_line(tmp_path, monkeypatch, capsys):
    pytest.importorskip("ray")
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")  # nothing answers on port 1 of this machine
    argv = ["--variant", "changchun", "--agents", "random", "heuristic", "--deals", "1", "--backend", "ray",
            "--quiet", "--db", str(tmp_path / "t.sqlite")]  # fmt: skip
    started = time.monotonic()
    assert main(argv) == 1
    assert time.monotonic() - started < 30  # not Ray's minutes of retries
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("mahjong-tournament: error: cannot join the Ray cluster at 127.0.0.1:1 (RAY_ADDRESS)")
    assert "num_cpus" not in lines[0] and "--resume" in lines[0]


# ---------------------------------------------------------------------- statistics


def test_intervals_cover_the_true_edge_at_the_nominal_rate():
    """200 simulated duplicate tournaments (2 entrants, 40 deals × ABAB/BABA): per-seat wall luck
    shared by both seatings, a skill edge of +0.5 points per hand for A, skewed noise (big
    wins), zero-sum hands. A's interval should cover +0.5 and A − B's +1.0 about 95% of the time."""
    config = TournamentConfig(variant="changchun", agents=(("a", "random"), ("b", "random")), deals=40)
    rng = np.random.default_rng(7)
    edge, runs = 0.5, 200
    covered_mean = covered_pair = 0
    drawn = {"outcome": "draw", "winner": None, "method": None, "total_fan": 0}
    for _ in range(runs):
        hands = []
        for deal in range(40):
            luck = rng.normal(0, 2, 4) + rng.exponential(3, 4) * (rng.random(4) < 0.25)
            for seating, seats in enumerate((("a", "b", "a", "b"), ("b", "a", "b", "a"))):
                skill = np.array([edge if s == "a" else -edge for s in seats])
                points = luck + skill + rng.exponential(2, 4) * (rng.random(4) < 0.3)
                hands.append(
                    {
                        "deal": deal, "seating": seating, "seats": list(seats), "points": list(points - points.mean()),
                        "result": drawn, "feeder": None, "forfeit": None, "decisions": [1] * 4, "think_time": [0.0] * 4,
                    }
                )  # fmt: skip
        summary = summarize(config, hands, hands_expected=80, resamples=1000)
        a = next(s for s in summary.agents if s.name == "a")
        covered_mean += a.ci_low <= edge <= a.ci_high
        (pair,) = summary.pairs
        low, high = (pair.ci_low, pair.ci_high) if pair.a == "a" else (-pair.ci_high, -pair.ci_low)
        covered_pair += low <= 2 * edge <= high
    assert 0.9 <= covered_mean / runs <= 0.99
    assert 0.9 <= covered_pair / runs <= 0.99


def test_bootstrap_interval_of_a_constant_and_of_too_few_deals():
    estimate, low, high = bootstrap_ratio(np.full(10, 2.0), np.ones(10))
    assert estimate[0] == low[0] == high[0] == 2.0
    estimate, low, high = bootstrap_ratio(np.array([3.0]), np.ones(1))
    assert estimate[0] == 3.0 and np.isnan(low[0]) and np.isnan(high[0])


def test_summary_statistics_on_known_hands():
    config = TournamentConfig(variant="changchun", agents=(("a", "random"), ("b", "random")), deals=2)
    win = {"outcome": "win", "winner": 0, "method": "discard", "total_fan": 3, "deltas": [], "kong_deltas": []}
    draw = {"outcome": "draw", "winner": None, "method": None, "total_fan": 0}
    hands = []
    for deal, (first, second) in enumerate([((8.0, -4.0, 0.0, -4.0), (0.0, 0.0, 0.0, 0.0))] * 2):
        for seating, (pts, result, feeder) in enumerate([(first, win, 1), (second, draw, None)]):
            seats = ["a", "b", "a", "b"] if seating == 0 else ["b", "a", "b", "a"]
            hands.append(
                {
                    "deal": deal, "seating": seating, "seats": seats, "points": list(pts), "result": result,
                    "feeder": feeder, "forfeit": None, "decisions": [1] * 4, "think_time": [0.001] * 4,
                }
            )  # fmt: skip
    summary = summarize(config, hands, hands_expected=4)
    a, b = summary.agents
    assert (a.name, b.name) == ("a", "b")
    assert a.mean == pytest.approx(2.0) and b.mean == pytest.approx(-2.0)  # 8 points over 4 seat-hands a deal
    assert a.win_rate == pytest.approx(0.25) and b.win_rate == 0
    assert b.deal_in_rate == pytest.approx(0.25) and a.deal_in_rate == 0
    assert a.draw_rate == pytest.approx(0.5) and a.average_fan == 3
    assert a.ms_per_move == pytest.approx(1.0)
    (pair,) = summary.pairs
    assert (pair.a, pair.b, pair.diff, pair.deals) == ("a", "b", pytest.approx(4.0), 2)
    assert a.mu > b.mu


# ---------------------------------------------------------------------- storage and report


def test_export_jsonl_replays_and_report_is_written(tmp_path):
    config = small(deals=2, agents=(("rand", "random"), ("heur", "heuristic"), ("crash", f"{TESTING}:CrashingAgent")))
    db = tmp_path / "t.sqlite"
    summary = run_tournament(config, db, workers=0)
    with ResultStore(db) as store:
        assert store.export_jsonl(tmp_path / "hands.jsonl") == 12
        lines = [json.loads(line) for line in (tmp_path / "hands.jsonl").read_text().splitlines()]
        assert any(hand["forfeit"] for hand in store.hands())
        for line, hand in zip(lines, store.hands()):
            assert line["tournament"]["points"] == hand["points"]
            assert replay(line) == [hand["result"]]  # forfeits too: recorded as "illegal -1"
        page = write_report(summary, store, tmp_path / "report")
    assert page.exists() and "heur" in page.read_text()
    text = (tmp_path / "report" / "report.md").read_text()
    assert "## Notable hands" in text and "largest win" in text
    assert (tmp_path / "report" / "points.png").stat().st_size > 0
    assert (tmp_path / "report" / "rating.png").stat().st_size > 0


# ---------------------------------------------------------------------- CLI


def test_parse_agents_names_and_numbers_duplicates():
    assert parse_agents(["m=pkg.mod:A?k=1", "pkg.mod:B?k=2", "random?seed=3"]) == (
        ("m", "pkg.mod:A?k=1"),
        ("B", "pkg.mod:B?k=2"),
        ("random", "random?seed=3"),
    )
    assert parse_agents(["random", "h=heuristic", "torch:ckpt/changchun.pt", "pkg.mod:MyAgent", "random"]) == (
        ("random-1", "random"),
        ("h", "heuristic"),
        ("changchun", "torch:ckpt/changchun.pt"),
        ("MyAgent", "pkg.mod:MyAgent"),
        ("random-2", "random"),
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["--variant", "changchun", "--agents", "random", "nosuchagent"], "nosuchagent"),
        (["--variant", "changchun", "--agents", "random", "no.such.module:Agent"], "cannot import"),
        (["--variant", "changchun", "--agents", "random", "torch:missing.pt"], "missing.pt"),
        (["--variant", "changchun", "--agents", "random"], "at least two"),
        (["--variant", "changchun", "--agents", "a=random", "a=heuristic"], "given twice"),
        (["--variant", "changchun", "--agents", "random", "heuristic", "--deals", "0"], "--deals: must be"),
        (["--variant", "changchun", "--agents", "random", "heuristic", "--move-timeout", "-1"], "timeout"),
        (["--variant", "changchun", "--agents", "random", "heuristic", "--rule", "no_such_rule=1"], "no_such_rule"),
        (["--agents", "random", "heuristic"], "--variant"),
        (["--variant", "changchun", "--agents", "random", "heuristic", "--workers", "-2"], "--workers"),
        (["--resume"], "--db"),
    ],
)
def test_cli_bad_input_fails_before_anything_runs(tmp_path, capsys, args, message):
    db = tmp_path / "x.sqlite"
    with pytest.raises(SystemExit) as exit_info:
        main([*args, "--db", str(db), "--quiet"] if "--resume" not in args else args)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
    assert not db.exists()


def test_cli_refuses_to_overwrite_and_checks_resume_options(tmp_path, capsys):
    db = tmp_path / "x.sqlite"
    base = ["--variant", "changchun", "--agents", "random", "random", "--hands", "1", "--db", str(db), "--quiet"]
    assert main(base + ["--workers", "0", "--no-report"]) == 0
    with pytest.raises(SystemExit):
        main(base)
    assert "--resume" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--db", str(db), "--resume", "--seed", "99", "--agents", "random", "random", "--quiet"])
    assert "seed" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--db", str(tmp_path / "none.sqlite"), "--resume", "--quiet"])
    assert "no database" in capsys.readouterr().err
    extend = ["--db", str(db), "--resume", "--deals", "2", "--workers", "0", "--quiet", "--no-report"]
    assert main(extend + ["--agents", "random", "random"]) == 0
    assert len(ResultStore(db).done()) == 4


def test_console_script_runs_a_short_tournament(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "agents.tournament", "--variant", "xinjiang", "--agents", "random", "heuristic",
         "--hands", "2", "--workers", "0", "--db", "r.sqlite", "--report", "out", "--export-jsonl", "h.jsonl"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "heuristic" in result.stdout and "95% CI" in result.stdout
    assert (tmp_path / "out" / "report.html").exists() and (tmp_path / "h.jsonl").exists()
    bad = subprocess.run(
        [sys.executable, "-m", "agents.tournament", "--variant", "mars", "--agents", "random", "random"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert bad.returncode == 2 and "mars" in bad.stderr


# ---------------------------------------------------------------------- first hour of a user (issue 14)


def test_hands_is_deprecated_and_means_deals(tmp_path, capsys):
    db = tmp_path / "x.sqlite"
    base = ["--variant", "changchun", "--agents", "random", "random", "--workers", "0", "--db", str(db), "--quiet"]
    assert main(base + ["--hands", "2", "--no-report"]) == 0
    assert "--hands is deprecated" in capsys.readouterr().err and len(ResultStore(db).done()) == 4
    assert main(["--db", str(db), "--resume", "--agents", "random", "random", "--deals", "3", "--workers", "0",
                 "--quiet", "--no-report"]) == 0  # fmt: skip
    assert "deprecated" not in capsys.readouterr().err and len(ResultStore(db).done()) == 6


def test_the_core_install_runs_a_tournament_without_the_extras(tmp_path):
    """Without tqdm, openskill and matplotlib (not in the core dependencies) the run finishes,
    says before the first hand which extra adds them, and reports without ratings and plots."""
    blocker = (
        "import sys, importlib.abc\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name.split('.')[0] in ('tqdm', 'openskill', 'matplotlib'):\n"
        "            raise ImportError(name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import importlib.util\n"
        "importlib.util.find_spec = lambda name, *a: None if name in ('tqdm', 'openskill', 'matplotlib') else "
        "importlib.machinery.PathFinder.find_spec(name)\n"
        "from agents.tournament.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", blocker, "--variant", "changchun", "--agents", "random", "heuristic", "--deals", "2",
         "--workers", "0", "--db", "t.sqlite", "--report", "out"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    note = result.stderr.index("pip install -e '.[tournament]'")
    assert note < result.stderr.index("tournament: ")  # said before the progress of the first hand
    assert "heuristic" in result.stdout and "95% CI" in result.stdout
    text = (tmp_path / "out" / "report.md").read_text()
    assert "No ratings" in text and not list((tmp_path / "out").glob("*.png"))


def test_a_checkpoint_for_the_other_variant_is_refused_and_the_report_lists_variants(tmp_path, capsys):
    pytest.importorskip("torch")
    xinjiang = REPO / "agents" / "checkpoints" / "xinjiang.pt"
    db = tmp_path / "x.sqlite"
    args = ["--variant", "changchun", "--agents", f"x=torch:{xinjiang}", "random", "--deals", "1", "--workers", "0",
            "--db", str(db), "--quiet", "--report", str(tmp_path / "out")]  # fmt: skip
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    assert exit_info.value.code == 2 and "--allow-variant-mismatch" in capsys.readouterr().err
    assert main(args + ["--allow-variant-mismatch"]) == 0
    text = (tmp_path / "out" / "report.md").read_text()
    entrants = text[text.index("## Entrants") :]
    assert "| x |" in entrants and "xinjiang" in entrants and _md(str(xinjiang)) in entrants  # as Markdown: "_" escaped


def test_a_hand_forfeited_by_an_agent_that_cannot_be_built_replays(tmp_path):
    # its reset() fails as the hand is set up: the forfeit comes before the first decision,
    # from a seat that is not always the one to move
    broken = tmp_path / "broken.py"
    broken.write_text(
        "from agents import RandomAgent\n\nclass Broken(RandomAgent):\n"
        "    def reset(self):\n        raise RuntimeError('cannot start a hand')\n"
    )
    config = small(deals=1, agents=(("rand", "random"), ("broken", f"{broken}:Broken")))
    db = tmp_path / "t.sqlite"
    run_tournament(config, db, workers=0, isolate="none")
    with ResultStore(db) as store:
        hands = list(store.hands(with_record=True))
    forfeits = [hand for hand in hands if hand["forfeit"]]
    assert forfeits and all(hand["forfeit"]["agent"] == "broken" for hand in forfeits)
    assert any(hand["record"]["hands"][0]["actions"][0][0] != hand["record"]["hands"][0]["dealer"] for hand in forfeits)
    for hand in hands:
        record = hand["record"]
        assert record["hands"][0]["actions"][-1][1] == "illegal -1"
        assert replay(record) == [hand["result"]]


def test_export_needs_no_agent_and_report_links_named_full_table_replays(tmp_path, capsys):
    db = tmp_path / "x.sqlite"
    assert main(["--variant", "xinjiang", "--agents", "a=random", "b=heuristic", "--deals", "1", "--workers", "0",
                 "--db", str(db), "--quiet", "--no-report"]) == 0  # fmt: skip
    with sqlite3.connect(db) as conn:  # the entrants can no longer be built: export must not need them
        data = json.loads(conn.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()[0])
        data["agents"] = [["a", "no_such_module:Gone"], ["b", "no_such_module:Gone"]]
        conn.execute("UPDATE meta SET value = ? WHERE key = 'config'", (json.dumps(data),))
    capsys.readouterr()
    out = tmp_path / "report"
    assert main(["export", "--db", str(db), "--jsonl", str(tmp_path / "h.jsonl"), "--report", str(out)]) == 0
    lines = [json.loads(line) for line in (tmp_path / "h.jsonl").read_text().splitlines()]
    assert len(lines) == 2 and all(sorted(set(line["players"])) == ["a", "b"] for line in lines)
    assert [replay(line) for line in lines] == [[line["hands"][0]["result"]] for line in lines]
    text = (out / "report.md").read_text()
    assert "[table](replays/deal0-seating" in text and "[seat 3 (" in text
    tables = [p for p in (out / "replays").glob("deal*.html") if "-seat" not in p.name.replace("-seating", "")]
    table = tables[0]
    page = table.read_text()
    seating = int(table.stem.split("seating")[1])
    names = lines[seating]["players"]
    assert f"deal 0, seating {seating}: {names[0]} (seat 0) vs" in page and "full table" in page
    assert len(list((out / "replays").glob(f"deal0-seating{seating}-seat*.html"))) == 4
    assert (out / "headtohead.png").stat().st_size > 0 and (out / "rating.png").stat().st_size > 0


def test_a_capped_win_says_it_was_capped_in_the_report():
    from agents.tournament.report import _describe

    win = {"outcome": "win", "winner": 0, "method": "discard", "fans": [["pinghu", 5], ["qingyise", 3]], "total_fan": 6}
    assert _describe(win, 0, {"fan_cap": 6}).endswith("capped at 6 fan (the fans add up to 8)")
    assert "capped" not in _describe(win, 1, {"fan_cap": 10})


# ---------------------------------------------------------------------- a researcher's first day (issue 24)


def test_a_resumed_run_reports_where_the_first_run_did(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    base = ["--variant", "changchun", "--agents", "random", "random", "--deals", "1", "--workers", "0", "--quiet"]
    assert main(base) == 0  # no --db: runs/tournament/changchun-STAMP/results.sqlite, report/ beside it
    (db,) = (tmp_path / "runs").rglob("results.sqlite")
    first = db.parent / "report"
    assert (first / "report.html").exists()
    (first / "report.html").unlink()
    resume = ["--db", str(db), "--resume", "--agents", "random", "random", "--workers", "0", "--quiet"]
    assert main(resume + ["--deals", "2"]) == 0
    assert (first / "report.html").exists() and not (db.parent / "results-report").exists()
    assert main(resume + ["--deals", "3", "--report", "elsewhere"]) == 0  # --report says otherwise
    assert (tmp_path / "elsewhere" / "report.html").exists()
    named = tmp_path / "named.sqlite"
    assert main(base + ["--db", str(named), "--report", "mine"]) == 0  # a first run's --report is kept
    (tmp_path / "mine" / "report.html").unlink()
    assert main(["--db", str(named), "--resume", "--agents", "random", "random", "--workers", "0", "--quiet"]) == 0
    assert (tmp_path / "mine" / "report.html").exists() and not (tmp_path / "named-report").exists()


def test_the_resume_command_printed_after_ctrl_c_runs_as_printed(tmp_path):
    args = ["--variant", "changchun", "--agents", "r=random", "look=heuristic?lookahead=false", "--deals", "120",
            "--seed", "3", "--workers", "0", "--db", "cut.sqlite", "--quiet", "--report", "out"]  # fmt: skip
    process = subprocess.Popen(
        [sys.executable, "-m", "agents.tournament", *args],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    db = tmp_path / "cut.sqlite"
    try:
        deadline = time.monotonic() + 60
        count = 0
        while count < 4 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.02)
            try:
                with sqlite3.connect(db, timeout=5) as conn:
                    count = conn.execute("SELECT COUNT(*) FROM hands").fetchone()[0]
            except sqlite3.OperationalError:
                count = 0
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 130, err
    with sqlite3.connect(db) as conn:
        cut = conn.execute("SELECT COUNT(*) FROM hands").fetchone()[0]
    assert 4 <= cut < 240, "the run was not interrupted midway"
    printed = err.split("continue with ", 1)[1].strip()
    assert printed.startswith("mahjong-tournament --db cut.sqlite --resume --agents ")
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    resumed = subprocess.run(
        printed, shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=300, env={**os.environ, "PATH": path}
    )
    assert resumed.returncode == 0, resumed.stderr
    assert len(ResultStore(db).done()) == 240 and (tmp_path / "out" / "report.html").exists()


def test_a_microsecond_move_timeout_in_process_forfeits_cleanly(tmp_path, capsys):
    db = tmp_path / "fast.sqlite"
    args = ["--variant", "changchun", "--agents", "random", "heuristic", "--deals", "1", "--move-timeout", "1e-6",
            "--workers", "0", "--db", str(db), "--quiet", "--no-report"]  # fmt: skip
    assert main(args) == 0
    with ResultStore(db) as store:
        hands = list(store.hands())
    assert len(hands) == 2 and all(hand["forfeit"]["kind"] == "timeout" for hand in hands)
    assert "Forfeits:" in capsys.readouterr().out


def test_a_deal_count_edited_in_the_database_is_refused_on_resume(tmp_path, capsys):
    db = tmp_path / "x.sqlite"
    assert main(["--variant", "changchun", "--agents", "random", "random", "--deals", "2", "--workers", "0",
                 "--db", str(db), "--quiet", "--no-report"]) == 0  # fmt: skip
    with sqlite3.connect(db) as conn:
        data = json.loads(conn.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()[0])
        data["deals"] = 1
        conn.execute("UPDATE meta SET value = ? WHERE key = 'config'", (json.dumps(data),))
    capsys.readouterr()
    resume = ["--db", str(db), "--resume", "--agents", "random", "random", "--workers", "0", "--quiet", "--no-report"]
    with pytest.raises(SystemExit) as exit_info:
        main(resume)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1
    assert "holds hands of deal 1" in err and "beyond the 1 deals of the configuration" in err and "--deals 2" in err
    assert main(resume + ["--deals", "2"]) == 0  # the deal count it holds
    with pytest.raises(TournamentError, match="holds hands of deal 1"):
        run_tournament(TournamentConfig.from_dict(dict(data, deals=1)), db, workers=0)


def test_reports_name_the_rules_the_winner_the_method_and_the_fans(tmp_path, capsys):
    db = tmp_path / "mil.sqlite"
    args = ["--variant", "changchun", "--agents", "a=random", "b=heuristic", "--deals", "3", "--seed", "4",
            "--rule", "profile=mil2024", "--rule", "fan_cap=5", "--workers", "0", "--db", str(db), "--quiet",
            "--report", str(tmp_path / "out")]  # fmt: skip
    assert main(args) == 0
    rules = "rules: profile mil2024; overrides: fan_cap=5"
    assert rules in capsys.readouterr().out
    text = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert rules.replace("_", "\\_") in text and rules in (tmp_path / "out" / "report.html").read_text()
    notable = text[text.index("## Notable hands") : text.index("## Entrants")]
    chinese = {c for c, _ in METHOD_TERMS.values()}
    methods = re.findall(r"won by (\S+)", notable)
    assert methods and set(methods) <= chinese, methods  # 对宝 bao match, not bao_match
    assert not re.search(r"player_\d won", notable)
    assert re.search(r"(?:pinghu 平胡|zimo 自摸|dianpao 点炮) \d", notable)

    seats = ["ann", "bo", "cy", "di"]
    win = {"outcome": "win", "winner": 3, "method": "bao_match", "fans": [["pinghu", 1], ["duibao", 2]], "total_fan": 3}
    assert _describe(win, 0, None, seats) == "di (seat 3) won by 对宝 bao match, 3 fan (pinghu 平胡 1, duibao 对宝 2)"
    assert _describe(win, 3, None, seats).startswith("won by 对宝 bao match")
    plain = TournamentConfig(variant="xinjiang", agents=(("a", "random"), ("b", "random")))
    assert rules_text(plain) == "rules: profile seed (the defaults); overrides: none"


@pytest.mark.parametrize(
    ("p", "df", "value"),
    [  # Student's t quantiles (published tables; to 1e-12, computed with mpmath)
        (0.975, 1, 12.706204736174693),
        (0.975, 10, 2.2281388519862742),
        (0.995, 30, 2.7499956535672250),
        (0.95, 200, 1.6525081009108771),
        (0.9995, 201, 3.3395867889052697),  # the old Cornish–Fisher expansion was 1.5e-8 off here
        (0.025, 4, -2.7764451051977987),
    ],
)
def test_t_quantile_matches_known_values(p, df, value):
    assert t_quantile(p, df) == pytest.approx(value, rel=1e-12)


def test_bootstrap_intervals_equal_the_values_of_the_hand_written_version():
    """`bootstrap_ratio` on scipy.stats.bootstrap: the same resamples and intervals as before."""
    x = np.array([[3.0, -1.0], [-2.0, 0.0], [5.0, 2.0], [0.5, -4.0], [-1.5, 1.0], [2.0, 0.0], [4.0, -2.5], [-3.0, 3.0]])
    y = np.array([[2, 1], [2, 0], [2, 1], [2, 1], [2, 1], [2, 0], [2, 1], [2, 1]], dtype=float)
    for (confidence, resamples, seed), low, high in [
        ((0.95, 2000, 7), [-0.6875, -3.4], [1.6728342652017858, 2.6]),
        ((0.9, 500, 3), [-0.65625, -2.5], [1.4044912395853757, 2.0]),
    ]:
        estimate, lo, hi = bootstrap_ratio(x, y, confidence, resamples, seed)
        np.testing.assert_allclose(estimate, [0.5, -0.25], rtol=1e-12)
        np.testing.assert_allclose(lo, low, rtol=1e-12)
        np.testing.assert_allclose(hi, high, rtol=1e-12)


def test_diagnostics_go_through_loggers_and_results_to_stdout(tmp_path, capsys, caplog):
    caplog.set_level(logging.INFO, logger="agents.tournament")
    db = tmp_path / "x.sqlite"
    args = ["--variant", "changchun", "--agents", "random", "random", "--hands", "1", "--workers", "0",
            "--db", str(db), "--no-report"]  # fmt: skip
    assert main(args) == 0
    logged = [(r.name, r.levelno, r.getMessage()) for r in caplog.records]
    deprecated = {(name, level) for name, level, message in logged if "--hands is deprecated" in message}
    assert deprecated == {("agents.tournament.cli", logging.WARNING)}
    plan = "changchun duplicate: random-1, random-2; 1 deals × 2 = 2 hands; database"
    assert any(n == "agents.tournament.cli" and m.startswith(plan) for n, _, m in logged)
    captured = capsys.readouterr()
    assert plan in captured.err and "--hands is deprecated" in captured.err  # shown on stderr as before
    assert "95% CI" in captured.out and plan not in captured.out
