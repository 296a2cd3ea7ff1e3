"""Behaviour cloning (BC) of the heuristic agent: the first policy for PPO to start from.

Read top to bottom: ``Args``; data (decisions of four `HeuristicAgent` players, from
`training.rollout.heuristic_dataset`, split by game into train and validation); the network
(`agents.network.PolicyNetwork`); the loop (masked cross-entropy on the heuristic's action plus
``value_coef`` × the value head's squared error on the decision's Monte Carlo return in points
× ``reward_scale``, the same scale PPO uses); then the checkpoint, the metrics log and the
learning-curve PNG.

    python -m training.bc --variant changchun --decisions 200000 --epochs 4

Only decisions with more than one legal action are kept; the reported ``bc/val_accuracy`` is
the share of held-out decisions where the masked argmax equals the heuristic's action.
"""

from __future__ import annotations

import dataclasses
import json
import random
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from agents.network import PolicyNetwork, masked_logits, save_checkpoint
from agents.torch_agent import resolve_device
from training.cli import MetricLogger, parse_args, plot_curves
from training.rollout import heuristic_dataset

__all__ = ["Args", "main", "train"]


@dataclass
class Args:
    """Behaviour cloning of the heuristic agent."""

    variant: str = "changchun"
    """rule set: xinjiang or changchun"""
    exp_name: str = "bc"
    """name of the experiment (the run directory is runs/{variant}__{exp_name}__{seed})"""
    seed: int = 1
    """seed of the data generation, the split, the initialisation and the batches"""
    torch_deterministic: bool = True
    """torch.backends.cudnn.deterministic"""
    device: str = "auto"
    """auto (CUDA when available), cpu, cuda or cuda:N"""
    threads: int = 1
    """torch CPU threads (1 is fastest for this small network on a shared CPU; 0: torch's default)"""
    decisions: int = 100_000
    """batched env decisions to play for the data set (single-choice decisions are dropped)"""
    num_envs: int = 32
    """games played side by side while generating data"""
    explore: float = 0.05
    """probability that a data decision is played at random (the label stays the heuristic's)"""
    val_fraction: float = 0.1
    """share of games held out for validation"""
    epochs: int = 4
    """passes over the training set"""
    batch_size: int = 512
    """minibatch size"""
    learning_rate: float = 1e-3
    """Adam learning rate (cosine-annealed to 5% over the run)"""
    weight_decay: float = 1e-5
    """AdamW weight decay"""
    value_coef: float = 0.25
    """weight of the value head's loss"""
    reward_scale: float = 0.125
    """points are multiplied by this for the value target (1/8, as in PPO)"""
    channels: int = 32
    """convolution channels of the network"""
    blocks: int = 2
    """residual blocks of the network"""
    hidden: int = 256
    """width of the shared fully connected layer"""
    out_dir: str = "runs"
    """where run directories go"""
    save_path: str | None = None
    """checkpoint path (default: the run directory's bc.pt)"""
    tensorboard: bool = True
    """log to TensorBoard as well as metrics.csv"""
    progress: bool = True
    """show tqdm progress bars"""


def _batches(n: int, batch_size: int, rng: np.random.Generator | None) -> list[np.ndarray]:
    order = rng.permutation(n) if rng is not None else np.arange(n)
    return [order[i : i + batch_size] for i in range(0, n, batch_size)]


def _to_tensors(data: dict[str, np.ndarray], index: np.ndarray, device: torch.device) -> tuple[torch.Tensor, ...]:
    planes = torch.from_numpy(data["planes"][index]).float()
    scalars = torch.from_numpy(data["scalars"][index]).view(len(index), 3, -1)
    obs = torch.cat([planes, scalars], dim=1).to(device)
    mask = torch.from_numpy(data["masks"][index]).to(device)
    action = torch.from_numpy(data["actions"][index]).to(device)
    ret = torch.from_numpy(data["returns"][index]).to(device)
    return obs, mask, action, ret


def evaluate(network: PolicyNetwork, data: dict[str, np.ndarray], index: np.ndarray, args: Args, device: torch.device) -> dict[str, float]:
    """Masked cross-entropy, accuracy and value error of ``network`` on rows ``index``."""
    network.eval()
    total, correct, loss_sum, value_sum = 0, 0, 0.0, 0.0
    with torch.no_grad():
        for batch in _batches(len(index), 2048, None):
            obs, mask, action, ret = _to_tensors(data, index[batch], device)
            logits, value = network(obs)
            logits = masked_logits(logits, mask)
            loss_sum += nn.functional.cross_entropy(logits, action, reduction="sum").item()
            value_sum += ((value - ret * args.reward_scale) ** 2).sum().item()
            correct += (logits.argmax(1) == action).sum().item()
            total += len(batch)
    network.train()
    return {"accuracy": correct / max(total, 1), "loss": loss_sum / max(total, 1), "value_mse": value_sum / max(total, 1)}


