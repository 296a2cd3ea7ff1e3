"""PPO self-play with action masking (CleanRL's ``ppo.py`` shape), usually from a BC checkpoint.

Read top to bottom: ``Args``; setup (seeds, device, network from ``--init`` or fresh, optional
centralised critic, opponent pool, games); then per update: collect a rollout
(`training.rollout.SelfPlayRunner`: ``num_envs`` games × ``num_steps`` batched decisions; the
learner's rows are kept, with their action masks), GAE over each seat's own decisions, and
``update_epochs`` epochs of clipped PPO on minibatches with the stored masks re-applied to the
new logits; logging; snapshots into the opponent pool; the checkpoint and the learning curve.

Rewards are the settlement points of RULES.md R12 (kong payments and the hand's settlement,
credited to the decision of the seat that receives them) multiplied by ``reward_scale``
(default per variant, `REWARD_SCALE`: about one over the spread of a seat's points per hand,
Xinjiang 1/2 and Changchun 1/16, so scaled returns stay near [-1, 1] in both).

Rows trained on: the learner's decisions with more than one legal action whose successor is
known (a decision still pending when the rollout ends has not received all its reward yet and
is left out rather than bootstrapped with a truncated return). Minibatches split those rows
evenly. ``anchor_coef`` adds a KL penalty towards the frozen ``--init`` policy (a fine-tuner
that stays near its behaviour-cloning start); ``gate_deals`` > 0 plays the final policy and the
``--init`` policy 1-vs-3 against the heuristic on the same deals (`training.duplicate`) and
writes the final checkpoint to ``save_path`` only if it scores higher.

Resuming. After every update the run directory gets ``resume.pt``: the networks, the optimiser,
the games (each one's episode and actions so far), seatings, opponent pool and every random
generator (`training.rollout.SelfPlayRunner.state_dict`). ``--resume RUN_DIR`` continues the run
from its last finished update with its stored settings and gives the results of an uninterrupted
run (the same network, bit for bit on the same device); only where it runs may change
(``--backend``, ``--ray-address``, ``--rollout-workers``, ``--progress``).

On Ray (``--backend ray --rollout-workers N``: N actors, one CPU each, spread over the nodes of
the cluster of ``--ray-address`` or ``RAY_ADDRESS``, else of a local Ray; `agents.cluster`), the
code is shipped to every node and each node is checked before the actors start. A node lost in
the middle of an update costs that update's rollout: its actors are restarted on other nodes and
the rollout is played again from its start, with the same results. A lost head ends the run with
one line that gives the ``--resume`` command.

``--central-critic`` replaces the value head by `agents.network.StateCritic` on the env's
privileged ``state()`` (every concealed hand and the wall) plus the deciding seat; it is used
only for training targets and never enters the checkpoint's policy.

    python -m training.ppo --variant changchun --total-steps 20000
    python -m training.ppo --variant changchun --init runs/changchun_bc.pt --gate-deals 750 \
        --save-path runs/changchun_ppo.pt
    python -m training.ppo --backend ray --ray-address 10.0.0.1:6379 --rollout-workers 16 --num-envs 256
    python -m training.ppo --resume runs/changchun__ppo__1__1700000000

``--init`` takes a checkpoint of `training.bc` trained with ``--no-analysis`` (the batched games
encode the plain observation, not the analysis planes); an advantage head in it (BC trains one
on paired rollouts) is dropped with a note, since PPO's games cannot give it the table view it
reads: PPO trains the policy and value heads, and the gate compares against the ``--init`` file
as it is.

Metrics (TensorBoard and ``metrics.csv`` in ``runs/{variant}__{exp_name}__{seed}``):
``charts/episodic_return`` (mean learner points per game finished in the update),
``charts/return_vs_{kind}`` and ``charts/win_rate_vs_{kind}`` per opponent kind, ``charts/SPS``
(env decisions per second, all seats), ``charts/learner_SPS``,
``charts/env_decisions_per_s`` (during collection only), ``losses/*`` as in CleanRL
(``approx_kl``, ``clipfrac``, ``explained_variance`` …). ``learning_curve.png`` is written at
the end.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import random
import shlex
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
from torch import nn

from agents.cluster import CPU_WAIT, Cluster, ClusterError, connect, exiting
from agents.network import (
    PolicyNetwork,
    StateCritic,
    load_checkpoint,
    masked_logits,
    save_checkpoint,
)
from agents.torch_agent import resolve_device
from mahjong_env.observation import STATE_SIZE
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
from training.export import without_advantage_head
from training.rollout import OpponentPool, Rollout, SelfPlayRunner

__all__ = [
    "REWARD_SCALE",
    "RESUME_FILE",
    "Args",
    "check_args",
    "even_minibatches",
    "load_init",
    "main",
    "train",
    "trainable_rows",
]

log = logging.getLogger(__spec__.name if __spec__ else __name__)  # not __main__ under python -m

REWARD_SCALE = {"xinjiang": 0.5, "changchun": 1.0 / 16.0}
"""Default reward scale per variant: about one over the spread of a seat's points per hand."""
RESUME_FILE = "resume.pt"
"""The state after the last finished update, in the run directory (module docstring)."""
_WHERE = ("backend", "ray_address", "rollout_workers", "progress", "resume")
"""The settings a resumed run takes from its command line: where it runs, not what it computes."""
_NODE_NEEDS = ("numpy", "gymnasium", "pettingzoo", "mahjong_env.adapters.workers")


