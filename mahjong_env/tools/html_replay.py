"""The HTML replay viewer: one recorded hand as a self-contained page you step through.

`replay_html(record, seat, hand)` replays hand ``hand`` of a game record (API.md "Game
records") through the engine (`mahjong_env.tools.records.replay_hand`) and precomputes every step's
table with `mahjong_env.view.table_view`, so the page shows the same information as the text
view (`render_text`) of the same seat: the four hands, the rivers in order with claimed
discards marked, the melds (special kongs 旋风杠 喜杠 幺蛋 九蛋 included), ready (听)
declarations, the bao (宝牌), the dice, the wall count, the scores and, at the end, the
settlement with every fan (番) and payment and, in Xinjiang, the silver (银) each seat won or
lost in the hand, its silver after it and each payment's silver (X7). `write_replay` writes it
to a file.

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
request) and opens from disk. Its skeleton, style sheet and script are package data files under
``mahjong_env/tools/static/`` (`STATIC_FILES`, read once by `static_text`); the narrator and the
glossary of terms live in `mahjong_env.tools.narrator` and are re-exported here. Its Chinese labels
need a CJK font on the machine that shows it (`mahjong_env.tools.fonts`: Debian's
``fonts-wqy-microhei`` or any common CJK font). Controls: first / previous / play-pause / next /
last buttons, a slider, and the keyboard (← → Home End, space). The URL fragment ``#step=N``
or ``#step=last`` opens a given step (used by the tests, which load the page in headless
Chromium).
"""

from __future__ import annotations

import html
import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from mahjong_env.engine.state import Phase
from mahjong_env.rules.base import FAN_TERMS
from mahjong_env.tiles import tile_name
from mahjong_env.tools.fonts import CSS_FONT_STACK
from mahjong_env.tools.narrator import (
    MELD_TERMS,
    METHOD_TERMS,
    REASON_TERMS,
    Narrator,
    describe_result,
    player_name,
    reason_text,
)
from mahjong_env.tools.records import check_record, replay_match
from mahjong_env.view import table_view

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
    only once the hand is over; in full mode also ``"bao_seen_by"``). A variant with silver
    (X7) adds to the final frame ``"silver": {"base", "moved", "after"}``: silver per point
    in the hand, each seat's silver won (+) or lost (−) in it, and its silver after it. Raises
    ValueError for a seat outside 0-3, a hand the record lacks, or a record the engine cannot
    replay.
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
            pending.append(f"deal: {player_name(game.dealer)} is the dealer (庄)")
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
        if over and rules.uses_silver:  # X7: the silver this hand moved
            after = list(game.silver)
            moved = [a - b for a, b in zip(after, start["silver"])]
            frame["silver"] = {"base": game.base, "moved": moved, "after": after}
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
    who = "full table, face up" if seat is None else f"{player_name(seat)}'s view"
    heading = f"{meta['variant']} hand {hand}: {who}"
    if title is not None:
        heading = f"{title} · hand {hand}: {who}"
    meta["title"] = heading
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    payload = payload.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return (
        static_text("replay.html")
        .replace("%TITLE%", html.escape(heading))
        .replace("%CSS%", static_text("replay.css").replace("%FONTS%", CSS_FONT_STACK))
        .replace("%JS%", static_text("replay.js"))
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


STATIC_FILES = ("replay.html", "replay.css", "replay.js")
"""The page's assets, package data under ``mahjong_env/tools/static/``: the HTML skeleton (with the
placeholders ``%TITLE%``, ``%CSS%``, ``%JS%`` and ``%DATA%``), its style sheet (``%FONTS%``: the
CJK font stack of `mahjong_env.tools.fonts`) and its script."""


@cache
def static_text(name: str) -> str:
    """The text of one of the page's `STATIC_FILES`, read once from the installed package."""
    if name not in STATIC_FILES:
        raise ValueError(f"no static file {name!r} in the replay viewer; it has {', '.join(STATIC_FILES)}")
    return resources.files("mahjong_env.tools").joinpath("static", name).read_text(encoding="utf-8")
