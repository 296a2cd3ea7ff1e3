"""Pure hand analysis over 34-length count arrays (RULES.md R8, R9).

This package owns the standard-form and seven-pairs questions about a hand's concealed tiles:
completeness (和), waits (听), ready discards (报听), decompositions and shanten (向听数).
:mod:`.tables` holds the lazily filled per-suit tables, :mod:`.analysis` the queries.
"""

from __future__ import annotations

from .analysis import (
    Decomposition,
    decompositions,
    is_complete,
    is_seven_pairs,
    ready_discards,
    seven_pairs_luxury,
    seven_pairs_waits,
    shanten,
    shanten_seven_pairs,
    wait_kinds,
    waits,
)

__all__ = [
    "Decomposition",
    "decompositions",
    "is_complete",
    "is_seven_pairs",
    "ready_discards",
    "seven_pairs_luxury",
    "seven_pairs_waits",
    "shanten",
    "shanten_seven_pairs",
    "wait_kinds",
    "waits",
]
