"""The parallel env (``parallel_env()``, `mahjong_env.adapters.parallel`): PettingZoo's parallel
API and seed tests, one mover per step, observations and rewards equal to the AEC env's for the
same seed and actions, and bad actions refused with nothing changed."""

from __future__ import annotations

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import parallel_api_test
from pettingzoo.test.seed_test import parallel_seed_test
from scenario import deal_options

import mahjong_env  # noqa: F401  (registers the environments)
from mahjong_env import changchun_v0, xinjiang_v0
from mahjong_env.actions import action_id
from mahjong_env.adapters.parallel import MahjongParallelEnv

CASES = [
    pytest.param(xinjiang_v0, {}, id="xinjiang"),
    pytest.param(changchun_v0, {}, id="changchun"),
    pytest.param(changchun_v0, {"profile": "mil2024"}, id="changchun-mil2024"),
]
AGENTS = [f"player_{i}" for i in range(4)]


def mover_of(observations: dict) -> str:
    """The one agent whose mask is non-zero (every other observation's mask is all zero)."""
    movers = [agent for agent, obs in observations.items() if obs["action_mask"].any()]
    assert len(movers) == 1, movers
    return movers[0]


def play(env: MahjongParallelEnv, seed: int, rng: np.random.Generator) -> dict:
    """A random masked episode; every step's observations, movers, actions, rewards and infos."""
    observations, infos = env.reset(seed=seed)
    log: dict = {"observations": [observations], "movers": [], "actions": [], "rewards": [], "infos": [infos]}
    while env.agents:
        assert set(observations) == set(env.agents)
        mover = mover_of(observations)
        action = int(rng.choice(np.flatnonzero(observations[mover]["action_mask"])))
        live = list(env.agents)
        observations, rewards, terminations, truncations, infos = env.step({mover: action})
        for result in (observations, rewards, terminations, truncations, infos):
            assert list(result) == live  # every live agent, every step
        assert sum(rewards.values()) == pytest.approx(0.0)  # zero-sum (R12)
        assert not any(truncations.values())
        assert all("active_agent" not in info for info in infos.values())  # who decides may be private (R13)
        for name, value in (("movers", mover), ("actions", action), ("rewards", rewards), ("infos", infos)):
            log[name].append(value)
        log["observations"].append(observations)
        if any(terminations.values()):
            assert all(terminations.values()) and env.agents == []
    return log


@pytest.mark.filterwarnings("ignore:ignoring unknown reset option")  # the test passes options={"options": 1}
@pytest.mark.parametrize(("module", "kwargs"), CASES)
def test_parallel_api_test(module, kwargs):
    parallel_api_test(module.parallel_env(**kwargs), num_cycles=1000)


@pytest.mark.parametrize(("module", "kwargs"), CASES)
def test_parallel_seed_test(module, kwargs):
    # PettingZoo's test samples unmasked actions for every agent: the mover's illegal one must
    # end the episode the same way in both envs rather than raise
    parallel_seed_test(lambda: module.parallel_env(illegal_action="penalize", **kwargs))


@pytest.mark.parametrize(("module", "kwargs"), CASES)
def test_same_seed_and_actions_give_the_same_episode(module, kwargs):
    first = play(module.parallel_env(**kwargs), 5, np.random.default_rng(1))
    second = play(module.parallel_env(**kwargs), 5, np.random.default_rng(1))
    assert first["actions"] == second["actions"] and first["rewards"] == second["rewards"]
    assert first["infos"][-1] == second["infos"][-1]
    for a, b in zip(first["observations"], second["observations"]):
        for agent in a:
            np.testing.assert_array_equal(a[agent]["observation"], b[agent]["observation"])


@pytest.mark.parametrize(("module", "kwargs"), CASES)
@pytest.mark.parametrize("seed", [0, 7])
def test_a_random_episode_matches_the_aec_env_step_by_step(module, kwargs, seed):
    env = module.parallel_env(**kwargs)
    log = play(env, seed, np.random.default_rng(seed))
    totals = {agent: sum(step[agent] for step in log["rewards"]) for agent in AGENTS}
    result = log["infos"][-1]["player_0"]["result"]
    for seat, agent in enumerate(AGENTS):
        assert totals[agent] == pytest.approx(result["deltas"][seat] + result["kong_deltas"][seat])
        assert log["infos"][-1][agent]["result"] == result
    assert env.aec.record()["hands"][0]["result"] == result

    aec = module.env(**kwargs)
    aec.reset(seed=seed)
    aec_totals = dict.fromkeys(AGENTS, 0.0)
    step = 0
    for agent in aec.agent_iter():
        _, reward, termination, truncation, _ = aec.last()
        aec_totals[agent] += reward
        if termination or truncation:
            aec.step(None)
            continue
        assert agent == log["movers"][step]
        for other in AGENTS:  # the parallel env's observations are exactly the AEC env's observe()
            shown = log["observations"][step][other]
            expected = aec.observe(other)
            np.testing.assert_array_equal(shown["observation"], expected["observation"])
            np.testing.assert_array_equal(shown["action_mask"], expected["action_mask"])
            assert shown["action_mask"].dtype == expected["action_mask"].dtype
        aec.step(log["actions"][step])
        step += 1
    assert step == len(log["actions"])
    assert aec_totals == pytest.approx(totals)


