"""Throughput benchmarks: ``python -m mahjong_env.tools.bench`` (console script ``mahjong-bench``).

Sections, for each variant (random legal play unless said otherwise):

a. the wrapped PettingZoo AEC env (``<variant>_v0.env()``), single process: observation and
   mask computed at every decision through ``env.last()``; hands/s, decisions/s, peak memory
   (``ru_maxrss`` of the process, and tracemalloc's peak over a short separate run);
b. the raw engine: ``Game.legal_actions()`` + ``Game.step()``, no observations;
c. `mahjong_env.adapters.vector.VectorMahjong` with observations and masks, N = 1, 16, 64, 256 games,
   one core (env time only: the random policy's own time is left out);
d. `mahjong_env.adapters.workers.ParallelVectorMahjong` on every core (one worker per core);
r. the PettingZoo loop of API.md exactly (``env()``, ``env.last()`` at every decision, a
   random legal action, one core) beside RLCard's mahjong env (``rlcard.make("mahjong")``,
   ``env.step`` encoding the next player's state, a random legal action) in the same run, in
   alternating rounds so that both see the same machine load; the ratio of decisions/s is the
   result. Skipped when RLCard is not installed (``pip install -e '.[bench]'``). RLCard plays
   a simpler rule set (no bao, no special kongs), so the ratio compares env costs per decision,
   not equal games.

The random legal action of sections a, b and r is drawn with Python's ``random.Random`` (for
both envs in section r): numpy's ``Generator.integers`` costs several microseconds a call,
which would be counted as env time.

``--against CHECKOUT`` runs these sections in this checkout and in another one (a git worktree
of an older commit, say) in alternating fresh processes, ``--rounds`` times, and reports the
paired ratio of each row with a 95% interval (`mahjong_env.tools.bench_compare`): the measure
of a change that carries over from one machine to another, where absolute rates do not.

Rates are wall-clock; "cpu" columns divide by this process's CPU time instead, which is less
disturbed by other jobs on a shared machine. Each variant is warmed up first (the hand
analysis tables fill lazily). This is a command, not a test: nothing here asserts a speed.
Agents (the heuristic, the shipped networks in self-play) are timed by ``python -m
agents.bench``: the env package does not import the agents.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import sys
import time
import tracemalloc
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from mahjong_env.tools import bench_compare
from mahjong_env.tools.cli import bounded
from mahjong_env.variants import get_variant, variant_names

__all__ = [
    "main",
    "warm_up",
    "machine_info",
    "bench_aec",
    "bench_engine",
    "bench_vector",
    "bench_parallel",
    "bench_rlcard",
    "profile_breakdown",
]

SECTIONS = "abcdr"

VARIANTS = variant_names()


def machine_info() -> dict[str, Any]:
    """CPU model, core count, Python and numpy versions, load average."""
    model = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "cpu": model,
        "cores": cores,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "platform": platform.platform(),
        "load_average": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None,
    }


def _rss_mb() -> float:
    """Resident memory now, from /proc/self/statm (0 where there is none)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return 0.0
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _raw_env(variant: str) -> Any:
    return get_variant(variant).raw_env


def _rates(decisions: int, hands: int, wall: float, cpu: float) -> dict[str, Any]:
    return {
        "decisions": decisions,
        "hands": hands,
        "seconds": round(wall, 3),
        "decisions_per_s": decisions / wall,
        "hands_per_s": hands / wall,
        "cpu_decisions_per_s": decisions / cpu if cpu > 0 else float("nan"),
    }


def _play_aec(env: Any, rng: random.Random, seeds: range) -> int:
    decisions = 0
    pick = rng.randrange
    for seed in seeds:
        env.reset(seed=seed)
        for _agent in env.agent_iter():
            obs, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
                continue
            legal = obs["action_mask"].nonzero()[0]  # the mask is 1-D: its nonzero() is flatnonzero()
            env.step(int(legal[pick(len(legal))]))
            decisions += 1
    return decisions


