"""RLlib smoke test: PPO through RLlib's PettingZoo wrapper with action masking, the learner's
return against a fixed opponent, and its checkpoint entering a tournament through the RLlib
adapter (skipped only when the ``ray`` extra is not installed)."""

from __future__ import annotations

import json
import math

import pytest

pytest.importorskip("ray.rllib")


def test_rllib_ppo_trains_reports_the_learner_and_its_checkpoint_plays_a_tournament(tmp_path):
    import agents
    from agents.tournament.config import TournamentConfig
    from agents.tournament.runner import run_tournament
    from training.rllib_example import learner_return, make_env, train

    env = make_env("changchun")
    obs, _ = env.reset(seed=1)
    ((_agent, first),) = obs.items()
    assert set(first) == {"observations", "action_mask"} and first["action_mask"].sum() >= 1
    checkpoint = tmp_path / "ckpt"
    results = train("changchun", iterations=1, train_batch_size=400, checkpoint=checkpoint)
    runners = results[0]["env_runners"]
    assert runners["num_env_steps_sampled_lifetime"] >= 400
    learner = learner_return(results[0])
    assert math.isfinite(learner)  # the learner's own return, not a mean over seats (zero by construction)
    assert learner == pytest.approx(runners["agent_episode_returns_mean"]["player_0"])
    assert json.loads((checkpoint / "mahjong_meta.json").read_text()) == {"variant": "changchun", "module": "learner"}

    player = agents.load(f"rllib:{checkpoint}")
    assert player.variant == "changchun"
    config = TournamentConfig(variant="changchun", agents=(("rl", f"rllib:{checkpoint}"), ("rand", "random")), deals=1)
    summary = run_tournament(config, tmp_path / "t.sqlite", workers=0, isolate="none")
    assert summary.hands_played == 2 and not summary.forfeits and not summary.failures
    with pytest.raises(ValueError, match="module"):
        agents.load(f"rllib:{checkpoint}?module=nosuch")
