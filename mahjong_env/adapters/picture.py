"""The table as an RGB picture: ``render_mode="rgb_array"`` of every environment.

`table_picture` draws a `mahjong_env.view.table_view` (one seat's view, or the full table) as
an ``(FRAME_HEIGHT, FRAME_WIDTH, 3)`` ``uint8`` array: the same content as the text rendering
(`mahjong_env.view.render_text`), so a seat's picture shows exactly what RULES.md R13 lets it
see. Tiles are drawn as small tiles carrying their notation (rank over suit letter, coloured by
suit: ``m`` red, ``p`` blue, ``s`` green, ``z`` black; a concealed tile shows its back), the
rest as upper-case text in a built-in 5x7 pixel font. Every frame has the same size, so frames
make a video (Gymnasium's ``RecordVideo``) as they are. Only numpy is needed.

Layout, top to bottom: the variant, hand, dealer, phase, wall and dice; the bao and an open claim
window (the claimed tile drawn); then one block per seat: its name, score and tags (dealer,
ready, 相公 ``xianggong``, to move) and its melds' kinds; its concealed hand (the drawn tile set
apart) followed by its melds; its river in two rows, the last discard outlined.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from mahjong_env.tiles import parse_tiles, tile_name

__all__ = ["FRAME_HEIGHT", "FRAME_WIDTH", "table_picture"]

_GLYPH_ROWS = {
    " ": "..... ..... ..... ..... ..... ..... .....",
    "A": ".###. #...# #...# ##### #...# #...# #...#",
    "B": "####. #...# #...# ####. #...# #...# ####.",
    "C": ".###. #...# #.... #.... #.... #...# .###.",
    "D": "####. #...# #...# #...# #...# #...# ####.",
    "E": "##### #.... #.... ####. #.... #.... #####",
    "F": "##### #.... #.... ####. #.... #.... #....",
    "G": ".###. #...# #.... #.### #...# #...# .####",
    "H": "#...# #...# #...# ##### #...# #...# #...#",
    "I": ".###. ..#.. ..#.. ..#.. ..#.. ..#.. .###.",
    "J": "..### ...#. ...#. ...#. ...#. #..#. .##..",
    "K": "#...# #..#. #.#.. ##... #.#.. #..#. #...#",
    "L": "#.... #.... #.... #.... #.... #.... #####",
    "M": "#...# ##.## #.#.# #.#.# #...# #...# #...#",
    "N": "#...# #...# ##..# #.#.# #..## #...# #...#",
    "O": ".###. #...# #...# #...# #...# #...# .###.",
    "P": "####. #...# #...# ####. #.... #.... #....",
    "Q": ".###. #...# #...# #...# #.#.# #..#. .##.#",
    "R": "####. #...# #...# ####. #.#.. #..#. #...#",
    "S": ".#### #.... #.... .###. ....# ....# ####.",
    "T": "##### ..#.. ..#.. ..#.. ..#.. ..#.. ..#..",
    "U": "#...# #...# #...# #...# #...# #...# .###.",
    "V": "#...# #...# #...# #...# #...# .#.#. ..#..",
    "W": "#...# #...# #...# #.#.# #.#.# #.#.# .#.#.",
    "X": "#...# #...# .#.#. ..#.. .#.#. #...# #...#",
    "Y": "#...# #...# .#.#. ..#.. ..#.. ..#.. ..#..",
    "Z": "##### ....# ...#. ..#.. .#... #.... #####",
    "0": ".###. #...# #..## #.#.# ##..# #...# .###.",
    "1": "..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###.",
    "2": ".###. #...# ....# ...#. ..#.. .#... #####",
    "3": "##### ...#. ..#.. ...#. ....# #...# .###.",
    "4": "...#. ..##. .#.#. #..#. ##### ...#. ...#.",
    "5": "##### #.... ####. ....# ....# #...# .###.",
    "6": "..##. .#... #.... ####. #...# #...# .###.",
    "7": "##### ....# ...#. ..#.. .#... .#... .#...",
    "8": ".###. #...# #...# .###. #...# #...# .###.",
    "9": ".###. #...# #...# .#### ....# ...#. .##..",
    "_": "..... ..... ..... ..... ..... ..... #####",
    "[": ".###. .#... .#... .#... .#... .#... .###.",
    "]": ".###. ...#. ...#. ...#. ...#. ...#. .###.",
    "(": "...#. ..#.. .#... .#... .#... ..#.. ...#.",
    ")": ".#... ..#.. ...#. ...#. ...#. ..#.. .#...",
    "+": "..... ..#.. ..#.. ##### ..#.. ..#.. .....",
    "-": "..... ..... ..... ##### ..... ..... .....",
    ".": "..... ..... ..... ..... ..... .##.. .##..",
    ",": "..... ..... ..... ..... .##.. ..#.. .#...",
    ":": "..... .##.. .##.. ..... .##.. .##.. .....",
    "|": "..#.. ..#.. ..#.. ..#.. ..#.. ..#.. ..#..",
    "/": "..... ....# ...#. ..#.. .#... #.... .....",
    "=": "..... ..... ##### ..... ##### ..... .....",
    "?": ".###. #...# ....# ...#. ..#.. ..... ..#..",
}
"""The 5x7 pixel font, one string of seven rows per character (``#`` ink). Text is drawn in
upper case; a character without a glyph is drawn as ``?``."""

_CHAR_W, _CHAR_H = 6, 7  # a glyph is 5 wide; one column of space between characters
_LINE = 10
_TILE_W, _TILE_H = 11, 18
_TILE_STEP = _TILE_W + 1
_GROUP_GAP = 6
_MARGIN = 8
_RIVER_ROWS = 2
_RIVER_PER_ROW = 52

FRAME_WIDTH = 2 * _MARGIN + _RIVER_PER_ROW * _TILE_STEP
"""Width of every frame in pixels (640)."""
_TOP = _MARGIN + _LINE + 2 + _TILE_H + 4  # below the header line and the bao/claim row of tiles
_SEAT_BLOCK = _LINE + (_TILE_H + 2) + _RIVER_ROWS * (_TILE_H + 1) + 6
FRAME_HEIGHT = _TOP + 4 * _SEAT_BLOCK + _MARGIN
"""Height of every frame in pixels."""

_BACKGROUND = (22, 92, 58)
_TEXT = (236, 236, 224)
_HIGHLIGHT = (250, 208, 80)
_FACE = (246, 242, 228)
_EDGE = (70, 70, 70)
_BACK = (40, 96, 150)
_SUIT_COLOURS = ((182, 30, 30), (30, 70, 172), (20, 120, 60), (30, 30, 30))  # m p s z


@functools.cache
def _glyphs() -> dict[str, np.ndarray]:
    """The font as boolean (7, 5) arrays, built on first use."""
    return {
        char: np.array([[c == "#" for c in row] for row in rows.split()], dtype=bool)
        for char, rows in _GLYPH_ROWS.items()
    }


class _Canvas:
    """An RGB frame with clipped drawing of text, tiles and outlines."""

    def __init__(self) -> None:
        self.pixels = np.empty((FRAME_HEIGHT, FRAME_WIDTH, 3), dtype=np.uint8)
        self.pixels[:] = _BACKGROUND

    def box(self, x: int, y: int, w: int, h: int, colour: tuple[int, int, int]) -> None:
        x0, y0 = max(x, 0), max(y, 0)
        x1, y1 = min(x + w, FRAME_WIDTH), min(y + h, FRAME_HEIGHT)
        if x0 < x1 and y0 < y1:
            self.pixels[y0:y1, x0:x1] = colour

    def text(self, x: int, y: int, text: str, colour: tuple[int, int, int] = _TEXT) -> int:
        """Draw ``text`` with its top left at (x, y); returns the x after it."""
        glyphs = _glyphs()
        for char in text.upper():
            if x + 5 > FRAME_WIDTH:
                break
            ink = glyphs.get(char, glyphs["?"])
            self.pixels[y : y + _CHAR_H, x : x + 5][ink] = colour
            x += _CHAR_W
        return x

    def tile(self, x: int, y: int, tile: int | None, outline: bool = False) -> int:
        """Draw one tile (None: its back) at (x, y); returns the x of the next tile."""
        if x + _TILE_W > FRAME_WIDTH:
            return x + _TILE_STEP
        if outline:
            self.box(x - 1, y - 1, _TILE_W + 2, _TILE_H + 2, _HIGHLIGHT)
        self.box(x, y, _TILE_W, _TILE_H, _EDGE)
        self.box(x + 1, y + 1, _TILE_W - 2, _TILE_H - 2, _BACK if tile is None else _FACE)
        if tile is not None:
            name = tile_name(tile)
            colour = _SUIT_COLOURS[tile // 9]
            self.text(x + 3, y + 2, name[0], colour)
            self.text(x + 3, y + 10, name[1], colour)
        return x + _TILE_STEP

    def tiles(self, x: int, y: int, tiles: list[int | None]) -> int:
        for t in tiles:
            x = self.tile(x, y, t)
        return x


def _tags(view: dict[str, Any], seat: int) -> list[str]:
    tags = []
    if seat == view["dealer"]:
        tags.append("dealer")
    if view["ready"][seat]:
        tags.append("ready")
    if view["xianggong"][seat]:
        tags.append("xianggong")
    if view.get("to_move") == seat:
        tags.append("to move")
    return tags


def _header(canvas: _Canvas, view: dict[str, Any], variant: str) -> None:
    line = (
        f"{variant}  hand {view['hand_index']}  dealer player_{view['dealer']}  "
        f"phase {view['phase']}  wall {view['wall_remaining']}"
    )
    if view["dice"]:
        line += "  dice " + " ".join(str(d) for d in view["dice"])
    canvas.text(_MARGIN, _MARGIN, line)
    y = _MARGIN + _LINE + 2
    x = _MARGIN
    seat = view["seat"]
    if view.get("bao"):
        x = canvas.text(x, y + 5, "bao ") + 2
        x = canvas.tile(x, y, parse_tiles(view["bao"])[0]) + _GROUP_GAP
    elif seat is not None and view["dice"]:
        x = canvas.text(x, y + 5, "bao not seen" if view["ready"][seat] else "bao hidden") + _GROUP_GAP
    claim = view.get("claim")
    if claim:
        x = canvas.text(x, y + 5, f"{claim['kind']} window on ", _HIGHLIGHT) + 2
        x = canvas.tile(x, y, parse_tiles(claim["tile"])[0]) + 2
        canvas.text(x, y + 5, f" from player_{claim['seat']}", _HIGHLIGHT)


def _hand_tiles(view: dict[str, Any], seat: int) -> tuple[list[int | None], int | None]:
    """The concealed tiles ``view`` shows for ``seat`` (None: a back) and its drawn tile apart."""
    if view["seat"] is None:
        hand, drawn = view["hands"][seat], view["drawn_tiles"][seat]
    elif view["seat"] == seat:
        hand, drawn = view["hand"], view["drawn"]
    else:
        return [None] * view["concealed_counts"][seat], None
    tiles: list[int | None] = list(parse_tiles(hand))
    if drawn is None:
        return tiles, None
    drawn_tile = parse_tiles(drawn)[0]
    tiles.remove(drawn_tile)
    return tiles, drawn_tile


def _seat(canvas: _Canvas, view: dict[str, Any], seat: int, y: int) -> None:
    tags = _tags(view, seat)
    line = f"player_{seat} [{view['scores'][seat]:+g}]" + (f" ({', '.join(tags)})" if tags else "")
    melds = view["melds"][seat]
    if melds:
        line += "  melds: " + ", ".join(m["kind"] for m in melds)
    canvas.text(_MARGIN, y, line, _HIGHLIGHT if view.get("to_move") == seat else _TEXT)
    y += _LINE
    hand, drawn = _hand_tiles(view, seat)
    x = canvas.tiles(_MARGIN, y, hand)
    if drawn is not None:
        x = canvas.tile(x + _GROUP_GAP, y, drawn)
    for meld in melds:
        group: list[int | None] = [None] * 4 if meld["tiles"] is None else list(parse_tiles(meld["tiles"]))
        x = canvas.tiles(x + _GROUP_GAP, y, group)
    y += _TILE_H + 2
    last = view.get("last_discard")
    river = view["discards"][seat]
    for i, name in enumerate(river):
        row, column = divmod(i, _RIVER_PER_ROW)
        if row >= _RIVER_ROWS:
            break
        is_last = last is not None and last["seat"] == seat and i == len(river) - 1 and last["tile"] == name
        canvas.tile(_MARGIN + column * _TILE_STEP, y + row * (_TILE_H + 1), parse_tiles(name)[0], outline=is_last)


def table_picture(view: dict[str, Any], variant: str) -> np.ndarray:
    """``view`` (a `mahjong_env.view.table_view`) drawn as an ``(FRAME_HEIGHT, FRAME_WIDTH, 3)``
    ``uint8`` RGB array; ``variant`` heads it (the env's ``metadata["name"]``)."""
    canvas = _Canvas()
    _header(canvas, view, variant)
    for seat in range(4):
        _seat(canvas, view, seat, _TOP + seat * _SEAT_BLOCK)
    return canvas.pixels
