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
            return f"SeatState.held is {st.held}, the counts hold {sum(st.counts)}: counts changed outside remove/receive"
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
    from mahjong_env import replay
    from mahjong_env.actions import WIN
    from mahjong_env.engine.state import Phase
    from mahjong_env.observation import NUM_CHANNELS

    env = get_variant(variant).raw_env(num_hands=num_hands)
    rng = np.random.default_rng(seed)
    failures: list[str] = []
    samples: list[tuple[int, float]] = [(0, _rss_mb())]
    outcomes: Counter[str] = Counter()
    methods: Counter[str] = Counter()
    done = episodes = hands = replays = 0
    longest = 0
    episode_seed = seed
    start = time.perf_counter()

    def fail(message: str) -> None:
        if len(failures) < 20:
            failures.append(f"episode seed {episode_seed}, hand {env.game.hand_index}, decision {done}: {message}")

    while done < decisions and len(failures) < 20:
        env.reset(seed=episode_seed)
        game = env.game
        hand_rewards = np.zeros(4)
        hand_decisions = 0
        while not game.over and done < decisions:
            agent = env.agent_selection
            masks = [env.action_mask(a) for a in AGENTS]
            mover = AGENTS.index(agent)
            if game.actor != mover:
                fail(f"agent_selection {agent} but the game's actor is seat {game.actor}")
            if not masks[mover].any():
                fail(f"{agent}'s mask is empty")
            if any(masks[s].any() for s in range(4) if s != mover):
                fail("an agent other than the mover has a legal action")
            obs = env.observe(agent)["observation"]
            if obs.shape != (NUM_CHANNELS, 34) or not np.isfinite(obs).all():
                fail(f"bad observation: shape {obs.shape}")
            legal = np.flatnonzero(masks[mover])
            hand_index = game.hand_index
            if masks[mover][WIN] and rng.random() < win_bias:
                env.step(WIN)
            else:
                env.step(int(legal[rng.integers(len(legal))]))
            done += 1
            hand_decisions += 1
            step_rewards = [env.rewards[a] for a in AGENTS]
            if abs(sum(step_rewards)) > 1e-9:
                fail(f"rewards not zero-sum: {step_rewards}")
            hand_rewards += step_rewards
            problem = check_tiles(game)  # after a hand end: the next hand's deal
            if game.hand_index != hand_index or game.phase == Phase.OVER:
                result = env.infos["player_0"].get("result")
                hands += 1
                longest = max(longest, hand_decisions)
                if result is None:
                    fail("a hand ended without a result in the infos")
                else:
                    outcomes[result["outcome"]] += 1
                    methods[str(result["method"])] += 1
                    for key in ("deltas", "kong_deltas"):
                        if abs(sum(result[key])) > 1e-9:
                            fail(f"result {key} not zero-sum: {result[key]}")
                    owed = np.add(result["deltas"], result["kong_deltas"])
                    if not np.allclose(owed, hand_rewards, atol=1e-9):
                        fail(f"hand rewards {hand_rewards.tolist()} != deltas + kong_deltas {owed.tolist()}")
                hand_rewards = np.zeros(4)
                hand_decisions = 0
            elif hand_decisions > max_hand_decisions:
                fail(f"hand still running after {hand_decisions} decisions")
                break
            if problem:
                fail(problem)
            if done % sample_every == 0:
                samples.append((done, _rss_mb()))
                if progress:
                    rate = done / (time.perf_counter() - start)
                    print(
                        f"[{variant}] {done:,} decisions, {hands:,} hands, {rate:,.0f}/s, RSS {samples[-1][1]:.1f} MB",
                        file=sys.stderr,
                        flush=True,
                    )
        if game.over:
            episodes += 1
            if replay_every and episodes % replay_every == 0:
                record = env.record()
                results = [h["result"] for h in record["hands"]]
                try:
                    if replay(json.loads(json.dumps(record))) != json.loads(json.dumps(results)):
                        fail("replay gives different results")
                except ValueError as error:
                    fail(f"replay failed: {error}")
                replays += 1
        episode_seed += 1
    elapsed = time.perf_counter() - start
    samples.append((done, _rss_mb()))
    half = [mb for n, mb in samples if n >= done // 2]
    growth = half[-1] - half[0] if half else 0.0
    if growth > max_growth_mb:
        failures.append(f"resident memory grew {growth:.1f} MB over the second half (limit {max_growth_mb} MB)")
    return {
        "variant": variant,
        "seed": seed,
        "num_hands": num_hands,
        "win_bias": win_bias,
        "decisions": done,
        "episodes": episodes,
        "hands": hands,
        "longest_hand_decisions": longest,
        "outcomes": dict(outcomes),
        "methods": dict(methods),
        "replays_checked": replays,
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
