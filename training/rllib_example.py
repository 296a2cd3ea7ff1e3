"""Train on the PettingZoo env with RLlib (PPO, action masking), against a fixed opponent.

RLlib's `PettingZooEnv` wrapper turns the AEC env into a multi-agent env;
`training.rllib_module.ActionMaskingPPOModule` (RLlib's default PPO module, current API, with the
mask added to its logits) reads the observation keys ``"observations"`` and ``"action_mask"``, so
`RLlibObservations` renames ours and flattens the planes.

Who learns. Seat ``player_0`` is played by the ``learner`` module, the three other seats by
``opponent``, a module of the same shape that is never trained (its initial weights: close to
uniform over the legal actions). So the learner's mean episode return is its points per hand
against a fixed opponent, and it rises as it learns. (With one shared policy in every seat, the
mean return over seats is zero by construction in a zero-sum game and says nothing.)

After every iteration the algorithm is saved to ``--checkpoint`` (written beside it, then
swapped in: a run stopped while saving keeps the previous one) with a ``mahjong_meta.json`` that
names the variant and the module, so the checkpoint enters a tournament directly::

    python -m training.rllib_example --variant changchun --iterations 5 --checkpoint runs/rllib/changchun
    mahjong-tournament --variant changchun --agents rl=rllib:runs/rllib/changchun random heuristic

Resuming. The checkpoint also holds ``mahjong_resume.json``: the iterations finished and the
run's settings. ``--resume CHECKPOINT`` restores the algorithm there (RLlib's
``restore_from_path``: the modules, the optimiser, the counters) and runs the iterations left,
saving to the same folder; only where it runs may change (``--env-runners``, ``--ray-address``,
``--progress``). It continues the learning, not the dice: RLlib's checkpoint does not hold the
env runners' episodes in progress nor their random generators, so a resumed run is not the
uninterrupted one bit for bit (`training.ppo` ``--resume`` is).

    python -m training.rllib_example --resume runs/rllib/changchun

The command prints the checkpoint's folder on stdout and logs each iteration's learner return on
stderr. PyTorch, OpenMP and BLAS use one thread (set before they load, also for Ray's workers):
on a small machine more threads only contend (80–109 s per iteration with the defaults on 2
cores, about 8 s with one thread). Needs the ``ray`` extra: ``pip install -e '.[ray]'``.

Where it runs. ``--env-runners N`` samples episodes in N Ray actors (one CPU each; 0, the
default, samples in this process). They run on the cluster of ``--ray-address`` or
``RAY_ADDRESS`` (`agents.cluster.connect`: the packages are shipped to every node and each node
is checked first), else on a local Ray with N + 1 CPUs (at least 2). An env runner lost with its
node is restarted by RLlib (``restart_failed_env_runners``); a lost head ends the command with
one line that gives the ``--resume`` command.

No deprecation notice: the config uses RLlib's current API throughout. RLlib 2.x's own
``RLModule.__init__`` still builds its deprecated ``RLModuleConfig`` for every module, whatever
the caller passes, and logs that it did; `train` filters exactly that one record out of the
``ray._common.deprecation`` logger while it runs.
"""

from __future__ import annotations

import os

_THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
for _name in _THREAD_VARIABLES:  # before numpy, torch or ray load their thread pools
    os.environ.setdefault(_name, "1")

import contextlib  # noqa: E402
import dataclasses  # noqa: E402
import functools  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import math  # noqa: E402
import shlex  # noqa: E402
import shutil  # noqa: E402
import time  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Literal  # noqa: E402

import numpy as np  # noqa: E402
from gymnasium import spaces  # noqa: E402
from pettingzoo.utils.wrappers import BaseWrapper  # noqa: E402

from agents.cluster import ClusterError, connect, exiting  # noqa: E402
from training.cli import InputError, prepare_output, progress_bar, require, script_main  # noqa: E402

__all__ = [
    "LEARNER",
    "META_FILE",
    "OPPONENT",
    "RESUME_FILE",
    "Args",
    "RLlibObservations",
    "build_config",
    "check_args",
    "learner_return",
    "main",
    "make_env",
    "train",
]

log = logging.getLogger(__spec__.name if __spec__ else __name__)  # not __main__ under python -m

