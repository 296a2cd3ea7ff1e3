"""Changchun scenario tests of the MIL 2024 profile's fields (RULES.md C14), each off by default
(the seed) and on in ``profile="mil2024"``.

Every scenario builds its deal by hand in tile notation (`scenario.deal`, `scenario.cc`: the
dealer is the seat dealt 14 tiles, seat 0 unless said otherwise; ``wall`` is the head in draw
order and ``tail`` the replacement draws in the order taken), plays actions by name and checks
the legal action names, the step rewards and ``info["result"]``. Expectations come from
RULES.md, not from the engine.

Seats move 0 → 1 → 2 → 3 (R2). ``IDLE`` hands (`scenario.IDLE`) hold no pair and no two tiles
within a chow's reach, so a seat holding one never claims anything and never wins.
"""

from __future__ import annotations

import numpy as np
import pytest
from scenario import (
    CC_DEALER,
    IDLE,
    KONG_BASE,
    SPECIALS,
    WAIT_1Z_4Z,
    XIGANG_WAIT_3M_6M,
    act,
    bao_deal,
    cc,
    fans,
    fill_hands,
    indicator_index,
    legal,
    phase,
    play,
    result,
    rewards_list,
    run_until,
    safe_discard,
    step_on,
    totals,
    tsumogiri,
    view,
    wall_with,
)

from mahjong_env import actions as A
from mahjong_env.tiles import parse_tiles, tile_index

# ------------------------------------------------------------------------------------------- C14


def test_c14_xuanfeng_three_winds_declared_then_the_fourth_added():
    # C14 xuanfeng_three_winds: 1z2z3z dealt make a 3-tile 旋风杠 (no replacement, C5); the
    # drawn 4z is no dealt tile but joins it as an addition on the first turn (C6), which stands
    # unrobbed and draws a replacement
    hands = [CC_DEALER, "258m369p147s1235z", IDLE[1], IDLE[2]]
    env = cc(hands, wall="4z", tail="8m")
    act(env, "player_0: discard 9m")
    assert view(env, 1)["drawn"] == "4z" and "special_winds" not in legal(env)  # the seed: four winds
    env = cc(hands, wall="4z", tail="8m", xuanfeng_three_winds=True)
    act(env, "player_0: discard 9m")
    assert "special_winds" in legal(env)
    assert rewards_list(act(env, "player_1: special_winds")) == [-1, 3, -1, -1]
    v = view(env, 1)
    assert v["melds"][1] == [{"kind": "special_winds", "tiles": "123z", "from": None}]
    assert v["drawn"] == "4z" and v["wall_remaining"] == 82 and v["concealed_counts"][1] == 11
    assert "special_add 4z" in legal(env)
    assert rewards_list(act(env, "player_1: special_add 4z")) == [-1, 3, -1, -1]
    v = view(env, 1)
    assert v["melds"][1][0]["tiles"] == "1234z" and v["drawn"] == "8m" and v["wall_remaining"] == 81


FOUR_WINDS_DEALER = "1234z258m369p258s7z"  # four winds; no other group, even with a 1s standing in
FOUR_WINDS_ROBBER = "123m456p789s555s4z"  # waits on 4z alone (单吊): 平胡 立胡 夹胡


def _four_winds_dealer(others: list[str | None], **kwargs):
    """mil2024: the dealer, dealt four winds, declares 旋风杠 with three of them and discards
    its 7z; the others discard what they draw (1p 1p 1p), and the dealer draws 9s."""
    env = cc([FOUR_WINDS_DEALER, *others], wall="1p1p1p9s", dealer=0, profile="mil2024", **kwargs)
    assert "special_winds" in legal(env)
    assert rewards_list(act(env, "player_0: special_winds")) == [3, -1, -1, -1]  # C12: 1 from each
    v = view(env, 0)
    assert v["melds"][0] == [{"kind": "special_winds", "tiles": "123z", "from": None}]
    assert v["drawn"] is None and v["wall_remaining"] == 83 and v["concealed_counts"][0] == 11  # no replacement
    names = legal(env)
    assert "discard 4z" in names and not any(n.startswith("special") for n in names)  # C6: not on its first turn
    act(env, "player_0: discard 7z")
    for seat in (1, 2, 3):
        tsumogiri(env, seat)
    assert env.agent_selection == "player_0" and view(env, 0)["drawn"] == "9s"
    assert "special_add 4z" in legal(env)  # C6: on a later turn, any held wind
    return env


