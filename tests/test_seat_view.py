"""What one seat knows (`mahjong_env.seat_view`): the `SeatView` every reader reads.

- ``SeatView.to_dict()`` is API.md's ``view()`` byte for byte: checked against a reference
  written from the engine's state (the view as it was computed before the `SeatView`) over many
  seeded states of both variants and every profile, with concealed kongs shown and hidden, for
  every seat and the full table, with the table's kept memory and a fresh one;
- `SeatView.from_dict` reads a view back (``to_dict`` gives the dict again) and pickles;
- R13: changing what a seat may not see (another seat's concealed tiles against the wall's)
  changes neither its `SeatView` nor its observation;
- every agent ``info`` is `decision_info` of the view, and the heuristic decides the same from
  the `SeatView` as from the view dict, also after a pickle round trip (the sandbox's wire).
"""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from agents import agent_info
from agents.heuristic import HeuristicAgent
from mahjong_env import actions as A
from mahjong_env import changchun_v0, xinjiang_v0
from mahjong_env.adapters.policies import decision_info as env_decision_info
from mahjong_env.adapters.vector import VectorMahjong
from mahjong_env.engine.state import MELD_KIND_NAMES, PHASE_NAMES, SPECIAL_KINDS, MeldKind, Phase
from mahjong_env.features import PlayerAnalysis, analysis_planes
from mahjong_env.observation import ObservationEncoder
from mahjong_env.seat_view import ClaimView, MeldView, SeatView, TableMemory, decision_info, rules_for, seat_view
from mahjong_env.tiles import format_counts, tile_name

CASES = [
    (xinjiang_v0, {}),
    (changchun_v0, {}),
    (changchun_v0, {"profile": "mil2024"}),
    (changchun_v0, {"concealed_kong_visible": False}),
]
IDS = ["xinjiang", "changchun", "changchun-mil2024", "changchun-hidden-kongs"]
AGENTS = [f"player_{i}" for i in range(4)]


# ---------------------------------------------------------------------- the reference view


def _meld_tiles(meld: Any) -> str:
    if meld.kind in SPECIAL_KINDS or meld.kind is MeldKind.CHOW:  # written in order, suit by suit
        out, suit = [], None
        for t in meld.tiles:
            name = tile_name(t)
            if suit is not None and name[1] != suit:
                out.append(suit)
            out.append(name[0])
            suit = name[1]
        return "".join(out) + (suit or "")
    return "".join(tile_name(t)[0] for t in meld.tiles) + tile_name(meld.tiles[0])[1]


def reference_view(game: Any, seat: int | None, concealed_kong_visible: bool) -> dict[str, Any]:
    """API.md ``view()`` read straight from the engine's state (the pre-`SeatView` code)."""
    me = game.seats[seat] if seat is not None else None
    phase = game.phase
    shown = seat is None or phase in (Phase.TURN, Phase.OVER) or game.actor == seat
    window = game.window if phase in (Phase.CLAIM, Phase.ROB) and shown else None
    bao_seen = bool(me is not None and me.bao_seen and game.bao is not None)
    view: dict[str, Any] = {
        "seat": seat,
        "dealer": game.dealer,
        "hand": format_counts(me.counts) if me is not None else None,
        "drawn": tile_name(me.drawn) if me is not None and me.drawn is not None else None,
        "melds": [
            [
                {"kind": MELD_KIND_NAMES[m.kind], "tiles": None, "from": None}
                if m.kind is MeldKind.CONCEALED_KONG and not concealed_kong_visible and seat not in (None, s)
                else {"kind": MELD_KIND_NAMES[m.kind], "tiles": _meld_tiles(m), "from": m.source}
                for m in st.melds
            ]
            for s, st in enumerate(game.seats)
        ],
        "discards": [[tile_name(t) for t in st.river] for st in game.seats],
        "ready": [st.ready for st in game.seats],
        "xianggong": [st.xianggong for st in game.seats],
        "concealed_counts": [sum(st.counts) for st in game.seats],
        "bao": tile_name(game.bao) if game.bao is not None and (seat is None or bao_seen) else None,
        "bao_seen": bao_seen,
        "dice": list(game.dice.rolls),
        "wall_remaining": game.wall.remaining,
        "scores": list(game.scores),
        "hand_index": game.hand_index,
        "phase": PHASE_NAMES[phase] if shown else "turn",
        "claim": (
            {"seat": window.source, "tile": tile_name(window.tile), "kind": window.kind.value}
            if window is not None
            else None
        ),
        "last_discard": (
            {"seat": game.last_discard[0], "tile": tile_name(game.last_discard[1])}
            if game.last_discard is not None
            else None
        ),
        "history": [[h[0], tile_name(h[1]), bool(h[2]), bool(h[3])] for h in game.history],
    }
    if seat is None:
        view["hands"] = [format_counts(st.counts) for st in game.seats]
        view["drawn_tiles"] = [tile_name(st.drawn) if st.drawn is not None else None for st in game.seats]
    if phase != Phase.OVER and shown:
        view["to_move"] = game.actor
    return view


