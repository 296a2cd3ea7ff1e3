"""Who sits where in which deal: the seatings of both formats and every seed of a tournament.

A hand is identified by ``(deal, seating)``. Deal ``d`` is the wall of
``env.reset(seed=deal_seed(seed, d))``; seating ``s`` says which entrant plays each seat.

Duplicate format (the same wall for every seating of a deal, so luck of the deal cancels):

- 2 entrants A, B: seatings ``ABAB`` and ``BABA`` (2 hands per deal): each plays every seat once
  per deal, with two copies at the table.
- 3 entrants A, B, C: ``AABC AACB BBAC BBCA CCAB CCBA`` (6 hands per deal): each entrant plays
  every seat twice per deal, is the doubled one in two hands, and each ordered pair of
  different entrants sits next to each other (X directly before Y) equally often (3 times).
- 4 entrants: the four rotations of one cyclic order (4 hands per deal), so each entrant plays
  every seat once per deal. The cyclic order changes with the deal through the six orders of
  four (``deal % 6``), so over six deals every entrant sits before every other equally often.
- More than 4 entrants: each deal hosts one table of four, played in its four rotations as
  above. Tables run through all ``C(n, 4)`` four-entrant subsets, in a seeded random order
  per block of ``C(n, 4)`` consecutive deals: after each full block every entrant has played
  the same number of deals and every pair has met in the same number of deals
  (``C(n-2, 2)`` per block). Use a multiple of ``C(n, 4)`` deals for an exactly balanced design.

Random-seats format: every deal is played once, by a table drawn from the deal's own seed
(2 entrants: two copies of each; 3: one of them, drawn, doubled; more than 4: a random
four-entrant subset), seated in random order.

Seeds derive from the tournament seed with NumPy's ``SeedSequence``: the deal seed from
``(seed, 0, deal)``, the seed of the agent in seat ``k`` from ``(seed, 1, deal, seating, k)``,
a random-seats table from ``(seed, 2, deal)``, a block's table order from ``(seed, 3, block)``.
So every hand is a pure function of the configuration and its ``(deal, seating)``, whatever
order, worker or machine plays it.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import numpy as np

from agents.tournament.config import TournamentConfig

__all__ = [
    "Charge",
    "HandTask",
    "derive_seed",
    "hands_per_deal",
    "iter_schedule",
    "schedule",
    "seatings_for_deal",
    "total_hands",
]

_TWO = ((0, 1, 0, 1), (1, 0, 1, 0))
_THREE = ((0, 0, 1, 2), (0, 0, 2, 1), (1, 1, 0, 2), (1, 1, 2, 0), (2, 2, 0, 1), (2, 2, 1, 0))
_CYCLIC_ORDERS = ((0, 1, 2, 3), (0, 1, 3, 2), (0, 2, 1, 3), (0, 2, 3, 1), (0, 3, 1, 2), (0, 3, 2, 1))


@dataclasses.dataclass(frozen=True)
class Charge:
    """A forfeit to book without asking the agent: seat ``seat`` forfeits (``kind``,
    ``message``) at its first decision from decision ``step`` of the hand on (0: when it is
    built). Set by the backends on the replay of a hand whose worker died while it waited
    for that seat's isolated agent (`agents.tournament.backends`)."""

    seat: int
    step: int
    kind: str
    message: str


@dataclasses.dataclass(frozen=True)
class HandTask:
    """Everything a worker needs to play one hand, and nothing it could vary."""

    deal: int
    seating: int
    deal_seed: int
    seats: tuple[str, ...]
    """Entrant names by seat (``player_0`` … ``player_3``)."""
    specs: tuple[str, ...]
    """Their agent specs, by seat."""
    agent_seeds: tuple[int, ...]
    variant: str
    rules: tuple[tuple[str, Any], ...]
    move_timeout: float | None
    isolate: str = "auto"
    """Which agents run in their own process (`agents.tournament.play`); not a result."""
    load_timeout: float = 300.0
    """Seconds to build an isolated agent (not counted against ``move_timeout``)."""
    charge: Charge | None = None
    """A forfeit the backends charge on a replay (`Charge`); None when the hand is played as scheduled."""
    sandboxes: tuple[tuple[str, Any], ...] = ()
    """(entrant name, `agents.sandbox.Sandbox`) of the isolated entrants: how each one's process
    is confined; an isolated entrant without one runs in a plain child process."""

    @property
    def key(self) -> tuple[int, int]:
        return (self.deal, self.seating)


