"""Changchun scenario tests, one or more per RULES.md section C1–C13 (and the R13 bao secret).

Every scenario builds its deal by hand in tile notation (`scenario.deal`: the dealer is the seat
dealt 14 tiles, seat 0 unless said otherwise; ``wall`` is the head in draw order and ``tail``
the replacement draws in the order taken), plays actions by name and checks the legal action
names, the step rewards and ``info["result"]``. Expectations come from RULES.md, not from the
engine.

Seats move 0 → 1 → 2 → 3 (R2). ``IDLE`` hands hold no pair and no two tiles within a chow's
reach, so a seat holding one never claims anything and never wins.
"""

from __future__ import annotations

import numpy as np
import pytest
from scenario import act, deal, fill_hands, fill_wall, legal, play, result, totals

from mahjong_env import actions as A
from mahjong_env import changchun_v0
from mahjong_env.observation import CHANNELS
from mahjong_env.tiles import format_tiles, parse_tiles, tile_index
from mahjong_env.wall import Wall

# no pair, no two tiles within a chow's reach, no complete special group: never claims or wins
IDLE = ("147m258p369s1256z", "258m369p147s1347z", "369m147p258s2345z")
BAO_ROW = CHANNELS.index("bao")


def cc(hands: list[str], wall: str | None = None, **kwargs):
    """A Changchun raw env with a hand-built deal (`scenario.deal`)."""
    return deal(changchun_v0, hands, wall, **kwargs)


def view(env, seat: int) -> dict:
    return env.view(f"player_{seat}")


def full_wall(hands: list[str], wall: str | None = None, tail: str | None = None) -> list[int]:
    """The wall `scenario.deal` builds, as tile indices in draw order."""
    return parse_tiles(fill_wall(hands, wall, tail))


def phase(env) -> str:
    return env.view(env.agent_selection)["phase"]


def rewards_list(rewards: dict[str, float]) -> list[float]:
    return [rewards[f"player_{i}"] for i in range(4)]


def tsumogiri(env, seat: int) -> dict[str, float]:
    """``seat`` discards the tile it just drew."""
    drawn = view(env, seat)["drawn"]
    assert drawn is not None, f"player_{seat} has no drawn tile"
    return act(env, f"player_{seat}: discard {drawn}")


def step_on(env) -> None:
    """One neutral step: pass where offered (claims, bao view, 对宝), else discard the drawn
    tile (the lowest tile on the dealer's first turn)."""
    names = legal(env)
    assert names, "the hand ended"
    if "pass" in names:
        act(env, "pass")
        return
    drawn = env.view(env.agent_selection)["drawn"]
    if drawn is not None and f"discard {drawn}" in names:
        act(env, f"discard {drawn}")
    else:
        act(env, min((n for n in names if n.startswith("discard ")), key=lambda n: tile_index(n[8:])))


def run_until(env, seat: int, *, max_steps: int = 400) -> None:
    """`step_on` until ``seat`` is to move on its own turn."""
    for _ in range(max_steps):
        if env.agent_selection == f"player_{seat}" and phase(env) == "turn":
            return
        step_on(env)
    raise AssertionError("never reached")


def play_to_end(env, *, max_steps: int = 400) -> dict:
    """`step_on` until the hand ends; returns the result."""
    for _ in range(max_steps):
        if all(env.terminations.values()):
            return result(env)
        step_on(env)
    raise AssertionError("the hand did not end")


