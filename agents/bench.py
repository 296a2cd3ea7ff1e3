"""Agent speed: milliseconds per decision of the baseline agents, in self-play.

    python -m agents.bench                      # every built-in agent, both variants
    python -m agents.bench --agents heuristic torch:agents/checkpoints/changchun.pt --variant changchun

By default every built-in agent is timed (`default_specs`): the heuristic, the random agent
and, when PyTorch is installed, each shipped checkpoint (``agents/checkpoints/*.pt``) in the
variant it was trained for. Four copies of the agent play batched games
(`mahjong_env.adapters.vector.VectorMahjong`); the time inside ``act_batch`` is measured per
decision, over every decision and over the decisions with more than one legal action (forced
moves are answered at once). One torch thread.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from pathlib import Path

import numpy as np

import agents as agent_registry
from mahjong_env.adapters.vector import VectorMahjong

__all__ = ["default_specs", "measure", "main"]

CHECKPOINTS = Path(__file__).resolve().parent / "checkpoints"
"""The shipped checkpoints (package data)."""


def default_specs() -> list[str]:
    """Every built-in agent: ``heuristic`` (first: it warms the hand tables the networks share),
    ``random`` and, with PyTorch installed, ``torch:`` each shipped checkpoint."""
    specs = ["heuristic", "random"]
    if importlib.util.find_spec("torch") is not None:
        specs += [f"torch:{path}" for path in sorted(CHECKPOINTS.glob("*.pt"))]
    return specs


def measure(spec: str, variant: str, decisions: int, num_envs: int = 16, seed: int = 0) -> dict[str, float]:
    """``{"ms_per_decision", "ms_per_choice", "decisions", "choices"}`` of agent ``spec``."""
    agent = agent_registry.load(spec, seed=seed)
    venv = VectorMahjong(variant, num_envs, seed=seed)
    obs, masks, _ = venv.reset()
    config = venv.config.to_dict()
    name = venv.variant.removesuffix("_v0")
    spent, done, choices = 0.0, 0, 0
    while done < decisions:
        infos = [{"view": v, "variant": name, "config": config} for v in venv.views()]
        observations = [{"observation": obs[i], "action_mask": masks[i]} for i in range(num_envs)]
        choices += int((masks.sum(axis=1) > 1).sum())
        start = time.perf_counter()
        actions = agent.act_batch(observations, infos)
        spent += time.perf_counter() - start
        done += num_envs
        obs, masks, _, _, _, _ = venv.step(np.asarray(actions))
    return {
        "ms_per_decision": 1000 * spent / done,
        "ms_per_choice": 1000 * spent / max(choices, 1),
        "decisions": done,
        "choices": choices,
    }


def main(argv: list[str] | None = None) -> list[dict[str, object]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--agents",
        nargs="+",
        default=None,
        help="agents.load specs (default: every built-in agent: heuristic, random and, with PyTorch, the shipped "
        "checkpoints, each in the variant it was trained for)",
    )
    parser.add_argument("--variant", default="both", choices=["xinjiang", "changchun", "both"])
    parser.add_argument("--decisions", type=int, default=20_000, help="decisions to time per agent and variant")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.decisions < 1:
        parser.error(f"--decisions must be a positive int, got {args.decisions}")
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        pass
    variants = ["xinjiang", "changchun"] if args.variant == "both" else [args.variant]
    rows = []
    defaults = args.agents is None
    specs = default_specs() if defaults else args.agents
    width = max(44, max(len(spec) for spec in specs) + 2)
    print(f"{'agent':<{width}}{'variant':<11}{'ms/decision':>12}{'ms/choice':>11}{'decisions':>11}")
    for spec in specs:
        trained_for = getattr(agent_registry.load(spec), "variant", None)  # a checkpoint plays its own variant
        for variant in variants:
            own = trained_for is None or variant in (trained_for, f"{trained_for}_v0")
            if not own and (defaults or args.variant == "both"):
                continue
            r = measure(spec, variant, args.decisions, seed=args.seed)
            rows.append({"agent": spec, "variant": variant, **r})
            print(
                f"{spec:<{width}}{variant:<11}{r['ms_per_decision']:>12.3f}{r['ms_per_choice']:>11.3f}"
                f"{r['decisions']:>11,}"
            )
    return rows


if __name__ == "__main__":
    main()
