"""Scenario tests for Xinjiang Balang mahjong 巴郎新疆麻将 (RULES.md X1–X10).

Every test builds its deal by hand in tile notation (`scenario.deal`), plays actions by name and
checks masks, rewards and ``info["result"]`` against RULES.md. A seat given as None is a quiet
hand (distinct kinds, no sequences) that never claims or wins and discards what it draws.
"""

from __future__ import annotations

import pytest
from scenario import act, deal, legal, mover, play, play_out, result, results, totals

from mahjong_env import xinjiang_v0
from mahjong_env.rules.xinjiang import register_pattern
from mahjong_env.tiles import parse_tiles, tile_name

XJ = xinjiang_v0
AGENTS = [f"player_{i}" for i in range(4)]


def discard_drawn_turns(env, n: int) -> None:
    for _ in range(n):
        assert env.view(mover(env))["phase"] == "turn", legal(env)
        act(env, "discard drawn")


def fans_of(res) -> dict[str, int]:
    return {name: fan for name, fan in res["fans"]}


def side_draws(hand14: str, win: str) -> str:
    """Three tiles for the other seats to draw and discard: kinds absent from ``hand14``."""
    held = set(parse_tiles(hand14)) | set(parse_tiles(win))
    order = list(range(27, 34)) + list(range(27))
    return "".join(tile_name(t) for t in [t for t in order if t not in held][:3])


def dealer_self_draw(hand14: str, ready: str, win: str, **overrides):
    """Dealer 0 declares `ready <ready>`, the others discard what they draw, the dealer draws
    ``win`` and wins by self-draw (X3)."""
    env = deal(XJ, [hand14, None, None, None], wall=side_draws(hand14, win) + win, **overrides)
    act(env, f"player_0: ready {ready}")
    discard_drawn_turns(env, 3)
    assert mover(env) == "player_0" and env.view("player_0")["drawn"] == win
    assert "win" in legal(env)
    act(env, "player_0: win")
    return env


def play_until(env, done) -> None:
    """Pass every claim and discard every drawn tile until ``done(env)``."""
    for _ in range(1000):
        if done(env):
            return
        view = env.view(mover(env))
        if view["phase"] in ("claim", "rob"):
            act(env, "pass")
        elif view["drawn"] is None:  # the dealer's first turn
            act(env, f"discard {tile_name(parse_tiles(view['hand'])[-1])}")
        else:
            act(env, "discard drawn")
    raise AssertionError("did not finish")


# ---------------------------------------------------------------------------------------- X1


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_x1_deal_sizes(seed):
    """X1/R3: 136 tiles, four of each kind; dealer 14, others 13, 83 left in the wall."""
    env = XJ.raw_env()
    env.reset(seed=seed)
    dealer = env.view("player_0")["dealer"]
    counts = [0] * 34
    for s, agent in enumerate(AGENTS):
        view = env.view(agent)
        tiles = parse_tiles(view["hand"])
        assert len(tiles) == (14 if s == dealer else 13) == view["concealed_counts"][s]
        for t in tiles:
            counts[t] += 1
    assert max(counts) <= 4 and sum(counts) == 53
    assert env.view("player_0")["wall_remaining"] == 83
    assert env.agent_selection == f"player_{dealer}"


# ---------------------------------------------------------------------------------------- X2


def test_x2_no_chow_is_ever_offered():
    """X2: no chow (禁止吃牌): the next player holding 3467m is not asked about a 5m."""
    env = deal(XJ, ["5m 9m 8p 147p 369s 23456z", "3467m 258p 147s 123z", None, None])
    act(env, "player_0: discard 5m")
    assert mover(env) == "player_1" and env.view("player_1")["phase"] == "turn"
    assert not any(a.startswith("chow") for a in legal(env))


def test_x2_no_chow_over_a_whole_seeded_hand():
    """X2: no mask of a whole hand from the seed ever holds a chow."""
    env = XJ.raw_env()
    env.reset(seed=11)
    seen = 0
    while not all(env.terminations.values()):
        options = legal(env)
        assert not any(a.startswith("chow") for a in options)
        seen += 1
        act(env, "pass" if "pass" in options else min(a for a in options if a.startswith("discard")))
    assert seen > 80


def x2_claim_deal():
    return deal(XJ, ["5m 9m 8p 147p 369s 23456z", None, "555m 258p 147s 1237z", None], tail="6s")