def test_c14_xuanfeng_three_winds_dealer_adds_the_fourth_on_a_later_turn():
    # C14 xuanfeng_three_winds (as amended): four winds dealt make a 3-tile 旋风杠 (no
    # replacement, C5) and the fourth an addition (C6: not on the dealer's first turn; one point
    # from each, then a replacement), so they pay 2 from each, never 1
    env = _four_winds_dealer([None, None, None], tail="8m")
    assert rewards_list(act(env, "player_0: special_add 4z")) == [3, -1, -1, -1]  # nobody may rob: it stands
    v = view(env, 0)
    assert v["melds"][0][0]["tiles"] == "1234z" and v["drawn"] == "8m" and v["wall_remaining"] == 78
    assert env.agent_selection == "player_0" and phase(env) == "turn"
    assert totals(env) == {"player_0": 6, "player_1": -2, "player_2": -2, "player_3": -2}


def test_c14_xuanfeng_three_winds_dealer_addition_robbed_by_a_win():
    # C6 抢胡 on the dealer's later addition of its fourth wind: only the declaration was paid;
    # the robbed dealer pays as a discarder (C11 mil2024: all three pay, 点炮 +1 and 庄 +1 in the
    # dealer's fan, and 包庄 since it is not ready: 16 + 4 + 4)
    env = _four_winds_dealer([None, FOUR_WINDS_ROBBER, None])
    assert rewards_list(act(env, "player_0: special_add 4z")) == [0, 0, 0, 0]
    assert env.agent_selection == "player_2" and phase(env) == "rob" and legal(env) == {"win", "pass"}
    act(env, "player_2: win")
    res = result(env)
    assert res["winner"] == 2 and res["method"] == "rob_kong" and res["tile"] == "4z"
    assert fans(res) == {"pinghu": 1, "lihu": 1, "jiahu": 1, "dianpao": 1}
    assert res["payer_fans"] == [5, 3, None, 3] and res["total_fan"] == 5
    assert res["deltas"] == [-24, 0, 24, 0] and res["kong_deltas"] == [3, -1, -1, -1]
    assert [p["reason"] for p in res["payments"]] == ["kong", "kong", "kong", "baozhuang"]


def test_c14_xuanfeng_three_winds_dealer_addition_robbed_by_a_pong():
    # C6 抢叉: player_3 pongs the added 4z as if the dealer had discarded it; the addition does
    # not count and pays nothing; play goes on from player_3
    env = _four_winds_dealer([None, None, "147m258p369s44z56z"])
    act(env, "player_0: special_add 4z")
    assert env.agent_selection == "player_3" and phase(env) == "rob" and legal(env) == {"pong", "pass"}
    assert rewards_list(act(env, "player_3: pong")) == [0, 0, 0, 0]
    v = view(env, 3)
    assert v["melds"][3] == [{"kind": "pong", "tiles": "444z", "from": 0}]
    assert v["melds"][0] == [{"kind": "special_winds", "tiles": "123z", "from": None}]
    assert v["concealed_counts"][0] == 10 and v["wall_remaining"] == 79
    assert env.agent_selection == "player_3" and phase(env) == "turn"
    assert totals(env) == {"player_0": 3, "player_1": -1, "player_2": -1, "player_3": -1}


