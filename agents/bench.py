"""Agent speed: milliseconds per decision of the baseline agents, in self-play.

    python -m agents.bench                      # heuristic, both variants
    python -m agents.bench --agents heuristic torch:agents/checkpoints/changchun.pt --variant changchun

Four copies of the agent play batched games (`mahjong_env.adapters.vector.VectorMahjong`); the time
inside ``act_batch`` is measured per decision, over every decision and over the decisions with
more than one legal action (forced moves are answered at once). One torch thread.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import agents as agent_registry
from mahjong_env.adapters.vector import VectorMahjong

__all__ = ["measure", "main"]


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
    parser.add_argument("--agents", nargs="+", default=["heuristic"], help="agents.load specs")
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
    print(f"{'agent':<44}{'variant':<11}{'ms/decision':>12}{'ms/choice':>11}{'decisions':>11}")
    for spec in args.agents:
        trained_for = getattr(agent_registry.load(spec), "variant", None)  # a checkpoint plays its own variant
        for variant in variants:
            if trained_for is not None and variant not in (trained_for, f"{trained_for}_v0") and args.variant == "both":
                continue
            r = measure(spec, variant, args.decisions, seed=args.seed)
            rows.append({"agent": spec, "variant": variant, **r})
            print(
                f"{spec:<44}{variant:<11}{r['ms_per_decision']:>12.3f}{r['ms_per_choice']:>11.3f}{r['decisions']:>11,}"
            )
    return rows


if __name__ == "__main__":
    main()
