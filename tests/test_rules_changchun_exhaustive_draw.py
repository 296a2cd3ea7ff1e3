"""Changchun scenario tests of the exhaustive draw: the seven stacks kept in the wall and the
kongs that the reserve allows (RULES.md C13).

Every scenario builds its deal by hand in tile notation (`scenario.deal`, `scenario.cc`: the
dealer is the seat dealt 14 tiles, seat 0 unless said otherwise; ``wall`` is the head in draw
order and ``tail`` the replacement draws in the order taken), plays actions by name and checks
the legal action names, the step rewards and ``info["result"]``. Expectations come from
RULES.md, not from the engine.

Seats move 0 → 1 → 2 → 3 (R2). ``IDLE`` hands (`scenario.IDLE`) hold no pair and no two tiles
within a chow's reach, so a seat holding one never claims anything and never wins.
"""

from __future__ import annotations

from scenario import (
    KONG_BASE,
    WAIT_1Z_4Z,
    act,
    bao_deal,
    cc,
    fill_hands,
    full_wall,
    legal,
    phase,
    play_to_end,
    run_until,
    step_on,
    totals,
    tsumogiri,
    view,
    wall_with,
)

from mahjong_env.tiles import format_tiles, tile_index

# ------------------------------------------------------------------------------------------- C13


def test_c13_drawn_hand_leaves_seven_stacks():
    # C13: no kong (k = 0): the player due to draw with n <= 14 does not; the hand is drawn
    # with 14 tiles (seven stacks) left and the dealer stays
    env = cc([None, None, None, None], dealer=2)
    res = play_to_end(env)
    assert res["outcome"] == "draw" and res["winner"] is None and res["next_dealer"] == 2
    assert view(env, 0)["wall_remaining"] == 14
    assert res["deltas"] == [0, 0, 0, 0] and res["kong_deltas"] == [0, 0, 0, 0]


def test_c13_c12_kong_pays_are_kept_and_the_reserve_grows():
    # C13 with one replacement draw (k = 1): the hand ends when n <= 15 (seven whole stacks
    # plus the lone tile); C12: the concealed kong's payment is never returned
    env = cc(["2222m" + KONG_BASE, None, None, None], dealer=0)
    act(env, "player_0: concealed_kong 2m")
    res = play_to_end(env)
    assert res["outcome"] == "draw" and view(env, 0)["wall_remaining"] == 15
    assert res["kong_deltas"] == [6, -2, -2, -2]
    assert all(p["reason"] != "kong_refund" for p in res["payments"])
    assert totals(env) == {"player_0": 6, "player_1": -2, "player_2": -2, "player_3": -2}


def test_c13_no_kong_whose_replacement_breaks_the_reserve():
    # C13: a kong needs n >= 14 + (k mod 2) after its replacement: with n = 16 after the draw
    # (k = 0 -> 1: 15 >= 15) it is offered, with n = 15 it is not
    hands = fill_hands(["333p147m258s9s1356z", None, None, "222m" + KONG_BASE], "2m3p", dealer=0)
    wall = wall_with(hands, "", "", {66: "2m", 67: "3p"})
    env = cc(hands, wall=wall, dealer=0)
    for _ in range(400):
        if env.agent_selection == "player_3" and phase(env) == "turn" and view(env, 3)["drawn"] == "2m":
            break
        step_on(env)
    assert view(env, 3)["wall_remaining"] == 16
    assert "concealed_kong 2m" in legal(env)
    tsumogiri(env, 3)
    run_until(env, 0)
    assert view(env, 0)["drawn"] == "3p" and view(env, 0)["wall_remaining"] == 15
    assert "concealed_kong 3p" not in legal(env)
    res = play_to_end(env)
    assert res["outcome"] == "draw" and view(env, 0)["wall_remaining"] == 14


def test_c13_bao_slot_counts_in_the_reserve():
    # C13/R4: the set-aside indicator's slot keeps counting in n: the hand ends with n = 14,
    # of which 13 tiles and the empty slot
    env = bao_deal(WAIT_1Z_4Z, head="9p", indicator="8m", dice=[5])
    act(env, "player_0: discard 9m")
    act(env, "player_1: ready 9p")
    res = play_to_end(env)
    assert res["outcome"] == "draw"
    assert env.game.wall.slots == 14 and view(env, 0)["wall_remaining"] == 13


def test_c13_a_replacement_that_skips_the_indicator_slot_counts_two_slots():
    # C13/R4: n counts the set-aside indicator's slot; a replacement draw that skips that slot
    # at the tail end leaves n two smaller, so the kong is judged by that new n: with the
    # indicator the lone tile at the tail (k = 1) and n = 15, the replacement would leave 13
    hands = ["1m4m7m1p2p8p3s6s5z6z7z3z2z9m", WAIT_1Z_4Z, "147m258p9999s256z", "369m666p147s2345z"]
    wall = full_wall(hands, "9p")
    wall.remove(tile_index("6p"))
    wall.insert(66, tile_index("6p"))  # player_3 draws its fourth 6p with n = 15
    env = cc(hands, wall=format_tiles(wall), bao_dice=1, dice=[1])
    act(env, "player_0: discard 9m")
    act(env, "player_1: ready 9p")
    act(env, "player_1: pass")  # the view of the bao
    act(env, "player_2: concealed_kong 9s")  # k = 1: the indicator is now the lone tile at the tail
    game = env.game
    assert game.wall.gap == game.wall.tail - 1
    for _ in range(400):
        if env.agent_selection == "player_3" and phase(env) == "turn" and view(env, 3)["drawn"] == "6p":
            break
        step_on(env)
    assert game.wall.slots == 15 and game.wall.tail_draws == 1 and view(env, 3)["wall_remaining"] == 14
    assert "concealed_kong 6p" not in legal(env)
    tsumogiri(env, 3)
    res = play_to_end(env)
    assert res["outcome"] == "draw" and game.wall.slots == 15  # due to draw with n <= 14 + 1