def safe_discard(env, seat: int, against: str) -> str:
    """A tile of ``seat``'s hand that no tile of ``against`` can pong, chow or win with: a
    different kind, and not a suited tile within two ranks of one in ``against``."""
    theirs = parse_tiles(against)
    for t in parse_tiles(view(env, seat)["hand"]):
        if all(t != x and not (t < 27 and x < 27 and t // 9 == x // 9 and abs(t - x) <= 2) for x in theirs):
            return format_tiles([t])
    raise AssertionError("no safe discard")


def fans(res: dict) -> dict[str, int]:
    return {name: fan for name, fan in res["fans"]}


def only_discards_or_ready(names: set[str]) -> bool:
    return all(n.startswith(("discard ", "ready ")) for n in names)


# ---------------------------------------------------------------------------------------- C1


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


# ---------------------------------------------------------------------------------------- C2

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


# ---------------------------------------------------------------------------------------- C3


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


# ---------------------------------------------------------------------------------------- C4

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


# ---------------------------------------------------------------------------------------- C5

SPECIALS = {"special_winds", "special_dragons", "special_ones", "special_nines"}


@pytest.mark.parametrize("cfg", [{}, {"profile": "mil2024"}], ids=["seed", "mil2024"])
def test_c5_dealer_declares_every_special_group(cfg):
    # C5: 旋风杠 takes 4 tiles and draws one replacement from the wall's end; 喜杠 幺蛋 九蛋 take
    # 3 tiles and draw nothing; each kind once; each is paid as an exposed kong (C12: 1 point
    # from each other player), at once, and none can be robbed
    env = cc(["1m9m1p9p1s9s1234z567z5m", IDLE[0], IDLE[1], IDLE[2]], tail="8p", **cfg)
    assert SPECIALS <= legal(env)
    assert rewards_list(act(env, "player_0: special_winds")) == [3, -1, -1, -1]
    v = view(env, 0)
    assert v["melds"][0] == [{"kind": "special_winds", "tiles": "1234z", "from": None}]
    assert v["drawn"] == "8p" and v["concealed_counts"][0] == 11 and v["wall_remaining"] == 82
    assert "special_winds" not in legal(env) and SPECIALS - {"special_winds"} <= legal(env)
    expected_sizes = {"special_dragons": 8, "special_ones": 5, "special_nines": 2}
    for name, size in expected_sizes.items():
        assert env.agent_selection == "player_0" and phase(env) == "turn"
        assert rewards_list(act(env, f"player_0: {name}")) == [3, -1, -1, -1]
        v = view(env, 0)
        assert v["concealed_counts"][0] == size and v["wall_remaining"] == 82
        assert name not in legal(env)
    assert [m["tiles"] for m in view(env, 0)["melds"][0]] == ["1234z", "567z", "1m1p1s", "9m9p9s"]
    assert view(env, 0)["hand"] == "5m8p"
    names = legal(env)
    assert {"discard 5m", "discard 8p"} <= names and only_discards_or_ready(names)
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


# ---------------------------------------------------------------------------------------- C6


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


# ---------------------------------------------------------------------------------------- C7

C7_P0 = "3569m369p34s13456z"


def _ready_player_1(hand1: str, wall: str, tail: str | None = None, **kwargs):
    """player_1 draws the wall's first tile and declares ready with it; passes the bao view."""
    env = cc([C7_P0, hand1, IDLE[0], IDLE[2]], wall=wall, tail=tail, **kwargs)
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
    env = cc([C7_P0, "567z123m456p789s5z", IDLE[0], None], wall="2z7m8p1s7z", tail="4m")
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


# ---------------------------------------------------------------------------------------- C8


def indicator_index(s: int, tail_draws: int = 0, wall_size: int = 83) -> int:
    """R4/C8: absolute wall index of the upper tile of the s-th stack from the tail, with
    ``tail_draws`` replacement draws made and no head draw reaching the tail."""
    return wall_size - tail_draws - (tail_draws % 2) - 2 * s


def wall_with(hands: list[str], wall: str = "", tail: str = "", at: dict[int, str] | None = None) -> str:
    """The whole wall (draw order) as `scenario.fill_wall` builds it, with the tile named in
    ``at`` moved to each index (swapped with a filler copy of that tile)."""
    tiles = full_wall(hands, wall, tail)
    fixed = set(range(len(parse_tiles(wall)))) | set(range(len(tiles) - len(parse_tiles(tail)), len(tiles)))
    fixed |= set((at or {}).keys())
    for index, name in (at or {}).items():
        t = tile_index(name)
        if tiles[index] != t:
            j = next(i for i in range(len(tiles)) if i not in fixed and tiles[i] == t)
            tiles[index], tiles[j] = tiles[j], tiles[index]
    return format_tiles(tiles)


def bao_row(env, seat: int) -> np.ndarray:
    return env.observe(f"player_{seat}")["observation"][BAO_ROW]


C8_WAIT_1Z_4Z = "222m345p678s11z44z"


def _bao_deal(hand1: str, head: str, indicator: str, dice: list[int], tail: str = "", others=(IDLE[0], IDLE[2]), **kw):
    hands = [C7_P0, hand1, others[0], others[1]]
    at = {indicator_index(dice[0]): indicator}
    return cc(hands, wall=wall_with(hands, head, tail, at), dice=dice, **kw)


def test_c8_roll_sets_aside_the_upper_tile_of_the_sth_stack_even():
    # C8/R4: with no tail draw (k = 0) the s-th stack from the tail is (n-2s, n-2s+1)
    env = _bao_deal(C8_WAIT_1Z_4Z, head="9p", indicator="8m", dice=[5])
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
    hands = [C7_P0, "1234z222m345p678s", IDLE[0], IDLE[2]]
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
    env = _bao_deal(C8_WAIT_1Z_4Z, head="5s", indicator="8m", dice=[5], others=("123m789p789s666z5s", IDLE[2]))
    act(env, "player_0: discard 9m")
    act(env, "player_1: ready 5s")
    assert env.agent_selection == "player_2" and legal(env) == {"win", "pass"}
    act(env, "player_2: win")
    assert result(env)["winner"] == 2 and view(env, 0)["dice"] == [] and env.game.bao is None


def test_c8_view_offered_after_declaring_and_at_turn_start_bao_seen_only_after_view():
    env = _bao_deal(C8_WAIT_1Z_4Z, head="9p7m8p1s2m", indicator="8m", dice=[5])
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


C8_SPECIAL_345 = "567z45m123p789s99p"  # declares 喜杠, then ready: waits 3m 6m (two-sided)


def test_c8_duibao_win_right_after_viewing():
    # C8 对宝 (C10: 自摸 +1, 宝牌 +2, 对宝 +2 over 平胡; the 喜杠 rules out 立胡)
    env = _bao_deal(C8_SPECIAL_345, head="7m", indicator="3m", dice=[5])
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
    env = _bao_deal(C8_SPECIAL_345, head="7m7p8p2s2s", indicator="2s", dice=[5])
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
    env = _bao_deal("567z12345m789s99p", head="7m7p8p1s6m", indicator="6m", dice=[5])
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
    env = _bao_deal(C8_WAIT_1Z_4Z, head="9p7p7p7p2m", indicator="7p", dice=[5, 5, 3], others=others)
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
    hands = fill_hands([None, C8_WAIT_1Z_4Z, None, None], "", dealer=0)
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
    env = _bao_deal(C8_WAIT_1Z_4Z, head="9p7p7p7p2m", indicator="7p", dice=[5, 5], others=others, max_bao_rolls=2)
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
    hands = [C7_P0, C8_WAIT_1Z_4Z, IDLE[0], "123m789p789s777z5s"]
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


# ---------------------------------------------------------------------------- R13 / C8 secret


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
    hands = [C7_P0, C8_WAIT_1Z_4Z, IDLE[0], IDLE[2]]
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


# ---------------------------------------------------------------------------------------- C9

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


# --------------------------------------------------------------------------------------- C10

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
    env = _bao_deal("13m123p789s777z99p", head="7m", indicator="2m", dice=[5], fan_cap=cap)
    act(env, "player_0: discard 9m")
    play(env, "player_1: ready 7m", "player_1: view_bao", "player_1: win")
    res = result(env)
    assert fans(res) == {"pinghu": 1, "zimo": 1, "mobao": 2, "duibao": 2, "lihu": 1, "jiahu": 1}
    assert res["total_fan"] == cap
    assert res["deltas"] == [-points, 3 * points, -points, -points]


# --------------------------------------------------------------------------------------- C11

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
    hands = [C7_P0, C8_WAIT_1Z_4Z, IDLE[0], C11_HAND]
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


# --------------------------------------------------------------------------------------- C12

C12_BASE = "479m58p479s23z"  # ten tiles that never meet the kong tiles below
BIG_EGGS = {"1s", "1p", "5z", "6z", "7z"}
C12_TILES = ["2m", "1m", "9p", "1s", "1p", "5z", "6z", "7z"]


@pytest.mark.parametrize("tile", C12_TILES)
def test_c12_concealed_kong_pays_two_or_four(tile):
    # C12: concealed kong 2 from each other player; 大蛋 (1s 1p 5z 6z 7z) 4
    env = cc([tile[0] * 4 + tile[1] + C12_BASE, None, None, None], dealer=0)
    each = 4 if tile in BIG_EGGS else 2
    assert rewards_list(act(env, f"player_0: concealed_kong {tile}")) == [3 * each, -each, -each, -each]


@pytest.mark.parametrize("tile", C12_TILES)
def test_c12_exposed_kong_pays_one_or_two_from_each(tile):
    # C12: an exposed kong is paid by each of the other three (not only the discarder): 1, 大蛋 2
    env = cc([None, None, None, tile[0] * 3 + tile[1] + C12_BASE], wall=tile, dealer=0)
    act(env, f"player_0: discard {safe_discard(env, 0, tile + C12_BASE)}")
    act(env, f"player_1: discard {tile}")
    assert env.agent_selection == "player_3" and legal(env) == {"pong", "kong", "pass"}
    each = 2 if tile in BIG_EGGS else 1
    assert rewards_list(act(env, "player_3: kong")) == [-each, -each, -each, 3 * each]


@pytest.mark.parametrize("tile", C12_TILES)
def test_c12_added_kong_pays_one_or_two_from_each(tile):
    env = cc([None, None, None, tile[0] * 2 + tile[1] + C12_BASE + "1z"], wall=tile + "6s6s6s" + tile, dealer=0)
    act(env, f"player_0: discard {safe_discard(env, 0, tile + C12_BASE + '1z')}")
    act(env, f"player_1: discard {tile}")
    play(env, "player_3: pong", "player_3: discard 1z")
    for seat in (0, 1, 2):
        tsumogiri(env, seat)
    assert view(env, 3)["drawn"] == tile
    each = 2 if tile in BIG_EGGS else 1
    assert rewards_list(act(env, f"player_3: added_kong {tile}")) == [-each, -each, -each, 3 * each]


# --------------------------------------------------------------------------------------- C13


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
    env = cc(["2222m" + C12_BASE, None, None, None], dealer=0)
    act(env, "player_0: concealed_kong 2m")
    res = play_to_end(env)
    assert res["outcome"] == "draw" and view(env, 0)["wall_remaining"] == 15
    assert res["kong_deltas"] == [6, -2, -2, -2]
    assert all(p["reason"] != "kong_refund" for p in res["payments"])
    assert totals(env) == {"player_0": 6, "player_1": -2, "player_2": -2, "player_3": -2}


def test_c13_no_kong_whose_replacement_breaks_the_reserve():
    # C13: a kong needs n >= 14 + (k mod 2) after its replacement: with n = 16 after the draw
    # (k = 0 -> 1: 15 >= 15) it is offered, with n = 15 it is not
    hands = fill_hands(["333p147m258s9s1356z", None, None, "222m" + C12_BASE], "2m3p", dealer=0)
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
    env = _bao_deal(C8_WAIT_1Z_4Z, head="9p", indicator="8m", dice=[5])
    act(env, "player_0: discard 9m")
    act(env, "player_1: ready 9p")
    res = play_to_end(env)
    assert res["outcome"] == "draw"
    assert env.game.wall.slots == 14 and view(env, 0)["wall_remaining"] == 13


def test_c13_a_replacement_that_skips_the_indicator_slot_counts_two_slots():
    # C13/R4: n counts the set-aside indicator's slot; a replacement draw that skips that slot
    # at the tail end leaves n two smaller, so the kong is judged by that new n: with the
    # indicator the lone tile at the tail (k = 1) and n = 15, the replacement would leave 13
    hands = ["1m4m7m1p2p8p3s6s5z6z7z3z2z9m", C8_WAIT_1Z_4Z, "147m258p9999s256z", "369m666p147s2345z"]
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


# --------------------------------------------------------------------------------------- C14
# The MIL 2024 fields, each off by default (the seed) and on in profile="mil2024"


def test_c14_xuanfeng_three_winds_declared_then_the_fourth_added():
    # C14 xuanfeng_three_winds: 1z2z3z dealt make a 3-tile 旋风杠 (no replacement, C5); the
    # drawn 4z is no dealt tile but joins it as an addition on the first turn (C6), which stands
    # unrobbed and draws a replacement
    hands = [C7_P0, "258m369p147s1235z", IDLE[1], IDLE[2]]
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


def test_c14_xuanfeng_three_winds_keeps_the_four_wind_group():
    # C14: with four different winds dealt the declaration is still the 4-tile group (C5)
    env = cc(["1234z5z258m369p147s", IDLE[0], IDLE[1], IDLE[2]], tail="8m", xuanfeng_three_winds=True)
    act(env, "player_0: special_winds")
    v = view(env, 0)
    assert v["melds"][0][0]["tiles"] == "1234z" and v["drawn"] == "8m" and v["wall_remaining"] == 82


YAOJI_HAND = "23589m369p147s56z"  # dealt: 5z 6z (喜杠 without 7z), 9m 9p (九蛋 without 9s), one 1s


@pytest.mark.parametrize("wild", [False, True])
def test_c14_yaoji_wild_stands_in_and_is_added_to_any_group(wild):
    # C14 yaoji_wild (小鸡飞蛋): the dealt 1s completes one group (5z6z+1s: a 喜杠); the drawn
    # 1s is no dealt tile, so it completes no second group, but it may be added to a declared
    # one; it is a 1s in the meld (C9, C12: an addition pays 1 from each)
    hands = [C7_P0, YAOJI_HAND, IDLE[1], IDLE[2]]
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
    hands = [C7_P0, YAOJI_HAND, IDLE[1], "23s123m789p222z88s"]
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
    env = cc([C7_P0, CLAIMED_FIRST, IDLE[1], IDLE[2]], tail="8m", claimed_first_turn_no_add=no_add)
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
    env = cc([C7_P0, "99p23m345p567s88s4s", IDLE[1], IDLE[2]], ready_needs_terminal=True)
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
    hands = fill_hands(["333p147m258s9s1356z", None, None, "222m" + C12_BASE], "2m3p", dealer=0)
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
    hands = [C7_P0, C8_WAIT_1Z_4Z, IDLE[0], "123m789p789s777z5s"]
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
    env = _bao_deal(C8_SPECIAL_345, head="7m", indicator="3m", dice=[5], mobao_fan=mobao_fan, duibao_fan=duibao_fan)
    act(env, "player_0: discard 9m")
    play(env, "player_1: special_dragons", "player_1: ready 7m", "player_1: view_bao", "player_1: win")
    res = result(env)
    assert fans(res) == {"pinghu": 1, "zimo": 1, "mobao": mobao_fan, "duibao": duibao_fan}
    points = 2 ** (total - 1)
    assert res["total_fan"] == total and res["deltas"] == [-points, 3 * points, -points, -points]


def test_c11_baozhuang_spares_a_ready_discarder_when_the_rolls_ran_out():
    # C11 as amended: with no bao left (max_bao_rolls spent), a ready discarder is not covered
    # by unready_discarder_pays_all: each payer pays its own share (discard_all_pay)
    others = (IDLE[0], "13m123p789s222z55s")  # player_3 waits on 2m (夹胡)
    env = _bao_deal(
        C8_WAIT_1Z_4Z,
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


def test_c8_huanbao_returns_the_indicator_to_the_tail_end_when_tail_draws_passed_it():
    # C8 换宝 as amended: two replacement draws passed the indicator's slot (one die: s = 1, the
    # stack at the tail, index 81); after the change it goes to the tail end (the next
    # replacement draw), and the new roll counts from there
    hands = fill_hands([None, C8_WAIT_1Z_4Z, "147m6666p9999s57z", None], "9p7p7p7p" + "8s7p9m", dealer=0)
    wall = wall_with(hands, "9p7p7p7p", "", {82: "8s", 81: "7p", 80: "9m"})
    env = cc(hands, wall=wall, dealer=0, dice=[1, 2], bao_dice=1)
    act(env, f"player_0: discard {safe_discard(env, 0, C8_WAIT_1Z_4Z + '6p9s7p')}")
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


def test_c8_put_back_goes_to_the_tail_end_when_head_draws_passed_the_slot():
    # C8/R4: the indicator set aside next to the head; head draws skip its slot; once the head
    # has passed it, putting it back puts it at the tail end (the next replacement draw)
    wall = Wall(parse_tiles("1m2m3m4m5m6m"))
    assert wall.set_aside(1) == tile_index("2m")
    assert [wall.draw_head(), wall.draw_head()] == parse_tiles("1m3m")
    assert wall.remaining == 3 and wall.slots == 3
    wall.put_back()
    assert wall.gap is None and wall.live_tiles() == parse_tiles("4m5m6m2m")
    assert wall.draw_tail() == tile_index("2m")


def test_c14_final_draw_of_the_seen_bao_is_a_bao_win():
    # C14 final_draws with C8 摸宝: player_1 (ready, bao 8m seen) makes the fourth final draw
    # (index 68) and draws an 8m: win (bao_draw) or pass, no discard
    hands = [C7_P0, C8_WAIT_1Z_4Z, IDLE[0], IDLE[2]]
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
    hands = [C7_P0, C8_WAIT_1Z_4Z, IDLE[0], IDLE[2]]
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
