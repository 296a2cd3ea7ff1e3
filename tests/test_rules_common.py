"""Scenario tests for the rules common to both variants (RULES.md R1–R13).

Every test builds its deal by hand in tile notation (`scenario.deal`), plays actions by name and
checks masks (legal action names), rewards and ``info["result"]``. A seat given as None is a
quiet hand (distinct kinds, no sequences: it never claims, never wins) that discards what it
draws. Tests named ``test_rN_…`` cite their section; the expectations come from RULES.md.
"""

from __future__ import annotations

import numpy as np
import pytest
from scenario import (
    act,
    deal,
    hand_of,
    legal,
    mover,
    play,
    play_out,
    result,
    results,
    totals,
)

from mahjong_env import changchun_v0, xinjiang_v0
from mahjong_env.tiles import parse_tiles, tile_index, tile_name
from mahjong_env.wall import Wall

XJ, CC = xinjiang_v0, changchun_v0
BOTH = pytest.mark.parametrize("variant", [XJ, CC], ids=["xinjiang", "changchun"])
AGENTS = [f"player_{i}" for i in range(4)]


def seats_total(env) -> int:
    """Concealed tiles + meld tiles + rivers + wall as player_0 sees them (R13 bookkeeping)."""
    view = env.view("player_0")
    melds = sum(4 if m["kind"].endswith("kong") else 3 for seat in view["melds"] for m in seat)
    rivers = sum(len(r) for r in view["discards"])
    return sum(view["concealed_counts"]) + melds + rivers + view["wall_remaining"]


def discard_last(env) -> None:
    """The mover discards the last kind of its sorted hand (an honor where it holds one)."""
    agent = mover(env)
    act(env, f"{agent}: discard {tile_name(parse_tiles(hand_of(env, agent))[-1])}")


def discard_drawn_turns(env, n: int) -> None:
    """``n`` times: the mover (on its own turn) discards the tile it drew."""
    for _ in range(n):
        assert env.view(mover(env))["phase"] == "turn", legal(env)
        act(env, "discard drawn")


def obs_of(env, agent: str) -> tuple:
    """Everything ``agent`` gets to see: observation array, mask, view, render, info."""
    raw = env.unwrapped
    ob = raw.observe(agent)
    info = {k: v for k, v in raw.infos[agent].items()}
    return ob["observation"].copy(), ob["action_mask"].copy(), raw.view(agent), raw.render_view(agent), info


def assert_same_observation(a: tuple, b: tuple) -> None:
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert a[2] == b[2]
    assert a[3] == b[3]
    assert a[4] == b[4]


# ---------------------------------------------------------------------------------------- R1


@BOTH
def test_r1_notation_in_a_deal(variant):
    """R1: compact notation with spaces and any order; honors 1z–7z; tile names in actions."""
    hands = ["3m1m2m 654p 987s 1z1z 7z 6z 5s", None, None, None]
    env = deal(variant, hands)
    me = env.view("player_0")
    assert me["hand"] == "123m456p5789s1167z"
    assert me["concealed_counts"] == [14, 13, 13, 13]
    assert me["wall_remaining"] == 136 - 53
    assert seats_total(env) == 136
    assert {"discard 1z", "discard 6z", "discard 7z", "discard 5s"} <= legal(env)
    act(env, "player_0: discard 7z")  # 中 Red
    assert env.view("player_1")["discards"][0] == ["7z"]
    with pytest.raises(ValueError, match="0m"):
        deal(variant, ["0m" + "1m" * 13, None, None, None])


# ---------------------------------------------------------------------------------------- R2


@BOTH
def test_r2_play_passes_to_the_next_seat(variant):
    """R2: from seat i play passes to seat (i+1) mod 4; dealer player_2 here."""
    env = deal(variant, [None, None, None, None], dealer=2, wall="1z2z3z4z5z")
    assert mover(env) == "player_2"
    discard_last(env)
    for agent, drew in zip(["player_3", "player_0", "player_1", "player_2"], ["1z", "2z", "3z", "4z"]):
        assert mover(env) == agent
        view = env.view(agent)
        assert view["drawn"] == drew and view["concealed_counts"][int(agent[-1])] == 14
        act(env, "discard drawn")
    assert mover(env) == "player_3"


def test_r2_chow_only_for_the_next_seat_changchun():
    """R2/R6: the next player (下家) of seat 3 is seat 0; seat 2 (distance 3) may not chow."""
    hands = [
        "46m 258p 147s 23457z",  # the next player of seat 3
        None,
        "46m 369p 258s 12367z",  # the same chow shape at distance 3
        "5m 147m 369p 369s 1246z",  # dealer 3 discards 5m
    ]
    env = deal(CC, hands, dealer=3)
    act(env, "player_3: discard 5m")
    assert mover(env) == "player_0"
    assert legal(env) == {"chow_mid", "pass"}
    act(env, "player_0: pass")
    # player_2 has the same shape but is not the next player: not asked, player_0 draws
    assert mover(env) == "player_0" and env.view("player_0")["phase"] == "turn"
    assert env.view("player_0")["concealed_counts"][0] == 14