def derive_seed(seed: int, *keys: int) -> int:
    """A 63-bit seed for ``keys`` under the tournament seed (independent streams per key)."""
    state = np.random.SeedSequence(seed, spawn_key=tuple(int(k) for k in keys)).generate_state(1, np.uint64)
    return int(state[0] >> np.uint64(1))


@lru_cache(maxsize=64)
def _tables(n: int) -> tuple[tuple[int, ...], ...]:
    return tuple(itertools.combinations(range(n), 4))


def _table(n: int, deal: int, seed: int) -> tuple[int, ...]:
    tables = _tables(n)
    block, index = divmod(deal, len(tables))
    order = np.random.default_rng(derive_seed(seed, 3, block)).permutation(len(tables))
    return tables[int(order[index])]


def hands_per_deal(num_agents: int, fmt: str) -> int:
    if fmt == "random-seats":
        return 1
    return {2: len(_TWO), 3: len(_THREE)}.get(num_agents, 4)


def seatings_for_deal(num_agents: int, fmt: str, deal: int, seed: int) -> list[tuple[int, ...]]:
    """The seatings of one deal, each a tuple of entrant indices by seat."""
    if fmt == "random-seats":
        rng = np.random.default_rng(derive_seed(seed, 2, deal))
        if num_agents == 2:
            table = [0, 0, 1, 1]
        elif num_agents == 3:
            table = [0, 1, 2, int(rng.integers(3))]
        elif num_agents == 4:
            table = [0, 1, 2, 3]
        else:
            table = sorted(int(i) for i in rng.choice(num_agents, 4, replace=False))
        return [tuple(int(i) for i in rng.permutation(table))]
    if num_agents == 2:
        return list(_TWO)
    if num_agents == 3:
        return list(_THREE)
    table = _table(num_agents, deal, seed) if num_agents > 4 else (0, 1, 2, 3)
    base = [table[i] for i in _CYCLIC_ORDERS[deal % len(_CYCLIC_ORDERS)]]
    return [tuple(base[(seat - r) % 4] for seat in range(4)) for r in range(4)]


def total_hands(config: TournamentConfig) -> int:
    """The number of hands the tournament plays."""
    return config.deals * hands_per_deal(len(config.agents), config.format)


def iter_schedule(
    config: TournamentConfig,
    deals: range | None = None,
    isolate: str = "auto",
    load_timeout: float = 300.0,
    sandboxes: tuple[tuple[str, Any], ...] = (),
) -> Iterator[HandTask]:
    """Every hand of the tournament (or of ``deals``), in (deal, seating) order, made as it is
    needed: a tournament of ten million deals starts playing at once."""
    names = config.names
    specs = config.specs
    for deal in deals if deals is not None else range(config.deals):
        deal_seed = derive_seed(config.seed, 0, deal)
        for seating, seats in enumerate(seatings_for_deal(len(names), config.format, deal, config.seed)):
            seat_names = tuple(names[i] for i in seats)
            yield HandTask(
                deal=deal,
                seating=seating,
                deal_seed=deal_seed,
                seats=seat_names,
                specs=tuple(specs[n] for n in seat_names),
                agent_seeds=tuple(derive_seed(config.seed, 1, deal, seating, k) for k in range(4)),
                variant=config.variant,
                rules=config.rules,
                move_timeout=config.move_timeout,
                isolate=isolate,
                load_timeout=load_timeout,
                sandboxes=sandboxes,
            )


def schedule(config: TournamentConfig, deals: range | None = None, isolate: str = "auto") -> list[HandTask]:
    """`iter_schedule` as a list."""
    return list(iter_schedule(config, deals, isolate))
