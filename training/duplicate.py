"""Batched duplicate evaluation: the gate every strength claim and every checkpoint passes.

Agents play the same deals with the seats rotated, many games at once on
`mahjong_env.adapters.vector.VectorMahjong`, so a network decides for every game in one forward pass.

- ``1v3``: a candidate against three copies of a baseline; each deal is played four times,
  the candidate in each seat in turn. Hands are zero-sum, so the candidate's mean points per
  hand is also its paired advantage over the baseline in the same seats of the same deals
  (the baseline's four-copy table scores zero by symmetry).
- ``4agent``: four entrants, each deal played in the four rotations of the line-up.

A deal is one seed (dealer, walls, dice): game ``g`` of the batch holds one seating and
plays the deals ``(env_id, episode)`` of `mahjong_env.adapters.vector.episode_seed`, where every
seating of a deal shares the env id. The confidence intervals are bootstrap intervals over
deals (the deals are independent, the seatings of one deal are not): the expanded-percentile
intervals of the tournament (`agents.tournament.stats.bootstrap_ratio`, by `scipy.stats.bootstrap`).

    python -m training.duplicate --variant changchun --deals 750 --candidate torch:changchun --baseline heuristic
    python -m training.duplicate --variant changchun --deals 750 --candidate torch:runs/changchun_bc.pt

Changchun's points per hand have a standard deviation of about 26: 3,000 hands (750 deals
1-vs-3) give an interval of roughly ±1; claims of strength need at least that many.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import tyro

import agents as agent_registry
from agents.base import Agent
from mahjong_env.adapters.vector import VectorMahjong
from training.cli import InputError, progress_bar, require, script_main
from training.rollout import decision_infos

__all__ = [
    "Args",
    "DuplicateResult",
    "bootstrap_ci",
    "check_args",
    "duplicate_match",
    "four_agents",
    "gate_checkpoint",
    "load_agent",
    "main",
    "one_vs_three",
]


def bootstrap_ci(values: np.ndarray, seed: int = 0, resamples: int = 10_000) -> tuple[float, float]:
    """95% bootstrap interval of the mean of ``values`` (one value per deal): the tournament's
    expanded-percentile interval (`agents.tournament.stats.bootstrap_ratio`); NaN below 2 values."""
    from agents.tournament.stats import bootstrap_ratio

    values = np.asarray(values, np.float64)
    _, low, high = bootstrap_ratio(values, np.ones_like(values), resamples=resamples, seed=seed)
    return float(low[0]), float(high[0])


def load_agent(spec: str, seed: int | None, flag: str) -> Agent:
    """`agents.load` for a command line: `InputError` naming ``flag`` when the agent cannot be built."""
    try:
        return agent_registry.load(spec, seed=seed)
    except ValueError as error:
        raise InputError(f"{flag}: {error}") from None


@dataclass
class DuplicateResult:
    """Per-deal points of every entrant and the hands' outcomes."""

    names: list[str]
    seatings: list[tuple[str, ...]]
    per_deal: dict[str, np.ndarray]
    """entrant -> (deals,) mean points per hand over the seats it held in that deal"""
    hands: int
    wins: dict[str, int]
    deal_ins: dict[str, int]
    seats_held: dict[str, int]
    seconds: float
    decisions: int
    extra: dict[str, Any] = field(default_factory=dict)

    def mean(self, name: str) -> float:
        return float(self.per_deal[name].mean())

    def ci(self, name: str) -> tuple[float, float]:
        return bootstrap_ci(self.per_deal[name])

    def difference(self, a: str, b: str) -> tuple[float, tuple[float, float]]:
        """Paired difference of mean points per hand, a - b, with its bootstrap interval."""
        diff = self.per_deal[a] - self.per_deal[b]
        return float(diff.mean()), bootstrap_ci(diff)

    def table(self) -> str:
        lines = [
            f"{self.hands} hands ({len(next(iter(self.per_deal.values())))} deals x {len(self.seatings)} seatings), "
            f"{self.decisions / max(self.seconds, 1e-9):,.0f} decisions/s"
        ]
        lines.append(f"{'agent':<16}{'points/hand':>12}{'95% CI':>20}{'win':>8}{'deal-in':>9}")
        for name in sorted(self.names, key=lambda n: -self.mean(n)):
            low, high = self.ci(name)
            held = max(self.seats_held[name], 1)
            lines.append(
                f"{name:<16}{self.mean(name):>+12.3f}{f'[{low:+.3f}, {high:+.3f}]':>20}"
                f"{self.wins[name] / held:>8.3f}{self.deal_ins[name] / held:>9.3f}"
            )
        if len(self.names) > 2:  # four-agent tables: the paired differences that say who is better
            lines.append("paired differences (points/hand, 95% CI over deals):")
            for i, a in enumerate(self.names):
                for b in self.names[i + 1 :]:
                    diff, (low, high) = self.difference(a, b)
                    lines.append(f"  {a} - {b}: {diff:+.3f} [{low:+.3f}, {high:+.3f}]")
        return "\n".join(lines)


