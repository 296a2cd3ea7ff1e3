"""Terminal play (`mahjong_env.tools.play`, ``mahjong-env play``) driven by scripted input."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from mahjong_env import replay
from mahjong_env.tiles import counts_of, format_counts, parse_tiles
from mahjong_env.tools.play import parse_choice, play, settlement_text
from mahjong_env.tools.records import read_jsonl

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
    assert (
        text.index("player_0> 999", first) < text.index("player_0> chow_low", first) < text.index("player_0> 0", first)
    )
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
    record = play(
        "xinjiang", seat=2, opponents="random", seed=4, hands=2, save=save, stdin=io.StringIO("0\n0\n"), stdout=out
    )
    text = out.getvalue()
    assert "leaving the game (end of input)" in text
    assert "the last hand is unfinished" in text
    assert record["hands"][0]["result"] is None
    assert replay(next(read_jsonl(save))) == []  # an unfinished hand replays without a result


def test_several_hands_against_the_heuristic() -> None:
    pytest.importorskip("agents.heuristic")
    out = io.StringIO()
    record = play(
        "changchun", seat=1, opponents="heuristic", seed=2, hands=2, stdin=io.StringIO("0\n" * 600), stdout=out
    )
    text = out.getvalue()
    assert text.count("settlement 结算 ===") == 2 and "final points:" in text
    assert [h["result"] is not None for h in record["hands"]] == [True, True]


def test_command_line_play_with_scripted_stdin(tmp_path: Path) -> None:
    save = tmp_path / "cli.jsonl"
    command = [sys.executable, "-m", "mahjong_env.tools.cli", "play", "--variant", "xinjiang", "--seat", "3"]
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


class _Scripted:
    """stdin that answers the question the player was just asked: the first legal action to
    "player_N> ", and ``pause`` to the between-hands prompt."""

    def __init__(self, out: io.StringIO, pause: str) -> None:
        self.out = out
        self.pause = pause
        self.pauses = 0

    def readline(self) -> str:
        if self.out.getvalue().endswith("('quit' leaves): "):
            self.pauses += 1
            return self.pause + "\n"
        return "0\n"


def test_a_match_pauses_after_each_settlement() -> None:
    out = io.StringIO()
    stdin = _Scripted(out, "")
    record = play("changchun", seat=0, opponents="random", seed=3, hands=3, stdin=stdin, stdout=out)  # type: ignore[arg-type]
    text = out.getvalue()
    assert stdin.pauses == 2 and len(record["hands"]) == 3 and record["num_hands"] == 3
    for h in (0, 1):
        settled = text.index(f"=== hand {h} settlement")
        pause = text.index(f"Press Enter for hand {h + 1} of 3", settled)
        assert pause < text.index(f"=== hand {h + 1} settlement")
    assert "Press Enter for hand 3" not in text  # the last hand: the match is over

    out = io.StringIO()
    record = play("xinjiang", seat=1, opponents="random", seed=3, hands=2, stdin=_Scripted(out, "quit"), stdout=out)  # type: ignore[arg-type]
    assert "leaving the game (quit)" in out.getvalue()
    assert record["hands"][0]["result"] is not None and record["hands"][1]["actions"] == []


def test_payment_reasons_print_once() -> None:
    result = {
        "outcome": "win",
        "winner": 1,
        "method": "bao_draw",
        "tile": "5m",
        "fans": [["mobao", 2]],
        "total_fan": 2,
        "deltas": [-2.0, 6.0, -2.0, -2.0],
        "kong_deltas": [0.0] * 4,
        "dealer": 0,
        "next_dealer": 1,
        "payments": [{"from": s, "to": 1, "points": 2.0, "reason": "bao_draw"} for s in (0, 2, 3)]
        + [{"from": 0, "to": 1, "points": 0.0, "reason": "made_up_reason"}],
    }
    text = settlement_text(result, 1)
    assert "player_0 pays player_1 2 (摸宝 bao draw)" in text
    assert "bao_draw bao_draw" not in text and "bao draw bao draw" not in text
    assert "(made_up_reason)" in text


def test_kong_payments_are_told_when_the_kong_stands() -> None:
    from scenario import act, deal

    from mahjong_env import changchun_v0, xinjiang_v0
    from mahjong_env.tools.html_replay import Narrator

    # Changchun 旋风杠 (C6) on the dealer's first turn; Xinjiang concealed kong (刮风下雨, X7)
    cases = [
        (lambda: deal(changchun_v0, ["1234z5z123m456p78s9s", None, None, None], dealer=0), "special_winds"),
        (lambda: deal(xinjiang_v0, ["8888p123m456s1z2z3z4z", None, None, None], tail="1s"), "concealed_kong 8p"),
    ]
    for make, action in cases:
        for seat in (None, 0, 2):  # the full table, the konger, another player: payments are public
            env = make()
            narrator = Narrator(seat, bool(env.config.concealed_kong_visible))
            narrator.start(env.game)
            before = env.game.scores[0]
            act(env, f"player_0: {action}")
            gained = env.game.scores[0] - before
            assert gained > 0
            told = [line for line in narrator.step(env.game, 0, action) if "for the kong" in line]
            assert len(told) == 1 and told[0].startswith(f"player_0 receives {gained:g} point(s)"), told


def test_play_takes_a_rule_profile(tmp_path: Path) -> None:
    """C14: `mahjong-env play --profile mil2024` plays the MIL rules (the record holds the resolved fields)."""
    save = tmp_path / "mil.jsonl"
    command = [sys.executable, "-m", "mahjong_env.tools.cli", "play", "--variant", "changchun", "--profile", "mil2024"]
    command += ["--opponents", "random", "--seed", "3", "--save", str(save)]
    done = subprocess.run(command, input="0\n" * 600, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    (record,) = read_jsonl(save)
    assert record["config"]["bao_dice"] == 1 and record["config"]["discard_all_pay"] is True
    done = subprocess.run(command[:6] + ["--profile", "mil2023"], input="", capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "mil2024" in done.stderr


def test_a_saved_record_names_the_players_and_the_header_the_rules(tmp_path: Path) -> None:
    """Issue 24: ``play --save`` records carry ``players`` (the replay shows who sat where) and
    the header says which rule profile is played."""
    from mahjong_env.tools.html_replay import replay_frames

    save = tmp_path / "named.jsonl"
    out = io.StringIO()
    record = play(
        "xinjiang", seat=2, opponents="random,heuristic,random", seed=7, save=save, stdin=io.StringIO("0\n" * 600),
        stdout=out,
    )  # fmt: skip
    # the opponents sit after the person in turn order: seat 3, then 0, then 1
    assert record["players"] == ["heuristic", "random", "human", "random"]
    (saved,) = read_jsonl(save)
    assert saved["players"] == record["players"] and replay(saved) == [saved["hands"][0]["result"]]
    assert replay_frames(saved)["meta"]["players"] == record["players"]
    assert "1 hand(s); rules: profile seed (the defaults)\n" in out.getvalue()
    out = io.StringIO()
    play("changchun", opponents="random", seed=3, profile="mil2024", stdin=io.StringIO(""), stdout=out)
    assert "rules: profile mil2024\n" in out.getvalue()
