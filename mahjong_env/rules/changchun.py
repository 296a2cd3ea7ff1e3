"""Changchun mahjong 长春麻将 (RULES.md C1–C13).

Chow from the previous player; win > pong > kong > chow with 截胡; the first-turn special kongs
旋风杠 喜杠 幺蛋 九蛋 and their additions (抢胡/抢叉 on an addition); optional ready (上听) that
locks the hand; the bao 宝牌 (rolled, viewed, 对宝, 摸宝, 换宝); the winning conditions
三色全 幺九 一叉 手把一; per-payer fans 2^(F−1) capped at 64, from the table `FAN_RULES` (C10); kong
payments never refunded; seven whole stacks kept in the wall. MIL 2024 alternatives are
configuration fields, and `PROFILES` is the one table of named field sets (``profile="mil2024"``,
C14).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, ClassVar, NamedTuple

from mahjong_env import actions as A
from mahjong_env import hand
from mahjong_env.engine.hotpath import (
    CONTEXT_CLAIM,
    MELD_CHOW,
    MELD_CONCEALED_KONG,
    MELD_KONG,
    MELD_SPECIAL_WINDS,
    START_DRAW,
    START_EXHAUSTED,
    START_FINAL_DRAWS,
)
from mahjong_env.engine.state import (
    CLAIM_METHODS,
    DECLARATION_ACTION,
    SPECIAL_KINDS,
    Meld,
    MeldKind,
    SeatState,
    WindowKind,
    WinMethod,
)
from mahjong_env.rules.base import (
    DEFAULT_PROFILE,
    ConfigValue,
    Fan,
    FanKey,
    MeldFacts,
    Owed,
    RuleConfig,
    RuleSet,
    Settlement,
    TurnStart,
    bits,
)
from mahjong_env.tiles import TERMINALS_AND_HONORS, is_dragon, is_wind, rank_of

if TYPE_CHECKING:
    from mahjong_env.engine.game import Game

__all__ = [
    "ChangchunConfig",
    "ChangchunRules",
    "PROFILES",
    "SPECIAL_GROUPS",
    "BIG_EGG_KINDS",
    "FAN_RULES",
    "FanRule",
    "WinReading",
    "declaration_tiles",
]

SPECIAL_GROUPS: dict[MeldKind, tuple[int, ...]] = dict(
    zip(
        SPECIAL_KINDS,  # 旋风杠 东南西北, 喜杠 中发白, 幺蛋 1m 1p 1s, 九蛋 9m 9p 9s
        (
            tuple(t for t in range(34) if is_wind(t)),
            tuple(t for t in range(34) if is_dragon(t)),
            tuple(t for t in range(27) if rank_of(t) == 1),
            tuple(t for t in range(27) if rank_of(t) == 9),
        ),
    )
)
"""C5: each special group's tiles (and the kinds that may be added to it, C6)."""
_GROUP_OF_TILE = {t: kind for kind, tiles in SPECIAL_GROUPS.items() for t in tiles}
BIG_EGG_KINDS = frozenset({18, 9, 31, 32, 33})  # C12 大蛋: 1s 1p 5z 6z 7z
_YAOJI = 18  # C14 小鸡: the 1s
_IS_YAOJIU = tuple(t in TERMINALS_AND_HONORS for t in range(34))  # 幺九 (C9)

# C14: every named profile and the field values it sets; the keyword ``profile`` picks one and
# explicit keywords override it. "seed" is the defaults (the seed document).
PROFILES: dict[str, dict[str, ConfigValue]] = {
    DEFAULT_PROFILE: {},
    "mil2024": {
        "bao_dice": 1,
        "bao_change_counts_melds": True,
        "concealed_kong_keeps_closed": True,
        "discard_all_pay": True,
        "dealer_pays_extra": True,
        "unready_discarder_pays_all": True,
        "allow_seven_pairs": True,
        "rob_added_kong": True,
        "concealed_kong_visible": False,
        "require_ready_to_win": False,
        "fan_cap": 7,
        "max_bao_rolls": 6,
        "xuanfeng_three_winds": True,
        "yaoji_wild": True,
        "claimed_first_turn_no_add": True,
        "ready_needs_terminal": True,
        "passed_win_lock_by_fan": True,
        "final_draws": 4,
        "bao_roll_at_next_turn": True,
        "mobao_fan": 1,
        "duibao_fan": 1,
    },
}

