"""The results database (SQLite, stdlib ``sqlite3``) and its JSON Lines export.

Tables:

- ``meta(key, value)``: ``config`` (the `TournamentConfig` as JSON, agent specs with resolved
  paths), ``entrants`` (JSON: per entrant its spec, the variant it was trained for, whether it
  ran isolated and its source files with their SHA-256, so that a resumed run can check it plays
  the same entrants), ``schema`` (version), ``created``, ``report`` (where the report folder
  goes, relative to the database's folder, so that ``--resume`` writes where the first run did).
- ``hands``: one row per played hand, primary key ``(deal, seating)``: ``deal_seed``,
  ``outcome`` (``win`` | ``draw`` | ``illegal``), ``winner``, ``method``, ``total_fan``,
  ``feeder`` (the seat whose discard or kong tile was won: 点炮),
  ``forfeit_seat``/``forfeit_agent``/``forfeit_kind``/``forfeit_message``, ``result`` (the env's
  ``info["result"]`` as JSON), ``record`` (the env's ``record()`` as JSON: replay it with
  ``mahjong_env.replay(json.loads(record))``), ``duration`` (seconds), ``finished_at``.
- ``seats``: four rows per hand ``(deal, seating, seat, agent, points, decisions, think_time)``,
  so ``SELECT agent, AVG(points) FROM seats GROUP BY agent`` works.
- ``failures``: hands whose worker died on every attempt (``deal, seating, attempts, error``);
  they are not in ``hands`` and ``--resume`` tries them again.
- ``replays``: one row per play of a hand that was lost and played again (its worker died or
  was stopped, its node was lost or could not play it): ``deal, seating, attempt`` (the lost
  play's number, 1 for the hand's first play in this database, counted over resumed runs too),
  ``reason``, ``place`` (the node or local worker), ``replayed_at``.

Every hand (its ``hands`` row and four ``seats`` rows) is written in one transaction, so an
interrupted run loses at most the hands in flight, never half a hand. Only the coordinating
process writes; the database runs in WAL mode so it can be read while a tournament runs. The
file and its ``-wal``/``-shm`` files are created 0600 (the owner alone reads them: they hold the
seed), and an existing database of ours is made so when opened.

A database is input like any other: a file that is not SQLite, not one of ours, has triggers or
views, a newer schema, or malformed rows raises `StoreError` (a ValueError) with a one-line
message. When another process holds the database locked, writes wait and retry for
``LOCK_TIMEOUT`` × ``WRITE_ATTEMPTS`` seconds, then raise `StoreError` saying so.
"""

from __future__ import annotations

import datetime
import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agents.tournament.config import TournamentConfig

__all__ = ["LOCK_TIMEOUT", "ResultStore", "SCHEMA_VERSION", "StoreError", "WRITE_ATTEMPTS"]

SCHEMA_VERSION = 1
LOCK_TIMEOUT = 10.0
"""Seconds one statement waits for a lock held by another process."""
WRITE_ATTEMPTS = 3
_TABLES = ("meta", "hands", "seats", "failures", "replays")


class StoreError(ValueError):
    """The database cannot be used: not ours, malformed, or locked by another process."""


