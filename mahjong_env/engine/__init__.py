"""The table engine every rule set shares (RULES.md R3–R12).

This package owns the mechanics of play, never a variant's rules:

- `state`: phases, turn contexts, melds, per-seat state, the discard history and the engine's
  named kinds (meld kinds, window kinds, turn starts, win methods, outcomes);
- `game`: `Game`, one match: the deal, the turn cycle, claim and robbing windows (R6 polling),
  kongs and replacement draws, the last-draws round (X4 分张, C14 ``final_draws``), the bao
  mechanics (C8), hand end, dealer rotation;
- `window`: the records of an open claim or robbing window (candidates, the best claim);
- `ledger`: the payments ledger (scores, silver, each hand's payments) and the hand result;
- `hotpath`: enum members as module constants for the code that runs at every decision (a
  Python 3.11 speed measure, kept apart from the rules).

Every variant question goes to the rule set (`mahjong_env.rules`).
"""