# ---------------------------------------------------------------------------------------- R3


@BOTH
def test_r3_same_seed_same_deal_other_seed_differs(variant):
    """R3: the same seed gives the same first dealer and deal; another seed differs."""
    a, b, c = variant.raw_env(), variant.raw_env(), variant.raw_env()
    a.reset(seed=7)
    b.reset(seed=7)
    c.reset(seed=8)
    assert [a.view(x)["hand"] for x in AGENTS] == [b.view(x)["hand"] for x in AGENTS]
    assert a.view("player_0")["dealer"] == b.view("player_0")["dealer"]
    np.testing.assert_array_equal(a.state(), b.state())
    assert not np.array_equal(a.state(), c.state())
    assert a.record()["hands"][0]["wall"] == b.record()["hands"][0]["wall"] != c.record()["hands"][0]["wall"]


@BOTH
def test_r3_custom_dealer(variant):
    """R3: the reset options can name the first dealer; it gets 14 tiles and moves first."""
    env = variant.raw_env()
    for dealer in range(4):
        env.reset(seed=7, options={"dealer": dealer})
        view = env.view("player_0")
        assert view["dealer"] == dealer
        assert view["concealed_counts"] == [14 if s == dealer else 13 for s in range(4)]
        assert env.agent_selection == f"player_{dealer}"


def xj_dealer_wins_quickly(seed: int, num_hands: int):
    """Xinjiang hand 0: dealer 0 declares ready and self-draws 4s on its next draw."""
    env = deal(XJ, ["123m456m789m11p35s7z", None, None, None], wall="1z2z3z4s", seed=seed, num_hands=num_hands)
    play(env, "player_0: ready 7z")
    discard_drawn_turns(env, 3)
    act(env, "player_0: win")
    return env


def xj_player1_wins_quickly(seed: int, num_hands: int):
    """Xinjiang hand 0: player 1 declares ready on its first draw and self-draws 4s."""
    hands = [None, "123m456m789m11p35s", None, None]
    env = deal(XJ, hands, dealer=0, wall="7z1z2z3z4s", seed=seed, num_hands=num_hands)
    discard_last(env)  # an honor: player_1 (11p) cannot claim it
    act(env, "player_1: ready 7z")
    discard_drawn_turns(env, 3)
    act(env, "player_1: win")
    return env


def cc_dealer_wins_quickly(seed: int, num_hands: int):
    """Changchun hand 0: dealer 0 discards 7z and self-draws 5z on its next draw."""
    env = deal(CC, ["123m456p789s111z5z7z", None, None, None], wall="2z3z4z5z", seed=seed, num_hands=num_hands)
    act(env, "player_0: discard 7z")
    discard_drawn_turns(env, 3)
    act(env, "player_0: win")
    return env


def cc_player1_wins_quickly(seed: int, num_hands: int):
    """Changchun hand 0: player 1 wins on the dealer's first discard (5z)."""
    env = deal(CC, ["5z 258m 147p 369s 2346z", "123m456p789s111z5z", None, None], seed=seed, num_hands=num_hands)
    act(env, "player_0: discard 5z")
    assert legal(env) == {"win", "pass"}
    act(env, "player_1: win")
    return env


QUICK = {
    "xinjiang": (xj_dealer_wins_quickly, xj_player1_wins_quickly),
    "changchun": (cc_dealer_wins_quickly, cc_player1_wins_quickly),
}


@pytest.mark.parametrize("name", ["xinjiang", "changchun"])
def test_r3_later_hand_wall_independent_of_earlier_hands(name):
    """R3: hand h's wall derives from (seed, h) alone, whatever happened in earlier hands."""
    dealer_wins, other_wins = QUICK[name]
    a = dealer_wins(seed=7, num_hands=2)
    b = other_wins(seed=7, num_hands=2)
    assert results(a)[0]["next_dealer"] == 0 and results(b)[0]["next_dealer"] == 1
    ra, rb = a.record()["hands"], b.record()["hands"]
    assert len(ra) == len(rb) == 2
    assert ra[1]["wall"] == rb[1]["wall"]
    assert ra[1]["dice"] == rb[1]["dice"]
    assert ra[1]["dealer"] == 0 and rb[1]["dealer"] == 1
    # the same 136-tile order, dealt from the dealer: seat dealer+k gets the same tiles
    assert [ra[1]["hands"][k] for k in range(4)] == [rb[1]["hands"][(k + 1) % 4] for k in range(4)]
    other_seed = dealer_wins(seed=8, num_hands=2)
    assert other_seed.record()["hands"][1]["wall"] != ra[1]["wall"]
    assert ra[1]["wall"] != ra[0]["wall"]


# ---------------------------------------------------------------------------------------- R4


