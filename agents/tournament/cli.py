"""``mahjong-tournament`` (also ``python -m agents.tournament``): the command line.

The leaderboard and where the results went are printed to stdout; diagnostics (the run's plan,
missing extras, progress without tqdm, deprecations, an interruption) go through the
``agents.tournament`` loggers, which the command shows on stderr as plain lines.

The report folder is ``--report``, else the one stored with the tournament (a resumed run
writes where the first run did), else next to the database (``DB-report/`` beside a ``--db``,
``report/`` in the default run folder).

Hands played again after a lost node or worker are warnings, stored with the tournament and
counted in the leaderboard's notes and the report (over resumed runs too). With ``--backend
ray`` (docs/cluster.md), a problem with the cluster (it cannot be joined, no free CPU, its
head lost) ends the command with one line and exit status 1, giving the command that
continues the tournament.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime
import json
import logging
import os
import secrets
import shlex
import stat
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agents.cluster import ClusterError
from agents.sandbox import Limits
from agents.tournament.backends import BACKENDS
from agents.tournament.config import (
    FORMATS,
    MAX_DEALS,
    MAX_MOVE_TIMEOUT,
    MAX_SEED,
    VARIANTS,
    TournamentConfig,
    default_name,
)
from agents.tournament.play import ISOLATION
from agents.tournament.runner import (
    MAX_LOAD_TIMEOUT,
    TournamentError,
    missing_extras,
    resolve_config,
    resolve_specs,
    run_tournament,
)
from agents.tournament.schedule import hands_per_deal
from agents.tournament.storage import ResultStore
from mahjong_env.tools.cli import bounded

__all__ = ["build_parser", "main", "parse_agents", "read_seed_file", "resume_command"]

logger = logging.getLogger(__name__)

_DEFAULTS = {"deals": 8, "format": "duplicate", "move_timeout": 10.0}
_MAX_WORKERS = 1024
_MAX_ATTEMPTS = 100

_EPILOG = """\
agent specs (see agents.load): random | heuristic | torch:PATH.pt | sb3:PATH.zip | rllib:CHECKPOINT_DIR |
  module.path:Class (from the installed packages or the current folder) | path/to/agent.py:Class,
  each optionally followed by ?key=value&key=value (constructor keywords, values read as JSON),
  e.g. 'mine=my_agent.py:MyAgent?ckpt=run/model.zip&temperature=0.5' (quote it for the shell).
  Entrants that are not this package's baseline agents run in their own sandboxed process (--isolate;
  bubblewrap needed, else refused unless --allow-unsandboxed).

examples:
  mahjong-tournament --variant changchun --agents random heuristic
  mahjong-tournament --variant xinjiang --agents heur=heuristic ppo=torch:agents/checkpoints/xinjiang.pt \\
      --deals 200 --workers 8 --db runs/x.sqlite --report runs/x-report
  mahjong-tournament --db runs/x.sqlite --resume --agents heur=heuristic ppo=torch:agents/checkpoints/xinjiang.pt
  mahjong-tournament --db runs/x.sqlite --resume --trust-db --deals 400   # extend it, with the stored specs
  mahjong-tournament export --db runs/x.sqlite --jsonl hands.jsonl      # no agent is loaded
