"""The env contract under bad input (API.md "Actions", "Reset options", "Game records").

A rejected call changes nothing: an illegal or ill-typed action, a bad reset option, a bad
rule value raises ValueError and leaves the env, its records, rewards, infos and observations
bit-identical. `replay` certifies only records the engine could have produced and raises
ValueError, never another exception, for anything else. The Gymnasium env's reset always
returns a decision of the learner.
"""

from __future__ import annotations

import copy
import json
import math
import pickle
import random
import re
import subprocess
import sys
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from scenario import deal_options

from mahjong_env import actions as A
from mahjong_env import changchun_v0, xinjiang_v0
from mahjong_env.tiles import format_tiles, parse_tiles
from mahjong_env.tools.records import replay
from mahjong_env.variants import all_variants

MODULES = {v.name: v.env_module for v in all_variants()}
GARBAGE: list[Any] = [
    16.7,
    5.0,
    "16",
    True,
    False,
    np.float64(3.0),
    np.bool_(True),
    [1],
    None,
    1 + 0j,
    np.array([3, 4]),
]


def snapshot(raw: Any) -> bytes:
    """Everything a caller can see of the env, and the engine's state, as bytes."""
    game = raw.game
    # the engine's whole state, as pickle sees it (a compiled `Game` is an extension type with no
    # ``__dict__``), less ``_legal``, a cache of legal_actions()
    clone = copy.copy(game)
    clone._legal = None
    internals = pickle.dumps(clone)
    seen = {
        "record": json.dumps(raw.record(), sort_keys=True),
        "state": raw.state().tobytes(),
        "obs": {
            a: (o["observation"].tobytes(), o["action_mask"].tobytes())
            for a in raw.possible_agents
            for o in [raw.observe(a)]
        },
        "views": [raw.view(a) for a in raw.possible_agents],
        "rewards": dict(raw.rewards),
        "cumulative": dict(raw._cumulative_rewards),
        "terminations": dict(raw.terminations),
        "truncations": dict(raw.truncations),
        "infos": raw.infos,
        "selection": raw.agent_selection,
        "agents": list(raw.agents),
    }
    return pickle.dumps((seen, internals))


def illegal_ids(raw: Any) -> list[int]:
    legal = set(np.flatnonzero(raw.observe(raw.agent_selection)["action_mask"]).tolist())
    return [a for a in range(A.NUM_ACTIONS) if a not in legal]


# ---------------------------------------------------------------------- rejected actions change nothing


@pytest.mark.parametrize("variant", sorted(MODULES))
def test_rejected_calls_leave_everything_bit_identical(variant: str) -> None:
    rng = random.Random(13)
    rejected = 0
    for seed in range(4):
        raw = MODULES[variant].raw_env(num_hands=3)
        raw.reset(seed=seed)
        while not all(raw.terminations.values()):
            agent = raw.agent_selection
            if rng.random() < 0.3:
                bad = rng.choice([rng.choice(illegal_ids(raw)), -1, A.NUM_ACTIONS, 10**12, np.int64(-5), *GARBAGE])
                before = snapshot(raw)
                with pytest.raises(ValueError):
                    raw.step(bad)
                assert snapshot(raw) == before, f"step({bad!r}) by {agent} changed the env"
                rejected += 1
            legal = np.flatnonzero(raw.observe(agent)["action_mask"])
            raw.step(int(rng.choice(legal.tolist())))
    assert rejected > 100


def test_rejected_action_keeps_the_previous_hand_result_and_kong_payments() -> None:
    """API.md: a match's result stays in each info until that agent's next step; a rejected
    step is not a step (issue 13: a retrying loop lost the result and a kong payment)."""
    for seed in range(40):
        raw = changchun_v0.raw_env(num_hands=2)
        raw.reset(seed=seed)
        while raw.game.hand_index == 0:
            agent = raw.agent_selection
            raw.step(int(np.flatnonzero(raw.observe(agent)["action_mask"])[-1]))
        agent = raw.agent_selection
        result = raw.infos[agent]["result"]
        owed = raw._cumulative_rewards[agent]
        if owed == 0:
            continue
        with pytest.raises(ValueError, match="illegal action"):
            raw.step(illegal_ids(raw)[0])
        assert raw.infos[agent]["result"] is result
        assert raw._cumulative_rewards[agent] == owed
        return
    pytest.fail("no seed ended hand 0 with points owed to the next mover")