@pytest.mark.parametrize(
    "hand,winds,added",
    [("1234z258m369p258s", "1234z", ["4z"]), ("11234z258m369p58s", "11234z", ["1z", "4z"])],
    ids=["four", "five"],
)
def test_c14_xuanfeng_three_winds_non_dealer_adds_on_its_first_turn(hand, winds, added):
    # C14/C6: a non-dealer dealt four winds (or five) declares three after its first draw and
    # adds the others on that first turn: unrobbed (player_2, waiting on 4z, is not asked),
    # 1 from each per addition, a replacement after each
    env = cc([CC_DEALER, hand, FOUR_WINDS_ROBBER, None], wall="7m", tail="8p8s", profile="mil2024")
    act(env, "player_0: discard 9m")
    assert env.agent_selection == "player_1" and view(env, 1)["drawn"] == "7m"
    assert rewards_list(act(env, "player_1: special_winds")) == [-1, 3, -1, -1]
    v = view(env, 1)
    assert v["melds"][1] == [{"kind": "special_winds", "tiles": "123z", "from": None}]
    assert v["drawn"] == "7m" and v["wall_remaining"] == 82
    for n, wind in enumerate(added):
        assert f"special_add {wind}" in legal(env)
        assert rewards_list(act(env, f"player_1: special_add {wind}")) == [-1, 3, -1, -1]
        assert env.agent_selection == "player_1" and phase(env) == "turn"
        assert view(env, 1)["drawn"] == "8p8s"[2 * n : 2 * n + 2] and view(env, 1)["wall_remaining"] == 81 - n
    assert sorted(parse_tiles(view(env, 1)["melds"][1][0]["tiles"])) == sorted(parse_tiles(winds))
    each = 1 + len(added)
    assert totals(env) == {"player_0": -each, "player_1": 3 * each, "player_2": -each, "player_3": -each}


def test_c14_xuanfeng_three_winds_non_dealer_addition_robbed_after_its_first_turn():
    # C6: kept in hand past the first turn, the fourth wind's addition can be robbed; player_1
    # pays as a discarder (C11 mil2024: 点炮 +1 for it, 庄 +1 for the dealer, 包庄: 8 + 8 + 4)
    hand = "1234z258m369p258s"
    env = cc([CC_DEALER, hand, FOUR_WINDS_ROBBER, None], wall="7m1p9m1p9s", profile="mil2024")
    act(env, "player_0: discard 9m")
    act(env, "player_1: special_winds")
    act(env, "player_1: discard 7m")
    for seat in (2, 3, 0):
        tsumogiri(env, seat)
    assert env.agent_selection == "player_1" and view(env, 1)["drawn"] == "9s"
    assert rewards_list(act(env, "player_1: special_add 4z")) == [0, 0, 0, 0]
    assert env.agent_selection == "player_2" and phase(env) == "rob" and legal(env) == {"win", "pass"}
    act(env, "player_2: win")
    res = result(env)
    assert res["method"] == "rob_kong" and res["tile"] == "4z"
    assert res["payer_fans"] == [4, 4, None, 3]
    assert res["deltas"] == [0, -20, 20, 0] and res["kong_deltas"] == [-1, 3, -1, -1]


YAOJI_HAND = "23589m369p147s56z"  # dealt: 5z 6z (喜杠 without 7z), 9m 9p (九蛋 without 9s), one 1s