"""


class _DeprecatedHands(argparse.Action):
    """``--hands``: the old name of ``--deals`` (it always counted deals)."""

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any, option: Any = None
    ) -> None:
        logger.warning(
            "mahjong-tournament: --hands is deprecated: it counts deals (walls), each played once per seating; "
            "use --deals"
        )
        setattr(namespace, self.dest, values)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mahjong-tournament",
        description=(
            "Play a tournament between mahjong agents and report who is better, with confidence intervals. "
            "Every hand is stored in SQLite as it finishes; --resume continues an interrupted run. "
            "'mahjong-tournament export --db FILE --jsonl OUT' writes a stored tournament's records."
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
        help="two or more entrants (agent specs below), each optionally named NAME=SPEC "
        "(default name: the spec, the checkpoint's stem or the class name)",
    )
    deals = bounded(int, 1, MAX_DEALS)
    game.add_argument(
        "--deals",
        dest="deals",
        type=deals,
        metavar="N",
        help="number of deals (walls), default 8. The duplicate format plays each deal once per seating "
        "(2 entrants: 2 hands per deal, 3: 6, 4 or more: 4); random-seats plays each deal once",
    )
    game.add_argument(
        "--hands", dest="deals", type=deals, metavar="N", action=_DeprecatedHands, help="deprecated: --deals"
    )
    game.add_argument(
        "--seed",
        type=bounded(int, 0, MAX_SEED),
        help="tournament seed: deals, seatings and agent seeds derive from it. Default: a secret seed drawn at "
        "random, stored in the database (--resume plays the same deals) and printed with the results. Whoever "
        "knows the seed can reconstruct every deal (all hands and the wall): give one for paired, reproducible "
        "runs, and in a competition leave it unset or use --seed-file (a command line is readable by every local "
        "user, in /proc/PID/cmdline)",
    )
    game.add_argument(
        "--seed-file",
        metavar="PATH",
        help="read the tournament seed (one whole number) from PATH, which must be a file of yours that no one "
        "else may read or write (chmod 600): the private way to give a seed",
    )
    game.add_argument(
        "--format", choices=FORMATS, help="duplicate (default; rotates seats over each deal) or random-seats"
    )
    game.add_argument(
        "--move-timeout",
        type=bounded(float, 0.0, MAX_MOVE_TIMEOUT, inclusive_low=False),
        metavar="SECONDS",
        help=f"time limit for one decision, at most {MAX_MOVE_TIMEOUT:g}; over it, the agent forfeits the hand "
        "(default 10)",
    )
    game.add_argument(
        "--rule",
        action="append",
        metavar="KEY=VALUE",
        help="rule override passed to the environment (a field of the variant's rule config; VALUE is JSON "
        "or a string), repeatable",
    )
    game.add_argument(
        "--allow-variant-mismatch",
        action="store_true",
        help="enter a checkpoint trained for the other variant (refused by default)",
    )
    run = parser.add_argument_group("how it is run")
    run.add_argument(
        "--workers",
        type=bounded(int, 0, _MAX_WORKERS),
        default=os.cpu_count() or 1,
        help="parallel worker processes (default: number of CPUs; 0 plays in this process). "
        "Results do not depend on it",
    )
    run.add_argument(
        "--isolate",
        choices=ISOLATION,
        default="auto",
        help="which entrants run in their own process, seeing only their observation, with a hard deadline: "
        "auto (default: every entrant that is not this package's own code or a torch: checkpoint), all, "
        "none (trust every agent: faster, but an agent could read the game or bend the time limit)",
    )
    run.add_argument(
        "--allow-unsandboxed",
        action="store_true",
        help="where bubblewrap or user namespaces are missing, run untrusted entrants in a plain process "
        "anyway (they could then read the game's memory and the results database): without it they are refused",
    )
    run.add_argument(
        "--limit",
        action="append",
        metavar="NAME=VALUE",
        help="a sandbox limit per entrant process: memory_mb (default 4096), processes (256), file_mb (64), "
        "cpu_seconds (3600), output_kb (256, of its stdout and stderr kept in DB-logs/NAME.log); repeat the flag",
    )
    run.add_argument(
        "--load-timeout",
        type=bounded(float, 0.0, MAX_LOAD_TIMEOUT, inclusive_low=False),
        default=300.0,
        metavar="SECONDS",
        help="time limit for building an isolated agent (not counted against --move-timeout; default 300)",
    )
    run.add_argument(
        "--backend",
        choices=BACKENDS,
        default="local",
        help="local processes (default) or Ray: a cluster's nodes, or a local Ray with --workers CPUs",
    )
    run.add_argument(
        "--ray-address",
        metavar="ADDRESS",
        help="with --backend ray, the Ray cluster to join, host:port of its head (default: $RAY_ADDRESS, else a "
        "local Ray; 'auto': the cluster ray start runs on this machine). The packages and the entrants' files are "
        "shipped to its nodes (docs/cluster.md)",
    )
    run.add_argument(
        "--max-attempts",
        type=bounded(int, 1, _MAX_ATTEMPTS),
        default=3,
        help="plays of a hand whose worker dies before giving up (default 3)",
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
        "--trust-db",
        action="store_true",
        help="with --resume: run the agent specs stored in the database (they are code) instead of --agents",
    )
    out.add_argument(
        "--report",
        metavar="DIR",
        help="report folder: report.md, report.html, PNG plots (default: next to the database)",
    )
    out.add_argument("--no-report", action="store_true", help="write no report folder")
    out.add_argument("--export-jsonl", metavar="FILE", help="also write every hand's record as JSON Lines")
    return parser


def build_export_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mahjong-tournament export",
        description="Write a stored tournament's hands (records with the players' names) without loading any agent.",
    )
    parser.add_argument("--db", required=True, metavar="FILE", help="the tournament's SQLite database")
    parser.add_argument("--jsonl", metavar="FILE", help="write every hand's record as JSON Lines")
    parser.add_argument("--report", metavar="DIR", help="write the report folder")
    return parser


def parse_agents(items: list[str]) -> tuple[tuple[str, str], ...]:
    """``[NAME=]SPEC`` items as (name, spec) pairs; unnamed entrants with the same default name
    are numbered (``random-1``, ``random-2``). An ``=`` after a ``:`` or ``?`` belongs to the
    spec's keywords (``mod:Cls?k=v`` is unnamed)."""
    pairs = []
    for item in items:
        name, sep, spec = item.partition("=")
        if not sep or ":" in name or "?" in name:
            name, sep, spec = "", "", item
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