def test_x2_pong_claim_and_play_passes_from_the_claimer():
    """X2: pong and kong on a discard; after a pong play passes from the ponger (R2)."""
    env = x2_claim_deal()
    act(env, "player_0: discard 5m")
    assert mover(env) == "player_2" and legal(env) == {"pong", "kong", "pass"}
    act(env, "player_2: pong")
    assert mover(env) == "player_2"
    assert env.view("player_2")["melds"][2] == [{"kind": "pong", "tiles": "555m", "from": 0}]
    act(env, "player_2: discard 2p")
    assert mover(env) == "player_3" and env.view("player_3")["phase"] == "turn"


def test_x2_exposed_kong_on_a_discard():
    """X2/X8: an exposed kong (直杠): the discarder pays 1 (下雨) when it stands; replacement from
    the tail."""
    env = x2_claim_deal()
    act(env, "player_0: discard 5m")
    rewards = act(env, "player_2: kong")
    assert rewards == {"player_0": -1.0, "player_1": 0.0, "player_2": 1.0, "player_3": 0.0}
    assert mover(env) == "player_2" and env.view("player_2")["drawn"] == "6s"
    assert env.view("player_0")["melds"][2] == [{"kind": "kong", "tiles": "5555m", "from": 0}]
    act(env, "player_2: discard 6s")
    assert mover(env) == "player_3"


@pytest.mark.parametrize("allow", [False, True])
def test_x2_no_win_on_a_discard_by_default(allow):
    """X2: no win on a discard (禁止点炮胡) even for a ready player; X9 turns it on."""
    env = deal(XJ, [None, None, None, "23m456p789p111s55z9m"], dealer=3, wall="4m", allow_discard_win=allow)
    act(env, "player_3: ready 9m")
    act(env, "player_0: discard 4m")
    if allow:
        assert mover(env) == "player_3" and legal(env) == {"win", "pass"}
    else:
        assert mover(env) == "player_1" and env.view("player_1")["phase"] == "turn"


# ---------------------------------------------------------------------------------------- X3


@pytest.mark.parametrize("declare", [False, True])
def test_x3_self_draw_win_needs_a_ready_declaration(declare):
    """X3: a self-drawn complete hand wins only after declaring ready (报听自摸)."""
    env = deal(XJ, ["123m456m789m11p35s7z", None, None, None], wall="1z2z3z4s")
    act(env, "player_0: ready 7z" if declare else "player_0: discard 7z")
    discard_drawn_turns(env, 3)
    assert env.view("player_0")["drawn"] == "4s"  # completes 123m456m789m11p345s
    assert ("win" in legal(env)) is declare


def test_x3_kong_bloom_without_ready():
    """X3/X6: the replacement after one's own kong completes the hand: 杠上开花 without ready;
    pinghu 1 + gangshang_kaihua 1 + gang 1 = 3 fan = 4 points from each."""
    env = deal(XJ, ["1111m 234p 567p 789s 5z", None, None, None], tail="5z")
    rewards = act(env, "player_0: concealed_kong 1m")
    assert rewards == {"player_0": 3.0, "player_1": -1.0, "player_2": -1.0, "player_3": -1.0}  # X8
    assert not env.view("player_0")["ready"][0]
    assert "win" in legal(env)
    act(env, "player_0: win")
    res = result(env)
    assert res["winner"] == 0 and res["method"] == "kong_bloom" and res["tile"] == "5z"
    assert fans_of(res) == {"pinghu": 1, "gangshang_kaihua": 1, "gang": 1}
    assert res["total_fan"] == 3
    assert res["deltas"] == [12.0, -4.0, -4.0, -4.0]
    assert res["kong_deltas"] == [3.0, -1.0, -1.0, -1.0]


def added_kong_deal(p3_ready: bool, **overrides):
    """player_1 pongs 5p and later draws the fourth 5p; player_3 waits on 5p (closed 46p),
    declared ready or not."""
    hands = ["5p 147m 28p 369s 23467z", "55p 258m 147s 39p 357z", None, "123m456m789m46p11z"]
    env = deal(XJ, hands, wall="8s2s1p5p", tail="6s", **overrides)
    play(env, "player_0: discard 5p", "player_1: pong", "player_1: discard 7z")
    act(env, "player_2: discard drawn")
    act(env, "player_3: ready 2s" if p3_ready else "player_3: discard 2s")
    act(env, "player_0: discard drawn")
    return env