def even_minibatches(order: torch.Tensor, count: int) -> list[torch.Tensor]:
    """``order`` split into ``count`` minibatches whose sizes differ by at most one (never a
    stray tiny minibatch that takes a full optimiser step)."""
    count = max(1, min(count, len(order)))
    return list(torch.tensor_split(order, count))


def trainable_rows(learner: torch.Tensor, masks: torch.Tensor, pending: torch.Tensor) -> torch.Tensor:
    """Flat indices of the rows PPO trains on: the learner's decisions with more than one legal
    action that are not pending (their successor decision or the episode's end is known)."""
    keep = learner & (masks.sum(-1) > 1) & ~pending
    return keep.reshape(-1).nonzero().squeeze(1)


def load_init(
    path: str | Path, variant: str, device: str | torch.device = "cpu"
) -> tuple[PolicyNetwork, dict[str, Any], bool]:
    """The ``--init`` checkpoint as PPO trains it: (network, the checkpoint's other entries,
    whether an advantage head was dropped). `InputError` when it is missing, is not a checkpoint,
    was trained on another variant or reads planes the batched games do not compute."""
    require_file(path, "--init")
    try:
        network, meta = load_checkpoint(path, device)
    except ValueError as error:
        raise InputError(f"--init: {error}") from None
    if meta.get("variant") not in (None, variant):
        raise InputError(f"--init {str(path)!r} was trained on {meta.get('variant')!r}, not --variant {variant!r}")
    if network.extra_planes:
        raise InputError(
            f"--init {str(path)!r} reads {network.extra_planes} analysis or prior planes, which PPO's batched games "
            "do not compute: train it with python -m training.bc --no-analysis"
        )
    if network.advantage_head:
        return without_advantage_head(network).to(device), meta, True
    return network, meta, False