@BOTH
def test_r4_head_draws_and_tail_replacements(variant):
    """R4: ordinary draws from the head; each kong's replacement is the wall's LAST tile."""
    env = deal(variant, ["1111m 2222p 369s 147z", None, None, None], wall="5z6s", tail="7z6z")
    assert env.view("player_0")["wall_remaining"] == 83
    act(env, "player_0: concealed_kong 1m")
    me = env.view("player_0")
    assert me["drawn"] == "7z" and me["wall_remaining"] == 82
    act(env, "player_0: concealed_kong 2p")
    me = env.view("player_0")
    assert me["drawn"] == "6z" and me["wall_remaining"] == 81
    act(env, "player_0: discard 6z")
    assert mover(env) == "player_1"
    assert env.view("player_1")["drawn"] == "5z" and env.view("player_1")["wall_remaining"] == 80
    act(env, "player_1: discard drawn")
    assert env.view("player_2")["drawn"] == "6s"
    assert seats_total(env) == 136


def test_r4_put_back_goes_to_the_tail_end_when_head_draws_passed_the_slot():
    # R4 (and C8's set-aside bao indicator): head draws skip the empty slot; once the head has
    # passed it, putting the tile back puts it at the tail end (the next replacement draw)
    wall = Wall(parse_tiles("1m2m3m4m5m6m"))
    assert wall.set_aside(1) == tile_index("2m")
    assert [wall.draw_head(), wall.draw_head()] == parse_tiles("1m3m")
    assert wall.remaining == 3 and wall.slots == 3
    wall.put_back()
    assert wall.gap is None and wall.live_tiles() == parse_tiles("4m5m6m2m")
    assert wall.draw_tail() == tile_index("2m")


# ---------------------------------------------------------------------------------------- R5


@BOTH
@pytest.mark.parametrize(
    "claimer",
    [
        "55z 234m 567m 111p 99s",  # complete after the pong: still no win
        "55z 1111p 234m 567m 9s",  # four of a kind: still no kong
    ],
    ids=["complete", "four_of_a_kind"],
)
def test_r5_after_pong_only_discard_or_ready(variant, claimer):
    """R5: after a pong the player may only discard or declare ready: no win, no kong."""
    env = deal(variant, ["5z 258m 369p 147s 2346z", claimer, None, None])
    act(env, "player_0: discard 5z")
    act(env, "player_1: pong")
    assert mover(env) == "player_1"
    options = legal(env)
    assert options and all(a.startswith(("discard ", "ready ")) for a in options), options
    assert "win" not in options and "concealed_kong 1p" not in options


@BOTH
def test_r5_no_win_on_the_dealt_tiles(variant):
    """R5: no 天胡 on the dealer's dealt 14 (allow_tianhu False)."""
    env = deal(variant, ["123m456p789s111z55z", None, None, None])
    assert "win" not in legal(env)
    assert "pass" not in legal(env)


def test_r5_tianhu_flag_changchun():
    """R5: with allow_tianhu the dealt complete hand may win (Changchun has no ready rule)."""
    env = deal(CC, ["123m456p789s111z55z", None, None, None], allow_tianhu=True)
    assert "win" in legal(env)
    act(env, "player_0: win")  # settles without a drawn tile: read as won on the kind that scores most
    outcome = result(env)
    assert outcome["outcome"] == "win" and outcome["winner"] == 0 and outcome["method"] == "self_draw"
    assert outcome["tile"] is None  # no tile was taken: the hand was dealt complete
    assert dict(map(tuple, outcome["fans"]))["zimo"] == 1
    assert sum(outcome["deltas"]) == 0 and outcome["deltas"][0] > 0


def test_r5_single_legal_action_is_still_a_decision():
    """R5: a locked ready hand's turn has one legal action and is still a decision step."""
    env = deal(XJ, ["123m456m789m11p355s", None, None, None], wall="1z2z3z6z")
    assert "ready 3s" in legal(env)  # the dealer may declare ready with its first discard
    act(env, "player_0: ready 3s")
    discard_drawn_turns(env, 3)
    assert mover(env) == "player_0"
    assert legal(env) == {"discard 6z"}
    assert env.observe("player_0")["action_mask"].sum() == 1
    act(env, "player_0: discard 6z")
    assert mover(env) == "player_1"


# ---------------------------------------------------------------------------------------- R6


@BOTH
def test_r6_players_with_only_pass_are_not_asked(variant):
    """R6: only players with a claim other than pass are asked; the next mover skips the rest."""
    env = deal(variant, ["258m369p147s23446z", None, "147m258p369s1266z", None])
    act(env, "player_0: discard 6z")
    assert mover(env) == "player_2"
    assert legal(env) == {"pong", "pass"}
    assert env.view("player_2")["phase"] == "claim"
    act(env, "player_2: pass")
    assert mover(env) == "player_1"
    assert env.view("player_1")["phase"] == "turn"
    assert env.view("player_1")["concealed_counts"][1] == 14


def r6_order_deal(variant):
    """Dealer 0 discards 4m: player_1 can pong it (distance 1), player_3 can win on it (distance 3)."""
    if variant is XJ:
        # player_3 must be ready to win on a discard (X9): dealer 3 declares ready first
        env = deal(
            XJ,
            ["7m 147p 258s 23456z 9p", "44m 9m 369p 147s 1267z", None, "23m456p789p111s55z9m"],
            dealer=3,
            wall="4m",
            allow_discard_win=True,
        )
        act(env, "player_3: ready 9m")
        act(env, "player_0: discard 4m")
    else:
        env = deal(CC, ["4m 7m 147p 258s 23456z 9p", "44m 9m 369p 147s 1267z", None, "23m456p789s111z55z"])
        act(env, "player_0: discard 4m")
    return env


