"""Tile notation, indices and glyphs (RULES.md R1)."""

from __future__ import annotations

import pytest

from mahjong_env.tiles import (
    CHINESE,
    GLYPHS,
    NUM_KINDS,
    TILE_NAMES,
    counts_of,
    format_counts,
    format_tiles,
    glyph_string,
    is_dragon,
    is_honor,
    is_terminal,
    is_wind,
    parse_tiles,
    rank_of,
    suit_of,
    tile_index,
    tile_name,
    tiles_of,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        ("   ", []),
        ("1m", [0]),
        ("9m1p9p1s9s", [8, 9, 17, 18, 26]),
        ("1234567z", [27, 28, 29, 30, 31, 32, 33]),
        ("1m5p2m", [0, 13, 1]),
        ("123m456p77z", [0, 1, 2, 12, 13, 14, 33, 33]),
        ("1111m 333p", [0, 0, 0, 0, 11, 11, 11]),
        (" 1 2m\t3 s ", [0, 1, 20]),
    ],
)
def test_r1_parse_tiles(text: str, expected: list[int]) -> None:
    assert parse_tiles(text) == expected


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("123", "'123'"),
        ("12m3", "'3'"),
        ("m", "'m'"),
        ("12m p", "'p'"),
        ("123x", "'x'"),
        ("12M", "'M'"),
        ("8z", "'8z'"),
        ("19z", "'9z'"),
        ("0m", "'0m'"),
        ("505p", "'0p'"),
        ("1m２m", "'２'"),
    ],
)
def test_r1_parse_tiles_errors_name_the_bad_part(text: str, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        parse_tiles(text)


def test_r1_parse_tiles_gives_a_fresh_list_and_never_remembers_an_error() -> None:
    """Parsed texts are remembered (players read the same hands at every decision): each call
    still returns its own list, and a text that does not parse raises every time."""
    first = parse_tiles("123m77z")
    first.append(0)
    assert parse_tiles("123m77z") == [0, 1, 2, 33, 33]
    assert parse_tiles("123m77z") is not parse_tiles("123m77z")
    for _ in range(2):
        with pytest.raises(ValueError, match="'8z'"):
            parse_tiles("8z")


@pytest.mark.parametrize(
    ("tiles", "text"),
    [
        ([], ""),
        ([0, 1, 13, 2], "12m5p3m"),
        ([33, 27, 0], "71z1m"),
        ([18, 18, 26], "119s"),
        ([0, 9, 18, 27], "1m1p1s1z"),
    ],
)
def test_r1_format_tiles_keeps_order(tiles: list[int], text: str) -> None:
    assert format_tiles(tiles) == text
    assert parse_tiles(text) == tiles


@pytest.mark.parametrize(
    "text", ["123m456p789s1234567z", "1112345678999m", "55z", "19m19p19s1234567z"]
)
def test_r1_counts_round_trip(text: str) -> None:
    counts = counts_of(parse_tiles(text))
    assert len(counts) == NUM_KINDS
    assert sum(counts) == len(parse_tiles(text))
    assert format_counts(counts) == text
    assert tiles_of(counts) == sorted(parse_tiles(text))


def test_r1_format_counts_sorts() -> None:
    assert format_counts(counts_of(parse_tiles("5z3m1m2m5z"))) == "123m55z"


def test_r1_every_name_round_trips() -> None:
    assert len(TILE_NAMES) == NUM_KINDS
    assert TILE_NAMES[0] == "1m" and TILE_NAMES[9] == "1p" and TILE_NAMES[33] == "7z"
    for i, name in enumerate(TILE_NAMES):
        assert tile_index(name) == i
        assert tile_name(i) == name
        assert parse_tiles(name) == [i]
    assert format_tiles(range(NUM_KINDS)) == "123456789m123456789p123456789s1234567z"


@pytest.mark.parametrize("name", ["", "5", "m", "55m", "0m", "8z", "5x", "1m2m"])
def test_r1_tile_index_rejects(name: str) -> None:
    with pytest.raises(ValueError, match="single tile"):
        tile_index(name)


@pytest.mark.parametrize("bad", [-1, 34, 100])
def test_r1_indices_out_of_range(bad: int) -> None:
    with pytest.raises(ValueError, match="0-33"):
        tile_name(bad)
    with pytest.raises(ValueError, match="0-33"):
        format_tiles([bad])
    with pytest.raises(ValueError, match="0-33"):
        counts_of([bad])


def test_r1_tiles_of_rejects_bad_arrays() -> None:
    with pytest.raises(ValueError, match="34 entries"):
        tiles_of([1, 2])
    with pytest.raises(ValueError, match="non-negative"):
        tiles_of([-1] + [0] * 33)


def test_r1_glyphs_and_chinese() -> None:
    assert len(GLYPHS) == NUM_KINDS == len(set(GLYPHS))
    assert len(CHINESE) == NUM_KINDS == len(set(CHINESE))
    assert glyph_string(parse_tiles("19m19p19s1234567z")) == "🀇🀏🀙🀡🀐🀘🀀🀁🀂🀃🀆🀅🀄"
    assert CHINESE[0] == "一万" and CHINESE[17] == "九饼" and CHINESE[22] == "五条"
    assert CHINESE[27:] == ("东", "南", "西", "北", "白", "发", "中")


@pytest.mark.parametrize(
    ("name", "suit", "rank", "honor", "terminal", "wind", "dragon"),
    [
        ("1m", 0, 1, False, True, False, False),
        ("5m", 0, 5, False, False, False, False),
        ("9p", 1, 9, False, True, False, False),
        ("2s", 2, 2, False, False, False, False),
        ("9s", 2, 9, False, True, False, False),
        ("1z", 3, 1, True, False, True, False),
        ("4z", 3, 4, True, False, True, False),
        ("5z", 3, 5, True, False, False, True),
        ("7z", 3, 7, True, False, False, True),
    ],
)
def test_r1_tile_predicates(
    name: str, suit: int, rank: int, honor: bool, terminal: bool, wind: bool, dragon: bool
) -> None:
    i = tile_index(name)
    assert (suit_of(i), rank_of(i)) == (suit, rank)
    assert (is_honor(i), is_terminal(i), is_wind(i), is_dragon(i)) == (
        honor,
        terminal,
        wind,
        dragon,
    )