@dataclass
class Args:
    """PPO self-play with action masking."""

    variant: Literal["xinjiang", "changchun"] = "changchun"
    """rule set"""
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
    num_envs: int = 64
    """games played side by side"""
    num_steps: int = 256
    """batched decisions per game per rollout (rollout rows = num_envs * num_steps: 16k by default)"""
    rollout_workers: int = 0
    """processes stepping the games (mahjong_env.adapters.workers.ParallelVectorMahjong); 0: in this process"""
    backend: str = "local"
    """where rollout workers run: local (processes, shared memory) or ray (Ray actors, one CPU each; a lost node's
    actors are restarted elsewhere and the update's rollout played again)"""
    ray_address: str | None = None
    """with --backend ray, the Ray cluster to join, host:port of its head (default: $RAY_ADDRESS, else a local Ray;
    auto: the cluster ray start runs on this machine); the code is shipped to its nodes (docs/cluster.md)"""
    resume: str | None = None
    """continue the run in this run directory from its last finished update, with its stored settings (results as
    if uninterrupted); --backend, --ray-address, --rollout-workers and --progress may differ"""
    learning_rate: float = 1e-4
    """Adam learning rate"""
    anneal_lr: bool = False
    """anneal the learning rate linearly to 10% of its start"""
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
    clip_vloss: bool = False
    """clip the value loss as in CleanRL (off: with rewards of this spread it starves the critic)"""
    ent_coef: float = 0.005
    """entropy bonus coefficient"""
    vf_coef: float = 0.5
    """value loss coefficient"""
    max_grad_norm: float = 0.5
    """gradient clipping norm"""
    target_kl: float | None = 0.03
    """stop an update's epochs early when an epoch's mean approximate KL exceeds this (None: never)"""
    reward_scale: float | None = None
    """points are multiplied by this to make rewards (None: the variant's REWARD_SCALE)"""
    anchor_coef: float = 0.2
    """weight of the KL penalty towards the frozen --init policy (0: none; no effect without --init)"""
    init: str | None = None
    """checkpoint to start from (python -m training.bc --no-analysis; an advantage head in it is dropped);
    None: a fresh network"""
    central_critic: bool = False
    """train a centralised critic on the env's privileged state() instead of the value head"""
    critic_hidden: int = 256
    """width of the centralised critic"""
    opp_heuristic: float = 0.8
    """weight of games against three heuristic agents"""
    opp_random: float = 0.0
    """weight of games against three random agents"""
    opp_snapshot: float = 0.2
    """weight of games against three past snapshots of the learner (greedy, as evaluated)"""
    opp_self: float = 0.0
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
    gate_deals: int = 0
    """after training, play the final and the --init policy 1-vs-3 against the heuristic on this many
    deals (4 hands each) and keep the final checkpoint only if it scores higher (0: no gate)"""
    out_dir: str = "runs"
    """where run directories go"""
    save_path: str | None = None
    """final checkpoint path (its folder is made before any work; default: the run directory's ppo.pt)"""
    tensorboard: bool = True
    """log to TensorBoard as well as metrics.csv"""
    progress: bool = True
    """show a progress bar of the decisions played (only when stderr is a terminal)"""


def _load_resume(run_dir: str | Path) -> dict[str, Any]:
    path = Path(run_dir) / RESUME_FILE
    if not path.is_file():
        where = "is not a folder" if not Path(run_dir).is_dir() else f"holds no {RESUME_FILE} (no update finished)"
        raise InputError(f"--resume {str(run_dir)!r} {where}: start the run again")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # a damaged or foreign file
        raise InputError(f"--resume: {path} cannot be read ({type(error).__name__}: {error})") from None


def resumed_args(args: Args) -> Args:
    """The settings of the run ``args.resume`` continues: the stored ones, with where it runs
    (`_WHERE`) from ``args``; `InputError` when ``args`` asks for anything else that differs."""
    stored = Args(**_load_resume(args.resume)["args"])  # type: ignore[arg-type]
    defaults = Args()
    for field in dataclasses.fields(Args):
        given, kept = getattr(args, field.name), getattr(stored, field.name)
        if field.name not in _WHERE and given != getattr(defaults, field.name) and given != kept:
            flag = "--" + field.name.replace("_", "-")
            raise InputError(
                f"--resume continues the run as it was started: {flag} {given} differs from its {kept}; leave it out"
            )
    return dataclasses.replace(stored, **{name: getattr(args, name) for name in _WHERE})


