"""Words for a hand: the glossary of Chinese terms and the narrator of each step.

The glossary (`METHOD_TERMS`, `MELD_TERMS`, `REASON_TERMS`, `reason_text`) gives the Chinese
term and an English gloss of every win method, meld kind and payment reason (API.md "Results").
`Narrator` tells each action of a hand in words as one seat saw it (RULES.md R13: another
player's private decision is told only by its outcome), and `describe_result` sums up a finished
hand in one line. Terminal play (`mahjong_env.tools.play`) and the HTML replay viewer
(`mahjong_env.tools.html_replay`, which re-exports these names) both use them.
"""

from __future__ import annotations

from typing import Any

from mahjong_env.engine.state import MeldKind, Phase
from mahjong_env.seat_view import MeldView, SeatView, TableMemory, concealed_kong_hidden, seat_view, sees_decider
from mahjong_env.tiles import CHINESE, tile_index, tile_name

__all__ = [
    "MELD_TERMS",
    "METHOD_TERMS",
    "REASON_TERMS",
    "Narrator",
    "describe_result",
    "player_name",
    "reason_text",
]

METHOD_TERMS: dict[str, tuple[str, str]] = {
    "self_draw": ("自摸", "self-draw"),
    "kong_bloom": ("杠上开花", "kong bloom"),
    "rob_kong": ("抢杠", "robbing a kong"),
    "discard": ("点炮", "discard win"),
    "bao_draw": ("摸宝", "drawing the bao"),
    "bao_match": ("对宝", "bao match"),
}

MELD_TERMS: dict[str, tuple[str, str]] = {
    "chow": ("吃", "chow"),
    "pong": ("碰", "pong"),
    "kong": ("明杠", "exposed kong"),
    "added_kong": ("加杠", "added kong"),
    "concealed_kong": ("暗杠", "concealed kong"),
    "special_winds": ("旋风杠", "winds kong"),
    "special_dragons": ("喜杠", "dragons kong"),
    "special_ones": ("幺蛋", "ones group"),
    "special_nines": ("九蛋", "nines group"),
}

REASON_TERMS: dict[str, tuple[str, str]] = {
    "self_draw": ("自摸", "self-draw"),
    "discard": ("点炮", "discard win"),
    "rob_kong": ("抢杠", "robbed kong"),
    "xianggong": ("相公", "dead hand"),
    "kong": ("杠分", "kong payment"),
    "kong_refund": ("退杠", "kong refund"),
    "illegal": ("违规", "illegal action"),
    "bao_draw": ("摸宝", "bao draw"),
    "bao_match": ("对宝", "bao match"),
    "baozhuang": ("包庄", "an unready discarder pays for all"),
}
"""Chinese term and English gloss of every payment reason (API.md "Results")."""


def reason_text(reason: str) -> str:
    """``"杠分 kong payment"``: a payment reason in words (the key itself if unknown)."""
    chinese, english = REASON_TERMS.get(reason, ("", reason))
    return f"{chinese} {english}".strip()


_CLAIM_VERBS = {
    MeldKind.CHOW: "chows (吃)",
    MeldKind.PONG: "pongs (碰)",
    MeldKind.KONG: "makes an exposed kong (明杠) on",
}
_SPECIAL_NAMES = {
    "special_winds": "旋风杠 (winds kong, 东南西北)",
    "special_dragons": "喜杠 (dragons kong, 中发白)",
    "special_ones": "幺蛋 (ones group, 1m 1p 1s)",
    "special_nines": "九蛋 (nines group, 9m 9p 9s)",
}


def player_name(seat: int) -> str:
    """``player_3``: the agent name of a seat, as every line calls it."""
    return f"player_{seat}"


def _tile(t: int | str) -> str:
    """``5m (五万)``: notation and Chinese name of one tile."""
    index = t if isinstance(t, int) else tile_index(t)
    return f"{tile_name(index)} ({CHINESE[index]})"