def test_x3_robbing_an_added_kong_needs_ready():
    """X3 Decision: only a ready player may rob; otherwise the added kong stands at once."""
    env = added_kong_deal(p3_ready=False)
    rewards = act(env, "player_1: added_kong 5p")
    assert rewards == {"player_0": -1.0, "player_1": 3.0, "player_2": -1.0, "player_3": -1.0}
    assert mover(env) == "player_1" and env.view("player_1")["drawn"] == "6s"

    env = added_kong_deal(p3_ready=False, rob_requires_ready=False)
    act(env, "player_1: added_kong 5p")
    assert mover(env) == "player_3" and legal(env) == {"win", "pass"}


def test_x3_robbing_an_added_kong_konger_pays_three_times():
    """X3/X7: the robber wins as a self-draw (no discard win needed); the konger pays 3x and
    its kong does not stand."""
    env = added_kong_deal(p3_ready=True)
    act(env, "player_1: added_kong 5p")
    assert mover(env) == "player_3" and legal(env) == {"win", "pass"}
    act(env, "player_3: win")
    res = result(env)
    assert res["method"] == "rob_kong" and res["winner"] == 3 and res["tile"] == "5p"
    assert fans_of(res) == {"pinghu": 1} and res["total_fan"] == 1
    assert res["deltas"] == [0.0, -3.0, 0.0, 3.0]
    assert res["kong_deltas"] == [0.0, 0.0, 0.0, 0.0]
    assert res["payments"] == [{"from": 1, "to": 3, "points": 3.0, "reason": "rob_kong"}]


def x3_unrobbable_deal(wall: str):
    """Dealer 3 declares ready on 5p (closed 46p); player_1 holds 555p."""
    hands = [None, "555p 258m 147s 1237z", None, "123m456m789m46p11z9s"]
    env = deal(XJ, hands, dealer=3, wall=wall, tail="6s")
    act(env, "player_3: ready 9s")
    return env


def test_x3_concealed_kong_cannot_be_robbed():
    """X3 Decision: a concealed kong is never robbed: it stands at once."""
    env = x3_unrobbable_deal("6z5p")
    act(env, "player_0: discard drawn")
    assert mover(env) == "player_1" and "concealed_kong 5p" in legal(env)
    rewards = act(env, "player_1: concealed_kong 5p")
    assert rewards == {"player_0": -1.0, "player_1": 3.0, "player_2": -1.0, "player_3": -1.0}
    assert mover(env) == "player_1" and env.view("player_1")["drawn"] == "6s"


def test_x3_direct_kong_cannot_be_robbed():
    """X3 Decision: a direct kong on a discard is never robbed (that would be a discard win)."""
    env = x3_unrobbable_deal("5p")
    act(env, "player_0: discard 5p")
    assert mover(env) == "player_1" and legal(env) == {"pong", "kong", "pass"}
    rewards = act(env, "player_1: kong")
    assert rewards == {"player_0": -1.0, "player_1": 1.0, "player_2": 0.0, "player_3": 0.0}
    assert mover(env) == "player_1" and env.view("player_1")["drawn"] == "6s"


@pytest.mark.parametrize(
    "hand14,ready,win,shape",
    [
        ("1122m3344p5566s7z9m", "9m", "7z", "qidui"),
        ("1111m22p33p44s55s6z9m", "9m", "6z", "haohua_qidui"),
    ],
)
def test_x3_seven_pairs_forms_win(hand14, ready, win, shape):
    """X3: seven pairs and luxury seven pairs (four of a kind as two pairs) are winning forms."""
    res = result(dealer_self_draw(hand14, ready, win))
    assert res["method"] == "self_draw" and fans_of(res) == {shape: {"qidui": 3, "haohua_qidui": 4}[shape]}


# ---------------------------------------------------------------------------------------- X4


def fenzhang_deal(draw79: str):
    """Dealer 0; player_3 declares ready on 7z (4 melds + 7z); player_1 holds 999p and is not
    ready but its 分张 tile 6z completes it. The 79th draw (player_3's, leaving 4 tiles) is
    ``draw79``; the 分张 tiles are 8s (player_0), 6z (player_1), 8p (player_2), 7z (player_3)."""
    hands = [
        "147m258p369s23477z",
        "123m456m789m999p6z",
        "258m258p147s1356z",
        "123m456m789m111p7z",
    ]
    env = deal(XJ, hands, last=draw79 + "8s6z8p7z")
    act(env, "player_0: discard 2z")
    discard_drawn_turns(env, 2)
    act(env, f"player_3: ready {env.view('player_3')['drawn']}")
    play_until(env, lambda e: e.view("player_0")["wall_remaining"] == 4)
    assert mover(env) == "player_3" and env.view("player_3")["drawn"] == draw79
    return env


