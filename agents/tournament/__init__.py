"""Tournaments between mahjong agents: who is better, by how much, and how sure we are.

``mahjong-tournament --variant changchun --agents random heuristic`` (or
``python -m agents.tournament``) plays a short duplicate tournament, prints the leaderboard and
writes a report folder; `run_tournament` does the same from Python.

Modules, one concept each:

- `config`: `TournamentConfig`, everything that decides the results (stored in the database).
- `schedule`: seatings of the duplicate and random-seats formats, and every seed
  (the doc of `agents.tournament.schedule` gives the designs for 2, 3, 4 and more entrants).
- `play`: one hand: agents seeded per hand, isolation (entrants that are not this package's
  baseline agents play in their own sandboxed process, `agents.sandbox`), time limits,
  forfeits and how they are scored.
- `backends`: in-process, local worker processes, or Ray; dead workers' hands re-run isolated,
  and charged to the isolated agent the worker was waiting for.
- `verify`: every stored hand replayed and checked against its record before results are shown.
- `storage`: the SQLite database (schema in its doc) and the JSON Lines export
  (``mahjong-tournament export --db FILE --jsonl OUT``: no agent is loaded).
- `stats`: means with bootstrap intervals over deals, rates, paired head-to-head, OpenSkill.
- `report`: terminal leaderboard, Markdown/HTML report, plots, notable hands with replays.
- `runner`: validation (every entrant built once, its variant checked), resume (the specs given
  on the command line, checked against the stored specs and the checksums of their files),
  and the run itself; `cli`: the command line.
- `testing`: misbehaving agents for tests.

Seeds. ``--seed`` decides every deal, and knowing it shows every hand and the wall: without it
the command line draws a secret seed, stores it with the tournament (``--resume`` keeps it) and
prints it after the run. Give one for paired, reproducible tournaments; not in a competition.

What a result means. ``--deals N`` counts deals (``--hands``, its old name, still works with a
deprecation message); a duplicate deal is played once per seating (``hands_per_deal``). An
entrant's score is its seat's points per hand; intervals resample deals. Every hand is a pure
function of the configuration and its ``(deal, seating)``, so the number of workers, the
backend and interruptions with ``--resume`` never change the results (time-limit forfeits
aside, which depend on the machine; and isolation, for agents that draw from Python's or
NumPy's global generators, which an isolated agent does not share with the others).

Needs only the core install; the ``tournament`` extra adds the progress bar (tqdm), ratings
(openskill) and plots (matplotlib).
"""

from __future__ import annotations

from agents.tournament.config import TournamentConfig
from agents.tournament.runner import TournamentError, load_summary, run_tournament
from agents.tournament.stats import Summary

__all__ = ["Summary", "TournamentConfig", "TournamentError", "load_summary", "run_tournament"]
