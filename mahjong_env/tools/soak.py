"""Soak run: ``python -m mahjong_env.tools.soak --decisions 1000000 --variant both``.

Plays random legal decisions through the raw AEC env (matches of ``--num-hands`` hands) and
checks at every step:

- tile conservation: for every kind, concealed + melds + rivers + live wall + the set-aside
  bao indicator = 4 (so 136 in all), and ``view()["wall_remaining"]`` agrees with the wall;
- rewards are zero-sum at every step; at each hand end ``deltas`` and ``kong_deltas`` are
  zero-sum and every seat's rewards over the hand equal its ``deltas + kong_deltas``;
- the mover's action mask is non-empty and every other agent's is empty; the mover's
  observation has the documented shape and is finite;
- every hand ends (within ``--max-hand-decisions``), and every ``--replay-every``-th episode's
  record replays to the same results.

Decisions are uniform over the legal actions, except that a legal win is taken with probability
``--win-bias`` (default 0.5) so that settlements are exercised often.

Resident memory is sampled from ``/proc/self/statm`` every ``--sample-every`` decisions. The
hand-analysis tables fill lazily, so memory may rise early on; the check is that the second
half of the run grows by less than ``--max-growth-mb``. Exit status 1 on any failure.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from mahjong_env.variants import get_variant, variant_names

__all__ = ["main", "soak", "check_tiles"]

AGENTS = tuple(f"player_{i}" for i in range(4))


def _rss_mb() -> float:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def check_tiles(game: Any) -> str | None:
    """None if every kind's four copies are accounted for, else what is wrong."""
    found: Counter[int] = Counter()
    for st in game.seats:
        if min(st.counts) < 0 or max(st.counts) > 4:
            return f"concealed counts out of range: {st.counts}"
        if st.held != sum(st.counts):
            return (
                f"SeatState.held is {st.held}, the counts hold {sum(st.counts)}: counts changed outside remove/receive"
            )
        for t, n in enumerate(st.counts):
            if n:
                found[t] += n
        for meld in st.melds:
            found.update(meld.tiles)
        found.update(st.river)
    wall = game.wall
    found.update(wall.live_tiles())
    indicator = 0
    if wall.gap is not None:
        found[wall.tiles[wall.gap]] += 1
        indicator = 1
    wrong = {t: found[t] for t in range(34) if found[t] != 4}
    if wrong:
        return f"tile kinds not held four times: {wrong}"
    total = sum(sum(st.counts) + sum(len(m.tiles) for m in st.melds) + len(st.river) for st in game.seats)
    if total + wall.remaining + indicator != 136:
        return f"concealed + melds + rivers ({total}) + wall ({wall.remaining}) + indicator ({indicator}) != 136"
    return None


class _Run:
    """What a soak run has seen so far: counts, failures (at most `MAX_FAILURES`), memory samples."""

    MAX_FAILURES = 20

    def __init__(self, env: Any, variant: str, sample_every: int, progress: bool) -> None:
        self.env = env
        self.variant = variant
        self.sample_every = sample_every
        self.progress = progress
        self.failures: list[str] = []
        self.samples: list[tuple[int, float]] = [(0, _rss_mb())]
        self.outcomes: Counter[str] = Counter()
        self.methods: Counter[str] = Counter()
        self.decisions = self.episodes = self.hands = self.replays = self.longest = 0
        self.episode_seed = 0
        self.start = time.perf_counter()

    @property
    def stopped(self) -> bool:
        """Enough failures to stop."""
        return len(self.failures) >= self.MAX_FAILURES

    def fail(self, message: str) -> None:
        if len(self.failures) < self.MAX_FAILURES:
            where = f"episode seed {self.episode_seed}, hand {self.env.game.hand_index}, decision {self.decisions}"
            self.failures.append(f"{where}: {message}")

    def sample_memory(self) -> None:
        """Every ``sample_every`` decisions: the resident memory, and a progress line."""
        if self.decisions % self.sample_every:
            return
        self.samples.append((self.decisions, _rss_mb()))
        if self.progress:
            rate = self.decisions / (time.perf_counter() - self.start)
            print(
                f"[{self.variant}] {self.decisions:,} decisions, {self.hands:,} hands, {rate:,.0f}/s, "
                f"RSS {self.samples[-1][1]:.1f} MB",
                file=sys.stderr,
                flush=True,
            )


