"""``mahjong-tournament`` (also ``python -m agents.tournament``): the command line."""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from agents.tournament.backends import BACKENDS
from agents.tournament.config import FORMATS, VARIANTS, TournamentConfig, default_name
from agents.tournament.runner import TournamentError, resolve_config, run_tournament
from agents.tournament.schedule import hands_per_deal

__all__ = ["build_parser", "main", "parse_agents"]

_DEFAULTS = {"deals": 8, "seed": 0, "format": "duplicate", "move_timeout": 10.0}

_EPILOG = """\
examples:
  mahjong-tournament --variant changchun --agents random heuristic
  mahjong-tournament --variant xinjiang --agents heur=heuristic ppo=torch:agents/checkpoints/xinjiang.pt \\
      --hands 200 --workers 8 --db runs/x.sqlite --report runs/x-report
  mahjong-tournament --db runs/x.sqlite --resume           # continue an interrupted run
  mahjong-tournament --db runs/x.sqlite --resume --hands 400   # extend it to 400 deals
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mahjong-tournament",
        description=(
            "Play a tournament between mahjong agents and report who is better, with confidence intervals. "
            "Every hand is stored in SQLite as it finishes; --resume continues an interrupted run."
        ),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    game = parser.add_argument_group("what is played")
    game.add_argument("--variant", choices=VARIANTS, help="rule set (required for a new tournament)")
    game.add_argument(
        "--agents",
        nargs="+",
        metavar="[NAME=]SPEC",
        help="two or more entrants: 'random', 'heuristic', 'torch:path/to.pt' or 'module.path:ClassName', "
        "each optionally named NAME=SPEC (default name: the spec, the checkpoint's stem or the class name)",
    )
    game.add_argument(
        "--hands",
        "--deals",
        dest="deals",
        type=int,
        metavar="N",
        help="number of deals (walls), default 8. The duplicate format plays each deal once per seating "
        "(2 entrants: 2 hands per deal, 3: 6, 4 or more: 4); random-seats plays each deal once",
    )
    game.add_argument(
        "--seed", type=int, help="tournament seed: deals, seatings and agent seeds derive from it (default 0)"
    )
    game.add_argument(
        "--format", choices=FORMATS, help="duplicate (default; rotates seats over each deal) or random-seats"
    )
    game.add_argument(
        "--move-timeout",
        type=float,
        metavar="SECONDS",
        help="time limit for one decision; over it, the agent forfeits the hand (default 10)",
    )
    game.add_argument(
        "--rule",
        action="append",
        metavar="KEY=VALUE",
        help="rule override passed to the environment (a field of the variant's rule config; VALUE is JSON "
        "or a string), repeatable",
    )
    run = parser.add_argument_group("how it is run")
    run.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="parallel worker processes (default: number of CPUs; 0 plays in this process). "
        "Results do not depend on it",
    )
    run.add_argument("--backend", choices=BACKENDS, default="local", help="local processes (default) or Ray")
    run.add_argument("--ray-address", metavar="ADDRESS", help="Ray cluster to join (default: start a local Ray)")
    run.add_argument(
        "--max-attempts", type=int, default=3, help="plays of a hand whose worker dies before giving up (default 3)"
    )
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    out = parser.add_argument_group("where results go")
    out.add_argument(
        "--db",
        metavar="FILE",
        help="SQLite results database (default: runs/tournament/VARIANT-TIMESTAMP/results.sqlite)",
    )
    out.add_argument("--resume", action="store_true", help="continue the tournament stored in --db")
    out.add_argument(
        "--report",
        metavar="DIR",
        help="report folder: report.md, report.html, PNG plots (default: next to the database)",
    )
    out.add_argument("--no-report", action="store_true", help="write no report folder")
    out.add_argument("--export-jsonl", metavar="FILE", help="also write every hand's record as JSON Lines")
    return parser


def parse_agents(items: list[str]) -> tuple[tuple[str, str], ...]:
    """``[NAME=]SPEC`` items as (name, spec) pairs; unnamed entrants with the same default name
    are numbered (``random-1``, ``random-2``)."""
    pairs = []
    for item in items:
        name, sep, spec = item.partition("=")
        if not sep:
            name, spec = "", item
        if sep and (not name.strip() or not spec.strip()):
            raise TournamentError(f"--agents: {item!r} must be NAME=SPEC with both parts, or just SPEC")
        pairs.append((name.strip(), spec.strip()))
    unnamed = [default_name(spec) for name, spec in pairs if not name]
    named, seen = [], Counter()
    for name, spec in pairs:
        if not name:
            name = default_name(spec)
            seen[name] += 1
            if unnamed.count(name) > 1:
                name = f"{name}-{seen[name]}"
        named.append((name, spec))
    return tuple(named)


def _rule_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _given_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The configuration fields given on the command line."""
    given: dict[str, Any] = {}
    if args.variant is not None:
        given["variant"] = args.variant
    if args.agents is not None:
        given["agents"] = parse_agents(args.agents)
    for field in ("deals", "seed", "format", "move_timeout"):
        if getattr(args, field) is not None:
            given[field] = getattr(args, field)
    if args.rule:
        rules = []
        for item in args.rule:
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise TournamentError(f"--rule: {item!r} must be KEY=VALUE")
            rules.append((key.strip(), _rule_value(value.strip())))
        given["rules"] = tuple(rules)
    return given