LEARNER = "learner"
OPPONENT = "opponent"
LEARNER_SEAT = "player_0"
META_FILE = "mahjong_meta.json"
"""In the checkpoint: the variant and the module a tournament plays (`agents.adapters.META_FILE`)."""
RESUME_FILE = "mahjong_resume.json"
"""In the checkpoint: the iterations finished and the run's settings (module docstring)."""


class RLlibObservations(BaseWrapper):
    """Observation dict ``{"observations": flat float32, "action_mask": float32}`` for RLlib."""

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        inner = env.observation_space(env.possible_agents[0])["observation"]
        size = int(np.prod(inner.shape))
        self._space = spaces.Dict(
            {
                "observations": spaces.Box(-np.inf, np.inf, (size,), np.float32),
                "action_mask": spaces.Box(0.0, 1.0, (env.action_space(env.possible_agents[0]).n,), np.float32),
            }
        )

    def observation_space(self, agent: str) -> spaces.Space:
        return self._space

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = self.env.observe(agent)
        return {
            "observations": obs["observation"].reshape(-1),
            "action_mask": obs["action_mask"].astype(np.float32),
        }


def make_env(variant: str) -> Any:
    """The RLlib multi-agent env for a variant."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    from mahjong_env.variants import get_variant

    return PettingZooEnv(RLlibObservations(get_variant(variant).env()))


def _policy(agent_id: str, *args: Any, **kwargs: Any) -> str:
    return LEARNER if agent_id == LEARNER_SEAT else OPPONENT


_NODE_NEEDS = ("torch", "pettingzoo", "ray.rllib", "training.rllib_module")


def build_config(variant: str, train_batch_size: int = 2000, hidden: int = 256, env_runners: int = 0) -> Any:
    """A PPO config: the trained ``learner`` in seat 0, the fixed ``opponent`` in the others;
    episodes sampled by ``env_runners`` Ray actors (0: in the driver), restarted when they fail."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    from training.rllib_module import ActionMaskingPPOModule

    name = f"mahjong_{variant}"
    register_env(name, lambda _config: make_env(variant))
    module = {"fcnet_hiddens": [hidden, hidden], "head_fcnet_hiddens": [hidden]}
    return (
        PPOConfig()
        .environment(name)
        .multi_agent(policies={LEARNER, OPPONENT}, policy_mapping_fn=_policy, policies_to_train=[LEARNER])
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={
                    key: RLModuleSpec(module_class=ActionMaskingPPOModule, model_config=module)
                    for key in (LEARNER, OPPONENT)
                }
            )
        )
        .env_runners(num_env_runners=env_runners)
        .fault_tolerance(restart_failed_env_runners=True)
        .training(train_batch_size=train_batch_size, minibatch_size=min(256, train_batch_size), num_epochs=2)
    )


def learner_return(result: dict[str, Any]) -> float:
    """The learner's mean episode return (points per hand against the fixed opponent) in one
    iteration's result; NaN when no episode finished in it."""
    runners = result.get("env_runners", {})
    value = (runners.get("module_episode_returns_mean") or {}).get(LEARNER)
    if value is None:
        value = (runners.get("agent_episode_returns_mean") or {}).get(LEARNER_SEAT)
    return float(value) if value is not None else math.nan


class _RLModuleConfigNotice(logging.Filter):
    """Drops the one deprecation record RLlib logs from inside its own ``RLModule.__init__``."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "RLModuleConfig" not in record.getMessage()


@contextlib.contextmanager
def _without_rlmodule_config_notice() -> Iterator[None]:
    """While RLlib builds and trains: the module docstring's one internal deprecation record filtered out."""
    source = logging.getLogger("ray._common.deprecation")
    notice = _RLModuleConfigNotice()
    source.addFilter(notice)
    try:
        yield
    finally:
        source.removeFilter(notice)