def _check_decision(env: Any, run: _Run) -> list[np.ndarray]:
    """The checks before a decision: only the mover has a legal action, the game agrees on who
    moves, the observation is well formed. Returns every agent's mask."""
    from mahjong_env.observation import NUM_CHANNELS

    game = env.game
    agent = env.agent_selection
    masks = [env.action_mask(a) for a in AGENTS]
    mover = AGENTS.index(agent)
    if game.actor != mover:
        run.fail(f"agent_selection {agent} but the game's actor is seat {game.actor}")
    if not masks[mover].any():
        run.fail(f"{agent}'s mask is empty")
    if any(masks[s].any() for s in range(4) if s != mover):
        run.fail("an agent other than the mover has a legal action")
    obs = env.observe(agent)["observation"]
    if obs.shape != (NUM_CHANNELS, 34) or not np.isfinite(obs).all():
        run.fail(f"bad observation: shape {obs.shape}")
    return masks


def _choose(mask: np.ndarray, rng: np.random.Generator, win_bias: float) -> int:
    """A uniform legal action, except that a legal win is taken with probability ``win_bias``."""
    from mahjong_env.actions import WIN

    legal = np.flatnonzero(mask)
    if mask[WIN] and rng.random() < win_bias:
        return WIN
    return int(legal[rng.integers(len(legal))])


def _check_hand_end(env: Any, run: _Run, hand_rewards: np.ndarray) -> None:
    """At a hand's end: a result in the infos, zero-sum ``deltas`` and ``kong_deltas``, and every
    seat's rewards over the hand equal to its ``deltas + kong_deltas``."""
    result = env.infos["player_0"].get("result")
    if result is None:
        run.fail("a hand ended without a result in the infos")
        return
    run.outcomes[result["outcome"]] += 1
    run.methods[str(result["method"])] += 1
    for key in ("deltas", "kong_deltas"):
        if abs(sum(result[key])) > 1e-9:
            run.fail(f"result {key} not zero-sum: {result[key]}")
    owed = np.add(result["deltas"], result["kong_deltas"])
    if not np.allclose(owed, hand_rewards, atol=1e-9):
        run.fail(f"hand rewards {hand_rewards.tolist()} != deltas + kong_deltas {owed.tolist()}")


def _play_episode(
    env: Any, rng: np.random.Generator, run: _Run, decisions: int, max_hand_decisions: int, win_bias: float
) -> None:
    """Play the episode just reset, checking every step, until it ends or ``decisions`` are made."""
    from mahjong_env.engine.state import Phase

    game = env.game
    hand_rewards = np.zeros(4)
    hand_decisions = 0
    while not game.over and run.decisions < decisions:
        hand_index = game.hand_index
        masks = _check_decision(env, run)
        env.step(_choose(masks[AGENTS.index(env.agent_selection)], rng, win_bias))
        run.decisions += 1
        hand_decisions += 1
        step_rewards = [env.rewards[a] for a in AGENTS]
        if abs(sum(step_rewards)) > 1e-9:
            run.fail(f"rewards not zero-sum: {step_rewards}")
        hand_rewards += step_rewards
        problem = check_tiles(game)  # after a hand end: the next hand's deal
        if game.hand_index != hand_index or game.phase == Phase.OVER:
            run.hands += 1
            run.longest = max(run.longest, hand_decisions)
            _check_hand_end(env, run, hand_rewards)
            hand_rewards = np.zeros(4)
            hand_decisions = 0
        elif hand_decisions > max_hand_decisions:
            run.fail(f"hand still running after {hand_decisions} decisions")
            break
        if problem:
            run.fail(problem)
        run.sample_memory()


def _check_replay(env: Any, run: _Run) -> None:
    """The episode's record, through JSON, replays to the same results."""
    from mahjong_env import replay

    record = env.record()
    results = [h["result"] for h in record["hands"]]
    try:
        if replay(json.loads(json.dumps(record))) != json.loads(json.dumps(results)):
            run.fail("replay gives different results")
    except ValueError as error:
        run.fail(f"replay failed: {error}")
    run.replays += 1


