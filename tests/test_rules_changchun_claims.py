"""Changchun scenario tests of the deal, the turn, claims and their priority (RULES.md C1–C4).

Every scenario builds its deal by hand in tile notation (`scenario.deal`, `scenario.cc`: the
dealer is the seat dealt 14 tiles, seat 0 unless said otherwise; ``wall`` is the head in draw
order and ``tail`` the replacement draws in the order taken), plays actions by name and checks
the legal action names, the step rewards and ``info["result"]``. Expectations come from
RULES.md, not from the engine.

Seats move 0 → 1 → 2 → 3 (R2). ``IDLE`` hands (`scenario.IDLE`) hold no pair and no two tiles
within a chow's reach, so a seat holding one never claims anything and never wins.
"""

from __future__ import annotations

import pytest
from scenario import (
    IDLE,
    act,
    cc,
    legal,
    only_discards_or_ready,
    phase,
    play,
    result,
    rewards_list,
    tsumogiri,
    view,
)

from mahjong_env import changchun_v0
from mahjong_env.tiles import format_tiles, parse_tiles

# -------------------------------------------------------------------------------------------- C1


def test_c1_deal_sizes_random_and_custom():
    # C1: dealer 14 tiles, the others 13; the wall holds the rest (136 - 53 = 83)
    for dealer in range(4):
        env = changchun_v0.raw_env()
        env.reset(seed=11, options={"dealer": dealer})
        v = view(env, dealer)
        expected = [13, 13, 13, 13]
        expected[dealer] = 14
        assert v["concealed_counts"] == expected
        assert v["wall_remaining"] == 83
        assert env.agent_selection == f"player_{dealer}"
    env = cc(["123m456p789s12345z", IDLE[0], IDLE[1], IDLE[2]])
    assert view(env, 0)["concealed_counts"] == [14, 13, 13, 13]
    assert view(env, 2)["hand"] == format_tiles(sorted(parse_tiles(IDLE[1])))


# -------------------------------------------------------------------------------------------- C2


C2_HANDS = [
    "1389m19p258s23467z",  # dealer: discards 3m
    "457m24678p136s15z",  # chows 3m with 45m, discards 7p
    "256m377p479s1346z",  # pongs 7p, discards 9s
    "168m259p2999s257z",  # kongs 9s
]


def test_c2_must_discard_after_deal_chow_pong_kong_and_draw():
    # C2/R5: after the deal, a draw, a chow, a pong or a kong's replacement the player must
    # discard (no pass; only discards and ready-discards, or a win/kong where offered)
    env = cc(C2_HANDS, wall="8p", tail="3p")
    names = legal(env)
    assert "pass" not in names and only_discards_or_ready(names)
    act(env, "player_0: discard 3m")
    assert legal(env) == {"chow_low", "pass"}
    act(env, "player_1: chow_low")
    names = legal(env)
    assert "pass" not in names and only_discards_or_ready(names)
    act(env, "player_1: discard 7p")
    assert legal(env) == {"pong", "pass"}
    act(env, "player_2: pong")
    names = legal(env)
    assert "pass" not in names and only_discards_or_ready(names)
    act(env, "player_2: discard 9s")
    assert legal(env) == {"pong", "kong", "pass"}
    act(env, "player_3: kong")
    v = view(env, 3)
    assert v["drawn"] == "3p"  # the replacement from the wall's end (R4)
    assert v["concealed_counts"][3] == 11
    names = legal(env)
    assert "pass" not in names and all(n.startswith(("discard ", "ready ", "concealed_kong ", "win")) for n in names)
    act(env, "player_3: discard 3p")
    assert env.agent_selection == "player_0" and view(env, 0)["drawn"] == "8p"
    names = legal(env)
    assert "pass" not in names and only_discards_or_ready(names)


# -------------------------------------------------------------------------------------------- C3