def _eager(rng: np.random.Generator, mask: np.ndarray) -> int:
    """Random legal play that likes claims, kongs, special groups, ready and the bao (so that
    hidden kongs, windows, 抢叉 and bao views occur), winning only now and then."""
    legal = np.flatnonzero(mask)
    if mask[A.WIN] and rng.random() < 0.3:
        return A.WIN
    rare = [int(a) for a in legal if A.READY <= a < A.CHOW_LOW or A.CHOW_LOW <= a <= A.KONG or a >= A.VIEW_BAO]
    if rare and rng.random() < 0.8:
        return int(rng.choice(rare))
    return int(rng.choice(legal))


def played_states(module: Any, rules: dict[str, Any], seeds: range, num_hands: int = 2) -> Iterator[Any]:
    """The raw env at every decision of eager random play (matches of ``num_hands`` hands)."""
    for seed in seeds:
        env = module.raw_env(num_hands=num_hands, **rules)
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        while not all(env.terminations.values()):
            yield env
            env.step(_eager(rng, env.action_mask(env.agent_selection)))
        yield env


# ---------------------------------------------------------------------- the view dict


@pytest.mark.parametrize(("module", "rules"), CASES, ids=IDS)
def test_to_dict_is_the_view_byte_for_byte(module, rules):
    """Every seat's view and the full table's, from the env's kept memory and from a fresh
    memory, at every decision: equal to the reference, key order and types included."""
    states = 0
    for env in played_states(module, rules, range(12)):
        visible = env.config.concealed_kong_visible
        for seat in (None, 0, 1, 2, 3):
            expected = json.dumps(reference_view(env.game, seat, visible if seat is not None else True))
            kept = seat_view(env.game, seat, env._encoder.memory).to_dict()
            fresh = seat_view(env.game, seat, TableMemory(visible)).to_dict()
            assert json.dumps(kept) == expected and json.dumps(fresh) == expected, (seat, env.game.log[-1:])
            if seat is not None:
                assert env.view(AGENTS[seat]) == kept
        states += 1
    assert states > 500


def test_the_view_covers_windows_hidden_kongs_and_the_bao():
    """The states above reach what makes views differ between seats: a claim window shown only
    to the player asked, another's face-down kong, a seen bao, special groups."""
    seen = set()
    for env in played_states(changchun_v0, {"concealed_kong_visible": False}, range(12)):
        for seat in range(4):
            view = seat_view(env.game, seat, env._encoder.memory)
            if view.claim is not None:
                seen.add("claim")
            if any(m.hidden for melds in view.melds for m in melds):
                seen.add("face down")
            if view.bao is not None:
                seen.add("bao")
            if any(m.kind in SPECIAL_KINDS for melds in view.melds for m in melds):
                seen.add("special")
            if env.game.phase not in (Phase.TURN, Phase.OVER) and env.game.actor != seat:
                assert view.phase == Phase.TURN and view.claim is None and view.to_move is None
    assert seen == {"claim", "face down", "bao", "special"}


@pytest.mark.parametrize(("module", "rules"), CASES, ids=IDS)
def test_from_dict_reads_the_view_back(module, rules):
    """`SeatView.from_dict` of a seat's view dict gives the fields the dict carries and its
    ``to_dict`` gives the dict again; the visible counts are those the env computed."""
    checked = 0
    for env in played_states(module, rules, range(4)):
        config = env.config.to_dict()
        for seat in range(4):
            view = env.seat_view(AGENTS[seat])
            read = SeatView.from_dict(view.to_dict(), env.metadata["name"], config)
            assert read.to_dict() == view.to_dict()
            for field in ("counts", "drawn", "melds", "rivers", "history", "visible", "bao", "claim", "phase"):
                assert getattr(read, field) == getattr(view, field), field
            assert read.to_move == view.to_move and read.ready == view.ready and read.scores == view.scores
            assert type(read.rules) is type(view.rules) and read.config == view.config
            checked += 1
    assert checked > 300