@pytest.mark.parametrize("wild", [False, True])
def test_c14_yaoji_wild_stands_in_and_is_added_to_any_group(wild):
    # C14 yaoji_wild (小鸡飞蛋): the dealt 1s completes one group (5z6z+1s: a 喜杠); the drawn
    # 1s is no dealt tile, so it completes no second group, but it may be added to a declared
    # one; it is a 1s in the meld (C9, C12: an addition pays 1 from each)
    hands = [CC_DEALER, YAOJI_HAND, IDLE[1], IDLE[2]]
    env = cc(hands, wall="1s", tail="8m", yaoji_wild=wild)
    act(env, "player_0: discard 9m")
    assert view(env, 1)["drawn"] == "1s"
    names = legal(env)
    if not wild:
        assert not names & SPECIALS and not any(n.startswith("special_add") for n in names)
        return
    assert names & SPECIALS == {"special_dragons", "special_nines"}
    assert rewards_list(act(env, "player_1: special_dragons")) == [-1, 3, -1, -1]
    assert view(env, 1)["melds"][1] == [{"kind": "special_dragons", "tiles": "56z1s", "from": None}]
    names = legal(env)
    assert "special_nines" not in names  # the dealt 1s is spent; the drawn one does not count (C5)
    assert "special_add 1s" in names
    assert rewards_list(act(env, "player_1: special_add 1s")) == [-1, 3, -1, -1]
    v = view(env, 1)
    assert v["melds"][1][0]["tiles"] == "56z11s" and v["drawn"] == "8m"


def test_c14_yaoji_addition_robbed_as_a_1s():
    # C14: a 1s added on a later turn can be robbed by a player waiting on 1s (C6 抢胡)
    hands = [CC_DEALER, YAOJI_HAND, IDLE[1], "23s123m789p222z88s"]
    env = cc(hands, wall="4z5z7z1z1s", yaoji_wild=True)
    act(env, "player_0: discard 9m")
    act(env, "player_1: special_dragons")
    act(env, "player_1: discard 4z")
    for seat in (2, 3, 0):
        tsumogiri(env, seat)
    assert view(env, 1)["drawn"] == "1s" and "special_add 1s" in legal(env)
    act(env, "player_1: special_add 1s")
    assert env.agent_selection == "player_3" and phase(env) == "rob" and legal(env) == {"win", "pass"}
    act(env, "player_3: win")
    res = result(env)
    assert res["method"] == "rob_kong" and res["tile"] == "1s" and res["winner"] == 3


CLAIMED_FIRST = "258m99p147s11234z"  # pongs 9p, then declares 旋风杠 and could add its second 1z


@pytest.mark.parametrize("no_add", [False, True])
def test_c14_claimed_first_turn_no_add(no_add):
    # C14 claimed_first_turn_no_add: a first turn entered by a pong may declare (and draw the
    # 旋风杠's replacement) but add nothing, even after the replacement draw
    env = cc([CC_DEALER, CLAIMED_FIRST, IDLE[1], IDLE[2]], tail="8m", claimed_first_turn_no_add=no_add)
    act(env, "player_0: discard 9p")
    assert legal(env) == {"pong", "pass"}
    act(env, "player_1: pong")
    assert "special_winds" in legal(env)
    act(env, "player_1: special_winds")
    assert view(env, 1)["drawn"] == "8m" and phase(env) == "turn"
    assert ("special_add 1z" in legal(env)) is not no_add


def test_c14_claimed_first_turn_no_add_spares_a_drawn_first_turn():
    # C14: the restriction is only for a first turn entered by a claim
    hands = ["3569m369p34s13456z", "258m69p147s11234z", IDLE[1], IDLE[2]]
    env = cc(hands, wall="7m", tail="8m", claimed_first_turn_no_add=True)
    act(env, "player_0: discard 9m")
    act(env, "player_1: special_winds")
    assert "special_add 1z" in legal(env)


READY_NO_TERMINAL = "23m345p666p567s88s9s"  # ready 9s leaves 23m345p666p567s88s: waits 1m only


