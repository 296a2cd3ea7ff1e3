"""Changchun scenario tests of winning and scoring: the winning conditions, the fans, the
settlement and the kong payments (RULES.md C9–C12).

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
    CC_DEALER,
    IDLE,
    KONG_BASE,
    WAIT_1Z_4Z,
    act,
    bao_deal,
    cc,
    fans,
    indicator_index,
    legal,
    phase,
    play,
    result,
    rewards_list,
    safe_discard,
    tsumogiri,
    view,
    wall_with,
)

# -------------------------------------------------------------------------------------------- C9


# (case, player_3's 13 tiles, the tile that completes them, winnable, rule overrides)
C9_CASES = [
    ("sansequan_missing_bamboo", "123m456m789p111z5p", "5p", False, {}),
    ("yaojiu_no_terminal_or_honor", "234m666m345p567s8p", "8p", False, {}),
    ("yicha_no_triplet", "123m234m456p789s1p", "1p", False, {}),
    ("yicha_wind_pair_no_exemption", "123m234m456p789s1z", "1z", False, {}),
    ("yicha_dragon_pair_exemption", "123m234m456p789s7z", "7z", True, {}),
    ("all_conditions_hold", "123m222m456p789s1p", "1p", True, {}),
    ("seven_pairs_off_by_default", "1199m1199p1199s7z", "7z", False, {}),
    ("seven_pairs_allowed", "1199m1199p1199s7z", "7z", True, {"allow_seven_pairs": True}),
    ("seven_pairs_still_need_three_suits", "1199m1199p2233z7z", "7z", False, {"allow_seven_pairs": True}),
]


@pytest.mark.parametrize("case,hand,tile,winnable,cfg", C9_CASES, ids=[c[0] for c in C9_CASES])
def test_c9_winning_conditions_on_discard_and_draw(case, hand, tile, winnable, cfg):
    # C9: a complete hand failing 三色全 / 幺九 / 一叉 is no win, on a discard or a draw
    env = cc([None, None, None, hand], wall=tile + "4z" + tile, dealer=0, **cfg)
    act(env, f"player_0: discard {safe_discard(env, 0, hand)}")
    act(env, f"player_1: discard {tile}")
    if winnable:
        assert env.agent_selection == "player_3" and legal(env) == {"win", "pass"}
        act(env, "player_3: pass")
    else:
        assert env.agent_selection == "player_2" and phase(env) == "turn"
    tsumogiri(env, 2)
    assert env.agent_selection == "player_3" and view(env, 3)["drawn"] == tile
    assert ("win" in legal(env)) == winnable


@pytest.mark.parametrize("case,hand,tile,winnable,cfg", C9_CASES, ids=[c[0] for c in C9_CASES])
def test_c9_ready_offered_only_for_winnable_waits(case, hand, tile, winnable, cfg):
    # R8/C9: `ready T` only when the hand left is ready with every winning condition
    env = cc([hand + "9s", None, None, None], dealer=0, **cfg)
    assert ("ready 9s" in legal(env)) == winnable


# ------------------------------------------------------------------------------------------- C10


# (case, player_3's 13 tiles, winning tile, by, rule overrides, fans, deltas); player_3 is not
# the dealer and wins on player_1's discard or on its own draw, never having declared ready
C10_CASES = [
    (
        "pinghu_lihu_dianpao",
        "45m123p789s222z99p",
        "3m",
        "discard",
        {},
        {"pinghu": 1, "lihu": 1, "dianpao": 1},
        [0, -4, 0, 4],
    ),
    ("zimo_all_pay", "45m123p789s222z99p", "6m", "draw", {}, {"pinghu": 1, "zimo": 1, "lihu": 1}, [-4, -4, -4, 12]),
    (
        "jiahu_12345m_on_3m",
        "12345m789p111s55z",
        "3m",
        "discard",
        {},
        {"pinghu": 1, "lihu": 1, "jiahu": 1, "dianpao": 1},
        [0, -8, 0, 8],
    ),
    (
        "no_jiahu_12345m_on_6m",
        "12345m789p111s55z",
        "6m",
        "discard",
        {},
        {"pinghu": 1, "lihu": 1, "dianpao": 1},
        [0, -4, 0, 4],
    ),
    (
        "jiahu_closed_wait",
        "13m123p789s222z99p",
        "2m",
        "draw",
        {},
        {"pinghu": 1, "zimo": 1, "lihu": 1, "jiahu": 1},
        [-8, -8, -8, 24],
    ),
    (
        "jiahu_edge_89_to_7",
        "89m123p789s222z99p",
        "7m",
        "discard",
        {},
        {"pinghu": 1, "lihu": 1, "jiahu": 1, "dianpao": 1},
        [0, -8, 0, 8],
    ),
    (
        "jiahu_dandiao_pair",
        "1234m789p789s222z",
        "4m",
        "draw",
        {},
        {"pinghu": 1, "zimo": 1, "lihu": 1, "jiahu": 1},
        [-8, -8, -8, 24],
    ),
    (
        "piaohu_shuangpeng",
        "111m999p555s22z33z",
        "2z",
        "discard",
        {},
        {"pinghu": 1, "piaohu": 2, "lihu": 1, "dianpao": 1},
        [0, -16, 0, 16],
    ),
    (
        "piaohu_never_with_jiahu",
        "111m999p555s222z3z",
        "3z",
        "draw",
        {},
        {"pinghu": 1, "zimo": 1, "piaohu": 2, "lihu": 1},
        [-16, -16, -16, 48],
    ),
    # C10 as amended: 七对 never with 夹胡 (a pair wait), 飘胡 or 立胡 (MIL 与门清不复合)
    (
        "qidui_never_with_jiahu_or_lihu",
        "1199m1199p1199s7z",
        "7z",
        "discard",
        {"allow_seven_pairs": True},
        {"pinghu": 1, "qidui": 3, "dianpao": 1},
        [0, -16, 0, 16],
    ),
    (
        "haohua_qidui_on_the_fourth_copy",
        "111m99m11p99p11s99s",
        "1m",
        "draw",
        {"allow_seven_pairs": True},
        {"pinghu": 1, "zimo": 1, "haohua_qidui": 4},
        [-32, -32, -32, 96],
    ),
    (
        "qidui_holding_four_won_on_another_tile",
        "1111m99m11p99p11s9s",
        "9s",
        "draw",
        {"allow_seven_pairs": True},
        {"pinghu": 1, "zimo": 1, "qidui": 3},
        [-16, -16, -16, 48],
    ),
    (
        "fan_cap_config",
        "1234m789p789s222z",
        "4m",
        "draw",
        {"fan_cap": 2},
        {"pinghu": 1, "zimo": 1, "lihu": 1, "jiahu": 1},
        [-2, -2, -2, 6],
    ),
]


def _win_for_player_3(hand: str, tile: str, by: str, **cfg):
    env = cc([None, None, None, hand], wall=(tile + "4z" + tile) if by == "discard" else "4z4z" + tile, dealer=0, **cfg)
    act(env, f"player_0: discard {safe_discard(env, 0, hand)}")
    if by == "discard":
        act(env, f"player_1: discard {tile}")
    else:
        tsumogiri(env, 1)
        tsumogiri(env, 2)
        assert view(env, 3)["drawn"] == tile
    assert env.agent_selection == "player_3" and "win" in legal(env)
    rewards = act(env, "player_3: win")
    return env, rewards


@pytest.mark.parametrize("case,hand,tile,by,cfg,expected_fans,deltas", C10_CASES, ids=[c[0] for c in C10_CASES])
def test_c10_fans_and_points(case, hand, tile, by, cfg, expected_fans, deltas):
    # C10: F = 平胡 1 + additions; each payer pays 2^(F-1) (C11: only the discarder on a
    # discard, all three on a self-draw); C7: no ready declaration needed
    env, rewards = _win_for_player_3(hand, tile, by, **cfg)
    res = result(env)
    assert res["outcome"] == "win" and res["winner"] == 3
    assert res["method"] == ("discard" if by == "discard" else "self_draw") and res["tile"] == tile
    assert fans(res) == expected_fans
    assert res["total_fan"] == min(sum(expected_fans.values()), cfg.get("fan_cap", 7))
    assert res["deltas"] == deltas and res["kong_deltas"] == [0, 0, 0, 0]
    assert rewards_list(rewards) == deltas
    for p in res["payments"]:
        assert p["to"] == 3 and p["points"] == 2 ** (res["total_fan"] - 1)


def test_c10_jiahu_dutting_only_one_winning_tile():
    # C10 独听: after the pong of 6m, 45m waits only on 3m (6m would be the fifth: 空听, R8);
    # the win on 3m is 夹胡 though 345m is a two-sided shape
    hand = "66m45m567m789p11s2z"
    env = cc([None, None, None, hand], wall="4z6m4z3m", dealer=0)
    act(env, f"player_0: discard {safe_discard(env, 0, hand)}")
    tsumogiri(env, 1)
    tsumogiri(env, 2)  # 6m
    assert env.agent_selection == "player_3" and "pong" in legal(env)
    play(env, "player_3: pong", "player_3: discard 2z")
    tsumogiri(env, 0)
    act(env, "player_1: discard 3m")
    act(env, "player_3: win")
    assert fans(result(env)) == {"pinghu": 1, "jiahu": 1, "dianpao": 1}
    assert result(env)["deltas"] == [0, -4, 0, 4]


def test_c10_zhuanghu_dealer_wins():
    # C10 庄胡 +1 when the winner is the dealer
    hand = "45m123p789s222z99p"
    env = cc([None, None, None, hand + "4z"], wall="3m", dealer=3)
    act(env, "player_3: discard 4z")
    act(env, "player_0: discard 3m")
    assert env.agent_selection == "player_3" and legal(env) == {"win", "pass"}
    act(env, "player_3: win")
    res = result(env)
    assert fans(res) == {"pinghu": 1, "zhuanghu": 1, "lihu": 1, "dianpao": 1}
    assert res["deltas"] == [-8, 0, 0, 8]


def test_c10_c9_piaohu_with_special_groups_and_one_tile_left():
    # C5 special groups count as triplets for 飘胡; C9.4 手把一: one concealed tile wins as 飘胡;
    # no 立胡 (the groups are kongs); the groups paid 3 × 3 points when declared (C12)
    hand = "567z1m1p1s9m9p9s22z5s8p"
    env = cc([None, None, None, hand], wall="4z4z3s3s3s2z4z5s", dealer=0)
    act(env, f"player_0: discard {safe_discard(env, 0, hand)}")
    tsumogiri(env, 1)
    tsumogiri(env, 2)
    play(env, "player_3: special_dragons", "player_3: special_ones", "player_3: special_nines")
    act(env, "player_3: discard 3s")
    assert view(env, 3)["hand"] == "8p5s22z"
    tsumogiri(env, 0)
    tsumogiri(env, 1)
    act(env, "player_2: discard 2z")
    assert legal(env) == {"pong", "pass"}
    play(env, "player_3: pong", "player_3: discard 8p")
    assert view(env, 3)["hand"] == "5s"
    tsumogiri(env, 0)
    act(env, "player_1: discard 5s")
    assert legal(env) == {"win", "pass"}
    act(env, "player_3: win")
    res = result(env)
    assert fans(res) == {"pinghu": 1, "piaohu": 2, "dianpao": 1}
    assert res["deltas"] == [0, -8, 0, 8] and res["kong_deltas"] == [-3, -3, -3, 9]


@pytest.mark.parametrize("cap,points", [(7, 64), (5, 16)])
def test_c10_fan_cap(cap, points):
    # C10: 对宝 on a closed 13m (closed wait): 1 + 自摸 1 + 宝牌 2 + 对宝 2 + 立胡 1 + 夹胡 1 = 8,
    # capped at fan_cap (default 7 = 64 points)
    env = bao_deal("13m123p789s777z99p", head="7m", indicator="2m", dice=[5], fan_cap=cap)
    act(env, "player_0: discard 9m")
    play(env, "player_1: ready 7m", "player_1: view_bao", "player_1: win")
    res = result(env)
    assert fans(res) == {"pinghu": 1, "zimo": 1, "mobao": 2, "duibao": 2, "lihu": 1, "jiahu": 1}
    assert res["total_fan"] == cap
    assert res["deltas"] == [-points, 3 * points, -points, -points]


# ------------------------------------------------------------------------------------------- C11


C11_HAND = "45m123p789s222z99p"  # closed, waits 3m 6m: 平胡 1 + 立胡 1 = 2 fan before 点炮/自摸


@pytest.mark.parametrize(
    "cfg,by,deltas,payer_fans",
    [
        ({}, "discard", [0, -4, 0, 4], None),
        ({"discard_all_pay": True}, "discard", [-2, -4, -2, 8], [2, 3, 2, None]),
        ({"unready_discarder_pays_all": True}, "discard", [0, -4, 0, 4], None),
        ({"discard_all_pay": True, "unready_discarder_pays_all": True}, "discard", [0, -8, 0, 8], [2, 3, 2, None]),
        ({}, "draw", [-4, -4, -4, 12], None),
        ({"dealer_pays_extra": True}, "draw", [-8, -4, -4, 16], [4, 3, 3, None]),
        ({"discard_all_pay": True, "unready_discarder_pays_all": True}, "draw", [-4, -4, -4, 12], None),
    ],
    ids=[
        "discarder_only",
        "discard_all_pay",
        "baozhuang_alone_changes_nothing",
        "baozhuang_unready_discarder",
        "self_draw_all_pay",
        "dealer_pays_extra",
        "baozhuang_not_on_self_draw",
    ],
)
def test_c11_settlement(cfg, by, deltas, payer_fans):
    # C11: a discard win is paid by the discarder alone (点炮 +1 in its fan); MIL flags:
    # discard_all_pay, dealer_pays_extra (庄 +1 for a dealer payer), unready_discarder_pays_all
    env, rewards = _win_for_player_3(C11_HAND, "3m", by, **cfg)
    res = result(env)
    assert res["deltas"] == deltas and rewards_list(rewards) == deltas
    assert res.get("payer_fans") == payer_fans
    assert res["total_fan"] == (max(f for f in payer_fans if f is not None) if payer_fans else 3)
    if by == "discard" and not cfg.get("discard_all_pay"):
        assert [(p["from"], p["to"]) for p in res["payments"]] == [(1, 3)]


@pytest.mark.parametrize("viewed,deltas", [(True, [-2, -4, -2, 8]), (False, [0, -8, 0, 8])])
def test_c11_baozhuang_spares_a_ready_discarder_that_saw_the_bao(viewed, deltas):
    # C11 包庄 (MIL): only a discarder that is not ready, or has not seen the bao, pays all
    hands = [CC_DEALER, WAIT_1Z_4Z, IDLE[0], C11_HAND]
    env = cc(
        hands,
        wall=wall_with(hands, "5s1s4s7p3m", "", {indicator_index(5): "8m"}),
        dice=[5],
        discard_all_pay=True,
        unready_discarder_pays_all=True,
    )
    act(env, "player_0: discard 9m")
    play(env, "player_1: ready 5s", "player_1: view_bao" if viewed else "player_1: pass")
    for seat in (2, 3, 0):
        tsumogiri(env, seat)
    if not viewed:
        act(env, "player_1: pass")
    act(env, "player_1: discard 3m")
    act(env, "player_3: win")
    assert result(env)["deltas"] == deltas


def test_c11_robbed_added_kong_konger_pays_as_discarder():
    # C11: 抢杠 of an ordinary added kong: the konger pays as a discarder (点炮 +1); the kong
    # does not stand and pays nothing (C12)
    hands = ["147m58p2589s13467z", "369m559p1478s256z", None, "123m67p789s222z99m"]
    env = cc(hands, wall="1z1z1z5p")
    act(env, "player_0: discard 5p")
    act(env, "player_3: pass")  # 过手胡 (R8) until its next draw
    assert legal(env) == {"pong", "pass"}
    play(env, "player_1: pong", "player_1: discard 5z")
    for seat in (2, 3, 0):
        tsumogiri(env, seat)
    assert view(env, 1)["drawn"] == "5p" and "added_kong 5p" in legal(env)
    assert rewards_list(act(env, "player_1: added_kong 5p")) == [0, 0, 0, 0]
    assert env.agent_selection == "player_3" and phase(env) == "rob" and legal(env) == {"win", "pass"}
    act(env, "player_3: win")
    res = result(env)
    assert res["method"] == "rob_kong" and res["tile"] == "5p"
    assert fans(res) == {"pinghu": 1, "lihu": 1, "dianpao": 1}
    assert res["deltas"] == [0, -4, 0, 4] and res["kong_deltas"] == [0, 0, 0, 0]


def test_c11_baozhuang_spares_a_ready_discarder_when_the_rolls_ran_out():
    # C11 as amended: with no bao left (max_bao_rolls spent), a ready discarder is not covered
    # by unready_discarder_pays_all: each payer pays its own share (discard_all_pay)
    others = (IDLE[0], "13m123p789s222z55s")  # player_3 waits on 2m (夹胡)
    env = bao_deal(
        WAIT_1Z_4Z,
        head="9p7p7p7p2m",
        indicator="7p",
        dice=[5, 5],
        others=others,
        max_bao_rolls=2,
        discard_all_pay=True,
        unready_discarder_pays_all=True,
    )
    act(env, "player_0: discard 9m")
    play(env, "player_1: ready 9p", "player_1: view_bao")
    for seat in (2, 3, 0):
        tsumogiri(env, seat)
    assert env.game.bao is None and view(env, 1)["drawn"] == "2m"
    act(env, "player_1: discard 2m")
    act(env, "player_3: win")
    res = result(env)
    assert fans(res) == {"pinghu": 1, "lihu": 1, "jiahu": 1, "dianpao": 1}
    assert res["deltas"] == [-4, -8, -4, 16]


# ------------------------------------------------------------------------------------------- C12


BIG_EGGS = {"1s", "1p", "5z", "6z", "7z"}


C12_TILES = ["2m", "1m", "9p", "1s", "1p", "5z", "6z", "7z"]


@pytest.mark.parametrize("tile", C12_TILES)
def test_c12_concealed_kong_pays_two_or_four(tile):
    # C12: concealed kong 2 from each other player; 大蛋 (1s 1p 5z 6z 7z) 4
    env = cc([tile[0] * 4 + tile[1] + KONG_BASE, None, None, None], dealer=0)
    each = 4 if tile in BIG_EGGS else 2
    assert rewards_list(act(env, f"player_0: concealed_kong {tile}")) == [3 * each, -each, -each, -each]


@pytest.mark.parametrize("tile", C12_TILES)
def test_c12_exposed_kong_pays_one_or_two_from_each(tile):
    # C12: an exposed kong is paid by each of the other three (not only the discarder): 1, 大蛋 2
    env = cc([None, None, None, tile[0] * 3 + tile[1] + KONG_BASE], wall=tile, dealer=0)
    act(env, f"player_0: discard {safe_discard(env, 0, tile + KONG_BASE)}")
    act(env, f"player_1: discard {tile}")
    assert env.agent_selection == "player_3" and legal(env) == {"pong", "kong", "pass"}
    each = 2 if tile in BIG_EGGS else 1
    assert rewards_list(act(env, "player_3: kong")) == [-each, -each, -each, 3 * each]


@pytest.mark.parametrize("tile", C12_TILES)
def test_c12_added_kong_pays_one_or_two_from_each(tile):
    env = cc([None, None, None, tile[0] * 2 + tile[1] + KONG_BASE + "1z"], wall=tile + "6s6s6s" + tile, dealer=0)
    act(env, f"player_0: discard {safe_discard(env, 0, tile + KONG_BASE + '1z')}")
    act(env, f"player_1: discard {tile}")
    play(env, "player_3: pong", "player_3: discard 1z")
    for seat in (0, 1, 2):
        tsumogiri(env, seat)
    assert view(env, 3)["drawn"] == tile
    each = 2 if tile in BIG_EGGS else 1
    assert rewards_list(act(env, f"player_3: added_kong {tile}")) == [-each, -each, -each, 3 * each]
