"""Training scripts (training/): flags from Args, tiny BC and PPO runs, duplicate evaluation."""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.network import PRIOR_ROWS, load_checkpoint
from agents.torch_agent import TorchAgent
from mahjong_env.features import ANALYSIS_CHANNELS
from mahjong_env.observation import NUM_CHANNELS
from training import bc, ppo
from training.cli import field_docs, make_parser, parse_args
from training.evaluate import duplicate_eval, format_table
from training.rollout import OpponentPool, heuristic_dataset

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py


def logged_tags(run_dir: Path) -> set[str]:
    with (run_dir / "metrics.csv").open() as f:
        return {row["tag"] for row in csv.DictReader(f)}


# ---------------------------------------------------------------------- cli


def test_every_args_field_has_a_docstring_and_a_flag():
    for module in (bc, ppo):
        docs = field_docs(module.Args)
        names = [f.name for f in dataclasses.fields(module.Args)]
        assert set(docs) == set(names), set(names) - set(docs)
        help_text = make_parser(module.Args).format_help()
        for name in names:
            assert "--" + name.replace("_", "-") in help_text


def test_flags_parse_types_booleans_and_none():
    args = parse_args(
        ppo.Args,
        ["--variant", "xinjiang", "--total-steps", "123", "--central-critic", "--no-anneal-lr", "--target-kl", "none",
         "--init", "x.pt", "--learning-rate", "3e-4"],
    )
    assert args.variant == "xinjiang" and args.total_steps == 123 and args.learning_rate == 3e-4
    assert args.central_critic is True and args.anneal_lr is False
    assert args.target_kl is None and args.init == "x.pt"
    assert parse_args(ppo.Args, []) == ppo.Args()


# ---------------------------------------------------------------------- data and rollouts


def test_tile_planes_are_small_integers():
    """`heuristic_dataset` stores rows 0-135 as uint8: they must be integers 0..255."""
    from agents import RandomAgent
    from mahjong_env import changchun_v0

    env, agent = changchun_v0.env(), RandomAgent(0)
    for seed in range(3):
        env.reset(seed=seed)
        for name in env.agent_iter():
            obs, _, termination, truncation, _ = env.last()
            planes = obs["observation"][: NUM_CHANNELS - 3]
            assert np.array_equal(planes, np.round(planes)) and planes.min() >= 0 and planes.max() <= 255
            env.step(None if termination or truncation else agent.act(obs))


def test_heuristic_dataset_is_integral_and_labels_are_legal():
    data = heuristic_dataset("xinjiang", 256, seed=3, num_envs=8, explore=0.2)
    n = len(data["actions"])
    assert n > 50 and data["planes"].shape == (n, NUM_CHANNELS - 3, 34) and data["scalars"].shape == (n, 102)
    assert data["masks"][np.arange(n), data["actions"]].all()
    assert (data["masks"].sum(axis=1) > 1).all()
    again = heuristic_dataset("xinjiang", 256, seed=3, num_envs=8, explore=0.2)
    assert np.array_equal(again["actions"], data["actions"]) and np.array_equal(again["planes"], data["planes"])


def test_opponent_pool_validates_weights():
    with pytest.raises(ValueError, match="opponent weights"):
        OpponentPool({"heuristic": 1.0, "grandmaster": 1.0})
    with pytest.raises(ValueError, match="opponent weights"):
        OpponentPool({"heuristic": 0.0})
    pool = OpponentPool({"snapshot": 1.0})
    kind, players = pool.seating()  # no snapshot yet: pure self-play
    assert kind == "self" and players == [None] * 4


# ---------------------------------------------------------------------- tiny runs


@pytest.fixture(scope="module")
def bc_checkpoint(tmp_path_factory) -> Path:
    """A tiny BC run with the analysis planes and an advantage head from paired rollouts."""
    out = tmp_path_factory.mktemp("bc")
    args = bc.Args(variant="changchun", decisions=768, num_envs=8, epochs=2, batch_size=128, channels=8, blocks=1,
                   hidden=32, out_dir=str(out), progress=False, rollout_prob=0.3)
    return bc.train(args)


@pytest.fixture(scope="module")
def plain_bc_checkpoint(tmp_path_factory) -> Path:
    """A tiny plain BC run (the observation only), as PPO starts from."""
    out = tmp_path_factory.mktemp("plain_bc")
    args = bc.Args(variant="changchun", decisions=768, num_envs=8, epochs=2, batch_size=128, channels=8, blocks=1,
                   hidden=32, out_dir=str(out), progress=False, rollout_prob=0.0, analysis=False,
                   advantage_head=False, tensorboard=False)
    return bc.train(args)


def test_tiny_bc_run_writes_checkpoint_log_and_curve(bc_checkpoint):
    run_dir = bc_checkpoint.parent
    assert bc_checkpoint.is_file() and (run_dir / "learning_curve.png").stat().st_size > 1000
    assert list(run_dir.glob("events.out.tfevents.*"))
    tags = logged_tags(run_dir)
    assert {"bc/train_loss", "bc/val_accuracy", "bc/advantage_loss", "bc/val_agreement_discard"} <= tags
    payload = torch.load(bc_checkpoint, weights_only=True)
    meta = payload["metadata"]
    assert meta["trainer"] == "bc" and 0.0 <= meta["val"]["accuracy"] <= 1.0 and meta["rollout_rows"] > 0
    assert payload["arch"] == {
        "channels": 8,
        "blocks": 1,
        "hidden": 32,
        "extra_planes": len(ANALYSIS_CHANNELS),
        "advantage_head": True,
        "prior_planes": False,
    }
    assert payload["obs_shape"] == [NUM_CHANNELS + len(ANALYSIS_CHANNELS), 34]


