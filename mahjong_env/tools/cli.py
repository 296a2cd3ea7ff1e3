"""The ``mahjong-env`` command: ``replay`` a recorded hand as HTML, ``play`` in the terminal.

::

    mahjong-env replay FILE [--record K | --deal D [--seating S]] [--hand N] [--seat S] [--title T] -o hand.html
    mahjong-env play [--variant changchun] [--seat 0] [--opponents heuristic] [--seed N]
                     [--hands N] [--save FILE.jsonl]

``replay`` reads game records (API.md "Game records") from ``FILE``:

- a JSON Lines file, one record per line (what ``raw_env.record()`` gives, as saved by
  ``play --save`` or `mahjong_env.tools.records.write_jsonl`), or one JSON record;
- an SQLite database, such as a tournament's results database (``agents/tournament/
  storage.py``): the records are read from the first table among ``hands``, ``records``,
  ``games``, ``matches`` that has a column ``record`` (or ``record_json``, ``json``) holding a
  record as JSON, in ``rowid`` order. If that table also has ``deal`` and ``seating`` columns,
  ``--deal``/``--seating`` pick a row by them (a deal or seating the database lacks is an error
  naming the ones it holds), and a ``seats`` table ``(deal, seating, seat, agent)`` names the
  players. A file named ``*.sqlite``, ``*.sqlite3`` or ``*.db`` is read as SQLite only: one
  that is not (a damaged database) is reported as such.

``--record K`` picks the K-th record (0-based, default 0), ``--hand N`` the hand within it,
``--seat S`` shows only player S's view (RULES.md R13) instead of every hand face up. The
page is written by `mahjong_env.tools.html_replay.write_replay`, to ``-o FILE`` or, by
default, beside ``FILE``: ``STEM-deal{D}-seating{S}.html`` for a hand picked with ``--deal``
(``-hand{N}`` added for ``--hand N`` > 0), else ``STEM-{K}-{N}.html``; ``-seat{S}`` is added
for one seat's view.
"""

from __future__ import annotations

import argparse
import json
import math
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mahjong_env.rules.base import DEFAULT_PROFILE
from mahjong_env.variants import DEFAULT_VARIANT, all_variants, variant_names

__all__ = ["main", "load_records", "bounded"]


def bounded(
    kind: Callable[[str], Any], low: float, high: float = math.inf, inclusive_low: bool = True
) -> Callable[[str], Any]:
    """An argparse type: a finite number of ``kind`` (``int`` or ``float``) within ``[low,
    high]`` (``(low, high]`` when not ``inclusive_low``), for every command of the project
    (``mahjong-bench``, ``mahjong-tournament``)."""
    what = "an int" if kind is int else "a number"

    def shown(bound: float) -> str:
        return str(bound) if kind is int else f"{bound:g}"

    if high == math.inf:
        span = f"at least {shown(low)}" if inclusive_low else f"above {shown(low)}"
    else:
        span = f"a finite number from {shown(low)} to {shown(high)}"
        if not inclusive_low:
            span = f"a finite number above {shown(low)} and at most {shown(high)}"

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
        if not math.isfinite(value) or value > high or value < low or (not inclusive_low and value == low):
            raise argparse.ArgumentTypeError(f"must be {span}, got {text!r}")
        return value

    return parse


_TABLES = ("hands", "records", "games", "matches")
_COLUMNS = ("record", "record_json", "json")
_SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
_SQLITE_HEADER = b"SQLite format 3\x00"

Key = tuple[int, int] | None
"""The ``(deal, seating)`` of a tournament database's row; None for a record read otherwise."""