def bench_aec(variant: str, hands: int, seed: int = 0) -> dict[str, Any]:
    """(a) The wrapped AEC env, ``hands`` hands of random legal play."""
    make_env = get_variant(variant).env
    env = make_env()
    rng = random.Random(seed)
    rss_before = _rss_mb()
    wall, cpu = time.perf_counter(), time.process_time()
    decisions = _play_aec(env, rng, range(seed, seed + hands))
    out = _rates(decisions, hands, time.perf_counter() - wall, time.process_time() - cpu)
    tracemalloc.start()
    _play_aec(make_env(), rng, range(seed + hands, seed + hands + min(hands, 10)))
    out["tracemalloc_peak_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["rss_growth_mb"] = _rss_mb() - rss_before
    return out


def _play_rlcard(env: Any, rng: random.Random, hands: int) -> int:
    decisions = 0
    pick = rng.randrange
    for _ in range(hands):
        state, _ = env.reset()
        while not env.is_over():
            legal = list(state["legal_actions"])
            state, _ = env.step(legal[pick(len(legal))])
            decisions += 1
    return decisions


def bench_rlcard(variant: str, hands: int, rounds: int = 10, seed: int = 0) -> dict[str, Any]:
    """(r) The PettingZoo loop (as section a) and RLCard's mahjong env, ``hands`` hands each,
    in ``rounds`` alternating rounds; rates of both and their ratio (ours / RLCard's)."""
    try:
        import rlcard
    except ImportError:
        return {"skipped": "RLCard is not installed (pip install -e '.[bench]')"}
    make_env = get_variant(variant).env
    ours, theirs = make_env(), rlcard.make("mahjong", config={"seed": seed})
    rng = random.Random(seed)
    per_round = max(1, hands // rounds)
    decisions = {"ours": 0, "rlcard": 0}
    wall = {"ours": 0.0, "rlcard": 0.0}
    cpu = {"ours": 0.0, "rlcard": 0.0}

    def timed(key: str, play: Callable[[], int]) -> None:
        wall0, cpu0 = time.perf_counter(), time.process_time()
        decisions[key] += play()
        wall[key] += time.perf_counter() - wall0
        cpu[key] += time.process_time() - cpu0

    _play_rlcard(theirs, rng, 2)  # warm-up
    for k in range(rounds):
        seeds = range(seed + k * per_round, seed + (k + 1) * per_round)
        timed("ours", partial(_play_aec, ours, rng, seeds))
        timed("rlcard", partial(_play_rlcard, theirs, rng, per_round))
    out = _rates(decisions["ours"], per_round * rounds, wall["ours"], cpu["ours"])
    rl = _rates(decisions["rlcard"], per_round * rounds, wall["rlcard"], cpu["rlcard"])
    out["rlcard"] = {"version": getattr(rlcard, "__version__", "unknown"), **rl}
    out["ratio"] = out["decisions_per_s"] / rl["decisions_per_s"]
    out["cpu_ratio"] = out["cpu_decisions_per_s"] / rl["cpu_decisions_per_s"]
    return out


def bench_engine(variant: str, hands: int, seed: int = 0) -> dict[str, Any]:
    """(b) The raw engine: ``legal_actions`` + ``step``, no observations."""
    from mahjong_env.engine.game import Game
    from mahjong_env.engine.state import Phase
    from mahjong_env.wall import first_dealer, shuffled_deal

    cls = _raw_env(variant)
    env = cls()
    game = Game(env.rules, 1)
    silver = [env.rules.starting_silver] * 4
    pick = random.Random(seed).randrange
    over = Phase.OVER
    decisions = 0
    wall, cpu = time.perf_counter(), time.process_time()
    for s in range(seed, seed + hands):
        dealer = first_dealer(s)
        game.start_match(s, dealer, silver)
        hand, wall_tiles = shuffled_deal(s, 0, dealer)
        game.start_hand(hand, wall_tiles)
        while game.phase != over:
            legal = game.legal_actions()
            game.step(legal[pick(len(legal))])
            decisions += 1
    return _rates(decisions, hands, time.perf_counter() - wall, time.process_time() - cpu)


def _random_policy(rng: np.random.Generator) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    def policy(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        scores = rng.random(masks.shape, dtype=np.float32)
        scores *= masks
        return scores.argmax(axis=1)

    return policy


def _drive(venv: Any, policy: Callable[[np.ndarray, np.ndarray], np.ndarray], seconds: float) -> dict[str, Any]:
    """Step ``venv`` for about ``seconds``; times the env's own steps apart from the policy."""
    obs, masks, _ = venv.reset()
    n = venv.num_envs
    steps = hands = 0
    env_wall = env_cpu = 0.0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        actions = policy(obs, masks)
        wall, cpu = time.perf_counter(), time.process_time()
        obs, masks, _, _, _, infos = venv.step(actions)
        env_wall += time.perf_counter() - wall
        env_cpu += time.process_time() - cpu
        steps += 1
        hands += sum(1 for info in infos if "result" in info)
    total = time.perf_counter() - start
    out = _rates(steps * n, hands, env_wall, env_cpu)
    out["num_envs"] = n
    out["loop_decisions_per_s"] = steps * n / total
    return out


def bench_vector(variant: str, num_envs: int, seconds: float, seed: int = 0) -> dict[str, Any]:
    """(c) `VectorMahjong` of ``num_envs`` games, one core."""
    from mahjong_env.adapters.vector import VectorMahjong

    return _drive(VectorMahjong(variant, num_envs, seed=seed), _random_policy(np.random.default_rng(seed)), seconds)


def bench_parallel(variant: str, num_envs: int, workers: int, seconds: float, seed: int = 0) -> dict[str, Any]:
    """(d) `ParallelVectorMahjong`, ``workers`` local processes (wall-clock rates only)."""
    from mahjong_env.adapters.workers import ParallelVectorMahjong

    with ParallelVectorMahjong(variant, num_envs, num_workers=workers, seed=seed) as venv:
        out = _drive(venv, _random_policy(np.random.default_rng(seed)), seconds)
    out["workers"] = workers
    out.pop("cpu_decisions_per_s")
    return out


def profile_breakdown(variant: str, num_envs: int = 64, steps: int = 1000, seed: int = 0) -> dict[str, Any]:
    """cProfile of `VectorMahjong.step` under random play: per-decision cost by part.

    Parts (microseconds per decision, profiled, so inflated by the profiler; ``share`` is the
    fraction of the profiled step time): ``legal_actions`` (`Game._compute_legal`),
    ``engine_step`` (`Game.step`, hand ends and resets included), ``hand_analysis`` (every
    function of `mahjong_env.hand`, wherever called from: a part of the first two),
    ``observation`` (`encode_batch`), ``masks_and_batching`` (the rest of `VectorMahjong.step`).
    """
    import cProfile
    import pstats

    from mahjong_env.adapters.vector import VectorMahjong

    venv = VectorMahjong(variant, num_envs, seed=seed)
    policy = _random_policy(np.random.default_rng(seed))
    obs, masks, _ = venv.reset()
    for _ in range(steps):  # warm the lazy hand tables first
        obs, masks, *_ = venv.step(policy(obs, masks))
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(steps):
        obs, masks, *_ = venv.step(policy(obs, masks))
    profiler.disable()
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]

    def cumulative(file_end: str, name: str) -> float:
        return sum(v[3] for (f, _, n), v in stats.items() if f.endswith(file_end) and n == name)

    decisions = steps * num_envs
    total = cumulative("vector.py", "step")
    parts = {
        "legal_actions": cumulative("game.py", "_compute_legal"),
        "engine_step": cumulative("game.py", "step"),
        "observation": cumulative("observation.py", "encode_batch"),
    }
    parts["masks_and_batching"] = total - sum(parts.values())
    hand = sum(v[2] for (f, _, _), v in stats.items() if "/hand/" in f)
    top = sorted(stats.items(), key=lambda kv: kv[1][2], reverse=True)[:15]
    return {
        "num_envs": num_envs,
        "decisions": decisions,
        "profiled_us_per_decision": 1e6 * total / decisions,
        "parts_us": {k: 1e6 * v / decisions for k, v in parts.items()},
        "share": {k: v / total for k, v in parts.items()},
        "hand_analysis_us": 1e6 * hand / decisions,
        "hand_analysis_share": hand / total,
        "top_functions": [
            {
                "function": f"{Path(f).name}:{line}({n})",
                "calls_per_decision": v[1] / decisions,
                "own_us_per_decision": 1e6 * v[2] / decisions,
            }
            for (f, line, n), v in top
        ],
    }


def _print_profile(variant: str, prof: dict[str, Any]) -> None:
    print(
        f"profile {variant}, VectorMahjong N={prof['num_envs']}, {prof['decisions']:,} decisions "
        f"({prof['profiled_us_per_decision']:.1f} us/decision under cProfile):"
    )
    for key, us in prof["parts_us"].items():
        print(f"  {key:<20} {us:7.1f} us  {100 * prof['share'][key]:5.1f} %")
    print(
        f"  {'(hand analysis)':<20} {prof['hand_analysis_us']:7.1f} us  {100 * prof['hand_analysis_share']:5.1f} %"
        "  (inside legal_actions and engine_step)"
    )
    print("  top functions by own time:")
    for row in prof["top_functions"]:
        print(f"    {row['own_us_per_decision']:6.2f} us  {row['calls_per_decision']:5.2f} calls  {row['function']}")


def warm_up(variant: str, hands: int) -> None:
    """Play ``hands`` raw-engine hands (seeds apart from every measured one) to fill the hand
    tables first, so that a measurement sees a long run's steady state."""
    bench_engine(variant, hands, seed=10**6)


def _print_table(report: dict[str, Any]) -> None:
    m = report["machine"]
    print(
        f"machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}, numpy {m['numpy']}, "
        f"load average {m['load_average']}"
    )
    print(f"{'variant':<10} {'section':<34} {'decisions/s':>12} {'cpu dec/s':>10} {'hands/s':>9}  notes")
    entries = [(label, variant, row) for variant, rows in report["variants"].items() for label, row in rows.items()]
    entries.sort(key=lambda e: e[0][0])  # by section letter; stable within a section
    for label, variant, row in entries:
        if "skipped" in row:
            print(f"{variant:<10} {label:<34} {'-':>12} {'-':>10} {'-':>9}  skipped: {row['skipped']}")
            continue
        rate = row["decisions_per_s"]
        hands = row["hands_per_s"]
        cpu = row.get("cpu_decisions_per_s")
        notes = []
        if "peak_rss_mb" in row:
            notes.append(
                f"peak RSS {row['peak_rss_mb']:.0f} MB (+{row['rss_growth_mb']:.1f} MB in the run), "
                f"tracemalloc peak {row['tracemalloc_peak_mb']:.2f} MB"
            )
        if "loop_decisions_per_s" in row and "network" not in row:
            notes.append(f"with random policy {row['loop_decisions_per_s']:,.0f}/s")
        if "network" in row:
            notes.append(
                f"network alone {row['network_decisions_per_s']:,.0f}/s, {row['torch_threads']} torch thread(s); "
                f"{row['network']}"
            )
        if "rlcard" in row:
            rl = row["rlcard"]
            notes.append(
                f"RLCard {rl['version']} mahjong {rl['decisions_per_s']:,.0f}/s "
                f"(cpu {rl['cpu_decisions_per_s']:,.0f}/s): "
                f"ratio {row['ratio']:.2f}x (cpu {row['cpu_ratio']:.2f}x)"
            )
        cpu_text = f"{cpu:>10,.0f}" if cpu is not None else f"{'-':>10}"
        print(f"{variant:<10} {label:<34} {rate:>12,.0f} {cpu_text} {hands:>9,.1f}  {'; '.join(notes)}")


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage block): ``mahjong-bench: error: ...``."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def _sections(text: str) -> str:
    bad = sorted(set(text) - set(SECTIONS))
    if bad or not text:
        raise argparse.ArgumentTypeError(
            f"unknown section(s) {', '.join(map(repr, bad)) or '(none given)'}; valid sections: {', '.join(SECTIONS)}"
        )
    return text


def _sizes(text: str) -> list[int]:
    parse = bounded(int, 1)
    try:
        sizes = [parse(x) for x in text.split(",")]
    except argparse.ArgumentTypeError as err:
        raise argparse.ArgumentTypeError(f"must be positive ints separated by commas ({err})") from None
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(prog="mahjong-bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", choices=(*VARIANTS, "both"), default="both")
    parser.add_argument(
        "--hands", type=bounded(int, 1), default=200, help="hands for the AEC, raw-engine and RLCard sections"
    )
    parser.add_argument(
        "--seconds",
        type=bounded(float, 0.01),
        default=5.0,
        help="time per batched / parallel / self-play measurement",
    )
    parser.add_argument("--sizes", type=_sizes, default=[1, 16, 64, 256], help="batch sizes N for section c")
    parser.add_argument(
        "--workers", type=bounded(int, 1), default=None, help="workers for section d (default: every core)"
    )
    parser.add_argument("--envs-per-worker", type=bounded(int, 1), default=64, help="games per worker in section d")
    parser.add_argument(
        "--warmup-hands",
        type=bounded(int, 0),
        default=1000,
        help="raw-engine hands played first to fill the hand tables (a long run's steady state)",
    )
    parser.add_argument(
        "--sections", type=_sections, default="abcd", help=f"which sections to run, e.g. 'ac' (of {SECTIONS})"
    )
    parser.add_argument("--profile", action="store_true", help="also print a cProfile breakdown of VectorMahjong N=64")
    parser.add_argument("--json", dest="json_path", default=None, help="also write the results to this JSON file")
    parser.add_argument(
        "--against",
        type=Path,
        default=None,
        metavar="CHECKOUT",
        help="run this bench and the one of another checkout (e.g. a git worktree of an older commit) in "
        "alternating fresh processes, and report the paired ratios with 95%% CIs",
    )
    parser.add_argument(
        "--rounds", type=bounded(int, 1), default=5, help="rounds of --against (one run of each checkout per round)"
    )
    parser.add_argument(
        "--interleave",
        action="store_true",
        help="with --against: section c of both checkouts in this one process, in turns of --seconds each, "
        "--rounds pairs of turns (steadier than separate runs on a busy machine)",
    )
    args = parser.parse_args(argv)
    if args.interleave and args.against is None:
        parser.error("--interleave needs --against CHECKOUT")
    if args.against is not None:
        if args.profile:
            parser.error("--profile does not go with --against")
        if args.interleave and args.sections != "c":
            parser.error("--interleave measures section c only: give --sections c")
        return _main_against(args)
    variants = VARIANTS if args.variant == "both" else (args.variant,)
    sizes = args.sizes
    info = machine_info()
    workers = args.workers or int(info["cores"] or 1)
    report: dict[str, Any] = {"machine": info, "args": vars(args), "variants": {v: {} for v in variants}}
    for variant in variants:
        warm_up(variant, args.warmup_hands)
    # section by section, so that section a runs before PyTorch is imported (peak memory)
    for section in args.sections:
        for variant in variants:
            rows = report["variants"][variant]
            if section == "a":
                rows["a. AEC env() obs+mask, 1 process"] = bench_aec(variant, args.hands)
            elif section == "b":
                rows["b. raw engine, no observations"] = bench_engine(variant, args.hands)
            elif section == "c":
                for n in sizes:
                    rows[f"c. VectorMahjong N={n}, 1 core"] = bench_vector(variant, n, args.seconds)
            elif section == "d":
                n = workers * args.envs_per_worker
                rows[f"d. Parallel N={n}, {workers} workers"] = bench_parallel(variant, n, workers, args.seconds)
            elif section == "r":
                rows["r. PettingZoo loop vs RLCard, 1 core"] = bench_rlcard(variant, args.hands)
        print(f"# section {section} done", file=sys.stderr, flush=True)
    if args.profile:
        report["profile"] = {variant: profile_breakdown(variant) for variant in variants}
    report["machine"]["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    _print_table(report)
    for variant, prof in report.get("profile", {}).items():
        _print_profile(variant, prof)
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(report, indent=2))
        print(f"wrote {args.json_path}")
    return 0


def _main_against(args: argparse.Namespace) -> int:
    """``--against``: the same bench arguments in both checkouts (`bench_compare`)."""
    argv = [
        "--variant", args.variant,
        "--hands", str(args.hands),
        "--seconds", str(args.seconds),
        "--sizes", ",".join(map(str, args.sizes)),
        "--envs-per-worker", str(args.envs_per_worker),
        "--warmup-hands", str(args.warmup_hands),
        "--sections", args.sections,
    ]  # fmt: skip
    if args.workers:
        argv += ["--workers", str(args.workers)]
    this = Path(__file__).resolve().parents[2]
    try:
        if args.interleave:
            variants = VARIANTS if args.variant == "both" else (args.variant,)
            bench_compare.bench_module(args.against)  # a clear error first
            rows = [
                bench_compare.interleaved(args.against, variant, n, args.seconds, args.rounds, args.warmup_hands)
                for variant in variants
                for n in args.sizes
            ]
            result = {
                "this": str(this),
                "other": str(args.against.resolve()),
                "argv": [*argv, "--interleave"],
                "rows": rows,
            }
        else:
            result = bench_compare.compare(this, args.against, argv, args.rounds)
    except (ValueError, RuntimeError) as err:
        print(f"mahjong-bench: error: {err}", file=sys.stderr)
        return 2 if isinstance(err, ValueError) else 1
    result["machine"] = machine_info()
    bench_compare.print_comparison(result)
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(result, indent=2))
        print(f"wrote {args.json_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
