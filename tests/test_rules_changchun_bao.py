"""Changchun scenario tests of the bao 宝牌: the roll, the view, 对宝, 摸宝, 换宝 (RULES.md C8), and
the bao's secret (R13).

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
    safe_discard,
    step_on,
    tsumogiri,
    view,
    wall_with,
)

from mahjong_env.observation import CHANNELS
from mahjong_env.tiles import format_tiles, parse_tiles, tile_index

# -------------------------------------------------------------------------------------------- C8


BAO_ROW = CHANNELS.index("bao")


def bao_row(env, seat: int) -> np.ndarray:
    return env.observe(f"player_{seat}")["observation"][BAO_ROW]


def test_c8_roll_sets_aside_the_upper_tile_of_the_sth_stack_even():
    # C8/R4: with no tail draw (k = 0) the s-th stack from the tail is (n-2s, n-2s+1)
    env = bao_deal(WAIT_1Z_4Z, head="9p", indicator="8m", dice=[5])
    act(env, "player_0: discard 9m")
    assert view(env, 1)["dice"] == []
    act(env, "player_1: ready 9p")
    game = env.game
    assert game.wall.gap == indicator_index(5) == 73
    assert game.bao == tile_index("8m")
    for seat in range(4):
        v = view(env, seat)
        assert v["dice"] == [5] and v["wall_remaining"] == 81 and v["bao"] is None


def test_c8_roll_with_a_lone_tile_at_the_tail_odd():
    # C8/R4: after one replacement draw (k = 1) the lone tile is n-1 and the s-th stack is
    # (n-1-2s, n-2s)
    hands = [CC_DEALER, "1234z222m345p678s", IDLE[0], IDLE[2]]
    at = {indicator_index(4, tail_draws=1): "8m"}
    env = cc(hands, wall=wall_with(hands, "5z", "9p", at), dice=[4])
    act(env, "player_0: discard 9m")
    act(env, "player_1: special_winds")
    assert view(env, 1)["drawn"] == "9p"
    act(env, "player_1: ready 9p")
    assert env.game.wall.gap == indicator_index(4, tail_draws=1) == 73
    assert env.game.bao == tile_index("8m")
    assert view(env, 0)["wall_remaining"] == 80


def test_c8_no_roll_when_the_ready_discard_is_won():
    # C8: the roll comes when the first ready declaration stands, i.e. its discard is not won
    env = bao_deal(WAIT_1Z_4Z, head="5s", indicator="8m", dice=[5], others=("123m789p789s666z5s", IDLE[2]))
    act(env, "player_0: discard 9m")
    act(env, "player_1: ready 5s")
    assert env.agent_selection == "player_2" and legal(env) == {"win", "pass"}
    act(env, "player_2: win")
    assert result(env)["winner"] == 2 and view(env, 0)["dice"] == [] and env.game.bao is None


def test_c8_view_offered_after_declaring_and_at_turn_start_bao_seen_only_after_view():
    env = bao_deal(WAIT_1Z_4Z, head="9p7m8p1s2m", indicator="8m", dice=[5])
    act(env, "player_0: discard 9m")
    act(env, "player_1: ready 9p")
    # (a) right after the declaration stands, before player_2's turn
    assert env.agent_selection == "player_1" and phase(env) == "bao_view"
    assert legal(env) == {"view_bao", "pass"}
    v = view(env, 1)
    assert v["bao"] is None and not v["bao_seen"] and not bao_row(env, 1).any()
    act(env, "player_1: pass")
    for seat in (2, 3, 0):
        assert "view_bao" not in legal(env)  # not ready: never offered
        tsumogiri(env, seat)
    # (b) at the start of its turn, before drawing
    assert env.agent_selection == "player_1" and phase(env) == "bao_view"
    assert view(env, 1)["drawn"] is None and view(env, 1)["wall_remaining"] == 78
    assert legal(env) == {"view_bao", "pass"}
    act(env, "player_1: view_bao")
    v = view(env, 1)
    assert v["bao"] == "8m" and v["bao_seen"]
    assert bao_row(env, 1)[tile_index("8m")] == 1 and bao_row(env, 1).sum() == 1
    assert v["drawn"] == "2m" and phase(env) == "turn"  # 8m is no winning tile: no 对宝
    for seat in (0, 2, 3):
        assert view(env, seat)["bao"] is None and not bao_row(env, seat).any()
    assert "8m" in env.render_view("player_1")


def test_c8_duibao_win_right_after_viewing():
    # C8 对宝 (C10: 自摸 +1, 宝牌 +2, 对宝 +2 over 平胡; the 喜杠 rules out 立胡)
    env = bao_deal(XIGANG_WAIT_3M_6M, head="7m", indicator="3m", dice=[5])
    act(env, "player_0: discard 9m")
    play(env, "player_1: special_dragons", "player_1: ready 7m", "player_1: view_bao")
    assert phase(env) == "duibao" and legal(env) == {"win", "pass"}
    assert view(env, 1)["drawn"] is None
    act(env, "player_1: win")
    res = result(env)
    assert res["winner"] == 1 and res["method"] == "bao_match" and res["tile"] == "3m"
    assert fans(res) == {"pinghu": 1, "zimo": 1, "mobao": 2, "duibao": 2}
    assert res["total_fan"] == 6
    assert res["deltas"] == [-32, 96, -32, -32] and res["kong_deltas"] == [-1, 3, -1, -1]


@pytest.mark.parametrize("viewed", [True, False])
def test_c8_mobao_wins_whatever_the_wait(viewed):
    # C8 摸宝: after viewing, drawing the bao's kind (2s, no winning tile) wins; without
    # viewing it is an ordinary tile (the mask never offers a win on an unseen bao); the bao
    # is never wild on another player's discard
    env = bao_deal(XIGANG_WAIT_3M_6M, head="7m7p8p2s2s", indicator="2s", dice=[5])
    act(env, "player_0: discard 9m")
    play(env, "player_1: special_dragons", "player_1: ready 7m")
    act(env, "player_1: view_bao" if viewed else "player_1: pass")
    assert phase(env) != "duibao"
    for seat in (2, 3, 0):
        tsumogiri(env, seat)  # player_0 discards 2s: player_1 is not asked
    assert env.agent_selection == "player_1" and phase(env) != "claim"
    if not viewed:
        act(env, "player_1: pass")
        assert legal(env) == {"discard 2s"}
        return
    assert view(env, 1)["drawn"] == "2s" and legal(env) == {"win", "discard 2s"}
    act(env, "player_1: win")
    res = result(env)
    assert res["method"] == "bao_draw" and res["tile"] == "2s"
    assert fans(res) == {"pinghu": 1, "zimo": 1, "mobao": 2}
    assert res["deltas"] == [-8, 24, -8, -8]


def test_c8_duibao_passed_then_mobao_scores_the_best_tile():
    # C8: a passed 对宝 is final; drawing the bao (6m, also a natural winning tile) is still 摸宝,
    # and the bao stands in for 3m, the 12→3 edge of 12345m (夹胡 +1, C10)
    env = bao_deal("567z12345m789s99p", head="7m7p8p1s6m", indicator="6m", dice=[5])
    act(env, "player_0: discard 9m")
    play(env, "player_1: special_dragons", "player_1: ready 7m", "player_1: view_bao")
    assert legal(env) == {"win", "pass"}
    act(env, "player_1: pass")
    for seat in (2, 3, 0):
        tsumogiri(env, seat)
    assert env.agent_selection == "player_1" and phase(env) == "turn"  # seen: no new view
    assert view(env, 1)["drawn"] == "6m" and legal(env) == {"win", "discard 6m"}
    act(env, "player_1: win")
    res = result(env)
    assert res["method"] == "bao_draw"
    assert fans(res) == {"pinghu": 1, "zimo": 1, "mobao": 2, "jiahu": 1}
    assert res["deltas"] == [-16, 48, -16, -16]


def test_c8_huanbao_after_three_discards_with_a_reroll():
    # C8 换宝: the third discarded 7p (besides the indicator) changes the bao: the indicator
    # goes back to its slot, the dice are rolled (5 again: the same 7p, rolled again; then 3)
    # and every ready player must view again
    others = (IDLE[0], "369m148p258s2345z")  # no 7p
    env = bao_deal(WAIT_1Z_4Z, head="9p7p7p7p2m", indicator="7p", dice=[5, 5, 3], others=others)
    new_index = 4 + (83 - 4) - 2 * 3  # head 4 draws, n = 79, s = 3
    act(env, "player_0: discard 9m")
    play(env, "player_1: ready 9p", "player_1: view_bao")
    assert view(env, 1)["bao"] == "7p"
    tsumogiri(env, 2)
    tsumogiri(env, 3)
    assert env.game.bao == tile_index("7p")
    tsumogiri(env, 0)
    game = env.game
    assert view(env, 1)["dice"] == [5, 5, 3]
    assert game.wall.gap == new_index and game.bao == game.wall.tiles[new_index]
    assert game.wall.tiles[indicator_index(5)] == tile_index("7p")  # back in its slot
    assert view(env, 1)["wall_remaining"] == 83 - 4 - 1
    v = view(env, 1)
    assert v["bao"] is None and not v["bao_seen"] and not bao_row(env, 1).any()
    assert env.agent_selection == "player_1" and legal(env) == {"view_bao", "pass"}
    act(env, "player_1: view_bao")
    assert view(env, 1)["bao"] == format_tiles([game.bao])


def test_c8_fewer_than_s_stacks_takes_the_stack_nearest_the_head():
    # C8: a late first declaration (18 tiles left, nine stacks) with s = 12 takes the upper tile
    # of the ninth stack, the next head tile; the next draw skips its slot (R4)
    hands = fill_hands([None, WAIT_1Z_4Z, None, None], "", dealer=0)
    env = cc(hands, dice=[12])
    for _ in range(400):
        if env.agent_selection == "player_1" and phase(env) == "turn" and view(env, 1)["wall_remaining"] == 18:
            break
        step_on(env)
    drawn = view(env, 1)["drawn"]
    act(env, f"player_1: ready {drawn}")
    wall = env.game.wall
    assert wall.gap == wall.head == 65 and env.game.bao == wall.tiles[65]
    act(env, "player_1: pass")
    assert view(env, 2)["drawn"] == format_tiles([wall.tiles[66]])


def test_c8_max_bao_rolls_leaves_the_hand_without_bao():
    # C8: after max_bao_rolls rolls the last indicator goes back and the hand has no bao
    others = (IDLE[0], "369m148p258s2345z")
    env = bao_deal(WAIT_1Z_4Z, head="9p7p7p7p2m", indicator="7p", dice=[5, 5], others=others, max_bao_rolls=2)
    act(env, "player_0: discard 9m")
    play(env, "player_1: ready 9p", "player_1: view_bao")
    for seat in (2, 3, 0):
        tsumogiri(env, seat)
    assert env.game.bao is None and env.game.wall.gap is None
    assert view(env, 1)["dice"] == [5, 5] and view(env, 1)["wall_remaining"] == 78  # the 2m drawn
    assert view(env, 1)["bao"] is None
    assert env.agent_selection == "player_1" and phase(env) == "turn" and view(env, 1)["drawn"] == "2m"


def test_c8_later_declarer_views_without_a_new_roll():
    # C8 (a): every declarer is offered the view right after its declaration stands; only the
    # first declaration rolls
    hands = [CC_DEALER, WAIT_1Z_4Z, IDLE[0], "123m789p789s777z5s"]
    env = cc(hands, wall=wall_with(hands, "9p7m2z", "", {indicator_index(5): "8m"}), dice=[5])
    act(env, "player_0: discard 9m")
    play(env, "player_1: ready 9p", "player_1: pass")
    tsumogiri(env, 2)
    assert view(env, 3)["drawn"] == "2z"
    act(env, "player_3: ready 2z")
    assert env.agent_selection == "player_3" and legal(env) == {"view_bao", "pass"}
    act(env, "player_3: view_bao")
    assert view(env, 3)["bao"] == "8m" and view(env, 3)["dice"] == [5]
    assert view(env, 1)["bao"] is None


def test_c8_huanbao_returns_the_indicator_to_the_tail_end_when_tail_draws_passed_it():
    # C8 换宝 as amended: two replacement draws passed the indicator's slot (one die: s = 1, the
    # stack at the tail, index 81); after the change it goes to the tail end (the next
    # replacement draw), and the new roll counts from there
    hands = fill_hands([None, WAIT_1Z_4Z, "147m6666p9999s57z", None], "9p7p7p7p" + "8s7p9m", dealer=0)
    wall = wall_with(hands, "9p7p7p7p", "", {82: "8s", 81: "7p", 80: "9m"})
    env = cc(hands, wall=wall, dealer=0, dice=[1, 2], bao_dice=1)
    act(env, f"player_0: discard {safe_discard(env, 0, WAIT_1Z_4Z + '6p9s7p')}")
    play(env, "player_1: ready 9p", "player_1: pass")
    assert env.game.wall.gap == 81
    play(env, "player_2: concealed_kong 6p", "player_2: concealed_kong 9s")
    assert view(env, 2)["drawn"] == "9m"  # the second replacement skipped the slot
    act(env, "player_2: discard 7p")
    tsumogiri(env, 3)
    tsumogiri(env, 0)  # the third 7p: 换宝
    wall_state = env.game.wall
    assert view(env, 1)["dice"] == [1, 2]
    assert wall_state.tail == 81 and wall_state.tiles[80] == tile_index("7p")
    assert wall_state.gap == wall_state.tail - 4 and env.game.bao == wall_state.tiles[wall_state.gap]
    assert wall_state.live_tiles()[-1] == tile_index("7p")


# ------------------------------------------------------------------------------- R13 / C8 secret


def _snapshot(env, agent: str) -> tuple:
    obs = env.observe(agent)
    return (
        obs["observation"].tobytes(),
        obs["action_mask"].tobytes(),
        repr(env.infos[agent]),
        env.render_view(agent),
        repr(env.view(agent)),
        sorted(env.legal_actions(agent)),
    )


def test_c8_r13_bao_indicator_is_hidden_until_viewed():
    # R13/C8: two deals that differ only in the set-aside indicator (swapped with a tile far
    # down the wall) look the same to every player, in observation, mask, info, view and
    # render, until it views the bao; the other players never see a difference
    hands = [CC_DEALER, WAIT_1Z_4Z, IDLE[0], IDLE[2]]
    head = "9p7m8p1s2m3p5m"
    wall_a = parse_tiles(wall_with(hands, head, "", {indicator_index(5): "8m", 40: "6s"}))
    wall_b = list(wall_a)
    wall_b[73], wall_b[40] = wall_b[40], wall_b[73]
    envs = [cc(hands, wall=format_tiles(w), dice=[5]) for w in (wall_a, wall_b)]
    script = [
        "player_0: discard 9m",
        "player_1: ready 9p",
        "player_1: pass",
        "player_2: discard 7m",
        "player_3: discard 8p",
        "player_0: discard 1s",
        "player_1: view_bao",
        "player_1: discard 2m",
        "player_2: discard 3p",
        "player_3: discard 5m",
    ]
    agents = [f"player_{i}" for i in range(4)]
    viewed = False
    for step in script:
        for agent in agents:
            same = _snapshot(envs[0], agent) == _snapshot(envs[1], agent)
            assert same or (agent == "player_1" and viewed), (step, agent)
        for env in envs:
            act(env, step)
        viewed = viewed or step.endswith("view_bao")
    assert [view(env, 1)["bao"] for env in envs] == ["8m", "6s"]
    assert _snapshot(envs[0], "player_1") != _snapshot(envs[1], "player_1")
