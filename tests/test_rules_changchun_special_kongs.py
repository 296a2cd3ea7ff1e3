"""Changchun scenario tests of the special kongs 旋风杠 喜杠 幺蛋 九蛋 and the additions to them
(RULES.md C5, C6; the MIL variants of C14 are in ``test_rules_changchun_mil2024.py``).

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
    SPECIALS,
    act,
    cc,
    fans,
    legal,
    only_discards_or_ready,
    phase,
    result,
    rewards_list,
    run_until,
    totals,
    tsumogiri,
    view,
)

from mahjong_env.tiles import parse_tiles

# -------------------------------------------------------------------------------------------- C5


@pytest.mark.parametrize("cfg", [{}, {"profile": "mil2024"}], ids=["seed", "mil2024"])
def test_c5_dealer_declares_every_special_group(cfg):
    # C5: 旋风杠 takes 4 tiles and draws one replacement from the wall's end; 喜杠 幺蛋 九蛋 take
    # 3 tiles and draw nothing; each kind once; each is paid as an exposed kong (C12: 1 point
    # from each other player), at once, and none can be robbed. C14 mil2024: 旋风杠 takes three
    # winds (no replacement) and keeps the 4z for an addition, not on the dealer's first turn (C6)
    three_winds = bool(cfg)
    env = cc(["1m9m1p9p1s9s1234z567z5m", IDLE[0], IDLE[1], IDLE[2]], tail="8p", **cfg)
    assert SPECIALS <= legal(env)
    assert rewards_list(act(env, "player_0: special_winds")) == [3, -1, -1, -1]
    v = view(env, 0)
    winds, drawn, wall = ("123z", None, 83) if three_winds else ("1234z", "8p", 82)
    assert v["melds"][0] == [{"kind": "special_winds", "tiles": winds, "from": None}]
    assert v["drawn"] == drawn and v["concealed_counts"][0] == 11 and v["wall_remaining"] == wall
    assert "special_winds" not in legal(env) and SPECIALS - {"special_winds"} <= legal(env)
    expected_sizes = {"special_dragons": 8, "special_ones": 5, "special_nines": 2}
    for name, size in expected_sizes.items():
        assert env.agent_selection == "player_0" and phase(env) == "turn"
        assert rewards_list(act(env, f"player_0: {name}")) == [3, -1, -1, -1]
        v = view(env, 0)
        assert v["concealed_counts"][0] == size and v["wall_remaining"] == wall
        assert name not in legal(env)
    assert [m["tiles"] for m in view(env, 0)["melds"][0]] == [winds, "567z", "1m1p1s", "9m9p9s"]
    assert view(env, 0)["hand"] == ("5m4z" if three_winds else "5m8p")
    names = legal(env)
    assert {"discard 5m", "discard 4z" if three_winds else "discard 8p"} <= names and only_discards_or_ready(names)
    assert totals(env) == {"player_0": 12, "player_1": -4, "player_2": -4, "player_3": -4}


def test_c5_non_dealer_declares_after_its_first_draw():
    hands = ["1389m2378p2368s44z", "9m9p9s567z258m36p47s", IDLE[1], IDLE[2]]
    env = cc(hands, wall="2z")
    act(env, "player_0: discard 8m")
    assert env.agent_selection == "player_1" and view(env, 1)["drawn"] == "2z"
    assert legal(env) & SPECIALS == {"special_dragons", "special_nines"}
    assert rewards_list(act(env, "player_1: special_dragons")) == [-1, 3, -1, -1]
    assert rewards_list(act(env, "player_1: special_nines")) == [-1, 3, -1, -1]
    assert view(env, 1)["concealed_counts"][1] == 8 and view(env, 1)["wall_remaining"] == 82
    assert "pass" not in legal(env)


def test_c5_xuanfeng_replacement_may_complete_the_hand():
    # R5/C5: after a declaration's replacement draw the usual after-draw choices apply (a win
    # is a self-draw, C10: 平胡 + 自摸, no 立胡 since the group is a kong)
    hands = ["2368m2378p2368s44z", "1234z123m456p78s5p", None, None]
    env = cc(hands, wall="5p", tail="9s", dealer=0)
    act(env, "player_0: discard 8m")
    act(env, "player_1: special_winds")
    assert view(env, 1)["drawn"] == "9s" and "win" in legal(env)
    act(env, "player_1: win")
    res = result(env)
    assert res["method"] == "self_draw" and fans(res) == {"pinghu": 1, "zimo": 1}
    assert res["deltas"] == [-2, 6, -2, -2] and res["kong_deltas"] == [-1, 3, -1, -1]


def test_c5_only_dealt_tiles_count():
    # C5 仅起手牌集齐才算数: 1m 1p dealt and 1s drawn is no 幺蛋; 9m 9p 9s dealt is a 九蛋
    hands = ["2389m2378p2368s44z", "1m9m1p9p9s258m36p47s5z", IDLE[1], IDLE[2]]
    env = cc(hands, wall="1s")
    act(env, "player_0: discard 8m")
    assert view(env, 1)["drawn"] == "1s"
    assert legal(env) & SPECIALS == {"special_nines"}


def test_c5_only_on_the_first_turn():
    # C5: a group not declared before the first discard is never offered again
    hands = ["2389m2378p2368s44z", "567z258m369p1478s", IDLE[1].replace("7z", "2z"), IDLE[2]]
    env = cc(hands, wall="3m7z5z1z")
    act(env, "player_0: discard 8m")
    assert "special_dragons" in legal(env)
    tsumogiri(env, 1)  # 3m, declining
    tsumogiri(env, 2)
    tsumogiri(env, 3)
    tsumogiri(env, 0)
    assert env.agent_selection == "player_1" and phase(env) == "turn"
    assert "special_dragons" not in legal(env)


# -------------------------------------------------------------------------------------------- C6


def test_c6_dealer_may_not_add_on_its_first_turn():
    # C6 庄家第一手不允许补杠: the dealer's 7z may join its 喜杠 only on a later turn
    hands = ["3569m369p34s1z5677z", "147m458p12689s36z", None, None]
    env = cc(hands, wall="2m8p6s5p")
    act(env, "player_0: special_dragons")
    assert "special_add 7z" not in legal(env)
    act(env, "player_0: discard 9m")
    run_until(env, 0)
    assert view(env, 0)["drawn"] == "5p"
    assert "special_add 7z" in legal(env)
    assert rewards_list(act(env, "player_0: special_add 7z")) == [3, -1, -1, -1]
    assert sorted(parse_tiles(view(env, 0)["melds"][0][0]["tiles"])) == parse_tiles("5677z")


def test_c6_non_dealer_adds_on_its_first_turn_unrobbed():
    # C6: a non-dealer may add on its first turn; C5 first-turn declarations are not robbed,
    # so player_2, waiting on 1z, is not asked
    hands = ["3569m369p34s4z5z6z37p", "11234z258m369p47s", "123m789p789s666z1z", None]
    env = cc(hands, wall="2m", tail="8m8p")
    act(env, "player_0: discard 9m")
    act(env, "player_1: special_winds")
    assert view(env, 1)["drawn"] == "8m"
    assert "special_add 1z" in legal(env)
    assert rewards_list(act(env, "player_1: special_add 1z")) == [-1, 3, -1, -1]
    v = view(env, 1)
    assert env.agent_selection == "player_1" and phase(env) == "turn"
    assert v["drawn"] == "8p" and v["wall_remaining"] == 80
    assert sorted(parse_tiles(v["melds"][1][0]["tiles"])) == parse_tiles("11234z")


C6_ROB_HANDS = [
    "3569m369p34s13456z",
    "147m158p1269s367z",  # 幺蛋 on its first turn, adds 1p on its second
    "258m1147p369s145z",  # 11p: 抢叉
    "789m23p789s222z55s",  # waits on 1p/4p: 抢胡
]


def _c6_rob_deal():
    env = cc(C6_ROB_HANDS, wall="2m8p6s7p1p", tail="4s")
    act(env, "player_0: discard 9m")
    act(env, "player_1: special_ones")
    tsumogiri(env, 1)
    tsumogiri(env, 2)
    tsumogiri(env, 3)
    tsumogiri(env, 0)
    assert env.agent_selection == "player_1" and view(env, 1)["drawn"] == "1p"
    assert "special_add 1p" in legal(env)
    rewards = act(env, "player_1: special_add 1p")
    assert rewards_list(rewards) == [0, 0, 0, 0]  # paid only once it stands (C12)
    return env


def test_c6_addition_robbed_by_win_qianghu():
    # C6 抢胡 (win first): player_3 is asked before player_2's pong; only the adder pays, as a
    # discarder (C11, 点炮 included); the addition pays nothing
    env = _c6_rob_deal()
    assert env.agent_selection == "player_3" and phase(env) == "rob"
    assert legal(env) == {"win", "pass"}
    act(env, "player_3: win")
    res = result(env)
    assert res["winner"] == 3 and res["method"] == "rob_kong" and res["tile"] == "1p"
    assert fans(res) == {"pinghu": 1, "lihu": 1, "dianpao": 1}
    assert res["deltas"] == [0, -4, 0, 4]
    assert res["kong_deltas"] == [-1, 3, -1, -1]  # the 幺蛋 only


def test_c6_addition_robbed_by_pong_qiangcha():
    # C6 抢叉: the robber gets the tile as if player_1 had discarded it; the addition does
    # not count and pays nothing; play goes on from the robber
    env = _c6_rob_deal()
    act(env, "player_3: pass")
    assert env.agent_selection == "player_2" and legal(env) == {"pong", "pass"}
    assert rewards_list(act(env, "player_2: pong")) == [0, 0, 0, 0]
    v = view(env, 2)
    assert v["melds"][2] == [{"kind": "pong", "tiles": "111p", "from": 1}]
    assert v["melds"][1] == [{"kind": "special_ones", "tiles": "1m1p1s", "from": None}]
    assert v["concealed_counts"][1] == 10 and v["wall_remaining"] == 78
    assert env.agent_selection == "player_2" and phase(env) == "turn"
    names = legal(env)
    assert only_discards_or_ready(names)
    act(env, "player_2: discard 7p")
    assert env.agent_selection == "player_3"
    assert totals(env) == {"player_0": -1, "player_1": 3, "player_2": -1, "player_3": -1}


def test_c6_addition_stands_when_nobody_robs():
    env = _c6_rob_deal()
    act(env, "player_3: pass")
    rewards = act(env, "player_2: pass")
    assert rewards_list(rewards) == [-1, 3, -1, -1]
    v = view(env, 1)
    assert env.agent_selection == "player_1" and phase(env) == "turn"
    assert v["drawn"] == "4s" and v["concealed_counts"][1] == 11
    assert sorted(parse_tiles(v["melds"][1][0]["tiles"])) == parse_tiles("1m1p1p1s")