@BOTH
def test_r6_claim_order_best_claim_first_then_distance(variant):
    """R6: a win (player_3, distance 3) is asked before a pong (player_1, distance 1);
    once it wins nobody else is asked."""
    env = r6_order_deal(variant)
    assert mover(env) == "player_3" and legal(env) == {"win", "pass"}
    act(env, "player_3: pass")
    assert mover(env) == "player_1" and legal(env) == {"pong", "pass"}
    act(env, "player_1: pong")
    assert mover(env) == "player_1" and env.view("player_1")["phase"] == "turn"

    env = r6_order_deal(variant)
    act(env, "player_3: win")
    res = result(env)
    assert res["winner"] == 3 and res["method"] == "discard" and res["tile"] == "4m"
    assert all(env.terminations.values())


def r6_leak_deal():
    """Changchun: dealer 2 discards 3m; player_3 (next) may win or chow it, player_0 may pong."""
    return deal(
        CC,
        ["33m 147p 258s 2345z 9p", None, "3m 258m 369p 147s 2467z", "12m456p789s111z55z"],
        dealer=2,
    )


def test_r6_pending_claim_not_leaked_changchun():
    """R6: a claim made earlier in the window is not revealed to a player asked later.

    player_3's best claim (win) is asked first; it chooses chow instead, which player_0's pong
    can beat, so player_0 is asked. What player_0 sees must not depend on player_3's choice.
    (In Xinjiang no deal allows this: pong = kong, and win needs ready, which locks pongs.)
    """
    seen = {}
    for choice in ("chow_high", "pass"):
        env = r6_leak_deal()
        act(env, "player_2: discard 3m")
        assert mover(env) == "player_3" and legal(env) == {"win", "chow_high", "pass"}
        act(env, f"player_3: {choice}")
        assert mover(env) == "player_0" and legal(env) == {"pong", "pass"}
        seen[choice] = obs_of(env, "player_0")
    assert_same_observation(seen["chow_high"], seen["pass"])

    env = r6_leak_deal()
    play(env, "player_2: discard 3m", "player_3: chow_high", "player_0: pong")
    assert mover(env) == "player_0"  # pong beats the pending chow
    assert env.view("player_0")["melds"][0][0]["kind"] == "pong"
    assert env.view("player_0")["melds"][3] == []

    env = r6_leak_deal()
    play(env, "player_2: discard 3m", "player_3: chow_high", "player_0: pass")
    assert mover(env) == "player_3"
    assert env.view("player_3")["melds"][3][0]["kind"] == "chow"


# ---------------------------------------------------------------------------------------- R7


def r7_hidden_kong_deal(kong: str):
    hands = [
        kong + "369p 147s 2346z",
        "369m 147p 258s 1235z",
        "47m 258p 369s 12567z",
        "58m 369p 147s 13457z",
    ]
    return deal(XJ, hands, wall="5m", tail="7z")


def test_r7_concealed_kong_hidden_from_others_in_xinjiang():
    """R7: concealed_kong_visible is False in Xinjiang: others see only that the kong exists,
    and nothing they observe depends on its tile."""
    seen = []
    for kong in ("1111m", "2222m"):
        env = r7_hidden_kong_deal(kong)
        act(env, f"player_0: concealed_kong {kong[0]}m")
        assert env.view("player_0")["melds"][0] == [{"kind": "concealed_kong", "tiles": kong, "from": None}]
        assert env.view("player_1")["melds"][0] == [{"kind": "concealed_kong", "tiles": None, "from": None}]
        act(env, "player_0: discard 7z")
        assert mover(env) == "player_1"
        seen.append(obs_of(env, "player_1"))
    assert_same_observation(seen[0], seen[1])


def test_r7_concealed_kong_visible_in_changchun():
    """R7: concealed_kong_visible is True in Changchun: the four tiles are shown."""
    env = deal(CC, ["1111m 369p 147s 2346z", None, None, None], tail="7z")
    act(env, "player_0: concealed_kong 1m")
    assert env.view("player_1")["melds"][0] == [{"kind": "concealed_kong", "tiles": "1111m", "from": None}]


def r7_added_kong_deal(**overrides):
    """Xinjiang: player_1 pongs 5p, player_3 declares ready on 5p (closed 46p), player_1 later
    draws the fourth 5p."""
    hands = [
        "5p 147m 28p 369s 23467z",
        "55p 258m 147s 39p 357z",
        None,
        "123m456m789m46p11z",
    ]
    env = deal(XJ, hands, wall="8s2s1p5p", tail="6s", **overrides)
    play(env, "player_0: discard 5p", "player_1: pong", "player_1: discard 7z")
    act(env, "player_2: discard drawn")
    act(env, "player_3: ready 2s")
    act(env, "player_0: discard drawn")
    assert mover(env) == "player_1" and "added_kong 5p" in legal(env)
    return env


