"""The HTML replay viewer: one recorded hand as a self-contained page you step through.

`replay_html(record, seat, hand)` replays hand ``hand`` of a game record (API.md "Game
records") through the engine (`mahjong_env.records.replay_hand`) and precomputes every step's
table with `mahjong_env.view.table_view`, so the page shows the same information as the text
view (`render_text`) of the same seat: the four hands, the rivers in order with claimed
discards marked, the melds (special kongs 旋风杠 喜杠 幺蛋 九蛋 included), ready (听)
declarations, the bao (宝牌), the dice, the wall count, the scores and, at the end, the
settlement with every fan (番) and payment. `write_replay` writes it to a file.

Two modes:

- ``seat=None``: the full table, every hand face up, the bao as soon as it is set aside.
- ``seat=S``: player S's view (RULES.md R13). Only ``table_view(game, S, ...)`` enters the page,
  never the record (which holds every hand and the wall) nor the seed (which determines the
  wall): the other seats' concealed tiles, an unseen bao, other players' pending claims and
  their private decisions (a pass in a claim window, viewing the bao) are not in the file.
  Steps that S could not tell apart (another player deciding in a claim, robbing, bao or 分张
  window) are merged into the next step S sees, and the text of a step names only what S saw
  happen (a claim is told by its outcome). The settlement (the hand's result) is public.

The page needs no network (inline CSS and JS, a Content-Security-Policy that forbids every
request) and opens from disk. Its Chinese labels need a CJK font on the machine that shows it
(`mahjong_env.fonts`: Debian's ``fonts-wqy-microhei`` or any common CJK font). Controls:
first / previous / play-pause / next / last buttons, a slider, and the keyboard (← → Home End,
space). The URL fragment ``#step=N`` or ``#step=last`` opens a given step (used by the tests,
which load the page in headless Chromium).
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from mahjong_env import actions as A
from mahjong_env.engine.state import Phase
from mahjong_env.fonts import CSS_FONT_STACK
from mahjong_env.records import check_record, replay_match
from mahjong_env.rules.base import FAN_TERMS
from mahjong_env.tiles import CHINESE, tile_index, tile_name
from mahjong_env.view import table_view
from mahjong_env.visibility import concealed_kong_hidden, sees_decider

__all__ = [
    "Narrator",
    "describe_result",
    "fan_cap_note",
    "reason_text",
    "replay_frames",
    "replay_html",
    "write_replay",
    "FAN_TERMS",
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


def _player(seat: int) -> str:
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
    return f"Hand over: {_player(result['winner'])} wins: {english} ({chinese}){tile}, {result['total_fan']} fan (番)"


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
        """Whether ``seat`` sees the current state as a step of its own (see the module doc)."""
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
            each = ", ".join(f"{_player(p['from'])} {p['points']:g}" for p in items)
            lines.append(f"{_player(payee)} receives {total:g} point(s) for the kong ({reason_text('kong')}): {each}")
        return lines

    def _roll_line(self, roll: int) -> str:
        change = " (换宝, the bao changes)" if self._bao is not None else ""
        return f"dice rolled for the bao (宝牌): {roll}{change}"

    def _claim_line(self, window: Any, claimer: int, action: int) -> str:
        tile, source = window.tile, window.source
        if window.kind != "discard":
            return f"{_player(claimer)} robs {_player(source)}'s addition of {_tile(tile)} with a pong (抢叉)"
        text = f"{_player(claimer)} {_CLAIM_VERBS[action]} {_tile(tile)} from {_player(source)}"
        if action in _CHOW_TILES:
            text += ": " + "".join(tile_name(tile + d)[0] for d in _CHOW_TILES[action]) + tile_name(tile)[1]
        return text

    def _action_line(self, game: Any, actor: int, name: str) -> str:
        who = _player(actor)
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
                Phase.FENZHANG: f"{who} does not win on the last-tiles draw (分张)",
            }.get(phase, f"{who} passes")
        return f"{who}: {name}"


def _rivers(game: Any, claimed_by: dict[int, int], final: bool) -> list[list[dict[str, Any]]]:
    """Every discard by seat in order: tile, claimed by whom (or won on), ready declaration."""
    rivers: list[list[dict[str, Any]]] = [[], [], [], []]
    result = game.result if final else None
    last = len(game.history) - 1
    for i, (seat, tile, claimed, ready) in enumerate(game.history):
        entry: dict[str, Any] = {"tile": tile_name(tile), "claimed": None, "ready": bool(ready)}
        if claimed:
            entry["claimed"] = claimed_by.get(i, -1)
        elif result is not None and result.get("method") == "discard" and i == last:
            entry["won"] = result["winner"]
        rivers[seat].append(entry)
    return rivers


def replay_frames(record: dict[str, Any], seat: int | None = None, hand: int = 0) -> dict[str, Any]:
    """The data the page embeds: ``{"meta", "frames"}``, one frame per step ``seat`` sees.

    A frame is ``{"view": table_view(...), "rivers", "text": [lines], "result"}`` (``result``
    only once the hand is over; in full mode also ``"bao_seen_by"``). Raises ValueError for a
    seat outside 0-3, a hand the record lacks, or a record the engine cannot replay.
    """
    if seat is not None and (isinstance(seat, bool) or seat not in (0, 1, 2, 3)):
        raise ValueError(f"seat must be None (the full table, face up) or a seat 0-3, got {seat!r}")
    rules = check_record(record)
    hands = record["hands"]
    if isinstance(hand, bool) or not isinstance(hand, int) or not 0 <= hand < len(hands):
        raise ValueError(
            f"hand must be an index 0..{len(hands) - 1} into the record's {len(hands)} hand(s), got {hand!r}"
        )
    config = dict(record.get("config", {}))
    ckv = bool(rules.config.concealed_kong_visible)
    start: dict[str, Any] = {}
    narrator = Narrator(seat, ckv)
    frames: list[dict[str, Any]] = []
    pending: list[str] = []
    actor: list[int | None] = [None]  # the last actor ``seat`` saw act since the last frame

    def on_step(game: Any, action: tuple[int, str] | None) -> None:
        if action is None:
            narrator.start(game)
            pending.append(f"deal: {_player(game.dealer)} is the dealer (庄)")
            start["scores"] = list(game.scores)
            if rules.uses_silver:  # X7: the hand's base and silver, carried over the match
                start["base"] = game.base
                start["silver"] = list(game.silver)
        else:
            pending.extend(narrator.step(game, action[0], action[1]))
            if narrator.public_actor is not None:
                actor[0] = narrator.public_actor
            if not narrator.sees(game):
                return
        over = game.phase == Phase.OVER
        frame: dict[str, Any] = {
            "view": table_view(game, seat, ckv),
            "rivers": _rivers(game, narrator.claimed_by, over),
            "text": list(pending),
            "actor": actor[0],
            "result": game.result if over else None,
        }
        if seat is None:
            frame["bao_seen_by"] = [st.bao_seen for st in game.seats]
        frames.append(json.loads(json.dumps(frame)))
        pending.clear()
        actor[0] = None

    game = replay_match(record, hand, on_step)[0]
    if pending and frames:
        frames[-1]["text"].extend(pending)
    meta: dict[str, Any] = {
        "variant": record["variant"],
        "hand": hand,
        "num_hands": len(hands),
        "seat": seat,
        "dealer": int(hands[hand]["dealer"]),
        "config": config,
        "finished": hands[hand].get("result") is not None,
        "uses_bao": bool(getattr(rules, "uses_bao", False)),
        "start": start,
        "fan_note": fan_cap_note(game.result, rules.config) if game.result is not None else None,
    }
    if record.get("players") is not None:
        meta["players"] = list(record["players"])
    if seat is None:
        meta["seed"] = record.get("seed")
    return {"meta": meta, "frames": frames, "terms": _terms()}


def _terms() -> dict[str, Any]:
    return {"fans": FAN_TERMS, "methods": METHOD_TERMS, "melds": MELD_TERMS, "reasons": REASON_TERMS}


def _check_players(players: Any) -> list[str] | None:
    if players is None:
        return None
    if not isinstance(players, (list, tuple)) or len(players) != 4 or not all(isinstance(p, str) for p in players):
        raise ValueError(f"players must be four names by seat, got {players!r}")
    return list(players)


def replay_html(
    record: dict[str, Any],
    seat: int | None = None,
    hand: int = 0,
    title: str | None = None,
    players: list[str] | None = None,
) -> str:
    """The self-contained HTML page replaying hand ``hand`` of ``record`` (see the module doc).

    ``title`` (e.g. a tournament's ``"deal 3, seating 1: A vs B vs C vs D"``) heads the page
    and names the browser tab; by default the variant, hand and mode. ``players`` (four names
    by seat) overrides the record's optional ``"players"``; the names are shown on every seat."""
    if title is not None and not isinstance(title, str):
        raise ValueError(f"title must be a string, got {title!r}")
    names = _check_players(players)
    if names is not None:
        record = dict(record, players=names)
    data = replay_frames(record, seat, hand)
    meta = data["meta"]
    who = "full table, face up" if seat is None else f"{_player(seat)}'s view"
    heading = f"{meta['variant']} hand {hand}: {who}"
    if title is not None:
        heading = f"{title} · hand {hand}: {who}"
    meta["title"] = heading
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    payload = payload.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return (
        _PAGE.replace("%TITLE%", html.escape(heading))
        .replace("%CSS%", _CSS.replace("%FONTS%", CSS_FONT_STACK))
        .replace("%JS%", _JS)
        .replace("%DATA%", payload)
    )


def write_replay(
    record: dict[str, Any],
    path: str | Path,
    seat: int | None = None,
    hand: int = 0,
    title: str | None = None,
    players: list[str] | None = None,
) -> Path:
    """Write `replay_html` of ``record`` to ``path`` (UTF-8); returns the path."""
    path = Path(path)
    path.write_text(replay_html(record, seat, hand, title, players), encoding="utf-8")
    return path


def fan_cap_note(result: dict[str, Any], config: Any) -> str | None:
    """``"capped at 6 fan (the fans add up to 8)"`` when the fan cap lowered ``total_fan``
    (X6, C10), else None."""
    cap = getattr(config, "fan_cap", None)
    added = sum(value for _, value in result.get("fans") or [])
    if cap is None or result.get("outcome") != "win" or result.get("total_fan") != cap or added <= cap:
        return None
    return f"capped at {cap} fan (the fans add up to {added})"


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%TITLE%</title>
<style>%CSS%</style>
</head>
<body>
<header>
  <h1 id="title">%TITLE%</h1>
  <div id="meta"></div>
</header>
<nav id="controls">
  <button id="first" title="first step (Home)">&#xAB; first</button>
  <button id="prev" title="previous step (&#x2190;)">&#x25C0; prev</button>
  <button id="play" title="play / pause (space)">&#x25B6; play</button>
  <button id="next" title="next step (&#x2192;)">next &#x25B6;</button>
  <button id="last" title="last step (End)">last &#xBB;</button>
  <input id="slider" type="range" min="0" value="0" aria-label="step">
  <span id="counter"></span>
</nav>
<section id="action" aria-live="polite"></section>
<section id="status"></section>
<main id="table"></main>
<section id="settlement-box"></section>
<footer>Keys: &#x2190; &#x2192; step, Home / End jump, space play / pause. Open at a step with #step=N or #step=last.</footer>
<script id="replay-data" type="application/json">%DATA%</script>
<script>%JS%</script>
</body>
</html>
"""

_CSS = """
body { font-family: %FONTS%; margin: 12px 18px; background: #f4f1e8; color: #222; }
h1 { font-size: 1.25em; margin: 0 0 4px 0; }
#meta, #status { color: #444; margin: 4px 0; }
#controls { margin: 8px 0; display: flex; gap: 6px; align-items: center; flex-wrap: wrap; }
#controls button { font-size: 1em; padding: 3px 10px; }
#slider { width: 320px; }
#action { background: #fffbe6; border: 1px solid #d8c98a; border-radius: 6px; padding: 6px 10px; min-height: 1.4em; font-size: 1.1em; }
#action div { margin: 2px 0; }
.seat { background: #2f6b3f; color: #f5f5f5; border-radius: 8px; padding: 6px 10px; margin: 8px 0; border: 3px solid transparent; }
.seat.to-move { border-color: #ffd34d; }
.seat.actor { box-shadow: 0 0 0 3px #ff9f43; }
.seat-head { font-weight: bold; margin-bottom: 4px; }
.tag { display: inline-block; background: #f0e6c8; color: #333; border-radius: 4px; padding: 0 5px; margin-left: 6px; font-size: 0.85em; font-weight: normal; }
.tag.ready { background: #ffd34d; }
.tag.dead { background: #e57373; }
.row { display: flex; align-items: flex-end; gap: 4px; margin: 3px 0; flex-wrap: wrap; }
.label { width: 52px; font-size: 0.85em; color: #d8e8d8; }
.tile { display: inline-flex; flex-direction: column; align-items: center; justify-content: center; width: 32px; height: 46px; background: #fdfdf6; color: #111; border: 1px solid #888; border-radius: 4px; box-shadow: 1px 2px 0 #bbb; line-height: 1.05; }
.tile .rank { font-size: 16px; font-weight: bold; }
.tile .suit { font-size: 11px; }
.tile.z .suit { font-size: 8px; }
.tile .code { font-size: 9px; color: #555; }
.tile.m .rank { color: #b3261e; }
.tile.p .rank { color: #1f5fa8; }
.tile.s .rank { color: #1d7a32; }
.tile.z .rank { color: #333; }
.tile.back { background: #3d8bd0; border-color: #255f91; box-shadow: 1px 2px 0 #1f4f78; }
.tile.small { width: 26px; height: 38px; }
.tile.small .rank { font-size: 13px; }
.tile.small .suit { font-size: 9px; }
.tile.small.z .suit { font-size: 7px; }
.tile.claimed { opacity: 0.45; border-style: dashed; }
.tile.won { outline: 3px solid #e53935; }
.tile.readymark { outline: 2px solid #ffd34d; }
.tile.drawn { margin-left: 10px; }
.meld { display: inline-flex; gap: 1px; padding: 2px 4px; background: #245532; border-radius: 5px; flex-direction: column; }
.meld .tiles { display: flex; gap: 1px; }
.meld .kind { font-size: 0.75em; color: #dfe; text-align: center; }
.river-note { font-size: 0.7em; color: #cfe; }
.discard { display: inline-flex; flex-direction: column; align-items: center; }
#settlement { border-collapse: collapse; margin: 8px 0; background: #fff; }
#settlement td, #settlement th, .fans td, .fans th, .payments td, .payments th { border: 1px solid #aaa; padding: 3px 8px; text-align: left; }
.fans, .payments { border-collapse: collapse; margin: 6px 0; background: #fff; }
footer { color: #777; font-size: 0.85em; margin-top: 14px; }
"""

_JS = r"""
"use strict";
const DATA = JSON.parse(document.getElementById("replay-data").textContent);
const META = DATA.meta, FRAMES = DATA.frames, TERMS = DATA.terms;
const SUITS = "mpsz";
const DIGITS = "一二三四五六七八九";
const SUIT_CN = {m: "万", p: "饼", s: "条"};
const HONORS = "东南西北白发中";
const HONOR_EN = ["East", "South", "West", "North", "White", "Green", "Red"];
const HONOR_GLYPHS = [0x1F000, 0x1F001, 0x1F002, 0x1F003, 0x1F006, 0x1F005, 0x1F004];
const GLYPH_BASE = {m: 0x1F007, p: 0x1F019, s: 0x1F010};
let index = 0, timer = null;

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = text;
  return node;
}
function parseTiles(text) {
  const out = [];
  let digits = [];
  for (const ch of text || "") {
    if (ch >= "1" && ch <= "9") digits.push(ch);
    else if (SUITS.includes(ch)) { for (const d of digits) out.push(d + ch); digits = []; }
  }
  return out;
}
function glyph(name) {
  const r = Number(name[0]), s = name[1];
  return String.fromCodePoint(s === "z" ? HONOR_GLYPHS[r - 1] : GLYPH_BASE[s] + r - 1);
}
function chinese(name) {
  const r = Number(name[0]), s = name[1];
  return s === "z" ? HONORS[r - 1] : DIGITS[r - 1] + SUIT_CN[s];
}
function tile(name, extra) {
  const s = name[1], r = Number(name[0]);
  const node = el("span", "tile " + s + (extra ? " " + extra : ""));
  node.title = name + " " + chinese(name) + (s === "z" ? " " + HONOR_EN[r - 1] : "") + " " + glyph(name);
  node.dataset.tile = name;
  node.appendChild(el("span", "rank", s === "z" ? HONORS[r - 1] : String(r)));
  node.appendChild(el("span", "suit", s === "z" ? HONOR_EN[r - 1] : SUIT_CN[s]));
  node.appendChild(el("span", "code", name));
  return node;
}
function back(extra) {
  const node = el("span", "tile back" + (extra ? " " + extra : ""));
  node.title = "face-down tile";
  return node;
}
function fmt(x) {
  const v = Math.round(x * 1000) / 1000;
  return (v > 0 ? "+" : "") + String(v);
}
function term(table, key) {
  const t = TERMS[table][key];
  return t ? t[0] + " " + t[1] : key;
}
function player(s) {
  return "player_" + s + (META.players ? " (" + META.players[s] + ")" : "");
}
function row(label) {
  const r = el("div", "row");
  r.appendChild(el("span", "label", label));
  return r;
}

function renderMeta() {
  const parts = [META.variant, "hand " + META.hand + " of " + META.num_hands, "dealer 庄 player_" + META.dealer,
    META.seat === null ? "mode: full table, every hand face up" : "mode: player_" + META.seat + "'s view (others face down)"];
  if (META.seed !== undefined && META.seed !== null) parts.push("seed " + META.seed);
  if (META.start && META.start.base !== undefined) parts.push("base 底 " + META.start.base);
  const start = META.start || {};
  if (start.silver) parts.push("silver 银 at the start " + start.silver.map(String).join(" / "));
  if (META.hand > 0 && start.scores) parts.push("scores before this hand " + start.scores.map(fmt).join(" / "));
  if (META.players) parts.push("players " + META.players.map((name, s) => "p" + s + " " + name).join(", "));
  if (!META.finished) parts.push("hand not finished in the record");
  document.getElementById("meta").textContent = parts.join(" · ");
}

function renderSeat(frame, s) {
  const v = frame.view;
  const box = el("div", "seat");
  box.id = "seat-" + s;
  if (v.to_move === s) box.classList.add("to-move");
  if (frame.actor === s) box.classList.add("actor");
  const head = el("div", "seat-head", player(s) + "  score " + fmt(v.scores[s]));
  if (s === v.dealer) head.appendChild(el("span", "tag", "dealer 庄"));
  if (v.ready[s]) head.appendChild(el("span", "tag ready", "ready 听"));
  if (v.xianggong[s]) head.appendChild(el("span", "tag dead", "相公 dead hand"));
  if (v.to_move === s) head.appendChild(el("span", "tag", "to move"));
  if (frame.bao_seen_by && frame.bao_seen_by[s]) head.appendChild(el("span", "tag", "has seen the bao"));
  if (META.seat === s) head.appendChild(el("span", "tag", "you"));
  box.appendChild(head);

  const hand = row("hand");
  hand.classList.add("hand");
  let concealed = null, drawn = null;
  if (v.hands) { concealed = v.hands[s]; drawn = v.drawn_tiles[s]; }
  else if (s === v.seat) { concealed = v.hand; drawn = v.drawn; }
  if (concealed !== null) {
    const tiles = parseTiles(concealed);
    if (drawn) tiles.splice(tiles.indexOf(drawn), 1);
    for (const t of tiles) hand.appendChild(tile(t));
    if (drawn) hand.appendChild(tile(drawn, "drawn"));
    hand.appendChild(el("span", "river-note", concealed + (drawn ? "  drew " + drawn : "")));
  } else {
    for (let i = 0; i < v.concealed_counts[s]; i++) hand.appendChild(back());
    hand.appendChild(el("span", "river-note", v.concealed_counts[s] + " tiles"));
  }
  box.appendChild(hand);

  if (v.melds[s].length) {
    const melds = row("melds");
    for (const m of v.melds[s]) {
      const group = el("span", "meld");
      group.dataset.kind = m.kind;
      const tiles = el("span", "tiles");
      if (m.tiles) for (const t of parseTiles(m.tiles)) tiles.appendChild(tile(t, "small"));
      else for (let i = 0; i < 4; i++) tiles.appendChild(back("small"));
      group.appendChild(tiles);
      group.appendChild(el("span", "kind", term("melds", m.kind) + (m.from !== null && m.from !== undefined ? " ← p" + m.from : "")));
      melds.appendChild(group);
    }
    box.appendChild(melds);
  }

  const river = row("river");
  river.classList.add("river");
  for (const d of frame.rivers[s]) {
    const cell = el("span", "discard");
    let cls = "small";
    if (d.claimed !== null) cls += " claimed";
    if (d.won !== undefined) cls += " won";
    if (d.ready) cls += " readymark";
    cell.appendChild(tile(d.tile, cls));
    if (d.claimed !== null) cell.appendChild(el("span", "river-note", d.claimed >= 0 ? "→p" + d.claimed : "claimed"));
    else if (d.won !== undefined) cell.appendChild(el("span", "river-note", "胡 p" + d.won));
    else if (d.ready) cell.appendChild(el("span", "river-note", "听"));
    river.appendChild(cell);
  }
  if (!frame.rivers[s].length) river.appendChild(el("span", "river-note", "no discards"));
  box.appendChild(river);
  return box;
}

function renderStatus(frame) {
  const v = frame.view;
  const box = document.getElementById("status");
  box.textContent = "";
  box.appendChild(el("span", null, "wall 牌墙: " + v.wall_remaining + " tiles · phase " + v.phase +
    (v.dice.length ? " · dice 骰子 " + v.dice.join(", ") : "")));
  if (META.uses_bao) {
    box.appendChild(el("span", null, " · bao 宝牌: "));
    if (v.bao) { const b = tile(v.bao, "small"); b.id = "bao"; box.appendChild(b); }
    else if (v.seat !== null && v.dice.length) box.appendChild(el("span", null, v.ready[v.seat] ? "not seen" : "hidden"));
    else box.appendChild(el("span", null, v.dice.length ? "none" : "not rolled yet"));
  }
  if (v.claim) box.appendChild(el("div", null, v.claim.kind + " window on " + v.claim.tile + " " + chinese(v.claim.tile) + " from player_" + v.claim.seat));
}

function renderSettlement(frame) {
  const box = document.getElementById("settlement-box");
  box.textContent = "";
  const r = frame.result;
  if (!r) return;
  box.appendChild(el("h2", null, "Settlement 结算"));
  const summary = el("p", "summary");
  summary.id = "outcome";
  summary.dataset.outcome = r.outcome;
  summary.dataset.winner = r.winner === null ? "" : String(r.winner);
  if (r.outcome === "win") {
    summary.textContent = "winner " + player(r.winner) + ": " + term("methods", r.method) +
      (r.tile ? " on " + r.tile + " " + chinese(r.tile) : "") + " · total fan 番 " + r.total_fan +
      (META.fan_note ? " (" + META.fan_note + ")" : "");
  } else if (r.outcome === "draw") summary.textContent = "exhaustive draw 荒庄: no winner";
  else summary.textContent = "outcome " + r.outcome;
  box.appendChild(summary);
  box.appendChild(el("p", null, "dealer 庄 player_" + r.dealer + " · next dealer player_" + r.next_dealer +
    (r.base !== undefined ? " · base " + r.base : "")));
  if (r.fans.length) {
    const fans = el("table", "fans");
    fans.id = "fans";
    const h = el("tr"); for (const c of ["fan 番", "term", "value"]) h.appendChild(el("th", null, c)); fans.appendChild(h);
    for (const [name, value] of r.fans) {
      const tr = el("tr", "fan");
      tr.dataset.fan = name; tr.dataset.value = String(value);
      tr.appendChild(el("td", null, name)); tr.appendChild(el("td", null, term("fans", name))); tr.appendChild(el("td", null, String(value)));
      fans.appendChild(tr);
    }
    box.appendChild(fans);
  }
  const table = el("table");
  table.id = "settlement";
  const head = el("tr");
  const cols = ["seat", "hand 胡牌", "kongs 杠分", "total", "score after"];
  if (r.payer_fans) cols.splice(1, 0, "payer fan");
  if (r.silver) cols.push("silver 银");
  for (const c of cols) head.appendChild(el("th", null, c));
  table.appendChild(head);
  for (let s = 0; s < 4; s++) {
    const tr = el("tr", "seat-total");
    tr.dataset.seat = String(s);
    tr.dataset.delta = String(r.deltas[s]);
    tr.dataset.kong = String(r.kong_deltas[s]);
    tr.appendChild(el("td", null, player(s) + (s === r.winner ? " 胡 winner" : "")));
    if (r.payer_fans) tr.appendChild(el("td", null, r.payer_fans[s] === null ? "-" : String(r.payer_fans[s])));
    tr.appendChild(el("td", null, fmt(r.deltas[s])));
    tr.appendChild(el("td", null, fmt(r.kong_deltas[s])));
    tr.appendChild(el("td", null, fmt(r.deltas[s] + r.kong_deltas[s])));
    tr.appendChild(el("td", null, fmt(frame.view.scores[s])));
    if (r.silver) tr.appendChild(el("td", null, String(r.silver[s])));
    table.appendChild(tr);
  }
  box.appendChild(table);
  if (r.payments.length) {
    const pay = el("table", "payments");
    pay.id = "payments";
    const h = el("tr"); for (const c of ["from", "to", "points", "reason"]) h.appendChild(el("th", null, c)); pay.appendChild(h);
    for (const p of r.payments) {
      const tr = el("tr", "payment");
      tr.dataset.from = String(p.from); tr.dataset.to = String(p.to); tr.dataset.points = String(p.points); tr.dataset.reason = p.reason;
      tr.appendChild(el("td", null, "player_" + p.from)); tr.appendChild(el("td", null, "player_" + p.to));
      tr.appendChild(el("td", null, String(p.points))); tr.appendChild(el("td", null, term("reasons", p.reason)));
      pay.appendChild(tr);
    }
    box.appendChild(pay);
  }
}

function render() {
  const frame = FRAMES[index];
  const action = document.getElementById("action");
  action.textContent = "";
  for (const line of frame.text) action.appendChild(el("div", null, line));
  if (!frame.text.length) action.appendChild(el("div", null, "…"));
  renderStatus(frame);
  const table = document.getElementById("table");
  table.textContent = "";
  for (let s = 0; s < 4; s++) table.appendChild(renderSeat(frame, s));
  renderSettlement(frame);
  document.getElementById("counter").textContent = "step " + index + " / " + (FRAMES.length - 1);
  const slider = document.getElementById("slider");
  slider.value = String(index);
  document.body.dataset.step = String(index);
}

function go(i) {
  index = Math.max(0, Math.min(FRAMES.length - 1, i));
  render();
  const hash = "#step=" + index;
  if (location.hash !== hash) { try { history.replaceState(null, "", hash); } catch (e) { /* file: URLs may refuse */ } }
  if (index === FRAMES.length - 1) stop();
}
function stop() {
  if (timer !== null) { clearInterval(timer); timer = null; }
  document.getElementById("play").textContent = "▶ play";
}
function toggle() {
  if (timer !== null) { stop(); return; }
  if (index === FRAMES.length - 1) go(0);
  timer = setInterval(() => go(index + 1), 900);
  document.getElementById("play").textContent = "■ pause";
}
function fromHash() {
  const m = /step=(last|\d+)/.exec(location.hash);
  if (!m) return 0;
  return m[1] === "last" ? FRAMES.length - 1 : Number(m[1]);
}

document.getElementById("slider").max = String(FRAMES.length - 1);
document.getElementById("slider").addEventListener("input", (e) => { stop(); go(Number(e.target.value)); });
document.getElementById("first").addEventListener("click", () => { stop(); go(0); });
document.getElementById("prev").addEventListener("click", () => { stop(); go(index - 1); });
document.getElementById("next").addEventListener("click", () => { stop(); go(index + 1); });
document.getElementById("last").addEventListener("click", () => { stop(); go(FRAMES.length - 1); });
document.getElementById("play").addEventListener("click", toggle);
document.addEventListener("keydown", (e) => {
  if (e.target && e.target.tagName === "INPUT" && e.key !== " ") return;
  if (e.key === "ArrowRight") { stop(); go(index + 1); }
  else if (e.key === "ArrowLeft") { stop(); go(index - 1); }
  else if (e.key === "Home") { stop(); go(0); }
  else if (e.key === "End") { stop(); go(FRAMES.length - 1); }
  else if (e.key === " ") { toggle(); }
  else return;
  e.preventDefault();
});
window.addEventListener("hashchange", () => go(fromHash()));
renderMeta();
go(fromHash());
"""
