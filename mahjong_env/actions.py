"""The action table shared by both variants (API.md, "Actions").

`Discrete(182)`: the same ids for Xinjiang and Changchun; an action a variant never allows is
always masked out. ``T`` is a tile kind 0–33 (RULES.md R1).

| ids     | name               | meaning                                                    |
|---------|--------------------|------------------------------------------------------------|
| 0–33    | ``discard T``      | discard tile T                                             |
| 34–67   | ``ready T``        | declare ready (听) and discard T (R8)                      |
| 68–101  | ``concealed_kong T`` | 暗杠 of T                                                |
| 102–135 | ``added_kong T``   | add T to one's exposed pong of T (加杠)                    |
| 136–169 | ``special_add T``  | add T to one's special-kong group (C6)                     |
| 170     | ``chow_low``       | chow with the claimed tile lowest                          |
| 171     | ``chow_mid``       | claimed tile in the middle                                 |
| 172     | ``chow_high``      | claimed tile highest                                       |
| 173     | ``pong``           | pong the discard (also 抢叉 on a special-kong addition)    |
| 174     | ``kong``           | exposed kong on the discard (直杠)                         |
| 175     | ``win``            | win now                                                    |
| 176     | ``pass``           | decline a claim, robbing chance, bao view, 对宝 or 分张 win |
| 177     | ``view_bao``       | look at the bao (C8)                                       |
| 178–181 | ``special_winds``, ``special_dragons``, ``special_ones``, ``special_nines`` | C5 |
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from operator import index

import numpy as np

from mahjong_env.tiles import TILE_NAMES, tile_index

__all__ = [
    "NUM_ACTIONS",
    "DISCARD",
    "READY",
    "CONCEALED_KONG",
    "ADDED_KONG",
    "SPECIAL_ADD",
    "CHOW_LOW",
    "CHOW_MID",
    "CHOW_HIGH",
    "PONG",
    "KONG",
    "WIN",
    "PASS",
    "VIEW_BAO",
    "SPECIAL_WINDS",
    "SPECIAL_DRAGONS",
    "SPECIAL_ONES",
    "SPECIAL_NINES",
    "SPECIAL_DECLARATIONS",
    "CHOW_OFFSETS",
    "ACTION_NAMES",
    "action_id",
    "action_int",
    "action_name",
    "chow_actions",
    "illegal_action_message",
]

DISCARD = 0
READY = 34
CONCEALED_KONG = 68
ADDED_KONG = 102
SPECIAL_ADD = 136
CHOW_LOW = 170
CHOW_MID = 171
CHOW_HIGH = 172
PONG = 173
KONG = 174
WIN = 175
PASS = 176
VIEW_BAO = 177
SPECIAL_WINDS = 178
SPECIAL_DRAGONS = 179
SPECIAL_ONES = 180
SPECIAL_NINES = 181
NUM_ACTIONS = 182

SPECIAL_DECLARATIONS = (SPECIAL_WINDS, SPECIAL_DRAGONS, SPECIAL_ONES, SPECIAL_NINES)

CHOW_OFFSETS: dict[int, tuple[int, int]] = {CHOW_LOW: (1, 2), CHOW_MID: (-1, 1), CHOW_HIGH: (-2, -1)}
"""Each chow action: the offsets from the claimed tile of the two tiles taken from the hand."""

_TILE_ACTIONS = (
    ("discard", DISCARD),
    ("ready", READY),
    ("concealed_kong", CONCEALED_KONG),
    ("added_kong", ADDED_KONG),
    ("special_add", SPECIAL_ADD),
)
_PLAIN_ACTIONS = (
    "chow_low",
    "chow_mid",
    "chow_high",
    "pong",
    "kong",
    "win",
    "pass",
    "view_bao",
    "special_winds",
    "special_dragons",
    "special_ones",
    "special_nines",
)

ACTION_NAMES: tuple[str, ...] = (
    tuple(f"{verb} {tile}" for verb, _ in _TILE_ACTIONS for tile in TILE_NAMES) + _PLAIN_ACTIONS
)
_IDS = {name: i for i, name in enumerate(ACTION_NAMES)}
_VERB_BASE = dict(_TILE_ACTIONS)


def action_name(action: int) -> str:
    """Name of action id ``action`` (``"discard 5m"``, ``"pong"``): a Python or numpy integer in
    0..181; anything else (a bool, a float, a string) raises ValueError naming it."""
    if action.__class__ is int and 0 <= action < NUM_ACTIONS:  # the common case, checked first
        return ACTION_NAMES[action]
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        raise ValueError(f"an action id must be an int, got {action!r} ({type(action).__name__})")
    if not 0 <= action < NUM_ACTIONS:
        raise ValueError(f"action id {action!r} is out of range: ids are 0..{NUM_ACTIONS - 1}")
    return ACTION_NAMES[int(action)]


def action_id(name: str) -> int:
    """Id of an action name; tile actions accept any single-tile notation (``"ready 7z"``).
    Anything but a string raises ValueError naming it."""
    if not isinstance(name, str):
        raise ValueError(f"an action name must be a string like 'discard 5m' or 'pong', got {name!r}")
    key = " ".join(name.split())
    found = _IDS.get(key)
    if found is not None:
        return found
    verb, _, tile = key.partition(" ")
    if verb in _VERB_BASE and tile:
        return _VERB_BASE[verb] + tile_index(tile)
    raise ValueError(
        f"unknown action {name!r}: expected 'discard|ready|concealed_kong|added_kong|special_add T' "
        f"with T a tile like '5m', or one of {', '.join(_PLAIN_ACTIONS)}"
    )


def action_int(action: object) -> int:
    """An action id as a Python int: a Python or numpy integer (or a 0-d integer array);
    bools, floats, strings and the rest raise ValueError (range is the legality check's)."""
    if action.__class__ is int:
        return action  # type: ignore[return-value]
    if not isinstance(action, (bool, np.bool_)):
        try:
            return index(action)  # type: ignore[arg-type]
        except TypeError:
            pass
    raise ValueError(f"action must be an int, got {action!r} ({type(action).__name__})")


def illegal_action_message(action: int, who: str, legal: Iterable[int] | None) -> str:
    """The one wording of a rejected action (engine, AEC, vector and worker envs):
    ``"illegal action pong for player_2; legal actions: discard 1m, pass"``; an id out of range
    is shown as it was given. ``legal=None`` leaves the legal actions out, for a message that
    other players see (they would show the offender's concealed kinds, R13)."""
    shown = ACTION_NAMES[action] if 0 <= action < NUM_ACTIONS else repr(action)
    if legal is None:
        return f"illegal action {shown} for {who}"
    names = ", ".join(ACTION_NAMES[a] for a in legal)
    return f"illegal action {shown} for {who}; legal actions: {names}"


def chow_actions(counts: Sequence[int], tile: int) -> list[int]:
    """The chow actions on a claimed ``tile`` whose two other tiles ``counts`` holds, in id order
    (honors make no chow)."""
    return [action for action, low, high in _CHOW_SHAPES[tile] if counts[low] and counts[high]]


_CHOW_SHAPES: tuple[tuple[tuple[int, int, int], ...], ...] = tuple(
    tuple(
        (action, tile + low, tile + high)
        for action, (low, high) in CHOW_OFFSETS.items()
        if tile < 27 and tile % 9 + low >= 0 and tile % 9 + high <= 8
    )
    for tile in range(34)
)
"""Per claimed tile: each possible chow as (action, the two hand tiles)."""