def train(args: Args) -> Path:
    """Generate the data, train, write the checkpoint, metrics and curve; returns the checkpoint path."""
    run_dir = Path(args.out_dir) / f"{args.variant}__{args.exp_name}__{args.seed}"
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

    # data: heuristic self-play, split by game
    with tqdm(total=args.decisions, desc=f"bc data {args.variant}", disable=not args.progress, unit="dec") as bar:
        data = heuristic_dataset(
            args.variant, args.decisions, args.seed, num_envs=args.num_envs, explore=args.explore, progress=bar.update
        )
    data_seconds = time.time() - start
    rng = np.random.default_rng(args.seed)
    game_ids = np.unique(data["games"])
    val_games = rng.choice(game_ids, size=max(1, int(len(game_ids) * args.val_fraction)), replace=False)
    is_val = np.isin(data["games"], val_games)
    train_idx, val_idx = np.flatnonzero(~is_val), np.flatnonzero(is_val)
    logger.scalar("bc/train_samples", len(train_idx), 0)
    logger.scalar("bc/val_samples", len(val_idx), 0)
    logger.scalar("charts/data_decisions_per_s", args.decisions / max(data_seconds, 1e-9), 0)

    # network and optimiser
    network = PolicyNetwork(args.channels, args.blocks, args.hidden).to(device)
    optimizer = torch.optim.AdamW(network.parameters(), lr=args.learning_rate, weight_decay=args.weight_decay)
    batches_per_epoch = max(1, -(-len(train_idx) // args.batch_size))
    total_updates = args.epochs * batches_per_epoch
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, total_updates, eta_min=args.learning_rate * 0.05)

    # loop
    step = 0
    metrics = evaluate(network, data, val_idx, args, device)
    logger.scalar("bc/val_accuracy", metrics["accuracy"], 0)
    with tqdm(total=total_updates, desc=f"bc train {args.variant}", disable=not args.progress, unit="batch") as bar:
        for epoch in range(args.epochs):
            for batch in _batches(len(train_idx), args.batch_size, rng):
                obs, mask, action, ret = _to_tensors(data, train_idx[batch], device)
                logits, value = network(obs)
                logits = masked_logits(logits, mask)
                policy_loss = nn.functional.cross_entropy(logits, action)
                value_loss = ((value - ret * args.reward_scale) ** 2).mean()
                loss = policy_loss + args.value_coef * value_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(network.parameters(), 1.0)
                optimizer.step()
                scheduler.step()
                step += len(batch)
                if bar.n % 20 == 0:
                    accuracy = (logits.argmax(1) == action).float().mean().item()
                    logger.scalar("bc/train_loss", policy_loss.item(), step)
                    logger.scalar("bc/train_accuracy", accuracy, step)
                    logger.scalar("bc/value_loss", value_loss.item(), step)
                    logger.scalar("charts/learning_rate", scheduler.get_last_lr()[0], step)
                bar.update(1)
            metrics = evaluate(network, data, val_idx, args, device)
            for key, value_ in metrics.items():
                logger.scalar(f"bc/val_{key}", value_, step)
            bar.set_postfix(epoch=epoch + 1, val_acc=f"{metrics['accuracy']:.3f}")
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
            "val_accuracy": metrics["accuracy"],
            "val_loss": metrics["loss"],
            "train_samples": len(train_idx),
            "wall_seconds": round(seconds, 1),
        },
    )
    plot_curves(
        logger.history,
        ["bc/train_loss", "bc/train_accuracy", "bc/val_accuracy", "bc/value_loss"],
        run_dir / "learning_curve.png",
        f"BC of the heuristic, {args.variant}",
        smooth=5,
    )
    logger.close()
    print(f"bc: val accuracy {metrics['accuracy']:.3f} on {len(val_idx)} decisions; checkpoint {save_path}")
    return save_path


def main(argv: list[str] | None = None) -> Path:
    return train(parse_args(Args, argv))


if __name__ == "__main__":
    main()
