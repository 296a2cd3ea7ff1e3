"""PPO self-play with action masking (CleanRL's ``ppo.py`` shape), usually from a BC checkpoint.

Read top to bottom: ``Args``; setup (seeds, device, network from ``--init`` or fresh, optional
centralised critic, opponent pool, games); then per update: collect a rollout
(`training.rollout.SelfPlayRunner`: ``num_envs`` games × ``num_steps`` batched decisions; the
learner's rows are kept, with their action masks), GAE over each seat's own decisions, and
``update_epochs`` epochs of clipped PPO on minibatches with the stored masks re-applied to the
new logits; logging; snapshots into the opponent pool; the checkpoint and the learning curve.

Rewards are the settlement points of RULES.md R12 (kong payments and the hand's settlement,
credited to the decision of the seat that receives them) multiplied by ``reward_scale``
(default 1/8: a typical hand moves 1–8 points per seat, so scaled returns stay near [-1, 1]).

``--central-critic`` replaces the value head by `agents.network.StateCritic` on the env's
privileged ``state()`` (every concealed hand and the wall) plus the deciding seat; it is used
only for training targets and never enters the checkpoint's policy.

    python -m training.ppo --variant changchun --total-steps 20000
    python -m training.ppo --variant xinjiang --init agents/checkpoints/xinjiang_bc.pt

Metrics (TensorBoard and ``metrics.csv`` in ``runs/{variant}__{exp_name}__{seed}``):
``charts/episodic_return`` (mean learner points per game finished in the update),
``charts/return_vs_{kind}`` and ``charts/win_rate_vs_{kind}`` per opponent kind, ``charts/SPS`` (env decisions per second, all seats), ``charts/learner_SPS``,
``charts/env_decisions_per_s`` (during collection only), ``losses/*`` as in CleanRL
(``approx_kl``, ``clipfrac``, ``explained_variance`` …). ``learning_curve.png`` is written at
the end.
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

from agents.network import (
    PolicyNetwork,
    StateCritic,
    load_checkpoint,
    masked_logits,
    save_checkpoint,
)
from agents.torch_agent import resolve_device
from mahjong_env.observation import STATE_SIZE
from training.cli import MetricLogger, parse_args, plot_curves
from training.rollout import OpponentPool, Rollout, SelfPlayRunner

__all__ = ["Args", "main", "train"]


@dataclass
class Args:
    """PPO self-play with action masking."""

    variant: str = "changchun"
    """rule set: xinjiang or changchun"""
    exp_name: str = "ppo"
    """name of the experiment (the run directory is runs/{variant}__{exp_name}__{seed})"""
    seed: int = 1
    """seed of the games, the opponent draws, the initialisation and the action sampling"""
    torch_deterministic: bool = True
    """torch.backends.cudnn.deterministic"""
    device: str = "auto"
    """auto (CUDA when available), cpu, cuda or cuda:N"""
    threads: int = 1
    """torch CPU threads (1 is fastest for this small network on a shared CPU; 0: torch's default)"""
    total_steps: int = 200_000
    """batched env decisions to play (all seats, learner or not)"""
    num_envs: int = 16
    """games played side by side"""
    num_steps: int = 64
    """batched decisions per game per rollout (rollout rows = num_envs * num_steps)"""
    rollout_workers: int = 0
    """processes stepping the games (mahjong_env.workers.ParallelVectorMahjong); 0: in this process"""
    backend: str = "local"
    """where rollout workers run: local (processes, shared memory) or ray (Ray actors)"""
    learning_rate: float = 1e-4
    """Adam learning rate"""
    anneal_lr: bool = True
    """anneal the learning rate linearly to zero"""
    gamma: float = 0.995
    """discount per decision of the same seat"""
    gae_lambda: float = 0.95
    """lambda of GAE"""
    num_minibatches: int = 4
    """minibatches per epoch (over the learner rows of the rollout)"""
    update_epochs: int = 4
    """epochs per update"""
    norm_adv: bool = True
    """normalise advantages per minibatch"""
    clip_coef: float = 0.2
    """surrogate clipping coefficient"""
    clip_vloss: bool = True
    """clip the value loss as in CleanRL"""
    ent_coef: float = 0.005
    """entropy bonus coefficient"""
    vf_coef: float = 0.5
    """value loss coefficient"""
    max_grad_norm: float = 0.5
    """gradient clipping norm"""
    target_kl: float | None = 0.03
    """stop an update's epochs early when the approximate KL exceeds this (None: never)"""
    reward_scale: float = 0.125
    """points are multiplied by this to make rewards (1/8)"""
    init: str | None = None
    """checkpoint to start from (a BC checkpoint); None: a fresh network"""
    central_critic: bool = False
    """train a centralised critic on the env's privileged state() instead of the value head"""
    critic_hidden: int = 256
    """width of the centralised critic"""
    opp_heuristic: float = 0.5
    """weight of games against three heuristic agents"""
    opp_random: float = 0.1
    """weight of games against three random agents"""
    opp_snapshot: float = 0.2
    """weight of games against three past snapshots of the learner"""
    opp_self: float = 0.2
    """weight of pure self-play games (the current learner in all four seats)"""
    snapshot_every: int = 5
    """updates between snapshots added to the opponent pool"""
    max_snapshots: int = 5
    """snapshots kept in the pool (oldest dropped)"""
    checkpoint_every: int = 0
    """updates between intermediate checkpoints in the run directory (0: only the final one)"""
    channels: int = 32
    """convolution channels of a fresh network"""
    blocks: int = 2
    """residual blocks of a fresh network"""
    hidden: int = 256
    """shared layer width of a fresh network"""
    eval_hands: int = 0
    """after training, duplicate-evaluate the final policy against the heuristic over this many hands"""
    out_dir: str = "runs"
    """where run directories go"""
    save_path: str | None = None
    """final checkpoint path (default: the run directory's ppo.pt)"""
    tensorboard: bool = True
    """log to TensorBoard as well as metrics.csv"""
    progress: bool = True
    """show a tqdm progress bar"""


def train(args: Args) -> Path:
    """Run PPO; returns the final checkpoint's path."""
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

    # network (and centralised critic)
    if args.init:
        network, meta = load_checkpoint(args.init, device)
        if meta.get("variant") not in (None, args.variant):
            print(f"ppo: warning: --init was trained on {meta.get('variant')!r}, training on {args.variant!r}")
    else:
        network = PolicyNetwork(args.channels, args.blocks, args.hidden).to(device)
    network.train()
    critic = StateCritic(STATE_SIZE, args.critic_hidden).to(device) if args.central_critic else None
    params = list(network.parameters()) + (list(critic.parameters()) if critic is not None else [])
    optimizer = torch.optim.Adam(params, lr=args.learning_rate, eps=1e-5)

    # opponents and games
    pool = OpponentPool(
        {"heuristic": args.opp_heuristic, "random": args.opp_random, "snapshot": args.opp_snapshot, "self": args.opp_self},
        seed=args.seed,
        max_snapshots=args.max_snapshots,
    )
    pool.add_snapshot(network)
    runner = SelfPlayRunner(args.variant, args.num_envs, args.seed, pool, args.rollout_workers, args.backend)
    rollout = Rollout(args.num_steps, args.num_envs, central_critic=args.central_critic)
    batch_rows = args.num_envs * args.num_steps
    num_updates = max(1, args.total_steps // batch_rows)

    global_step = 0
    learner_steps = 0
    start = time.time()
    recent: list[dict] = []
    bar = tqdm(total=num_updates * batch_rows, desc=f"ppo {args.variant}", disable=not args.progress, unit="dec")
    for update in range(1, num_updates + 1):
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = (1.0 - (update - 1.0) / num_updates) * args.learning_rate

        # rollout
        network.eval()
        collect_start = time.time()
        finished = runner.collect(network, rollout, device, critic)
        collect_seconds = time.time() - collect_start
        network.train()
        global_step += batch_rows
        rows = rollout.learner.view(-1).nonzero().squeeze(1)
        learner_steps += len(rows)
        recent.extend(finished)
        if finished:
            logger.scalar("charts/episodic_return", np.mean([v for g in finished for v in g["returns"]]), global_step)
            logger.scalar("charts/games", len(finished), global_step)
        for kind in sorted({g["kind"] for g in finished}):
            games = [g for g in finished if g["kind"] == kind]
            logger.scalar(f"charts/return_vs_{kind}", np.mean([v for g in games for v in g["returns"]]), global_step)
            logger.scalar(f"charts/win_rate_vs_{kind}", np.mean([g["winner_is_learner"] for g in games]), global_step)

        # GAE over each seat's own decisions
        advantages, returns = rollout.advantages(args.gamma, args.gae_lambda, args.reward_scale)
        b_obs = rollout.obs.view(-1, *rollout.obs.shape[2:])[rows].to(device)
        b_masks = rollout.masks.view(-1, rollout.masks.shape[-1])[rows].to(device)
        b_actions = rollout.actions.view(-1)[rows].to(device)
        b_logprobs = rollout.logprobs.view(-1)[rows].to(device)
        b_values = rollout.values.view(-1)[rows].to(device)
        b_advantages = advantages.view(-1)[rows].to(device)
        b_returns = returns.view(-1)[rows].to(device)
        if critic is not None:
            assert rollout.states is not None
            b_states = rollout.states.view(-1, STATE_SIZE)[rows].to(device)
            b_seats = rollout.seats.view(-1)[rows].to(device)

        # PPO update with the stored masks
        n = len(rows)
        minibatch = max(1, n // args.num_minibatches)
        clipfracs: list[float] = []
        approx_kl = old_approx_kl = torch.zeros(())
        pg_loss = v_loss = entropy_loss = torch.zeros(())
        for _epoch in range(args.update_epochs):
            order = torch.randperm(n, device=device)
            for begin in range(0, n, minibatch):
                mb = order[begin : begin + minibatch]
                logits, newvalue = network(b_obs[mb])
                if critic is not None:
                    newvalue = critic(b_states[mb], b_seats[mb])
                dist = torch.distributions.Categorical(logits=masked_logits(logits, b_masks[mb]))
                newlogprob = dist.log_prob(b_actions[mb])
                entropy = dist.entropy()
                logratio = newlogprob - b_logprobs[mb]
                ratio = logratio.exp()
                with torch.no_grad():
                    old_approx_kl = (-logratio).mean()
                    approx_kl = ((ratio - 1) - logratio).mean()
                    clipfracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())
                mb_adv = b_advantages[mb]
                if args.norm_adv and len(mb) > 1:
                    mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
                pg_loss = torch.max(-mb_adv * ratio, -mb_adv * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)).mean()
                if args.clip_vloss:
                    v_unclipped = (newvalue - b_returns[mb]) ** 2
                    v_clipped = b_values[mb] + torch.clamp(newvalue - b_values[mb], -args.clip_coef, args.clip_coef)
                    v_loss = 0.5 * torch.max(v_unclipped, (v_clipped - b_returns[mb]) ** 2).mean()
                else:
                    v_loss = 0.5 * ((newvalue - b_returns[mb]) ** 2).mean()
                entropy_loss = entropy.mean()
                loss = pg_loss - args.ent_coef * entropy_loss + v_loss * args.vf_coef
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(params, args.max_grad_norm)
                optimizer.step()
            if args.target_kl is not None and approx_kl.item() > args.target_kl:
                break

        # logging, snapshots, checkpoints
        y_pred, y_true = b_values.cpu().numpy(), b_returns.cpu().numpy()
        var_y = np.var(y_true)
        explained_var = np.nan if var_y == 0 else 1 - np.var(y_true - y_pred) / var_y
        elapsed = time.time() - start
        logger.scalar("charts/learning_rate", optimizer.param_groups[0]["lr"], global_step)
        logger.scalar("losses/value_loss", v_loss.item(), global_step)
        logger.scalar("losses/policy_loss", pg_loss.item(), global_step)
        logger.scalar("losses/entropy", entropy_loss.item(), global_step)
        logger.scalar("losses/old_approx_kl", old_approx_kl.item(), global_step)
        logger.scalar("losses/approx_kl", approx_kl.item(), global_step)
        logger.scalar("losses/clipfrac", float(np.mean(clipfracs)) if clipfracs else 0.0, global_step)
        logger.scalar("losses/explained_variance", explained_var, global_step)
        logger.scalar("charts/SPS", global_step / elapsed, global_step)
        logger.scalar("charts/learner_SPS", learner_steps / elapsed, global_step)
        logger.scalar("charts/env_decisions_per_s", batch_rows / max(collect_seconds, 1e-9), global_step)
        if update % args.snapshot_every == 0:
            pool.add_snapshot(network)
        if args.checkpoint_every and update % args.checkpoint_every == 0:
            save_checkpoint(run_dir / f"ppo_{global_step}.pt", network, args.variant, {"trainer": "ppo", "global_step": global_step})
        vs_heuristic = [v for g in recent if g["kind"] == "heuristic" for v in g["returns"]]
        bar.update(batch_rows)
        bar.set_postfix(ret_vs_h=f"{np.mean(vs_heuristic):+.2f}" if vs_heuristic else "-", kl=f"{approx_kl.item():.3f}")
        recent = recent[-200:]
    bar.close()
    runner.close()

    # checkpoint, evaluation, curve
    save_path = Path(args.save_path) if args.save_path else run_dir / "ppo.pt"
    metadata = {
        "trainer": "ppo",
        "init": args.init,
        "args": dataclasses.asdict(args),
        "global_step": global_step,
        "learner_steps": learner_steps,
        "wall_seconds": round(time.time() - start, 1),
    }
    save_checkpoint(save_path, network, args.variant, metadata)
    if args.eval_hands > 0:
        from training.evaluate import duplicate_eval, format_table

        table = duplicate_eval(args.variant, {"ppo": f"torch:{save_path}", "heuristic": "heuristic"}, args.eval_hands, args.seed)
        print(format_table(table))
        logger.scalar("eval/points_vs_heuristic", table["ppo"]["mean"], global_step)
        metadata["eval_vs_heuristic"] = {k: float(v) for k, v in table["ppo"].items()}
        save_checkpoint(save_path, network, args.variant, metadata)
    plot_curves(
        logger.history,
        ["charts/return_vs_heuristic", "charts/episodic_return", "losses/approx_kl", "losses/entropy", "losses/explained_variance"],
        run_dir / "learning_curve.png",
        f"PPO self-play, {args.variant}",
        smooth=10,
    )
    logger.close()
    print(f"ppo: {global_step} decisions ({learner_steps} by the learner) in {time.time() - start:.0f}s; checkpoint {save_path}")
    return save_path


def main(argv: list[str] | None = None) -> Path:
    return train(parse_args(Args, argv))


if __name__ == "__main__":
    main()
