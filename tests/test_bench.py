"""`mahjong-bench` (mahjong_env.tools.bench): argument errors and the RLCard comparison section.

Nothing here times anything: speeds are reported by the command, never asserted.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

from mahjong_env.tools import bench


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--hands", "-1"], "argument --hands: must be at least 1, got '-1'"),
        (["--hands", "x"], "argument --hands: must be an int, got 'x'"),
        (["--sections", "az"], "argument --sections: unknown section(s) 'z'; valid sections: a, b, c, d, r"),
        (["--sizes", "16,0"], "argument --sizes: must be positive ints separated by commas"),
        (["--seconds", "0"], "argument --seconds: must be at least 0.01"),
        (["--variant", "riichi"], "argument --variant: invalid choice: 'riichi'"),
    ],
)
def test_bad_arguments_are_one_line_errors(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        bench.main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("mahjong-bench: error: ") and message in err
    assert err.count("\n") == 1  # one line, no usage block


def test_rlcard_section_skips_without_rlcard(monkeypatch):
    monkeypatch.setitem(sys.modules, "rlcard", None)  # import rlcard raises ImportError
    assert bench.bench_rlcard("xinjiang", 2) == {"skipped": "RLCard is not installed (pip install -e '.[bench]')"}


def test_rlcard_section_runs_both_loops():
    pytest.importorskip("rlcard")
    row = bench.bench_rlcard("changchun", 2, rounds=2)
    assert row["hands"] == 2 and row["rlcard"]["hands"] == 2
    assert row["decisions"] > 0 and row["rlcard"]["decisions"] > 0
    assert row["ratio"] == pytest.approx(row["decisions_per_s"] / row["rlcard"]["decisions_per_s"])


def test_paired_ratio_is_the_geometric_mean_with_a_t_interval():
    from mahjong_env.tools.bench_compare import paired_ratio

    out = paired_ratio([2.0, 8.0], [1.0, 2.0])  # per-round ratios 2 and 4
    assert out["ratio"] == pytest.approx(8**0.5) and out["rounds"] == 2
    half = 12.706 * (math.log(4) - math.log(2)) / math.sqrt(2) / math.sqrt(2)  # t(1) * sd / sqrt(n)
    assert out["low"] == pytest.approx(8**0.5 * math.exp(-half))
    assert out["high"] == pytest.approx(8**0.5 * math.exp(half))
    assert paired_ratio([3.0], [2.0]) == {"ratio": pytest.approx(1.5), "low": None, "high": None, "rounds": 1}
    with pytest.raises(ValueError, match="same positive length"):
        paired_ratio([1.0], [1.0, 2.0])


def test_against_refuses_a_folder_that_is_not_a_checkout(tmp_path, capsys):
    assert bench.main(["--against", str(tmp_path), "--sections", "b"]) == 2
    assert f"--against '{tmp_path}' is not a checkout of this project" in capsys.readouterr().err
    (tmp_path / "mahjong_env").mkdir()
    (tmp_path / "mahjong_env" / "bench.py").write_text("")  # a bench, but no package to import
    assert bench.main(["--against", str(tmp_path), "--sections", "b"]) == 2
    assert f"a process in {tmp_path} imports mahjong_env from" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main(["--against", str(tmp_path), "--profile"])
    assert "--profile does not go with --against" in capsys.readouterr().err


def test_against_pairs_the_rounds_of_both_checkouts(tmp_path, capsys):
    root = Path(bench.__file__).resolve().parents[2]  # this checkout against itself
    out = tmp_path / "compare.json"
    argv = ["--against", str(root), "--rounds", "2", "--variant", "xinjiang", "--sections", "b", "--hands", "2"]
    assert bench.main([*argv, "--warmup-hands", "0", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert len(result["reports"]["this"]) == len(result["reports"]["other"]) == 2
    (row,) = result["rows"]
    assert row["section"] == "b. raw engine, no observations" and row["rounds"] == 2
    rates = [r["variants"]["xinjiang"][row["section"]]["cpu_decisions_per_s"] for r in result["reports"]["this"]]
    assert row["this"] == rates and row["low"] <= row["ratio"] <= row["high"]
    assert "b. raw engine, no observations" in capsys.readouterr().out


def test_interleave_runs_both_checkouts_in_one_process_and_restores_the_package(tmp_path):
    import mahjong_env
    from mahjong_env.adapters import vector

    root = Path(bench.__file__).resolve().parents[2]
    out = tmp_path / "interleaved.json"
    argv = ["--against", str(root), "--interleave", "--rounds", "2", "--variant", "changchun", "--sections", "c"]
    assert bench.main([*argv, "--sizes", "1", "--seconds", "0.05", "--warmup-hands", "0", "--json", str(out)]) == 0
    (row,) = json.loads(out.read_text())["rows"]
    assert row["section"] == "c. VectorMahjong N=1, 1 core, interleaved" and row["rounds"] == 2
    assert all(rate > 0 for rate in row["this"] + row["other"])
    assert sys.modules["mahjong_env"] is mahjong_env and sys.modules["mahjong_env.adapters.vector"] is vector


def test_interleave_needs_against_and_section_c(capsys):
    with pytest.raises(SystemExit):
        bench.main(["--interleave"])
    assert "--interleave needs --against CHECKOUT" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main(["--against", ".", "--interleave", "--sections", "ac"])
    assert "--interleave measures section c only" in capsys.readouterr().err


def test_agents_bench_times_every_built_in_agent_by_default(capsys):
    """``python -m agents.bench`` times what its help says: the heuristic, the random agent and,
    with PyTorch, each shipped checkpoint in the variant it was trained for."""
    import importlib.util

    from agents import bench as agents_bench

    rows = agents_bench.main(["--decisions", "1", "--variant", "both"])
    timed = {(row["agent"], row["variant"]) for row in rows}
    expected = {(agent, variant) for agent in ("heuristic", "random") for variant in ("xinjiang", "changchun")}
    if importlib.util.find_spec("torch") is not None:
        expected |= {(f"torch:{agents_bench.CHECKPOINTS / f'{v}.pt'}", v) for v in ("xinjiang", "changchun")}
    assert timed == expected
    assert all(row["decisions"] > 0 and row["ms_per_decision"] > 0 for row in rows)
    (given,) = agents_bench.main(["--decisions", "1", "--variant", "changchun", "--agents", "random"])
    assert (given["agent"], given["variant"]) == ("random", "changchun")
    assert "random" in capsys.readouterr().out