def test_bc_agent_with_analysis_and_advantages_plays_the_default_env_from_its_view(bc_checkpoint):
    """The shipped kind of agent: computes its analysis planes from agents.agent_info alone."""
    import agents
    from mahjong_env import changchun_v0

    agent = agents.load(f"torch:{bc_checkpoint}")
    assert agent.needs_info
    env = changchun_v0.env()
    env.reset(seed=5)
    decisions = 0
    for name in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        action = None if termination or truncation else agent.act(obs, agents.agent_info(env, name))
        if action is not None:
            assert obs["action_mask"][action] == 1
            decisions += 1
        env.step(action)
    assert decisions > 10
    with pytest.raises(ValueError, match="agent_info"):
        env.reset(seed=6)
        agent.act(env.observe(env.agent_selection), None)


def test_tiny_bc_run_with_a_teacher_and_prior_planes(tmp_path):
    """BC of a heuristic with options on prior planes: the checkpoint reads 12 extra planes, logs
    how often it departs from the default heuristic, and plays the default env from its view."""
    import agents
    from mahjong_env import changchun_v0

    args = bc.Args(variant="changchun", decisions=768, num_envs=8, epochs=1, batch_size=128, channels=8, blocks=1,
                   hidden=32, out_dir=str(tmp_path), progress=False, rollout_prob=0.0, advantage_head=False,
                   tensorboard=False, teacher='heuristic?kongs="always"', prior_planes=True, departure_weight=5.0)
    path = bc.train(args)
    payload = torch.load(path, weights_only=True)
    assert payload["arch"]["prior_planes"] is True
    assert payload["obs_shape"] == [NUM_CHANNELS + len(ANALYSIS_CHANNELS) + PRIOR_ROWS, 34]
    assert 0.0 <= payload["metadata"]["val"]["departure_rate"] <= 1.0
    agent = agents.load(f"torch:{path}")
    env = changchun_v0.env()
    env.reset(seed=2)
    for name in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        action = None if termination or truncation else agent.act(obs, agents.agent_info(env, name))
        assert action is None or obs["action_mask"][action] == 1
        env.step(action)
    with pytest.raises(ValueError, match="--teacher"):
        bc.train(bc.Args(variant="changchun", teacher="random", out_dir=str(tmp_path / "bad"), progress=False))
    assert not (tmp_path / "bad").exists()


@pytest.mark.parametrize("central_critic", [False, True])
def test_tiny_ppo_run_from_bc(tmp_path, plain_bc_checkpoint, central_critic):
    args = ppo.Args(variant="changchun", total_steps=256, num_envs=4, num_steps=32, init=str(plain_bc_checkpoint),
                    gate_deals=2,
                    central_critic=central_critic, snapshot_every=1, out_dir=str(tmp_path), progress=False,
                    opp_heuristic=0.4, opp_random=0.2, opp_snapshot=0.2, opp_self=0.2)
    path = ppo.train(args)
    run_dir = path.parent
    assert path.is_file() and (run_dir / "learning_curve.png").stat().st_size > 1000
    assert {"charts/SPS", "losses/approx_kl", "charts/env_decisions_per_s", "losses/value_loss"} <= logged_tags(run_dir)
    network, meta = load_checkpoint(path)
    gate = torch.load(run_dir / "ppo_candidate.pt", weights_only=True)["metadata"]["gate"]
    assert set(gate) == {"final_vs_heuristic", "final_ci", "init_vs_heuristic", "passed"}
    assert gate["passed"] == (gate["final_vs_heuristic"] > gate["init_vs_heuristic"])
    if gate["passed"]:
        assert meta["metadata"]["trainer"] == "ppo" and meta["metadata"]["global_step"] == 256
    else:  # the gate kept the --init policy
        assert meta["metadata"]["trainer"] == "bc"
    assert not any(name.startswith("net.") for name in network.state_dict())  # no critic in the policy
    TorchAgent(network, device="cpu")


def test_ppo_is_reproducible_in_process_and_with_rollout_workers(tmp_path):
    paths = []
    for run, workers in enumerate((0, 0, 2)):
        args = ppo.Args(variant="xinjiang", total_steps=128, num_envs=4, num_steps=32, channels=8, blocks=1, hidden=32,
                        out_dir=str(tmp_path / str(run)), progress=False, tensorboard=False, rollout_workers=workers)
        paths.append(ppo.train(args))
    first, *others = (torch.load(p, weights_only=True)["state_dict"] for p in paths)
    assert all(torch.equal(first[k], other[k]) for other in others for k in first)
    assert not list(paths[0].parent.glob("events.out.tfevents.*"))  # CSV only
    assert (paths[0].parent / "metrics.csv").is_file()


# ---------------------------------------------------------------------- evaluation


def test_duplicate_eval_rotates_seats_and_reports_a_table():
    table = duplicate_eval("xinjiang", {"h": "heuristic", "r": "random"}, hands=8, seed=1)
    assert set(table) == {"h", "r"}
    assert table["h"]["deals"] == 4 and table["h"]["hands"] == 16  # two seatings of A B A B
    assert abs(table["h"]["mean"] + table["r"]["mean"]) < 1e-9  # zero-sum with two agents
    text = format_table(table)
    assert "points/hand" in text and "h" in text
    with pytest.raises(ValueError):
        duplicate_eval("xinjiang", {}, hands=4)
