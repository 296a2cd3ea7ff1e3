"""Changchun mahjong 长春麻将 (RULES.md C1–C13).

Chow from the previous player; win > pong > kong > chow with 截胡; the first-turn special kongs
旋风杠 喜杠 幺蛋 九蛋 and their additions (抢胡/抢叉 on an addition); optional ready (上听) that
locks the hand; the bao 宝牌 (rolled, viewed, 对宝, 摸宝, 换宝); the winning conditions
三色全 幺九 一叉 手把一; per-payer fans 2^(F−1) capped at 64; kong payments never refunded; seven
whole stacks kept in the wall. MIL 2024 alternatives are configuration fields.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from mahjong_env import actions as A
from mahjong_env import hand
from mahjong_env.engine.state import Context, Meld, SeatState
from mahjong_env.rules.base import RuleConfig, RuleSet, bits
from mahjong_env.tiles import is_dragon, rank_of

__all__ = ["ChangchunConfig", "ChangchunRules", "SPECIAL_GROUPS", "BIG_EGG_KINDS"]

# C5: each special group's tiles (and the kinds that may be added to it, C6)
SPECIAL_GROUPS: dict[str, tuple[int, ...]] = {
    "special_winds": (27, 28, 29, 30),
    "special_dragons": (31, 32, 33),
    "special_ones": (0, 9, 18),
    "special_nines": (8, 17, 26),
}
_DECLARE_ACTION = dict(zip(SPECIAL_GROUPS, A.SPECIAL_DECLARATIONS))
_GROUP_OF_TILE = {t: kind for kind, tiles in SPECIAL_GROUPS.items() for t in tiles}
BIG_EGG_KINDS = frozenset({18, 9, 31, 32, 33})  # C12 大蛋: 1s 1p 5z 6z 7z
_SELF_DRAWN = ("self_draw", "bao_draw", "bao_match")


@dataclasses.dataclass(frozen=True)
class ChangchunConfig(RuleConfig):
    """Rule fields of Changchun mahjong; defaults follow the seed, MIL alternatives are off."""

    concealed_kong_visible: bool = True
    """R7: the seed shows a concealed kong's four tiles ("将这四张牌亮出")."""
    require_ready_to_win: bool = False
    """C7 Decision (MIL 八-1): ready is optional for ordinary wins; True requires it."""
    allow_seven_pairs: bool = False
    """C9: seven pairs as a winning form (七对 +3)."""
    bao_dice: int = 2
    """C8: dice rolled for the bao (the seed uses 2, MIL 1)."""
    bao_change_counts_melds: bool = False
    """C8 换宝 (MIL): count every visible copy of the bao's kind, not only discards."""
    max_bao_rolls: int = 6
    """C8: bao rolls in a hand after which the hand has no bao."""
    concealed_kong_keeps_closed: bool = False
    """C10 立胡 (MIL): concealed kongs do not break a closed hand."""
    fan_cap: int = 7
    """C10: fan cap per payer (7 fan = 64 points)."""
    discard_all_pay: bool = False
    """C11 (MIL): on a discard win all three pay, the discarder with 点炮."""
    dealer_pays_extra: bool = False
    """C11 (MIL): 庄 +1 also in the fan of a payer who is the dealer."""
    unready_discarder_pays_all: bool = False
    """C11 包庄 (MIL): a discarder that is not ready, or has not seen the bao, pays every share."""
    rob_added_kong: bool = True
    """C11: others may win on an ordinary added kong's tile (抢杠, as MIL)."""

    def validate(self) -> None:
        if self.bao_dice not in (1, 2):
            raise ValueError(f"ChangchunConfig.bao_dice must be 1 or 2, got {self.bao_dice}")
        if self.max_bao_rolls < 1:
            raise ValueError(f"ChangchunConfig.max_bao_rolls must be >= 1, got {self.max_bao_rolls}")
        if not 1 <= self.fan_cap <= 30:
            raise ValueError(f"ChangchunConfig.fan_cap must be in 1..30, got {self.fan_cap}")