@pytest.mark.parametrize("bad", [16.7, "16", True, np.float32(2.0), 3.0])
def test_step_refuses_non_integer_actions_in_both_modes(bad: Any) -> None:
    for mode in ("raise", "penalize"):
        raw = changchun_v0.raw_env(illegal_action=mode)
        raw.reset(seed=1)
        before = snapshot(raw)
        with pytest.raises(ValueError, match="action must be an int"):
            raw.step(bad)
        assert snapshot(raw) == before


def test_numpy_integer_actions_are_accepted() -> None:
    raw = changchun_v0.raw_env()
    raw.reset(seed=2)
    legal = np.flatnonzero(raw.observe(raw.agent_selection)["action_mask"])
    raw.step(np.int16(legal[0]))
    raw.step(np.array(np.flatnonzero(raw.observe(raw.agent_selection)["action_mask"])[0]))
    assert len(raw.record()["hands"][0]["actions"]) == 2
    json.dumps(raw.record())


# ---------------------------------------------------------------------- reset options


def test_numpy_dealer_is_normalised_to_int() -> None:
    raw = changchun_v0.raw_env()
    raw.reset(seed=3, options={"dealer": np.int64(2), "dice": [np.int64(7)]})
    record = raw.record()
    assert type(record["hands"][0]["dealer"]) is int and record["hands"][0]["dealer"] == 2
    json.dumps(record)
    while not all(raw.terminations.values()):
        raw.step(int(np.flatnonzero(raw.observe(raw.agent_selection)["action_mask"])[0]))
    json.dumps(raw.infos["player_0"]["result"])
    assert replay(raw.record()) == [raw.infos["player_0"]["result"]]


@pytest.mark.parametrize(
    "options, match",
    [
        ({"dealer": 1.0}, "dealer"),
        ({"dealer": True}, "dealer"),
        ({"dealer": "1"}, "dealer"),
        ({"dealer": 4}, "dealer"),
        ({"dice": [7.0]}, "dice"),
        ({"dice": [True]}, "dice"),
        ({"dice": 7}, "dice"),
        ({"silver": [math.nan] * 4}, "silver"),
        ({"silver": [math.inf, 1, 1, 1]}, "silver"),
        ({"silver": [-1, 1, 1, 1]}, "silver"),
        ({"silver": [True, 1, 1, 1]}, "silver"),
        ({"silver": [1, 1, 1]}, "silver"),
        ({"hands": ["1m"] * 4}, "together"),
    ],
)
def test_bad_reset_options_change_nothing(options: dict[str, Any], match: str) -> None:
    raw = xinjiang_v0.raw_env()
    raw.reset(seed=5)
    for _ in range(3):
        raw.step(int(np.flatnonzero(raw.observe(raw.agent_selection)["action_mask"])[0]))
    before = snapshot(raw)
    with pytest.raises(ValueError, match=match):
        raw.reset(seed=6, options=options)
    assert snapshot(raw) == before


def test_bad_seed_and_options_type_are_refused() -> None:
    raw = changchun_v0.raw_env()
    for seed in (1.5, True, "3", -1):
        with pytest.raises(ValueError, match="seed"):
            raw.reset(seed=seed)
    with pytest.raises(ValueError, match="options"):
        raw.reset(seed=1, options=[("dealer", 1)])  # type: ignore[arg-type]


def test_custom_silver_is_recorded_and_replayed() -> None:
    raw = xinjiang_v0.raw_env(num_hands=2)
    raw.reset(seed=8, options={"silver": [np.float32(700), 70, 7000, 35000]})
    assert raw.infos["player_0"]["base"] == 2.0  # X7: 70 // 35
    while not all(raw.terminations.values()):
        raw.step(int(np.flatnonzero(raw.observe(raw.agent_selection)["action_mask"])[0]))
    record = json.loads(json.dumps(raw.record()))
    assert record["silver"] == [700.0, 70.0, 7000.0, 35000.0]
    assert replay(record) == [h["result"] for h in record["hands"]]


# ---------------------------------------------------------------------- Xinjiang configuration bounds


