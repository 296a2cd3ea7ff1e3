"""The training pipeline of issue 10: value targets, paired rollouts, PPO's rows and
minibatches, argument checks, run directories, checkpoint bounds and the batched gate."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import agents
from agents.heuristic import HeuristicAgent
from agents.network import PolicyNetwork, load_checkpoint, save_checkpoint
from mahjong_env import changchun_v0, xinjiang_v0
from mahjong_env.adapters.vector import episode_seed
from mahjong_env.variants import get_variant
from training import bc, ppo
from training.duplicate import bootstrap_ci, four_agents, one_vs_three
from training.paired import paired_dataset


def _returns_by_aec(module, seed: int) -> list[tuple[int, float]]:
    """(seat, points from the decision to the end of the hand) of every decision with a
    choice in one hand of four heuristics, computed through the AEC env."""
    env = module.env()
    env.reset(seed=seed)
    heuristic = HeuristicAgent()
    cumulative = [0.0] * 4
    rows: list[tuple[int, float]] = []
    for name in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        seat = int(name[-1])
        if obs["action_mask"].sum() > 1:
            rows.append((seat, cumulative[seat]))
        env.step(heuristic.act(obs, agents.agent_info(env, name)))
        for s in range(4):
            cumulative[s] += env.rewards[f"player_{s}"]
    return [(seat, cumulative[seat] - start) for seat, start in rows]


@pytest.mark.parametrize("module", [xinjiang_v0, changchun_v0])
def test_value_targets_are_the_points_to_the_end_of_the_hand(module):
    """Issue 10: every row's return holds the hand's settlement, however the data is cut."""
    variant = get_variant(module.raw_env.metadata["name"]).name
    data = paired_dataset(variant, 300, seed=4, num_envs=1, analysis=False)
    expected = _returns_by_aec(module, episode_seed(4, 0, 0))
    first = data["games"] == 0
    assert first.sum() == len(expected) > 10
    np.testing.assert_allclose(data["returns"][first], [r for _, r in expected], atol=1e-5)
    # rows of the hand still running when the generation stopped are dropped, not truncated
    assert data["games"].max() < 1 + len(np.unique(data["games"]))


def test_paired_rollouts_of_the_teachers_own_action_equal_the_real_outcome():
    """A rollout of the action the game actually took (the heuristic's, no exploration) plays
    the same hand as the game itself: its points equal the row's return."""
    data = paired_dataset("changchun", 600, seed=7, num_envs=4, rollout_prob=1.0)
    rolled = np.flatnonzero(~np.isnan(data["qvalues"][:, 0]))
    assert len(rolled) > 20
    checked = 0
    for r in rolled:
        cands = list(data["candidates"][r])
        if data["actions"][r] in cands:
            q = data["qvalues"][r][cands.index(data["actions"][r])]
            assert q == pytest.approx(data["returns"][r], abs=1e-5)
            checked += 1
    assert checked > 20
    spread = np.nanmax(data["qvalues"][rolled], 1) - np.nanmin(data["qvalues"][rolled], 1)
    assert (spread > 0).any()  # the candidates do lead to different outcomes


def test_ppo_minibatches_are_even():
    sizes = [len(mb) for mb in ppo.even_minibatches(torch.randperm(431), 4)]
    assert sorted(sizes) == [107, 108, 108, 108] and sum(sizes) == 431
    assert [len(mb) for mb in ppo.even_minibatches(torch.arange(3), 4)] == [1, 1, 1]


def test_ppo_trains_only_on_learner_choices_with_known_outcomes():
    learner = torch.tensor([[True, True, False], [True, True, True]])
    masks = torch.zeros((2, 3, 182), dtype=torch.bool)
    masks[..., :2] = True
    masks[0, 1, 1] = False  # a forced move
    pending = torch.tensor([[False, False, False], [False, True, False]])
    assert ppo.trainable_rows(learner, masks, pending).tolist() == [0, 3, 5]


def test_ppo_defaults_fit_both_variants():
    args = ppo.Args()
    assert not args.clip_vloss and not args.anneal_lr and args.reward_scale is None
    assert args.num_envs * args.num_steps >= 16_000
    assert ppo.REWARD_SCALE["changchun"] < ppo.REWARD_SCALE["xinjiang"]
    assert args.opp_random == 0 and args.opp_self == 0 and args.opp_heuristic > args.opp_snapshot
    assert bc.Args().value_coef == 0.0


@pytest.mark.parametrize(
    ("module", "argv", "message", "code"),
    [
        (ppo, ["--variant", "changchn"], "--variant", 2),
        (ppo, ["--total-steps", "-5"], "--total-steps", 2),
        (ppo, ["--init", "nowhere.pt"], "--init", 1),
        (bc, ["--decisions", "-1"], "--decisions", 2),
        (bc, ["--epochs", "0"], "--epochs", 2),
        (bc, ["--data", "nowhere.npz"], "--data", 1),
    ],
)
def test_training_scripts_reject_bad_arguments_before_creating_anything(tmp_path, capsys, module, argv, message, code):
    out = tmp_path / "runs"
    with pytest.raises(SystemExit) as exit_:
        module.main([*argv, "--out-dir", str(out)])
    assert exit_.value.code == code
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and message in err and "\n" not in err
    assert not out.exists()


def test_run_directories_are_never_reused(tmp_path):
    from training.cli import new_run_dir

    first = new_run_dir(tmp_path, "xinjiang", "bc", 1)
    second = new_run_dir(tmp_path, "xinjiang", "bc", 1)
    assert first != second and first.is_dir() and second.is_dir()


def test_checkpoint_arch_is_bounded_before_anything_is_built(tmp_path):
    """Issue 13: a data-only file asking for a huge network is refused, not allocated."""
    path = save_checkpoint(tmp_path / "ok.pt", PolicyNetwork(8, 1, 32), "xinjiang")
    payload = torch.load(path, weights_only=True)
    for bad in (
        {"channels": 4096, "blocks": 64, "hidden": 65536},
        {"channels": 8, "blocks": 1, "hidden": True},
        {"channels": 8, "blocks": 1, "hidden": 32, "extra_planes": 3},
        "nonsense",
    ):
        torch.save(dict(payload, arch=bad), tmp_path / "bad.pt")
        with pytest.raises(ValueError, match=r"arch|observations"):
            load_checkpoint(tmp_path / "bad.pt")
    torch.save(dict(payload, state_dict={"stem.weight": torch.zeros(1)}), tmp_path / "bad.pt")
    with pytest.raises(ValueError, match="tensors"):
        load_checkpoint(tmp_path / "bad.pt")
    load_checkpoint(path)


def test_batched_duplicate_gate_is_paired_and_zero_sum():
    result = one_vs_three("xinjiang", HeuristicAgent(), HeuristicAgent(), deals=6, seed=3)
    assert result.hands == 24 and len(result.per_deal["candidate"]) == 6
    assert result.mean("candidate") == pytest.approx(0.0, abs=1e-9)  # the same agent in every seat
    table = four_agents("changchun", {"h": HeuristicAgent(), "r": agents.load("random")}, deals=4, seed=1)
    assert table.hands == 16
    assert table.mean("h") + table.mean("r") == pytest.approx(0.0, abs=1e-6)  # two seats each, zero-sum
    assert table.mean("h") > table.mean("r")
    low, high = bootstrap_ci(np.array([1.0, 2.0, 3.0, 4.0]))
    assert 1.0 <= low < 2.5 < high <= 4.0


def test_relabel_adopts_only_decision_classes_the_rollouts_show_better():
    """Policy improvement from paired rollouts: a class switch is adopted only when its gain's
    95% interval is above zero, and only for players who are not ready."""
    from mahjong_env import actions as A
    from mahjong_env.observation import SCALARS
    from training.paired import relabel

    rng = np.random.default_rng(0)
    n = 200
    masks = np.zeros((n, 182), bool)
    masks[:, [A.DISCARD + 3, A.CONCEALED_KONG + 5, A.PASS, A.PONG]] = True
    actions = np.where(np.arange(n) < 100, A.DISCARD + 3, A.PASS)
    candidates = np.full((n, 6), -1, np.int16)
    qvalues = np.full((n, 6), np.nan, np.float32)
    candidates[:100, :2] = [A.DISCARD + 3, A.CONCEALED_KONG + 5]
    qvalues[:100, 0], qvalues[:100, 1] = 0.0, 1.0 + rng.normal(0, 1, 100)  # the kong is better
    candidates[100:, :2] = [A.PASS, A.PONG]
    qvalues[100:, 0], qvalues[100:, 1] = 0.0, rng.normal(0, 5, 100)  # the pong is a coin toss
    scalars = np.zeros((n, 102), np.float32)
    scalars[:10, SCALARS.index("ready_0")] = 1.0  # ready players keep their labels
    data = {"actions": actions, "masks": masks, "candidates": candidates, "qvalues": qvalues, "scalars": scalars}
    labels, adopted = relabel(data, np.arange(n))
    assert [(a["from"], a["to"]) for a in adopted] == [("discard", "kong_own")]
    assert (labels[10:100] == A.CONCEALED_KONG + 5).all() and (labels[:10] == A.DISCARD + 3).all()
    assert (labels[100:] == A.PASS).all()


def test_prior_planes_give_every_action_its_own_pattern():
    from agents.network import PRIOR_ROWS, prior_planes
    from mahjong_env import actions as A

    planes = prior_planes(range(A.NUM_ACTIONS))
    assert planes.shape == (A.NUM_ACTIONS, PRIOR_ROWS, 34)
    assert len({p.tobytes() for p in planes}) == A.NUM_ACTIONS  # one pattern per action id
    assert planes[A.DISCARD + 5, 0, 5] == 1 and planes[A.DISCARD + 5].sum() == 2
    assert planes[A.CONCEALED_KONG + 1, 0, 1] == 1 and planes[A.CONCEALED_KONG + 1, 1, 2] == 1
    assert planes[A.PASS, 0].sum() == 0 and planes[A.PASS, 1].sum() == 1
    with pytest.raises(ValueError, match="prior_planes"):
        prior_planes([A.NUM_ACTIONS])


def test_paired_data_keeps_the_default_heuristics_choice_beside_the_teachers_label():
    """A teacher with options labels the rows; ``priors`` holds the default heuristic's choice
    (what a prior-planes network reads), so the two differ exactly where the options act:
    with ``kongs="always"`` only on rows whose label is a kong."""
    from mahjong_env import actions as A
    from training.paired import load_teacher

    plain = paired_dataset("xinjiang", 400, seed=5, num_envs=4, analysis=False)
    assert (plain["priors"] == plain["actions"]).all()
    data = paired_dataset("changchun", 1500, seed=5, num_envs=8, analysis=False, teacher='heuristic?kongs="always"')
    differ = data["priors"] != data["actions"]
    labels = data["actions"][differ]
    assert differ.any(), "no kong decision in 1,500 rows: the test deals need more rows"
    assert all(A.CONCEALED_KONG <= a < A.CHOW_LOW or a == A.KONG or a in A.SPECIAL_DECLARATIONS for a in labels)
    with pytest.raises(ValueError, match="not a heuristic"):
        load_teacher("random")


def test_a_prior_planes_network_reads_the_heuristics_choice(tmp_path):
    """The agent computes the prior planes itself (the default heuristic on its own view) and a
    checkpoint with prior planes round-trips; a checkpoint claiming prior planes with the wrong
    number of extra planes is refused."""
    from agents import agent_info
    from agents.network import PRIOR_ROWS, prior_planes
    from agents.torch_agent import TorchAgent
    from mahjong_env.features import ANALYSIS_CHANNELS
    from mahjong_env.observation import NUM_CHANNELS

    extra = len(ANALYSIS_CHANNELS) + PRIOR_ROWS
    net = PolicyNetwork(8, 1, 32, extra_planes=extra, prior_planes=True)
    path = save_checkpoint(tmp_path / "prior.pt", net, "xinjiang")
    agent = TorchAgent.from_checkpoint(path, device="cpu")
    env = xinjiang_v0.env()
    env.reset(seed=3)
    heuristic = HeuristicAgent()
    for _ in range(30):
        name = env.agent_selection
        obs, _, done, trunc, _ = env.last()
        if done or trunc:
            break
        info = agent_info(env, name)
        rows = agent._stack([obs], [info])
        assert rows.shape == (1, NUM_CHANNELS + extra, 34)
        expected = prior_planes([heuristic.act(obs, info)])[0]
        assert (rows[0, NUM_CHANNELS + len(ANALYSIS_CHANNELS) :] == expected).all()
        action = agent.act(obs, info)
        assert obs["action_mask"][action]
        env.step(action)
    payload = torch.load(path, weights_only=True)
    torch.save(dict(payload, arch=dict(payload["arch"], extra_planes=len(ANALYSIS_CHANNELS))), tmp_path / "bad.pt")
    with pytest.raises(ValueError, match="prior_planes"):
        load_checkpoint(tmp_path / "bad.pt")
    torch.save(dict(payload, arch=dict(payload["arch"], prior_planes="yes")), tmp_path / "bad.pt")
    with pytest.raises(ValueError, match="prior_planes"):
        load_checkpoint(tmp_path / "bad.pt")