def test_x4_no_kong_with_four_tiles_left_exposed():
    """X4: with 4 tiles left, three in hand give a pong claim but no kong."""
    env = fenzhang_deal("9p")
    assert legal(env) == {"discard 9p"}
    act(env, "player_3: discard 9p")
    assert mover(env) == "player_1" and legal(env) == {"pong", "pass"}
    act(env, "player_1: pass")


def test_x4_no_kong_with_four_tiles_left_concealed():
    """X4: a ready player drawing its fourth 1p with 4 tiles left may not kong (X5 otherwise)."""
    env = fenzhang_deal("1p")
    assert legal(env) == {"discard 1p"}
    act(env, "player_3: discard 1p")


def reach_fenzhang_winner():
    env = fenzhang_deal("9p")
    play(env, "player_3: discard 9p", "player_1: pass")
    return env


def test_x4_fenzhang_only_a_possible_winner_is_asked():
    """X4: each player draws one of the last four tiles in turn, starting with the player due to
    draw; only a player who can win (ready, X3) is asked; nothing is discarded."""
    env = reach_fenzhang_winner()
    assert mover(env) == "player_3"
    view = env.view("player_3")
    assert view["phase"] == "fenzhang" and legal(env) == {"win", "pass"}
    assert view["wall_remaining"] == 0
    assert view["concealed_counts"] == [14, 14, 14, 14]  # the tiles stay in the hands
    assert [env.view(a)["drawn"] for a in AGENTS] == ["8s", "6z", "8p", "7z"]
    assert [len(r) for r in view["discards"]] == [20, 20, 20, 20]  # no 分张 discards
    act(env, "player_3: win")
    res = result(env)
    assert res["winner"] == 3 and res["method"] == "self_draw" and res["tile"] == "7z"
    assert res["deltas"] == [-1.0, -1.0, -1.0, 3.0]


def test_x4_fenzhang_nobody_wins_hand_is_drawn():
    """X4: if nobody wins in 分张 the hand is drawn (荒庄); the dealer keeps the deal."""
    env = reach_fenzhang_winner()
    act(env, "player_3: pass")
    res = result(env)
    assert res["outcome"] == "draw" and res["winner"] is None and res["method"] is None
    assert res["deltas"] == [0.0] * 4 and res["next_dealer"] == 0
    assert all(env.terminations.values())


# ---------------------------------------------------------------------------------------- X5


def test_x5_kong_that_breaks_the_wait_makes_xianggong_who_pays_for_all():
    """X5: ready players 2 and 3 make exposed kongs that leave them not ready: each becomes 相公
    (public), unlocked, cannot declare ready again nor win; when player_1 wins, the two 相公
    split what all three losers would have paid."""
    hands = [
        "19m19p19s12345677z",
        "456m789m123s789s5z",  # waits 5z
        "1233345p456s789s",  # waits 3p/6p
        "1233345m456p789p",  # waits 3m/6m
    ]
    env = deal(XJ, hands, wall="6z8m2s3m3p2m3s5z", tail="6m9m")
    play(env, "player_0: discard 7z", "player_1: ready 6z", "player_2: ready 8m", "player_3: ready 2s")
    act(env, "player_0: discard 3m")
    assert mover(env) == "player_3" and legal(env) == {"kong", "pass"}
    rewards = act(env, "player_3: kong")
    assert rewards == {"player_0": -1.0, "player_1": 0.0, "player_2": 0.0, "player_3": 1.0}
    public = env.view("player_0")
    assert public["xianggong"] == [False, False, False, True]
    assert public["ready"] == [False, True, True, False]
    # 1245m456p789p + 6m: unlocked (any discard), but no ready (discarding 1m would wait on 2m)
    assert env.view("player_3")["drawn"] == "6m"
    options = legal(env)
    assert {"discard 1m", "discard 4p"} <= options
    assert not any(a.startswith("ready") for a in options) and "win" not in options
    act(env, "player_3: discard 1m")
    act(env, "player_0: discard 3p")
    assert mover(env) == "player_2" and legal(env) == {"kong", "pass"}
    act(env, "player_2: kong")
    assert env.view("player_1")["xianggong"] == [False, False, True, True]
    act(env, "player_2: discard 9m")
    assert env.view("player_3")["drawn"] == "2m"  # 22m456m456p789p + kong: complete
    assert "win" not in legal(env)
    act(env, "player_3: discard 2m")
    act(env, "player_0: discard drawn")
    act(env, "player_1: win")
    res = result(env)
    assert res["winner"] == 1 and res["method"] == "self_draw" and res["total_fan"] == 1
    assert res["deltas"] == [0.0, 3.0, -1.5, -1.5]
    assert res["kong_deltas"] == [-2.0, 0.0, 1.0, 1.0]
    settlement = [p for p in res["payments"] if p["reason"] != "kong"]
    assert sorted((p["from"], p["to"], p["points"], p["reason"]) for p in settlement) == [
        (2, 1, 1.5, "xianggong"),
        (3, 1, 1.5, "xianggong"),
    ]
    assert totals(env) == {a: res["deltas"][i] + res["kong_deltas"][i] for i, a in enumerate(AGENTS)}