def train(
    variant: str = "changchun",
    iterations: int = 5,
    train_batch_size: int = 2000,
    checkpoint: str | Path | None = None,
    progress: bool = False,
    ray_address: str | None = None,
    env_runners: int = 0,
    resume: bool = False,
) -> list[dict[str, Any]]:
    """Run PPO for some iterations, logging the learner's return; save the algorithm to
    ``checkpoint`` (if given) after each, with `META_FILE` and `RESUME_FILE`. ``resume``: restore
    the algorithm saved in ``checkpoint`` and run only the iterations it has not finished (module
    docstring; the settings are the caller's, `resumed_args`). Returns RLlib's result dicts of the
    iterations run here. Ray is joined at ``ray_address`` (else ``RAY_ADDRESS``) or started here
    (module docstring)."""
    import torch

    import training

    torch.set_num_threads(1)
    cluster = connect(ray_address, num_cpus=max(2, env_runners + 1), modules=[training])
    try:
        if cluster.joined:
            cluster.check_nodes(_NODE_NEEDS)
            then = functools.partial(_continue_with, checkpoint, env_runners, ray_address)
            cluster.on_head_lost(exiting("python -m training.rllib_example", then))
        if env_runners:
            cluster.wait_for_cpus(env_runners, f"{env_runners} env runners")
        return _train(variant, iterations, train_batch_size, checkpoint, progress, env_runners, resume)
    finally:
        cluster.close()


def _train(
    variant: str,
    iterations: int,
    train_batch_size: int,
    checkpoint: str | Path | None,
    progress: bool,
    env_runners: int,
    resume: bool,
) -> list[dict[str, Any]]:
    results = []
    path = Path(checkpoint).resolve() if checkpoint is not None else None
    settings = {"variant": variant, "iterations": iterations, "train_batch_size": train_batch_size}
    with _without_rlmodule_config_notice():
        algo = build_config(variant, train_batch_size, env_runners=env_runners).build_algo()
        try:
            done = 0
            if resume:
                assert path is not None
                done = _load_resume(path)["iteration"]
                algo.restore_from_path(str(path))
                log.info("resuming %s after iteration %d of %d", path, done, iterations)
            with progress_bar(iterations, f"rllib {variant}", progress, unit="iter") as bar:
                bar.update(done)
                for i in range(done, iterations):
                    started = time.perf_counter()
                    result = algo.train()
                    results.append(result)
                    runners = result.get("env_runners", {})
                    log.info(
                        "iteration %d: env steps %s, learner return mean %+.3f points per hand vs the fixed "
                        "opponent (%.1f s)",
                        i + 1,
                        runners.get("num_env_steps_sampled_lifetime"),
                        learner_return(result),
                        time.perf_counter() - started,
                    )
                    bar.update(1)
                    if path is not None:
                        _save(algo, path, variant, {"iteration": i + 1, "args": settings})
            if path is not None:
                log.info("checkpoint %s (tournament spec: rllib:%s)", path, path)
        finally:
            algo.stop()
    return results


def _save(algo: Any, path: Path, variant: str, state: dict[str, Any]) -> None:
    """The algorithm saved to ``path`` whole or not at all: written to ``PATH.partial``, then
    swapped in (module docstring)."""
    partial = path.with_name(path.name + ".partial")
    previous = path.with_name(path.name + ".previous")
    for folder in (partial, previous):
        shutil.rmtree(folder, ignore_errors=True)
    algo.save_to_path(str(partial))
    (partial / META_FILE).write_text(json.dumps({"variant": variant, "module": LEARNER}))
    (partial / RESUME_FILE).write_text(json.dumps(state))
    if path.exists():
        path.rename(previous)
    partial.rename(path)
    shutil.rmtree(previous, ignore_errors=True)


def _load_resume(path: Path) -> dict[str, Any]:
    """`RESUME_FILE` of the checkpoint ``path``; `InputError` when it has none or cannot be read."""
    file = path / RESUME_FILE
    if not file.is_file():
        previous = path.with_name(path.name + ".previous")
        if not path.exists() and (previous / RESUME_FILE).is_file():  # stopped while swapping in a new save
            previous.rename(path)
            return _load_resume(path)
        where = "is not a folder" if not path.is_dir() else f"holds no {RESUME_FILE} (no iteration finished)"
        raise InputError(f"--resume {str(path)!r} {where}: start the run again")
    try:
        state = json.loads(file.read_text())
        return {"iteration": int(state["iteration"]), "args": dict(state["args"])}
    except (ValueError, KeyError, TypeError) as error:
        raise InputError(f"--resume: {file} cannot be read ({type(error).__name__}: {error})") from None


def _continue_with(checkpoint: str | Path | None, env_runners: int, ray_address: str | None) -> str:
    """What a command stopped by a lost head ends its line with (`agents.cluster.exiting`)."""
    if checkpoint is None or not (Path(checkpoint) / RESUME_FILE).is_file():
        return "no iteration had finished: start it again"
    command = f"python -m training.rllib_example --resume {shlex.quote(str(Path(checkpoint).resolve()))}"
    if env_runners:
        command += f" --env-runners {env_runners}"
    if ray_address:
        command += f" --ray-address {shlex.quote(ray_address)}"
    return f"continue with: {command}"


