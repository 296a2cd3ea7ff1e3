"""Xinjiang Balang mahjong 巴郎新疆麻将 (RULES.md X1–X10).

No chow; self-draw only after declaring ready (报听自摸), kong bloom (杠上开花) and robbing an
added kong; the last four tiles are 分张 draws; a ready player whose kong breaks its wait
becomes 相公 and pays for everyone; fans from an open table (`register_pattern`), 2^(fan−1)
points; kongs pay at once (刮风下雨) and are refunded on a drawn hand; silver and base (X7).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, ClassVar

from mahjong_env import actions as A
from mahjong_env import hand
from mahjong_env.engine.hotpath import CONTEXT_REPLACEMENT, START_DRAW, START_FINAL_DRAWS
from mahjong_env.engine.state import CLAIM_METHODS, Meld, MeldKind, SeatState, WindowKind, WinMethod
from mahjong_env.rules.base import MAX_SILVER, Fan, FanKey, Owed, RuleConfig, RuleSet, Settlement, TurnStart
from mahjong_env.tiles import suit_of

if TYPE_CHECKING:
    from mahjong_env.engine.game import Game

__all__ = ["XinjiangConfig", "XinjiangRules", "register_pattern", "PATTERNS", "WinningHand", "MAX_FAN", "MAX_SILVER"]

MAX_FAN = 30
"""Largest fan value and fan cap (X6): 2^29 points stays exact in a float."""
MAX_SILVER_DIVISOR = 10**6
"""Largest X7 silver divisor."""
FENZHANG_DRAWS = 4
"""X4: the last four tiles are 分张 draws (a replacement never takes one)."""


@dataclasses.dataclass(frozen=True)
class WinningHand:
    """What a pattern predicate sees: the final hand of the winner."""

    counts: tuple[int, ...]
    """Concealed tiles after the win (34 counts)."""
    melds: tuple[tuple[str, tuple[int, ...]], ...]
    """Every meld as (kind name, tiles): ``("pong", (4, 4, 4))``."""
    tile: int | None
    """The winning tile kind."""
    method: str
    decompositions: tuple[hand.Decomposition, ...]


PATTERNS: dict[str, Callable[[WinningHand], bool]] = {}


def register_pattern(name: str, predicate: Callable[[WinningHand], bool]) -> None:
    """X6: add a named fan pattern (a predicate over the winning hand).

    List it with its fan in ``XinjiangConfig.extra_patterns`` to use it, e.g. a table's own
    巴郎, 天山 or 大漠 hands: ``register_pattern("tianshan", fn)`` then
    ``xinjiang_v0.env(extra_patterns=(("tianshan", 2),))``.
    """
    if not name or not isinstance(name, str):
        raise ValueError("pattern name must be a non-empty string")
    if not callable(predicate):
        raise ValueError(f"pattern {name!r}: predicate must be callable")
    PATTERNS[name] = predicate


@dataclasses.dataclass(frozen=True)
class XinjiangConfig(RuleConfig):
    """Rule fields of Xinjiang Balang mahjong; defaults are RULES.md's."""

    allow_discard_win: bool = False
    """X9: a ready player may win on another's discard (点炮, platform variant)."""
    rob_requires_ready: bool = True
    """X3 Decision: only a player who declared ready may rob an added kong."""
    fenzhang_can_win: bool = True
    """X4 Decision: a 分张 draw that completes the hand may win as a self-draw."""
    allow_seven_pairs: bool = True
    """X3: seven pairs (七对) and luxury seven pairs (豪华七对) are winning forms."""
    shape_fans: tuple[tuple[str, int], ...] = (
        (FanKey.PINGHU.value, 1),
        (FanKey.PENGPENGHU.value, 2),
        (FanKey.QIDUI.value, 3),
        (FanKey.HAOHUA_QIDUI.value, 4),
    )
    """X6 Decision: the fan of each hand shape (Sichuan-family table shifted so 平胡 = 1)."""
    qingyise_fan: int = 2
    """X6: added for 清一色 (one suit, no honors)."""
    gangshang_fan: int = 1
    """X6: added for 杠上开花."""
    kong_fan: int = 1
    """X6: added for every kong the winner made."""
    fan_cap: int = 6
    """X6: the fan cap (6 fan = 32 points)."""
    extra_patterns: tuple[tuple[str, int], ...] = ()
    """X6: registered patterns (`register_pattern`) and their fans, added when they hold."""
    self_draw_each_pays_full: bool = True
    """X7 Decision: on a self-draw each loser pays the full points ("平均分摊" as one full share
    each); False splits the points three ways."""
    xianggong_pays_all: bool = True
    """X5: 相公包牌, a 相公 loser pays what all losers would have paid."""
    starting_silver: float = 3500.0
    """X7: each player's silver at the start of a match."""
    silver_divisor: int = 35
    """X7: base = lowest silver at the start of the hand // divisor (minimum 1)."""

    def validate(self) -> None:
        names = {name for name, _ in self.shape_fans}
        if names != {FanKey.PINGHU, FanKey.PENGPENGHU, FanKey.QIDUI, FanKey.HAOHUA_QIDUI}:
            raise ValueError(
                "XinjiangConfig.shape_fans must give a fan for exactly pinghu, pengpenghu, qidui "
                f"and haohua_qidui, got {sorted(names)}"
            )
        for name, _ in self.extra_patterns:
            if name not in PATTERNS:
                raise ValueError(
                    f"XinjiangConfig.extra_patterns names {name!r}, which is not registered: "
                    "call mahjong_env.rules.xinjiang.register_pattern(name, fn) first"
                )
        # X6: a hand scores 2^(fan-1) points, so every hand must reach 1 fan and the cap must
        # keep that finite; X7: silver and the divisor are finite and the base at least 1
        fan_bounds = [("fan_cap", self.fan_cap, 1)]
        fan_bounds += [(f"shape_fans[{name!r}]", fan, 1) for name, fan in self.shape_fans]
        fan_bounds += [(name, getattr(self, name), 0) for name in ("qingyise_fan", "gangshang_fan", "kong_fan")]
        fan_bounds += [(f"extra_patterns[{name!r}]", fan, 0) for name, fan in self.extra_patterns]
        for name, value, low in fan_bounds:
            if not low <= value <= MAX_FAN:
                raise ValueError(f"XinjiangConfig.{name} must be in {low}..{MAX_FAN}, got {value!r}")
        if not 1 <= self.silver_divisor <= MAX_SILVER_DIVISOR:
            raise ValueError(
                f"XinjiangConfig.silver_divisor must be in 1..{MAX_SILVER_DIVISOR}, got {self.silver_divisor!r}"
            )
        if not math.isfinite(self.starting_silver) or not 0 <= self.starting_silver <= MAX_SILVER:
            raise ValueError(
                f"XinjiangConfig.starting_silver must be a finite number in 0..{MAX_SILVER:g}, "
                f"got {self.starting_silver!r}"
            )