def test_x5_kong_that_keeps_the_wait_stays_ready():
    """X5: a ready player may kong the tile just drawn; if still ready it is no 相公 and wins."""
    env = deal(XJ, ["123m456m789m111p7z9s", None, None, None], wall="1z2z3z1p", tail="7z")
    act(env, "player_0: ready 9s")
    discard_drawn_turns(env, 3)
    assert legal(env) == {"discard 1p", "concealed_kong 1p"}
    act(env, "player_0: concealed_kong 1p")
    view = env.view("player_0")
    assert view["ready"][0] and not view["xianggong"][0]
    act(env, "player_0: win")
    res = result(env)
    assert res["method"] == "kong_bloom"
    assert fans_of(res) == {"pinghu": 1, "gangshang_kaihua": 1, "gang": 1}


def test_x5_luxury_seven_pairs_must_win_with_the_fourth_copy():
    """X5 exception: ready on luxury seven pairs holding three 1m, drawing the fourth: `win` is
    the only legal action (no kong)."""
    env = deal(XJ, ["111m22m33p44p55s66s7z", None, None, None], wall="1z2z3z1m")
    act(env, "player_0: ready 7z")
    discard_drawn_turns(env, 3)
    assert legal(env) == {"win"}
    act(env, "player_0: win")
    res = result(env)
    assert fans_of(res) == {"haohua_qidui": 4} and res["deltas"] == [24.0, -8.0, -8.0, -8.0]


def test_x5_xianggong_cannot_win_by_kong_bloom():
    """X5: a 相公 can no longer win, not even by kong bloom (which needs no ready)."""
    env = deal(XJ, ["23334m456p999s11z7z", None, None, None], wall="2z3z4z3m5z6z7z9s", tail="5m6m")
    act(env, "player_0: ready 7z")  # waits 3m (333+24 or 33+234) and 1z
    discard_drawn_turns(env, 3)
    assert legal(env) == {"win", "discard 3m", "concealed_kong 3m"}
    act(env, "player_0: concealed_kong 3m")  # 24m456p999s11z: waits only 3m, all four held
    assert env.view("player_1")["xianggong"][0]
    act(env, "player_0: discard 2m")  # 45m456p999s11z + 9999s later
    discard_drawn_turns(env, 3)
    act(env, "player_0: concealed_kong 9s")
    assert env.view("player_0")["drawn"] == "6m"  # 456m456p11z + two kongs: complete
    assert "win" not in legal(env)