_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS hands (
    deal INTEGER NOT NULL,
    seating INTEGER NOT NULL,
    deal_seed INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    winner INTEGER,
    method TEXT,
    total_fan INTEGER NOT NULL,
    feeder INTEGER,
    forfeit_seat INTEGER,
    forfeit_agent TEXT,
    forfeit_kind TEXT,
    forfeit_message TEXT,
    result TEXT NOT NULL,
    record TEXT NOT NULL,
    duration REAL,
    finished_at TEXT,
    PRIMARY KEY (deal, seating)
);
CREATE TABLE IF NOT EXISTS seats (
    deal INTEGER NOT NULL,
    seating INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    agent TEXT NOT NULL,
    points REAL NOT NULL,
    decisions INTEGER,
    think_time REAL,
    PRIMARY KEY (deal, seating, seat)
);
CREATE INDEX IF NOT EXISTS seats_agent ON seats (agent);
CREATE TABLE IF NOT EXISTS failures (
    deal INTEGER NOT NULL,
    seating INTEGER NOT NULL,
    attempts INTEGER NOT NULL,
    error TEXT,
    failed_at TEXT,
    PRIMARY KEY (deal, seating)
);
CREATE TABLE IF NOT EXISTS replays (
    deal INTEGER NOT NULL,
    seating INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    reason TEXT NOT NULL,
    place TEXT,
    replayed_at TEXT,
    PRIMARY KEY (deal, seating, attempt)
);
"""


def _private(path: Path) -> None:
    """Create the database file readable and writable by its owner alone (0600; SQLite gives its
    ``-wal`` and ``-shm`` files the same mode), and take away others' access to an existing one
    of ours and its side files."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        return
    except FileExistsError:
        pass
    except OSError:
        return  # not creatable here: sqlite3 says why
    for file in (path, Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal")):
        try:
            if file.stat().st_uid == os.geteuid() and file.stat().st_mode & 0o077:
                os.chmod(file, 0o600)
        except OSError:
            pass


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


class ResultStore:
    """One tournament's database."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise StoreError(f"database {self.path} is a folder; give a file")
        if self.path.parent and not self.path.parent.exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
        _private(self.path)
        try:
            self.conn = sqlite3.connect(str(self.path), timeout=LOCK_TIMEOUT, isolation_level=None)
        except sqlite3.Error as error:
            raise StoreError(f"cannot open database {self.path}: {error}") from None
        try:
            self._retry(self._open)
        except BaseException:
            self.conn.close()
            raise

    def _open(self) -> None:
        try:
            self.conn.execute("PRAGMA trusted_schema=OFF")
            objects = self.conn.execute("SELECT type, name FROM sqlite_master").fetchall()
        except sqlite3.DatabaseError as error:
            if "locked" in str(error):
                raise
            raise StoreError(f"{self.path} is not a tournament database ({error})") from None
        for kind, name in objects:
            if kind in ("trigger", "view") or (name in _TABLES and kind != "table"):
                raise StoreError(f"{self.path} is not a tournament database: it has a {kind} {name!r}")
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.executescript(_SCHEMA)
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if row is not None and str(row[0]) != str(SCHEMA_VERSION):
            raise StoreError(f"{self.path} has schema version {row[0]!r}; this version reads {SCHEMA_VERSION}")

    def _retry(self, fn: Any, *args: Any) -> Any:
        """``fn(*args)``, retried while another process holds the database locked."""
        for attempt in range(WRITE_ATTEMPTS):
            try:
                return fn(*args)
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) and "busy" not in str(error):
                    raise StoreError(f"database {self.path}: {error}") from None
                if attempt + 1 == WRITE_ATTEMPTS:
                    raise StoreError(
                        f"database {self.path} is locked by another process (waited "
                        f"{WRITE_ATTEMPTS * LOCK_TIMEOUT:g} s): is another tournament or a program using it? "
                        "Every finished hand is stored; continue with --resume when it is free"
                    ) from None
            except sqlite3.DatabaseError as error:
                raise StoreError(f"database {self.path} is damaged or not a tournament database: {error}") from None
        raise AssertionError("unreachable")

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------ configuration

    def _meta(self, key: str) -> Any:
        row = self._retry(lambda: self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone())
        if row is None:
            return None
        try:
            return json.loads(row[0])
        except (TypeError, ValueError) as error:
            raise StoreError(f"{self.path}: stored {key} is not JSON ({error})") from None

    def config(self) -> TournamentConfig | None:
        data = self._meta("config")
        if data is None:
            return None
        try:
            return TournamentConfig.from_dict(data)
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise StoreError(f"{self.path}: the stored tournament configuration is malformed ({error})") from None

    def entrants(self) -> dict[str, dict[str, Any]]:
        """Per entrant name: ``spec``, ``variant``, ``isolated``, ``sources`` (empty if not stored)."""
        data = self._meta("entrants") or {}
        if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
            raise StoreError(f"{self.path}: the stored entrants are malformed")
        return data

    def save_config(self, config: TournamentConfig, entrants: dict[str, dict[str, Any]] | None = None) -> None:
        def write() -> None:
            with self._transaction():
                self.conn.execute(
                    "INSERT OR REPLACE INTO meta VALUES ('config', ?)", (json.dumps(config.to_dict(), sort_keys=True),)
                )
                if entrants is not None:
                    self.conn.execute(
                        "INSERT OR REPLACE INTO meta VALUES ('entrants', ?)", (json.dumps(entrants, sort_keys=True),)
                    )
                self.conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
                self.conn.execute("INSERT OR IGNORE INTO meta VALUES ('created', ?)", (_now(),))

        self._retry(write)

    def report_dir(self) -> Path | None:
        """The report folder stored with the tournament (`save_report_dir`), None if none is."""
        value = self._meta("report")
        if value is None:
            return None
        if not isinstance(value, str) or not value:
            raise StoreError(f"{self.path}: the stored report folder is malformed ({value!r})")
        return self.path.parent / value

    def save_report_dir(self, folder: str | Path) -> None:
        """Remember where the report goes, relative to the database's folder (so a folder that
        holds both can be moved)."""
        target = Path(folder).resolve()
        try:
            value = os.path.relpath(target, self.path.parent.resolve())
        except ValueError:  # another drive (Windows): no relative path
            value = str(target)

        def write() -> None:
            with self._transaction():
                self.conn.execute("INSERT OR REPLACE INTO meta VALUES ('report', ?)", (json.dumps(value),))

        self._retry(write)

    def extent(self) -> tuple[int, int] | None:
        """The highest deal and seating among the stored hands and failures, None if there is none."""
        row = self._retry(
            lambda: self.conn.execute(
                "SELECT MAX(deal), MAX(seating) FROM (SELECT deal, seating FROM hands "
                "UNION ALL SELECT deal, seating FROM failures)"
            ).fetchone()
        )
        if row is None or row[0] is None:
            return None
        return int(row[0]), int(row[1])

    # ------------------------------------------------------------------ hands

    def done(self) -> set[tuple[int, int]]:
        return self._retry(lambda: {(d, s) for d, s in self.conn.execute("SELECT deal, seating FROM hands")})

    def count(self) -> int:
        return int(self._retry(lambda: self.conn.execute("SELECT COUNT(*) FROM hands").fetchone()[0]))

    def add_hand(self, hand: dict[str, Any]) -> bool:
        """Store one played hand (one transaction); False if it was already there."""
        return bool(self._retry(self._add_hand, hand))

    def _add_hand(self, hand: dict[str, Any]) -> bool:
        result = hand["result"]
        forfeit = hand.get("forfeit") or {}
        with self._transaction():
            cursor = self.conn.execute(
                "INSERT OR IGNORE INTO hands VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    hand["deal"],
                    hand["seating"],
                    hand["deal_seed"],
                    result["outcome"],
                    result.get("winner"),
                    result.get("method"),
                    int(result.get("total_fan") or 0),
                    hand.get("feeder"),
                    forfeit.get("seat"),
                    forfeit.get("agent"),
                    forfeit.get("kind"),
                    forfeit.get("message"),
                    json.dumps(result, ensure_ascii=False),
                    json.dumps(hand["record"], ensure_ascii=False),
                    hand.get("duration"),
                    _now(),
                ),
            )
            if cursor.rowcount == 0:
                return False
            self.conn.executemany(
                "INSERT INTO seats VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        hand["deal"],
                        hand["seating"],
                        seat,
                        hand["seats"][seat],
                        hand["points"][seat],
                        hand["decisions"][seat],
                        hand["think_time"][seat],
                    )
                    for seat in range(4)
                ],
            )
            self.conn.execute("DELETE FROM failures WHERE deal = ? AND seating = ?", (hand["deal"], hand["seating"]))
        return True

    def add_failure(self, deal: int, seating: int, attempts: int, error: str) -> None:
        def write() -> None:
            with self._transaction():
                self.conn.execute(
                    "INSERT OR REPLACE INTO failures VALUES (?, ?, ?, ?, ?)", (deal, seating, attempts, error, _now())
                )

        self._retry(write)

    def failures(self) -> list[dict[str, Any]]:
        rows = self._retry(
            lambda: self.conn.execute(
                "SELECT deal, seating, attempts, error FROM failures ORDER BY deal, seating"
            ).fetchall()
        )
        return [{"deal": d, "seating": s, "attempts": a, "error": str(e)} for d, s, a, e in rows]

    def add_replay(self, deal: int, seating: int, reason: str, place: str | None = None) -> int:
        """Record that a play of hand (``deal``, ``seating``) was lost and the hand is played
        again; returns the lost play's number (1 + the replays stored for that hand before)."""

        def write() -> int:
            with self._transaction():
                (count,) = self.conn.execute(
                    "SELECT COUNT(*) FROM replays WHERE deal = ? AND seating = ?", (deal, seating)
                ).fetchone()
                self.conn.execute(
                    "INSERT INTO replays VALUES (?, ?, ?, ?, ?, ?)", (deal, seating, count + 1, reason, place, _now())
                )
            return int(count) + 1

        return int(self._retry(write))

    def replays(self) -> list[dict[str, Any]]:
        """Every stored replay (`add_replay`) in (deal, seating, attempt) order."""
        rows = self._retry(
            lambda: self.conn.execute(
                "SELECT deal, seating, attempt, reason, place FROM replays ORDER BY deal, seating, attempt"
            ).fetchall()
        )
        return [
            {
                "deal": int(d),
                "seating": int(s),
                "attempt": int(a),
                "reason": str(r),
                "place": None if p is None else str(p),
            }
            for d, s, a, r, p in rows
        ]

    def hands(self, with_record: bool = False) -> Iterator[dict[str, Any]]:
        """Every stored hand in (deal, seating) order, with ``seats``, ``points`` and ``result``
        (and ``record`` if asked); `StoreError` on a malformed row."""
        try:
            yield from self._hands(with_record)
        except sqlite3.OperationalError as error:
            raise StoreError(f"database {self.path}: {error}") from None
        except sqlite3.DatabaseError as error:
            raise StoreError(f"database {self.path} is damaged or not a tournament database: {error}") from None
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as error:
            raise StoreError(f"database {self.path} holds a malformed hand ({type(error).__name__}: {error})") from None

    def _hands(self, with_record: bool) -> Iterator[dict[str, Any]]:
        seats: dict[tuple[int, int], list[tuple[str, float, int, float]]] = {}
        for deal, seating, _seat, agent, points, decisions, think in self.conn.execute(
            "SELECT deal, seating, seat, agent, points, decisions, think_time FROM seats ORDER BY deal, seating, seat"
        ):
            seats.setdefault((deal, seating), []).append((agent, points, decisions, think))
        columns = (
            "deal, seating, deal_seed, result, forfeit_seat, forfeit_agent, forfeit_kind, forfeit_message, "
            "duration, feeder"
        )
        if with_record:
            columns += ", record"
        for row in self.conn.execute(f"SELECT {columns} FROM hands ORDER BY deal, seating"):
            deal, seating = row[0], row[1]
            by_seat = seats[(deal, seating)]
            if len(by_seat) != 4:
                raise ValueError(f"hand ({deal}, {seating}) has {len(by_seat)} seats")
            hand = {
                "deal": deal,
                "seating": seating,
                "deal_seed": row[2],
                "result": json.loads(row[3]),
                "seats": [s[0] for s in by_seat],
                "points": [s[1] for s in by_seat],
                "decisions": [s[2] for s in by_seat],
                "think_time": [s[3] for s in by_seat],
                "forfeit": None
                if row[4] is None
                else {"seat": row[4], "agent": row[5], "kind": row[6], "message": row[7]},
                "duration": row[8],
                "feeder": row[9],
            }
            if not isinstance(hand["result"], dict):
                raise ValueError(f"hand ({deal}, {seating}) has a result that is not an object")
            if with_record:
                hand["record"] = json.loads(row[10])
                if not isinstance(hand["record"], dict):
                    raise ValueError(f"hand ({deal}, {seating}) has a record that is not an object")
            yield hand

    def record(self, deal: int, seating: int) -> dict[str, Any] | None:
        """The env record of one hand (with the entrants' names under ``"players"``), or None."""
        row = self._retry(
            lambda: self.conn.execute(
                "SELECT record FROM hands WHERE deal = ? AND seating = ?", (deal, seating)
            ).fetchone()
        )
        if not row:
            return None
        try:
            record = json.loads(row[0])
        except (TypeError, ValueError) as error:
            raise StoreError(
                f"database {self.path}: the record of hand ({deal}, {seating}) is not JSON ({error})"
            ) from None
        return record if isinstance(record, dict) else None

    def export_jsonl(self, path: str | Path) -> int:
        """Write every hand as one JSON line: the env's record (``mahjong_env.replay`` takes it
        as it is) with the entrants' names by seat under ``"players"``, plus a ``"tournament"``
        key with deal, seating, entrants, points and forfeit. Returns the number of lines.
        Needs no agent: a finished (or interrupted) tournament is exported from its database."""
        count = 0
        with open(path, "w", encoding="utf-8") as f:
            for hand in self.hands(with_record=True):
                line = dict(hand["record"])
                line["players"] = list(hand["seats"])
                line["tournament"] = {
                    "deal": hand["deal"],
                    "seating": hand["seating"],
                    "deal_seed": hand["deal_seed"],
                    "seats": hand["seats"],
                    "points": hand["points"],
                    "forfeit": hand["forfeit"],
                }
                f.write(json.dumps(line, ensure_ascii=False) + "\n")
                count += 1
        return count

    def _transaction(self) -> Any:
        return _Transaction(self.conn)


class _Transaction:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        self.conn.execute("COMMIT" if exc_type is None else "ROLLBACK")
