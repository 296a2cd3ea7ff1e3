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

from mahjong_env import actions as A
from mahjong_env.engine.state import Phase
from mahjong_env.tiles import CHINESE, tile_index, tile_name
from mahjong_env.visibility import concealed_kong_hidden, sees_decider

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
    A.CHOW_LOW: "chows (吃)",
    A.CHOW_MID: "chows (吃)",
    A.CHOW_HIGH: "chows (吃)",
    A.PONG: "pongs (碰)",
    A.KONG: "makes an exposed kong (明杠) on",
}
_CHOW_TILES = {A.CHOW_LOW: (0, 1, 2), A.CHOW_MID: (-1, 0, 1), A.CHOW_HIGH: (-2, -1, 0)}
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
    words, leaving out whatever R13 hides from ``seat`` (another player's decision in a window
    is told only by its outcome; another's concealed kong without its tile when
    ``concealed_kong_visible`` is off). It also remembers who claimed each discard.
    """

    def __init__(self, seat: int | None, concealed_kong_visible: bool) -> None:
        self.seat = seat
        self.concealed_kong_visible = concealed_kong_visible
        self.claimed_by: dict[int, int] = {}
        self.public_actor: int | None = None

    def start(self, game: Any) -> None:
        self.claimed_by = {}
        self._observe(game)

    def _observe(self, game: Any) -> None:
        self._phase = game.phase
        self._window = game.window
        self._rolls = len(game.dice.rolls)
        self._bao = game.bao
        self._history = [h[2] for h in game.history]
        self._payments = len(game.payments)

    def sees(self, game: Any) -> bool:
        """Whether ``seat`` sees the current state as a step of its own (`sees_decider`)."""
        return sees_decider(game, self.seat)

    def step(self, game: Any, actor: int, name: str) -> list[str]:
        lines: list[str] = []
        window = self._window
        closed = window is not None and game.window is not window
        best = window.best if closed and window is not None else None
        claim_line = None
        if best is not None and best[3] != A.WIN:
            claim_line = self._claim_line(window, best[2], best[3])
        public = self.seat is None or actor == self.seat or self._phase == Phase.TURN
        self.public_actor = actor if public else None
        if public and not (
            claim_line is not None and best is not None and best[2] == actor and A.action_id(name) == best[3]
        ):
            lines.append(self._action_line(game, actor, name))
        if claim_line is not None:
            lines.append(claim_line)
        for i, flag in enumerate(h[2] for h in game.history):
            if flag and (i >= len(self._history) or not self._history[i]) and best is not None:
                self.claimed_by[i] = best[2]
        lines.extend(self._kong_payment_lines(game.payments[self._payments :]))
        for roll in game.dice.rolls[self._rolls :]:
            lines.append(self._roll_line(roll))
        if self._rolls < len(game.dice.rolls) and self.seat is None:
            lines.append(f"bao indicator set aside: {_tile(game.bao)}" if game.bao is not None else "no bao this hand")
        if game.phase == Phase.OVER and game.result is not None:
            lines.append(describe_result(game.result))
        self._observe(game)
        return lines

    def end(self, actor: int, name: str) -> list[str]:
        """The line for the action that ended the hand (if ``seat`` saw it), for a caller whose
        game has already moved on to the next hand of a match (``num_hands > 1``)."""
        if self.seat is None or actor == self.seat or self._phase == Phase.TURN:
            return [self._action_line(None, actor, name)]
        return []

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

    def _roll_line(self, roll: int) -> str:
        change = " (换宝, the bao changes)" if self._bao is not None else ""
        return f"dice rolled for the bao (宝牌): {roll}{change}"

    def _claim_line(self, window: Any, claimer: int, action: int) -> str:
        tile, source = window.tile, window.source
        if window.kind != "discard":
            return f"{player_name(claimer)} robs {player_name(source)}'s addition of {_tile(tile)} with a pong (抢叉)"
        text = f"{player_name(claimer)} {_CLAIM_VERBS[action]} {_tile(tile)} from {player_name(source)}"
        if action in _CHOW_TILES:
            text += ": " + "".join(tile_name(tile + d)[0] for d in _CHOW_TILES[action]) + tile_name(tile)[1]
        return text

    def _action_line(self, game: Any, actor: int, name: str) -> str:
        who = player_name(actor)
        verb, _, arg = name.partition(" ")
        phase = self._phase
        window = self._window
        on = f" {_tile(window.tile)}" if window is not None else ""
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
            bao = f": the bao is {_tile(game.bao)}" if game is not None and game.bao is not None else ""
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