@pytest.mark.parametrize("pays_all", [True, False])
def test_x5_robbed_kong_with_a_xianggong_third_player(pays_all):
    """X5/X7: player_2 becomes 相公 by an exposed kong; player_3 then robs player_1's added
    kong: the 相公 pays the 3 x points in place of the robbed konger (xianggong_pays_all);
    with the flag off the konger pays them (X7)."""
    hands = [
        "5p147m28p369s23467z",
        "55p258m147s19p357z",  # pongs 5p, later adds the fourth
        "1233345s789p456m",  # ready on 3s 6s; its kong of 3s breaks the wait: 相公
        "123m456m789m46p11z",  # ready on 5p (closed 46p)
    ]
    env = deal(XJ, hands, wall="8s2s1p3z9p5p", tail="6m", xianggong_pays_all=pays_all)
    play(env, "player_0: discard 5p", "player_1: pong", "player_1: discard 7z")
    play(env, "player_2: ready 8s", "player_3: ready 2s")
    act(env, "player_0: discard 3s")
    assert mover(env) == "player_2" and legal(env) == {"kong", "pass"}
    act(env, "player_2: kong")
    assert env.view("player_0")["xianggong"] == [False, False, True, False]
    act(env, "player_2: discard 6m")
    discard_drawn_turns(env, 2)
    assert mover(env) == "player_1" and env.view("player_1")["drawn"] == "5p"
    act(env, "player_1: added_kong 5p")
    assert mover(env) == "player_3" and legal(env) == {"win", "pass"}
    act(env, "player_3: win")
    res = result(env)
    assert res["method"] == "rob_kong" and res["winner"] == 3 and res["total_fan"] == 1
    payer, reason = (2, "xianggong") if pays_all else (1, "rob_kong")
    settlement = [p for p in res["payments"] if p["reason"] != "kong"]
    assert settlement == [{"from": payer, "to": 3, "points": 3.0, "reason": reason}]
    expected = [0.0, 0.0, 0.0, 3.0]
    expected[payer] = -3.0
    assert res["deltas"] == expected
    assert res["kong_deltas"] == [-1.0, 0.0, 1.0, 0.0]  # player_2's exposed kong (下雨); the robbed one pays nothing


def test_x5_luxury_exception_in_fenzhang():
    """X5: the luxury-seven-pairs exception holds in 分张 too: `win` is the only legal action."""
    hands = ["47m 258p 369s 12347z 9m", None, None, "111m22m33p44p55s66s"]
    env = deal(XJ, hands, wall="8p9p1s", last="8s5z6z1m")
    act(env, "player_0: discard 7z")
    discard_drawn_turns(env, 2)
    act(env, "player_3: ready 1s")
    play_until(env, lambda e: e.view(mover(e))["phase"] == "fenzhang" or all(e.terminations.values()))
    assert mover(env) == "player_3" and legal(env) == {"win"}
    act(env, "player_3: win")
    assert fans_of(result(env)) == {"haohua_qidui": 4}


# ---------------------------------------------------------------------------------------- X6


@pytest.mark.parametrize(
    "hand14,ready,win,fans,total",
    [
        ("123m456m789m11p35s7z", "7z", "4s", {"pinghu": 1}, 1),
        ("111m222p333s444z5z7z", "7z", "5z", {"pengpenghu": 2}, 2),
        ("1122m3344p5566s7z9m", "9m", "7z", {"qidui": 3}, 3),
        ("1111m22p33p44s55s6z9m", "9m", "6z", {"haohua_qidui": 4}, 4),
        ("1111m23456789m5m7z", "7z", "5m", {"pinghu": 1, "qingyise": 2}, 3),
        ("111222333444m5m7z", "7z", "5m", {"pengpenghu": 2, "qingyise": 2}, 4),
        ("1122334455667m7z", "7z", "7m", {"qidui": 3, "qingyise": 2}, 5),  # beats pinghu reading
        ("1111223344556m7z", "7z", "6m", {"haohua_qidui": 4, "qingyise": 2}, 6),
    ],
    ids=["pinghu", "pengpenghu", "qidui", "haohua_qidui", "qingyise", "qing_peng", "qing_qidui", "qing_haohua"],
)
def test_x6_fan_table_and_points(hand14, ready, win, fans, total):
    """X6: shape fan + 2 for 清一色, the reading with most fan; points 2^(fan-1) from each (X7)."""
    res = result(dealer_self_draw(hand14, ready, win))
    assert fans_of(res) == fans
    assert res["total_fan"] == total
    points = 2.0 ** (total - 1)
    assert res["deltas"] == [3 * points, -points, -points, -points]


def test_x6_fan_cap_six():
    """X6: 清碰 4 + 杠上开花 1 + two kongs 2 = 7 fan, capped at 6 = 32 points."""
    env = deal(XJ, ["1111m2222m333m444m", None, None, None], tail="5m5m")
    act(env, "player_0: concealed_kong 1m")
    act(env, "player_0: concealed_kong 2m")
    act(env, "player_0: win")
    res = result(env)
    assert fans_of(res) == {"pengpenghu": 2, "qingyise": 2, "gangshang_kaihua": 1, "gang": 2}
    assert res["total_fan"] == 6
    assert res["deltas"] == [96.0, -32.0, -32.0, -32.0]
    assert res["kong_deltas"] == [6.0, -2.0, -2.0, -2.0]