def duplicate_match(
    variant: str,
    entrants: dict[str, Agent],
    seatings: list[tuple[str, ...]],
    deals: int,
    seed: int = 0,
    deals_per_batch: int = 16,
    progress: bool = False,
    **rule_overrides: Any,
) -> DuplicateResult:
    """Play ``deals`` deals, each once per seating (a tuple of four entrant names); ``progress``
    shows a bar of the hands played on a terminal (`training.cli.progress_bar`)."""
    if deals < 1:
        raise ValueError(f"deals must be a positive int, got {deals!r}")
    names = list(entrants)
    for seating in seatings:
        if len(seating) != 4 or any(n not in entrants for n in seating):
            raise ValueError(f"a seating names four entrants of {names}, got {seating!r}")
    block = max(1, min(deals_per_batch, deals))
    rounds = math.ceil(deals / block)
    env_ids = [d for d in range(block) for _ in seatings]
    table_of = [j for _ in range(block) for j in range(len(seatings))]
    n = len(env_ids)
    venv = VectorMahjong(variant, n, seed=seed, env_ids=env_ids, **rule_overrides)
    obs, masks, seats = venv.reset()
    for agent in entrants.values():
        agent.reset()
    scores = np.zeros((n, 4))
    done_episodes = [0] * n
    points = np.full((block, rounds, len(seatings), 4), np.nan)
    wins = {name: 0 for name in names}
    deal_ins = {name: 0 for name in names}
    seats_held = {name: 0 for name in names}
    needs_info = {name: getattr(agent, "needs_info", True) for name, agent in entrants.items()}
    start, decisions = time.time(), 0
    bar = progress_bar(deals * len(seatings), f"duplicate {variant}", progress, unit="hand")
    while min(done_episodes) < rounds:
        actions = np.zeros(n, np.int64)
        by_agent: dict[str, list[int]] = {}
        for g in range(n):
            by_agent.setdefault(seatings[table_of[g]][seats[g]], []).append(g)
        for name, rows in by_agent.items():
            infos = decision_infos(venv, rows) if needs_info[name] else [None] * len(rows)
            observations = [{"observation": obs[g], "action_mask": masks[g]} for g in rows]
            actions[rows] = entrants[name].act_batch(observations, infos)
        obs, masks, seats, rewards, dones, infos = venv.step(actions)
        decisions += n
        scores += rewards
        for g in np.flatnonzero(dones):
            k = done_episodes[g]
            if k < rounds:
                d, j = env_ids[g], table_of[g]
                if d * rounds + k < deals:  # the deal's row of `flat` below
                    bar.update(1)
                points[d, k, j] = scores[g]
                result = infos[g]["result"]
                winner = result.get("winner")
                for s, name in enumerate(seatings[j]):
                    seats_held[name] += 1
                    wins[name] += winner == s
                if result.get("method") == "discard":
                    payers = {p["from"] for p in result.get("payments", []) if p.get("reason") == "discard"}
                    for s in payers:
                        deal_ins[seatings[j][s]] += 1
            done_episodes[g] += 1
            scores[g] = 0.0
    bar.close()
    seconds = time.time() - start
    flat = points.reshape(block * rounds, len(seatings), 4)[:deals]
    per_deal = {}
    for name in names:
        cells = [(j, s) for j, seating in enumerate(seatings) for s, who in enumerate(seating) if who == name]
        per_deal[name] = np.mean([flat[:, j, s] for j, s in cells], axis=0)
    return DuplicateResult(
        names, seatings, per_deal, deals * len(seatings), wins, deal_ins, seats_held, seconds, decisions
    )


def one_vs_three(
    variant: str, candidate: Agent, baseline: Agent, deals: int, seed: int = 0, **kw: Any
) -> DuplicateResult:
    """The candidate in each seat in turn, three copies of the baseline in the others."""
    seatings = [tuple("candidate" if s == j else "baseline" for s in range(4)) for j in range(4)]
    return duplicate_match(variant, {"candidate": candidate, "baseline": baseline}, seatings, deals, seed, **kw)