def soak(
    variant: str,
    decisions: int,
    seed: int = 0,
    num_hands: int = 4,
    sample_every: int = 10_000,
    replay_every: int = 50,
    max_hand_decisions: int = 2_000,
    max_growth_mb: float = 16.0,
    win_bias: float = 0.5,
    progress: bool = True,
) -> dict[str, Any]:
    """Run ``decisions`` random decisions of ``variant`` with every check; returns a summary."""
    env = get_variant(variant).raw_env(num_hands=num_hands)
    rng = np.random.default_rng(seed)
    run = _Run(env, variant, sample_every, progress)
    run.episode_seed = seed
    while run.decisions < decisions and not run.stopped:
        env.reset(seed=run.episode_seed)
        _play_episode(env, rng, run, decisions, max_hand_decisions, win_bias)
        if env.game.over:
            run.episodes += 1
            if replay_every and run.episodes % replay_every == 0:
                _check_replay(env, run)
        run.episode_seed += 1
    return _summary(run, seed, num_hands, win_bias, max_growth_mb)


def _summary(run: _Run, seed: int, num_hands: int, win_bias: float, max_growth_mb: float) -> dict[str, Any]:
    """The run's summary; fails it if memory grew more than ``max_growth_mb`` over its second half."""
    elapsed = time.perf_counter() - run.start
    done = run.decisions
    samples = run.samples
    samples.append((done, _rss_mb()))
    half = [mb for n, mb in samples if n >= done // 2]
    growth = half[-1] - half[0] if half else 0.0
    failures = run.failures
    if growth > max_growth_mb:
        failures.append(f"resident memory grew {growth:.1f} MB over the second half (limit {max_growth_mb} MB)")
    return {
        "variant": run.variant,
        "seed": seed,
        "num_hands": num_hands,
        "win_bias": win_bias,
        "decisions": done,
        "episodes": run.episodes,
        "hands": run.hands,
        "longest_hand_decisions": run.longest,
        "outcomes": dict(run.outcomes),
        "methods": dict(run.methods),
        "replays_checked": run.replays,
        "seconds": round(elapsed, 1),
        "decisions_per_s": round(done / elapsed, 1),
        "rss_mb_first": round(samples[0][1], 1),
        "rss_mb_at_half": round(half[0], 1) if half else None,
        "rss_mb_last": round(samples[-1][1], 1),
        "rss_growth_second_half_mb": round(growth, 2),
        "failures": failures,
        "ok": not failures,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mahjong_env.tools.soak", description=__doc__.split("\n\n")[0])
    parser.add_argument("--decisions", type=int, default=1_000_000, help="decisions per variant")
    parser.add_argument("--variant", choices=(*variant_names(), "both"), default="both")
    parser.add_argument("--seed", type=int, default=0, help="first episode's seed (then +1 per episode)")
    parser.add_argument("--num-hands", type=int, default=4, help="hands per episode (dealer rotation, silver carried)")
    parser.add_argument("--sample-every", type=int, default=10_000, help="decisions between memory samples")
    parser.add_argument("--replay-every", type=int, default=50, help="replay every k-th episode's record (0: never)")
    parser.add_argument("--win-bias", type=float, default=0.5, help="probability of taking a legal win")
    parser.add_argument("--max-growth-mb", type=float, default=16.0, help="allowed RSS growth over the second half")
    parser.add_argument("--json", dest="json_path", default=None, help="write the summaries to this file")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args(argv)
    variants = variant_names() if args.variant == "both" else (args.variant,)
    summaries = []
    for variant in variants:
        summary = soak(
            variant,
            args.decisions,
            seed=args.seed,
            num_hands=args.num_hands,
            sample_every=args.sample_every,
            replay_every=args.replay_every,
            max_growth_mb=args.max_growth_mb,
            win_bias=args.win_bias,
            progress=not args.quiet,
        )
        summaries.append(summary)
        print(json.dumps(summary, indent=2), flush=True)
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(summaries, indent=2))
    return 0 if all(s["ok"] for s in summaries) else 1


if __name__ == "__main__":
    raise SystemExit(main())
