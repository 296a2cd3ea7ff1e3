"""Claim and robbing windows (RULES.md R6, R7): the records `Game` keeps while one is open.

A `Window` lists the players with a claim on a discard (or on a kong addition, for robbing) as
`Candidate` records in the R6 polling order and keeps the best `Claim` made so far; the engine
(`mahjong_env.engine.game`) opens, polls and closes it.
"""

from __future__ import annotations

from typing import NamedTuple

from mahjong_env.engine.state import WindowKind

__all__ = ["Window", "Candidate", "Claim"]


class Candidate(NamedTuple):
    """A player with a claim in a window, waiting to be asked (R6 polling order)."""

    rank: int
    """Its best claim's rank."""
    distance: int
    """Seats after the source in turn order (1 = next)."""
    seat: int
    options: list[int]
    """Its claims, pass not included."""


class Claim(NamedTuple):
    """The best claim made so far in a window; compares by ``(rank, -distance)``."""

    rank: int
    neg_distance: int
    seat: int
    action: int


class Window:
    """A claim window on a discard or a robbing window on a kong addition (R6, R7)."""

    __slots__ = ("kind", "tile", "source", "queue", "best", "options", "win_offered")

    def __init__(self, kind: WindowKind, tile: int, source: int) -> None:
        self.kind = kind
        self.tile = tile
        self.source = source
        self.queue: list[Candidate] = []
        self.best: Claim | None = None
        self.options: list[int] = []
        self.win_offered = False