def test_from_dict_takes_a_hand_made_view_and_a_partial_config():
    view = {"seat": 0, "hand": "123m456p789s1122z3z", "melds": [[], [], [], []], "discards": [[], [], [], []]}
    read = SeatView.from_dict(view, "changchun", {"allow_seven_pairs": True})
    assert read.counts[0] == 1 and read.phase == Phase.TURN and read.ready == (False,) * 4
    assert read.config.allow_seven_pairs and read.variant == "changchun"
    assert SeatView.from_dict(view).rules is None
    with pytest.raises(ValueError, match="variant"):
        SeatView.from_dict(view).config  # noqa: B018
    assert rules_for("changchun_v0", {"allow_seven_pairs": True}) is rules_for("changchun", {"allow_seven_pairs": True})
    with pytest.raises(ValueError, match="unknown variant"):
        SeatView.from_dict(view, "riichi")


def test_a_view_is_immutable_and_pickles():
    env = changchun_v0.raw_env()
    env.reset(seed=4)
    view = env.seat_view(env.agent_selection)
    with pytest.raises(AttributeError):
        view.counts = ()  # type: ignore[misc]
    back = pickle.loads(pickle.dumps(view))
    assert back._replace(rules=None) == view._replace(rules=None) and back.config == view.config
    assert isinstance(back.melds[0], tuple) and all(isinstance(c, int) for c in back.counts)


# ---------------------------------------------------------------------- R13


def _hide_a_swap(game: Any, seat: int, rng: np.random.Generator) -> Any | None:
    """A copy of ``game`` in which another seat holds a different concealed tile, swapped with
    a tile of the live wall: what ``seat`` may not see (None if no such swap exists)."""
    other = (seat + 1 + int(rng.integers(3))) % 4
    st = game.seats[other]
    wall = game.wall
    slots = [i for i in range(wall.head, wall.tail) if i != wall.gap]
    mine = [t for t in range(34) if st.counts[t] and t != st.drawn]
    pairs = [(t, i) for t in mine for i in slots if wall.tiles[i] != t]
    if not pairs:
        return None
    t, i = pairs[int(rng.integers(len(pairs)))]
    twin = copy.deepcopy(game)
    w = twin.wall.tiles[i]
    twin.seats[other].counts[t] -= 1
    twin.seats[other].counts[w] += 1
    twin.wall.tiles[i] = t
    return twin


@pytest.mark.parametrize(("module", "rules"), CASES, ids=IDS)
def test_r13_hidden_tiles_change_neither_the_view_nor_the_observation(module, rules):
    """Two states that differ only in another seat's concealed tiles and the wall give a seat
    the same `SeatView` and the same observation (the encoder writes nothing but the view)."""
    rng = np.random.default_rng(0)
    compared = 0
    for env in played_states(module, rules, range(3), num_hands=1):
        visible = env.config.concealed_kong_visible
        for seat in range(4):
            twin = _hide_a_swap(env.game, seat, rng)
            if twin is None:
                continue
            ours = seat_view(env.game, seat, TableMemory(visible))
            theirs = seat_view(twin, seat, TableMemory(visible))
            assert ours._replace(rules=None) == theirs._replace(rules=None)
            ours_obs = ObservationEncoder(visible).observation(env.game, seat)
            assert ours_obs.tobytes() == ObservationEncoder(visible).observation(twin, seat).tobytes()
            compared += 1
    assert compared > 100


def test_the_view_holds_only_the_seats_own_tiles_and_what_is_shown():
    """A seat's counts are its own; its visible counts are its hand, the shown melds, the
    rivers and the bao once seen, nothing more (the full table adds every hand and kong)."""
    for env in played_states(changchun_v0, {"concealed_kong_visible": False}, range(3), num_hands=1):
        game = env.game
        for seat in range(4):
            view = seat_view(game, seat, env._encoder.memory)
            assert view.counts == tuple(game.seats[seat].counts)
            expected = list(view.counts)
            for s, st in enumerate(game.seats):
                for t in st.river:
                    expected[t] += 1
                for meld in st.melds:
                    if meld.kind is not MeldKind.CONCEALED_KONG or s == seat:
                        for t in meld.tiles:
                            expected[t] += 1
            if view.bao is not None:
                expected[view.bao] += 1
            assert view.visible == tuple(expected)
            assert view.bao in (None, game.bao) and (view.bao is None or game.seats[seat].bao_seen)


# ---------------------------------------------------------------------- infos and agents


