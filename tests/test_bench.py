"""`mahjong-bench` (mahjong_env.tools.bench): argument errors and the RLCard comparison section.

Nothing here times anything: speeds are reported by the command, never asserted.
"""

from __future__ import annotations

import sys

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
