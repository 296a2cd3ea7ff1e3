"""Changchun scenario tests of the ready declaration 上听 and its lock (RULES.md C7).

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
    act,
    cc,
    legal,
    rewards_list,
    run_until,
    safe_discard,
    totals,
    tsumogiri,
    view,
)

from mahjong_env.tiles import tile_index

# -------------------------------------------------------------------------------------------- C7


def _ready_player_1(hand1: str, wall: str, tail: str | None = None, **kwargs):
    """player_1 draws the wall's first tile and declares ready with it; passes the bao view."""
    env = cc([CC_DEALER, hand1, IDLE[0], IDLE[2]], wall=wall, tail=tail, **kwargs)
    act(env, "player_0: discard 9m")
    drawn = view(env, 1)["drawn"]
    act(env, f"player_1: ready {drawn}")
    assert view(env, 1)["ready"][1]
    assert env.agent_selection == "player_1" and legal(env) == {"view_bao", "pass"}  # C8
    act(env, "player_1: pass")
    return env


@pytest.mark.parametrize("required", [False, True])
def test_c7_ready_is_optional_unless_required(required):
    # C7 Decision (MIL 八-1): no ready declaration is needed to win; require_ready_to_win=True
    # makes it so (player_3 has not declared: no win on the discard nor on the draw)
    hand = "45m123p789s222z99p"
    env = cc([None, None, None, hand], wall="3m4z3m", dealer=0, require_ready_to_win=required)
    act(env, f"player_0: discard {safe_discard(env, 0, hand)}")
    act(env, "player_1: discard 3m")
    if required:
        assert env.agent_selection == "player_2"
        tsumogiri(env, 2)
        assert view(env, 3)["drawn"] == "3m" and "win" not in legal(env)
    else:
        assert not view(env, 3)["ready"][3]
        assert env.agent_selection == "player_3" and legal(env) == {"win", "pass"}


def test_c7_ready_hand_is_locked_and_keeps_a_same_wait_kong():
    # C7: after ready no chow (or pong); only the drawn tile may be discarded; a concealed
    # kong that keeps the winning tiles (1z 4z) stays legal
    env = _ready_player_1("222m345p678s11z44z", wall="9p7m8p1s2m", tail="8s")
    tsumogiri(env, 2)
    tsumogiri(env, 3)
    act(env, "player_0: discard 3p")  # player_1 (45p) would chow it if it were not ready
    assert env.agent_selection == "player_1" and legal(env) == {"view_bao", "pass"}
    act(env, "player_1: pass")
    assert view(env, 1)["drawn"] == "2m"
    assert legal(env) == {"discard 2m", "concealed_kong 2m"}
    assert rewards_list(act(env, "player_1: concealed_kong 2m")) == [-2, 6, -2, -2]  # C12
    assert view(env, 1)["drawn"] == "8s" and legal(env) == {"discard 8s"}


def test_c7_c9_ready_player_with_a_chow_keeps_a_concealed_kong_of_the_same_waits():
    # C7: a ready player's concealed kong keeping the winning tiles is legal; C9.4: its tiles
    # count as concealed, so chow + concealed kong + 5s is no 手把一 and still waits on 5s
    env = cc(["2369m369p348s1234z", "567z1m1p1s888p5s34m9s", None, None], wall="9m9m9m8p", tail="2p")
    act(env, "player_0: discard 2m")
    act(env, "player_1: chow_low")
    act(env, "player_1: special_dragons")
    act(env, "player_1: special_ones")
    act(env, "player_1: ready 9s")  # 888p5s: waits on 5s
    run_until(env, 1)
    assert view(env, 1)["drawn"] == "8p"
    assert legal(env) == {"discard 8p", "concealed_kong 8p"}
    act(env, "player_1: concealed_kong 8p")
    assert view(env, 1)["drawn"] == "2p" and legal(env) == {"discard 2p"}
    assert env.game.seats[1].ready_waits == 1 << tile_index("5s")


def test_c7_ready_player_offered_kong_not_pong_on_a_discard():
    env = _ready_player_1("222m345p678s11z44z", wall="9p7m8p2m")
    tsumogiri(env, 2)
    tsumogiri(env, 3)
    act(env, "player_0: discard 2m")
    assert env.agent_selection == "player_1" and legal(env) == {"kong", "pass"}


@pytest.mark.parametrize("via", ["discard", "draw"])
def test_c7_no_kong_that_changes_the_winning_tiles(via):
    # C7 不可换听: 22234m waits 1z 2m 5m; a kong of 2m would leave only 5m
    wall = "9p7m8p2m" if via == "discard" else "9p7m8p1s2m"
    env = _ready_player_1("22234m456p789s11z", wall=wall)
    for seat in (2, 3, 0):
        tsumogiri(env, seat)  # player_0 discards 2m (via discard) or 1s
    if via == "discard":
        assert env.agent_selection == "player_1" and legal(env) == {"win", "pass"}
    else:
        act(env, "player_1: pass")  # the bao view
        assert view(env, 1)["drawn"] == "2m" and legal(env) == {"win", "discard 2m"}


def test_c7_ready_player_adds_only_the_drawn_tile():
    # C6/C7: a ready player may add to its 喜杠 only the tile just drawn (7z), not the 5z it holds
    env = cc([CC_DEALER, "567z123m456p789s5z", IDLE[0], None], wall="2z7m8p1s7z", tail="4m")
    act(env, "player_0: discard 9m")
    act(env, "player_1: special_dragons")
    act(env, "player_1: ready 2z")
    act(env, "player_1: pass")
    tsumogiri(env, 2)
    tsumogiri(env, 3)
    tsumogiri(env, 0)
    act(env, "player_1: pass")
    assert view(env, 1)["drawn"] == "7z"
    assert legal(env) == {"discard 7z", "special_add 7z"}
    act(env, "player_1: special_add 7z")
    assert env.agent_selection == "player_1" and view(env, 1)["drawn"] == "4m"
    assert totals(env)["player_1"] == 6