def test_every_info_is_decision_info_of_the_view():
    env = changchun_v0.env()
    env.reset(seed=2)
    agent = env.agent_selection
    info = agent_info(env, agent)
    assert set(info) == {"view", "variant", "config", "seat_view"}
    assert info == env_decision_info(env, agent) == decision_info(env.unwrapped.seat_view(agent))
    assert info["view"] == env.unwrapped.view(agent) and info["variant"] == "changchun"
    assert info["config"] == env.unwrapped.config.to_dict() and isinstance(info["seat_view"], SeatView)
    info["view"]["ready"][0] = "edited"
    info["config"]["fan_cap"] = -1
    assert agent_info(env, agent)["view"]["ready"][0] is False  # every call gives new dicts
    assert agent_info(env, agent)["config"]["fan_cap"] == env.unwrapped.config.fan_cap


@pytest.mark.parametrize(("module", "rules"), CASES, ids=IDS)
def test_the_heuristic_decides_the_same_from_the_view_the_dict_and_a_pickle(module, rules):
    """The `SeatView` in ``info``, the view dict alone (``SeatView.from_dict``) and the info
    after a pickle round trip (what an isolated agent receives) give the same action."""
    heuristics = [HeuristicAgent(), HeuristicAgent(defence=True, lookahead=True, kongs="always")]
    decisions = 0
    for env in played_states(module, rules, range(6), num_hands=1):
        agent = env.agent_selection
        if env.terminations[agent]:
            continue
        observation = env.observe(agent)
        info = decision_info(env.seat_view(agent))
        plain = {key: value for key, value in info.items() if key != "seat_view"}
        wired = pickle.loads(pickle.dumps(info))
        for heuristic in heuristics:
            action = heuristic.act(observation, info)
            assert heuristic.act(observation, plain) == action
            assert heuristic.act(observation, wired) == action
        decisions += 1
    assert decisions > 300


@pytest.mark.parametrize(("module", "rules"), CASES[:2], ids=IDS[:2])
def test_the_analysis_is_the_same_from_the_view_and_from_the_dict(module, rules):
    for env in played_states(module, rules, range(3), num_hands=1):
        agent = env.agent_selection
        view = env.seat_view(agent)
        mask = env.action_mask(agent)
        typed = PlayerAnalysis(view)
        read = PlayerAnalysis(view.to_dict(), env.metadata["name"], env.config.to_dict())
        assert (typed.counts, typed.unseen, typed.ready, typed.claim_tile) == (
            read.counts,
            read.unseen,
            read.ready,
            read.claim_tile,
        )
        assert typed.waits(typed.counts, typed.melds) == read.waits(read.counts, read.melds)
        np.testing.assert_array_equal(
            analysis_planes(view, mask=mask),
            analysis_planes(view.to_dict(), env.metadata["name"], env.config.to_dict(), mask),
        )


# ---------------------------------------------------------------------- the vector env


def test_the_vector_env_gives_the_views_it_wrote_the_observations_from():
    venv = VectorMahjong("changchun", num_envs=4, seed=3)
    obs, masks, seats = venv.reset()
    for _ in range(40):
        views = venv.seat_views()
        assert views == venv.seat_views() and all(a is b for a, b in zip(views, venv.seat_views()))
        assert [v.seat for v in views] == seats.tolist()
        assert [v.to_dict() for v in views] == venv.views()
        for i in range(len(views)):
            visible = venv.config.concealed_kong_visible
            encoder = ObservationEncoder(visible, TableMemory(visible))
            assert encoder.write(encoder.view(venv.games[i], int(seats[i]))).tobytes() == obs[i].tobytes()
        infos = venv.decision_infos([0, 2])
        assert [info["seat_view"] for info in infos] == [views[0], views[2]]
        obs, masks, seats, _, _, _ = venv.step(np.array([int(np.flatnonzero(m)[-1]) for m in masks]))


def test_a_meld_view_names_and_writes_its_tiles():
    pong = MeldView(MeldKind.PONG, (4, 4, 4), 4, 1)
    winds = MeldView(MeldKind.SPECIAL_WINDS, (27, 28, 29, 30, 27), 27, None)
    ones = MeldView(MeldKind.SPECIAL_ONES, (0, 9, 18), 0, None)
    face_down = MeldView(MeldKind.CONCEALED_KONG, None, None, None)
    assert (pong.notation(), winds.notation(), ones.notation(), face_down.notation()) == (
        "555m",
        "12341z",
        "1m1p1s",
        None,
    )
    assert pong.kind_name == "pong" and face_down.hidden and not pong.hidden and not winds.is_kong
    assert pong.engine_meld().tiles == [4, 4, 4]
    with pytest.raises(ValueError, match="face-down"):
        face_down.engine_meld()
    assert ClaimView(1, 4, "discard").source == 1
