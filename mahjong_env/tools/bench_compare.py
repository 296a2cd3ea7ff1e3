"""``mahjong-bench --against CHECKOUT``: this checkout's bench beside another checkout's, paired.

Absolute rates say little across machines (the same code runs twice as fast on one 2-core VM
as on another, and a busy VM varies by ±40% from run to run), but the ratio of two versions
timed in turns on one machine carries over. Each round runs the bench of both checkouts, each
in a fresh process (``python -m mahjong_env.tools.bench`` there, or ``mahjong_env.bench`` in
checkouts from before the tools moved), with the same arguments, in alternating order (this
one first in odd rounds) so that a drift in the machine's load falls on both. For every row
the two reports share, the result is the geometric mean of the per-round ratios this/other of
CPU decisions/s, with a 95% confidence interval from the t distribution of their logarithms.

A busy VM drifts within a minute as well (the same code at 10,000 and then 20,000 decisions/s),
which separate runs cannot pair away. ``--interleave`` (section c only) imports the other
checkout's package beside this one in one process (each version keeps its own modules; imports
are pointed at the right version before each turn) and steps both `VectorMahjong` envs in turns
of ``--seconds``, ``--rounds`` pairs of turns: both meet the machine as it is within seconds.

Only rows measured the same way in both benches are comparable: section c's batched rates time
the env's steps alone in every version of the bench; sections a, b and r changed their random
policy over time (see the README), so across old versions they compare harnesses as well.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["bench_module", "compare", "interleaved", "paired_ratio"]

# two-sided 95% quantiles of Student's t for 1..30 degrees of freedom (then the normal's)
_T95 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def bench_module(checkout: Path) -> str:
    """The bench's module in ``checkout``; ``ValueError`` when it has none."""
    if (checkout / "mahjong_env" / "tools" / "bench.py").is_file():
        return "mahjong_env.tools.bench"
    if (checkout / "mahjong_env" / "bench.py").is_file():
        return "mahjong_env.bench"
    raise ValueError(f"--against {str(checkout)!r} is not a checkout of this project (no mahjong_env/ bench there)")


def paired_ratio(this: list[float], other: list[float]) -> dict[str, Any]:
    """Geometric mean of ``this[i] / other[i]`` and its 95% interval (None from one pair)."""
    if len(this) != len(other) or not this:
        raise ValueError("paired_ratio needs two lists of the same positive length")
    logs = [math.log(a / b) for a, b in zip(this, other)]
    n = len(logs)
    mean = sum(logs) / n
    out: dict[str, Any] = {"ratio": math.exp(mean), "low": None, "high": None, "rounds": n}
    if n > 1:
        sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / (n - 1))
        half = (_T95[n - 2] if n - 1 <= len(_T95) else 1.96) * sd / math.sqrt(n)
        out["low"], out["high"] = math.exp(mean - half), math.exp(mean + half)
    return out


def _env(checkout: Path) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(checkout))


def _check_imports(checkout: Path) -> None:
    """A process started in ``checkout`` imports its own ``mahjong_env`` (not an installed one)."""
    command = [sys.executable, "-c", "import mahjong_env; print(mahjong_env.__file__)"]
    done = subprocess.run(command, cwd=checkout, env=_env(checkout), capture_output=True, text=True)
    found = Path(done.stdout.strip()).resolve() if done.returncode == 0 else None
    if found is None or checkout not in found.parents:
        raise ValueError(f"a process in {checkout} imports mahjong_env from {found}, not from that checkout")


def _run(checkout: Path, argv: list[str]) -> dict[str, Any]:
    """One bench run in ``checkout``, in a fresh process; its JSON report."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "report.json"
        command = [sys.executable, "-m", bench_module(checkout), *argv, "--json", str(path)]
        done = subprocess.run(command, cwd=checkout, env=_env(checkout), capture_output=True, text=True)
        if done.returncode != 0 or not path.is_file():
            tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-5:])
            raise RuntimeError(f"the bench of {checkout} failed (exit {done.returncode}):\n{tail}")
        return json.loads(path.read_text())


def _rate(row: dict[str, Any]) -> float | None:
    rate = row.get("cpu_decisions_per_s", row.get("decisions_per_s"))
    return rate if isinstance(rate, (int, float)) and rate > 0 and math.isfinite(rate) else None


def compare(this: Path, other: Path, argv: list[str], rounds: int) -> dict[str, Any]:
    """Run both checkouts' benches ``rounds`` times with ``argv``; the paired ratios per row."""
    this, other = this.resolve(), other.resolve()
    for checkout in (this, other):  # clear errors before anything runs
        bench_module(checkout)
        _check_imports(checkout)
    runs: dict[str, list[dict[str, Any]]] = {"this": [], "other": []}
    for r in range(rounds):
        order = ("this", "other") if r % 2 else ("other", "this")
        for side in order:
            runs[side].append(_run(this if side == "this" else other, argv))
            print(f"# round {r + 1}/{rounds}: {side} done", file=sys.stderr, flush=True)
    rows = []
    for variant, these in runs["this"][0]["variants"].items():
        for label in these:
            pairs = []
            for mine, theirs in zip(runs["this"], runs["other"]):
                a = _rate(mine["variants"].get(variant, {}).get(label, {}))
                b = _rate(theirs["variants"].get(variant, {}).get(label, {}))
                if a is not None and b is not None:
                    pairs.append((a, b))
            if len(pairs) == rounds:
                mine_rates, their_rates = [a for a, _ in pairs], [b for _, b in pairs]
                rows.append(
                    {
                        "variant": variant,
                        "section": label,
                        "this": mine_rates,
                        "other": their_rates,
                        **paired_ratio(mine_rates, their_rates),
                    }
                )
    return {"this": str(this), "other": str(other), "argv": argv, "rows": rows, "reports": runs}