def test_r7_added_kong_robbing_window_then_the_kong_stands():
    """R7: an added kong opens a robbing window (the tile still in the konger's hand); the kong
    stands when nobody robs, and its payments are made then, not before."""
    env = r7_added_kong_deal()
    counts_before = env.view("player_0")["concealed_counts"][1]
    rewards = act(env, "player_1: added_kong 5p")
    assert rewards == {a: 0.0 for a in AGENTS}  # nothing paid while it can be robbed
    assert mover(env) == "player_3" and legal(env) == {"win", "pass"}
    view = env.view("player_3")
    assert view["phase"] == "rob"
    assert view["claim"] == {"seat": 1, "tile": "5p", "kind": "added_kong"}
    assert view["concealed_counts"][1] == counts_before
    rewards = act(env, "player_3: pass")
    assert rewards == {"player_0": -1.0, "player_1": 3.0, "player_2": -1.0, "player_3": -1.0}  # X8 刮风
    assert mover(env) == "player_1"
    me = env.view("player_1")
    assert me["drawn"] == "6s"
    assert me["melds"][1] == [{"kind": "added_kong", "tiles": "5555p", "from": 0}]


def test_r7_robbed_added_kong_does_not_stand():
    """R7/X7: if robbed, the kong does not stand (no kong payment) and the tile goes to the robber."""
    env = r7_added_kong_deal()
    act(env, "player_1: added_kong 5p")
    act(env, "player_3: win")
    res = result(env)
    assert res["winner"] == 3 and res["method"] == "rob_kong" and res["tile"] == "5p"
    assert res["kong_deltas"] == [0.0, 0.0, 0.0, 0.0]
    assert res["deltas"] == [0.0, -3.0, 0.0, 3.0]  # 平胡 1 fan = 1 point, the konger pays 3x
    assert [p["reason"] for p in res["payments"]] == ["rob_kong"]


# ---------------------------------------------------------------------------------------- R8


@pytest.mark.parametrize(
    "variant,expected",
    [(XJ, {"ready 3s", "ready 5s"}), (CC, {"ready 3s"})],
    ids=["xinjiang", "changchun"],
)
def test_r8_ready_offered_exactly_for_discards_leaving_the_hand_ready(variant, expected):
    """R8: `ready T` for every discard T leaving a ready hand, every winning condition included:
    discarding 5s waits on 4s only, whose win (123m456m789m11p345s) has no triplet and no
    dragon pair, so Changchun's 一叉 (C9) makes it not ready."""
    env = deal(variant, ["123m456m789m11p355s", None, None, None])
    assert {a for a in legal(env) if a.startswith("ready ")} == expected


@BOTH
def test_r8_kongting_is_not_ready(variant):
    """R8 空听: a hand whose only wait is a kind the player holds all four of is not ready."""
    env = deal(variant, ["123m789m456s1111p7z", None, None, None])
    readies = {a for a in legal(env) if a.startswith("ready ")}
    assert "ready 7z" not in readies  # would wait on 1p only, all four held
    assert readies == {"ready 1p"}  # waits on 7z


def test_r8_ready_hand_is_locked():
    """R8: after declaring ready no pong is offered and only the drawn tile may be discarded."""
    env = deal(XJ, ["123m456m789m11p355s", None, None, None], wall="1p2z3z6z")
    act(env, "player_0: ready 3s")
    act(env, "player_1: discard 1p")  # player_0 holds 11p but is locked: not asked
    assert mover(env) == "player_2" and env.view("player_2")["phase"] == "turn"
    discard_drawn_turns(env, 2)
    assert mover(env) == "player_0" and legal(env) == {"discard 6z"}


def test_r8_passed_discard_win_blocks_that_kind_until_own_next_draw_xinjiang():
    """R8 过手胡 (Xinjiang with allow_discard_win): passing a win on 4m blocks wins on 4m by a
    claim until the player's next draw; other kinds stay winnable."""
    env = deal(
        XJ,
        [None, None, None, "23m456p789p111s55z9m"],
        dealer=3,
        wall="4m4m1m6z4m",
        allow_discard_win=True,
    )
    act(env, "player_3: ready 9m")
    r8_passed_win_sequence(env)


def test_r8_passed_discard_win_blocks_that_kind_until_own_next_draw_changchun():
    """R8 过手胡 (Changchun Decision): the same without a ready declaration."""
    env = deal(CC, [None, None, None, "23m456p789s111z55z9p"], dealer=3, wall="4m4m1m6z4m")
    act(env, "player_3: discard 9p")
    r8_passed_win_sequence(env)