def describe_result(result: dict[str, Any]) -> str:
    """One line about a finished hand: who won, how, on what, with how many fan."""
    if result["outcome"] == "draw":
        return "Hand over: exhaustive draw (荒庄), no winner"
    if result["outcome"] != "win":
        return f"Hand over: {result['outcome']}"
    chinese, english = METHOD_TERMS.get(result["method"], (result["method"], result["method"]))
    tile = f" on {_tile(result['tile'])}" if result.get("tile") else ""
    return (
        f"Hand over: {player_name(result['winner'])} wins: {english} ({chinese}){tile}, {result['total_fan']} fan (番)"
    )


class Narrator:
    """Public account of each step, as seen by ``seat`` (None: the full table).

    Call `start(game)` once at the beginning of the hand and `step(game, actor, name)` after
    every action: it returns the lines that describe the action and its consequences in
    words. It reads what ``seat`` knows from its `mahjong_env.seat_view.SeatView` before and
    after the step (so another player's decision in a window is told only by its outcome, and
    another's concealed kong without its tile when ``concealed_kong_visible`` is off, R7, R13),
    and the public facts of the table: the payments and the result. It also remembers who
    claimed each discard (``claimed_by``: history index to seat).
    """

    def __init__(self, seat: int | None, concealed_kong_visible: bool) -> None:
        self.seat = seat
        self.concealed_kong_visible = concealed_kong_visible
        self.claimed_by: dict[int, int] = {}
        self.public_actor: int | None = None
        self._memory = TableMemory(concealed_kong_visible)
        self._view: SeatView | None = None
        self._payments = 0

    def start(self, game: Any) -> None:
        self.claimed_by = {}
        self._observe(game)

    def _observe(self, game: Any) -> SeatView:
        self._view = view = seat_view(game, self.seat, self._memory)
        self._payments = len(game.payments)
        return view

    def sees(self, game: Any) -> bool:
        """Whether ``seat`` sees the current state as a step of its own (`sees_decider`)."""
        return sees_decider(game, self.seat)

    def step(self, game: Any, actor: int, name: str) -> list[str]:
        before = self._view
        assert before is not None, "call start(game) first"
        payments = game.payments[self._payments :]
        after = self._observe(game)
        lines: list[str] = []
        claim = _claim_made(before, after)
        claim_line = self._claim_line(*claim) if claim is not None else None
        public = self._public(before, actor)
        self.public_actor = actor if public else None
        if public and not (claim is not None and claim[0] == actor):
            lines.append(self._action_line(before, after, actor, name))
        if claim_line is not None:
            lines.append(claim_line)
            assert claim is not None
            old = before.history
            for i, entry in enumerate(after.history):  # the discard it took (抢叉: the robbed addition)
                if entry[2] and (i >= len(old) or not old[i][2]):
                    self.claimed_by[i] = claim[0]
        lines.extend(self._kong_payment_lines(payments))
        rolls = after.dice[len(before.dice) :]
        for roll in rolls:
            lines.append(self._roll_line(roll, before.bao_active))
        if rolls and self.seat is None:
            lines.append(
                f"bao indicator set aside: {_tile(after.bao)}" if after.bao is not None else "no bao this hand"
            )
        if after.phase == Phase.OVER and game.result is not None:
            lines.append(describe_result(game.result))
        return lines

    def end(self, actor: int, name: str) -> list[str]:
        """The line for the action that ended the hand (if ``seat`` saw it), for a caller whose
        game has already moved on to the next hand of a match (``num_hands > 1``)."""
        before = self._view
        if before is not None and self._public(before, actor):
            return [self._action_line(before, None, actor, name)]
        return []

    def _public(self, before: SeatView, actor: int) -> bool:
        """Whether ``seat`` saw ``actor``'s action: not another player's private decision (R13)."""
        return self.seat is None or actor == self.seat or before.to_move is not None

    @staticmethod
    def _kong_payment_lines(payments: list[dict[str, Any]]) -> list[str]:
        """A kong's payments (R7, X7 刮风下雨, C12, the special groups' 杠分) as they happen; a
        hand's settlement is told with its result."""
        by_payee: dict[int, list[dict[str, Any]]] = {}
        for p in payments:
            if p["reason"] == "kong":
                by_payee.setdefault(p["to"], []).append(p)
        lines = []
        for payee, items in by_payee.items():
            total = sum(p["points"] for p in items)
            each = ", ".join(f"{player_name(p['from'])} {p['points']:g}" for p in items)
            lines.append(
                f"{player_name(payee)} receives {total:g} point(s) for the kong ({reason_text('kong')}): {each}"
            )
        return lines

    @staticmethod
    def _roll_line(roll: int, bao_active: bool) -> str:
        change = " (换宝, the bao changes)" if bao_active else ""
        return f"dice rolled for the bao (宝牌): {roll}{change}"

    @staticmethod
    def _claim_line(claimer: int, meld: MeldView, tile: int, source: int, robbed: bool) -> str:
        if robbed:
            return f"{player_name(claimer)} robs {player_name(source)}'s addition of {_tile(tile)} with a pong (抢叉)"
        text = f"{player_name(claimer)} {_CLAIM_VERBS[meld.kind]} {_tile(tile)} from {player_name(source)}"
        if meld.kind is MeldKind.CHOW:
            text += ": " + (meld.notation() or "")
        return text

    def _action_line(self, before: SeatView, after: SeatView | None, actor: int, name: str) -> str:
        who = player_name(actor)
        verb, _, arg = name.partition(" ")
        phase = before.phase
        on = f" {_tile(before.claim.tile)}" if before.claim is not None else ""
        if verb == "discard":
            return f"{who} discards {_tile(arg)}"
        if verb == "ready":
            return f"{who} declares ready (听) and discards {_tile(arg)}"
        if verb == "concealed_kong":
            if not concealed_kong_hidden(actor, self.seat, self.concealed_kong_visible):
                return f"{who} declares a concealed kong (暗杠) of {_tile(arg)}"
            return f"{who} declares a concealed kong (暗杠), face down"
        if verb == "added_kong":
            return f"{who} adds {_tile(arg)} to a pong: added kong (加杠)"
        if verb == "special_add":
            return f"{who} adds {_tile(arg)} to a special kong (补杠)"
        if name in _SPECIAL_NAMES:
            return f"{who} declares {_SPECIAL_NAMES[name]}"
        if name.startswith("chow"):
            return f"{who} calls a chow (吃) on{on}"
        if name == "pong":
            return f"{who} calls a pong (碰) on{on}"
        if name == "kong":
            return f"{who} calls an exposed kong (明杠) on{on}"
        if name == "view_bao":
            bao = f": the bao is {_tile(after.bao)}" if after is not None and after.bao is not None else ""
            return f"{who} looks at the bao (看宝){bao}"
        if name == "win":
            if phase == Phase.CLAIM:
                return f"{who} claims a win (胡) on{on}"
            if phase == Phase.ROB:
                return f"{who} robs the kong (抢杠) on{on}"
            if phase == Phase.DUIBAO:
                return f"{who} wins by matching the bao (对宝)"
            return f"{who} declares a win (胡)"
        if name == "pass":
            return {
                Phase.CLAIM: f"{who} passes (过) on{on}",
                Phase.ROB: f"{who} does not rob the kong on{on}",
                Phase.BAO_VIEW: f"{who} does not look at the bao",
                Phase.DUIBAO: f"{who} declines the bao match (对宝)",
                Phase.FINAL_DRAW: f"{who} does not win on the last-tiles draw (分张)",
            }.get(phase, f"{who} passes")
        return f"{who}: {name}"


def _claim_made(before: SeatView, after: SeatView) -> tuple[int, MeldView, int, int, bool] | None:
    """The claim this step made, as every seat sees it: a discard taken into a new meld (a
    chow, pong or exposed kong), or a special-group addition robbed by a pong (抢叉, its tile
    recorded as a claimed discard). ``(claimer, meld, tile, source, robbed)``; None if none."""
    history = after.history
    if not history or not history[-1][2]:
        return None
    grown = len(history) > len(before.history)  # 抢叉: the robbed addition, recorded claimed
    if not grown and before.history[-1][2]:
        return None  # the last discard was claimed before this step
    source, tile = history[-1][0], history[-1][1]
    for seat, (old, new) in enumerate(zip(before.melds, after.melds)):
        if new is not old and len(new) > len(old) and new[-1].source == source and new[-1].kind in _CLAIM_VERBS:
            return seat, new[-1], tile, source, grown
    return None