def print_comparison(result: dict[str, Any]) -> None:
    print(f"this: {result['this']}\nother: {result['other']}\nbench arguments: {' '.join(result['argv'])}")
    print(f"{'variant':<10} {'section':<34} {'other cpu dec/s':>16} {'this cpu dec/s':>15} {'ratio':>7}  95% CI")
    for row in result["rows"]:
        theirs = sorted(row["other"])[len(row["other"]) // 2]
        mine = sorted(row["this"])[len(row["this"]) // 2]
        ci = f"{row['low']:.3f}-{row['high']:.3f}" if row["low"] is not None else "(one round)"
        print(f"{row['variant']:<10} {row['section']:<34} {theirs:>16,.0f} {mine:>15,.0f} {row['ratio']:>6.3f}x  {ci}")
    print("(medians of the rounds; the ratio is the geometric mean of the paired per-round ratios)")


# ---------------------------------------------------------------------- one process, interleaved

_PACKAGE = "mahjong_env"


def _package_modules() -> dict[str, Any]:
    return {k: v for k, v in sys.modules.items() if k == _PACKAGE or k.startswith(_PACKAGE + ".")}


def _use(modules: dict[str, Any]) -> None:
    """Make ``modules`` the ``mahjong_env`` package that imports find (a function that imports
    lazily then gets its own version's module)."""
    for name in list(_package_modules()):
        del sys.modules[name]
    sys.modules.update(modules)


def _load_other(checkout: Path) -> tuple[dict[str, Any], Any, Any]:
    """Import ``checkout``'s package beside the one already imported: its modules, its
    `VectorMahjong` and its bench module. The running package is left as it was."""
    import importlib

    mine = _package_modules()
    module = bench_module(checkout)
    sys.path.insert(0, str(checkout))
    try:
        _use({})
        bench = importlib.import_module(module)
        vector_module = "mahjong_env.adapters.vector" if module.endswith("tools.bench") else "mahjong_env.vector"
        vector = importlib.import_module(vector_module).VectorMahjong
        theirs = _package_modules()
        found = Path(theirs[_PACKAGE].__file__).resolve()
        if checkout not in found.parents:
            raise ValueError(f"importing from {checkout} found mahjong_env in {found}, not in that checkout")
    finally:
        sys.path.remove(str(checkout))
        _use(mine)
    return theirs, vector, bench


def interleaved(
    other: Path, variant: str, num_envs: int, seconds: float, pairs: int, warmup_hands: int
) -> dict[str, Any]:
    """Section c's `VectorMahjong` of both checkouts in this one process, in turns of
    ``seconds`` each, ``pairs`` times (the order alternating): both versions meet the machine
    as it is within the same second, which a busy VM's drift between runs does not allow. The
    CPU time of the env's steps alone is counted (the random policy's is not). Returns the
    row of `compare`'s result for it."""
    import numpy as np

    from mahjong_env.adapters.vector import VectorMahjong
    from mahjong_env.tools import bench as own_bench

    other = other.resolve()
    theirs, their_vector, their_bench = _load_other(other)
    mine = _package_modules()
    sides: dict[str, dict[str, Any]] = {}
    for side, modules, vector, bench in (
        ("this", mine, VectorMahjong, own_bench),
        ("other", theirs, their_vector, their_bench),
    ):
        _use(modules)
        warm_up = getattr(bench, "warm_up", None) or bench._warm_up  # an older checkout's is private
        warm_up(variant, warmup_hands)
        venv = vector(variant, num_envs, seed=0)
        _, masks, _ = venv.reset()
        sides[side] = {"modules": modules, "venv": venv, "masks": masks, "rng": np.random.default_rng(0), "rates": []}
    try:
        for p in range(pairs):
            for side in ("this", "other") if p % 2 else ("other", "this"):
                s = sides[side]
                _use(s["modules"])
                venv, rng, masks = s["venv"], s["rng"], s["masks"]
                spent, steps, start = 0.0, 0, time.perf_counter()
                while time.perf_counter() - start < seconds:
                    scores = rng.random(masks.shape, dtype=np.float32)
                    scores *= masks
                    actions = scores.argmax(axis=1)
                    cpu = time.process_time()
                    _, masks, _, _, _, _ = venv.step(actions)
                    spent += time.process_time() - cpu
                    steps += 1
                s["masks"] = masks
                s["rates"].append(steps * num_envs / spent)
    finally:
        _use(mine)
    return {
        "variant": variant,
        "section": f"c. VectorMahjong N={num_envs}, 1 core, interleaved",
        "this": sides["this"]["rates"],
        "other": sides["other"]["rates"],
        **paired_ratio(sides["this"]["rates"], sides["other"]["rates"]),
    }