@pytest.mark.parametrize("needs_terminal", [False, True])
def test_c14_ready_needs_terminal(needs_terminal):
    # C14 ready_needs_terminal (MIL 七-1-3): no `ready 9s` when the 13 tiles left hold no 1, 9 or
    # honor; the hand still wins on 1m without declaring (C7)
    env = cc([READY_NO_TERMINAL, IDLE[0], IDLE[1], IDLE[2]], wall="1m", ready_needs_terminal=needs_terminal)
    names = legal(env)
    assert "discard 9s" in names
    assert ("ready 9s" in names) is not needs_terminal
    mask = env.observe("player_0")["action_mask"]
    assert {n for n in names} == {A.action_name(i) for i in np.flatnonzero(mask)}
    act(env, "player_0: discard 9s")
    act(env, "player_1: discard 1m")
    assert env.agent_selection == "player_0" and legal(env) == {"win", "pass"}


def test_c14_ready_needs_terminal_counts_the_melds():
    # C14: a 1, 9 or honor among the melds is enough: after the pong of 9p, `ready 4s` leaves
    # 23m345p567s88s (no terminal) + 999p, waiting on 1m and 4m
    env = cc([CC_DEALER, "99p23m345p567s88s4s", IDLE[1], IDLE[2]], ready_needs_terminal=True)
    act(env, "player_0: discard 9p")
    assert legal(env) == {"pong", "pass"}
    act(env, "player_1: pong")
    assert "ready 4s" in legal(env)


PASS_BY_FAN = "12345m789p111s55z"  # waits 3m (夹胡: 4 fan for the discarder) and 6m (3 fan)


@pytest.mark.parametrize(
    "first,second,by_fan,offered",
    [("6m", "3m", False, True), ("3m", "6m", False, True), ("6m", "3m", True, True), ("3m", "6m", True, False)],
    ids=["kind_lock_higher", "kind_lock_lower", "by_fan_higher_still_offered", "by_fan_lower_blocked"],
)
def test_c14_passed_win_lock_by_fan(first, second, by_fan, offered):
    # R8 blocks only the passed kind; C14 passed_win_lock_by_fan (MIL 十一-11-2) also blocks
    # every claim win no higher for the discarder than the passed one, until the next draw
    env = cc(
        [None, None, None, PASS_BY_FAN], wall=first + second + "4z" + second, dealer=0, passed_win_lock_by_fan=by_fan
    )
    act(env, f"player_0: discard {safe_discard(env, 0, PASS_BY_FAN)}")
    act(env, f"player_1: discard {first}")
    assert env.agent_selection == "player_3" and legal(env) == {"win", "pass"}
    act(env, "player_3: pass")
    act(env, f"player_2: discard {second}")
    assert env.agent_selection == "player_3" and phase(env) == "claim"  # it may chow player_2's tile
    assert ("win" in legal(env)) == offered
    mask = env.observe("player_3")["action_mask"]
    assert legal(env) == {A.action_name(i) for i in np.flatnonzero(mask)}
    act(env, "player_3: pass")
    assert env.agent_selection == "player_3" and phase(env) == "turn" and view(env, 3)["drawn"] == "4z"
    tsumogiri(env, 3)  # the draw ended the lock
    act(env, f"player_0: discard {second}")
    assert env.agent_selection == "player_3" and legal(env) == {"win", "pass"}


def _run_to_phase(env, wanted: str, max_steps: int = 400) -> None:
    for _ in range(max_steps):
        if phase(env) == wanted:
            return
        step_on(env)
    raise AssertionError(f"phase {wanted} never reached")


