"""Duplicate evaluation: agents play the same deals with the seats rotated.

Each deal (one seed: the same dealer, wall and dice) is replayed once per distinct rotation of
the line-up, so every agent meets the same tiles from every seat it can occupy and the luck of
the deal cancels out. With agents ``A, B`` the line-up is ``A B A B`` (two seatings), with
``A, B, C`` it is ``A B C A`` (four), with four agents each sits once in every seat.

    python -m training.evaluate --variant changchun --hands 400 \
        --agents ppo=torch:agents/checkpoints/changchun.pt heuristic=heuristic

The score of an agent is its mean points per hand per seat it holds; the 95% confidence
interval is a bootstrap over the per-deal means (the deals are independent; the seatings of
one deal are not). ``--hands`` counts hands (deals × seatings). For the 1-vs-3 gate of a
candidate against the heuristic, see `training.duplicate`.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

import agents as agent_registry
from training.duplicate import duplicate_match

__all__ = ["duplicate_eval", "format_table", "main"]


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
    **rule_overrides: Any,
) -> dict[str, dict[str, float]]:
    """Play about ``hands`` hands (whole deals × seatings) and score each agent, batched on
    `training.duplicate.duplicate_match` (a torch agent decides for every game in one pass).

    ``agent_specs`` maps a display name to an `agents.load` spec (one to four agents).
    Returns ``{name: {"mean", "ci95", "win_rate", "deals", "hands"}}``: mean points per hand,
    the 95% CI half-width (bootstrap over deals), the share of its hands it won, the deals
    played and the hands it sat.
    """
    names = list(agent_specs)
    if not 1 <= len(names) <= 4:
        raise ValueError(f"duplicate_eval plays one to four agents, got {len(names)}: {names}")
    if isinstance(hands, bool) or not isinstance(hands, int) or hands < 1:
        raise ValueError(f"hands must be a positive int, got {hands!r}")
    players = {name: agent_registry.load(spec, seed=seed + k) for k, (name, spec) in enumerate(agent_specs.items())}
    seatings = _seatings(names)
    deals = math.ceil(hands / len(seatings))
    result = duplicate_match(variant, players, seatings, deals, seed, **rule_overrides)
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


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="changchun", help="xinjiang or changchun")
    parser.add_argument(
        "--agents",
        nargs="+",
        default=["heuristic=heuristic", "random=random"],
        help="NAME=SPEC pairs, SPEC as agents.load takes it (random, heuristic, torch:PATH, module:Class)",
    )
    parser.add_argument("--hands", type=int, default=200, help="total hands to play (whole deals x seatings)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals")
    parser.add_argument(
        "--torch-threads",
        type=int,
        default=1,
        help="torch CPU threads (small batched networks: 1 is fastest on a shared CPU; 0 leaves torch's default)",
    )
    args = parser.parse_args(argv)
    if args.hands < 1:
        parser.error(f"--hands must be a positive int, got {args.hands}")
    if args.torch_threads < 0:
        parser.error(f"--torch-threads must be >= 0, got {args.torch_threads}")
    if args.torch_threads > 0:
        try:
            import torch
        except ImportError:  # no torch agents possible either
            pass
        else:
            torch.set_num_threads(args.torch_threads)
    specs = {}
    for item in args.agents:
        name, sep, spec = item.partition("=")
        if not sep:
            name, spec = item, item
        specs[name] = spec
    table = duplicate_eval(args.variant, specs, args.hands, args.seed)
    print(format_table(table))
    return table


if __name__ == "__main__":
    main()
