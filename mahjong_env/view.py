"""Readable views of the table (API.md ``view(agent)``) and their text rendering.

A view is `mahjong_env.seat_view.SeatView.to_dict` of one seat's `SeatView` (exactly what R13
lets it see) or of the full table's (``seat=None``, every hand face up): `table_view` makes one
from a game directly. `render_text` draws either as text with tile glyphs; the HTML replay
viewer shows the same fields.
"""

from __future__ import annotations

from typing import Any

from mahjong_env.seat_view import TableMemory, seat_view
from mahjong_env.tiles import GLYPHS, parse_tiles

__all__ = ["table_view", "render_text"]


def table_view(game: Any, seat: int | None, concealed_kong_visible: bool) -> dict[str, Any]:
    """The table as seat ``seat`` sees it, or the full table when ``seat`` is None: the view
    dict of its `SeatView`, read with a table memory of its own (an env keeps one per table
    and gives ``env.unwrapped.seat_view(agent)``, which reads the game incrementally)."""
    return seat_view(game, seat, TableMemory(concealed_kong_visible)).to_dict()


def _glyphs(text: str | None) -> str:
    return "".join(GLYPHS[t] for t in parse_tiles(text)) if text else ""


def render_text(view: dict[str, Any], variant: str) -> str:
    """Text rendering of a `table_view` with tile glyphs and notation."""
    seat = view["seat"]
    lines = [
        f"{variant} · hand {view['hand_index']} · dealer player_{view['dealer']} · "
        f"phase {view['phase']} · wall {view['wall_remaining']}" + (f" · dice {view['dice']}" if view["dice"] else "")
    ]
    if view.get("bao"):
        lines.append(f"bao 宝: {_glyphs(view['bao'])} {view['bao']}")
    elif seat is not None and view["dice"]:
        lines.append("bao 宝: not seen" if view["ready"][seat] else "bao 宝: hidden")
    for s in range(4):
        tags = []
        if s == view["dealer"]:
            tags.append("dealer")
        if view["ready"][s]:
            tags.append("ready")
        if view["xianggong"][s]:
            tags.append("相公")
        if view.get("to_move") == s:
            tags.append("to move")
        head = f"player_{s} [{view['scores'][s]:+g}]" + (f" ({', '.join(tags)})" if tags else "")
        lines.append(head)
        if seat is None:
            hand = view["hands"][s]
            lines.append(f"  hand  {_glyphs(hand)}  {hand}")
        elif s == seat:
            lines.append(
                f"  hand  {_glyphs(view['hand'])}  {view['hand']}"
                + (f"  drawn {view['drawn']}" if view["drawn"] else "")
            )
        else:
            lines.append(f"  hand  {'🀫' * view['concealed_counts'][s]}  ({view['concealed_counts'][s]} tiles)")
        melds = [
            f"{m['kind']} {_glyphs(m['tiles'])} {m['tiles']}" if m["tiles"] else f"{m['kind']} 🀫🀫🀫🀫"
            for m in view["melds"][s]
        ]
        if melds:
            lines.append("  melds " + " | ".join(melds))
        river = view["discards"][s]
        lines.append(
            "  river " + ("".join(GLYPHS[parse_tiles(t)[0]] for t in river) + "  " + " ".join(river) if river else "-")
        )
    claim = view.get("claim")
    if claim:
        lines.append(f"{claim['kind']} window on {claim['tile']} from player_{claim['seat']}")
    return "\n".join(lines)
