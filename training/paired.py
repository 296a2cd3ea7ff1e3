"""Paired rollouts: which of a decision's candidate actions gains most, measured on the real deal.

This module owns the training data of the agents that go beyond their teacher. Four
`agents.heuristic.HeuristicAgent` players play batched games (`mahjong_env.adapters.vector.VectorMahjong`);
every decision becomes a behaviour-cloning row (the heuristic's action is the label). At a
sampled share of the decisions that have candidates (`mahjong_env.features.decision_candidates`:
claim or pass, ready or not, kong or not, push or fold), the game is cloned once per
candidate (`clone_game`: a deep copy of the engine state, for training only, never given to an
agent), the candidate is played, and the hand is played to its end by the heuristic in every
seat. The deciding seat's points from that decision to the end of the hand, per candidate,
are the row's ``qvalues``: every candidate meets the same wall, the same dice and the same
opponents' tiles, so most of the luck cancels in their differences, and averaged over the
deals a player cannot tell apart they estimate the advantage of each candidate over the
others for the player's own information (the wall is privileged, but it only ever enters the
targets, never an input).

Value targets (``returns``) are always the deciding seat's points from its decision to the end
of that hand: rows of hands still running when the generation stops are dropped, never cut.

    data = paired_dataset("changchun", decisions=20_000, seed=1, rollout_prob=0.3)

    python -m training.paired --variant changchun --decisions 200000 --workers 2 --out runs/data/changchun.npz
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from agents.heuristic import HeuristicAgent
from mahjong_env import actions as A
from mahjong_env.adapters.vector import VectorMahjong
from mahjong_env.engine.game import Game
from mahjong_env.engine.state import Phase
from mahjong_env.features import ANALYSIS_CHANNELS, analysis_planes, decision_candidates
from mahjong_env.observation import NUM_CHANNELS
from mahjong_env.tiles import NUM_KINDS
from mahjong_env.variants import get_variant
from mahjong_env.view import table_view
from training.cli import prepare_output, progress_bar, require, script_main

__all__ = [
    "ACTION_CLASSES",
    "Args",
    "DECISION_KINDS",
    "MAX_CANDIDATES",
    "action_class",
    "class_gains",
    "clone_game",
    "decision_kind",
    "generate",
    "load_teacher",
    "main",
    "paired_dataset",
    "play_out",
    "relabel",
]

log = logging.getLogger(__spec__.name if __spec__ else __name__)  # not __main__ under python -m

MAX_CANDIDATES = 6
TILE_ROWS = NUM_CHANNELS - 3
DECISION_KINDS = ("discard", "claim", "ready", "kong", "bao", "win", "other")
"""Decision types for per-type agreement: by the label (discard, ready, kong or special
group) on one's turn; ``claim`` for claim and robbing windows (pass included); ``bao`` for
the bao view; ``win`` where a win is legal."""


def decision_kind(mask: np.ndarray, label: int) -> int:
    """Index into `DECISION_KINDS` of a decision with this mask and label."""
    if mask[A.WIN]:
        return 5
    if mask[A.VIEW_BAO]:
        return 4
    if mask[A.PASS]:
        return 1
    if label < A.READY:
        return 0
    if label < A.CONCEALED_KONG:
        return 2
    if label < A.CHOW_LOW or label in A.SPECIAL_DECLARATIONS:
        return 3
    return 6


ACTION_CLASSES = ("discard", "ready", "kong_own", "pass", "pong", "chow", "kong_claim", "other")
"""Coarse classes of actions, for the policy-improvement step of `relabel`."""


def action_class(action: int) -> int:
    """Index into `ACTION_CLASSES` of an action id."""
    if action < A.READY:
        return 0
    if action < A.CONCEALED_KONG:
        return 1
    if action < A.CHOW_LOW or action in A.SPECIAL_DECLARATIONS:
        return 2
    if action == A.PASS:
        return 3
    if action == A.PONG:
        return 4
    if action in (A.CHOW_LOW, A.CHOW_MID, A.CHOW_HIGH):
        return 5
    if action == A.KONG:
        return 6
    return 7


_CLASS_OF = np.array([action_class(a) for a in range(A.NUM_ACTIONS)])


def class_gains(data: dict[str, np.ndarray], rows: np.ndarray) -> dict[tuple[int, int], tuple[int, float, float]]:
    """For each (class of the heuristic's action, class of an alternative candidate) of the
    rolled-out ``rows``: (count, mean of alternative minus heuristic points, its standard error)."""
    samples: dict[tuple[int, int], list[float]] = {}
    for r in rows:
        q, cands, label = data["qvalues"][r], data["candidates"][r], int(data["actions"][r])
        valid = [int(c) for c in cands if c >= 0]
        if np.isnan(q[0]) or label not in valid:
            continue
        base = q[valid.index(label)]
        for k, c in enumerate(valid):
            if _CLASS_OF[c] != _CLASS_OF[label]:
                samples.setdefault((int(_CLASS_OF[label]), int(_CLASS_OF[c])), []).append(float(q[k] - base))
    out = {}
    for key, values in samples.items():
        v = np.asarray(values)
        out[key] = (len(v), float(v.mean()), float(v.std(ddof=1) / np.sqrt(len(v))) if len(v) > 1 else float("inf"))
    return out


def relabel(
    data: dict[str, np.ndarray], rows: np.ndarray, min_count: int = 30, z: float = 1.96
) -> tuple[np.ndarray, list[dict[str, Any]]]:
    """Policy improvement from the paired rollouts, one decision class at a time.

    Every (heuristic's class → alternative class) whose rollout gain has a confidence interval
    above zero (``mean - z * se > 0`` over at least ``min_count`` rolled-out decisions of
    ``rows``) is adopted: each row of ``rows`` whose label is of the first class, whose mask
    offers the second and whose player is not ready (rollouts only compare a free player's
    options) gets the alternative as its label (the candidate with the best rollout where the
    row has one, else the first legal action of that class). Returns the new labels (all
    rows) and the adopted classes with their statistics."""
    from mahjong_env.observation import SCALARS

    labels = data["actions"].copy()
    adopted = []
    ready_slot = SCALARS.index("ready_0")
    for (h, alt), (n, mean, se) in sorted(class_gains(data, rows).items()):
        if n < min_count or mean - z * se <= 0:
            continue
        changed = 0
        for r in rows:
            if _CLASS_OF[labels[r]] != h or data["scalars"][r][ready_slot] > 0:
                continue
            legal = np.flatnonzero(data["masks"][r])
            options = [int(a) for a in legal if _CLASS_OF[a] == alt]
            if not options:
                continue
            cands, q = data["candidates"][r], data["qvalues"][r]
            rolled = [
                (q[k], int(c)) for k, c in enumerate(cands) if c >= 0 and _CLASS_OF[c] == alt and not np.isnan(q[k])
            ]
            labels[r] = max(rolled)[1] if rolled else options[0]
            changed += 1
        adopted.append(
            {
                "from": ACTION_CLASSES[h],
                "to": ACTION_CLASSES[alt],
                "rollouts": n,
                "gain": mean,
                "se": se,
                "rows_relabelled": changed,
            }
        )
    return labels, adopted


def clone_game(game: Game) -> Game:
    """A deep copy of the engine state sharing the (stateless, frozen) rule set."""
    return copy.deepcopy(game, {id(game.rules): game.rules})


def play_out(game: Game, agent: HeuristicAgent, variant: str, config: dict[str, Any], visible: bool) -> np.ndarray:
    """Play ``game`` to the end of its hand with ``agent`` in every seat; the points each
    seat receives on the way, ``(4,)``."""
    total = np.zeros(4)
    mask = np.zeros(A.NUM_ACTIONS, np.int8)
    while game.phase != Phase.OVER:
        legal = game.legal_actions()
        if len(legal) == 1:
            action = legal[0]
        else:
            mask.fill(0)
            mask[legal] = 1
            seat = game.actor
            info = {"view": table_view(game, seat, visible), "variant": variant, "config": config}
            action = agent.act({"action_mask": mask}, info)
        game.step(action)
        total += game.rewards
    return total


def paired_dataset(
    variant: str,
    decisions: int,
    seed: int,
    num_envs: int = 16,
    rollout_prob: float = 0.0,
    explore: float = 0.0,
    analysis: bool = True,
    progress: Callable[[int], None] | None = None,
    seconds: float | None = None,
    teacher: str = "heuristic",
    **rule_overrides: Any,
) -> dict[str, np.ndarray]:
    """At least ``decisions`` rows (rows of hands that ended) of four heuristic players
    (decisions with one legal action are skipped), with paired rollouts at a share
    ``rollout_prob`` of the decisions that have
    candidates; with probability ``explore`` a decision is played at random (its label stays
    the heuristic's).

    Returns ``planes`` (uint8, tile rows 0–135), ``scalars`` (float32, the three scalar rows
    flattened), ``analysis`` (float16, the analysis planes; only with ``analysis``),
    ``masks`` (bool), ``actions`` (the teacher's choice), ``priors`` (the default heuristic's
    choice, for networks with prior planes: `agents.network.prior_planes`), ``kinds`` (`DECISION_KINDS`),
    ``returns`` (points from the decision to the end of its hand), ``games`` (hand ids, for
    splitting), ``candidates`` (int16, ``MAX_CANDIDATES`` columns, -1 padded) and ``qvalues``
    (float32, the candidates' rollout points; NaN where no rollout was made). With ``seconds``
    the generation also stops after that much wall time (whatever the row count).
    ``teacher`` is the `agents.load` spec of the rule-based player in every seat (its options
    included, e.g. ``heuristic?kongs="always"``); it must be a `HeuristicAgent`."""
    if decisions < 1:
        raise ValueError(f"decisions must be a positive int, got {decisions!r}")
    if not 0.0 <= rollout_prob <= 1.0 or not 0.0 <= explore <= 1.0:
        raise ValueError(f"rollout_prob and explore are probabilities, got {rollout_prob!r} and {explore!r}")
    venv = VectorMahjong(variant, num_envs, seed=seed, **rule_overrides)
    name = get_variant(venv.variant).name
    config = venv.config.to_dict()
    visible = venv.config.concealed_kong_visible
    rng = np.random.default_rng(seed)
    base = HeuristicAgent(seed=seed)
    own_prior = teacher == "heuristic"
    teacher = load_teacher(teacher, seed)
    obs, masks, seats = venv.reset()
    columns: dict[str, list[Any]] = {
        k: []
        for k in (
            "planes",
            "scalars",
            "analysis",
            "masks",
            "actions",
            "priors",
            "kinds",
            "games",
            "candidates",
            "qvalues",
        )
    }
    starts: list[float] = []
    row_seat: list[int] = []
    open_rows: list[list[int]] = [[] for _ in range(num_envs)]
    cumulative = np.zeros((num_envs, 4))
    hand_ids = list(range(num_envs))
    next_hand = num_envs
    returns: dict[int, float] = {}
    rows = 0
    analysis_buffer = np.zeros((len(ANALYSIS_CHANNELS), NUM_KINDS), np.float32)
    deadline = None if seconds is None else time.monotonic() + seconds
    while len(returns) < decisions and (deadline is None or time.monotonic() < deadline):
        actions = np.zeros(num_envs, np.int64)
        views = venv.views()
        for i in range(num_envs):
            mask = masks[i]
            info = {"view": views[i], "variant": name, "config": config}
            label = teacher.act({"action_mask": mask}, info)
            actions[i] = label
            if int(mask.sum()) > 1:
                row = len(starts)
                columns["planes"].append(obs[i, :TILE_ROWS].astype(np.uint8))
                columns["scalars"].append(obs[i, TILE_ROWS:].reshape(-1).copy())
                if analysis:
                    analysis_planes(views[i], name, config, mask, analysis_buffer)
                    columns["analysis"].append(analysis_buffer.astype(np.float16))
                columns["masks"].append(mask.astype(bool))
                columns["actions"].append(label)
                columns["priors"].append(label if own_prior else base.act({"action_mask": mask}, info))
                columns["kinds"].append(decision_kind(mask, label))
                columns["games"].append(hand_ids[i])
                candidates = np.full(MAX_CANDIDATES, -1, np.int16)
                qvalues = np.full(MAX_CANDIDATES, np.nan, np.float32)
                if rollout_prob and rng.random() < rollout_prob:
                    found = decision_candidates(views[i], name, config, mask)[:MAX_CANDIDATES]
                    seat = int(seats[i])
                    for k, candidate in enumerate(found):
                        clone = clone_game(venv.games[i])
                        clone.step(candidate)
                        gained = np.asarray(clone.rewards, np.float64)
                        if clone.phase != Phase.OVER:
                            gained = gained + play_out(clone, teacher, name, config, visible)
                        candidates[k] = candidate
                        qvalues[k] = gained[seat]
                columns["candidates"].append(candidates)
                columns["qvalues"].append(qvalues)
                starts.append(float(cumulative[i, seats[i]]))
                row_seat.append(int(seats[i]))
                open_rows[i].append(row)
                rows += 1
            if explore and rng.random() < explore:
                actions[i] = int(rng.choice(np.flatnonzero(mask)))
        obs, masks, seats, rewards, _, infos = venv.step(actions)
        cumulative += rewards
        for i, info in enumerate(infos):
            if "result" in info:  # the hand ended at this step: its rows get their returns
                for row in open_rows[i]:
                    returns[row] = float(cumulative[i, row_seat[row]]) - starts[row]
                open_rows[i] = []
                cumulative[i] = 0.0
                hand_ids[i] = next_hand
                next_hand += 1
        if progress is not None:
            progress(len(returns))
    keep = np.array(sorted(returns), np.int64)  # rows of hands that ended; the rest are dropped
    out = {
        "planes": np.stack(columns["planes"])[keep],
        "scalars": np.stack(columns["scalars"])[keep],
        "masks": np.stack(columns["masks"])[keep],
        "actions": np.asarray(columns["actions"], np.int64)[keep],
        "priors": np.asarray(columns["priors"], np.int64)[keep],
        "kinds": np.asarray(columns["kinds"], np.int8)[keep],
        "returns": np.asarray([returns[r] for r in keep.tolist()], np.float32),
        "games": np.asarray(columns["games"], np.int64)[keep],
        "candidates": np.stack(columns["candidates"])[keep],
        "qvalues": np.stack(columns["qvalues"])[keep],
    }
    if analysis:
        out["analysis"] = np.stack(columns["analysis"])[keep]
    return out


def load_teacher(spec: str, seed: int = 0) -> HeuristicAgent:
    """The teacher named by an `agents.load` spec; ValueError unless it is a `HeuristicAgent`
    (the data's labels and rollouts need a deterministic rule-based player)."""
    import agents

    teacher = agents.load(spec, seed=seed)
    if not isinstance(teacher, HeuristicAgent):
        raise ValueError(f"teacher {spec!r} is not a heuristic agent (heuristic[?options])")
    return teacher


_progress_counter: Any = None
"""In a worker process of `generate`: the shared count of finished rows, for the progress bar."""


def _init_worker(counter: Any) -> None:
    global _progress_counter
    _progress_counter = counter


def _worker(job: tuple[str, int, int, float, float, int, float | None, str, dict[str, Any]]) -> dict[str, np.ndarray]:
    """`paired_dataset` in a worker process, adding its finished rows to the shared counter."""
    counter, done = _progress_counter, [0]

    def report(rows: int) -> None:
        with counter.get_lock():
            counter.value += rows - done[0]
        done[0] = rows

    return _dataset(job, report if counter is not None else None)


def _dataset(
    job: tuple[str, int, int, float, float, int, float | None, str, dict[str, Any]],
    progress: Callable[[int], None] | None,
) -> dict[str, np.ndarray]:
    variant, decisions, seed, rollout_prob, explore, num_envs, seconds, teacher, rules = job
    return paired_dataset(
        variant,
        decisions,
        seed,
        num_envs=num_envs,
        rollout_prob=rollout_prob,
        explore=explore,
        progress=progress,
        seconds=seconds,
        teacher=teacher,
        **rules,
    )


def generate(
    variant: str,
    decisions: int,
    seed: int,
    workers: int = 1,
    rollout_prob: float = 0.3,
    explore: float = 0.05,
    num_envs: int = 16,
    seconds: float | None = None,
    teacher: str = "heuristic",
    progress: bool = False,
    **rule_overrides: Any,
) -> dict[str, np.ndarray]:
    """`paired_dataset` split over ``workers`` processes (seeds ``seed * 1000 + w``), merged;
    hand ids are made unique across workers. ``progress`` shows a bar of the finished rows on a
    terminal (`training.cli.progress_bar`)."""
    if workers < 1:
        raise ValueError(f"workers must be a positive int, got {workers!r}")
    share = -(-decisions // workers)
    load_teacher(teacher)  # a bad spec fails here, before any worker starts
    jobs = [
        (variant, share, seed * 1000 + w, rollout_prob, explore, num_envs, seconds, teacher, rule_overrides)
        for w in range(workers)
    ]
    total = share * workers
    with progress_bar(total, f"paired {variant}", progress, unit="row") as bar:
        shown = [0]

        def show(rows: int) -> None:  # the last hands may overshoot the count: the bar stops at its end
            bar.update(min(rows, total) - shown[0])
            shown[0] = min(rows, total)

        if workers == 1:
            parts = [_dataset(jobs[0], show)]
        else:
            import multiprocessing

            context = multiprocessing.get_context("spawn")
            counter = context.Value("q", 0) if progress else None
            with context.Pool(workers, initializer=_init_worker, initargs=(counter,)) as pool:
                pending = pool.map_async(_worker, jobs)
                while not pending.ready():
                    pending.wait(0.5)
                    if counter is not None:
                        show(counter.value)
                parts = pending.get()
    offset = 0
    for part in parts:
        part["games"] = part["games"] + offset
        offset = int(part["games"].max()) + 1 if len(part["games"]) else offset
    return {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}


@dataclass
class Args:
    """Generate behaviour-cloning rows with paired rollouts (four heuristic players, batched) into an .npz."""

    out: str
    """output .npz (its folder is made before any work; .npz is appended if missing)"""
    variant: Literal["xinjiang", "changchun"] = "changchun"
    """rule set"""
    decisions: int = 250_000
    """rows to generate (decisions with more than one legal action, of hands that ended)"""
    seed: int = 1
    """seed of the deals and the sampling (worker w plays the seed seed * 1000 + w)"""
    workers: int = 1
    """processes generating rows (each about decisions / workers)"""
    num_envs: int = 16
    """games played side by side per process"""
    rollout_prob: float = 0.3
    """share of the decisions with candidates that get paired rollouts (0: plain BC data, much faster)"""
    explore: float = 0.05
    """probability that a decision is played at random (its label stays the teacher's)"""
    seconds: float | None = None
    """stop after this much wall time, whatever the row count (None: no limit)"""
    teacher: str = "heuristic"
    """agents.load spec of the rule-based players that play and label, e.g. 'heuristic?kongs="always"'"""
    progress: bool = True
    """show a progress bar of the rows (only when stderr is a terminal)"""


def check_args(args: Args) -> None:
    """Flag values (ValueError: exit 2), then the output folder (InputError: exit 1), before any work."""
    require(args.variant in ("xinjiang", "changchun"), f"--variant must be xinjiang or changchun, got {args.variant!r}")
    require(args.decisions >= 1, f"--decisions must be a positive int, got {args.decisions}")
    require(args.workers >= 1, f"--workers must be a positive int, got {args.workers}")
    require(args.num_envs >= 1, f"--num-envs must be a positive int, got {args.num_envs}")
    require(0.0 <= args.rollout_prob <= 1.0, f"--rollout-prob must be in [0, 1], got {args.rollout_prob}")
    require(0.0 <= args.explore <= 1.0, f"--explore must be in [0, 1], got {args.explore}")
    require(args.seconds is None or args.seconds > 0, f"--seconds must be positive, got {args.seconds}")
    try:
        load_teacher(args.teacher)
    except ValueError as error:
        raise ValueError(f"--teacher: {error}") from None
    prepare_output(args.out, "--out", ".npz")


def run(args: Args) -> Path:
    """Generate the rows and save them; returns the .npz path."""
    check_args(args)
    out = prepare_output(args.out, "--out", ".npz")
    start = time.time()
    data = generate(
        args.variant,
        args.decisions,
        args.seed,
        args.workers,
        args.rollout_prob,
        args.explore,
        num_envs=args.num_envs,
        seconds=args.seconds,
        teacher=args.teacher,
        progress=args.progress,
    )
    np.savez(out, **data)
    rolled = int((~np.isnan(data["qvalues"][:, 0])).sum())
    log.info("%d rows, %d with rollouts, %.0f s -> %s", len(data["actions"]), rolled, time.time() - start, out)
    return out


def main(argv: list[str] | None = None) -> Path:
    return script_main("python -m training.paired", Args, check_args, run, argv)


if __name__ == "__main__":
    main()
