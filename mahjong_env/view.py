"""Readable views of the table (API.md ``view(agent)``) and their text rendering.

`table_view` gives one seat's view (exactly what R13 lets it see) or, with ``seat=None``, the
full table with every hand face up. `render_text` draws either as text with tile glyphs; the
HTML replay viewer shows the same fields.
"""

from __future__ import annotations

from typing import Any

from mahjong_env.engine.state import PHASE_NAMES, SPECIAL_KINDS, MeldKind, Phase
from mahjong_env.tiles import GLYPHS, format_counts, parse_tiles, tile_name
from mahjong_env.visibility import concealed_kong_hidden, sees_decider

__all__ = ["table_view", "render_text"]


def _meld_view(meld: Any, hidden: bool) -> dict[str, Any]:
    if hidden:
        return {"kind": meld.kind_name, "tiles": None, "from": None}
    tiles = "".join(tile_name(t)[0] for t in meld.tiles) + tile_name(meld.tiles[0])[1]
    if meld.kind in SPECIAL_KINDS or meld.kind is MeldKind.CHOW:
        tiles = _compact(meld.tiles)
    return {"kind": meld.kind_name, "tiles": tiles, "from": meld.source}


def _compact(tiles: list[int]) -> str:
    out, suit = [], None
    for t in tiles:
        name = tile_name(t)
        if suit is not None and name[1] != suit:
            out.append(suit)
        out.append(name[0])
        suit = name[1]
    if suit is not None:
        out.append(suit)
    return "".join(out)


def table_view(game: Any, seat: int | None, concealed_kong_visible: bool) -> dict[str, Any]:
    """The table as seat ``seat`` sees it, or the full table when ``seat`` is None."""
    full = seat is None
    me = game.seats[seat] if seat is not None else None
    # who decides in a window, bao view or 分张 reveals that player's hand (R13)
    shown = sees_decider(game, seat)
    window = game.window if game.phase in (Phase.CLAIM, Phase.ROB) and shown else None
    bao_seen = bool(me is not None and me.bao_seen and game.bao is not None)
    view: dict[str, Any] = {
        "seat": seat,
        "dealer": game.dealer,
        "hand": format_counts(me.counts) if me is not None else None,
        "drawn": tile_name(me.drawn) if me is not None and me.drawn is not None else None,
        "melds": [
            [
                _meld_view(
                    m, m.kind is MeldKind.CONCEALED_KONG and concealed_kong_hidden(s, seat, concealed_kong_visible)
                )
                for m in st.melds
            ]
            for s, st in enumerate(game.seats)
        ],
        "discards": [[tile_name(t) for t in st.river] for st in game.seats],
        "ready": [st.ready for st in game.seats],
        "xianggong": [st.xianggong for st in game.seats],
        "concealed_counts": [sum(st.counts) for st in game.seats],
        "bao": tile_name(game.bao) if game.bao is not None and (full or bao_seen) else None,
        "bao_seen": bao_seen,
        "dice": list(game.dice.rolls),
        "wall_remaining": game.wall.remaining,
        "scores": list(game.scores),
        "hand_index": game.hand_index,
        "phase": PHASE_NAMES[game.phase] if shown else "turn",
        "claim": (
            # .value: a plain str, as API.md gives it (WindowKind is a str enum)
            {"seat": window.source, "tile": tile_name(window.tile), "kind": window.kind.value}
            if window is not None
            else None
        ),
        "last_discard": (
            {"seat": game.last_discard[0], "tile": tile_name(game.last_discard[1])}
            if game.last_discard is not None
            else None
        ),
        # every discard of the hand in order: [seat, tile, claimed, declared ready with it] (R13)
        "history": [[h[0], tile_name(h[1]), bool(h[2]), bool(h[3])] for h in game.history],
    }
    if full:
        view["hands"] = [format_counts(st.counts) for st in game.seats]
        view["drawn_tiles"] = [tile_name(st.drawn) if st.drawn is not None else None for st in game.seats]
    if game.phase != Phase.OVER and shown:
        view["to_move"] = game.actor
    return view


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