def check_args(args: Args) -> None:
    """Everything that can be checked before anything is created: the flag values (ValueError
    naming the flag), then ``--init`` (`load_init`) and the checkpoint's folder (`InputError`);
    with ``--resume``, the stored settings (`resumed_args`)."""
    _check_settings(resumed_args(args) if args.resume is not None else args)


def _check_settings(args: Args) -> None:
    require(args.variant in REWARD_SCALE, f"--variant must be xinjiang or changchun, got {args.variant!r}")
    require(args.total_steps >= 1, f"--total-steps must be a positive int, got {args.total_steps}")
    require(args.num_envs >= 1 and args.num_steps >= 1, "--num-envs and --num-steps must be positive ints")
    require(
        args.total_steps >= args.num_envs * args.num_steps,
        f"--total-steps ({args.total_steps}) must cover one rollout, "
        f"--num-envs x --num-steps = {args.num_envs * args.num_steps}",
    )
    require(args.rollout_workers >= 0, f"--rollout-workers must be >= 0, got {args.rollout_workers}")
    require(args.backend in ("local", "ray"), f"--backend must be local or ray, got {args.backend!r}")
    require(
        args.backend != "ray" or args.rollout_workers >= 1,
        "--backend ray needs --rollout-workers N (N Ray actors step the games)",
    )
    require(args.ray_address is None or args.backend == "ray", "--ray-address needs --backend ray")
    require(args.learning_rate > 0, f"--learning-rate must be positive, got {args.learning_rate}")
    require(0 < args.gamma <= 1 and 0 <= args.gae_lambda <= 1, "--gamma must be in (0, 1], --gae-lambda in [0, 1]")
    require(args.num_minibatches >= 1 and args.update_epochs >= 1, "--num-minibatches and --update-epochs must be >= 1")
    require(args.clip_coef > 0, f"--clip-coef must be positive, got {args.clip_coef}")
    require(
        args.reward_scale is None or args.reward_scale > 0, f"--reward-scale must be positive, got {args.reward_scale}"
    )
    require(args.anchor_coef >= 0, f"--anchor-coef must be >= 0, got {args.anchor_coef}")
    require(args.gate_deals >= 0, f"--gate-deals must be >= 0, got {args.gate_deals}")
    weights = (args.opp_heuristic, args.opp_random, args.opp_snapshot, args.opp_self)
    require(min(weights) >= 0 and max(weights) > 0, "--opp-* weights must be >= 0 and not all zero")
    if args.init is not None:
        load_init(args.init, args.variant)
    if args.save_path is not None:
        prepare_output(args.save_path, "--save-path")


