"""Tile kinds, compact notation, glyphs and count arrays (RULES.md R1).

This module owns the 34 tile kinds and every way of writing them down. A tile kind is an index
0–33 in the order 1m…9m (characters 万, 0–8), 1p…9p (dots 饼, 9–17), 1s…9s (bamboo 条, 18–26),
1z…7z (honors 字牌, 27–33: East 东, South 南, West 西, North 北, White 白, Green 发, Red 中).

The compact notation is the Tenhou/Mjx one: digits followed by their suit letter, so
``"123m456p77z"``; spaces are allowed anywhere (``"1111m 333p"``) and the order of the tiles is
kept (``"1m5p2m"`` is ``[0, 13, 1]``). There are no red fives, so the digit ``0`` is invalid.

A hand is also often held as a count array: 34 integers, the number of copies of each kind.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import groupby

__all__ = [
    "CHINESE",
    "GLYPHS",
    "NUM_KINDS",
    "SUIT_LETTERS",
    "TERMINALS_AND_HONORS",
    "TILE_NAMES",
    "counts_of",
    "format_counts",
    "format_tiles",
    "glyph_string",
    "is_dragon",
    "is_honor",
    "is_terminal",
    "is_wind",
    "parse_tiles",
    "rank_of",
    "suit_of",
    "tile_index",
    "tile_name",
    "tiles_of",
]

NUM_KINDS = 34
"""Number of tile kinds; four copies of each make the 136-tile set."""

SUIT_LETTERS = "mpsz"
"""Suit letters in index order: characters, dots, bamboo, honors."""

_SUIT_SIZES = (9, 9, 9, 7)

TILE_NAMES: tuple[str, ...] = tuple(
    f"{rank}{letter}"
    for letter, size in zip(SUIT_LETTERS, _SUIT_SIZES)
    for rank in range(1, size + 1)
)
"""Compact name of every kind: ``TILE_NAMES[0] == "1m"``, ``TILE_NAMES[33] == "7z"``."""
_DIGIT = tuple(name[0] for name in TILE_NAMES)  # `format_tiles`: each kind's digit and suit
_SUIT = tuple(t // 9 for t in range(NUM_KINDS))

GLYPHS: tuple[str, ...] = (
    tuple(chr(0x1F007 + r) for r in range(9))  # 🀇…🀏 characters
    + tuple(chr(0x1F019 + r) for r in range(9))  # 🀙…🀡 dots
    + tuple(chr(0x1F010 + r) for r in range(9))  # 🀐…🀘 bamboo
    + ("\U0001F000", "\U0001F001", "\U0001F002", "\U0001F003")  # 🀀🀁🀂🀃 winds E S W N
    + ("\U0001F006", "\U0001F005", "\U0001F004")  # 🀆 white, 🀅 green, 🀄 red
)
"""Unicode mahjong glyph of every kind."""

_CHINESE_DIGITS = "一二三四五六七八九"

CHINESE: tuple[str, ...] = (
    tuple(f"{d}万" for d in _CHINESE_DIGITS)
    + tuple(f"{d}饼" for d in _CHINESE_DIGITS)
    + tuple(f"{d}条" for d in _CHINESE_DIGITS)
    + ("东", "南", "西", "北", "白", "发", "中")
)
"""Short Chinese name of every kind: ``一万`` … ``九条``, ``东 南 西 北 白 发 中``."""

_INDEX_OF_NAME = {name: i for i, name in enumerate(TILE_NAMES)}


_PARSED: dict[str, tuple[int, ...]] = {}
"""`parse_tiles` by text: players read the same hands and melds at every decision."""
_PARSED_SIZE = 50_000


def parse_tiles(text: str) -> list[int]:
    """Parse compact notation into tile indices, keeping the written order.

    ``parse_tiles("123m 77z") == [0, 1, 2, 33, 33]``; the empty string gives ``[]``.
    Raises ValueError for a digit group without a suit letter, an unknown character, the digit
    0, or an honor rank above 7, naming the offending part.
    """
    if text.__class__ is not str:
        return _parse(text)
    found = _PARSED.get(text)
    if found is None:
        found = tuple(_parse(text))  # a text that does not parse raises here and is not kept
        if len(_PARSED) >= _PARSED_SIZE:
            _PARSED.clear()
        _PARSED[text] = found
    return list(found)


def _parse(text: str) -> list[int]:
    tiles: list[int] = []
    digits: list[str] = []
    start = 0
    for pos, ch in enumerate(text):
        if ch.isspace():
            continue
        if ch in "0123456789":
            if not digits:
                start = pos
            digits.append(ch)
            continue
        suit = SUIT_LETTERS.find(ch)
        if suit < 0:
            raise ValueError(
                f"unknown character {ch!r} at position {pos} in {text!r}; "
                f"write tiles as digits followed by one of the suit letters m, p, s, z"
            )
        if not digits:
            raise ValueError(
                f"suit letter {ch!r} at position {pos} in {text!r} has no digits before it; "
                f"write tiles like '123m'"
            )
        limit = _SUIT_SIZES[suit]
        for d in digits:
            rank = int(d)
            if not 1 <= rank <= limit:
                raise ValueError(
                    f"invalid tile '{d}{ch}' in {text!r}: ranks are 1-{limit} for suit {ch!r}"
                    + (" (there are no red fives; write 5)" if rank == 0 else "")
                )
            tiles.append(9 * suit + rank - 1)
        digits.clear()
    if digits:
        raise ValueError(
            f"digits {''.join(digits)!r} at position {start} in {text!r} have no suit letter; "
            f"end every group with m, p, s or z"
        )
    return tiles


def tile_index(name: str) -> int:
    """Index of one tile written like ``"5m"`` or ``"7z"``."""
    index = _INDEX_OF_NAME.get(name.strip()) if isinstance(name, str) else None
    if index is None:
        raise ValueError(
            f"{name!r} is not a single tile; write one digit and a suit letter, e.g. '5m' or '7z'"
        )
    return index


def _check_index(i: int) -> int:
    if not 0 <= i < NUM_KINDS:
        raise ValueError(f"tile index {i!r} is out of range; tile indices are 0-33")
    return i


def tile_name(i: int) -> str:
    """Compact name of tile index ``i``: ``tile_name(0) == "1m"``."""
    return TILE_NAMES[_check_index(i)]


def format_tiles(tiles: Iterable[int]) -> str:
    """Compact notation keeping the order; consecutive tiles of one suit share their letter.

    ``format_tiles([0, 1, 13, 2]) == "12m5p3m"``.
    """
    tiles = list(tiles)
    if tiles and not (0 <= min(tiles) and max(tiles) < NUM_KINDS):
        for t in tiles:
            _check_index(t)  # names the first index out of range
    return "".join(
        "".join(map(_DIGIT.__getitem__, run)) + SUIT_LETTERS[suit] for suit, run in groupby(tiles, _SUIT.__getitem__)
    )


def format_counts(counts: Sequence[int]) -> str:
    """Sorted compact notation of a 34-count array: ``"123m55z"``."""
    return format_tiles(tiles_of(counts))


def counts_of(tiles: Iterable[int]) -> list[int]:
    """34-length count array of a tile list (no limit of four is enforced here)."""
    counts = [0] * NUM_KINDS
    for t in tiles:
        counts[_check_index(t)] += 1
    return counts


def tiles_of(counts: Sequence[int]) -> list[int]:
    """Sorted tile list of a 34-count array."""
    if len(counts) != NUM_KINDS:
        raise ValueError(f"a count array has 34 entries, got {len(counts)}")
    tiles: list[int] = []
    for i, c in enumerate(counts):
        if c < 0:
            raise ValueError(f"count of {TILE_NAMES[i]} is {c}; counts must be non-negative")
        tiles.extend([i] * int(c))
    return tiles


def suit_of(i: int) -> int:
    """Suit of tile index ``i`` (0–33): 0 characters m, 1 dots p, 2 bamboo s, 3 honors z."""
    return i // 9


def rank_of(i: int) -> int:
    """Rank of tile index ``i`` within its suit: 1–9, or 1–7 for honors."""
    return i % 9 + 1


def is_honor(i: int) -> bool:
    """Whether tile index ``i`` is a wind or a dragon (字牌)."""
    return i >= 27


def is_terminal(i: int) -> bool:
    """Whether tile index ``i`` is a 1 or a 9 of a suit (honors are not terminals)."""
    return i < 27 and i % 9 in (0, 8)


def is_wind(i: int) -> bool:
    """Whether tile index ``i`` is a wind (1z–4z, 东南西北)."""
    return 27 <= i <= 30


def is_dragon(i: int) -> bool:
    """Whether tile index ``i`` is a dragon (5z–7z, 白发中)."""
    return 31 <= i <= 33


TERMINALS_AND_HONORS: tuple[int, ...] = tuple(i for i in range(NUM_KINDS) if is_terminal(i) or is_honor(i))
"""The 1s, 9s and honors (幺九): ``0 8 9 17 18 26 27 … 33``."""


def glyph_string(tiles: Iterable[int]) -> str:
    """The Unicode glyphs of the tiles joined in order."""
    return "".join(GLYPHS[_check_index(t)] for t in tiles)