@pytest.mark.parametrize(
    "overrides, field",
    [
        ({"fan_cap": 1100}, "fan_cap"),
        ({"fan_cap": 0}, "fan_cap"),
        ({"kong_fan": -1}, "kong_fan"),
        ({"qingyise_fan": 31}, "qingyise_fan"),
        ({"gangshang_fan": -2}, "gangshang_fan"),
        ({"shape_fans": [["pinghu", 0], ["pengpenghu", 2], ["qidui", 3], ["haohua_qidui", 4]]}, "pinghu"),
        ({"shape_fans": [["pinghu", 1], ["pengpenghu", -2], ["qidui", 3], ["haohua_qidui", 4]]}, "pengpenghu"),
        ({"starting_silver": math.nan}, "starting_silver"),
        ({"starting_silver": math.inf}, "starting_silver"),
        ({"starting_silver": -1.0}, "starting_silver"),
        ({"starting_silver": 1e300}, "starting_silver"),
        ({"silver_divisor": 0}, "silver_divisor"),
        ({"silver_divisor": 10**30}, "silver_divisor"),
    ],
)
def test_xinjiang_config_is_bounded(overrides: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError, match=field):
        xinjiang_v0.env(**overrides)


def test_xinjiang_config_extremes_still_settle() -> None:
    """At the bounds (30 fan, 1e12 silver) every payment stays finite and whole."""
    raw = xinjiang_v0.raw_env(
        fan_cap=30,
        shape_fans=(("pinghu", 30), ("pengpenghu", 30), ("qidui", 30), ("haohua_qidui", 30)),
        starting_silver=1e12,
        silver_divisor=1,
    )
    for seed in range(30):
        raw.reset(seed=seed)
        while not all(raw.terminations.values()):
            mask = raw.observe(raw.agent_selection)["action_mask"]
            raw.step(A.WIN if mask[A.WIN] else int(np.flatnonzero(mask)[-1]))
        result = raw.infos["player_0"]["result"]
        assert all(math.isfinite(p["points"]) and p["points"] == int(p["points"]) for p in result["payments"])
        assert all(math.isfinite(s) for s in raw.infos["player_0"]["silver"])


# ---------------------------------------------------------------------- the Gymnasium env's reset


def _takes_wins(observation: dict[str, np.ndarray]) -> int:
    mask = observation["action_mask"]
    return A.WIN if mask[A.WIN] else int(np.flatnonzero(mask)[0])


# Changchun: the dealer player_0 discards 1m first (the lowest legal action) and player_1 wins
# on it (点炮: 123m 456p 789s 111z 99m), before player_2 or player_3 ever decide
FIRST_DISCARD_WINS = deal_options(["147m258p369s1234z5z", "23m456p789s111z99m", None, None], dealer=0)


def test_gym_reset_deals_again_when_the_opponents_end_the_episode_first() -> None:
    env = gym.make("mahjong_env/Changchun-v0", opponents=_takes_wins, seat=2).unwrapped
    obs, info = env.reset(seed=4, options=FIRST_DISCARD_WINS)
    assert info["redeals"] == 1
    assert env.action_masks().any() and env.aec.agent_selection == "player_2"
    assert env.aec.record()["hands"][0]["hands"] != FIRST_DISCARD_WINS["hands"]  # a fresh deal, not the one that ended
    again, info2 = env.reset(seed=4, options=FIRST_DISCARD_WINS)
    assert np.array_equal(obs, again) and info2["redeals"] == 1  # deterministic per seed
    # without the winning deal nothing is dealt again
    assert env.reset(seed=4)[1]["redeals"] == 0


def test_gym_reward_received_before_the_first_decision_is_not_lost() -> None:
    """A match whose first hand the opponents finish: its settlement reaches the learner."""
    # player_0 discards 5m, player_1 draws 4m and wins by self-draw (自摸): everyone pays
    self_draw = deal_options(["58m258p369s234z567z", "23m456p789s111z99m", None, None], wall="4m", dealer=0)
    env = gym.make("mahjong_env/Changchun-v0", opponents=_takes_wins, seat=2, num_hands=2).unwrapped
    _, info = env.reset(seed=4, options=self_draw)
    assert info["redeals"] == 0 and env.aec.game.hand_index == 1
    lost = info["result"]["deltas"][2] + info["result"]["kong_deltas"][2]
    assert lost < 0
    total, done = 0.0, False
    while not done:
        _, reward, done, _, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
        total += reward
    assert total == pytest.approx(env.aec.game.scores[2])


