"""RLlib smoke test: PPO through RLlib's PettingZoo wrapper with action masking, run as the command
a user types (no deprecation notice, the learner's return logged, the checkpoint's folder on
stdout), and its checkpoint entering a tournament through the RLlib adapter (skipped only when the
``ray`` extra is not installed)."""

from __future__ import annotations

import json
import logging
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray.rllib")

ROOT = Path(__file__).absolute().parents[1]


def test_the_rllib_example_trains_without_deprecation_notices_and_its_checkpoint_plays_a_tournament(tmp_path):
    import agents
    from agents.tournament.config import TournamentConfig
    from agents.tournament.runner import run_tournament
    from training.rllib_example import make_env

    env = make_env("changchun")
    obs, _ = env.reset(seed=1)
    ((_agent, first),) = obs.items()
    assert set(first) == {"observations", "action_mask"} and first["action_mask"].sum() >= 1

    checkpoint = tmp_path / "ckpt"
    command = [sys.executable, "-W", "default", "-m", "training.rllib_example", "--iterations", "1"]
    command += ["--train-batch-size", "400", "--checkpoint", str(checkpoint)]
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(command, cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    # Python's DeprecationWarnings and RLlib's own deprecation log records ("DeprecationWarning: `X` has been
    # deprecated ... will raise an error in the future!") alike
    notices = [line for line in proc.stderr.splitlines() if re.search(r"deprecat|in the future", line, re.IGNORECASE)]
    assert not notices, "\n".join(notices)
    assert proc.stdout.strip() == str(checkpoint.resolve())
    returns = re.findall(r"iteration 1: env steps (\S+), learner return mean (\S+) points per hand", proc.stderr)
    assert len(returns) == 1, proc.stderr
    steps, learner = (float(v) for v in returns[0])
    assert steps >= 400 and math.isfinite(learner)  # the learner's own return, not a mean over seats (zero)
    assert json.loads((checkpoint / "mahjong_meta.json").read_text()) == {"variant": "changchun", "module": "learner"}

    player = agents.load(f"rllib:{checkpoint}")
    assert player.variant == "changchun"
    config = TournamentConfig(variant="changchun", agents=(("rl", f"rllib:{checkpoint}"), ("rand", "random")), deals=1)
    summary = run_tournament(config, tmp_path / "t.sqlite", workers=0, isolate="none")
    assert summary.hands_played == 2 and not summary.forfeits and not summary.failures  # masked: legal moves only
    with pytest.raises(ValueError, match="module"):
        agents.load(f"rllib:{checkpoint}?module=nosuch")


def test_learner_return_reads_the_learner_modules_return():
    from training.rllib_example import learner_return

    assert learner_return({"env_runners": {"module_episode_returns_mean": {"learner": 1.5, "opponent": -0.5}}}) == 1.5
    assert learner_return({"env_runners": {"agent_episode_returns_mean": {"player_0": -2.0}}}) == -2.0
    assert math.isnan(learner_return({"env_runners": {}}))


def test_the_masking_module_never_picks_an_illegal_action():
    import gymnasium as gym
    import numpy as np
    import torch
    from ray.rllib.core.columns import Columns

    from training.rllib_module import ActionMaskingPPOModule

    space = gym.spaces.Dict(
        {
            "observations": gym.spaces.Box(-1.0, 1.0, (6,), np.float32),
            "action_mask": gym.spaces.Box(0.0, 1.0, (5,), np.float32),
        }
    )
    module = ActionMaskingPPOModule(
        observation_space=space, action_space=gym.spaces.Discrete(5), model_config={"fcnet_hiddens": [8]}
    )
    assert module.observation_space == space
    mask = torch.tensor([[0, 1, 0, 0, 1], [1, 0, 0, 0, 0]], dtype=torch.float32)
    batch = {Columns.OBS: {"observations": torch.rand(2, 6), "action_mask": mask}}
    for forward in (module.forward_inference, module.forward_exploration, module.forward_train):
        logits = forward(dict(batch))[Columns.ACTION_DIST_INPUTS]
        assert (logits[mask == 0] < -1e30).all() and (logits[mask == 1] > -1e3).all()
    assert module.compute_values(dict(batch)).shape == (2,)
    with pytest.raises(ValueError, match="Dict observation space"):
        ActionMaskingPPOModule(observation_space=space["observations"], action_space=gym.spaces.Discrete(5))


def test_the_example_samples_in_ray_env_runners_that_are_restarted_when_they_fail():
    from training.rllib_example import build_config

    config = build_config("changchun", 400, env_runners=2)
    assert config.num_env_runners == 2 and config.restart_failed_env_runners
    assert build_config("changchun", 400).num_env_runners == 0  # the default samples in the driver


def test_the_example_joins_ray_address_and_says_in_one_line_when_nothing_answers(tmp_path, monkeypatch, capsys):
    from training.rllib_example import main

    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")  # nothing answers on port 1 of this machine
    with pytest.raises(SystemExit) as exit_:
        main(["--checkpoint", str(tmp_path / "ckpt"), "--env-runners", "2"])
    lines = capsys.readouterr().err.strip().splitlines()
    assert exit_.value.code == 1 and len(lines) == 1, lines
    assert lines[0].startswith("error: cannot join the Ray cluster at 127.0.0.1:1 (RAY_ADDRESS): nothing answers")
    with pytest.raises(SystemExit) as exit_:
        main(["--checkpoint", str(tmp_path / "ckpt"), "--env-runners", "-1"])
    assert exit_.value.code == 2 and "--env-runners" in capsys.readouterr().err


def test_an_interrupted_run_resumes_from_its_last_saved_iteration(tmp_path, monkeypatch, caplog, capsys):
    """Stopped after iteration 1 of 2, ``--resume CHECKPOINT`` restores the saved algorithm and runs
    iteration 2 only: RLlib's counters go on from the first iteration's, the settings are the
    stored ones, and the checkpoint says 2 iterations are done."""
    import ray

    from training import rllib_example

    checkpoint = tmp_path / "ckpt"
    save = rllib_example._save

    class Stop(Exception):  # noqa: N818 - the run is stopped, not failing
        pass

    def save_and_stop(algo, path, variant, state):
        save(algo, path, variant, state)
        raise Stop

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)  # both runs join it
    try:
        monkeypatch.setattr(rllib_example, "_save", save_and_stop)
        with pytest.raises(Stop):
            rllib_example.train("changchun", iterations=2, train_batch_size=200, checkpoint=checkpoint)
        monkeypatch.setattr(rllib_example, "_save", save)
        state = json.loads((checkpoint / rllib_example.RESUME_FILE).read_text())
        assert state == {"iteration": 1, "args": {"variant": "changchun", "iterations": 2, "train_batch_size": 200}}
        with caplog.at_level(logging.INFO, logger="training.rllib_example"):
            assert rllib_example.main(["--resume", str(checkpoint), "--no-progress"]) == checkpoint.resolve()
    finally:
        ray.shutdown()
    messages = [record.getMessage() for record in caplog.records]
    assert f"resuming {checkpoint.resolve()} after iteration 1 of 2" in messages
    ((iteration, steps),) = re.findall(r"iteration (\d+): env steps ([\d.]+)", "\n".join(messages))
    assert iteration == "2" and float(steps) >= 400  # iteration 1 not again; RLlib's counters went on from it
    assert json.loads((checkpoint / rllib_example.RESUME_FILE).read_text())["iteration"] == 2
    assert json.loads((checkpoint / "mahjong_meta.json").read_text()) == {"variant": "changchun", "module": "learner"}
    assert not checkpoint.with_name("ckpt.partial").exists() and not checkpoint.with_name("ckpt.previous").exists()
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        rllib_example.main(["--resume", str(checkpoint), "--train-batch-size", "400"])
    assert exit_.value.code == 1 and "--train-batch-size 400 differs from its 200" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        rllib_example.main(["--resume", str(tmp_path)])
    assert exit_.value.code == 1 and "holds no mahjong_resume.json" in capsys.readouterr().err
