"""Seeded walls, the deal, head and tail draws, and stacks (RULES.md R3, R4).

Randomness comes from ``numpy.random.SeedSequence(seed)`` with PCG64, split into independent
streams by spawn key: ``(0,)`` picks the first dealer, ``(1, h)`` shuffles hand ``h``'s tiles and
``(2, h)`` rolls hand ``h``'s dice. Hand 3 of seed 7 therefore has the same wall and dice on every
machine, whatever happened in hands 0–2.
"""

from __future__ import annotations

import numpy as np

from mahjong_env.tiles import NUM_KINDS

__all__ = ["Wall", "Dice", "first_dealer", "shuffled_deal"]


def _stream(seed: int, *key: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=key)))


def first_dealer(seed: int) -> int:
    """R3: the first dealer, chosen at random from the seed (首局随机定庄)."""
    return int(_stream(seed, 0).integers(4))


def shuffled_deal(seed: int, hand_index: int, dealer: int) -> tuple[list[list[int]], list[int]]:
    """The four dealt hands (dealer 14, others 13) and the wall in draw order for one hand."""
    order = _stream(seed, 1, hand_index).permutation(4 * NUM_KINDS) // 4
    tiles = order.tolist()
    hands: list[list[int]] = [[] for _ in range(4)]
    start = 0
    for offset in range(4):
        seat = (dealer + offset) % 4
        size = 14 if offset == 0 else 13
        hands[seat] = tiles[start : start + size]
        start += size
    return hands, tiles[start:]


class Dice:
    """One hand's dice: forced sums first (reset option ``dice``), then the hand's dice stream."""

    __slots__ = ("_seed", "_hand_index", "_rng", "_forced", "rolls")

    def __init__(self, seed: int, hand_index: int, forced: list[int] | None = None) -> None:
        self._seed, self._hand_index = seed, hand_index
        self._rng: np.random.Generator | None = None  # made at the first roll: many hands roll no dice
        self._forced = list(forced or [])
        self.rolls: list[int] = []

    def roll(self, count: int) -> int:
        """Sum of ``count`` dice; every roll is public and recorded."""
        if self._forced:
            total = self._forced.pop(0)
        else:
            if self._rng is None:
                self._rng = _stream(self._seed, 2, self._hand_index)
            total = int(self._rng.integers(1, 7, size=count).sum())
        self.rolls.append(total)
        return total


class Wall:
    """The live wall in draw order: head draws from the front, replacement draws from the back.

    ``slots`` is n of R4: the tiles left, with the slot of a set-aside bao indicator (C8)
    still counted while it lies between head and tail; draws skip that slot.
    """

    __slots__ = ("tiles", "head", "tail", "gap", "tail_draws")

    def __init__(self, tiles: list[int]) -> None:
        self.tiles = list(tiles)
        self.head = 0
        self.tail = len(self.tiles)
        self.gap: int | None = None
        self.tail_draws = 0

    @property
    def slots(self) -> int:
        return self.tail - self.head

    def _gap_inside(self) -> bool:
        return self.gap is not None and self.head <= self.gap < self.tail

    @property
    def remaining(self) -> int:
        """Tiles that can still be drawn (the set-aside indicator not counted)."""
        gap, head, tail = self.gap, self.head, self.tail
        if gap is not None and head <= gap < tail:  # `_gap_inside`, inlined: read every observation
            return tail - head - 1
        return tail - head

    def draw_head(self) -> int:
        if self.head == self.gap:
            self.head += 1
        tile = self.tiles[self.head]
        self.head += 1
        return tile

    def slots_after_tail_draw(self) -> int:
        """``slots`` after one more `draw_tail`: one less, or two when that draw skips the
        indicator's slot at the tail end (C13 judges a kong by the n after its replacement)."""
        tail = self.tail - 1
        if tail == self.gap:
            tail -= 1
        return tail - self.head

    def draw_tail(self) -> int:
        self.tail -= 1
        if self.tail == self.gap:
            self.tail -= 1
        self.tail_draws += 1
        return self.tiles[self.tail]

    def upper_of_stack(self, s: int) -> int:
        """Absolute index of the upper tile of the s-th whole stack from the tail (R4, C8)."""
        n, odd = self.tail - self.head, self.tail_draws % 2
        whole = (n - odd) // 2
        s = max(1, min(s, whole))
        return self.head + n - odd - 2 * s

    def set_aside(self, index: int) -> int:
        """Take the tile at ``index`` out of the wall, leaving its slot (C8)."""
        self.gap = index
        return self.tiles[index]

    def put_back(self) -> None:
        """Return the set-aside tile to its slot, or to the tail end if draws passed it (C8)."""
        if self.gap is None:
            return
        if not self._gap_inside():
            tile = self.tiles[self.gap]
            if self.tail < len(self.tiles):
                self.tiles[self.tail] = tile
            else:
                self.tiles.append(tile)
            self.tail += 1
        self.gap = None

    def live_tiles(self) -> list[int]:
        """The drawable tiles in draw order (the indicator excluded)."""
        return [t for i, t in enumerate(self.tiles[self.head : self.tail], self.head) if i != self.gap]