def _is_sqlite(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(16) == _SQLITE_HEADER


def _record_column(conn: sqlite3.Connection) -> tuple[str, str, set[str]]:
    tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    ordered = [t for t in _TABLES if t in tables] + [t for t in tables if t not in _TABLES]
    for table in ordered:
        columns = {row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')}
        for column in _COLUMNS:
            if column in columns:
                return table, column, columns
    raise ValueError(
        f"no table with a record column found (looked for tables {', '.join(_TABLES)} "
        f"and columns {', '.join(_COLUMNS)}; tables present: {', '.join(tables) or 'none'})"
    )


def _players(conn: sqlite3.Connection, deal: int, seating: int) -> list[str] | None:
    try:
        rows = conn.execute(
            "SELECT seat, agent FROM seats WHERE deal = ? AND seating = ? ORDER BY seat", (deal, seating)
        ).fetchall()
    except sqlite3.Error:
        return None
    return [str(agent) for _, agent in rows] if len(rows) == 4 else None


def _span(conn: sqlite3.Connection, table: str, column: str, where: str = "", params: tuple[int, ...] = ()) -> str:
    """``"0..7"``: the lowest and highest ``column`` of ``table``'s rows (``where`` selects them)."""
    low, high = conn.execute(f'SELECT MIN({column}), MAX({column}) FROM "{table}" {where}', params).fetchone()
    return f"{low}..{high}"


def _missing_row(
    conn: sqlite3.Connection, path: Path, table: str, deal: int | None, seating: int | None
) -> ValueError | None:
    """Why no row has ``deal`` (and ``seating``): the ones the table holds; None if it is empty."""
    if conn.execute(f'SELECT 1 FROM "{table}" LIMIT 1').fetchone() is None:
        return None
    if deal is None:
        return ValueError(f"--seating {seating} is out of range: {path} holds seatings {_span(conn, table, 'seating')}")
    if conn.execute(f'SELECT 1 FROM "{table}" WHERE deal = ? LIMIT 1', (deal,)).fetchone() is None:
        return ValueError(f"--deal {deal} is out of range: {path} holds deals {_span(conn, table, 'deal')}")
    seatings = _span(conn, table, "seating", "WHERE deal = ?", (deal,))
    return ValueError(f"--seating {seating} is out of range for deal {deal}: {path} holds seatings {seatings} of it")


def _sqlite_rows(path: Path, deal: int | None, seating: int | None) -> list[tuple[dict[str, Any], Key]]:
    if not _is_sqlite(path):
        raise ValueError(f"{path} is not a readable SQLite database: the file is damaged or not SQLite")
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        table, column, columns = _record_column(conn)
        keyed = {"deal", "seating"} <= columns
        if (deal is not None or seating is not None) and not keyed:
            raise ValueError(f"table {table!r} has no deal/seating columns: use --record K")
        select = f'SELECT "{column}"' + (", deal, seating" if keyed else "") + f' FROM "{table}"'
        conditions = [f"{name} = ?" for name, value in (("deal", deal), ("seating", seating)) if value is not None]
        params = [value for value in (deal, seating) if value is not None]
        if conditions:
            select += " WHERE " + " AND ".join(conditions)
        select += " ORDER BY rowid"
        rows: list[tuple[dict[str, Any], Key]] = []
        for row in conn.execute(select, params):
            try:
                record = json.loads(row[0])
            except (TypeError, json.JSONDecodeError, RecursionError) as error:
                raise ValueError(f"{path}: table {table!r} holds a record that is not JSON ({error})") from None
            if not isinstance(record, dict):
                raise ValueError(f"{path}: table {table!r} holds a record that is not a JSON object")
            if keyed and "players" not in record:
                players = _players(conn, row[1], row[2])
                if players is not None:
                    record["players"] = players
            rows.append((record, (int(row[1]), int(row[2])) if keyed else None))
        if not rows and conditions:
            missing = _missing_row(conn, path, table, deal, seating)
            if missing is not None:
                raise missing
        return rows
    finally:
        conn.close()


def _load(path: str | Path, deal: int | None, seating: int | None) -> list[tuple[dict[str, Any], Key]]:
    """Every record of ``path`` with its `Key` (see `load_records`)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path} is not a file")
    if path.suffix.lower() in _SQLITE_SUFFIXES or _is_sqlite(path):
        return _sqlite_rows(path, deal, seating)
    if deal is not None or seating is not None:
        raise ValueError("--deal/--seating apply to an SQLite database; for a JSON Lines file use --record K")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path} is neither an SQLite database nor a JSON (Lines) text file") from None
    try:
        whole = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        whole = None
    if isinstance(whole, dict):
        return [(whole, None)]
    if isinstance(whole, list):
        return [(record, None) for record in whole]
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                records.append((json.loads(line), None))
            except (json.JSONDecodeError, RecursionError) as error:
                raise ValueError(f"{path}, line {number}: not JSON ({type(error).__name__}: {error})") from None
    return records


def load_records(path: str | Path, deal: int | None = None, seating: int | None = None) -> list[dict[str, Any]]:
    """Every game record in a JSON Lines file, a JSON file or an SQLite database (see the
    module doc); ``deal``/``seating`` filter a tournament database's rows."""
    return [record for record, _ in _load(path, deal, seating)]


def _output(args: argparse.Namespace, key: Key) -> Path:
    """The page's file: ``-o``, else named after the hand asked for (module doc)."""
    if args.output:
        return Path(args.output)
    source = Path(args.file)
    suffix = "" if args.seat is None else f"-seat{args.seat}"
    if args.deal is not None and key is not None:
        hand = f"-hand{args.hand}" if args.hand else ""
        return source.with_name(f"{source.stem}-deal{key[0]}-seating{key[1]}{hand}{suffix}.html")
    return source.with_name(f"{source.stem}-{args.record}-{args.hand}{suffix}.html")


def _replay(args: argparse.Namespace) -> int:
    from mahjong_env.tools.html_replay import write_replay

    rows = _load(args.file, args.deal, args.seating)
    if not rows:
        raise ValueError(f"no records in {args.file}")
    if not 0 <= args.record < len(rows):
        raise ValueError(f"--record {args.record} is out of range: {args.file} holds {len(rows)} record(s)")
    record, key = rows[args.record]
    out = _output(args, key)
    title = args.title
    if title is None and args.deal is not None:  # a tournament hand: name it as the report does
        title = f"deal {args.deal}" + (f", seating {args.seating}" if args.seating is not None else "")
    write_replay(record, out, seat=args.seat, hand=args.hand, title=title)
    print(f"wrote {out}")
    return 0


def _play(args: argparse.Namespace) -> int:
    from mahjong_env.tools.play import play

    play(
        variant=args.variant,
        seat=args.seat,
        opponents=args.opponents,
        seed=args.seed,
        hands=args.hands,
        save=args.save,
        profile=args.profile,
    )
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mahjong-env", description="Mahjong environment tools.")
    sub = parser.add_subparsers(dest="command", required=True)
    replay = sub.add_parser("replay", help="write one recorded hand as a self-contained HTML page")
    replay.add_argument("file", help="JSON Lines file of records, or an SQLite database (tournament results)")
    replay.add_argument("--record", type=int, default=0, help="which record in the file (0-based, default 0)")
    replay.add_argument("--deal", type=int, default=None, help="tournament database: the deal number")
    replay.add_argument("--seating", type=int, default=None, help="tournament database: the seating number")
    replay.add_argument("--hand", type=int, default=0, help="which hand of the record (0-based, default 0)")
    replay.add_argument(
        "--seat", type=int, default=None, choices=range(4), help="show only this player's view (default: all face up)"
    )
    replay.add_argument(
        "--title", default=None, help="page title, e.g. the deal and seating (default: variant and hand)"
    )
    replay.add_argument(
        "-o",
        "--output",
        default=None,
        help="the HTML file to write (default: beside FILE, named after the deal and seating or the record and hand)",
    )
    replay.set_defaults(run=_replay)
    play = sub.add_parser("play", help="play one seat in the terminal against agents")
    play.add_argument("--variant", default=DEFAULT_VARIANT, choices=variant_names())
    play.add_argument("--seat", type=int, default=0, choices=range(4), help="your seat (default 0)")
    play.add_argument(
        "--opponents",
        default="heuristic",
        help="agent spec for the other seats (agents.load), or three separated by commas (default heuristic)",
    )
    play.add_argument("--seed", type=int, default=None, help="seed of the deal (default random)")
    play.add_argument("--hands", type=int, default=1, help="number of hands (default 1)")
    play.add_argument("--save", default=None, help="append the game record to this JSON Lines file")
    others = ", ".join(f"{p} ({v.name})" for v in all_variants() for p in v.profiles if p != DEFAULT_PROFILE)
    play.add_argument(
        "--profile", default=DEFAULT_PROFILE, help=f"rule profile (C14): {DEFAULT_PROFILE} (default) or {others}"
    )
    play.set_defaults(run=_play)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return int(args.run(args))
    except (ValueError, OSError) as error:
        print(f"mahjong-env {args.command}: {error}", file=sys.stderr)
        return 2
    except sqlite3.Error as error:
        print(
            f"mahjong-env {args.command}: {args.file} is not a readable SQLite database: "
            f"the file is damaged or not SQLite ({error})",
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt:
        print("", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