_SEED_FILE_LIMIT = 100
"""Bytes read from a seed file: a seed is at most 19 digits."""


def read_seed_file(path: str | Path) -> int:
    """The seed in ``path`` (``--seed-file``): one whole number in [0, MAX_SEED], surrounding
    whitespace allowed, from a regular file owned by this user that neither its group nor
    anyone else may read or write. TournamentError saying what to fix otherwise. The file is
    opened once and checked through that descriptor (``fstat``), so what is checked is what is read."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as error:
        raise TournamentError(f"--seed-file {path}: cannot open it ({error.strerror or error})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise TournamentError(f"--seed-file {path}: not a regular file")
        if info.st_uid != os.geteuid():
            raise TournamentError(
                f"--seed-file {path}: owned by uid {info.st_uid}, not by you (uid {os.geteuid()}): whoever owns it "
                "can read and change the seed; write your own file (chmod 600)"
            )
        if info.st_mode & 0o077:
            raise TournamentError(
                f"--seed-file {path}: its mode {stat.S_IMODE(info.st_mode):04o} lets its group or other users read "
                f"or write it; the seed shows every deal: chmod 600 {shlex.quote(str(path))}"
            )
        data = os.read(fd, _SEED_FILE_LIMIT + 1)
    finally:
        os.close(fd)
    text = data.decode("ascii", "replace").strip()
    if len(data) > _SEED_FILE_LIMIT or not text.isdigit():
        raise TournamentError(
            f"--seed-file {path}: it must hold one whole number from 0 to {MAX_SEED} (and nothing else), "
            f"found {text[:20]!r}{'…' if len(text) > 20 else ''}"
        )
    seed = int(text)
    if seed > MAX_SEED:
        raise TournamentError(f"--seed-file {path}: the seed must be at most {MAX_SEED}")
    return seed


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
    if args.seed_file is not None:
        given["seed"] = read_seed_file(args.seed_file)
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
            stored = resolve_config(db, None, True, set(given), trust_db=args.trust_db)
            wanted = resolve_specs(dataclasses.replace(stored, **given))
            return resolve_config(db, wanted, True, set(given), trust_db=args.trust_db)
        missing = [flag for flag, field in (("--variant", "variant"), ("--agents", "agents")) if field not in given]
        if missing:
            raise TournamentError(f"a new tournament needs {' and '.join(missing)} (or --resume with --db)")
        drawn = {"seed": secrets.randbits(63)}  # secret until the run is over: a known seed shows every deal
        config = resolve_specs(TournamentConfig(**{**_DEFAULTS, **drawn, **given}))
        return resolve_config(db, config, False, set(given))
    except ValueError as error:
        raise TournamentError(str(error)) from None


def _limits(items: list[str] | None) -> Limits:
    """``--limit NAME=VALUE`` items as `Limits`; TournamentError naming a bad one."""
    names = [field.name for field in dataclasses.fields(Limits)]
    given: dict[str, int] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or name.strip() not in names:
            raise TournamentError(f"--limit {item!r}: give NAME=VALUE with NAME one of {', '.join(names)}")
        try:
            given[name.strip()] = int(value)
        except ValueError:
            raise TournamentError(f"--limit {item!r}: the value must be a whole number") from None
    try:
        return Limits(**given)
    except ValueError as error:
        raise TournamentError(f"--limit: {error}") from None


def _check_args(args: argparse.Namespace) -> None:
    if args.seed is not None and args.seed_file is not None:
        raise TournamentError("give the seed once: --seed N or --seed-file PATH (the private way), not both")
    if args.trust_db and not args.resume:
        raise TournamentError("--trust-db goes with --resume (it runs the specs stored in the database)")
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


@contextlib.contextmanager
def _diagnostics_on_stderr() -> Iterator[None]:
    """While the command runs, the ``agents.tournament`` loggers' INFO and above go to stderr,
    one plain line per message."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    package = logging.getLogger("agents.tournament")
    level = package.level
    package.addHandler(handler)
    package.setLevel(logging.INFO)
    try:
        yield
    finally:
        package.removeHandler(handler)
        package.setLevel(level)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    with _diagnostics_on_stderr():
        if argv[:1] == ["export"]:
            return _export(argv[1:])
        return _run(argv)