def test_x6_register_pattern_and_extra_patterns():
    """X6: a registered pattern listed in `extra_patterns` adds its fan when its predicate holds."""
    seen = []

    def green_pair(hand) -> bool:
        seen.append((hand.tile, hand.method))
        return hand.counts[32] >= 2  # 66z

    register_pattern("test_x6_green_pair", green_pair)
    hand14 = "123m456m789m35s66z7z"
    res = result(dealer_self_draw(hand14, "7z", "4s", extra_patterns=(("test_x6_green_pair", 2),)))
    assert fans_of(res) == {"pinghu": 1, "test_x6_green_pair": 2} and res["total_fan"] == 3
    assert res["deltas"] == [12.0, -4.0, -4.0, -4.0]
    assert (parse_tiles("4s")[0], "self_draw") in seen
    res = result(dealer_self_draw(hand14, "7z", "4s"))  # not listed: not counted
    assert fans_of(res) == {"pinghu": 1}


def test_x6_unregistered_pattern_is_rejected():
    """X6: naming an unregistered pattern raises ValueError naming it."""
    with pytest.raises(ValueError, match="no_such_pattern_x6"):
        XJ.raw_env(extra_patterns=(("no_such_pattern_x6", 1),))
    with pytest.raises(ValueError):
        register_pattern("test_x6_not_callable", 3)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------- X7


def test_x7_self_draw_each_loser_pays_full_points():
    """X7 Decision: on a self-draw each of the other three pays the hand's full points."""
    res = result(dealer_self_draw("111m222p333s444z5z7z", "7z", "5z"))  # pengpenghu: 2 points
    assert res["deltas"] == [6.0, -2.0, -2.0, -2.0]
    assert sorted(p["from"] for p in res["payments"] if p["reason"] == "self_draw") == [1, 2, 3]


@pytest.mark.parametrize(
    "silver,base",
    [(None, 100.0), ([3500, 7000, 350, 3500], 10.0), ([10, 3500, 3500, 3500], 1.0)],
)
def test_x7_silver_and_base(silver, base):
    """X7: base = lowest silver // 35 (minimum 1); payments move points x base silver, rewards
    stay in points; info carries silver and base."""
    start = [3500.0] * 4 if silver is None else [float(x) for x in silver]
    env = dealer_self_draw("123m456m789m11p35s7z", "7z", "4s", silver=silver)
    res = result(env)
    assert res["deltas"] == [3.0, -1.0, -1.0, -1.0]  # points
    assert totals(env)["player_0"] == 3.0
    expected = [start[0] + 3 * base] + [x - base for x in start[1:]]
    for agent in AGENTS:
        assert env.infos[agent]["base"] == base and env.infos[agent]["silver"] == expected


def test_x7_base_of_the_next_hand_from_silver_at_its_start():
    """X7: each hand's base comes from the lowest silver at its own start."""
    env = XJ.raw_env()
    env.reset(seed=0)
    assert env.infos["player_0"]["base"] == 100.0
    env = dealer_self_draw("123m456m789m11p35s7z", "7z", "4s", num_hands=2)
    assert results(env)[0]["deltas"] == [3.0, -1.0, -1.0, -1.0]  # base 100 in hand 0
    assert env.infos["player_1"]["silver"] == [3800.0, 3400.0, 3400.0, 3400.0]
    assert env.infos["player_1"]["base"] == 3400 // 35  # hand 1 starts with these


# ---------------------------------------------------------------------------------------- X8


def test_x8_kong_payments_and_refund_on_a_drawn_hand():
    """X8: a concealed kong takes 1 from each other, an exposed kong 1 from the discarder, when
    they stand; on a drawn hand every kong payment is returned (kong_deltas end at zero)."""
    env = deal(XJ, ["1111m 5m 369p 147s 246z", None, "555m 258p 258s 1357z", None], tail="7z6z")
    rewards = act(env, "player_0: concealed_kong 1m")
    assert rewards == {"player_0": 3.0, "player_1": -1.0, "player_2": -1.0, "player_3": -1.0}
    assert env.infos["player_1"]["silver"] == [3800.0, 3400.0, 3400.0, 3400.0]  # X7: x base 100
    act(env, "player_0: discard 5m")
    rewards = act(env, "player_2: kong")
    assert rewards == {"player_0": -1.0, "player_1": 0.0, "player_2": 1.0, "player_3": 0.0}
    assert totals(env) == {"player_0": 2.0, "player_1": -1.0, "player_2": 0.0, "player_3": -1.0}
    play_until(env, lambda e: all(e.terminations.values()))
    res = result(env)
    assert res["outcome"] == "draw"
    assert res["kong_deltas"] == [0.0] * 4 and res["deltas"] == [0.0] * 4
    assert step_rewards_last(env) == {"player_0": -2.0, "player_1": 1.0, "player_2": 0.0, "player_3": 1.0}
    assert totals(env) == {a: 0.0 for a in AGENTS}
    reasons = [p["reason"] for p in res["payments"]]
    assert reasons.count("kong") == 4 and reasons.count("kong_refund") == 4


