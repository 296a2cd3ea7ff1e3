"""Terminal play (`mahjong_env.play`, ``mahjong-env play``) driven by scripted input."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from mahjong_env import replay
from mahjong_env.play import parse_choice, play, settlement_text
from mahjong_env.records import read_jsonl
from mahjong_env.tiles import counts_of, format_counts, parse_tiles

LEGAL = ["discard 1m", "discard 5p", "ready 7z", "pong", "pass"]


@pytest.mark.parametrize(
    ("answer", "chosen", "message"),
    [
        ("0", "discard 1m", ""),
        (" 4 ", "pass", ""),
        ("discard 5p", "discard 5p", ""),
        ("Discard  5p", "discard 5p", ""),
        ("5p", "discard 5p", ""),
        ("PONG", "pong", ""),
        ("banana", None, "not a number or an action name"),
        ("5", None, "no action number 5"),
        ("-1", None, "no action number -1"),
        ("chow_low", None, "not legal now"),
        ("discard 9s", None, "not legal now"),
        ("9s", None, "not legal now"),
        ("", None, "type a number"),
    ],
)
def test_parse_choice(answer: str, chosen: str | None, message: str) -> None:
    name, why = parse_choice(answer, LEGAL)
    assert name == chosen
    assert message in why


def _prompts(text: str) -> int:
    return text.count("player_0> ")


def test_bad_input_is_refused_then_a_full_hand_is_played(tmp_path: Path) -> None:
    save = tmp_path / "games.jsonl"
    script = "banana\n999\nchow_low\n" + "0\n" * 600
    out = io.StringIO()
    record = play("changchun", seat=0, opponents="random", seed=11, save=save, stdin=io.StringIO(script), stdout=out)
    text = out.getvalue()
    assert "'banana' is not a number or an action name" in text
    assert "there is no action number 999" in text
    assert "'chow_low' is not legal now" in text
    # every refusal is followed by the same question again
    first = text.index("player_0> banana")
    assert text.index("player_0> 999", first) < text.index("player_0> chow_low", first) < text.index("player_0> 0", first)
    assert "=== hand 0 settlement 结算 ===" in text and "Hand over:" in text
    result = record["hands"][0]["result"]
    assert result is not None
    assert settlement_text(result, 0) in text
    saved = list(read_jsonl(save))
    assert saved == [json.loads(json.dumps(record))]
    assert replay(saved[0]) == [json.loads(json.dumps(result))]
    # the person's view only: the other seats' dealt hands are never printed
    words = set(text.split())
    dealt = record["hands"][0]["hands"]
    for other in (1, 2, 3):
        assert format_counts(counts_of(parse_tiles(dealt[other]))) not in words


def test_end_of_input_leaves_cleanly_and_saves_what_was_played(tmp_path: Path) -> None:
    save = tmp_path / "partial.jsonl"
    out = io.StringIO()
    record = play("xinjiang", seat=2, opponents="random", seed=4, hands=2, save=save, stdin=io.StringIO("0\n0\n"), stdout=out)
    text = out.getvalue()
    assert "leaving the game (end of input)" in text
    assert "the last hand is unfinished" in text
    assert record["hands"][0]["result"] is None
    assert replay(next(read_jsonl(save))) == []  # an unfinished hand replays without a result


def test_several_hands_against_the_heuristic() -> None:
    pytest.importorskip("agents.heuristic")
    out = io.StringIO()
    record = play("changchun", seat=1, opponents="heuristic", seed=2, hands=2, stdin=io.StringIO("0\n" * 600), stdout=out)
    text = out.getvalue()
    assert text.count("settlement 结算 ===") == 2 and "final points:" in text
    assert [h["result"] is not None for h in record["hands"]] == [True, True]


def test_command_line_play_with_scripted_stdin(tmp_path: Path) -> None:
    save = tmp_path / "cli.jsonl"
    command = [sys.executable, "-m", "mahjong_env.cli", "play", "--variant", "xinjiang", "--seat", "3"]
    command += ["--opponents", "random", "--seed", "5", "--save", str(save)]
    done = subprocess.run(command, input="nonsense\n" + "0\n" * 600, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "'nonsense' is not a number or an action name" in done.stdout
    assert "settlement" in done.stdout
    (record,) = read_jsonl(save)
    assert record["variant"] == "xinjiang_v0" and record["hands"][0]["result"] is not None
    # end of input at the first question: a clean exit too
    done = subprocess.run(command[:-2], input="", capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "end of input" in done.stdout


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError, match="variant"):
        play("riichi", stdin=io.StringIO(""), stdout=io.StringIO())
    with pytest.raises(ValueError, match="seat"):
        play("changchun", seat=4, stdin=io.StringIO(""), stdout=io.StringIO())
    with pytest.raises(ValueError, match="opponents"):
        play("changchun", opponents="random,random", stdin=io.StringIO(""), stdout=io.StringIO())