def r8_passed_win_sequence(env) -> None:
    """player_3 waits on 1m/4m; 4m, 4m, 1m are discarded by players 0, 1, 2, then 4m again."""
    act(env, "player_0: discard 4m")
    assert mover(env) == "player_3" and legal(env) == {"win", "pass"}
    act(env, "player_3: pass")
    assert mover(env) == "player_1" and env.view("player_1")["phase"] == "turn"
    act(env, "player_1: discard 4m")
    assert mover(env) == "player_2" and env.view("player_2")["phase"] == "turn"  # not asked
    act(env, "player_2: discard 1m")
    assert mover(env) == "player_3" and "win" in legal(env)  # another kind (Changchun: chow too)
    act(env, "player_3: pass")
    assert mover(env) == "player_3" and env.view("player_3")["drawn"] == "6z"
    act(env, "player_3: discard 6z")
    act(env, "player_0: discard 4m")
    assert mover(env) == "player_3" and legal(env) == {"win", "pass"}  # its draw lifted the lock
    act(env, "player_3: win")
    res = result(env)
    assert res["winner"] == 3 and res["method"] == "discard" and res["tile"] == "4m"
    assert res["deltas"][0] < 0 and res["deltas"][1] == res["deltas"][2] == 0.0


def test_r8_passing_a_self_draw_win_imposes_nothing():
    """R8: declining a self-drawn win (by discarding it) does not block a later claim win."""
    env = deal(
        XJ,
        [None, None, None, "23m456p789p111s55z9m"],
        dealer=3,
        wall="2z3z5z4m4m",
        allow_discard_win=True,
    )
    act(env, "player_3: ready 9m")
    discard_drawn_turns(env, 3)
    assert mover(env) == "player_3" and legal(env) == {"win", "discard 4m"}
    act(env, "player_3: discard 4m")
    act(env, "player_0: discard 4m")
    assert mover(env) == "player_3" and legal(env) == {"win", "pass"}


# ---------------------------------------------------------------------------------------- R9


@BOTH
def test_r9_standard_form_counts_exposed_melds(variant):
    """R9: four melds and a pair, the exposed pong counting as one of the melds."""
    env = deal(variant, ["7z 258m 147p 369s 2346z", "123m456m99p13s577z", None, None], wall="1z2z3z2s")
    act(env, "player_0: discard 7z")
    act(env, "player_1: pong")
    act(env, "player_1: ready 5z" if variant is XJ else "player_1: discard 5z")
    discard_drawn_turns(env, 3)
    assert mover(env) == "player_1" and env.view("player_1")["drawn"] == "2s"
    assert "win" in legal(env)
    act(env, "player_1: win")
    res = result(env)
    assert res["winner"] == 1 and res["method"] == "self_draw" and res["tile"] == "2s"
    if variant is XJ:
        assert res["fans"] == [["pinghu", 1]] and res["deltas"] == [-1.0, 3.0, -1.0, -1.0]


# ---------------------------------------------------------------------------------------- R10


def r10_deal(variant):
    """player_1 and player_3 can both win on the 4m that player_0 discards."""
    if variant is XJ:
        env = deal(
            XJ,
            [None, "23m456p789p111s55z9m", None, "23m456s789s111p66z"],
            dealer=1,
            wall="1z2z4m",
            allow_discard_win=True,
        )
        act(env, "player_1: ready 9m")
        act(env, "player_2: discard drawn")
        act(env, "player_3: ready 2z")
        act(env, "player_0: discard 4m")
    else:
        env = deal(CC, ["4m 7m 147p 258s 23456z 9p", "23m456p789s111z55z", None, "23m456s789p222z66z"])
        act(env, "player_0: discard 4m")
    return env


@BOTH
def test_r10_one_winner_the_nearest(variant):
    """R10/R6: two players can win on one discard: the nearest to the discarder is asked first;
    its win ends the hand and the other is never asked (no multiple ron)."""
    env = r10_deal(variant)
    assert mover(env) == "player_1" and "win" in legal(env)
    act(env, "player_1: win")
    res = result(env)
    assert res["outcome"] == "win" and res["winner"] == 1
    assert all(env.terminations.values())
    assert legal(env, "player_3") == set()
    assert sum(1 for d in res["deltas"] if d > 0) == 1

    env = r10_deal(variant)
    act(env, "player_1: pass")
    assert mover(env) == "player_3" and "win" in legal(env)
    act(env, "player_3: win")
    assert result(env)["winner"] == 3


# ---------------------------------------------------------------------------------------- R11


@pytest.mark.parametrize("name", ["xinjiang", "changchun"])
def test_r11_dealer_rotation_over_three_hands(name):
    """R11: another player's win passes the deal to the next seat; drawn hands keep it.
    Hands 1 and 2 come from the seed and are played to a draw (nobody takes a win)."""
    _, other_wins = QUICK[name]
    env = other_wins(seed=3, num_hands=3)
    assert results(env)[0]["dealer"] == 0 and results(env)[0]["next_dealer"] == 1
    after_first = totals(env)
    assert env.view("player_0")["hand_index"] == 1 and env.view("player_0")["dealer"] == 1
    assert env.view("player_2")["scores"] == [after_first[a] for a in AGENTS]  # scores carry over
    # API: the result stays in each agent's info until that agent's next step
    assert all("result" in env.infos[a] for a in AGENTS)
    first = mover(env)
    act(env, "discard " + tile_name(parse_tiles(hand_of(env, first))[-1]))
    assert "result" not in env.infos[first]
    assert all("result" in env.infos[a] for a in AGENTS if a != first)
    out = play_out(env)
    assert len(out) == 3
    assert [r["outcome"] for r in out[1:]] == ["draw", "draw"]
    assert [(r["dealer"], r["next_dealer"]) for r in out] == [(0, 1), (1, 1), (1, 1)]
    assert all(env.terminations.values())