def train(args: Args) -> Path:
    """Run PPO (or continue the run of ``args.resume``); returns the final checkpoint's path."""
    check_args(args)
    resumed: dict[str, Any] | None = None
    if args.resume is not None:
        resumed = _load_resume(args.resume)
        args = resumed_args(args)
        run_dir = Path(args.resume)
    reward_scale = args.reward_scale if args.reward_scale is not None else REWARD_SCALE[args.variant]
    cluster = _connect(args) if args.backend == "ray" else None  # before the run directory: a bad address leaves none
    if resumed is None:
        run_dir = new_run_dir(args.out_dir, args.variant, args.exp_name, args.seed)
    if cluster is not None:
        _exit_on_head_loss(cluster, args, run_dir)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.backends.cudnn.deterministic = args.torch_deterministic
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    device = resolve_device(args.device)
    if resumed is not None:
        (run_dir / "metrics.csv").unlink(missing_ok=True)  # written again below, up to the resumed update
    logger = MetricLogger(run_dir, tensorboard=args.tensorboard)
    if resumed is None:
        logger.add_text("hyperparameters", json.dumps(dataclasses.asdict(args), indent=1))

    # network (and centralised critic)
    anchor = None
    if args.init:
        network, _, dropped = load_init(args.init, args.variant, device)
        if dropped:
            log.warning(
                "note: --init %s has an advantage head, which PPO's batched games cannot feed (it reads the table "
                "view); training its policy and value heads without it",
                args.init,
            )
        if args.anchor_coef > 0:
            anchor, _, _ = load_init(args.init, args.variant, device)
            anchor.requires_grad_(False)
    else:
        network = PolicyNetwork(args.channels, args.blocks, args.hidden).to(device)
    network.train()
    critic = StateCritic(STATE_SIZE, args.critic_hidden).to(device) if args.central_critic else None
    params = list(network.parameters()) + (list(critic.parameters()) if critic is not None else [])
    optimizer = torch.optim.Adam(params, lr=args.learning_rate, eps=1e-5)

    # opponents and games
    pool = OpponentPool(
        {
            "heuristic": args.opp_heuristic,
            "random": args.opp_random,
            "snapshot": args.opp_snapshot,
            "self": args.opp_self,
        },
        seed=args.seed,
        max_snapshots=args.max_snapshots,
    )
    pool.add_snapshot(network)
    runner = SelfPlayRunner(args.variant, args.num_envs, args.seed, pool, args.rollout_workers, args.backend)
    runner.restore_timeout = CPU_WAIT
    rollout = Rollout(args.num_steps, args.num_envs, central_critic=args.central_critic)
    batch_rows = args.num_envs * args.num_steps
    num_updates = max(1, args.total_steps // batch_rows)

    global_step = 0
    learner_steps = 0
    start = time.time()
    recent: list[dict] = []
    first = 1
    if resumed is not None:  # everything as the last finished update left it
        network.load_state_dict(resumed["network"])
        if critic is not None:
            critic.load_state_dict(resumed["critic"])
        optimizer.load_state_dict(resumed["optimizer"])
        runner.load_state_dict(resumed["runner"], network)
        np.random.set_state(tuple(resumed["numpy_rng"]))  # type: ignore[arg-type]
        random.setstate(tuple(resumed["python_rng"]))  # type: ignore[arg-type]
        global_step, learner_steps, recent = resumed["global_step"], resumed["learner_steps"], resumed["recent"]
        start -= resumed["seconds"]
        first = resumed["update"] + 1
        writer, logger.writer = logger.writer, None  # TensorBoard has these already
        for tag, step, value in sorted((t, st, v) for t, points in resumed["history"].items() for st, v in points):
            logger.scalar(tag, value, step)
        logger.writer = writer
        log.info("resuming %s after update %d of %d", run_dir, first - 1, num_updates)
    bar = progress_bar(num_updates * batch_rows, f"ppo {args.variant}", args.progress, unit="dec")
    bar.update((first - 1) * batch_rows)
    for update in range(first, num_updates + 1):
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = (1.0 - 0.9 * (update - 1.0) / num_updates) * args.learning_rate

        # rollout
        network.eval()
        collect_start = time.time()
        finished = runner.collect(network, rollout, device, critic)
        collect_seconds = time.time() - collect_start
        network.train()
        global_step += batch_rows
        rows = trainable_rows(rollout.learner, rollout.masks, torch.from_numpy(rollout.credit.pending()))
        learner_steps += int(rollout.learner.sum())
        recent.extend(finished)
        if finished:
            logger.scalar("charts/episodic_return", np.mean([v for g in finished for v in g["returns"]]), global_step)
            logger.scalar("charts/games", len(finished), global_step)
        for kind in sorted({g["kind"] for g in finished}):
            games = [g for g in finished if g["kind"] == kind]
            logger.scalar(f"charts/return_vs_{kind}", np.mean([v for g in games for v in g["returns"]]), global_step)
            logger.scalar(f"charts/win_rate_vs_{kind}", np.mean([g["winner_is_learner"] for g in games]), global_step)

        # GAE over each seat's own decisions
        advantages, returns = rollout.advantages(args.gamma, args.gae_lambda, reward_scale)
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
        clipfracs: list[float] = []
        approx_kl = old_approx_kl = torch.zeros(())
        pg_loss = v_loss = entropy_loss = anchor_kl = torch.zeros(())
        for _epoch in range(args.update_epochs):
            epoch_kl: list[float] = []
            for mb in even_minibatches(torch.randperm(n, device=device), args.num_minibatches) if n else []:
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
                    epoch_kl.append(approx_kl.item())
                    clipfracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())
                mb_adv = b_advantages[mb]
                if args.norm_adv and len(mb) > 1:
                    mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
                pg_loss = torch.max(
                    -mb_adv * ratio, -mb_adv * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)
                ).mean()
                if args.clip_vloss:
                    v_unclipped = (newvalue - b_returns[mb]) ** 2
                    v_clipped = b_values[mb] + torch.clamp(newvalue - b_values[mb], -args.clip_coef, args.clip_coef)
                    v_loss = 0.5 * torch.max(v_unclipped, (v_clipped - b_returns[mb]) ** 2).mean()
                else:
                    v_loss = 0.5 * ((newvalue - b_returns[mb]) ** 2).mean()
                entropy_loss = entropy.mean()
                loss = pg_loss - args.ent_coef * entropy_loss + v_loss * args.vf_coef
                if anchor is not None:  # KL(anchor || policy) over the legal actions
                    with torch.no_grad():
                        anchor_logp = torch.log_softmax(masked_logits(anchor(b_obs[mb])[0], b_masks[mb]), -1)
                    logp = torch.log_softmax(masked_logits(logits, b_masks[mb]), -1)
                    anchor_kl = (anchor_logp.exp() * (anchor_logp - logp)).sum(-1).mean()
                    loss = loss + args.anchor_coef * anchor_kl
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(params, args.max_grad_norm)
                optimizer.step()
            if args.target_kl is not None and epoch_kl and float(np.mean(epoch_kl)) > args.target_kl:
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
        logger.scalar("losses/anchor_kl", anchor_kl.item(), global_step)
        logger.scalar("charts/trained_rows", n, global_step)
        logger.scalar("losses/clipfrac", float(np.mean(clipfracs)) if clipfracs else 0.0, global_step)
        logger.scalar("losses/explained_variance", explained_var, global_step)
        logger.scalar("charts/SPS", global_step / elapsed, global_step)
        logger.scalar("charts/learner_SPS", learner_steps / elapsed, global_step)
        logger.scalar("charts/env_decisions_per_s", batch_rows / max(collect_seconds, 1e-9), global_step)
        if update % args.snapshot_every == 0:
            pool.add_snapshot(network)
        if args.checkpoint_every and update % args.checkpoint_every == 0:
            save_checkpoint(
                run_dir / f"ppo_{global_step}.pt", network, args.variant, {"trainer": "ppo", "global_step": global_step}
            )
        vs_heuristic = [v for g in recent if g["kind"] == "heuristic" for v in g["returns"]]
        bar.update(batch_rows)
        bar.set_postfix(ret_vs_h=f"{np.mean(vs_heuristic):+.2f}" if vs_heuristic else "-", kl=f"{approx_kl.item():.3f}")
        recent = recent[-200:]
        _save_resume(
            run_dir,
            {
                "args": dataclasses.asdict(dataclasses.replace(args, resume=None)),
                "update": update,
                "network": network.state_dict(),
                "critic": critic.state_dict() if critic is not None else None,
                "optimizer": optimizer.state_dict(),
                "runner": runner.state_dict(),
                "numpy_rng": _plain(np.random.get_state()),
                "python_rng": random.getstate(),
                "global_step": global_step,
                "learner_steps": learner_steps,
                "recent": recent,
                "history": logger.history,
                "seconds": time.time() - start,
            },
        )
    bar.close()
    runner.close()
    if cluster is not None:
        cluster.close()

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
    if args.gate_deals > 0:
        from training.duplicate import gate_checkpoint

        candidate_path = save_checkpoint(run_dir / "ppo_candidate.pt", network, args.variant, metadata)
        final = gate_checkpoint(args.variant, candidate_path, args.gate_deals, args.seed, progress=args.progress)
        metadata["gate"] = {"final_vs_heuristic": final.mean("candidate"), "final_ci": list(final.ci("candidate"))}
        if args.init:
            before = gate_checkpoint(args.variant, args.init, args.gate_deals, args.seed, progress=args.progress)
            metadata["gate"]["init_vs_heuristic"] = before.mean("candidate")
            passed = final.mean("candidate") > before.mean("candidate")
        else:
            passed = True
        metadata["gate"]["passed"] = passed
        save_checkpoint(candidate_path, network, args.variant, metadata)  # the candidate keeps its verdict
        log.info("gate %s", metadata["gate"])
        logger.scalar("eval/points_vs_heuristic", final.mean("candidate"), global_step)
        if passed:
            save_checkpoint(save_path, network, args.variant, metadata)
        else:
            import shutil

            save_path.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(args.init, save_path)  # type: ignore[arg-type]
            log.info("the gate kept the --init policy in %s; the final policy is in %s", save_path, candidate_path)
    else:
        save_checkpoint(save_path, network, args.variant, metadata)
    plot_curves(
        logger.history,
        [
            "charts/return_vs_heuristic",
            "charts/episodic_return",
            "losses/approx_kl",
            "losses/entropy",
            "losses/explained_variance",
        ],
        run_dir / "learning_curve.png",
        f"PPO self-play, {args.variant}",
        smooth=10,
    )
    logger.close()
    log.info(
        "%d decisions (%d by the learner) in %.0f s; run directory %s",
        global_step,
        learner_steps,
        time.time() - start,
        run_dir,
    )
    return save_path