def _config(args: argparse.Namespace, db: Path, given: dict[str, Any]) -> TournamentConfig:
    try:
        if args.resume:
            stored = resolve_config(db, None, True, set())
            return resolve_config(db, dataclasses.replace(stored, **given), True, set(given))
        missing = [flag for flag, field in (("--variant", "variant"), ("--agents", "agents")) if field not in given]
        if missing:
            raise TournamentError(f"a new tournament needs {' and '.join(missing)} (or --resume with --db)")
        return resolve_config(db, TournamentConfig(**{**_DEFAULTS, **given}), False, set(given))
    except ValueError as error:
        raise TournamentError(str(error)) from None


def _check_args(args: argparse.Namespace) -> None:
    if args.workers < 0:
        raise TournamentError(f"--workers must be 0 or more, got {args.workers}")
    if args.max_attempts < 1:
        raise TournamentError(f"--max-attempts must be at least 1, got {args.max_attempts}")
    if args.ray_address and args.backend != "ray":
        raise TournamentError("--ray-address needs --backend ray")
    if args.resume and not args.db:
        raise TournamentError("--resume needs --db (the database of the tournament to continue)")
    if args.backend == "ray":
        try:
            import ray  # noqa: F401
        except ImportError:
            raise TournamentError("--backend ray needs Ray: pip install -e '.[ray]'") from None
    if args.report and Path(args.report).is_file():
        raise TournamentError(f"--report {args.report} is a file; give a folder")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    db: Path | None = None
    try:
        _check_args(args)
        given = _given_fields(args)
        db = Path(args.db) if args.db else _default_db(given.get("variant", "tournament"))
        config = _config(args, db, given)
        if args.report:
            report_dir = Path(args.report)
        else:
            report_dir = db.with_name(db.stem + "-report") if args.db else db.parent / "report"
        if not args.quiet:
            per_deal = hands_per_deal(len(config.agents), config.format)
            print(
                f"{config.variant} {config.format}: {', '.join(config.names)}; {config.deals} deals × {per_deal} "
                f"= {config.deals * per_deal} hands; database {db}",
                file=sys.stderr,
            )
        summary = run_tournament(
            config,
            db,
            workers=args.workers,
            backend=args.backend,
            ray_address=args.ray_address,
            progress=not args.quiet,
            max_attempts=args.max_attempts,
        )
    except TournamentError as error:
        parser.exit(2, f"mahjong-tournament: error: {error}\n")
    except KeyboardInterrupt:
        if db is not None and db.exists():
            print(
                f"\ninterrupted: every finished hand is stored; continue with mahjong-tournament --db {db} --resume",
                file=sys.stderr,
            )
        return 130
    from agents.tournament.report import leaderboard_text, write_report
    from agents.tournament.storage import ResultStore

    print(leaderboard_text(summary))
    with ResultStore(db) as store:
        if not args.no_report:
            page = write_report(summary, store, report_dir)
            print(f"\nreport: {page}")
        if args.export_jsonl:
            count = store.export_jsonl(args.export_jsonl)
            print(f"exported {count} hands to {args.export_jsonl}")
    print(f"database: {db}")
    return 0 if not summary.failures else 1


def _default_db(variant: str) -> Path:
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path("runs") / "tournament" / f"{variant}-{stamp}" / "results.sqlite"


if __name__ == "__main__":
    sys.exit(main())