def test_gym_opponent_names_are_checked_at_construction() -> None:
    with pytest.raises(ValueError, match=r"heurstic.*heuristic"):
        gym.make("mahjong_env/Changchun-v0", opponents="heurstic")
    with pytest.raises(ValueError, match="valid names"):
        gym.make("mahjong_env/Xinjiang-v0", opponents=["random", "nope", "random"])
    env = gym.make("mahjong_env/Changchun-v0", opponents="heuristic", seat=1)
    env.reset(seed=0)
    assert env.unwrapped.action_masks().any()


class _MisbehavesWhenTold:
    """An opponent that plays its first legal action until `misbehave` is called, then returns
    the value it was given (``"illegal"``: its first masked-out id)."""

    def __init__(self) -> None:
        self.bad: tuple[Any, ...] = ()

    def misbehave(self, bad: Any) -> None:
        self.bad = (bad,)

    def __call__(self, observation: dict[str, np.ndarray]) -> Any:
        mask = observation["action_mask"]
        if not self.bad:
            return int(np.flatnonzero(mask)[0])
        (bad,) = self.bad
        return int(np.flatnonzero(mask == 0)[0]) if isinstance(bad, str) and bad == "illegal" else bad


@pytest.mark.parametrize("illegal_action", ["penalize", "raise"])
@pytest.mark.parametrize("bad", [5.0, np.float64(3.0), "3", True, None, [1], 10**6, -1, "illegal"])
def test_gym_opponent_returning_a_bad_action_forfeits_and_is_named(bad: Any, illegal_action: str) -> None:
    """The learner's step returns normally: the opponent pays 1 to each other seat (the AEC
    env's illegal outcome), its seat is named, the record replays, and the env plays on."""
    opponent = _MisbehavesWhenTold()
    env = gym.make("mahjong_env/Changchun-v0", opponents=opponent, seat=0, illegal_action=illegal_action).unwrapped
    _, info = env.reset(seed=1)
    assert "forfeit" not in info
    opponent.misbehave(bad)
    _, reward, terminated, truncated, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert terminated and not truncated and reward == 1.0
    seat = info["forfeit"]["seat"]
    assert seat != 0 and f"player_{seat}" in info["forfeit"]["message"]
    assert "legal actions" not in info["forfeit"]["message"]  # R13: they would show its concealed kinds
    assert info["result"]["outcome"] == "illegal" and info["result"]["deltas"][seat] == -3.0
    record = json.loads(json.dumps(env.aec.record()))
    assert record["hands"][0]["actions"][-1][0] == seat
    assert replay(record) == [info["result"]]
    opponent.bad = ()
    _, info = env.reset(seed=1)
    assert "forfeit" not in info
    done = False
    while not done:
        _, _, done, _, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert "forfeit" not in info and info["result"]["outcome"] != "illegal"


def test_gym_opponent_that_always_misbehaves_never_reaches_the_reset() -> None:
    """An opponent that forfeits before the learner's first decision ends that episode: it is
    dealt again (reset still returns a decision of the learner, no forfeit named)."""
    env = gym.make("mahjong_env/Changchun-v0", opponents=lambda observation: 5.0, seat=0).unwrapped
    _, info = env.reset(seed=1)
    assert info["redeals"] >= 1 and "forfeit" not in info and env.aec.agent_selection == "player_0"
    _, reward, terminated, _, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert terminated and reward == 1.0 and info["forfeit"]["seat"] == 1