@dataclass
class Args:
    """PPO through RLlib's PettingZoo wrapper with action masking: seat 0 learns against a fixed
    opponent; saves an RLlib checkpoint that the tournament loads as rllib:DIR."""

    variant: Literal["xinjiang", "changchun"] = "changchun"
    """rule set"""
    iterations: int = 5
    """RLlib training iterations"""
    train_batch_size: int = 2000
    """env steps per iteration"""
    checkpoint: str | None = None
    """folder to save the trained algorithm in (made before any work; default runs/rllib/VARIANT)"""
    env_runners: int = 0
    """Ray actors sampling episodes, one CPU each (0: sample in this process)"""
    ray_address: str | None = None
    """the Ray cluster to join, host:port of its head (default: $RAY_ADDRESS, else a local Ray; auto: the cluster
    ray start runs on this machine); the code is shipped to its nodes (docs/cluster.md)"""
    resume: str | None = None
    """continue the run saved in this checkpoint folder from its last finished iteration, with its stored settings,
    saving there; --env-runners, --ray-address and --progress may differ"""
    progress: bool = True
    """show a progress bar of the iterations (only when stderr is a terminal)"""


_WHERE = ("env_runners", "ray_address", "progress", "resume")
"""The settings a resumed run takes from its command line: where it runs, not what it computes."""


def resumed_args(args: Args) -> Args:
    """The settings of the run ``args.resume`` continues: the stored ones, its folder as
    ``checkpoint``, where it runs (`_WHERE`) from ``args``; `InputError` when ``args`` asks for
    anything else that differs."""
    path = Path(args.resume).resolve()  # type: ignore[arg-type]
    stored = Args(**_load_resume(path)["args"], checkpoint=str(path))
    defaults = Args()
    for field in dataclasses.fields(Args):
        given, kept = getattr(args, field.name), getattr(stored, field.name)
        if field.name == "checkpoint" and given is not None:
            given = str(Path(given).resolve())
        if field.name not in _WHERE and given != getattr(defaults, field.name) and given != kept:
            flag = "--" + field.name.replace("_", "-")
            raise InputError(
                f"--resume continues the run as it was started: {flag} {given} differs from its {kept}; leave it out"
            )
    return dataclasses.replace(stored, **{name: getattr(args, name) for name in _WHERE})


def _checkpoint(args: Args) -> Path:
    return Path(args.checkpoint) if args.checkpoint is not None else Path("runs", "rllib", args.variant)


def check_args(args: Args) -> None:
    """The flag values (ValueError naming the flag) and the checkpoint folder (`training.cli.InputError`);
    with ``--resume``, the stored settings (`resumed_args`)."""
    if args.resume is not None:
        args = resumed_args(args)
    require(args.iterations >= 1, f"--iterations must be at least 1, got {args.iterations}")
    require(args.train_batch_size >= 1, f"--train-batch-size must be at least 1, got {args.train_batch_size}")
    require(args.env_runners >= 0, f"--env-runners must be at least 0, got {args.env_runners}")
    folder = _checkpoint(args)
    if args.resume is None and folder.is_dir() and any(folder.iterdir()) and not (folder / META_FILE).is_file():
        raise InputError(
            f"--checkpoint {str(folder)!r} holds other files, and each iteration's save replaces the whole folder: "
            "give a new or empty folder"
        )
    prepare_output(folder / META_FILE, "--checkpoint")


def _run(args: Args) -> Path:
    if args.resume is not None:
        args = resumed_args(args)
    try:
        train(
            args.variant,
            args.iterations,
            args.train_batch_size,
            _checkpoint(args),
            progress=args.progress,
            ray_address=args.ray_address,
            env_runners=args.env_runners,
            resume=args.resume is not None,
        )
    except ClusterError as error:  # one line, exit status 1, as every user error at run time
        raise InputError(str(error)) from None
    return _checkpoint(args).resolve()


def main(argv: list[str] | None = None) -> Path:
    """The command line: the checkpoint's folder on stdout."""
    return script_main("python -m training.rllib_example", Args, check_args, _run, argv)


if __name__ == "__main__":
    main()