def _run(argv: list[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    db: Path | None = None
    config: TournamentConfig | None = None
    try:
        _check_args(args)
        given = _given_fields(args)
        db = Path(args.db) if args.db else _default_db(given.get("variant", "tournament"))
        config = _config(args, db, given)
        report_dir = _report_dir(args, db)
        if not args.quiet:
            per_deal = hands_per_deal(len(config.agents), config.format)
            logger.info(
                f"{config.variant} {config.format}: {', '.join(config.names)}; {config.deals} deals × {per_deal} "
                f"= {config.deals * per_deal} hands; database {db}"
            )
            missing = missing_extras()
            if missing:
                logger.info(f"note: without {', '.join(missing)}; pip install -e '.[tournament]' adds them")
        summary = run_tournament(
            config,
            db,
            workers=args.workers,
            backend=args.backend,
            ray_address=args.ray_address,
            progress=not args.quiet,
            max_attempts=args.max_attempts,
            on_head_lost=lambda message: _lost_head(args, db, config, message),
            isolate=args.isolate,
            load_timeout=args.load_timeout,
            allow_variant_mismatch=args.allow_variant_mismatch,
            report_dir=report_dir if args.report or not args.resume else None,
            allow_unsandboxed=args.allow_unsandboxed,
            limits=_limits(args.limit),
        )
        print(_outputs(summary, db, None if args.no_report else report_dir, args.export_jsonl))
        if "seed" not in given and not args.resume:
            print(
                f"seed: {config.seed}, drawn at random and secret until now "
                f"(--seed {config.seed} plays these deals again)"
            )
    except (TournamentError, ValueError) as error:
        parser.exit(2, f"mahjong-tournament: error: {error}\n")
    except ClusterError as error:
        print(_cluster_error(args, db, config, str(error)), file=sys.stderr, flush=True)
        return 1
    except KeyboardInterrupt:
        if db is not None and db.exists():
            logger.warning(
                "\ninterrupted: every finished hand is stored; continue with %s", resume_command(args, db, config)
            )
        return 130
    return 0 if not summary.failures else 1


def _cluster_error(args: argparse.Namespace, db: Path | None, config: TournamentConfig | None, message: str) -> str:
    """The one line a failure of the Ray cluster ends the command with, and how to continue."""
    then = ""
    if db is not None and db.exists():
        then = f"; finished hands are stored, continue with: {resume_command(args, db, config)}"
    return f"mahjong-tournament: error: {message}{then}"


def _lost_head(args: argparse.Namespace, db: Path, config: TournamentConfig, message: str) -> None:
    """When the Ray head is lost (from the thread that watches it): the one line, and exit 1
    at once (Ray's calls in the main thread would wait a minute; every hand is committed)."""
    print(_cluster_error(args, db, config, message), file=sys.stderr, flush=True)
    os._exit(1)


def resume_command(args: argparse.Namespace, db: Path, config: TournamentConfig | None = None) -> str:
    """The shell command that continues the tournament of ``db`` as ``args`` ran it: the
    entrants of ``config`` (else the stored ones) and the options that a resumed run does not
    take from the database."""
    if config is None:
        with contextlib.suppress(ValueError), ResultStore(db) as store:
            config = store.config()
    words = ["mahjong-tournament", "--db", str(db), "--resume"]
    if config is not None:
        words += ["--agents", *(f"{name}={spec}" for name, spec in config.agents)]
    if args.allow_variant_mismatch:
        words.append("--allow-variant-mismatch")
    if args.allow_unsandboxed:
        words.append("--allow-unsandboxed")
    for item in args.limit or []:
        words += ["--limit", item]
    defaults = build_parser().parse_args([])
    for option in ("isolate", "load_timeout", "backend", "ray_address", "max_attempts", "report", "export_jsonl"):
        value = getattr(args, option)
        if value != getattr(defaults, option):
            words += ["--" + option.replace("_", "-"), str(value)]
    if args.no_report:
        words.append("--no-report")
    return shlex.join(words)


def _report_dir(args: argparse.Namespace, db: Path) -> Path:
    """Where the report goes (module doc): ``--report``, the stored folder, or next to the database."""
    if args.report:
        return Path(args.report)
    if args.resume:
        with ResultStore(db) as store:
            stored = store.report_dir()
        if stored is not None:
            return stored
    return db.with_name(db.stem + "-report") if args.db else db.parent / "report"


def _outputs(summary: Any, db: Path, report_dir: Path | None, jsonl: str | None) -> str:
    """Write the report and the export; the leaderboard (its notes count the hands played
    again, stored with the tournament) and where things went, as text."""
    from agents.tournament.report import leaderboard_text, write_report

    lines = [leaderboard_text(summary)]
    with ResultStore(db) as store:
        if report_dir is not None:
            page = write_report(summary, store, report_dir)
            lines.append(f"\nreport: {page}")
        if jsonl:
            count = store.export_jsonl(jsonl)
            lines.append(f"exported {count} hands to {jsonl}")
    lines.append(f"database: {db}")
    return "\n".join(lines)


def _export(argv: list[str]) -> int:
    """``mahjong-tournament export``: records and report of a stored tournament, no agent built."""
    from agents.tournament.runner import load_summary

    parser = build_export_parser()
    args = parser.parse_args(argv)
    try:
        if not args.jsonl and not args.report:
            raise TournamentError("export needs --jsonl FILE and/or --report DIR")
        db = Path(args.db)
        if not db.is_file():
            raise TournamentError(f"there is no database {db}")
        if args.report and Path(args.report).is_file():
            raise TournamentError(f"--report {args.report} is a file; give a folder")
        summary = load_summary(db)
        print(_outputs(summary, db, Path(args.report) if args.report else None, args.jsonl))
    except (TournamentError, ValueError, OSError) as error:
        parser.exit(2, f"mahjong-tournament export: error: {error}\n")
    return 0


def _default_db(variant: str) -> Path:
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path("runs") / "tournament" / f"{variant}-{stamp}" / "results.sqlite"


if __name__ == "__main__":
    sys.exit(main())