def gate_checkpoint(variant: str, path: str | Path, deals: int, seed: int = 0, **kw: Any) -> DuplicateResult:
    """The checkpoint gate: the network at ``path`` (on CPU) 1-vs-3 against the heuristic."""
    from agents.heuristic import HeuristicAgent
    from agents.torch_agent import TorchAgent

    return one_vs_three(variant, TorchAgent.from_checkpoint(path, device="cpu"), HeuristicAgent(), deals, seed, **kw)


def four_agents(variant: str, entrants: dict[str, Agent], deals: int, seed: int = 0, **kw: Any) -> DuplicateResult:
    """Four entrants (or fewer, repeated), each deal played in the four rotations."""
    names = list(entrants)
    lineup = [names[i % len(names)] for i in range(4)]
    seatings = [tuple(lineup[(s + r) % 4] for s in range(4)) for r in range(4)]
    return duplicate_match(variant, entrants, seatings, deals, seed, **kw)


@dataclass
class Args:
    """Batched duplicate evaluation: a candidate 1-vs-3 against a baseline (or four agents), the same
    deals with the seats rotated; prints the table of points per hand with 95% intervals over deals."""

    candidate: str
    """agents.load spec of the agent under test: torch:changchun (a shipped checkpoint), torch:PATH.pt, heuristic …"""
    variant: Literal["xinjiang", "changchun"] = "changchun"
    """rule set"""
    baseline: str = "heuristic"
    """agents.load spec of the three opponents (1-vs-3)"""
    others: tuple[str, ...] | None = None
    """four-agent format instead: up to three more NAME=SPEC entrants besides the candidate"""
    deals: int = 750
    """deals; 1-vs-3 plays each four times (750 deals: 3,000 hands, the least for a claim of strength)"""
    seed: int = 0
    """seed of the deals"""
    batch_deals: int = 16
    """deals played side by side"""
    rule: tyro.conf.UseAppendAction[tuple[str, ...]] = ()
    """a rule field as FIELD=VALUE (the value read as JSON); repeat the flag for more"""
    progress: bool = True
    """show a progress bar of the hands (only when stderr is a terminal)"""


def _rules(items: tuple[str, ...]) -> dict[str, Any]:
    rules: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        require(bool(sep and key), f"--rule takes FIELD=VALUE, got {item!r}")
        try:
            rules[key] = json.loads(value)
        except json.JSONDecodeError:
            rules[key] = value
    return rules


def check_args(args: Args) -> None:
    """The flag values and the spelling of the agent specs and rule fields (ValueError naming the flag)."""
    require(args.deals >= 1, f"--deals must be a positive int, got {args.deals}")
    require(args.batch_deals >= 1, f"--batch-deals must be a positive int, got {args.batch_deals}")
    require(args.others is None or 1 <= len(args.others) <= 3, "--others takes one to three NAME=SPEC entrants")
    for flag, spec in [("--candidate", args.candidate), ("--baseline", args.baseline)] + [
        ("--others", item.partition("=")[2] or item) for item in args.others or ()
    ]:
        try:
            agent_registry.parse_spec(spec)
        except ValueError as error:
            raise ValueError(f"{flag}: {error}") from None
    _rules(args.rule)


def run(args: Args) -> DuplicateResult:
    """Build the entrants (`InputError` if one cannot be built), then play."""
    import torch

    torch.set_num_threads(1)
    rules = _rules(args.rule)
    candidate = load_agent(args.candidate, args.seed, "--candidate")
    if args.others is None:
        baseline = load_agent(args.baseline, args.seed + 1, "--baseline")
        return one_vs_three(
            args.variant,
            candidate,
            baseline,
            args.deals,
            args.seed,
            deals_per_batch=args.batch_deals,
            progress=args.progress,
            **rules,
        )
    entrants = {"candidate": candidate}
    for k, item in enumerate(args.others):
        name, sep, spec = item.partition("=")
        entrants[name if sep else item] = load_agent(spec if sep else item, args.seed + 1 + k, "--others")
    return four_agents(
        args.variant, entrants, args.deals, args.seed, deals_per_batch=args.batch_deals, progress=args.progress, **rules
    )


def main(argv: list[str] | None = None) -> DuplicateResult:
    """The command line: the table on stdout."""
    return script_main("python -m training.duplicate", Args, check_args, run, argv, show=DuplicateResult.table)


if __name__ == "__main__":
    main()