@pytest.mark.parametrize(
    "options",
    [{"dealer": 7}, {"dealer": 1.0}, {"hands": ["1m"] * 4, "wall": ""}, {"dice": [99]}, {"hands": ["1m"] * 4}, [1]],
)
def test_gym_rejected_reset_changes_nothing(options: Any) -> None:
    """Same learner seat, opponents, RNG state and table: the env goes on exactly as a twin
    that never saw the bad reset."""
    env, twin = (gym.make("mahjong_env/Changchun-v0", opponents="random", seat="random").unwrapped for _ in range(2))
    env.reset(seed=0)
    twin.reset(seed=0)
    learner, opponents, rng = env.learner, dict(env.opponents), env.np_random.bit_generator.state
    before = snapshot(env.aec)
    with pytest.raises(ValueError, match="options"):
        env.reset(options=options)
    assert (env.learner, env.opponents, env.np_random.bit_generator.state) == (learner, opponents, rng)
    assert snapshot(env.aec) == before
    for _ in range(2):  # a step, then a fresh episode from the same RNG
        action = int(np.flatnonzero(env.action_masks())[0])
        got, want = env.step(action), twin.step(action)
        assert np.array_equal(got[0], want[0]) and got[1:4] == want[1:4]
        assert env.reset()[0].tobytes() == twin.reset()[0].tobytes() and env.learner == twin.learner


