"""The observation layout (`mahjong_env.observation`): named slots hold what their names say.

Golden values of named rows and scalars on hand-built positions (deals in tile notation, actions
by name, `scenario`), R13 privacy of the private rows, and two properties over play: every
named slot is written in some observation, and no unnamed (``unused_<i>``) slot ever is.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from scenario import act, deal, legal, mover

from mahjong_env import actions as A
from mahjong_env import changchun_v0, xinjiang_v0
from mahjong_env.observation import (
    CHANNELS,
    NUM_CHANNELS,
    OBSERVATION_LAYOUT,
    SCALAR_LAYOUT,
    SCALARS,
    STATE_LAYOUT,
    STATE_NAMES,
    STATE_SIZE,
    ObservationEncoder,
    Piece,
    encode_batch,
    observation_box,
    observation_layout,
    scalar,
    state_box,
)
from mahjong_env.tiles import format_tiles, parse_tiles, tile_index

AGENTS = [f"player_{i}" for i in range(4)]
_SCALAR_ROWS = slice(NUM_CHANNELS - 3, NUM_CHANNELS)


def obs(env, seat: int) -> np.ndarray:
    return env.observe(f"player_{seat}")["observation"]


def row(env, seat: int, name: str) -> np.ndarray:
    return obs(env, seat)[CHANNELS.index(name)]


def s(env, seat: int, name: str) -> float:
    return scalar(obs(env, seat), name)


def one_hot(tile: str) -> np.ndarray:
    out = np.zeros(34, np.float32)
    out[tile_index(tile)] = 1.0
    return out


def kinds(tiles: str) -> np.ndarray:
    out = np.zeros(34, np.float32)
    for t in parse_tiles(tiles):
        out[t] += 1.0
    return out


def wall_with(hands: list[str | None], head: str, at: dict[int, str], dealer: int = 0) -> tuple[list[str], str]:
    """The four hands (quiet seats filled) and the whole wall with ``head`` first and the tile
    named in ``at`` moved to each wall index (swapped with a filler copy)."""
    from scenario import fill_hands, fill_wall

    full = fill_hands(hands, head, dealer=dealer)
    tiles = parse_tiles(fill_wall(full, head))
    for index, name in at.items():
        t = tile_index(name)
        j = next(i for i in range(len(parse_tiles(head)), len(tiles)) if tiles[i] == t and i not in at)
        tiles[index], tiles[j] = tiles[j], tiles[index]
    return full, format_tiles(tiles)


# ---------------------------------------------------------------------- scripted positions

DEALER_CC = "3569m369p34s13456z"  # discards 9m / 1z: nobody claims 9m
BAO_INDEX = 73  # C8/R4: two dice rolling 5, no tail draw: the 5th stack's upper tile of 83


def bao_env(hand1: str = "222m345p678s11z44z", head: str = "9p7m8p1s2m", indicator: str = "8m"):
    """Changchun: player_1 (waits 1z 4z with the default hand) draws the head's first tile; the
    bao indicator is ``indicator`` (dice 5)."""
    hands, wall = wall_with([DEALER_CC, hand1, None, None], head, {BAO_INDEX: indicator})
    return deal(changchun_v0, hands, wall, dice=[5])


def claim_env():
    """Changchun: player_0 discards 1z, which only player_2 (holding 11z) can pong."""
    return deal(changchun_v0, [DEALER_CC, None, "11z258m369p147s34z", None])


XIANGGONG_ROB_HANDS = [
    "5p147m28p369s23467z",
    "55p258m147s19p357z",  # pongs 5p, later adds the fourth
    "1233345s789p456m",  # ready on 3s 6s; its kong of 3s breaks the wait: 相公 (X5)
    "123m456m789m46p11z",  # ready on 5p (closed 46p): robs the added kong (X3)
]
XIANGGONG_ROB_SCRIPT = [
    "player_0: discard 5p",
    "player_1: pong",
    "player_1: discard 7z",
    "player_2: ready 8s",
    "player_3: ready 2s",
    "player_0: discard 3s",
    "player_2: kong",
    "player_2: discard 6m",
    "player_3: discard drawn",
    "player_0: discard drawn",
    "player_1: added_kong 5p",
    "player_3: win",
]


def xianggong_rob_env():
    return deal(xinjiang_v0, XIANGGONG_ROB_HANDS, wall="8s2s1p3z9p5p", tail="6m")


FENZHANG_HANDS = [
    "147m258p369s23477z",
    "123m456m789m999p6z",
    "258m258p147s1356z",
    "123m456m789m111p7z",  # ready on 7z; its 分张 tile (X4) is 7z
]


def pass_or_discard_drawn(env) -> None:
    """One quiet step: pass a claim, discard the drawn tile (the dealer's last on its first turn)."""
    view = env.view(mover(env))
    if "pass" in legal(env):
        act(env, "pass")
    elif view["drawn"] is None:
        act(env, f"discard {format_tiles(parse_tiles(view['hand'])[-1:])}")
    else:
        act(env, "discard drawn")


def fenzhang_env():
    """Xinjiang: play to the 分张 draws, where player_3 (ready on 7z) draws 7z and is asked."""
    env = deal(xinjiang_v0, FENZHANG_HANDS, last="9p8s6z8p7z")
    act(env, "player_0: discard 2z")
    pass_or_discard_drawn(env)
    pass_or_discard_drawn(env)
    act(env, f"player_3: ready {env.view('player_3')['drawn']}")
    for _ in range(400):
        if env.view("player_0")["wall_remaining"] == 4:
            break
        pass_or_discard_drawn(env)
    act(env, "player_3: discard 9p")
    act(env, "player_1: pass")  # may pong 9p, does not
    return env


# ---------------------------------------------------------------------- golden values


def test_layout_positions_are_the_trained_ones():
    """The positions the shipped checkpoints read (values never moved, only names did)."""
    assert NUM_CHANNELS == 139 and len(SCALARS) == 3 * 34 and STATE_SIZE == 318
    assert [CHANNELS.index(n) for n in ("hand>=1", "drawn", "bao", "seat0_meld_tiles", "seat1_meld_tiles")] == [
        0,
        4,
        7,
        9,
        40,
    ]
    assert [CHANNELS.index(n) for n in ("seat3_discard_23", "claim_tile", "last_discard", "visible", "scalars_0")] == [
        132,
        133,
        134,
        135,
        136,
    ]
    expected = {
        "phase_turn": 0,
        "claim_from_1": 8,
        "window_discard": 11,
        "dealer_0": 14,
        "ready_0": 18,
        "xianggong_0": 22,
        "concealed_count_0/14": 26,
        "wall_remaining/100": 30,
        "bao_active": 33,
        "score_gain_0/64": 38,
        "bao_rolls/6": 42,
        "first_turn_0": 44,
        "context_deal": 48,
        "duibao_passed": 52,
        "special_winds_0": 53,
        "special_nines_3": 68,
        "concealed_kongs_0/4": 69,
        "silver_0/3500": 73,
        "kongs_made_0/4": 77,
        "tail_draws/8": 81,
        "hidden_kong_count/4": 82,
        "score_loss_0/64": 83,
        "score_loss_3/64": 86,
    }
    assert {n: SCALARS.index(n) for n in expected} == expected
    assert SCALAR_LAYOUT.unused == (7, 34, 35, 36, 37, *range(87, 102))
    assert [SCALARS[i] for i in (7, 34, 101)] == ["unused_7", "unused_34", "unused_101"]
    assert [STATE_LAYOUT.offset[k] for k in ("hand_0", "hand_3", "wall", "bao", "dealer", "score", "ready")] == [
        0,
        102,
        136,
        272,
        306,
        310,
        314,
    ]
    assert STATE_NAMES[0] == "hand_0_1m" and STATE_NAMES[272 + 33] == "bao_7z"


def test_start_of_hand_golden_values():
    env = bao_env()
    for seat in range(4):
        assert s(env, seat, f"dealer_{(0 - seat) % 4}") == 1.0
        assert s(env, seat, "phase_turn") == 1.0
        assert s(env, seat, "wall_remaining/100") == pytest.approx(0.83)
        assert s(env, seat, "bao_active") == 0.0 and s(env, seat, "last_dice/12") == 0.0
        for r in range(4):
            assert s(env, seat, f"concealed_count_{r}/14") == pytest.approx((14 if (seat + r) % 4 == 0 else 13) / 14)
            assert s(env, seat, f"first_turn_{r}") == 1.0
    # the dealer decides on its dealt 14 tiles: context_deal, no drawn tile
    assert s(env, 0, "context_deal") == 1.0 and not row(env, 0, "drawn").any()
    assert not any(s(env, seat, "context_deal") for seat in (1, 2, 3))  # only the mover's own turn
    hand = kinds(DEALER_CC)
    np.testing.assert_array_equal(row(env, 0, "hand>=1"), (hand >= 1).astype(np.float32))
    np.testing.assert_array_equal(row(env, 0, "visible"), hand)


def test_discard_drawn_tile_and_river_golden_values():
    env = bao_env()
    act(env, "player_0: discard 9m")
    assert mover(env) == "player_1"
    np.testing.assert_array_equal(row(env, 1, "drawn"), one_hot("9p"))
    assert s(env, 1, "context_draw") == 1.0 and s(env, 1, "phase_turn") == 1.0
    for seat in range(4):
        r = (0 - seat) % 4  # player_0 as seen from seat
        np.testing.assert_array_equal(row(env, seat, "last_discard"), one_hot("9m"))
        np.testing.assert_array_equal(row(env, seat, f"seat{r}_river"), one_hot("9m"))
        np.testing.assert_array_equal(row(env, seat, f"seat{r}_discard_0"), one_hot("9m"))
        assert not row(env, seat, f"seat{r}_discard_1").any()
        assert s(env, seat, f"first_turn_{r}") == 0.0
        assert not row(env, seat, "drawn").any() or seat == 1  # only the mover sees its drawn tile


def test_ready_and_bao_golden_values():
    """C7/C8/R13: the ready flags are public, the waits private; the bao enters only the
    viewer's observation, and only after `view_bao`."""
    env = bao_env()
    act(env, "player_0: discard 9m")
    act(env, "player_1: ready 9p")
    assert mover(env) == "player_1" and legal(env) == {"view_bao", "pass"}
    for seat in range(4):
        r = (1 - seat) % 4
        assert [s(env, seat, f"ready_{k}") for k in range(4)] == [float(k == r) for k in range(4)]
        assert s(env, seat, "bao_active") == 1.0 and s(env, seat, "bao_seen") == 0.0
        assert s(env, seat, "bao_rolls/6") == pytest.approx(1 / 6)
        assert s(env, seat, "last_dice/12") == pytest.approx(5 / 12)
        assert not row(env, seat, "bao").any()
        if seat != 1:
            assert not row(env, seat, "ready_waits").any()
            assert s(env, seat, "phase_turn") == 1.0 and s(env, seat, "phase_bao_view") == 0.0  # R13
    np.testing.assert_array_equal(row(env, 1, "ready_waits"), kinds("1z4z"))
    assert s(env, 1, "phase_bao_view") == 1.0 and s(env, 1, "phase_turn") == 0.0
    visible_before = row(env, 1, "visible").copy()

    act(env, "player_1: view_bao")
    np.testing.assert_array_equal(row(env, 1, "bao"), one_hot("8m"))
    assert s(env, 1, "bao_seen") == 1.0
    np.testing.assert_array_equal(row(env, 1, "visible") - visible_before, one_hot("8m"))  # the seen bao counts
    for seat in (0, 2, 3):
        assert not row(env, seat, "bao").any() and s(env, seat, "bao_seen") == 0.0


def test_claim_tile_only_to_the_player_asked():
    """R13: the tile under claim, its source and the window kind go to the seat asked only;
    every other seat sees an ordinary turn."""
    env = claim_env()
    act(env, "player_0: discard 1z")
    assert mover(env) == "player_2" and legal(env) == {"pong", "pass"}
    np.testing.assert_array_equal(row(env, 2, "claim_tile"), one_hot("1z"))
    assert s(env, 2, "phase_claim") == 1.0 and s(env, 2, "window_discard") == 1.0
    assert [s(env, 2, f"claim_from_{r}") for r in (1, 2, 3)] == [0.0, 1.0, 0.0]  # player_0 is opposite
    for seat in (0, 1, 3):
        assert not row(env, seat, "claim_tile").any()
        assert s(env, seat, "phase_turn") == 1.0 and s(env, seat, "phase_claim") == 0.0
        assert not any(s(env, seat, n) for n in ("claim_from_1", "claim_from_2", "claim_from_3", "window_discard"))
        np.testing.assert_array_equal(row(env, seat, "last_discard"), one_hot("1z"))
    claim = env.view("player_2")["claim"]  # the readable view agrees, in plain JSON types (API.md)
    assert claim == {"seat": 0, "tile": "1z", "kind": "discard"} and type(claim["kind"]) is str
    assert env.view("player_0")["claim"] is None

    act(env, "player_2: pong")
    assert s(env, 2, "context_claim") == 1.0 and not row(env, 2, "claim_tile").any()
    np.testing.assert_array_equal(row(env, 2, "seat0_pongs"), one_hot("1z"))
    np.testing.assert_array_equal(row(env, 2, "seat0_meld_tiles"), 3 * one_hot("1z"))
    np.testing.assert_array_equal(row(env, 0, "seat2_pongs"), one_hot("1z"))
    # the claimed discard leaves player_0's river but stays in its discard history
    np.testing.assert_array_equal(row(env, 0, "seat0_claimed"), one_hot("1z"))
    assert not row(env, 0, "seat0_river").any()
    np.testing.assert_array_equal(row(env, 0, "seat0_discard_0"), one_hot("1z"))
    assert s(env, 0, "concealed_count_2/14") == pytest.approx(11 / 14)


def test_concealed_kong_hidden_from_others_golden_values():
    """R7 (Xinjiang: concealed kongs hidden): the konger sees its kong in its rows; the others
    see only a count; X8 kong payments 刮风 move the score slots."""
    env = deal(xinjiang_v0, ["1111m258p369s1357z", None, None, None], tail="9s")
    act(env, "player_0: concealed_kong 1m")
    np.testing.assert_array_equal(row(env, 0, "own_concealed_kongs"), one_hot("1m"))
    np.testing.assert_array_equal(row(env, 0, "seat0_kongs"), one_hot("1m"))
    np.testing.assert_array_equal(row(env, 0, "seat0_meld_tiles"), 4 * one_hot("1m"))
    np.testing.assert_array_equal(row(env, 0, "drawn"), one_hot("9s"))
    assert s(env, 0, "context_replacement") == 1.0 and s(env, 0, "tail_draws/8") == pytest.approx(1 / 8)
    assert s(env, 0, "score_gain_0/64") == pytest.approx(3 / 64) and s(env, 0, "score_loss_1/64") == pytest.approx(
        1 / 64
    )
    assert s(env, 0, "hidden_kong_count/4") == 0.0  # one's own kong is no secret
    for seat in (1, 2, 3):
        r = (0 - seat) % 4
        assert not row(env, seat, f"seat{r}_meld_tiles").any() and not row(env, seat, f"seat{r}_kongs").any()
        assert s(env, seat, "hidden_kong_count/4") == 0.25
        assert s(env, seat, f"concealed_kongs_{r}/4") == 0.25 and s(env, seat, f"kongs_made_{r}/4") == 0.25
        assert s(env, seat, "score_loss_0/64") == pytest.approx(1 / 64)
        assert s(env, seat, f"score_gain_{r}/64") == pytest.approx(3 / 64)
        # X7: 3500 silver each at the start, a kong point is the base (100 silver)
        assert s(env, seat, "silver_0/3500") == pytest.approx(3400 / 3500)
        assert s(env, seat, f"silver_{r}/3500") == pytest.approx(3800 / 3500)


def test_xianggong_and_robbing_window_golden_values():
    """X5: a ready player's kong that breaks its wait makes it 相公 (public); X3: the robbing
    window on an added kong goes to the ready player who can rob, only."""
    env = xianggong_rob_env()
    for step in XIANGGONG_ROB_SCRIPT[:7]:
        act(env, step)
    for seat in range(4):
        r = (2 - seat) % 4
        assert [s(env, seat, f"xianggong_{k}") for k in range(4)] == [float(k == r) for k in range(4)]
    for step in XIANGGONG_ROB_SCRIPT[7:11]:
        act(env, step)
    assert mover(env) == "player_3" and legal(env) == {"win", "pass"}
    np.testing.assert_array_equal(row(env, 3, "claim_tile"), one_hot("5p"))
    assert s(env, 3, "phase_rob") == 1.0 and s(env, 3, "window_added_kong") == 1.0
    assert s(env, 3, "claim_from_2") == 1.0  # player_1 is opposite player_3
    for seat in (0, 1, 2):
        assert not row(env, seat, "claim_tile").any() and s(env, seat, "phase_turn") == 1.0
        assert s(env, seat, "window_added_kong") == 0.0
    act(env, "player_3: win")
    for seat in range(4):
        assert s(env, seat, "phase_over") == 1.0


def test_duibao_pass_and_fenzhang_golden_values():
    env = bao_env("567z45m123p789s99p", head="7m", indicator="3m")  # waits 3m 6m after 喜杠
    for step in ("player_0: discard 9m", "player_1: special_dragons", "player_1: ready 7m", "player_1: view_bao"):
        act(env, step)
    assert s(env, 1, "phase_duibao") == 1.0 and legal(env) == {"win", "pass"}  # C8 对宝
    assert s(env, 1, "special_dragons_0") == 1.0 and s(env, 0, "special_dragons_1") == 1.0
    assert s(env, 0, "phase_turn") == 1.0
    act(env, "player_1: pass")
    assert s(env, 1, "duibao_passed") == 1.0 and s(env, 0, "duibao_passed") == 0.0

    env = fenzhang_env()
    assert mover(env) == "player_3" and legal(env) == {"win", "pass"}
    assert s(env, 3, "phase_fenzhang") == 1.0  # X4
    assert all(s(env, seat, "phase_turn") == 1.0 for seat in (0, 1, 2))


def test_scalar_rejects_unknown_names():
    with pytest.raises(ValueError, match="unknown scalar 'ready'"):
        scalar(np.zeros((NUM_CHANNELS, 34), np.float32), "ready")


# ---------------------------------------------------------------------- properties over play

_PREFERRED = [A.action_id(n) for n in ("view_bao", "special_winds", "special_dragons", "special_ones", "special_nines")]
_PREFERRED += [A.action_id("kong"), A.action_id("pong")]


def _eager_policy(rng: np.random.Generator) -> Callable[[np.ndarray], int]:
    """Random legal play that likes rare actions (kongs, specials, ready, the bao) so that a
    few hands reach most slots; wins only half the time, so hands run long."""

    def act_on(mask: np.ndarray) -> int:
        legal_ids = np.flatnonzero(mask)
        if mask[A.WIN] and rng.random() < 0.5:
            return A.WIN
        for a in _PREFERRED:
            if mask[a] and rng.random() < 0.9:
                return a
        for low, high in ((34, 68), (68, 170)):  # ready, then kongs and additions
            ids = legal_ids[(legal_ids >= low) & (legal_ids < high)]
            if len(ids) and rng.random() < 0.9:
                return int(rng.choice(ids))
        return int(rng.choice(legal_ids))

    return act_on


def _all_observations(env) -> np.ndarray:
    return np.stack([obs(env, seat) for seat in range(4)])


def _random_play(module, hands: int, **rules) -> list[np.ndarray]:
    seen = []
    for h in range(hands):
        env = module.raw_env(num_hands=2, **rules)
        env.reset(seed=h)
        policy = _eager_policy(np.random.default_rng(h))
        seen.append(_all_observations(env))
        while not all(env.terminations.values()):
            env.step(policy(env.action_mask(env.agent_selection)))
            seen.append(_all_observations(env))
    return seen


def _scripted_play() -> list[np.ndarray]:
    """The rare positions of the golden tests (相公, robbing, 对宝 offered and passed, 分张)."""
    seen = []
    env = xianggong_rob_env()
    for step in XIANGGONG_ROB_SCRIPT:
        act(env, step)
        seen.append(_all_observations(env))
    env = bao_env("567z45m123p789s99p", head="7m", indicator="3m")
    for step in ("player_0: discard 9m", "player_1: special_dragons", "player_1: ready 7m", "player_1: view_bao"):
        act(env, step)
        seen.append(_all_observations(env))
    act(env, "player_1: pass")
    seen.append(_all_observations(env))
    seen.append(_all_observations(fenzhang_env()))
    return seen


@pytest.fixture(scope="module")
def played() -> np.ndarray:
    seen = _random_play(xinjiang_v0, 12) + _random_play(changchun_v0, 12)
    seen += _random_play(changchun_v0, 3, concealed_kong_visible=False)
    return np.concatenate(seen + _scripted_play())


def test_every_named_slot_is_written_and_no_unnamed_one(played):
    scalars = played[:, _SCALAR_ROWS].reshape(len(played), -1)
    written = set(np.flatnonzero((scalars != 0).any(axis=0)).tolist())
    named = set(range(SCALAR_LAYOUT.size)) - set(SCALAR_LAYOUT.unused)
    assert not written - named, [SCALARS[i] for i in sorted(written - named)]
    assert not named - written, [SCALARS[i] for i in sorted(named - written)]
    rows = set(np.flatnonzero((played != 0).any(axis=2).any(axis=0)).tolist())
    assert rows == set(range(NUM_CHANNELS)), [CHANNELS[i] for i in sorted(set(range(NUM_CHANNELS)) - rows)]


def test_every_observation_lies_in_the_box(played):
    box = observation_box()
    assert box.shape == (NUM_CHANNELS, 34) and box.dtype == np.float32
    assert (played >= box.low).all() and (played <= box.high).all()
    assert (box.low == 0).all() and (box.high[CHANNELS.index("hand>=1")] == 1).all()


def test_state_lies_in_its_box_and_holds_the_hands():
    env = bao_env()
    act(env, "player_0: discard 9m")
    state = env.state()
    box = state_box()
    assert state.shape == (STATE_SIZE,) and box.contains(state)
    at = STATE_LAYOUT.offset["hand_1"]
    np.testing.assert_array_equal(state[at : at + 34], kinds("222m345p678s11z44z9p"))
    assert state[STATE_LAYOUT.index["dealer_0"]] == 1.0
    wall = STATE_LAYOUT.offset["wall"]
    assert state[wall] == tile_index("7m") + 1  # the next head draw, 1-based


def test_optional_rows_append_after_the_base_rows():
    """An optional block (as the analysis features will be) is laid out after the base rows;
    the encoder fills the base rows and leaves the block to its own encoder."""
    extra = (Piece("analysis", 2, 5.0),)
    layout = observation_layout(extra)
    assert layout.names[:NUM_CHANNELS] == CHANNELS and layout.offset["analysis"] == NUM_CHANNELS
    box = observation_box(extra)
    assert box.shape == (NUM_CHANNELS + 2, 34) and (box.high[NUM_CHANNELS:] == 5.0).all()
    env = bao_env()
    encoder = ObservationEncoder(env.config.concealed_kong_visible)
    out = np.full((1, NUM_CHANNELS + 2, 34), 7.0, np.float32)
    encode_batch([encoder], [env.game], [0], out)
    np.testing.assert_array_equal(out[0, :NUM_CHANNELS], obs(env, 0))
    assert (out[0, NUM_CHANNELS:] == 7.0).all()
    single = np.zeros((NUM_CHANNELS + 2, 34), np.float32)
    np.testing.assert_array_equal(encoder.encode(env.game, 0, single)[:NUM_CHANNELS], obs(env, 0))


def test_layout_rejects_bad_declarations():
    from mahjong_env.observation import Layout

    with pytest.raises(ValueError, match="declared twice"):
        Layout((Piece("a", 1), Piece("a", 2)))
    with pytest.raises(ValueError, match="2 labels for 3 slots"):
        Piece("a", 3, labels=("x", "y"))
    with pytest.raises(ValueError, match="does not fit"):
        Layout((Piece("a", 3),), size=2)
    assert OBSERVATION_LAYOUT.span("seat1_discard") == slice(47, 71)


@pytest.mark.parametrize("module", [xinjiang_v0, changchun_v0])
def test_observation_and_view_agree_on_what_each_seat_sees(module):
    """R13: the phase, the window and its tile that a seat's observation shows are the ones
    its readable view shows (both ask `view.sees_decider`)."""
    from mahjong_env.engine.state import PHASE_NAMES

    for seed in range(4):
        env = module.raw_env()
        env.reset(seed=seed)
        policy = _eager_policy(np.random.default_rng(seed))
        while True:
            for seat in range(4):
                view = env.view(f"player_{seat}")
                phase = [p for p in PHASE_NAMES if s(env, seat, f"phase_{p}")]
                assert phase == [view["phase"]]
                claim = row(env, seat, "claim_tile")
                if view["claim"] is None:
                    assert not claim.any() and not any(s(env, seat, f"window_{k}") for k in _WINDOW_KINDS)
                else:
                    np.testing.assert_array_equal(claim, one_hot(view["claim"]["tile"]))
                    assert s(env, seat, f"window_{view['claim']['kind']}") == 1.0
            if all(env.terminations.values()):
                break
            env.step(policy(env.action_mask(env.agent_selection)))


_WINDOW_KINDS = ("discard", "added_kong", "special_add")


@pytest.mark.parametrize(
    "module, rules",
    [(xinjiang_v0, {}), (changchun_v0, {}), (changchun_v0, {"concealed_kong_visible": False})],
    ids=["xinjiang", "changchun", "changchun-hidden-kongs"],
)
def test_single_observation_path_equals_the_batch_path(module, rules):
    """`ObservationEncoder.observation` (the AEC env's path: one observation, a new array per
    call) and `encode_batch` (the vector env's) write the same bytes for every seat at every
    step of eager random play, and no two calls share memory."""
    for seed in range(3):
        env = module.raw_env(num_hands=2, **rules)
        env.reset(seed=seed)
        batch_encoder = ObservationEncoder(env.config.concealed_kong_visible)
        out = np.full((4, NUM_CHANNELS, 34), np.nan, np.float32)
        policy = _eager_policy(np.random.default_rng(seed))
        while not all(env.terminations.values()):
            encode_batch([batch_encoder] * 4, [env.game] * 4, [0, 1, 2, 3], out)
            singles = [env.observe(agent)["observation"] for agent in AGENTS]
            for seat, single in enumerate(singles):
                assert single.dtype == np.float32 and single.shape == (NUM_CHANNELS, 34)
                assert single.tobytes() == out[seat].tobytes(), f"seat {seat}"
            assert not np.shares_memory(singles[0], env.observe("player_0")["observation"])
            env.step(policy(env.action_mask(env.agent_selection)))


@pytest.mark.parametrize(
    "module, rules",
    [(xinjiang_v0, {}), (changchun_v0, {}), (changchun_v0, {"concealed_kong_visible": False})],
    ids=["xinjiang", "changchun", "changchun-hidden-kongs"],
)
def test_kept_encoder_state_equals_a_fresh_encoder(module, rules):
    """The env's encoder keeps state between calls (public rows updated from the history, meld
    rows and meld scalars by `SeatState.meld_version`); at every
    step of eager play, over hand changes, every seat's observation equals the one a new
    encoder computes from nothing (seeds 3, 9 and 11 reach C6 additions to special groups)."""
    for seed in (3, 9, 11):
        env = module.raw_env(num_hands=3, **rules)
        env.reset(seed=seed)
        policy = _eager_policy(np.random.default_rng(seed))
        while not all(env.terminations.values()):
            for seat, agent in enumerate(AGENTS):
                fresh = ObservationEncoder(env.config.concealed_kong_visible).observation(env.game, seat)
                assert env.observe(agent)["observation"].tobytes() == fresh.tobytes(), f"seat {seat}"
            env.step(policy(env.action_mask(env.agent_selection)))