class XinjiangRules(RuleSet):
    name = "xinjiang"
    uses_silver = True
    closed_waits_win = True  # X3: any standard or seven-pairs hand wins
    priority: ClassVar[dict[int, int]] = {A.WIN: 3, A.PONG: 2, A.KONG: 2}  # X2

    config: XinjiangConfig

    @property
    def starting_silver(self) -> float:
        return self.config.starting_silver

    @property
    def allows_seven_pairs(self) -> bool:
        return self.config.allow_seven_pairs

    @property
    def wins_on_discards(self) -> bool:
        return self.config.allow_discard_win  # X9

    # --- ready and waits (R8, X3)

    def winning_mask(self, game: Game, seat: int, counts: Sequence[int]) -> int:
        return self.standard_waits(game.seats[seat].melds, counts, self.config.allow_seven_pairs)

    def _complete(self, melds: Sequence[Meld], counts: Sequence[int]) -> bool:
        if hand.is_complete(counts):
            return True
        return self.config.allow_seven_pairs and not melds and hand.is_seven_pairs(counts)

    # --- wins (X3, X4, X5)

    def self_win(self, game: Game, seat: int) -> WinMethod | None:
        st = game.seats[seat]
        if st.xianggong or not st.drawn_may_complete() or not self._complete(st.melds, st.counts):
            return None
        if game.context == CONTEXT_REPLACEMENT:
            return WinMethod.KONG_BLOOM
        return WinMethod.SELF_DRAW if st.ready else None

    def forced_win(self, game: Game, seat: int) -> bool:
        """X5: a ready luxury-seven-pairs hand drawing its fourth copy must win with it."""
        st = game.seats[seat]
        drawn = st.drawn
        return (
            st.ready
            and drawn is not None
            and st.counts[drawn] == 4
            and not st.melds
            and self.config.allow_seven_pairs
            and hand.is_seven_pairs(st.counts)
        )

    def may_declare_ready(self, game: Game, seat: int) -> bool:
        """X5: a 相公 can never declare ready again in this hand."""
        return not game.seats[seat].xianggong

    def final_draw_win(self, game: Game, seat: int) -> bool:
        """X4: a 分张 draw that completes a ready hand may win (``fenzhang_can_win``)."""
        st = game.seats[seat]
        return self.config.fenzhang_can_win and st.ready and not st.xianggong and self._complete(st.melds, st.counts)

    def _can_win_on(self, st: SeatState, tile: int, need_ready: bool = True) -> bool:
        if (need_ready and not st.ready) or st.xianggong:
            return False
        if self.config.passed_win_lock and self.passed(st, tile):
            return False
        counts = list(st.counts)
        counts[tile] += 1
        return self._complete(st.melds, counts)

    def claim_options(self, game: Game, seat: int, tile: int, source: int, distance: int) -> list[int]:
        st = game.seats[seat]
        n = st.counts[tile]
        options = []
        if self.config.allow_discard_win and self._can_win_on(st, tile):  # X9
            options.append(A.WIN)
        if n >= 2 and not st.ready:
            options.append(A.PONG)
        if n == 3 and self.wall_allows_kong(game):
            options.append(A.KONG)
        return options

    def rob_options(self, game: Game, seat: int, tile: int, konger: int, kind: WindowKind) -> list[int]:
        if kind is not WindowKind.ADDED_KONG:  # X3 Decision: only added kongs can be robbed
            return []
        st = game.seats[seat]
        return [A.WIN] if self._can_win_on(st, tile, self.config.rob_requires_ready) else []

    # --- kongs (X4, X5, X8)

    def wall_allows_kong(self, game: Game) -> bool:
        return game.wall.remaining > FENZHANG_DRAWS  # X4: a replacement never takes a 分张 tile

    def kong_allowed(self, game: Game, seat: int, kind: MeldKind, tile: int) -> bool:
        return True

    def after_kong(self, game: Game, seat: int) -> None:
        """X5: a ready player whose kong leaves the hand not ready becomes 相公."""
        st = game.seats[seat]
        if st.ready and not self.winning_mask(game, seat, st.counts):
            st.ready = False
            st.ready_waits = 0
            st.xianggong = True

    def kong_payments(
        self, game: Game, seat: int, kind: MeldKind, tile: int, source: int | None
    ) -> list[tuple[int, float]]:
        if kind is MeldKind.KONG:  # 下雨: the discarder pays
            assert source is not None
            return [(source, 1.0)]
        return [((seat + d) % 4, 1.0) for d in (1, 2, 3)]  # 刮风

    def drawn_hand_refunds(self, game: Game) -> list[tuple[int, int, float]]:
        return list(game.kong_ledger)  # X8: every kong payment of the hand is returned

    def before_draw(self, game: Game, seat: int) -> TurnStart:
        return START_FINAL_DRAWS if game.wall.remaining <= FENZHANG_DRAWS else START_DRAW  # X4 分张

    def final_draws(self, game: Game) -> int:
        return FENZHANG_DRAWS

    # --- scoring (X6, X7, X9)

    def hand_base(self, game: Game) -> float:
        return float(max(1, int(min(game.silver) // self.config.silver_divisor)))

    def fans(
        self, melds: Sequence[Meld], kongs_made: int, counts: list[int], tile: int | None, method: str
    ) -> tuple[list[Fan], int]:
        """The fan list and the pattern fan (shape + 清一色 + registered patterns)."""
        cfg = self.config
        table = dict(cfg.shape_fans)
        readings = hand.decompositions(counts)
        shape: FanKey | None = None
        shape_fan = -1
        if readings:
            all_triplets = not self.has_chow(melds) and any(not d.sequences for d in readings)
            shape = (
                FanKey.PENGPENGHU if all_triplets and table[FanKey.PENGPENGHU] > table[FanKey.PINGHU] else FanKey.PINGHU
            )
            shape_fan = table[shape]
        if cfg.allow_seven_pairs and not melds and hand.is_seven_pairs(counts):
            pairs = FanKey.HAOHUA_QIDUI if hand.seven_pairs_luxury(counts) else FanKey.QIDUI
            if table[pairs] > shape_fan:
                shape, shape_fan = pairs, table[pairs]
        assert shape is not None
        fans = [Fan(shape, shape_fan)]
        whole = self.all_tiles(melds, counts)
        suits = {suit_of(t) for t in range(34) if whole[t]}
        if len(suits) == 1 and 3 not in suits:
            fans.append(Fan(FanKey.QINGYISE, cfg.qingyise_fan))
        if cfg.extra_patterns:
            view = WinningHand(
                tuple(counts),
                tuple((m.kind_name, tuple(m.tiles)) for m in melds),
                tile,
                method,
                tuple(readings),
            )
            for name, fan in cfg.extra_patterns:
                if PATTERNS[name](view):
                    fans.append(Fan(name, fan))
        pattern_fan = sum(f.fan for f in fans)
        if method is WinMethod.KONG_BLOOM:
            fans.append(Fan(FanKey.GANGSHANG_KAIHUA, cfg.gangshang_fan))
        if kongs_made:
            fans.append(Fan(FanKey.GANG, cfg.kong_fan * kongs_made))
        return fans, pattern_fan

    def settle(self, game: Game, winner: int, method: WinMethod, tile: int | None, payer: int | None) -> Settlement:
        cfg = self.config
        st = game.seats[winner]
        counts = list(st.counts)
        if method in CLAIM_METHODS:
            assert tile is not None
            counts[tile] += 1
        fans, pattern_fan = self.fans(st.melds, st.kongs_made, counts, tile, method)
        total = min(sum(f.fan for f in fans), cfg.fan_cap)
        points = float(2 ** (total - 1))
        losers = [(winner + d) % 4 for d in (1, 2, 3)]
        if method is WinMethod.ROB_KONG:  # X7: the robbed konger pays for all three
            assert payer is not None
            owed = [Owed(payer, 3 * points, "rob_kong")]
        elif method is WinMethod.DISCARD:  # X9: 包三 for a big hand
            assert payer is not None
            owed = [Owed(payer, (3 if pattern_fan >= 3 else 1) * points, "discard")]
        else:
            share = points if cfg.self_draw_each_pays_full else points / 3
            owed = [Owed(p, share, method) for p in losers]
        xianggong = [p for p in losers if game.seats[p].xianggong]
        if xianggong and cfg.xianggong_pays_all:  # X5 相公包牌
            total_owed = sum(o.points for o in owed)
            owed = [Owed(p, total_owed / len(xianggong), "xianggong") for p in xianggong]
        return Settlement(tuple(fans), total, tuple(owed), None)