def test_c3_chow_offered_only_to_the_next_player():
    # C3: chow only from the previous player's discard; the others are not even asked
    hands = [
        "1389m19p258s23467z",
        "458m369p147s1347z",  # 45m: chow 3m from player_0
        "245m258p369s2345z",  # 24m and 45m, but not next to player_0
        "127m147p258s1256z",  # 12m, not next to player_0 nor to player_1
    ]
    env = cc(hands, wall="3m")
    act(env, "player_0: discard 3m")
    assert legal(env) == {"chow_low", "pass"}  # player_1 only
    act(env, "player_1: pass")
    assert env.agent_selection == "player_1" and phase(env) == "turn"
    assert view(env, 1)["drawn"] == "3m"
    act(env, "player_1: discard 3m")
    assert env.agent_selection == "player_2"
    assert legal(env) == {"chow_low", "chow_mid", "pass"}  # now player_2 is the next player
    act(env, "player_2: pass")
    assert env.agent_selection == "player_2" and phase(env) == "turn"


@pytest.mark.parametrize("tile", ["2z", "6z"])
def test_c3_no_chow_of_honor_tiles(tile):
    # C3: only suited tiles can be chowed; 1z3z (5z7z) beside a discarded 2z (6z) give nothing
    hands = ["1389m19p258s23467z", "147m258p369s1357z", "258m369p147s1457z", "369m147p258s1345z"]
    env = cc(hands)
    act(env, f"player_0: discard {tile}")
    assert env.agent_selection == "player_1" and phase(env) == "turn"


def test_c3_shoubayi_no_claim_leaving_one_tile_with_a_chow():
    # C3: a player with an exposed chow (or making one) may not claim so that one concealed
    # tile is left after its discard; without a chow the same pong is allowed (C9.4 飘胡)
    hands = [
        "2368m2378p2368s44z",
        "45m9m9p55p8s9s2z3z567z",  # chows 3m, declares 喜杠 and 九蛋: 55p 8s 2z left
        IDLE[0],
        "1m9m1p6p9p1s55s7s9s567z",  # declares three groups, keeps 55s 7s 6p
    ]
    env = cc(hands, wall="1p5m5p2m5s")
    act(env, "player_0: discard 3m")
    play(env, "player_1: chow_low", "player_1: special_dragons", "player_1: special_nines", "player_1: discard 3z")
    assert view(env, 1)["concealed_counts"][1] == 4
    tsumogiri(env, 2)  # 1p
    play(env, "player_3: special_dragons", "player_3: special_ones", "player_3: special_nines")
    act(env, "player_3: discard 5m")
    assert view(env, 3)["concealed_counts"][3] == 4
    assert view(env, 1)["hand"] == "55p8s2z"
    act(env, "player_0: discard 5p")
    # player_1 holds 55p but has a chow: pong would leave 8s 2z, then one tile
    assert env.agent_selection == "player_1" and phase(env) == "turn"
    tsumogiri(env, 1)  # 2m
    tsumogiri(env, 2)  # 5s
    assert env.agent_selection == "player_3"
    assert legal(env) == {"pong", "pass"}  # no chow: the pong to one tile is allowed
    act(env, "player_3: pong")
    names = legal(env)
    assert {"discard 7s", "discard 6p"} <= names


def test_c3_shoubayi_no_chow_to_one_tile():
    # C3 "or is making": a player with four concealed tiles may not chow (two would be left,
    # then one after the discard)
    hands = [
        "2368m2378p2368s44z",
        "9m9p9s1m1p1s46m5p8s567z",  # three groups on its first turn, keeps 46m 5p 8s
        IDLE[1],
        IDLE[2],
    ]
    env = cc(hands, wall="7p1z6z5m")
    act(env, "player_0: discard 8m")
    assert env.agent_selection == "player_1" and phase(env) == "turn"
    play(env, "player_1: special_dragons", "player_1: special_ones", "player_1: special_nines")
    act(env, "player_1: discard 7p")
    assert view(env, 1)["hand"] == "46m5p8s"
    tsumogiri(env, 2)
    tsumogiri(env, 3)
    tsumogiri(env, 0)  # 5m: chow_mid 456m would leave 5p 8s, then one tile
    assert env.agent_selection == "player_1" and phase(env) == "turn"


