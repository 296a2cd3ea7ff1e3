"""PettingZoo and Gymnasium conformance of every environment (API.md)."""

from __future__ import annotations

import itertools

import gymnasium
import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, render_test, seed_test
from scenario import deal_options

import mahjong_env
from mahjong_env import actions as A
from mahjong_env import changchun_v0, xinjiang_v0
from mahjong_env.adapters.picture import FRAME_HEIGHT, FRAME_WIDTH

VARIANTS = [xinjiang_v0, changchun_v0]


@pytest.mark.parametrize("module", VARIANTS, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_api_test(module):
    env = module.env()
    api_test(env, num_cycles=400, verbose_progress=False)


@pytest.mark.parametrize("module", VARIANTS, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_seed_test(module):
    seed_test(module.env, num_cycles=400)


@pytest.mark.parametrize("module", VARIANTS, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_render_test(module):
    render_test(module.env)


@pytest.mark.parametrize("module", VARIANTS, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_rgb_frames_have_one_size_and_follow_the_game(module):
    env = module.env(render_mode="rgb_array")
    env.reset(seed=5)
    frames = [env.render()]
    for _ in range(12):
        observation, *_ = env.last()
        env.step(int(np.flatnonzero(observation["action_mask"])[0]))
        frames.append(env.render())
    assert {(f.shape, f.dtype.name) for f in frames} == {((FRAME_HEIGHT, FRAME_WIDTH, 3), "uint8")}
    assert all(not np.array_equal(a, b) for a, b in itertools.pairwise(frames))


def test_a_seats_frame_shows_no_hidden_tile():
    """Two deals that differ only in tiles seat 0 cannot see (R13) give seat 0 the same frame;
    the full table's frames differ."""
    dealer = "1119m2345p6789s13z"
    deals = [deal_options([dealer, "111p999p111s999s5z", None, None]), deal_options([dealer, None, None, None])]
    seat_frames, table_frames = [], []
    for options in deals:
        for render_seat, frames in ((0, seat_frames), (None, table_frames)):
            env = xinjiang_v0.env(render_mode="rgb_array", render_seat=render_seat)
            env.reset(seed=1, options=options)
            frames.append(env.render())
    assert deals[0]["hands"][1] != deals[1]["hands"][1]
    np.testing.assert_array_equal(seat_frames[0], seat_frames[1])
    assert not np.array_equal(table_frames[0], table_frames[1])


@pytest.mark.parametrize("module", VARIANTS, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_metadata_and_spaces(module):
    env = module.env()
    raw = env.unwrapped
    assert raw.metadata["name"] == module.__name__.rsplit(".", 1)[-1]
    assert set(raw.metadata["render_modes"]) == {"ansi", "human", "rgb_array"}
    assert raw.metadata["render_fps"] > 0
    assert raw.metadata["is_parallelizable"] is False
    env.reset(seed=3)
    for agent in env.possible_agents:
        assert env.action_space(agent) is env.action_space(agent)
        assert env.observation_space(agent) is env.observation_space(agent)
        assert env.observe(agent)["action_mask"].dtype.name == "int8"
    assert raw.state().shape == raw.state_space.shape


def _draws(space, n: int = 8) -> list[int]:
    return [int(space.sample()) for _ in range(n)]


def _seeded(seed: int) -> list[int]:
    space = gymnasium.spaces.Discrete(A.NUM_ACTIONS)
    space.seed(seed)
    return _draws(space)


@pytest.mark.parametrize("module", VARIANTS, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_reset_seeds_the_action_space_as_seed_would(module):
    # the space is seeded lazily (at its first sample), with the draws of seed(s) at reset
    env = module.env()
    space = env.action_space("player_0")
    env.reset(seed=11)
    assert _draws(space) == _seeded(11)
    env.reset(seed=11)  # the same space object, seeded again by the reset
    assert _draws(env.action_space("player_3")) == _seeded(11)
    env.reset(seed=11)
    space.seed(12)  # an explicit seed after the reset wins over the reset's
    assert _draws(space) == _seeded(12)
    env.reset(seed=5)
    env.reset(seed=11)  # only the last reset's seed counts
    assert _draws(space) == _seeded(11)


@pytest.mark.parametrize("env_id", ["mahjong_env/xinjiang-v0", "mahjong_env/changchun-v0"])
def test_pettingzoo_registry(env_id):
    env = pettingzoo.make("aec", env_id)
    env.reset(seed=1)
    assert env.agent_selection in env.possible_agents
    assert mahjong_env.__name__ == "mahjong_env"


@pytest.mark.parametrize("module", VARIANTS, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_unknown_keyword_and_bad_values_raise(module):
    with pytest.raises(ValueError, match="no_such_rule"):
        module.env(no_such_rule=True)
    with pytest.raises(ValueError, match="num_hands"):
        module.env(num_hands=0)
    with pytest.raises(ValueError, match="render_mode"):
        module.env(render_mode="video")
    with pytest.raises(ValueError, match="allow_tianhu"):
        module.env(allow_tianhu="yes")


def test_readme_documents_every_config_field_and_action():
    """The README's configuration and action tables stay complete."""
    import dataclasses
    from pathlib import Path

    from mahjong_env.rules.changchun import ChangchunConfig
    from mahjong_env.rules.xinjiang import XinjiangConfig

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    for cls in (XinjiangConfig, ChangchunConfig):
        for field in dataclasses.fields(cls):
            assert f"`{field.name}`" in readme, f"README does not document {cls.__name__}.{field.name}"
    for verb in ("discard", "ready", "concealed_kong", "added_kong", "special_add"):
        assert f"`{verb} T`" in readme
    for name in ("chow_low", "pong", "kong", "win", "pass", "view_bao", "special_winds", "special_nines"):
        assert f"`{name}`" in readme