def test_env_package_does_not_import_agents() -> None:
    code = (
        "import sys, gymnasium as gym, numpy as np\n"
        "import mahjong_env, mahjong_env.adapters.gym_env, mahjong_env.tools.play\n"
        "import mahjong_env.tools.cli, mahjong_env.tools.records\n"
        "env = gym.make('mahjong_env/Changchun-v0', opponents=lambda o: int(np.flatnonzero(o['action_mask'])[0]))\n"
        "env.reset(seed=1); env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))\n"
        "assert 'agents' not in sys.modules, sorted(m for m in sys.modules if m.startswith('agents'))\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


# ---------------------------------------------------------------------- replay certifies only real records


def played_record(module: Any, seed: int, num_hands: int = 1, **kwargs: Any) -> dict[str, Any]:
    raw = module.raw_env(num_hands=num_hands, **kwargs)
    raw.reset(seed=seed)
    rng = random.Random(seed)
    while not all(raw.terminations.values()):
        mask = raw.observe(raw.agent_selection)["action_mask"]
        raw.step(int(rng.choice(np.flatnonzero(mask).tolist())))
    return json.loads(json.dumps(raw.record()))


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    out = [played_record(changchun_v0, s) for s in range(3)] + [played_record(xinjiang_v0, s) for s in range(2)]
    out.append(played_record(changchun_v0, 7, num_hands=3))
    out.append(played_record(xinjiang_v0, 7, num_hands=2))
    penalised = changchun_v0.raw_env(illegal_action="penalize")
    penalised.reset(seed=1)
    penalised.step(illegal_ids(penalised)[0])
    out.append(json.loads(json.dumps(penalised.record())))
    return out


def _bao_record() -> dict[str, Any]:
    for seed in range(200):
        record = played_record(changchun_v0, seed)
        if record["hands"][0]["dice"]:
            return record
    raise AssertionError("no seed rolled the bao")


def test_replay_refuses_impossible_deals_and_dice(records: list[dict[str, Any]]) -> None:
    five = copy.deepcopy(records[0])
    hand = five["hands"][0]
    wall = parse_tiles(hand["wall"])
    kind = parse_tiles(hand["hands"][1])[0]
    wall[wall.index(next(t for t in wall if t != kind))] = kind  # a fifth copy of that kind
    hand["wall"] = format_tiles(wall)
    with pytest.raises(ValueError, match="four of each kind"):
        replay(five)

    bao = _bao_record()
    for dice in ([0], [100], [-7], [7.5], ["7"], [True]):
        bad = copy.deepcopy(bao)
        bad["hands"][0]["dice"] = dice + bad["hands"][0]["dice"][1:]
        with pytest.raises(ValueError, match="dice"):
            replay(bad)
    extra = copy.deepcopy(bao)
    extra["hands"][0]["dice"].append(7)  # a roll the hand never made
    with pytest.raises(ValueError, match="dice"):
        replay(extra)


def test_replay_refuses_forged_penalties_and_missing_keys(records: list[dict[str, Any]]) -> None:
    forged = copy.deepcopy(records[0])
    hand = forged["hands"][0]
    seat, name = hand["actions"][0]
    hand["actions"] = [[seat, f"illegal {name}"]]  # the action was legal: no penalty can be
    raw = changchun_v0.raw_env(illegal_action="penalize")
    raw.reset(seed=forged["seed"], options={"dealer": hand["dealer"], "hands": hand["hands"], "wall": hand["wall"]})
    raw.game.penalize(seat, A.action_id(name))  # the matching result, made by hand
    hand["result"] = json.loads(json.dumps(raw.game.result))
    with pytest.raises(ValueError, match="was legal"):
        replay(forged)

    for key in ("result", "actions", "dice", "wall", "dealer"):
        bad = copy.deepcopy(records[0])
        del bad["hands"][0][key]
        with pytest.raises(ValueError, match=key):
            replay(bad)
    for key in ("variant", "seed", "hands"):
        bad = copy.deepcopy(records[0])
        del bad[key]
        with pytest.raises(ValueError, match=key):
            replay(bad)
    later = copy.deepcopy(records[5])  # a later hand of a match must be the seed's deal (R3)
    later["hands"][1]["hands"], later["hands"][1]["wall"] = later["hands"][0]["hands"], later["hands"][0]["wall"]
    with pytest.raises(ValueError, match="hand 1"):
        replay(later)


def _mutate(rng: random.Random, value: Any, depth: int = 0) -> Any:
    """One random change somewhere inside a JSON value."""
    choices = [None, True, 0, -7, 1.5, 10**20, "", "5m", "illegal discard 1m", [], {}, [0, "pass"], math.nan]
    if isinstance(value, dict) and value and rng.random() < 0.85:
        key = rng.choice(sorted(value))
        roll = rng.random()
        if roll < 0.15:
            del value[key]
        elif roll < 0.25:
            value[rng.choice(["players", "silver", "num_hands", "config", "x"])] = rng.choice(
                choices + [["a", "b", "c", "d"]]
            )
        else:
            value[key] = _mutate(rng, value[key], depth + 1)
        return value
    if isinstance(value, list) and value and rng.random() < 0.85:
        i = rng.randrange(len(value))
        roll = rng.random()
        if roll < 0.15:
            del value[i]
        elif roll < 0.3:
            value.insert(i, copy.deepcopy(value[rng.randrange(len(value))]))
        elif roll < 0.4:
            j = rng.randrange(len(value))
            value[i], value[j] = value[j], value[i]
        else:
            value[i] = _mutate(rng, value[i], depth + 1)
        return value
    if isinstance(value, str) and value and rng.random() < 0.7:
        chars = list(value)
        i = rng.randrange(len(chars))
        chars[i] = rng.choice("123456789mpsz0x ")
        return "".join(chars)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and rng.random() < 0.6:
        return value + rng.choice([-1, 1, 2, -100, 0.5])
    return rng.choice(choices)


def test_replay_fuzz_replays_identically_or_raises_value_error(records: list[dict[str, Any]]) -> None:
    rng = random.Random(2024)
    expected = [replay(r) for r in records]
    outcomes = {"same": 0, "refused": 0}
    for trial in range(600):
        k = trial % len(records)
        record = copy.deepcopy(records[k])
        for _ in range(rng.choice([1, 1, 2, 3])):
            record = _mutate(rng, record)
        try:
            results = replay(record)
        except ValueError:
            outcomes["refused"] += 1
            continue
        # a record may stop after any hand of a match ("the episode so far"): a prefix of the results
        assert results == expected[k][: len(results)], f"a mutated record replayed to different results: {record}"
        outcomes["same"] += 1
    assert outcomes["refused"] > 300 and outcomes["same"] > 10, outcomes


@pytest.mark.parametrize("bad", [None, [], "record", 3, {"variant": "changchun_v0", "seed": 1, "hands": [[]]}])
def test_replay_refuses_non_records(bad: Any) -> None:
    with pytest.raises(ValueError):
        replay(bad)


def test_cli_replay_reports_a_malformed_record_in_one_line(tmp_path: Any, records: list[dict[str, Any]]) -> None:
    from mahjong_env.tools.cli import main

    bad = copy.deepcopy(records[0])
    bad["hands"][0]["dice"] = {"x": 1}
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(bad) + "\n" + "[1, 2]\n", encoding="utf-8")
    assert main(["replay", str(path), "-o", str(tmp_path / "x.html")]) == 2
    assert main(["replay", str(path), "--record", "1", "-o", str(tmp_path / "y.html")]) == 2
    (tmp_path / "db.sqlite").write_bytes(b"SQLite format 3\x00" + b"\x00" * 200)
    assert main(["replay", str(tmp_path / "db.sqlite")]) == 2
    deep = tmp_path / "deep.jsonl"
    deep.write_text("[" * 100_000 + "]" * 100_000 + "\n{}\n", encoding="utf-8")
    assert main(["replay", str(deep), "-o", str(tmp_path / "z.html")]) == 2