def _connect(args: Args) -> Cluster:
    """Join or start Ray for the rollout actors (`agents.cluster.connect`), check the nodes and
    wait for their CPUs."""
    import training

    cluster = connect(args.ray_address, num_cpus=args.rollout_workers, modules=[training])
    if cluster.joined:
        cluster.check_nodes(_NODE_NEEDS)
    cluster.wait_for_cpus(args.rollout_workers, f"{args.rollout_workers} rollout workers")
    return cluster


def _exit_on_head_loss(cluster: Cluster, args: Args, run_dir: Path) -> None:
    """A lost head ends the process with one line and the ``--resume`` command."""
    where = f"--backend ray --rollout-workers {args.rollout_workers}"
    if args.ray_address:
        where += f" --ray-address {shlex.quote(args.ray_address)}"

    def then() -> str:
        if not (run_dir / RESUME_FILE).exists():
            return "no update had finished: start the run again"
        return f"continue with: python -m training.ppo --resume {shlex.quote(str(run_dir))} {where}"

    cluster.on_head_lost(exiting("python -m training.ppo", then))


def _plain(value: Any) -> Any:
    """``value`` with numpy arrays as lists (``torch.load(weights_only=True)`` reads it)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (tuple, list)):
        return type(value)(_plain(v) for v in value)
    return value


def _save_resume(run_dir: Path, state: dict[str, Any]) -> None:
    """Write `RESUME_FILE` whole or not at all (a run stopped while writing keeps the previous)."""
    path = run_dir / RESUME_FILE
    partial = path.with_name(path.name + ".partial")
    torch.save(state, partial)
    os.replace(partial, path)


def _run(args: Args) -> Path:
    try:
        return train(args)
    except ClusterError as error:  # one line, exit status 1, as every user error at run time
        raise InputError(str(error)) from None


def main(argv: list[str] | None = None) -> Path:
    """The command line: the final checkpoint's path on stdout."""
    return script_main("python -m training.ppo", Args, check_args, _run, argv)


if __name__ == "__main__":
    main()