@pytest.mark.parametrize("name", ["xinjiang", "changchun"])
def test_r11_dealer_win_keeps_the_deal(name):
    """R11: a dealer win keeps the dealer (庄赢连庄)."""
    dealer_wins, _ = QUICK[name]
    env = dealer_wins(seed=3, num_hands=2)
    assert results(env)[0]["winner"] == 0 and results(env)[0]["next_dealer"] == 0
    assert env.view("player_1")["dealer"] == 0 and env.view("player_1")["hand_index"] == 1


# ---------------------------------------------------------------------------------------- R12


@BOTH
def test_r12_rewards_zero_sum_and_cumulative_equal_deltas_plus_kong_deltas(variant):
    """R12: every step's rewards sum to zero; each agent's rewards over the hand, read the
    PettingZoo way (last() before each of its steps and at the end), equal deltas + kong_deltas."""
    env = deal(variant, ["1111m 456p 789s 111z 5z", None, None, None], wall="2z3z4z5z", tail="6z", wrapped=True)
    collected = {a: 0.0 for a in AGENTS}

    def step(name: str) -> None:
        agent = mover(env)
        collected[agent] += env.last()[1]
        act(env, f"{agent}: {name}")  # act asserts the step is zero-sum

    step("concealed_kong 1m")
    step("ready 6z" if variant is XJ else "discard 6z")
    for _ in range(3):
        step("discard drawn")
    step("win")
    for agent in AGENTS:
        collected[agent] += env.unwrapped._cumulative_rewards[agent]
    res = result(env)
    expected = {a: res["deltas"][i] + res["kong_deltas"][i] for i, a in enumerate(AGENTS)}
    assert collected == pytest.approx(expected)
    assert totals(env) == pytest.approx(expected)
    assert sum(res["deltas"]) == 0 and sum(res["kong_deltas"]) == 0
    assert res["kong_deltas"][0] > 0 and res["deltas"][0] > 0
    assert env.unwrapped.view("player_0")["scores"] == [expected[a] for a in AGENTS]
    if variant is XJ:  # pinghu 1 + gang 1 = 2 fan = 2 points from each; 刮风 1 from each
        assert res["deltas"] == [6.0, -2.0, -2.0, -2.0] and res["kong_deltas"] == [3.0, -1.0, -1.0, -1.0]
    else:  # C12: a concealed kong pays 2 from each
        assert res["kong_deltas"] == [6.0, -2.0, -2.0, -2.0]


# ---------------------------------------------------------------------------------------- R13


@BOTH
def test_r13_view_and_render_show_only_own_concealed_tiles(variant):
    """R13: a seat's view holds its own concealed tiles only; the render hides the others'."""
    p0 = "258m369p147s23446z"
    env = deal(variant, [p0, "147m258p369s1235z", None, None])
    v1 = env.view("player_1")
    assert v1["hand"] == "147m258p369s1235z"
    assert "hands" not in v1 and "drawn_tiles" not in v1
    assert env.view("player_0")["hand"] == p0
    text = env.render_view("player_1")
    assert "147m258p369s1235z" in text
    assert p0 not in text
    assert "🀫" * 14 in text


def r13_deal(variant, p0: str, p1: str):
    return deal(variant, [p0, p1, "47m 258p 369s 12357z", "58m 147p 369s 12467z"], wall="3z1z")


@BOTH
def test_r13_observation_independent_of_others_concealed_tiles(variant):
    """R13: two deals that differ only in player_0's concealed tiles (5p or 6p, never shown)
    give player_1 the same observation, mask, view, render and info."""
    seen = []
    for spare in ("5p", "6p"):
        env = r13_deal(variant, f"{spare} 258m 369s 1p 8p 2467z 9m", "147m 147s 9s 24p 2346z")
        act(env, "player_0: discard 6z")
        assert mover(env) == "player_1" and env.view("player_1")["phase"] == "turn"
        seen.append(obs_of(env, "player_1"))
    assert_same_observation(seen[0], seen[1])


@BOTH
def test_r13_a_declined_claim_is_not_observed_by_others(variant):
    """R13/R6: whether player_1 was asked (and passed) a pong on the dealer's 6z is hidden from
    player_2, whose next decision looks the same either way."""
    seen = []
    for p1, asked in (("147m 147s 9s 24p 24z 66z", True), ("147m 147s 9s 24p 24z 36z", False)):
        env = r13_deal(variant, "5p 258m 369s 1p 8p 2467z 9m", p1)
        act(env, "player_0: discard 6z")
        assert (env.view("player_1")["phase"] == "claim") is asked
        if asked:
            assert legal(env) == {"pong", "pass"}
            act(env, "player_1: pass")
        act(env, "player_1: discard drawn")
        assert mover(env) == "player_2" and env.view("player_2")["phase"] == "turn"
        seen.append(obs_of(env, "player_2"))
    assert_same_observation(seen[0], seen[1])