# ---------------------------------------------------------------------- documentation


SECTIONS = (
    "Description",
    "Action Space",
    "Observation Space",
    "Rewards",
    "Episode End",
    "Arguments",
    "Version History",
)


@pytest.mark.parametrize("module", [xinjiang_v0, changchun_v0])
def test_env_and_raw_env_have_gymnasium_style_docs(module: Any) -> None:
    import pydoc

    for obj in (module.env, module.raw_env):
        assert obj.__doc__, f"{module.__name__}.{obj.__name__} has no docstring"
        text = pydoc.render_doc(obj, renderer=pydoc.plaintext)
        for section in SECTIONS:
            assert f"\n{section}\n" in obj.__doc__ and section in text, (obj, section)
        fields = module.raw_env.config_class.__name__
        assert fields in obj.__doc__ and "illegal_action" in obj.__doc__ and "num_hands" in obj.__doc__


def test_decision_info_is_what_tournament_agents_get() -> None:
    """The gym env and terminal play give opponents the same info as the tournament."""
    agents = pytest.importorskip("agents")
    from mahjong_env.adapters.policies import decision_info

    env = changchun_v0.env()
    env.reset(seed=3)
    for agent in env.possible_agents:
        assert decision_info(env, agent) == agents.agent_info(env, agent)


# ---------------------------------------------------------------------- infos, render_seat, action helpers


def _played_to_the_end(raw: Any, seed: int) -> Any:
    raw.reset(seed=seed)
    while not all(raw.terminations.values()):
        raw.step(int(np.flatnonzero(raw.observe(raw.agent_selection)["action_mask"])[-1]))
    return raw


@pytest.mark.parametrize("variant", sorted(MODULES))
def test_each_agent_gets_its_own_result_and_silver(variant: str) -> None:
    """Editing one agent's info (a reward-shaping wrapper normalising in place) changes no
    other agent's info, nor the record, and the env's own record still replays."""
    raw = _played_to_the_end(MODULES[variant].raw_env(num_hands=2), seed=11)  # payments in both
    record = json.dumps(raw.record(), sort_keys=True)
    infos = [raw.infos[a] for a in raw.possible_agents]
    others = copy.deepcopy(infos[1:])
    assert all(info["result"] == infos[0]["result"] for info in infos)
    mine = infos[0]
    assert mine["result"]["payments"]
    mine["result"]["deltas"][0] = 999.0
    mine["result"]["fans"].append(["forged", 9])
    mine["result"]["payments"].append({"from": 0, "to": 1, "points": 9.0, "reason": "forged"})
    for payment in mine["result"]["payments"]:
        payment["points"] = -1.0
    if "silver" in mine:
        mine["silver"][0] = -5.0
    assert infos[1:] == others
    assert json.dumps(raw.record(), sort_keys=True) == record
    replay(raw.record())


def test_gym_info_result_is_the_learners_own() -> None:
    env = gym.make("mahjong_env/Xinjiang-v0", opponents="random", seat=0).unwrapped
    env.reset(seed=11)
    done = False
    while not done:
        _, _, done, _, info = env.step(int(np.flatnonzero(env.action_masks())[-1]))
    record = json.dumps(env.aec.record(), sort_keys=True)
    info["result"]["deltas"][1] = 999.0
    info["silver"][1] = -5.0
    assert json.dumps(env.aec.record(), sort_keys=True) == record
    assert env.aec.infos["player_1"]["result"]["deltas"][1] != 999.0 and env.aec.infos["player_1"]["silver"][1] >= 0
    replay(env.aec.record())


def test_an_edited_record_does_not_change_the_env() -> None:
    raw = _played_to_the_end(changchun_v0.raw_env(), seed=4)
    record = raw.record()
    original = json.dumps(record, sort_keys=True)
    record["hands"][0]["result"]["deltas"][0] = 999.0
    record["hands"][0]["hands"][0] = "1m"
    assert json.dumps(raw.record(), sort_keys=True) == original
    assert raw.infos["player_0"]["result"]["deltas"][0] != 999.0


