"""Terminal play: a person plays one seat against agents (``mahjong-env play``).

Each time the person decides, the table is drawn as that player sees it
(`raw_env.render_view`, RULES.md R13), preceded by what happened since the last decision in
words (only what that player saw: `mahjong_env.tools.html_replay.Narrator`), and the legal actions
are listed by number and name. An answer is a number, an action name (``discard 5m``,
``pong``), or a bare tile (``5m``, short for ``discard 5m``); anything else is refused with a
message saying why, and the question is asked again. ``help`` redraws the table, ``quit`` (or
the end of input) leaves the game. After every hand the settlement is printed (every payment
once, with its reason; a kong's payments are also told when the kong stands); in a match of
several hands the next hand waits for Enter. The header names the opponents and the rule
profile played. With ``save`` the game record is appended to a JSON Lines file (API.md "Game
records"), also when the person leaves early (the record then ends mid-hand and still
replays); its ``players`` name the seats (`HUMAN` for the person, the agent spec for the
others), so a replay of it shows who sat where.

`play` reads from and writes to the streams it is given, so tests drive it with
``io.StringIO``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, TextIO

from mahjong_env import actions as A
from mahjong_env.adapters.policies import build_policy, decision_info
from mahjong_env.rules.base import DEFAULT_PROFILE
from mahjong_env.tiles import TILE_NAMES
from mahjong_env.tools.html_replay import FAN_TERMS, Narrator, describe_result, fan_cap_note, reason_text
from mahjong_env.tools.records import write_jsonl
from mahjong_env.variants import get_variant, variant_names

__all__ = ["HUMAN", "VARIANTS", "play", "settlement_text", "parse_choice"]

VARIANTS = tuple(sorted(variant_names()))  # the registry's (mahjong_env.variants)
HUMAN = "human"
"""The person's name in a saved record's ``players``."""
_QUIT = {"q", "quit", "exit"}
_HELP = {"?", "h", "help"}


def _env_module(variant: str) -> Any:
    return get_variant(variant).env_module  # "changchun" or "changchun_v0"


def _opponent_specs(opponents: str) -> list[str]:
    specs = [s.strip() for s in opponents.split(",")]
    if len(specs) == 1:
        return specs * 3
    if len(specs) != 3 or not all(specs):
        raise ValueError(f"opponents must be one agent spec or three separated by commas, got {opponents!r}")
    return specs


def parse_choice(text: str, legal: list[str]) -> tuple[str | None, str]:
    """Read one answer against the legal action names: ``(name, "")`` when it names a legal
    action, else ``(None, message)`` saying what is wrong."""
    answer = " ".join(text.strip().split())
    if not answer:
        return None, f"type a number 0-{len(legal) - 1} or an action name"
    if answer.lstrip("-").isdigit():
        number = int(answer)
        if 0 <= number < len(legal):
            return legal[number], ""
        return None, f"there is no action number {number}: choose a number 0-{len(legal) - 1}"
    name = answer.lower() if answer[-1:] not in "mpsz" else answer[:-1].lower() + answer[-1]
    if name in TILE_NAMES:
        name = f"discard {name}"
    if name in legal:
        return name, ""
    try:
        A.action_id(name)
    except ValueError:
        return None, f"{answer!r} is not a number or an action name (e.g. '0' or '{legal[0]}')"
    return None, f"{name!r} is not legal now; legal actions: {', '.join(legal)}"


def settlement_text(result: dict[str, Any], seat: int | None = None, config: Any = None) -> str:
    """The settlement of one hand as text: outcome, fans (with the cap, given the rule
    ``config``), points per seat, every payment."""
    lines = [describe_result(result)]
    if result.get("fans"):
        fans = ", ".join(f"{name} {FAN_TERMS.get(name, (name, ''))[0]} {value}" for name, value in result["fans"])
        note = fan_cap_note(result, config) if config is not None else None
        lines.append(f"  fans 番: {fans} (total {result['total_fan']}{'; ' + note if note else ''})")
    if result.get("payer_fans"):
        lines.append("  fan per payer: " + ", ".join("-" if f is None else str(f) for f in result["payer_fans"]))
    lines.append(f"  {'seat':<12}{'hand':>8}{'kongs':>8}{'total':>8}")
    for s in range(4):
        hand, kongs = result["deltas"][s], result["kong_deltas"][s]
        mark = "  (you)" if s == seat else ""
        lines.append(f"  player_{s:<5}{hand:>+8g}{kongs:>+8g}{hand + kongs:>+8g}{mark}")
    for p in result.get("payments", []):
        lines.append(f"  player_{p['from']} pays player_{p['to']} {p['points']:g} ({reason_text(p['reason'])})")
    lines.append(f"  next dealer 庄: player_{result['next_dealer']}")
    return "\n".join(lines)


class _Quit(Exception):  # noqa: N818 - the person leaving, not an error
    """The person left (quit or end of input)."""


def _read_line(stdin: TextIO, out: TextIO, prompt: str) -> str:
    """One line from the person after ``prompt`` (echoed when not a terminal); quitting words,
    an interrupt or the end of input leave the game."""
    out.write(prompt)
    out.flush()
    try:
        line = stdin.readline()
    except KeyboardInterrupt:
        out.write("\n")
        raise _Quit("interrupted") from None
    if not line:
        out.write("\n")
        raise _Quit("end of input")
    if not _interactive(stdin):
        out.write(line if line.endswith("\n") else line + "\n")
    if line.strip().lower() in _QUIT:
        raise _Quit("quit")
    return line


def _ask(raw: Any, agent: str, seat: int, stdin: TextIO, out: TextIO) -> int:
    legal = raw.legal_actions(agent)
    _show(raw, agent, legal, out)
    while True:
        line = _read_line(stdin, out, f"player_{seat}> ")
        if line.strip().lower() in _HELP:
            _show(raw, agent, legal, out)
            continue
        name, message = parse_choice(line, legal)
        if name is not None:
            return A.action_id(name)
        out.write(f"  {message}\n")


def _pause(stdin: TextIO, out: TextIO, prompt: str) -> None:
    """Wait for the person between the hands of a match (any line goes on, 'quit' leaves)."""
    _read_line(stdin, out, prompt)


def _interactive(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def _show(raw: Any, agent: str, legal: list[str], out: TextIO) -> None:
    out.write("\n" + raw.render_view(agent) + "\n")
    out.write("Your choices (number or name; 'help' redraws, 'quit' leaves):\n")
    width = max(len(name) for name in legal)
    cells = [f"{i:>3}: {name:<{width}}" for i, name in enumerate(legal)]
    per_line = max(1, 78 // (width + 6))
    for i in range(0, len(cells), per_line):
        out.write("  ".join(cells[i : i + per_line]).rstrip() + "\n")


def play(
    variant: str = "changchun",
    seat: int = 0,
    opponents: str = "heuristic",
    seed: int | None = None,
    hands: int = 1,
    save: str | Path | None = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    profile: str = "seed",
) -> dict[str, Any]:
    """Play ``hands`` hands (one match of ``num_hands=hands``) of ``variant`` as
    ``player_{seat}`` against ``opponents``: a policy spec registered in the
    ``mahjong_env.policies`` entry-point group (``random``, ``heuristic``, ``torch:ckpt.pt``,
    see `mahjong_env.adapters.policies`), or three separated by commas for the seats after yours in order.
    ``profile`` names the rule profile (``"seed"``, or ``"mil2024"`` for Changchun, RULES.md C14).
    Returns the game record (saved to ``save`` if given), also when the person quits early."""
    stdin = stdin if stdin is not None else sys.stdin
    out = stdout if stdout is not None else sys.stdout
    if isinstance(seat, bool) or seat not in (0, 1, 2, 3):
        raise ValueError(f"seat must be 0-3, got {seat!r}")
    module = _env_module(variant)
    specs = _opponent_specs(opponents)
    base_seed = seed if seed is not None else 0
    bots = {}
    for i, spec in enumerate(specs):
        other = (seat + 1 + i) % 4
        bots[other] = build_policy(spec, base_seed * 4 + other)
    env = module.env(num_hands=hands, profile=profile)
    env.reset(seed=seed)
    raw = env.unwrapped
    me = f"player_{seat}"
    narrator = Narrator(seat, bool(raw.config.concealed_kong_visible))
    narrator.start(raw.game)
    players = [HUMAN] * 4
    for i in range(3):
        players[(seat + 1 + i) % 4] = specs[i]
    rules = f"{profile} (the defaults)" if profile == DEFAULT_PROFILE else profile
    out.write(
        f"{raw.metadata['name']}: you are {me}; opponents "
        + ", ".join(f"player_{s} {specs[i]}" for i, s in enumerate(sorted(bots, key=lambda s: (s - seat) % 4)))
        + f"; {hands} hand(s); rules: profile {rules}\n"
    )
    for bot in bots.values():
        bot.reset()
    log: list[str] = []
    results: list[dict[str, Any]] = []
    quit_reason = None
    try:
        for agent in env.agent_iter():
            observation, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
                continue
            actor = int(agent.rsplit("_", 1)[1])
            if actor == seat:
                for line in log:
                    out.write(f"  · {line}\n")
                log.clear()
                action = _ask(raw, agent, seat, stdin, out)
            else:
                action = bots[actor].act(observation, decision_info(env, agent))
            name = A.action_name(action)
            env.step(action)
            result = env.infos[agent].get("result")  # set only on the step that ends a hand
            if result is not None:
                log.extend(narrator.end(actor, name))
                for line in log:
                    out.write(f"  · {line}\n")
                log.clear()
                results.append(result)
                out.write(
                    f"\n=== hand {len(results) - 1} settlement 结算 ===\n{settlement_text(result, seat, raw.config)}\n"
                )
                if not raw.game.over:  # a match: the next hand waits for the person
                    _pause(stdin, out, f"Press Enter for hand {len(results)} of {hands} ('quit' leaves): ")
                narrator.start(raw.game)
                for bot in bots.values():
                    bot.reset()
            else:
                log.extend(narrator.step(raw.game, actor, name))
    except _Quit as stop:
        quit_reason = str(stop)
        out.write(f"leaving the game ({quit_reason})\n")
    record = raw.record()
    record["players"] = players
    out.write(f"seed {record['seed']} (play the same deal again with --seed {record['seed']})\n")
    if results:
        totals = [sum(r["deltas"][s] + r["kong_deltas"][s] for r in results) for s in range(4)]
        out.write("final points: " + ", ".join(f"player_{s} {t:+g}" for s, t in enumerate(totals)) + "\n")
    if save is not None:
        write_jsonl(save, [record])
        out.write(f"record saved to {save}" + (" (the last hand is unfinished)" if quit_reason else "") + "\n")
    return record
