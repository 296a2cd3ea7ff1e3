"""Duplicate evaluation: agents play the same deals with the seats rotated.

Each deal (one seed: the same dealer, wall and dice) is replayed once per distinct rotation of
the line-up, so every agent meets the same tiles from every seat it can occupy and the luck of
the deal cancels out. With agents ``A, B`` the line-up is ``A B A B`` (two seatings), with
``A, B, C`` it is ``A B C A`` (four), with four agents each sits once in every seat.

    python -m training.evaluate --variant changchun --hands 400 --agents shipped=torch:changchun heuristic=heuristic

The score of an agent is its mean points per hand per seat it holds; the 95% confidence
interval is a bootstrap over the per-deal means (the deals are independent; the seatings of
one deal are not). ``--hands`` counts hands (deals × seatings). For the 1-vs-3 gate of a
candidate against the heuristic, see `training.duplicate`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import agents as agent_registry
from training.cli import require, script_main
from training.duplicate import duplicate_match, load_agent

__all__ = ["Args", "check_args", "duplicate_eval", "format_table", "main"]


def _seatings(names: list[str]) -> list[tuple[str, ...]]:
    lineup = [names[i % len(names)] for i in range(4)]
    seen: list[tuple[str, ...]] = []
    for r in range(4):
        seating = tuple(lineup[(s + r) % 4] for s in range(4))
        if seating not in seen:
            seen.append(seating)
    return seen


def duplicate_eval(
    variant: str,
    agent_specs: dict[str, str],
    hands: int = 200,
    seed: int = 0,
    progress: bool = False,
    **rule_overrides: Any,
) -> dict[str, dict[str, float]]:
    """Play about ``hands`` hands (whole deals × seatings) and score each agent, batched on
    `training.duplicate.duplicate_match` (a torch agent decides for every game in one pass).

    ``agent_specs`` maps a display name to an `agents.load` spec (one to four agents).
    Returns ``{name: {"mean", "ci95", "win_rate", "deals", "hands"}}``: mean points per hand,
    the 95% CI half-width (bootstrap over deals), the share of its hands it won, the deals
    played and the hands it sat. An agent that cannot be built is a `training.cli.InputError`
    (a ValueError); ``progress`` shows a bar of the hands on a terminal.
    """
    names = list(agent_specs)
    if not 1 <= len(names) <= 4:
        raise ValueError(f"duplicate_eval plays one to four agents, got {len(names)}: {names}")
    if isinstance(hands, bool) or not isinstance(hands, int) or hands < 1:
        raise ValueError(f"hands must be a positive int, got {hands!r}")
    players = {
        name: load_agent(spec, seed + k, f"--agents {name}") for k, (name, spec) in enumerate(agent_specs.items())
    }
    seatings = _seatings(names)
    deals = math.ceil(hands / len(seatings))
    result = duplicate_match(variant, players, seatings, deals, seed, progress=progress, **rule_overrides)
    table = {}
    for name in names:
        low, high = result.ci(name)
        table[name] = {
            "mean": result.mean(name),
            "ci95": (high - low) / 2,
            "win_rate": result.wins[name] / max(result.seats_held[name], 1),
            "deals": deals,
            "hands": result.seats_held[name],
        }
    return table


def format_table(table: dict[str, dict[str, float]]) -> str:
    """The table as aligned text, best mean first."""
    rows = sorted(table.items(), key=lambda item: -item[1]["mean"])
    width = max(len(name) for name in table) + 2
    lines = [f"{'agent':<{width}}{'points/hand':>12}{'95% CI':>10}{'win rate':>10}{'hands':>8}"]
    for name, row in rows:
        lines.append(
            f"{name:<{width}}{row['mean']:>+12.3f}{'±' + format(row['ci95'], '.3f'):>10}"
            f"{row['win_rate']:>10.3f}{row['hands']:>8d}"
        )
    return "\n".join(lines)


@dataclass
class Args:
    """Duplicate evaluation of one to four agents: the same deals, every seat rotation of the line-up;
    prints each agent's points per hand with a 95% interval over deals."""

    variant: Literal["xinjiang", "changchun"] = "changchun"
    """rule set"""
    agents: tuple[str, ...] = ("heuristic=heuristic", "random=random")
    """NAME=SPEC pairs (or bare SPECs), SPEC as agents.load takes it: random, heuristic, torch:changchun,
    torch:PATH.pt, module:Class"""
    hands: int = 200
    """total hands to play (whole deals x seatings)"""
    seed: int = 0
    """seed of the deals"""
    torch_threads: int = 1
    """torch CPU threads (small batched networks: 1 is fastest on a shared CPU; 0 leaves torch's default)"""
    progress: bool = True
    """show a progress bar of the hands (only when stderr is a terminal)"""


def _specs(items: tuple[str, ...]) -> dict[str, str]:
    specs = {}
    for item in items:
        name, sep, spec = item.partition("=")
        specs[name if sep else item] = spec if sep else item
    return specs


def check_args(args: Args) -> None:
    """The flag values and the spelling of the agent specs (ValueError naming the flag)."""
    require(args.hands >= 1, f"--hands must be a positive int, got {args.hands}")
    require(args.torch_threads >= 0, f"--torch-threads must be >= 0, got {args.torch_threads}")
    specs = _specs(args.agents)
    require(1 <= len(specs) <= 4, f"--agents takes one to four distinct NAME=SPEC entrants, got {len(specs)}")
    for name, spec in specs.items():
        try:
            agent_registry.parse_spec(spec)
        except ValueError as error:
            raise ValueError(f"--agents {name}: {error}") from None


def run(args: Args) -> dict[str, dict[str, float]]:
    """Build the agents (`training.cli.InputError` if one cannot be built), then play."""
    if args.torch_threads > 0:
        try:
            import torch
        except ImportError:  # no torch agents possible either
            pass
        else:
            torch.set_num_threads(args.torch_threads)
    return duplicate_eval(args.variant, _specs(args.agents), args.hands, args.seed, progress=args.progress)


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    """The command line: the table on stdout."""
    return script_main("python -m training.evaluate", Args, check_args, run, argv, show=format_table)


if __name__ == "__main__":
    main()