def test_the_record_shows_each_hand_as_dealt() -> None:
    # the engine keeps the deal as tile indices and formats it only when a record is asked for
    options = deal_options(["147m258p369s1234z5z", "23m456p789s111z99m", None, None], dealer=0)
    env = changchun_v0.env(num_hands=2)
    env.reset(seed=4, options=options)
    dealt = env.unwrapped.record()["hands"][0]
    assert dealt["hands"] == [format_tiles(parse_tiles(h)) for h in options["hands"]]
    assert dealt["wall"] == format_tiles(parse_tiles(options["wall"]))
    rng = random.Random(0)
    for _agent in env.agent_iter():  # both hands: tiles move, the record of the first deal does not
        obs, _, termination, truncation, _ = env.last()
        legal = np.flatnonzero(obs["action_mask"])
        env.step(None if termination or truncation else int(rng.choice(legal)))
    played = env.unwrapped.record()
    assert [played["hands"][0][key] for key in ("hands", "wall")] == [dealt["hands"], dealt["wall"]]
    second = env.unwrapped.game.hand_logs[1]
    assert played["hands"][1]["wall"] == format_tiles(second.wall) and len(played["hands"]) == 2
    replay(played)


@pytest.mark.parametrize("bad", [1.0, 2.0, True, False, np.bool_(True), np.float64(1.0), "1", 4, -1, [1]])
def test_render_seat_must_be_a_seat_number(bad: Any) -> None:
    with pytest.raises(ValueError, match=rf"render_seat .* got {re.escape(repr(bad))}"):
        changchun_v0.env(render_mode="ansi", render_seat=bad)


def test_render_seat_accepts_numpy_integers() -> None:
    env = changchun_v0.env(render_mode="ansi", render_seat=np.int64(2))
    assert type(env.unwrapped.render_seat) is int and env.unwrapped.render_seat == 2
    env.reset(seed=1)
    assert env.render() == env.unwrapped.render_view("player_2")


@pytest.mark.parametrize("bad", [1.7, 2.0, True, False, np.bool_(True), np.float64(3.0), "3", None, [3], -1, 182])
def test_action_name_refuses_anything_but_an_id(bad: Any) -> None:
    with pytest.raises(ValueError, match=re.escape(repr(bad))):
        A.action_name(bad)


@pytest.mark.parametrize("good", [3, np.int64(3), np.int8(3), np.uint16(3)])
def test_action_name_accepts_python_and_numpy_integers(good: Any) -> None:
    assert A.action_name(good) == "discard 4m"
    assert A.action_name(A.NUM_ACTIONS - 1) == "special_nines"


@pytest.mark.parametrize("bad", [5, None, 3.0, b"pong", ["pong"], True])
def test_action_id_refuses_anything_but_a_name(bad: Any) -> None:
    with pytest.raises(ValueError, match=re.escape(repr(bad))):
        A.action_id(bad)


def test_human_render_for_a_seat_prints_no_frame_for_another_seats_private_decision(capsys):
    # R13: whether anybody is asked in a claim window depends on hidden tiles, so player_1's
    # screen must not change with it: seat 2 holding a pair of the discarded 9p (asked, passes)
    # and seat 2 holding none (nobody asked) print the same frames
    frames = []
    for seat2 in ("99p147m258s36s125z", "147m258s36s1257z5p"):
        hands = ["147m258p369s1234z9p", "258m147p258s1356z", seat2, "369m369p147s2467z"]
        options = deal_options(hands, "1m2m3m4m")
        env = xinjiang_v0.raw_env(render_mode="human", render_seat=1)
        env.reset(seed=0, options=options)
        capsys.readouterr()
        env.step(A.action_id("discard 9p"))
        asked = env.agent_selection == "player_2"
        while env.agent_selection != "player_1":
            env.step(A.action_id("pass"))
        frames.append((asked, capsys.readouterr().out))
    (asked_base, base), (asked_twin, twin) = frames
    assert asked_base and not asked_twin  # the deals differ as intended
    assert base == twin and base.count("to move") == 1