@pytest.mark.parametrize("final_draws", [0, 4])
def test_c14_final_draws_win_or_pass_no_discard(final_draws):
    # C14 final_draws (MIL 五-7): with 18 tiles left (nine stacks) the next four draws are made
    # like X4's 分张 by seats 2, 3, 0, 1 (the 66th head draw onward): win (a self-draw) or pass,
    # no discard; the tile stays; then the hand is drawn with 14 tiles left (C13)
    hand = "45m123p789s222z99p"  # waits 3m 6m
    hands = fill_hands([None, None, None, hand], "6m", dealer=0)
    env = cc(hands, wall=wall_with(hands, "", "", {66: "6m"}), dealer=0, final_draws=final_draws)
    for _ in range(400):
        if env.agent_selection == "player_3" and view(env, 3)["wall_remaining"] <= 16:
            break
        step_on(env)
    assert view(env, 3)["wall_remaining"] == 16 and view(env, 3)["drawn"] == "6m"
    if not final_draws:
        assert phase(env) == "turn" and {"win", "discard 6m"} <= legal(env)
        return
    assert phase(env) == "fenzhang" and legal(env) == {"win", "pass"}
    assert view(env, 2)["concealed_counts"][2] == 14  # player_2's final draw stays in its hand
    for seat in (0, 1, 2):  # R13: a private decision; the others see phase turn, no one to move
        v = view(env, seat)
        assert v["phase"] == "turn" and v["claim"] is None and "to_move" not in v
    act(env, "player_3: pass")
    assert all(env.terminations.values())
    res = result(env)
    assert res["outcome"] == "draw" and view(env, 0)["wall_remaining"] == 14
    assert view(env, 0)["concealed_counts"] == [14, 14, 14, 14]


def test_c14_final_draw_win_is_a_self_draw():
    hand = "45m123p789s222z99p"
    hands = fill_hands([None, None, None, hand], "6m", dealer=0)
    env = cc(hands, wall=wall_with(hands, "", "", {66: "6m"}), dealer=0, final_draws=4)
    _run_to_phase(env, "fenzhang")
    act(env, "player_3: win")
    res = result(env)
    assert res["method"] == "self_draw" and res["tile"] == "6m"
    assert fans(res) == {"pinghu": 1, "zimo": 1, "lihu": 1} and res["deltas"] == [-4, -4, -4, 12]


@pytest.mark.parametrize("final_draws,first", [(0, 66), (4, 62)])
def test_c14_final_draws_reserve_for_kongs(final_draws, first):
    # C13/C14: a kong needs n >= 14 + final_draws + (k mod 2) after its replacement draw
    hands = fill_hands(["333p147m258s9s1356z", None, None, "222m" + KONG_BASE], "2m3p", dealer=0)
    wall = wall_with(hands, "", "", {first: "2m", first + 1: "3p"})
    env = cc(hands, wall=wall, dealer=0, final_draws=final_draws)
    for _ in range(400):
        if env.agent_selection == "player_3" and phase(env) == "turn" and view(env, 3)["drawn"] == "2m":
            break
        step_on(env)
    assert view(env, 3)["wall_remaining"] == 16 + final_draws
    assert "concealed_kong 2m" in legal(env)
    tsumogiri(env, 3)
    run_until(env, 0)
    assert view(env, 0)["drawn"] == "3p" and view(env, 0)["wall_remaining"] == 15 + final_draws
    assert "concealed_kong 3p" not in legal(env)


def test_c14_bao_roll_at_next_turn():
    # C14 bao_roll_at_next_turn (MIL 三-24): player_1's declaration rolls nothing; player_3,
    # declaring in between, is offered no view; the roll comes at player_1's next turn before
    # its draw (the same stack from the tail: index 73), then the view offers of C8 follow
    hands = [CC_DEALER, WAIT_1Z_4Z, IDLE[0], "123m789p789s777z5s"]
    env = cc(
        hands, wall=wall_with(hands, "9p7m2z1s3p", "", {indicator_index(5): "8m"}), dice=[5], bao_roll_at_next_turn=True
    )
    act(env, "player_0: discard 9m")
    act(env, "player_1: ready 9p")
    assert env.agent_selection == "player_2" and phase(env) == "turn" and view(env, 2)["dice"] == []
    tsumogiri(env, 2)
    act(env, "player_3: ready 2z")
    assert env.agent_selection == "player_0" and env.game.bao is None
    tsumogiri(env, 0)
    assert env.agent_selection == "player_1" and phase(env) == "bao_view"
    assert view(env, 1)["dice"] == [5] and view(env, 1)["drawn"] is None
    assert env.game.wall.gap == 73 and env.game.bao == tile_index("8m")
    act(env, "player_1: view_bao")
    assert view(env, 1)["bao"] == "8m" and view(env, 1)["drawn"] == "3p"
    tsumogiri(env, 1)
    tsumogiri(env, 2)
    assert env.agent_selection == "player_3" and phase(env) == "bao_view"