_SELF_DRAWN = (WinMethod.SELF_DRAW, WinMethod.BAO_DRAW, WinMethod.BAO_MATCH)
_BAO_WINS = (WinMethod.BAO_DRAW, WinMethod.BAO_MATCH)


def _shortfall(counts: Sequence[int], suits: int, yaojiu: bool, triplet: bool) -> float:
    """`ChangchunRules.tile_condition_shortfall` of concealed ``counts`` beside melds whose
    suits (bits), 幺九 and triplet are given: one pass over the 34 kinds (``changchun.pxd``
    types it; players ask it for every discard they weigh)."""
    most = 0  # the most copies of one kind
    dragon_pair = False  # a pair of dragons stands in for the triplet (一叉)
    for t in range(34):
        n = counts[t]
        if n:
            if t < 27:
                suits |= 1 << (t // 9)
            if _IS_YAOJIU[t]:
                yaojiu = True
            if n > most:
                most = n
            if t >= 31 and n >= 2:
                dragon_pair = True
    shortfall = 0.0
    for s in range(3):
        if not (suits >> s & 1):
            shortfall += 1.0  # 三色全: a suit neither held nor melded
    if not yaojiu:
        shortfall += 1.0  # 幺九
    if not triplet and most < 3 and not dragon_pair:
        shortfall += 0.5 if most >= 2 else 1.0  # 一叉: a pair may still grow into a triplet
    return shortfall


class WinReading(NamedTuple):
    """One reading of a win, as the C10 fans read it."""

    method: WinMethod
    dealer: bool
    """The winner is the dealer."""
    closed: bool
    """No chow, pong or kong of any kind (C10 立胡; ``concealed_kong_keeps_closed`` spares concealed kongs)."""
    open_chow: bool
    """An exposed chow among the melds."""
    shape: hand.Decomposition | None
    """The concealed tiles read as sets and a pair (a reading that satisfies C9), None for seven pairs."""
    tile: int
    """The winning tile."""
    fourth_copy: bool
    """The winning tile is the fourth of its kind in the hand."""
    single_wait: bool
    """The hand waited on one tile kind only (独听)."""


class FanRule(NamedTuple):
    """One fan of C10: its key, its value (a number, or the config field that holds it) and
    when a win scores it."""

    key: FanKey
    fan: int | str
    holds: Callable[[WinReading], bool]
    discarder_only: bool = False
    """Counted in the fan of the discarder (or robbed konger) alone, not of the other payers."""


def _piaohu(win: WinReading) -> bool:
    """飘胡: every meld a triplet, a kong or a special group (C5), no sequence."""
    return win.shape is not None and not win.shape.sequences and not win.open_chow


def _jiahu(win: WinReading) -> bool:
    """夹胡: an edge, closed or pair wait in this reading, or 独听; never with 飘胡 (nor 七对)."""
    shape = win.shape
    return shape is not None and not _piaohu(win) and (win.single_wait or _is_jia(shape, win.tile))


FAN_RULES: tuple[FanRule, ...] = (
    FanRule(FanKey.PINGHU, 1, lambda win: True),  # 平胡: every win
    FanRule(FanKey.ZIMO, 1, lambda win: win.method in _SELF_DRAWN),  # 自摸, 对宝 and 摸宝 included
    FanRule(FanKey.MOBAO, "mobao_fan", lambda win: win.method in _BAO_WINS),  # 宝牌: 摸宝 and 对宝
    FanRule(FanKey.DUIBAO, "duibao_fan", lambda win: win.method is WinMethod.BAO_MATCH),  # 对宝, on top
    FanRule(FanKey.ZHUANGHU, 1, lambda win: win.dealer),  # 庄胡
    FanRule(FanKey.LIHU, 1, lambda win: win.closed and win.shape is not None),  # 立胡, never with 七对
    FanRule(FanKey.QIDUI, 3, lambda win: win.shape is None and not win.fourth_copy),  # 七对
    FanRule(FanKey.HAOHUA_QIDUI, 4, lambda win: win.shape is None and win.fourth_copy),  # 豪华七对, in its place
    FanRule(FanKey.PIAOHU, 2, _piaohu),  # 飘胡
    FanRule(FanKey.JIAHU, 1, _jiahu),  # 夹胡
    FanRule(FanKey.DIANPAO, 1, lambda win: win.method in CLAIM_METHODS, discarder_only=True),  # 点炮
)
"""C10: every fan a Changchun win can score, in the order results list them. A win scores, on
the reading of its hand that scores most, every fan whose ``holds`` is true; a payer's fan F
is their sum (the ``discarder_only`` ones for the discarder alone; C11's ``dealer_pays_extra``
adds 1 for a dealer payer), capped at ``fan_cap``, and it pays 2^(F−1) points."""
_DISCARDER_ONLY = frozenset(rule.key for rule in FAN_RULES if rule.discarder_only)


@dataclasses.dataclass(frozen=True)
class ChangchunConfig(RuleConfig):
    """Rule fields of Changchun mahjong; defaults follow the seed (profile ``"seed"``), MIL
    alternatives are off; ``profiles`` (`PROFILES`) names sets of field values (C14)."""

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
    xuanfeng_three_winds: bool = False
    """C14 (MIL 三-15): 旋风杠 is declared with exactly three different winds, even when all four
    are held; the group draws no replacement (C5's 3-tile rule) and takes the fourth wind, and
    any further wind, as an addition (C6), so four winds dealt pay 2 from each once the fourth is
    added."""
    yaoji_wild: bool = False
    """C14 (MIL 三-14/15/16, 小鸡飞蛋): a 1s may stand in for one missing tile of a 幺蛋, 九蛋, 喜杠
    or 旋风杠 when it is declared, and may be added to any declared group (C6); it still counts
    as a 1s for robbing, C9 and C12."""
    claimed_first_turn_no_add: bool = False
    """C14 (MIL 五-6 关于杠牌 3): in a first turn entered by a chow, pong or exposed kong, special
    groups may be declared but nothing may be added to them, even after a declaration's
    replacement draw."""
    ready_needs_terminal: bool = False
    """C14 (MIL 七-1-3): ``ready T`` only if the tiles left after discarding T, melds included,
    hold a 1, a 9 or an honor (one may still win without declaring, C7)."""
    passed_win_lock_by_fan: bool = False
    """C14 (MIL 十一-11-2): passing a win blocks, until one's next draw, chow or pong, every claim
    win whose fan for the discarder would be no higher than the passed one's, not only the
    passed kind (R8)."""
    final_draws: int = 0
    """C14 (MIL 五-7, MIL 4): when a player is due to draw with n = 14 + final_draws + (k mod 2)
    tiles left (nine whole stacks for 4, R4), the next ``final_draws`` draws are made like X4's
    分张, each by the player due to draw in turn order: win as a self-draw (the bao included) or
    pass, no discard, no claim, no kong; the tile stays in the drawer's hand; then the hand is
    drawn (荒庄). Kongs are legal only while more than that reserve remains. 0: no such draws."""
    bao_roll_at_next_turn: bool = False
    """C14 (MIL 三-24): the first declaration does not roll at once; the dice are rolled at the
    start of the first declarer's next turn, before its draw, and the view offers of C8 follow
    from then (others who declared in between are offered the view at their next turn)."""
    mobao_fan: int = 2
    """C10/C14: the fan of every bao win (key ``mobao``, 摸宝 and 对宝); MIL 1."""
    duibao_fan: int = 2
    """C10/C14: the extra fan of 对宝 (key ``duibao``); MIL 1, so MIL's 冲宝 is 2 and 摸宝 1 over 自摸."""

    profiles: ClassVar[dict[str, dict[str, ConfigValue]]] = PROFILES

    def validate(self) -> None:
        """Reject values no table plays (ValueError naming the field)."""
        if self.bao_dice not in (1, 2):
            raise ValueError(f"ChangchunConfig.bao_dice must be 1 or 2, got {self.bao_dice}")
        bounds = {
            "max_bao_rolls": (1, 100),
            "fan_cap": (1, 30),
            "final_draws": (0, 16),
            "mobao_fan": (1, 10),
            "duibao_fan": (1, 10),
        }
        for name, (low, high) in bounds.items():
            value = getattr(self, name)
            if not low <= value <= high:
                raise ValueError(f"ChangchunConfig.{name} must be in {low}..{high}, got {value}")


class ChangchunRules(RuleSet):
    name = "changchun"
    uses_bao = True
    extra_win_conditions = True  # C9
    ready_kongs_keep_waits = True  # C7
    priority: ClassVar[dict[int, int]] = {
        A.WIN: 4,
        A.PONG: 3,
        A.KONG: 2,
        A.CHOW_LOW: 1,
        A.CHOW_MID: 1,
        A.CHOW_HIGH: 1,
    }  # C4

    config: ChangchunConfig

    @property
    def dice_count(self) -> int:
        return self.config.bao_dice

    @property
    def max_bao_rolls(self) -> int:
        return self.config.max_bao_rolls

    @property
    def allows_seven_pairs(self) -> bool:
        return self.config.allow_seven_pairs

    @property
    def wins_on_discards(self) -> bool:
        return True  # C3

    # --- C9 as a player checks it from its own tiles

    def tile_condition_shortfall(self, counts: Sequence[int], melds: MeldFacts) -> float:
        """C9's missing conditions, for players: 1 per missing suit (三色全), 1 without a
        terminal or honor (幺九), 0.5–1 without a triplet (一叉)."""
        return _shortfall(counts, melds.suits, melds.yaojiu, melds.triplet)

    def meets_tile_conditions(self, counts: Sequence[int], melds: MeldFacts) -> bool:
        """三色全, 幺九, 一叉 (a seven-pairs shape needs only the first two) and 手把一, as
        `readings` judges them."""
        # a complete hand holds a pair, so a shortfall of 1 or more means a suit or 幺九 is missing
        if self.tile_condition_shortfall(counts, melds) >= 1.0:
            return False
        if sum(counts) == 2 and melds.chow and not melds.concealed_kong:
            return False  # C9.4 手把一: a single concealed tile beside a chow
        if sum(counts) == 14 and hand.is_seven_pairs(counts):
            return True  # C9: conditions 1 and 2 apply to seven pairs, 3 does not
        return melds.triplet or any(d.triplets or is_dragon(d.pair) for d in hand.decompositions(counts))

    # --- winning hands (C9)

    def readings(self, melds: Sequence[Meld], counts: Sequence[int]) -> list[hand.Decomposition | None]:
        """Readings of a complete hand that satisfy every C9 condition (None = seven pairs)."""
        seven = self.config.allow_seven_pairs and not melds and hand.is_seven_pairs(counts)
        if not seven and not hand.is_complete(counts):
            return []
        whole = self.all_tiles(melds, counts)
        if not (any(whole[0:9]) and any(whole[9:18]) and any(whole[18:27])):  # 三色全
            return []
        if not any(whole[t] for t in TERMINALS_AND_HONORS):  # 幺九
            return []
        out: list[hand.Decomposition | None] = [None] if seven else []
        if not hand.is_complete(counts):
            return out
        melded_triplet = any(m.kind is not MELD_CHOW for m in melds)
        # C9.4 手把一: one concealed tile (concealed kongs count as concealed tiles, as in C3)
        single = sum(counts) == 2 and not any(m.kind is MELD_CONCEALED_KONG for m in melds)
        for d in hand.decompositions(counts):
            if not (melded_triplet or d.triplets or is_dragon(d.pair)):  # 一叉
                continue
            if single and self.has_chow(melds):
                continue
            out.append(d)
        return out

    def _waits(self, melds: Sequence[Meld], counts: Sequence[int]) -> int:
        """`winning_mask` for ``melds`` and the 3n+1 ``counts`` (not changed)."""
        mask = self.standard_waits(melds, counts, self.config.allow_seven_pairs)
        if not mask:
            return 0
        scratch = list(counts)
        for t in bits(mask):
            scratch[t] += 1
            if not self.readings(melds, scratch):
                mask ^= 1 << t
            scratch[t] -= 1
        return mask

    def winning_mask(self, game: Game, seat: int, counts: Sequence[int]) -> int:
        return self._waits(game.seats[seat].melds, counts)

    def keeps_ready(self, game: Game, seat: int, counts: list[int]) -> bool:
        melds = game.seats[seat].melds
        if not self._waits(melds, counts):
            return False
        # C14 ready_needs_terminal: the tiles left, melds included, hold a 1, 9 or honor
        return not self.config.ready_needs_terminal or _holds_terminal(melds, counts)

    # --- wins

    def _may_win(self, st: SeatState, tile: int | None) -> bool:
        if self.config.require_ready_to_win and not st.ready:
            return False
        return not (tile is not None and self.config.passed_win_lock and self.passed(st, tile))

    def self_win(self, game: Game, seat: int) -> WinMethod | None:
        st = game.seats[seat]
        if not self._may_win(st, None):
            return None
        drawn = st.drawn
        if st.ready and st.bao_seen and game.bao is not None and drawn == game.bao:  # C8 摸宝
            before = list(st.counts)
            before[drawn] -= 1
            if self._waits(st.melds, before):
                return WinMethod.BAO_DRAW
        if not st.drawn_may_complete():
            return None
        return WinMethod.SELF_DRAW if self.readings(st.melds, st.counts) else None

    def _wins_with(self, game: Game, seat: int, tile: int, method: WinMethod, source: int) -> bool:
        """Whether ``seat`` may win by a claim on ``source``'s ``tile`` (a discard or a robbed kong)."""
        st = game.seats[seat]
        if not st.shape_waits() >> tile & 1 or not self._may_win(st, tile):
            return False
        counts = list(st.counts)
        counts[tile] += 1
        ok = bool(self.readings(st.melds, counts))
        if ok and st.passed_fan:  # C14 passed_win_lock_by_fan
            ok = self._discarder_fan(game, seat, method, tile, source) > st.passed_fan
        return ok

    def _discarder_fan(self, game: Game, seat: int, method: WinMethod, tile: int, source: int) -> int:
        """The fan ``source`` would pay for ``seat``'s claim win on ``tile`` (C10, C11)."""
        settlement = self.settle(game, seat, method, tile, source)
        payer_fans = settlement.payer_fans
        return settlement.total_fan if payer_fans is None else int(payer_fans[source] or 0)

    def win_passed(self, game: Game, seat: int, tile: int, kind: WindowKind, source: int) -> None:
        super().win_passed(game, seat, tile, kind, source)
        if self.config.passed_win_lock_by_fan:
            method = WinMethod.DISCARD if kind is WindowKind.DISCARD else WinMethod.ROB_KONG
            st = game.seats[seat]
            st.passed_fan = max(st.passed_fan, self._discarder_fan(game, seat, method, tile, source))

    def _single_left(self, st: SeatState, removed: int, gained: int, making_chow: bool = False) -> bool:
        """C3: would the player, with an exposed chow, keep one concealed tile after discarding?"""
        melds = st.melds
        if not (making_chow or (melds and self.has_chow(melds))):
            return False
        concealed = st.held - removed + gained - 1
        concealed += 4 * sum(1 for m in melds if m.kind is MELD_CONCEALED_KONG)
        return concealed == 1

    def claim_options(self, game: Game, seat: int, tile: int, source: int, distance: int) -> list[int]:
        st = game.seats[seat]
        counts = st.counts
        n = counts[tile]
        wins = st.shape_waits() >> tile & 1  # the cached shape test: most discards are no win for most seats
        if n < 2 and not wins and (distance != 1 or tile >= 27):
            return []  # no win, pong, kong or chow
        options = []
        if wins and self._wins_with(game, seat, tile, WinMethod.DISCARD, source):
            options.append(A.WIN)
        if st.ready:
            if n == 3 and self.wall_allows_kong(game) and self._same_waits(st, tile, 3):
                options.append(A.KONG)
            return options
        if n >= 2 and not self._single_left(st, 2, 0):
            options.append(A.PONG)
        if n == 3 and self.wall_allows_kong(game) and not self._single_left(st, 3, 1):
            options.append(A.KONG)
        if distance == 1 and tile < 27:
            chows = A.chow_actions(counts, tile)
            if chows and not self._single_left(st, 2, 0, True):  # C3 (asked only when a chow exists)
                options.extend(chows)
        return options

    def rob_options(self, game: Game, seat: int, tile: int, konger: int, kind: WindowKind) -> list[int]:
        st = game.seats[seat]
        options = []
        special_add = kind is WindowKind.SPECIAL_ADD
        if (special_add or self.config.rob_added_kong) and self._wins_with(
            game, seat, tile, WinMethod.ROB_KONG, konger
        ):
            options.append(A.WIN)  # 抢胡 / 抢杠
        if special_add and not st.ready and st.counts[tile] >= 2 and not self._single_left(st, 2, 0):
            options.append(A.PONG)  # 抢叉
        return options

    def duibao_possible(self, game: Game, seat: int) -> bool:
        bao = game.bao
        return bao is not None and bool(self.winning_mask(game, seat, game.seats[seat].counts) >> bao & 1)

    # --- kongs (C5, C6, C7, C12, C13)

    def wall_allows_kong(self, game: Game) -> bool:
        wall = game.wall
        n, k = wall.slots_after_tail_draw(), wall.tail_draws + 1
        # C13: the replacement never breaks into the seven stacks (C14: nor the final draws)
        return n >= 14 + self.config.final_draws + (k & 1)

    def before_draw(self, game: Game, seat: int) -> TurnStart:
        wall = game.wall
        reserve = 14 + (wall.tail_draws & 1)
        if self.config.final_draws and wall.slots <= reserve + self.config.final_draws:
            return START_FINAL_DRAWS  # C14 final_draws
        return START_EXHAUSTED if wall.slots <= reserve else START_DRAW

    def final_draws(self, game: Game) -> int:
        return self.config.final_draws

    def final_draw_win(self, game: Game, seat: int) -> bool:
        return self.self_win(game, seat) is not None  # C14: a self-draw, the bao included

    def final_draw_method(self, game: Game, seat: int) -> WinMethod:
        method = self.self_win(game, seat)
        assert method is not None
        return method

    def defer_bao_roll(self, game: Game) -> bool:
        return self.config.bao_roll_at_next_turn

    def _same_waits(self, st: SeatState, tile: int, count: int) -> bool:
        """C7: a ready player's kong (``count`` tiles of ``tile`` from the hand) must keep
        exactly the same winning tiles."""
        counts = list(st.counts)
        counts[tile] -= count
        # C7/C9: judge the hand after the kong, its tiles among the melds (三色全, 幺九, 一叉, 空听);
        # a concealed kong's tiles count as concealed for 手把一 (C9.4, C3)
        kind = MELD_CONCEALED_KONG if count == 4 else MELD_KONG
        kong = Meld(kind, [tile] * (4 if count >= 3 else 1), tile, None)
        return self._waits(st.melds + [kong], counts) == st.ready_waits

    def kong_allowed(self, game: Game, seat: int, kind: MeldKind, tile: int) -> bool:
        st = game.seats[seat]
        concealed = kind is MELD_CONCEALED_KONG
        if st.ready:
            return self._same_waits(st, tile, 4 if concealed else 1)
        if concealed:
            return True
        return not self._single_left(st, 1, 1)

    def _declarable(self, dealt_held: list[int], kind: MeldKind) -> list[int] | None:
        """C5: the tiles a declaration of ``kind`` would take from ``dealt_held``, the counts
        of the dealt tiles still held (`_dealt_held`)."""
        cfg = self.config
        return declaration_tiles(kind, dealt_held, three_winds=cfg.xuanfeng_three_winds, yaoji=cfg.yaoji_wild)

    @staticmethod
    def _dealt_held(st: SeatState) -> list[int]:
        return list(map(min, st.counts, st.dealt))

    def declaration_tiles(self, game: Game, seat: int, kind: MeldKind) -> list[int]:
        tiles = self._declarable(self._dealt_held(game.seats[seat]), kind)
        assert tiles is not None
        return tiles

    def _may_add(self, st: SeatState, tile: int) -> bool:
        """C6: whether ``tile`` joins a declared group (C14 ``yaoji_wild``: a 1s joins any)."""
        if _GROUP_OF_TILE.get(tile) in st.specials:
            return True
        return tile == _YAOJI and self.config.yaoji_wild and bool(st.specials)

    def special_add_target(self, st: SeatState, tile: int) -> Meld:
        group = _GROUP_OF_TILE.get(tile)
        if group is not None and group in st.specials:
            return st.specials[group]
        return next(st.specials[kind] for kind in SPECIAL_GROUPS if kind in st.specials)  # C14 小鸡

    def special_actions(self, game: Game, seat: int) -> list[int]:
        st = game.seats[seat]
        counts = st.counts
        acts = []
        if st.first_turn:  # C5: declarations from the dealt tiles only
            dealt_held = self._dealt_held(st)
            for kind in SPECIAL_GROUPS:
                if kind in st.specials:
                    continue
                tiles = self._declarable(dealt_held, kind)
                if tiles is None:
                    continue
                if len(tiles) == 4 and not self.wall_allows_kong(game):
                    continue
                if st.ready or self._single_left(st, len(tiles), len(tiles) - 3):
                    continue
                acts.append(DECLARATION_ACTION[kind])
        if not st.specials or game.context == CONTEXT_CLAIM:
            return acts
        if st.first_turn and seat == game.dealer:  # C6: 庄家第一手不允许补杠
            return acts
        if st.first_turn and st.first_turn_claimed and self.config.claimed_first_turn_no_add:  # C14
            return acts
        if not self.wall_allows_kong(game):
            return acts
        candidates: Iterable[int]
        if st.ready:  # C6/C7: a ready player may add only the tile just drawn
            candidates = [st.drawn] if st.drawn is not None else []
        else:
            candidates = range(34)
        for t in candidates:
            if counts[t] and self._may_add(st, t):
                if st.ready and not self._same_waits(st, t, 1):
                    continue
                if not st.ready and self._single_left(st, 1, 1):
                    continue
                acts.append(A.SPECIAL_ADD + t)
        return acts

    def kong_payments(
        self, game: Game, seat: int, kind: MeldKind, tile: int, source: int | None
    ) -> list[tuple[int, float]]:
        """C12: every other player pays when the kong stands; 大蛋 doubles; a special group and
        each addition to one pay 1."""
        if kind is MeldKind.CONCEALED_KONG:
            points = 4.0 if tile in BIG_EGG_KINDS else 2.0
        elif kind is MeldKind.KONG or kind is MeldKind.ADDED_KONG:
            points = 2.0 if tile in BIG_EGG_KINDS else 1.0
        else:
            points = 1.0
        return [((seat + d) % 4, points) for d in (1, 2, 3)]

    # --- bao (C8)

    def bao_exhausted(self, game: Game, kind: int) -> bool:
        if not self.config.bao_change_counts_melds:
            return sum(1 for entry in game.history if entry.tile == kind) >= 3
        seen = sum(1 for entry in game.history if entry.tile == kind and not entry.claimed)
        for st in game.seats:
            for meld in st.melds:
                seen += meld.tiles.count(kind)
        return seen >= 3

    # --- scoring (C10, C11)

    def _winner_fans(
        self, game: Game, seat: int, counts: list[int], tile: int, method: WinMethod, single_wait: bool
    ) -> list[Fan]:
        """The winner's fans (`FAN_RULES`) on the valid reading of the hand that scores most."""
        melds = game.seats[seat].melds
        closed_kinds = (MeldKind.CONCEALED_KONG,) if self.config.concealed_kong_keeps_closed else ()
        closed = all(m.kind in closed_kinds for m in melds)
        open_chow = self.has_chow(melds)
        best: list[Fan] = []
        best_total = -1
        for shape in self.readings(melds, counts):
            win = WinReading(
                method, seat == game.dealer, closed, open_chow, shape, tile, counts[tile] == 4, single_wait
            )
            fans = [Fan(rule.key, self._fan_value(rule)) for rule in FAN_RULES if rule.holds(win)]
            total = sum(f.fan for f in fans)
            if total > best_total:
                best, best_total = fans, total
        return best

    def _fan_value(self, rule: FanRule) -> int:
        value = rule.fan
        return value if isinstance(value, int) else int(getattr(self.config, value))

    def _dealt_win_tile(self, game: Game, winner: int, counts: list[int], method: WinMethod) -> int:
        """R5 ``allow_tianhu``: a win on the dealt 14 tiles has no drawn tile; read it as won on
        the held kind that completes it and scores most."""
        st = game.seats[winner]
        best, best_total = -1, -1
        for w in range(34):
            if not counts[w]:
                continue
            hand13 = list(counts)
            hand13[w] -= 1
            waits = self._waits(st.melds, hand13)
            if not waits >> w & 1:
                continue
            total = sum(f.fan for f in self._winner_fans(game, winner, counts, w, method, waits & (waits - 1) == 0))
            if total > best_total:
                best, best_total = w, total
        assert best >= 0, "a dealt-tiles win needs a held kind that completes the hand"
        return best

    def settle(self, game: Game, winner: int, method: WinMethod, tile: int | None, payer: int | None) -> Settlement:
        cfg = self.config
        st = game.seats[winner]
        counts = list(st.counts)
        if method in CLAIM_METHODS:
            assert tile is not None
            hand13 = list(counts)
            counts[tile] += 1
        elif method is WinMethod.BAO_MATCH:
            hand13 = list(counts)
        else:
            drawn = st.drawn if st.drawn is not None else self._dealt_win_tile(game, winner, counts, method)
            hand13 = list(counts)
            hand13[drawn] -= 1
        waits = self._waits(st.melds, hand13)
        single_wait = waits & (waits - 1) == 0
        if method is WinMethod.BAO_DRAW:  # the bao stands in for the winning tile that scores most
            best: list[Fan] = []
            for w in bits(waits):
                hand13[w] += 1
                fans = self._winner_fans(game, winner, hand13, w, method, single_wait)
                hand13[w] -= 1
                if sum(f.fan for f in fans) > sum(f.fan for f in best):
                    best = fans
            fans = best
        else:
            win_tile = tile if tile is not None else (st.drawn if st.drawn is not None else drawn)
            if method is WinMethod.BAO_MATCH:
                counts[win_tile] += 1
            fans = self._winner_fans(game, winner, counts, win_tile, method, single_wait)
        base_fan = sum(f.fan for f in fans if f.name not in _DISCARDER_ONLY)
        discarder_fan = sum(f.fan for f in fans) - base_fan
        if method in CLAIM_METHODS:
            assert payer is not None
            payers = [payer] + ([p for p in _others(winner) if p != payer] if cfg.discard_all_pay else [])
        else:
            payers = _others(winner)
        payer_fans: list[int | None] = [None] * 4
        owed: list[Owed] = []
        for p in payers:
            fan = base_fan + (discarder_fan if p == payer else 0)
            if cfg.dealer_pays_extra and p == game.dealer:
                fan += 1
            fan = min(fan, cfg.fan_cap)
            payer_fans[p] = fan
            owed.append(Owed(p, float(2 ** (fan - 1)), method))
        # C11: while the hand has no bao because its rolls ran out, a ready discarder is not covered
        no_bao_left = game.bao is None and game.bao_rolls >= cfg.max_bao_rolls
        if cfg.unready_discarder_pays_all and payer is not None:
            discarder = game.seats[payer]
            if not (discarder.ready and (discarder.bao_seen or no_bao_left)):
                owed = [Owed(payer, sum(o.points for o in owed), "baozhuang")]
        total = max(f for f in payer_fans if f is not None)
        distinct = {f for f in payer_fans if f is not None}
        return Settlement(tuple(fans), total, tuple(owed), tuple(payer_fans) if len(distinct) > 1 else None)


def _holds_terminal(melds: Sequence[Meld], counts: Sequence[int]) -> bool:
    """Whether the concealed ``counts`` and the melds hold a 1, a 9 or an honor (幺九)."""
    whole = RuleSet.all_tiles(melds, counts)
    return any(whole[t] for t in TERMINALS_AND_HONORS)


def declaration_tiles(
    kind: MeldKind, available: list[int], *, three_winds: bool = False, yaoji: bool = False
) -> list[int] | None:
    """The tiles a special-group declaration of ``kind`` takes (C5), or None if it cannot be made.

    ``available``: 34 counts of the tiles it may use (the dealt tiles still held). Natural tiles
    come first; with ``three_winds`` (C14 ``xuanfeng_three_winds``) 旋风杠 takes exactly three
    different winds, even when all four are held (the fourth is then an addition, C6); with
    ``yaoji`` (C14 ``yaoji_wild``) one spare 1s stands in for one missing tile. Agents may call
    it with their concealed counts."""
    group = SPECIAL_GROUPS[kind]
    held = [t for t in group if available[t]]
    size = 3 if kind is MELD_SPECIAL_WINDS and three_winds else len(group)
    if len(held) >= size:
        return held[:size]
    spare_ones = available[_YAOJI] - (_YAOJI in held)
    if yaoji and spare_ones > 0 and len(held) == size - 1:
        return held + [_YAOJI]
    return None


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