class ChangchunRules(RuleSet):
    name = "changchun"
    uses_bao = True
    priority = {A.WIN: 4, A.PONG: 3, A.KONG: 2, A.CHOW_LOW: 1, A.CHOW_MID: 1, A.CHOW_HIGH: 1}  # C4

    config: ChangchunConfig

    # --- winning hands (C9)

    def readings(self, st: SeatState, counts: list[int]) -> list[hand.Decomposition | None]:
        """Readings of a complete hand that satisfy every C9 condition (None = seven pairs)."""
        seven = self.config.allow_seven_pairs and not st.melds and hand.is_seven_pairs(counts)
        if not seven and not hand.is_complete(counts):
            return []
        whole = self.all_tiles(st, counts)
        if not (any(whole[0:9]) and any(whole[9:18]) and any(whole[18:27])):  # 三色全
            return []
        if not any(whole[t] for t in (0, 8, 9, 17, 18, 26, 27, 28, 29, 30, 31, 32, 33)):  # 幺九
            return []
        out: list[hand.Decomposition | None] = [None] if seven else []
        if not hand.is_complete(counts):
            return out
        melded_triplet = any(m.kind != "chow" for m in st.melds)
        # C9.4 手把一: one concealed tile (concealed kongs count as concealed tiles, as in C3)
        single = sum(counts) == 2 and not any(m.kind == "concealed_kong" for m in st.melds)
        for d in hand.decompositions(counts):
            if not (melded_triplet or d.triplets or is_dragon(d.pair)):  # 一叉
                continue
            if single and self.has_chow(st):
                continue
            out.append(d)
        return out

    def winning_mask(self, game: Any, seat: int, counts: list[int]) -> int:
        st = game.seats[seat]
        mask = self.standard_waits(st, counts, self.config.allow_seven_pairs)
        for t in bits(mask):
            counts[t] += 1
            if not self.readings(st, counts):
                mask ^= 1 << t
            counts[t] -= 1
        return mask

    def ready_discards(self, game: Any, seat: int) -> int:
        st = game.seats[seat]
        counts = st.counts
        candidates = hand.ready_discards(counts)
        if self.config.allow_seven_pairs and not st.melds and sum(c >> 1 for c in counts) >= 6:
            candidates |= sum(1 << t for t in range(34) if counts[t])
        out = 0
        for t in bits(candidates):
            counts[t] -= 1
            if self.winning_mask(game, seat, counts):
                out |= 1 << t
            counts[t] += 1
        return out

    # --- wins

    def _may_win(self, st: SeatState, tile: int | None) -> bool:
        if self.config.require_ready_to_win and not st.ready:
            return False
        return not (tile is not None and self.config.passed_win_lock and self.passed(st, tile))

    def self_win(self, game: Any, seat: int) -> str | None:
        st = game.seats[seat]
        if not self._may_win(st, None):
            return None
        drawn = st.drawn
        if st.ready and st.bao_seen and game.bao is not None and drawn == game.bao:  # C8 摸宝
            st.counts[drawn] -= 1
            waits = self.winning_mask(game, seat, st.counts)
            st.counts[drawn] += 1
            if waits:
                return "bao_draw"
        return "self_draw" if self.readings(st, st.counts) else None

    def _wins_with(self, st: SeatState, tile: int) -> bool:
        if not st.shape_waits() >> tile & 1 or not self._may_win(st, tile):
            return False
        st.counts[tile] += 1
        ok = bool(self.readings(st, st.counts))
        st.counts[tile] -= 1
        return ok

    def _single_left(self, st: SeatState, removed: int, gained: int, making_chow: bool = False) -> bool:
        """C3: would the player, with an exposed chow, keep one concealed tile after discarding?"""
        if not (making_chow or self.has_chow(st)):
            return False
        concealed = sum(st.counts) - removed + gained - 1
        concealed += 4 * sum(1 for m in st.melds if m.kind == "concealed_kong")
        return concealed == 1

    def claim_options(self, game: Any, seat: int, tile: int, source: int, distance: int) -> list[int]:
        st = game.seats[seat]
        counts = st.counts
        n = counts[tile]
        options = []
        if self._wins_with(st, tile):
            options.append(A.WIN)
        if st.ready:
            if n == 3 and self.wall_allows_kong(game) and self._same_waits(game, seat, tile, 3):
                options.append(A.KONG)
            return options
        if n >= 2 and not self._single_left(st, 2, 0):
            options.append(A.PONG)
        if n == 3 and self.wall_allows_kong(game) and not self._single_left(st, 3, 1):
            options.append(A.KONG)
        if distance == 1 and tile < 27 and not self._single_left(st, 2, 0, True):  # C3
            r = rank_of(tile)
            if r <= 7 and counts[tile + 1] and counts[tile + 2]:
                options.append(A.CHOW_LOW)
            if 2 <= r <= 8 and counts[tile - 1] and counts[tile + 1]:
                options.append(A.CHOW_MID)
            if r >= 3 and counts[tile - 2] and counts[tile - 1]:
                options.append(A.CHOW_HIGH)
        return options

    def rob_options(self, game: Any, seat: int, tile: int, konger: int, kind: str) -> list[int]:
        st = game.seats[seat]
        options = []
        if (kind == "special_add" or self.config.rob_added_kong) and self._wins_with(st, tile):
            options.append(A.WIN)  # 抢胡 / 抢杠
        if kind == "special_add" and not st.ready and st.counts[tile] >= 2 and not self._single_left(st, 2, 0):
            options.append(A.PONG)  # 抢叉
        return options

    def duibao_possible(self, game: Any, seat: int) -> bool:
        st = game.seats[seat]
        return bool(self.winning_mask(game, seat, st.counts) >> game.bao & 1)

    # --- kongs (C5, C6, C7, C12, C13)

    def wall_allows_kong(self, game: Any) -> bool:
        wall = game.wall
        n, k = wall.slots - 1, wall.tail_draws + 1
        return n >= 14 + (k & 1)  # C13: the replacement never breaks into the seven stacks

    def before_draw(self, game: Any, seat: int) -> str | None:
        wall = game.wall
        return "exhausted" if wall.slots <= 14 + (wall.tail_draws & 1) else None

    def _same_waits(self, game: Any, seat: int, tile: int, count: int) -> bool:
        """C7: a ready player's kong must keep exactly the same winning tiles."""
        st = game.seats[seat]
        st.counts[tile] -= count
        # C7/C9: judge the hand after the kong, its tiles among the melds (三色全, 幺九, 一叉, 空听)
        st.melds.append(Meld("kong", [tile] * (4 if count >= 3 else 1), tile, None))
        same = self.winning_mask(game, seat, st.counts) == st.ready_waits
        st.melds.pop()
        st.counts[tile] += count
        return same

    def kong_allowed(self, game: Any, seat: int, kind: str, tile: int) -> bool:
        st = game.seats[seat]
        if st.ready:
            return self._same_waits(game, seat, tile, 4 if kind == "concealed_kong" else 1)
        if kind == "concealed_kong":
            return True
        return not self._single_left(st, 1, 1)

    def special_group_tiles(self, kind: str) -> tuple[int, ...]:
        return SPECIAL_GROUPS[kind]

    def special_actions(self, game: Any, seat: int) -> list[int]:
        st = game.seats[seat]
        counts = st.counts
        acts = []
        if st.first_turn:  # C5: declarations from the dealt tiles only
            for kind, tiles in SPECIAL_GROUPS.items():
                if kind in st.specials or not all(counts[t] and st.dealt[t] for t in tiles):
                    continue
                if len(tiles) == 4 and not self.wall_allows_kong(game):
                    continue
                if st.ready or self._single_left(st, len(tiles), len(tiles) - 3):
                    continue
                acts.append(_DECLARE_ACTION[kind])
        if not st.specials or game.context == Context.CLAIM:
            return acts
        if st.first_turn and seat == game.dealer:  # C6: 庄家第一手不允许补杠
            return acts
        if not self.wall_allows_kong(game):
            return acts
        if st.ready:  # C6/C7: a ready player may add only the tile just drawn
            candidates: Any = [st.drawn] if st.drawn is not None else []
        else:
            candidates = range(34)
        for t in candidates:
            if counts[t] and _GROUP_OF_TILE.get(t) in st.specials:
                if st.ready and not self._same_waits(game, seat, t, 1):
                    continue
                if not st.ready and self._single_left(st, 1, 1):
                    continue
                acts.append(A.SPECIAL_ADD + t)
        return acts

    def kong_payments(self, game: Any, seat: int, kind: str, tile: int, source: int | None) -> list[tuple[int, float]]:
        """C12: every other player pays when the kong stands; 大蛋 doubles."""
        if kind == "concealed_kong":
            points = 4.0 if tile in BIG_EGG_KINDS else 2.0
        elif kind in ("kong", "added_kong"):
            points = 2.0 if tile in BIG_EGG_KINDS else 1.0
        else:
            points = 1.0
        return [((seat + d) % 4, points) for d in (1, 2, 3)]

    # --- bao (C8)

    def bao_exhausted(self, game: Any, kind: int) -> bool:
        seen = sum(1 for entry in game.history if entry[1] == kind)
        if self.config.bao_change_counts_melds:
            seen = sum(1 for entry in game.history if entry[1] == kind and not entry[2])
            for st in game.seats:
                for meld in st.melds:
                    seen += meld.tiles.count(kind)
        return seen >= 3

    # --- scoring (C10, C11)

    def _winner_fans(
        self, game: Any, seat: int, counts: list[int], tile: int, method: str, single_wait: bool
    ) -> list[list[Any]]:
        """The best fan list (without payer-specific fans) over the hand's valid readings."""
        st = game.seats[seat]
        best: list[list[Any]] = []
        best_total = -1
        common: list[list[Any]] = [["pinghu", 1]]
        if method in _SELF_DRAWN:
            common.append(["zimo", 1])
        if method in ("bao_draw", "bao_match"):
            common.append(["mobao", 2])
        if method == "bao_match":
            common.append(["duibao", 2])
        if seat == game.dealer:
            common.append(["zhuanghu", 1])
        closed_kinds = ("concealed_kong",) if self.config.concealed_kong_keeps_closed else ()
        if all(m.kind in closed_kinds for m in st.melds):
            common.append(["lihu", 1])
        open_chow = self.has_chow(st)
        for reading in self.readings(st, counts):
            fans = list(common)
            if reading is None:
                fans.append(["qidui", 3])
            elif not reading.sequences and not open_chow:
                fans.append(["piaohu", 2])
            elif single_wait or _is_jia(reading, tile):
                fans.append(["jiahu", 1])
            total = sum(f for _, f in fans)
            if total > best_total:
                best, best_total = fans, total
        return best

    def settle(
        self, game: Any, winner: int, method: str, tile: int | None, payer: int | None
    ) -> tuple[list[list[Any]], int, list[tuple[int, float, str]], list[int | None] | None]:
        cfg = self.config
        st = game.seats[winner]
        counts = list(st.counts)
        if method in ("discard", "rob_kong"):
            assert tile is not None
            hand13 = list(counts)
            counts[tile] += 1
        elif method == "bao_match":
            hand13 = list(counts)
        else:
            assert st.drawn is not None
            hand13 = list(counts)
            hand13[st.drawn] -= 1
        waits = self.winning_mask(game, winner, list(hand13))
        single_wait = waits & (waits - 1) == 0
        if method == "bao_draw":  # the bao stands in for the winning tile that scores most
            best: list[list[Any]] = []
            for w in bits(waits):
                hand13[w] += 1
                fans = self._winner_fans(game, winner, hand13, w, method, single_wait)
                hand13[w] -= 1
                if sum(f for _, f in fans) > sum(f for _, f in best):
                    best = fans
            fans = best
        else:
            win_tile = tile if tile is not None else st.drawn
            if method == "bao_match":
                counts[win_tile] += 1
            fans = self._winner_fans(game, winner, counts, win_tile, method, single_wait)
        base_fan = sum(f for _, f in fans)
        if method in ("discard", "rob_kong"):
            fans = fans + [["dianpao", 1]]
            payers = [payer] + ([p for p in _others(winner) if p != payer] if cfg.discard_all_pay else [])
        else:
            payers = _others(winner)
        payer_fans: list[int | None] = [None] * 4
        owed: list[tuple[int, float, str]] = []
        reason = "discard" if method == "discard" else method
        for p in payers:
            fan = base_fan + (1 if p == payer else 0)
            if cfg.dealer_pays_extra and p == game.dealer:
                fan += 1
            fan = min(fan, cfg.fan_cap)
            payer_fans[p] = fan
            owed.append((p, float(2 ** (fan - 1)), reason))
        if (
            cfg.unready_discarder_pays_all
            and payer is not None
            and not (game.seats[payer].ready and game.seats[payer].bao_seen)
        ):
            owed = [(payer, sum(points for _, points, _ in owed), "baozhuang")]
        total = max(f for f in payer_fans if f is not None)
        distinct = {f for f in payer_fans if f is not None}
        return fans, total, owed, payer_fans if len(distinct) > 1 else None


def _others(seat: int) -> list[int]:
    return [(seat + d) % 4 for d in (1, 2, 3)]


def _is_jia(reading: hand.Decomposition, tile: int) -> bool:
    """C10 夹胡 in this reading: the winning tile is an edge, closed or pair wait."""
    if reading.pair == tile:
        return True
    for s in reading.sequences:
        if s + 1 == tile:
            return True  # closed wait 46→5
        if s + 2 == tile and rank_of(s) == 1:
            return True  # edge 12→3
        if s == tile and rank_of(s) == 7:
            return True  # edge 89→7
    return False