def step_rewards_last(env) -> dict[str, float]:
    from scenario import step_log

    return step_log(env)[-1][2]


# ---------------------------------------------------------------------------------------- X9


@pytest.mark.parametrize(
    "hand14,prelude,win,fans,discarder_pays",
    [
        ("23m456p789p111s55z9m", ["ready 9m"], "4m", {"pinghu": 1}, 1.0),
        ("1122m3344p5566s7z9m", ["ready 9m"], "7z", {"qidui": 3}, 12.0),  # 包三: 3 x 4
        ("1112334556789m9p", ["ready 9p"], "4m", {"pinghu": 1, "qingyise": 2}, 12.0),
        # pattern fan 2 + gang 1: 3 fan = 4 points but no 包三 (kong fans do not count)
        ("1111m222p333s44z55z", ["concealed_kong 1m", "ready 7z"], "4z", {"pengpenghu": 2, "gang": 1}, 4.0),
    ],
    ids=["pinghu", "qidui_baosan", "qingyise_baosan", "kong_fan_no_baosan"],
)
def test_x9_discard_win_discarder_pays(hand14, prelude, win, fans, discarder_pays):
    """X9: with allow_discard_win a ready player wins on a discard; the discarder pays the
    points, three times for a pattern fan of 3 or more (包三)."""
    env = deal(XJ, [None, None, None, hand14], dealer=3, wall=win, tail="7z", allow_discard_win=True)
    for name in prelude:
        act(env, f"player_3: {name}")
    act(env, f"player_0: discard {win}")
    assert mover(env) == "player_3" and legal(env) == {"win", "pass"}
    act(env, "player_3: win")
    res = result(env)
    assert res["method"] == "discard" and res["tile"] == win and fans_of(res) == fans
    assert res["deltas"] == [-discarder_pays, 0.0, 0.0, discarder_pays]
    assert [p for p in res["payments"] if p["reason"] == "discard"] == [
        {"from": 0, "to": 3, "points": discarder_pays, "reason": "discard"}
    ]


# ---------------------------------------------------------------------------------------- X10


def test_x10_dealer_keeps_the_deal_on_a_drawn_hand():
    """X10: a drawn hand keeps the dealer."""
    env = deal(XJ, [None, None, None, None], dealer=2, num_hands=2)
    play_until(env, lambda e: len(results(e)) == 1)
    res = results(env)[0]
    assert res["outcome"] == "draw" and res["dealer"] == 2 and res["next_dealer"] == 2
    assert env.view("player_0")["dealer"] == 2 and env.view("player_0")["hand_index"] == 1
    assert env.agent_selection == "player_2"


@pytest.mark.parametrize("winner", [0, 1])
def test_x10_dealer_win_keeps_other_win_passes(winner):
    """X10/R11: the dealer keeps the deal when it wins; another winner passes it to the next seat."""
    hand = "123m456m789m11p35s"
    if winner == 0:
        env = deal(XJ, [hand + "7z", None, None, None], wall="1z2z3z4s", num_hands=2)
        act(env, "player_0: ready 7z")
    else:
        env = deal(XJ, [None, hand, None, None], dealer=0, wall="7z1z2z3z4s", num_hands=2)
        act(env, f"player_0: discard {tile_name(parse_tiles(env.view('player_0')['hand'])[-1])}")
        act(env, "player_1: ready 7z")
    discard_drawn_turns(env, 3)
    act(env, f"player_{winner}: win")
    res = results(env)[0]
    assert res["winner"] == winner and res["next_dealer"] == winner
    assert env.view("player_3")["dealer"] == winner
    out = play_out(env)
    assert len(out) == 2 and out[1]["dealer"] == winner
