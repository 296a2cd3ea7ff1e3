"""The variant registry (`mahjong_env.variants`): one table that every tool reads.

The toy variant below is a third rule set written the way a new one would be: a config and a
rules class (here Xinjiang's with discard wins allowed, X9) and a ``raw_env`` / ``env()`` in its
own module (this file), plus one `register` call. No other file changes, and yet the PettingZoo
and Gymnasium registries, the vector env, records and replay, the bench and the soak all play it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any, ClassVar

import gymnasium
import numpy as np
import pettingzoo
import pytest

from mahjong_env import changchun_v0, replay, xinjiang_v0
from mahjong_env.adapters.aec import MahjongEnv, make_env_factory
from mahjong_env.rules.changchun import ChangchunConfig, ChangchunRules
from mahjong_env.rules.xinjiang import XinjiangConfig, XinjiangRules
from mahjong_env.variants import (
    Variant,
    all_variants,
    build_table,
    get_variant,
    register,
    unregister,
    variant_names,
)


@dataclasses.dataclass(frozen=True)
class ToyConfig(XinjiangConfig):
    """Xinjiang, but a discard may be won on (X9)."""

    allow_discard_win: bool = True


class ToyRules(XinjiangRules):
    name = "toy"


class raw_env(MahjongEnv):  # noqa: N801 (PettingZoo naming)
    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi", "human"],
        "name": "toy_v0",
        "is_parallelizable": False,
    }
    rules_class = ToyRules
    config_class = ToyConfig


env = make_env_factory(raw_env)

TOY = Variant("toy", "toy_v0", __name__, ToyRules, ToyConfig)


@pytest.fixture
def toy() -> Iterator[Variant]:
    register(TOY)
    try:
        yield TOY
    finally:
        unregister("toy")


@pytest.mark.parametrize(
    ("names", "module", "rules", "config"),
    [
        (("xinjiang", "xinjiang_v0"), xinjiang_v0, XinjiangRules, XinjiangConfig),
        (("changchun", "changchun_v0"), changchun_v0, ChangchunRules, ChangchunConfig),
    ],
)
def test_builtin_variants_by_either_name(names, module, rules, config):
    first, second = (get_variant(n) for n in names)
    assert first is second
    assert first.env_module is module and first.raw_env is module.raw_env and first.env is module.env
    assert first.rules_class is rules and first.config_class is config
    assert first.profiles is config.profiles  # the rules module's table, not a copy
    assert first.env_name == module.raw_env.metadata["name"]
    assert first.pettingzoo_id in pettingzoo.aec_registry and first.gymnasium_id in gymnasium.registry


def test_every_variant_holds_the_classes_its_page_binds(toy):
    for variant in all_variants():
        page = variant.raw_env
        assert (variant.rules_class, variant.config_class) == (page.rules_class, page.config_class)


def test_build_table_checks_the_overrides_and_binds_the_rules():
    table = build_table("changchun", {"profile": "mil2024", "fan_cap": 5})
    assert type(table.config) is ChangchunConfig and type(table.rules) is ChangchunRules
    assert table.rules.config is table.config and table.config.fan_cap == 5 and table.config.final_draws == 4
    assert build_table(get_variant("xinjiang_v0"), {}).config == build_table(xinjiang_v0.raw_env, {}).config
    game = table.new_game(2)
    assert game.rules is table.rules and game.num_hands == 2
    with pytest.raises(ValueError, match="unknown rule option"):
        build_table("xinjiang", {"no_such_field": 1})


def test_registry_order_and_unknown_names():
    assert variant_names() == ("xinjiang", "changchun")
    assert [v.name for v in all_variants()] == ["xinjiang", "changchun"]
    assert "mil2024" in get_variant("changchun").profiles
    for bad in ("Xinjiang", "xinjiang_v1", "", None, 3):
        with pytest.raises(ValueError, match=r"unknown variant .*valid variants: 'xinjiang' \('xinjiang_v0'\)"):
            get_variant(bad)


def test_register_rejects_clashes_and_builtins_stay():
    with pytest.raises(ValueError, match="already registered"):
        register(Variant("xinjiang", "other_v0", __name__, ToyRules, ToyConfig))
    with pytest.raises(ValueError, match="already registered"):
        register(Variant("other", "changchun_v0", __name__, ToyRules, ToyConfig))
    with pytest.raises(ValueError, match="built-in"):
        unregister("xinjiang_v0")
    assert variant_names() == ("xinjiang", "changchun")


def _random_episode(aec, seed: int) -> None:
    aec.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _agent in aec.agent_iter():
        obs, _, termination, truncation, _ = aec.last()
        aec.step(None if termination or truncation else int(rng.choice(np.flatnonzero(obs["action_mask"]))))


def test_a_toy_variant_registered_at_run_time_plays_everywhere(toy):
    from mahjong_env.adapters.vector import VectorMahjong
    from mahjong_env.tools.bench import bench_aec, bench_engine
    from mahjong_env.tools.records import variant_rules
    from mahjong_env.tools.soak import soak

    assert variant_names() == ("xinjiang", "changchun", "toy") and get_variant("toy_v0") is toy
    assert toy.rules_class is ToyRules and toy.profiles == {"seed": {}}

    aec = pettingzoo.make("aec", "mahjong_env/toy-v0")
    _random_episode(aec, seed=3)
    record = aec.unwrapped.record()
    assert record["variant"] == "toy_v0" and record["config"]["allow_discard_win"] is True
    assert replay(record) == [hand["result"] for hand in record["hands"]]
    assert isinstance(variant_rules("toy", record["config"]), ToyRules)

    gym_env = gymnasium.make("mahjong_env/Toy-v0", opponents="random")
    obs, info = gym_env.reset(seed=0)
    assert obs.shape == gym_env.observation_space.shape and info["action_mask"].any()
    gym_env.close()

    venv = VectorMahjong("toy", 2, seed=1)
    obs, masks, _ = venv.reset()
    venv.step(np.array([int(np.flatnonzero(m)[0]) for m in masks]))
    assert venv.variant == "toy_v0"

    assert bench_engine("toy", 2)["hands"] == 2 and bench_aec("toy", 1)["hands"] == 1
    assert soak("toy", 300, num_hands=1, progress=False)["ok"]


def test_unregister_removes_the_ids(toy):
    unregister("toy")
    try:
        assert "toy" not in variant_names()
        assert toy.pettingzoo_id not in pettingzoo.aec_registry and toy.gymnasium_id not in gymnasium.registry
        with pytest.raises(ValueError, match="unknown variant 'toy'"):
            get_variant("toy")
    finally:
        register(TOY)  # the fixture unregisters it again