def test_c3_concealed_kong_counts_as_concealed_tiles():
    # C3: with a chow, a 喜杠 and a concealed kong of 2s, a pong down to one loose tile is
    # allowed: the concealed kong's four tiles count as concealed here
    hands = ["2368m2378p3678s44z", "45m567z2222s55p8s3z", IDLE[0], IDLE[1]]
    env = cc(hands, wall="1z9m4m9s1z9m5p", tail="1p")
    act(env, "player_0: discard 3m")
    play(env, "player_1: chow_low", "player_1: special_dragons", "player_1: discard 3z")
    for seat in (2, 3, 0):
        tsumogiri(env, seat)
    assert rewards_list(act(env, "player_1: concealed_kong 2s")) == [-2, 6, -2, -2]
    act(env, "player_1: discard 9s")
    assert view(env, 1)["hand"] == "155p8s"
    for seat in (2, 3, 0):
        tsumogiri(env, seat)  # player_0 discards 5p
    assert env.agent_selection == "player_1" and legal(env) == {"pong", "pass"}


# -------------------------------------------------------------------------------------------- C4


C4_PONG_OVER_CHOW = ["1389m19p258s23467z", "458m369p147s1347z", "3369m258p147s256z", "127m147p258s1256z"]


def test_c4_pong_beats_chow_chow_player_not_asked():
    # C4 win > pong > kong > chow: player_2's pong takes 3m; player_1 (chow) is never asked
    env = cc(C4_PONG_OVER_CHOW)
    act(env, "player_0: discard 3m")
    assert env.agent_selection == "player_2" and legal(env) == {"pong", "pass"}
    act(env, "player_2: pong")
    assert env.agent_selection == "player_2" and phase(env) == "turn"
    assert view(env, 2)["melds"][2] == [{"kind": "pong", "tiles": "333m", "from": 0}]
    assert view(env, 1)["melds"][1] == []


def test_c4_chow_only_after_pong_passed():
    env = cc(C4_PONG_OVER_CHOW)
    act(env, "player_0: discard 3m")
    act(env, "player_2: pass")
    assert env.agent_selection == "player_1" and legal(env) == {"chow_low", "pass"}
    act(env, "player_1: chow_low")
    assert view(env, 1)["melds"][1] == [{"kind": "chow", "tiles": "345m", "from": 0}]


C4_WIN_OVER_PONG = [
    "1389m19p258s23467z",
    "147m258p3556s134z",  # 55s: pong
    IDLE[1],
    "123m789p789s222z5s",  # waits on 5s
]


def test_c4_win_beats_pong():
    env = cc(C4_WIN_OVER_PONG)
    act(env, "player_0: discard 5s")
    assert env.agent_selection == "player_3" and legal(env) == {"win", "pass"}
    act(env, "player_3: win")
    res = result(env)
    assert res["winner"] == 3 and res["method"] == "discard" and res["tile"] == "5s"


def test_c4_pong_asked_after_win_passed():
    env = cc(C4_WIN_OVER_PONG)
    act(env, "player_0: discard 5s")
    act(env, "player_3: pass")
    assert env.agent_selection == "player_1" and legal(env) == {"pong", "pass"}


C4_TWO_WINNERS = ["1389m19p258s23467z", "789m123p123s666z5s", IDLE[1], "123m789p789s222z5s"]


def test_c4_jiehu_nearest_winner_takes_the_discard():
    # C4 截胡: player_1 and player_3 both win on 5s; only the nearest (player_1) is asked and wins
    env = cc(C4_TWO_WINNERS)
    act(env, "player_0: discard 5s")
    assert env.agent_selection == "player_1" and legal(env) == {"win", "pass"}
    rewards = act(env, "player_1: win")
    res = result(env)
    assert res["winner"] == 1 and res["method"] == "discard"
    assert rewards_list(rewards)[3] == 0.0 and rewards_list(rewards)[0] < 0
    assert all(env.terminations.values())


def test_c4_farther_winner_asked_when_nearest_passes():
    env = cc(C4_TWO_WINNERS)
    act(env, "player_0: discard 5s")
    act(env, "player_1: pass")
    assert env.agent_selection == "player_3" and legal(env) == {"win", "pass"}
    act(env, "player_3: win")
    assert result(env)["winner"] == 3