# ---------------------------------------------------------------------------------------- bad input


@BOTH
@pytest.mark.parametrize(
    "options,match",
    [
        ({"hands": ["123m"] * 4, "wall": ""}, "14 tiles"),
        ({"hands": ["1m" * 14, "1m" * 13, "2m" * 13, "3m" * 13], "wall": ""}, "four of each"),
        ({"hands": ["147m258p369s1235z"] * 3 + ["147m258p369s12356z"], "wall": ""}, "missing"),
        ({"hands": ["147m258p369s1235z"] * 4}, "together"),
        ({"wall": "1m"}, "together"),
        ({"hands": "123m", "wall": ""}, "four tile strings"),
        ({"dealer": 7}, "dealer"),
        ({"silver": [1, 2]}, "silver"),
        ({"dice": [13]}, "dice"),
    ],
    ids=[
        "sizes",
        "five_copies",
        "missing_tiles",
        "hands_without_wall",
        "wall_without_hands",
        "hands_not_a_list",
        "bad_dealer",
        "bad_silver",
        "bad_dice",
    ],
)
def test_r3_invalid_reset_options_raise_and_leave_the_env_unchanged(variant, options, match):
    """API: an invalid deal raises ValueError saying what is wrong; a running env keeps its state."""
    env = deal(variant, [None, None, None, None], dealer=0)
    discard_last(env)
    before = (mover(env), legal(env), [env.view(a) for a in AGENTS], env.record())
    with pytest.raises(ValueError, match=match):
        env.reset(seed=1, options=options)
    assert (mover(env), legal(env), [env.view(a) for a in AGENTS], env.record()) == before
    act(env, "discard drawn")  # still playable


@BOTH
def test_unknown_reset_option_is_ignored_with_a_warning(variant):
    """API: an unknown reset option is ignored with a warning."""
    env = variant.raw_env()
    with pytest.warns(UserWarning, match="no_such_option"):
        env.reset(seed=1, options={"no_such_option": 1})
    assert env.view("player_0")["wall_remaining"] == 83


def test_r3_fourteen_tile_hand_must_be_the_named_dealer():
    """API: `dealer` must name the seat holding 14 tiles."""
    env = XJ.raw_env()
    from scenario import deal_options

    options = deal_options([None, None, "123m456p789s111z55z", None])
    options["dealer"] = 0
    with pytest.raises(ValueError, match="dealer"):
        env.reset(seed=0, options=options)


@BOTH
def test_unknown_or_ill_typed_rule_field_raises_naming_it(variant):
    """API: an unknown keyword or an invalid value raises ValueError naming the field."""
    with pytest.raises(ValueError, match="no_such_rule"):
        variant.raw_env(no_such_rule=True)
    with pytest.raises(ValueError, match="allow_tianhu"):
        variant.raw_env(allow_tianhu="yes")
    with pytest.raises(ValueError, match="num_hands"):
        variant.raw_env(num_hands=0)
    with pytest.raises(ValueError, match="illegal_action"):
        variant.raw_env(illegal_action="ignore")


@BOTH
def test_illegal_action_raises_naming_it_and_changes_nothing(variant):
    """API: an illegal action raises ValueError naming the action and the legal ones."""
    env = deal(variant, ["123m456p789s111z5z7z", None, None, None])
    before = (mover(env), legal(env), [env.view(a) for a in AGENTS], env.record())
    with pytest.raises(ValueError) as err:
        act(env, "player_0: discard 9m")
    assert "discard 9m" in str(err.value) and "discard 7z" in str(err.value)
    with pytest.raises(ValueError, match="pong"):
        act(env, "player_0: pong")
    assert (mover(env), legal(env), [env.view(a) for a in AGENTS], env.record()) == before
    assert totals(env) == {a: 0.0 for a in AGENTS}


@BOTH
def test_illegal_action_penalize(variant):
    """API: illegal_action="penalize": the offender pays 1 to each other seat, the episode ends
    for everyone, outcome "illegal"."""
    env = deal(variant, ["123m456p789s111z5z7z", None, None, None], illegal_action="penalize")
    act(env, "player_0: discard 7z")
    offender = mover(env)
    rewards = act(env, f"{offender}: pong")  # nobody can pong 7z
    assert rewards[offender] == -3.0
    assert all(rewards[a] == 1.0 for a in AGENTS if a != offender)
    assert all(env.terminations.values())
    res = result(env)
    assert res["outcome"] == "illegal"


@BOTH
def test_illegal_action_penalty_is_recorded_and_replays(variant):
    """API: a penalised illegal action is part of the record and `replay` reproduces it."""
    from mahjong_env import replay

    env = deal(variant, ["123m456p789s111z5z7z", None, None, None], illegal_action="penalize")
    act(env, "player_0: discard 7z")
    offender = mover(env)
    act(env, f"{offender}: pong")
    record = env.record()
    assert record["hands"][0]["actions"][-1] == [int(offender[-1]), "illegal pong"]
    assert replay(record) == [result(env)]
