"""Enum members as module constants, for the code that runs at every decision.

Why: on Python 3.11 reading an enum member (``Phase.TURN``) goes through ``EnumType``'s
attribute lookup, about 125 ns a read that the interpreter never specialises, while a module
constant is a specialised global read of a few ns; the engine and the rule sets read a few
dozen members per decision. Each constant here is the member itself (``PHASE_TURN is
Phase.TURN``), so it compares, hashes and prints the same. Import them from here, and write the
member itself (``Phase.TURN``) wherever a few ns do not matter; nothing else in the package
plays such tricks. Python 3.12 makes member reads fast, and this module can go then.
"""

from __future__ import annotations

from mahjong_env.engine.state import Context, MeldKind, Phase, TurnStart, WindowKind

__all__ = [
    "PHASE_TURN",
    "PHASE_CLAIM",
    "PHASE_ROB",
    "PHASE_BAO_VIEW",
    "PHASE_DUIBAO",
    "PHASE_FINAL_DRAW",
    "PHASE_OVER",
    "CONTEXT_DEAL",
    "CONTEXT_DRAW",
    "CONTEXT_REPLACEMENT",
    "CONTEXT_CLAIM",
    "WINDOW_DISCARD",
    "WINDOW_ADDED_KONG",
    "WINDOW_SPECIAL_ADD",
    "START_DRAW",
    "START_FINAL_DRAWS",
    "START_EXHAUSTED",
    "MELD_CHOW",
    "MELD_PONG",
    "MELD_KONG",
    "MELD_ADDED_KONG",
    "MELD_CONCEALED_KONG",
    "MELD_SPECIAL_WINDS",
]

PHASE_TURN = Phase.TURN
PHASE_CLAIM = Phase.CLAIM
PHASE_ROB = Phase.ROB
PHASE_BAO_VIEW = Phase.BAO_VIEW
PHASE_DUIBAO = Phase.DUIBAO
PHASE_FINAL_DRAW = Phase.FINAL_DRAW
PHASE_OVER = Phase.OVER

CONTEXT_DEAL = Context.DEAL
CONTEXT_DRAW = Context.DRAW
CONTEXT_REPLACEMENT = Context.REPLACEMENT
CONTEXT_CLAIM = Context.CLAIM

WINDOW_DISCARD = WindowKind.DISCARD
WINDOW_ADDED_KONG = WindowKind.ADDED_KONG
WINDOW_SPECIAL_ADD = WindowKind.SPECIAL_ADD

START_DRAW = TurnStart.DRAW
START_FINAL_DRAWS = TurnStart.FINAL_DRAWS
START_EXHAUSTED = TurnStart.EXHAUSTED

MELD_CHOW = MeldKind.CHOW
MELD_PONG = MeldKind.PONG
MELD_KONG = MeldKind.KONG
MELD_ADDED_KONG = MeldKind.ADDED_KONG
MELD_CONCEALED_KONG = MeldKind.CONCEALED_KONG
MELD_SPECIAL_WINDS = MeldKind.SPECIAL_WINDS