@pytest.mark.parametrize("mobao_fan,duibao_fan,total", [(2, 2, 6), (1, 1, 4)])
def test_c14_mobao_and_duibao_fans(mobao_fan, duibao_fan, total):
    # C10/C14: 宝牌 and 对宝 fans are fields (MIL 1 and 1: 冲宝 2 and 摸宝 1 over 自摸)
    env = bao_deal(XIGANG_WAIT_3M_6M, head="7m", indicator="3m", dice=[5], mobao_fan=mobao_fan, duibao_fan=duibao_fan)
    act(env, "player_0: discard 9m")
    play(env, "player_1: special_dragons", "player_1: ready 7m", "player_1: view_bao", "player_1: win")
    res = result(env)
    assert fans(res) == {"pinghu": 1, "zimo": 1, "mobao": mobao_fan, "duibao": duibao_fan}
    points = 2 ** (total - 1)
    assert res["total_fan"] == total and res["deltas"] == [-points, 3 * points, -points, -points]


def test_c14_final_draw_of_the_seen_bao_is_a_bao_win():
    # C14 final_draws with C8 摸宝: player_1 (ready, bao 8m seen) makes the fourth final draw
    # (index 68) and draws an 8m: win (bao_draw) or pass, no discard
    hands = [CC_DEALER, WAIT_1Z_4Z, IDLE[0], IDLE[2]]
    env = cc(hands, wall=wall_with(hands, "9p", "", {indicator_index(5): "8m", 68: "8m"}), dice=[5], final_draws=4)
    act(env, "player_0: discard 9m")
    play(env, "player_1: ready 9p", "player_1: view_bao")
    assert view(env, 1)["bao"] == "8m"
    for _ in range(400):
        if phase(env) == "fenzhang" or all(env.terminations.values()):
            break
        step_on(env)
    assert env.agent_selection == "player_1" and view(env, 1)["drawn"] == "8m"
    assert legal(env) == {"win", "pass"} and view(env, 1)["wall_remaining"] == 13  # the indicator set aside
    act(env, "player_1: win")
    res = result(env)
    assert res["method"] == "bao_draw" and fans(res) == {"pinghu": 1, "zimo": 1, "mobao": 2, "lihu": 1}


def test_c14_bao_roll_at_next_turn_entered_by_a_kong_on_a_discard():
    # C14: the declarer's next turn begins with its exposed kong of player_0's 2m (C7: same
    # waits): the dice are rolled then, before the replacement draw; the view comes at the
    # start of its next turn with an ordinary draw (C8 b)
    hands = [CC_DEALER, WAIT_1Z_4Z, IDLE[0], IDLE[2]]
    env = cc(
        hands, wall=wall_with(hands, "9p7m8p2m", "9s", {indicator_index(5): "8m"}), dice=[5], bao_roll_at_next_turn=True
    )
    act(env, "player_0: discard 9m")
    act(env, "player_1: ready 9p")
    for seat in (2, 3, 0):
        tsumogiri(env, seat)
    assert env.game.bao is None and legal(env) == {"kong", "pass"}
    act(env, "player_1: kong")
    assert view(env, 1)["dice"] == [5] and env.game.wall.gap == 73 and env.game.bao == tile_index("8m")
    assert phase(env) == "turn" and view(env, 1)["drawn"] == "9s" and legal(env) == {"discard 9s"}
    tsumogiri(env, 1)
    for seat in (2, 3, 0):
        tsumogiri(env, seat)
    assert env.agent_selection == "player_1" and phase(env) == "bao_view"