def test_rewards_are_each_steps_points_not_running_totals():
    # Xinjiang pays a concealed kong at once (X5): 1 point from each other seat, on that step only
    env = xinjiang_v0.parallel_env()
    observations, _ = env.reset(seed=0, options=deal_options(["1111m2345p6789s13z", None, None, None]))
    assert mover_of(observations) == "player_0"
    observations, rewards, *_ = env.step({"player_0": action_id("concealed_kong 1m")})
    assert rewards == {"player_0": 3.0, "player_1": -1.0, "player_2": -1.0, "player_3": -1.0}
    assert mover_of(observations) == "player_0"  # the replacement draw: player_0 discards next
    observations, rewards, *_ = env.step({"player_0": action_id("discard 3z")})
    assert rewards == dict.fromkeys(AGENTS, 0.0)


def test_a_match_reports_each_hand_and_ends_after_the_last():
    env = changchun_v0.parallel_env(num_hands=2)
    log = play(env, 3, np.random.default_rng(3))
    ends = [i for i, infos in enumerate(log["infos"][1:]) if "result" in infos[log["movers"][i]]]
    assert len(ends) == 2 and ends[-1] == len(log["actions"]) - 1
    hands = env.aec.record()["hands"]
    for end, hand in zip(ends, hands):
        assert log["infos"][end + 1]["player_0"]["result"] == hand["result"]
    totals = [sum(step[agent] for step in log["rewards"]) for agent in AGENTS]
    expected = [sum(h["result"]["deltas"][s] + h["result"]["kong_deltas"][s] for h in hands) for s in range(4)]
    assert totals == pytest.approx(expected)


def snapshot(env: MahjongParallelEnv, observations: dict) -> tuple:
    return (
        list(env.agents),
        env.aec.agent_selection,
        env.state().tobytes(),
        repr(env.aec.record()),
        {a: (o["observation"].tobytes(), o["action_mask"].tobytes()) for a, o in observations.items()},
    )


@pytest.mark.parametrize("module", [xinjiang_v0, changchun_v0], ids=["xinjiang", "changchun"])
def test_bad_actions_raise_value_error_and_change_nothing(module):
    env = module.parallel_env()
    observations, _ = env.reset(seed=4)
    mover = mover_of(observations)
    mask = observations[mover]["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    before = snapshot(env, {a: env.aec.observe(a) for a in env.agents})
    bad = [
        ([(mover, int(np.flatnonzero(mask)[0]))], "dict"),
        ({}, f"no action for {mover}"),
        ({a: 0 for a in AGENTS if a != mover}, f"no action for {mover}"),
        ({mover: int(np.flatnonzero(mask)[0]), "player_9": 0}, "player_9"),
        ({mover: illegal}, "illegal action .* legal actions"),
        ({mover: 999}, "illegal action"),
        ({mover: -1}, "illegal action"),
        ({mover: None}, "illegal action"),
        ({mover: 1.0}, "action must be an int"),
        ({mover: "discard 1m"}, "action must be an int"),
        ({mover: True}, "action must be an int"),
    ]
    for actions, message in bad:
        with pytest.raises(ValueError, match=message):
            env.step(actions)
        assert snapshot(env, {a: env.aec.observe(a) for a in env.agents}) == before, actions
    # the other agents' entries are ignored, whatever they hold
    legal = int(np.flatnonzero(mask)[0])
    actions = {a: ("junk" if i % 2 else None) for i, a in enumerate(AGENTS)}
    actions[mover] = np.int64(legal)
    observations, *_ = env.step(actions)
    assert env.aec.record()["hands"][0]["actions"][0][0] == int(mover[-1])


def test_penalize_ends_the_episode_on_an_illegal_mover_action():
    env = changchun_v0.parallel_env(illegal_action="penalize")
    observations, _ = env.reset(seed=2)
    mover = mover_of(observations)
    illegal = int(np.flatnonzero(observations[mover]["action_mask"] == 0)[0])
    _, rewards, terminations, _, infos = env.step({mover: illegal})
    assert all(terminations.values()) and env.agents == []
    assert infos[mover]["result"]["outcome"] == "illegal"
    assert rewards[mover] == -3.0 and sum(rewards.values()) == 0.0


def test_step_before_reset_or_after_the_end_raises():
    env = xinjiang_v0.parallel_env()
    with pytest.raises(RuntimeError, match="reset"):
        env.step({"player_0": 0})
    play(env, 1, np.random.default_rng(1))
    with pytest.raises(RuntimeError, match="reset"):
        env.step({"player_0": 0})
    observations, _ = env.reset(seed=1)
    assert env.agents == AGENTS and mover_of(observations)


def test_state_spaces_render_and_keywords():
    env = changchun_v0.parallel_env(render_mode="rgb_array", render_seat=1)
    observations, _ = env.reset(seed=9)
    assert env.possible_agents == AGENTS and env.metadata["name"] == "changchun_v0"
    np.testing.assert_array_equal(env.state(), env.aec.state())
    assert env.state_space.contains(env.state())
    for agent in AGENTS:
        assert env.observation_space(agent) is env.aec.observation_space(agent)
        assert env.action_space(agent) is env.aec.action_space(agent)
        assert env.observation_space(agent).contains(observations[agent])
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    with pytest.raises(ValueError, match="no_such_rule"):
        changchun_v0.parallel_env(no_such_rule=1)
    with pytest.raises(ValueError, match="render_mode"):
        xinjiang_v0.parallel_env(render_mode="video")


@pytest.mark.parametrize(
    ("env_id", "name"), [("mahjong_env/xinjiang-v0", "xinjiang_v0"), ("mahjong_env/changchun-v0", "changchun_v0")]
)
def test_pettingzoo_parallel_registry(env_id, name):
    env = pettingzoo.make("parallel", env_id, num_hands=2)
    assert isinstance(env, MahjongParallelEnv)
    assert env.metadata["name"] == name and env.aec.num_hands == 2
    observations, _ = env.reset(seed=1)
    assert mover_of(observations) in AGENTS
