"""Behaviour cloning (BC) of the heuristic, with an advantage head trained on paired rollouts.

Read top to bottom: ``Args``; data (`training.paired`: decisions of four `HeuristicAgent`
players with the analysis planes of `mahjong_env.features`, and at a share of the decisions
that have candidates, each candidate's points played out on the real deal; or a saved
``.npz`` of it), split by hand into train and validation; the network
(`agents.network.PolicyNetwork` reading the analysis planes, with an advantage head); the
loop: masked cross-entropy on the heuristic's action, plus ``advantage_coef`` × the squared
error of the advantage head's centred estimates against the candidates' centred rollout points
(in units of their spread over the data set: per-variant normalisation), plus, only if
``value_coef`` > 0, the value head on the points to the end of the hand; then the checkpoint,
the metrics log and the learning-curve PNG.

    python -m training.bc --variant changchun --decisions 250000 --data-workers 2
    python -m training.bc --variant changchun --data runs/data/changchun.npz --save-path runs/changchun_bc.pt

Logged: ``bc/val_accuracy`` (held-out agreement with the heuristic) and
``bc/val_agreement_{discard,claim,ready,kong,bao,win}`` per decision type;
``bc/val_adv_gain`` (on held-out rolled-out decisions, the rollout points of the action the
agent picks, `agents.torch_agent.choose_with_advantage`, minus those of the heuristic's action:
an estimate of points per such decision gained over the teacher), ``bc/val_adv_gain_best_margin``
and ``bc/val_adv_margin`` (the same with the margin of `MARGINS` that does best on these rows,
stored in the checkpoint) and ``bc/val_adv_oracle`` (the best candidate in hindsight: the
ceiling).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import random
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import torch
from torch import nn

from agents.network import PRIOR_ROWS, PolicyNetwork, masked_logits, prior_planes, save_checkpoint
from agents.torch_agent import choose_with_advantage, resolve_device
from training.cli import (
    InputError,
    MetricLogger,
    new_run_dir,
    plot_curves,
    prepare_output,
    progress_bar,
    require,
    require_file,
    script_main,
)
from training.paired import DECISION_KINDS, generate, relabel

__all__ = ["DATA_COLUMNS", "MARGINS", "Args", "check_args", "main", "train"]

log = logging.getLogger(__spec__.name if __spec__ else __name__)  # not __main__ under python -m

DATA_COLUMNS = ("planes", "scalars", "masks", "actions", "kinds", "returns", "games", "candidates", "qvalues")
"""Columns every data set needs (`training.paired.paired_dataset`); ``analysis`` and ``priors``
besides where the network reads them."""

MARGINS = (0.0, 0.05, 0.1, 0.2, 0.4, 0.8)
"""Advantage margins (in units of the rollout spread) tried on the validation rows; the best is
stored in the checkpoint as ``advantage_margin``."""


@dataclass
class Args:
    """Behaviour cloning of the heuristic agent, with an advantage head from paired rollouts."""

    variant: Literal["xinjiang", "changchun"] = "changchun"
    """rule set"""
    exp_name: str = "bc"
    """name of the experiment (the run directory is runs/{variant}__{exp_name}__{seed}__{time})"""
    seed: int = 1
    """seed of the data generation, the split, the initialisation and the batches"""
    torch_deterministic: bool = True
    """torch.backends.cudnn.deterministic"""
    device: str = "auto"
    """auto (CUDA when available), cpu, cuda or cuda:N"""
    threads: int = 1
    """torch CPU threads (1 is fastest for this small network on a shared CPU; 0: torch's default)"""
    decisions: int = 100_000
    """data rows to generate (decisions with more than one legal action)"""
    data: str | None = None
    """a saved data set (.npz written by python -m training.paired) instead of generating one"""
    data_workers: int = 1
    """processes generating the data"""
    num_envs: int = 16
    """games played side by side (per process) while generating data"""
    rollout_prob: float = 0.3
    """share of the decisions with candidates that get paired rollouts (0: plain BC data)"""
    explore: float = 0.05
    """probability that a data decision is played at random (the label stays the heuristic's)"""
    val_fraction: float = 0.1
    """share of hands held out for validation"""
    epochs: int = 6
    """passes over the training set"""
    batch_size: int = 512
    """minibatch size"""
    learning_rate: float = 1e-3
    """AdamW learning rate (cosine-annealed to 5% over the run)"""
    weight_decay: float = 1e-5
    """AdamW weight decay"""
    analysis: bool = True
    """read the analysis planes (mahjong_env.features); the agent computes them from its own view"""
    teacher: str = "heuristic"
    """agents.load spec of the rule-based players that generate the data and label it (heuristic with
    options, e.g. 'heuristic?kongs="always"'); ignored with --data"""
    prior_planes: bool = False
    """the network also reads the default heuristic's choice (agents.network.prior_planes) and learns where
    to depart from it (needs the analysis planes)"""
    departure_weight: float = 1.0
    """with --prior-planes, the loss weight of rows whose label departs from the default heuristic's
    choice (they are rare: a weight above 1 teaches the departures sooner)"""
    advantage_head: bool = True
    """train an advantage head on the paired rollouts (needs rollout rows in the data)"""
    advantage_coef: float = 1.0
    """weight of the advantage head's loss"""
    relabel: bool = False
    """policy improvement from the rollouts: adopt every decision class whose paired-rollout gain over
    the heuristic's choice has a 95% interval above zero (training.paired.relabel) as the training label"""
    value_coef: float = 0.0
    """weight of the value head's loss (0: off; a value loss in the shared trunk crowds out the policy)"""
    reward_scale: float = 0.125
    """points are multiplied by this for the value target (only with value_coef > 0)"""
    channels: int = 32
    """convolution channels of the network"""
    blocks: int = 2
    """residual blocks of the network"""
    hidden: int = 256
    """width of the shared fully connected layer"""
    gate_deals: int = 0
    """after training, play the checkpoint 1-vs-3 against the heuristic on this many deals (4 hands
    each, training.duplicate) and record the result in its metadata (0: no gate)"""
    out_dir: str = "runs"
    """where run directories go"""
    save_path: str | None = None
    """checkpoint path, for commands that follow (its folder is made before any work; default: the run
    directory's bc.pt)"""
    tensorboard: bool = True
    """log to TensorBoard as well as metrics.csv"""
    progress: bool = True
    """show progress bars of the data and the training steps (only when stderr is a terminal)"""


def check_args(args: Args) -> None:
    """Everything that can be checked before anything is created: the flag values (ValueError
    naming the flag), then the data set's columns and the checkpoint's folder (`InputError`)."""
    require(args.variant in ("xinjiang", "changchun"), f"--variant must be xinjiang or changchun, got {args.variant!r}")
    require(args.data is not None or args.decisions >= 1, f"--decisions must be a positive int, got {args.decisions}")
    require(args.data_workers >= 1, f"--data-workers must be a positive int, got {args.data_workers}")
    require(args.num_envs >= 1, f"--num-envs must be a positive int, got {args.num_envs}")
    require(0.0 <= args.rollout_prob <= 1.0, f"--rollout-prob must be in [0, 1], got {args.rollout_prob}")
    require(0.0 <= args.explore <= 1.0, f"--explore must be in [0, 1], got {args.explore}")
    require(0.0 < args.val_fraction < 1.0, f"--val-fraction must be in (0, 1), got {args.val_fraction}")
    require(args.epochs >= 1, f"--epochs must be a positive int, got {args.epochs}")
    require(args.batch_size >= 1, f"--batch-size must be a positive int, got {args.batch_size}")
    require(args.learning_rate > 0, f"--learning-rate must be positive, got {args.learning_rate}")
    require(args.advantage_coef >= 0 and args.value_coef >= 0, "--advantage-coef and --value-coef must be >= 0")
    require(
        args.channels >= 1 and args.blocks >= 0 and args.hidden >= 1, "--channels/--hidden must be >= 1, --blocks >= 0"
    )
    require(args.gate_deals >= 0, f"--gate-deals must be >= 0, got {args.gate_deals}")
    require(not args.prior_planes or args.analysis, "--prior-planes needs the analysis planes (drop --no-analysis)")
    require(args.departure_weight > 0, f"--departure-weight must be positive, got {args.departure_weight}")
    if args.data is None:
        from training.paired import load_teacher

        try:
            load_teacher(args.teacher)
        except ValueError as error:
            raise ValueError(f"--teacher: {error}") from None
    else:
        _check_data(args)
    if args.save_path is not None:
        prepare_output(args.save_path, "--save-path")


def _check_data(args: Args) -> None:
    """`InputError` unless ``--data`` is an .npz with the columns this run reads."""
    path = require_file(args.data, "--data")  # type: ignore[arg-type]
    try:
        with np.load(path) as saved:
            columns = set(saved.files)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as error:
        raise InputError(f"--data {str(path)!r} is not an .npz written by training.paired ({error})") from None
    missing = [c for c in DATA_COLUMNS if c not in columns]
    if missing:
        raise InputError(f"--data {str(path)!r} lacks the columns {missing}: write it with python -m training.paired")
    if args.analysis and "analysis" not in columns:
        raise InputError(f"--data {str(path)!r} has no analysis planes: pass --no-analysis, or generate it again")
    if args.prior_planes and "priors" not in columns:
        raise InputError(f"--data {str(path)!r} has no priors column (made before prior planes): generate it again")


def _batches(n: int, batch_size: int, rng: np.random.Generator | None) -> list[np.ndarray]:
    order = rng.permutation(n) if rng is not None else np.arange(n)
    return [order[i : i + batch_size] for i in range(0, n, batch_size)]


def _inputs(
    data: dict[str, np.ndarray], index: np.ndarray, analysis: bool, device: torch.device, prior: bool = False
) -> torch.Tensor:
    planes = torch.from_numpy(data["planes"][index]).float()
    scalars = torch.from_numpy(data["scalars"][index]).view(len(index), 3, -1)
    parts = [planes, scalars]
    if analysis:
        parts.append(torch.from_numpy(data["analysis"][index].astype(np.float32)))
    if prior:
        parts.append(torch.from_numpy(prior_planes(data["priors"][index])))
    return torch.cat(parts, dim=1).to(device)


def _advantage_loss(adv: torch.Tensor, cands: torch.Tensor, qvals: torch.Tensor, scale: float) -> torch.Tensor:
    """Mean squared error of the centred advantage estimates of the candidates against their
    centred rollout points / ``scale``, over rows with rollouts (0 if none)."""
    valid = cands >= 0
    if not valid.any():
        return adv.new_zeros(())
    pred = adv.gather(1, cands.clamp(min=0).long())
    target = torch.nan_to_num(qvals, nan=0.0) / scale
    count = valid.sum(1, keepdim=True).clamp(min=1)
    pred_c = pred - (pred * valid).sum(1, keepdim=True) / count
    target_c = target - (target * valid).sum(1, keepdim=True) / count
    err = ((pred_c - target_c) ** 2) * valid
    rows = valid.any(1)
    return err[rows].sum() / valid[rows].sum()


def evaluate(
    network: PolicyNetwork, data: dict[str, np.ndarray], index: np.ndarray, args: Args, device: torch.device
) -> dict[str, float]:
    """Held-out agreement (overall and per decision type), losses and the advantage head's
    estimated gain over the heuristic on rolled-out decisions."""
    network.eval()
    total, correct, loss_sum = 0, 0, 0.0
    kinds = data["kinds"][index]
    agree = np.zeros(len(DECISION_KINDS))
    seen = np.zeros(len(DECISION_KINDS))
    gains = np.zeros(len(MARGINS))
    oracle, rolled = 0.0, 0
    departures = wanted = departed_right = 0
    with torch.no_grad():
        for batch in _batches(len(index), 2048, None):
            rows = index[batch]
            obs = _inputs(data, rows, args.analysis, device, args.prior_planes)
            mask = torch.from_numpy(data["masks"][rows]).to(device)
            action = torch.from_numpy(data["actions"][rows]).to(device)
            if network.advantage_head:
                logits, adv = network.policy_and_advantages(obs)
            else:
                logits, _ = network(obs)
                adv = None
            logits = masked_logits(logits, mask)
            loss_sum += nn.functional.cross_entropy(logits, action, reduction="sum").item()
            choice = logits.argmax(1).cpu().numpy()
            hit = choice == action.cpu().numpy()
            correct += int(hit.sum())
            total += len(rows)
            np.add.at(agree, kinds[batch], hit)
            np.add.at(seen, kinds[batch], 1)
            if "priors" in data:
                prior = data["priors"][rows]
                label = data["actions"][rows]
                departures += int((choice != prior).sum())
                wanted += int((label != prior).sum())
                departed_right += int(((label != prior) & hit).sum())
            if adv is not None:
                cands = data["candidates"][rows]
                q = data["qvalues"][rows]
                a = adv.cpu().numpy()
                labels = data["actions"][rows]
                for r in np.flatnonzero(~np.isnan(q[:, 0])):
                    valid = cands[r] >= 0
                    cs, qs = [int(c) for c in cands[r][valid]], q[r][valid]
                    if labels[r] not in cs:
                        continue
                    base = qs[cs.index(labels[r])]
                    for m, margin in enumerate(MARGINS):
                        picked = choose_with_advantage(int(choice[r]), cs, a[r], margin)  # always a candidate
                        gains[m] += qs[cs.index(picked)] - base
                    oracle += qs.max() - base
                    rolled += 1
    network.train()
    out = {"accuracy": correct / max(total, 1), "loss": loss_sum / max(total, 1)}
    for k, name in enumerate(DECISION_KINDS):
        if seen[k]:
            out[f"agreement_{name}"] = agree[k] / seen[k]
    if "priors" in data and total:
        out["departure_rate"] = departures / total  # the network's choices unlike the default heuristic's
        if wanted:
            out["departure_recall"] = departed_right / wanted  # labelled departures it makes
        if departures:
            out["departure_precision"] = departed_right / departures  # its departures that the label makes
    if rolled:
        out["adv_gain"] = gains[0] / rolled
        best = int(np.argmax(gains))
        out["adv_gain_best_margin"] = gains[best] / rolled
        out["adv_margin"] = MARGINS[best]
        out["adv_oracle"] = oracle / rolled
        out["adv_rows"] = rolled
    return out


def train(args: Args) -> Path:
    """Generate (or load) the data, train, write the checkpoint, metrics and curve; returns
    the checkpoint path."""
    check_args(args)
    run_dir = new_run_dir(args.out_dir, args.variant, args.exp_name, args.seed)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.backends.cudnn.deterministic = args.torch_deterministic
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    device = resolve_device(args.device)
    logger = MetricLogger(run_dir, tensorboard=args.tensorboard)
    logger.add_text("hyperparameters", json.dumps(dataclasses.asdict(args), indent=1))
    start = time.time()

    # data: heuristic self-play with paired rollouts, split by hand
    if args.data is not None:
        with np.load(args.data) as saved:
            data = {k: saved[k] for k in saved.files}
    else:
        data = generate(
            args.variant,
            args.decisions,
            args.seed,
            args.data_workers,
            args.rollout_prob,
            args.explore,
            num_envs=args.num_envs,
            teacher=args.teacher,
            progress=args.progress,
        )
    rolled = ~np.isnan(data["qvalues"][:, 0])
    use_adv = args.advantage_head and bool(rolled.any())
    data_seconds = time.time() - start
    rng = np.random.default_rng(args.seed)
    hand_ids = np.unique(data["games"])
    val_hands = rng.choice(hand_ids, size=max(1, int(len(hand_ids) * args.val_fraction)), replace=False)
    is_val = np.isin(data["games"], val_hands)
    train_idx, val_idx = np.flatnonzero(~is_val), np.flatnonzero(is_val)
    adopted: list[dict] = []
    if args.relabel:  # the training split only: held-out agreement stays agreement with the heuristic
        data["actions"], adopted = relabel(data, train_idx)
        for item in adopted:
            log.info("relabel %s", item)
    q = data["qvalues"][rolled & ~is_val]
    centred = q - np.nanmean(q, axis=1, keepdims=True)
    adv_scale = (
        float(np.nanstd(centred)) if use_adv and np.isfinite(np.nanstd(centred)) and np.nanstd(centred) > 0 else 1.0
    )
    logger.scalar("bc/train_samples", len(train_idx), 0)
    logger.scalar("bc/val_samples", len(val_idx), 0)
    logger.scalar("bc/rollout_rows", int(rolled.sum()), 0)
    logger.scalar("charts/data_seconds", data_seconds, 0)

    # network and optimiser
    extra = (data["analysis"].shape[1] if args.analysis else 0) + (PRIOR_ROWS if args.prior_planes else 0)
    network = PolicyNetwork(
        args.channels,
        args.blocks,
        args.hidden,
        extra_planes=extra,
        advantage_head=use_adv,
        prior_planes=args.prior_planes,
    ).to(device)
    optimizer = torch.optim.AdamW(network.parameters(), lr=args.learning_rate, weight_decay=args.weight_decay)
    batches_per_epoch = max(1, -(-len(train_idx) // args.batch_size))
    total_updates = args.epochs * batches_per_epoch
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, total_updates, eta_min=args.learning_rate * 0.05)

    # loop
    step = 0
    metrics = evaluate(network, data, val_idx, args, device)
    with progress_bar(total_updates, f"bc train {args.variant}", args.progress) as bar:
        for epoch in range(args.epochs):
            for batch in _batches(len(train_idx), args.batch_size, rng):
                rows = train_idx[batch]
                obs = _inputs(data, rows, args.analysis, device, args.prior_planes)
                mask = torch.from_numpy(data["masks"][rows]).to(device)
                action = torch.from_numpy(data["actions"][rows]).to(device)
                if use_adv:
                    logits, adv = network.policy_and_advantages(obs)
                    cands = torch.from_numpy(data["candidates"][rows].astype(np.int64)).to(device)
                    qvals = torch.from_numpy(data["qvalues"][rows]).to(device)
                    adv_loss = _advantage_loss(adv, cands, qvals, adv_scale)
                else:
                    logits, _ = network(obs)
                    adv_loss = logits.new_zeros(())
                logits = masked_logits(logits, mask)
                if args.prior_planes and args.departure_weight != 1.0:
                    departs = torch.from_numpy(data["priors"][rows] != data["actions"][rows]).to(device)
                    weight = 1.0 + (args.departure_weight - 1.0) * departs.float()
                    ce = nn.functional.cross_entropy(logits, action, reduction="none")
                    policy_loss = (ce * weight).sum() / weight.sum()
                else:
                    policy_loss = nn.functional.cross_entropy(logits, action)
                loss = policy_loss + args.advantage_coef * adv_loss
                if args.value_coef > 0:
                    _, value = network(obs)
                    ret = torch.from_numpy(data["returns"][rows]).to(device)
                    loss = loss + args.value_coef * ((value - ret * args.reward_scale) ** 2).mean()
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(network.parameters(), 1.0)
                optimizer.step()
                scheduler.step()
                step += len(batch)
                if bar.n % 20 == 0:
                    logger.scalar("bc/train_loss", policy_loss.item(), step)
                    logger.scalar("bc/train_accuracy", (logits.argmax(1) == action).float().mean().item(), step)
                    logger.scalar("bc/advantage_loss", adv_loss.item(), step)
                    logger.scalar("charts/learning_rate", scheduler.get_last_lr()[0], step)
                bar.update(1)
            metrics = evaluate(network, data, val_idx, args, device)
            for key, value_ in metrics.items():
                logger.scalar(f"bc/val_{key}", value_, step)
            bar.set_postfix(
                epoch=epoch + 1, val_acc=f"{metrics['accuracy']:.3f}", gain=f"{metrics.get('adv_gain', 0):+.3f}"
            )
    seconds = time.time() - start
    logger.scalar("charts/wall_seconds", seconds, step)

    # checkpoint, curve
    save_path = Path(args.save_path) if args.save_path else run_dir / "bc.pt"
    save_checkpoint(
        save_path,
        network.cpu(),
        args.variant,
        {
            "trainer": "bc",
            "args": dataclasses.asdict(args),
            "val": {k: float(v) for k, v in metrics.items()},
            "advantage_scale": adv_scale,
            "relabelled": adopted,
            "advantage_margin": float(metrics.get("adv_margin", 0.0)),
            "train_samples": len(train_idx),
            "rollout_rows": int(rolled.sum()),
            "wall_seconds": round(seconds, 1),
        },
    )
    if args.gate_deals > 0:
        from training.duplicate import gate_checkpoint

        gate = gate_checkpoint(args.variant, save_path, args.gate_deals, args.seed, progress=args.progress)
        low, high = gate.ci("candidate")
        log.info(
            "gate 1-vs-3 against the heuristic: %+.3f [%+.3f, %+.3f] over %d hands",
            gate.mean("candidate"),
            low,
            high,
            gate.hands,
        )
        logger.scalar("eval/points_vs_heuristic", gate.mean("candidate"), step)
        payload = torch.load(save_path, weights_only=True)
        payload["metadata"]["gate"] = {
            "points_vs_heuristic": gate.mean("candidate"),
            "ci95": [low, high],
            "hands": gate.hands,
        }
        torch.save(payload, save_path)
    plot_curves(
        logger.history,
        ["bc/train_loss", "bc/val_accuracy", "bc/advantage_loss", "bc/val_adv_gain"],
        run_dir / "learning_curve.png",
        f"BC of the heuristic with paired-rollout advantages, {args.variant}",
        smooth=5,
    )
    logger.close()
    shown = ", ".join(f"{k} {v:.3f}" for k, v in metrics.items())
    log.info("%s on %d held-out decisions; run directory %s", shown, len(val_idx), run_dir)
    return save_path


def main(argv: list[str] | None = None) -> Path:
    """The command line: the checkpoint's path on stdout."""
    return script_main("python -m training.bc", Args, check_args, train, argv)


if __name__ == "__main__":
    main()
