"""Running a tournament: validate, check a resumed run's entrants, schedule, play, summarise.

Entrants. Before anything is played every entrant is built once (in its own process when it
is isolated, `agents.tournament.play`), so that a typo fails now, and described
(`agents.describe`): the variant it was trained for and its source files with their SHA-256.
An entrant trained for another variant is refused unless ``allow_variant_mismatch``. An
isolated entrant's files are copied for its sandbox first (`sandboxes`) and their SHA-256
taken from the copies, which are what runs. The description is stored with the configuration;
a resumed run compares every file's checksum with the stored one and refuses a changed entrant.
Before the summary is built every stored hand is verified (`agents.tournament.verify`).

Resuming. A resumed run plays the specs it is given (agent specs are code: a database is not
trusted to name what runs) and refuses a database whose stored specs differ; with
``trust_db=True`` it takes the stored specs instead (`resolve_config`). A database that holds
hands beyond the configuration's deals or seatings (its deal count edited, or given smaller) is
refused before anything is played.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import agents
from agents.sandbox import AgentFault, IsolatedAgent, Limits, Sandbox, Staging, available, stage
from agents.tournament.backends import BACKENDS, execute
from agents.tournament.config import TournamentConfig
from agents.tournament.play import ISOLATION, isolated
from agents.tournament.schedule import HandTask, hands_per_deal, iter_schedule, total_hands
from agents.tournament.stats import Summary, summarize
from agents.tournament.storage import ResultStore
from agents.tournament.verify import HandRefused, verify

__all__ = [
    "MAX_LOAD_TIMEOUT",
    "TournamentError",
    "load_summary",
    "missing_extras",
    "resolve_config",
    "resolve_specs",
    "run_tournament",
    "sandboxes",
    "validate",
]

logger = logging.getLogger(__name__)

MAX_LOAD_TIMEOUT = 3600.0
_EXTRAS = (("tqdm", "progress bar"), ("openskill", "ratings"), ("matplotlib", "plots"))


class TournamentError(Exception):
    """A problem with the user's input or database, reported before anything is played."""


def missing_extras() -> list[str]:
    """What the ``tournament`` extra would add that is not installed (the run works without)."""
    import importlib.util

    return [f"{what} ({module})" for module, what in _EXTRAS if importlib.util.find_spec(module) is None]


def resolve_specs(config: TournamentConfig) -> TournamentConfig:
    """The configuration with every entrant's paths made absolute (`agents.resolve_spec`)."""
    try:
        resolved = tuple((name, agents.resolve_spec(spec)) for name, spec in config.agents)
    except ValueError as error:
        raise TournamentError(str(error)) from None
    return dataclasses.replace(config, agents=resolved)


def sandboxes(
    config: TournamentConfig,
    isolate: str,
    folder: str | Path,
    limits: Limits | None = None,
    allow_unsandboxed: bool = False,
    log_dir: str | Path | None = None,
) -> dict[str, tuple[Sandbox, list[dict[str, str]]]]:
    """For every isolated entrant, its `Sandbox` and the SHA-256 of its files, copied into
    ``folder`` (`agents.sandbox.stage`). Without a working sandbox (`agents.sandbox.available`)
    an isolated entrant is refused, unless ``allow_unsandboxed``: then it runs in a plain
    process (logged as a warning)."""
    found: dict[str, tuple[Sandbox, list[dict[str, str]]]] = {}
    limits = limits or Limits()
    for name, spec in config.agents:
        try:
            alone = isolated(spec, isolate)
        except ValueError as error:
            raise TournamentError(f"agent {name!r}: {error}") from None
        if not alone:
            continue
        uid, why = available()
        if why is not None and not allow_unsandboxed:
            raise TournamentError(
                f"agent {name!r} (spec {spec!r}) is not one of this package's baseline agents and must run in a "
                f"sandbox, but {why}; pass --allow-unsandboxed to run it in a plain process (it could then read "
                "the game's memory and the results database, and signal other processes)"
            )
        try:
            binds, paths, sources = stage(spec, folder)
        except (OSError, ValueError) as error:
            raise TournamentError(f"agent {name!r} (spec {spec!r}): cannot copy its files: {error}") from None
        log = None if log_dir is None else str(Path(log_dir) / f"{name}.log")
        if why is not None:
            logger.warning("agent %s runs without a sandbox (--allow-unsandboxed): %s", name, why)
            found[name] = (Sandbox(confined=False, limits=limits, log=log), sources)
        else:
            found[name] = (Sandbox(binds=binds, paths=paths, limits=limits, log=log, uid=uid), sources)
    return found


def validate(
    config: TournamentConfig,
    isolate: str = "auto",
    load_timeout: float = 300.0,
    allow_variant_mismatch: bool = False,
    confined: dict[str, tuple[Sandbox, list[dict[str, str]]]] | None = None,
) -> dict[str, dict[str, Any]]:
    """Build the environment and every entrant once; returns the entrants' descriptions
    (spec, variant, isolated, sandboxed, sources). ``confined``: `sandboxes`, whose files'
    checksums are the isolated entrants' sources. TournamentError on any problem."""
    from agents.tournament.play import _env

    try:
        _env(config.variant, config.rules)
    except (TypeError, ValueError) as error:
        raise TournamentError(f"invalid rule option for {config.variant}: {error}") from None
    entrants = {}
    for name, spec in config.agents:
        try:
            alone = isolated(spec, isolate)
        except ValueError as error:
            raise TournamentError(f"agent {name!r}: {error}") from None
        try:
            box, staged = (confined or {}).get(name, (None, None))
            if alone:
                proxy = IsolatedAgent(spec, load_timeout, box)
                try:
                    description = proxy.describe()
                finally:
                    proxy.kill()
            else:
                agent = agents.load(spec, seed=0)
                description = {**agents.describe(spec, agent), "has_act": callable(getattr(agent, "act", None))}
        except AgentFault as fault:
            last = fault.message.strip().splitlines()[-1] if fault.message.strip() else fault.kind
            raise TournamentError(f"agent {name!r} (spec {spec!r}) cannot be loaded: {last}") from None
        except Exception as error:  # any failure to build the agent is the user's to fix
            raise TournamentError(f"agent {name!r} (spec {spec!r}) cannot be loaded: {error}") from None
        if not description.get("has_act"):
            raise TournamentError(f"agent {name!r} (spec {spec!r}) has no act(observation, info) method")
        variant = description.get("variant")
        if variant is not None and variant != config.variant and not allow_variant_mismatch:
            raise TournamentError(
                f"agent {name!r} (spec {spec!r}) was trained for {variant}, this tournament plays {config.variant}: "
                "enter it anyway with --allow-variant-mismatch"
            )
        entrants[name] = {
            "spec": spec,
            "variant": variant if isinstance(variant, str) else None,
            "isolated": alone,
            "sandboxed": box is not None and box.confined,
            "sources": list(staged if staged is not None else description.get("sources") or []),
        }
    return entrants


def _check_unchanged(stored: dict[str, dict[str, Any]], current: dict[str, dict[str, Any]], db: Path) -> None:
    for name, entry in current.items():
        old = stored.get(name)
        if old is None:
            continue
        before = {s.get("path"): s.get("sha256") for s in old.get("sources") or [] if isinstance(s, dict)}
        now = {s["path"]: s["sha256"] for s in entry["sources"]}
        for path, digest in before.items():
            if now.get(path) != digest:
                found = "is missing" if path not in now else f"has sha256 {str(now[path])[:12]}…"
                raise TournamentError(
                    f"--resume: entrant {name!r} changed since {db} was started: {path} {found}, stored "
                    f"sha256 {str(digest)[:12]}…; restore the file or start a new tournament (another --db)"
                )


def _check_fits(config: TournamentConfig, extent: tuple[int, int] | None, db: Path) -> None:
    """Refuse a database whose stored hands (``extent``: `ResultStore.extent`) lie outside
    ``config``'s deals or seatings: a deal count edited in the database, or given smaller."""
    if extent is None:
        return
    deal, seating = extent
    if deal >= config.deals:
        raise TournamentError(
            f"{db} holds hands of deal {deal} (deals count from 0), beyond the {config.deals} deals of the "
            f"configuration: was the deal count edited? Give --deals {deal + 1} or more, or start a new tournament "
            "(another --db)"
        )
    per_deal = hands_per_deal(len(config.agents), config.format)
    if seating >= per_deal:
        raise TournamentError(
            f"{db} holds hands of seating {seating}, beyond the {per_deal} seatings per deal of the "
            "configuration: was it edited? Start a new tournament (another --db)"
        )


def resolve_config(
    db: str | Path,
    given: TournamentConfig | None,
    resume: bool,
    given_fields: set[str],
    trust_db: bool = False,
) -> TournamentConfig:
    """The configuration to run: ``given`` for a new tournament; for ``resume``, the stored one
    with the explicitly given fields checked against it (only ``deals`` may grow). A resumed
    run needs the agents given (``"agents" in given_fields``) unless ``trust_db``."""
    path = Path(db)
    if not resume:
        if given is None:
            raise TournamentError("no tournament configuration given")
        if path.exists() and path.stat().st_size > 0:
            with ResultStore(path) as store:
                if store.config() is not None:
                    raise TournamentError(
                        f"{path} already holds a tournament: pass --resume to continue it, or choose another --db"
                    )
        return given
    if not path.is_file():
        raise TournamentError(f"--resume: there is no database {path} to resume")
    with ResultStore(path) as store:
        stored = store.config()
    if stored is None:
        raise TournamentError(f"--resume: {path} holds no tournament configuration")
    if "agents" not in given_fields and not trust_db:
        listed = " ".join(f"{name}={spec}" for name, spec in stored.agents)
        raise TournamentError(
            "--resume plays the agents given on the command line, not the specs stored in the database "
            f"(they are code): give --agents {listed} or pass --trust-db to run the stored ones"
        )
    if given is None:
        return stored
    merged = stored
    conflicts = []
    for field in sorted(given_fields):
        old, new = getattr(stored, field), getattr(given, field)
        if field == "deals":
            if new < old:
                raise TournamentError(
                    f"--resume: the tournament has {old} deals; --deals may extend it, not shrink it to {new}"
                )
            merged = dataclasses.replace(merged, deals=new)
        elif old != new:
            conflicts.append(f"{field}: stored {old!r}, given {new!r}")
    if conflicts:
        raise TournamentError(
            "--resume: the given options differ from the stored tournament (" + "; ".join(conflicts) + "); "
            "give them as stored to continue it"
        )
    return merged


def run_tournament(
    config: TournamentConfig,
    db: str | Path,
    *,
    workers: int = 1,
    backend: str = "local",
    ray_address: str | None = None,
    progress: bool = False,
    max_attempts: int = 3,
    on_hand: Callable[[dict[str, Any]], None] | None = None,
    on_replay: Callable[[HandTask, str], None] | None = None,
    on_head_lost: Callable[[str], None] | None = None,
    isolate: str = "auto",
    load_timeout: float = 300.0,
    allow_variant_mismatch: bool = False,
    report_dir: str | Path | None = None,
    allow_unsandboxed: bool = False,
    limits: Limits | None = None,
) -> Summary:
    """Play every hand of ``config`` that ``db`` does not hold yet and return the summary of
    all of them. ``on_hand(hand)`` is called after each hand is stored. ``isolate``: which
    entrants run in their own process (``auto``: those not of this package, ``all``, ``none``);
    ``load_timeout``: seconds to build an isolated agent; each isolated entrant runs in a
    sandbox with ``limits`` (`sandboxes`; refused where the machine has none, unless
    ``allow_unsandboxed``), its output kept in ``DB-logs/NAME.log``. ``report_dir``, if given, is stored
    as the tournament's report folder (`ResultStore.report_dir`: where a resumed run reports).
    Without tqdm, ``progress`` lines go to this module's logger (INFO).

    ``backend="ray"`` joins the cluster at ``ray_address`` (else ``RAY_ADDRESS``) or starts a
    local Ray (`agents.cluster`). A hand played again because its node or worker was lost (any
    backend) is stored (`ResultStore.add_replay`: the summary's ``replays``, over resumed runs
    too), logged as a warning and passed to ``on_replay(task, why)``; ``on_head_lost(line)`` is
    called from another thread when the cluster's head stops answering. What goes wrong with
    the cluster itself raises `agents.cluster.ClusterError` (one line); finished hands stay
    stored and ``--resume`` continues."""
    if backend not in BACKENDS:
        raise TournamentError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if isolate not in ISOLATION:
        raise TournamentError(f"isolate must be one of {', '.join(ISOLATION)}, got {isolate!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
        raise TournamentError(f"workers must be 0 (play in this process) or more, got {workers!r}")
    if not 0 < load_timeout <= MAX_LOAD_TIMEOUT:
        raise TournamentError(f"load timeout must be above 0 and at most {MAX_LOAD_TIMEOUT:g} s, got {load_timeout!r}")
    if Path(db).is_file():
        with ResultStore(db) as store:
            _check_fits(config, store.extent(), Path(db))
    config = resolve_specs(config)
    with Staging() as folder:  # removed at the end; after a SIGKILL, by the next run (`Staging`)
        return _run(
            config, db, str(folder.path), workers, backend, ray_address, progress, max_attempts, on_hand, on_replay,
            on_head_lost, isolate, load_timeout, allow_variant_mismatch, report_dir, allow_unsandboxed, limits,
        )  # fmt: skip


def _run(
    config: TournamentConfig,
    db: str | Path,
    folder: str,
    workers: int,
    backend: str,
    ray_address: str | None,
    progress: bool,
    max_attempts: int,
    on_hand: Callable[[dict[str, Any]], None] | None,
    on_replay: Callable[[HandTask, str], None] | None,
    on_head_lost: Callable[[str], None] | None,
    isolate: str,
    load_timeout: float,
    allow_variant_mismatch: bool,
    report_dir: str | Path | None,
    allow_unsandboxed: bool,
    limits: Limits | None,
) -> Summary:
    logs = Path(db).with_name(Path(db).stem + "-logs")
    confined = sandboxes(config, isolate, folder, limits, allow_unsandboxed, logs)
    if confined:
        logs.mkdir(mode=0o700, parents=True, exist_ok=True)
    entrants = validate(config, isolate, load_timeout, allow_variant_mismatch, confined)
    boxes = tuple((name, box) for name, (box, _) in confined.items())
    with ResultStore(db) as store:
        stored = store.config()
        if stored is not None and dataclasses.replace(stored, deals=config.deals) != config:
            raise TournamentError(f"{db} holds a different tournament; use resolve_config() or another database")
        stored_entrants = store.entrants()
        _check_unchanged(stored_entrants, entrants, Path(db))
        if stored is None or stored.deals != config.deals or not stored_entrants:
            store.save_config(config, entrants)
        if report_dir is not None:
            store.save_report_dir(report_dir)
        expected = total_hands(config)
        done = store.done()
        todo = (
            task
            for task in iter_schedule(config, isolate=isolate, load_timeout=load_timeout, sandboxes=boxes)
            if task.key not in done
        )
        bar = _progress(expected, len(done), progress)

        def stored_hand(hand: dict[str, Any]) -> None:
            store.add_hand(hand)
            bar.update(1)
            if on_hand is not None:
                on_hand(hand)

        def failed(task: HandTask, attempts: int, error: str) -> None:
            store.add_failure(task.deal, task.seating, attempts, error)
            bar.update(1)

        def replayed(task: HandTask, why: str, place: str | None) -> None:
            store.add_replay(task.deal, task.seating, why, place)
            logger.warning("deal %d seating %d is played again: %s", task.deal, task.seating, why)
            if on_replay is not None:
                on_replay(task, why)

        try:
            execute(
                todo, stored_hand, failed, backend, workers, ray_address, max_attempts, entrants, replayed, on_head_lost
            )
        finally:
            bar.close()
        return _summary(config, store, Path(db))


def load_summary(db: str | Path) -> Summary:
    """The summary of a stored tournament, as far as it has been played (no agent is built)."""
    with ResultStore(db) as store:
        config = store.config()
        if config is None:
            raise TournamentError(f"{db} holds no tournament")
        return _summary(config, store, Path(db))


def _summary(config: TournamentConfig, store: ResultStore, db: Path) -> Summary:
    """The summary, once every stored hand is verified against its record (`verify`)."""
    try:
        verify(config, store.hands(with_record=True))
    except HandRefused as error:
        raise TournamentError(
            f"{db}: {error}; no results are shown from a database that does not match its records "
            "(delete that hand's rows and --resume to play it again)"
        ) from None
    except (KeyError, TypeError, IndexError, AttributeError) as error:
        raise TournamentError(f"{db} holds hands that do not fit its configuration ({error})") from None
    try:
        return summarize(config, store.hands(), total_hands(config), store.failures(), replays=store.replays())
    except (KeyError, TypeError, IndexError, AttributeError) as error:  # a database edited by hand or by an adversary
        raise TournamentError(
            f"{db} holds hands that do not fit its configuration ({type(error).__name__}: {error})"
        ) from None


class _Progress:
    """A plain progress line every 10% (logged at INFO), for installs without tqdm (the
    ``tournament`` extra)."""

    def __init__(self, total: int, initial: int, enabled: bool) -> None:
        self.total, self.count, self.enabled = total, initial, enabled
        self._shown = -1

    def update(self, n: int) -> None:
        self.count += n
        percent = 100 * self.count // max(1, self.total)
        if self.enabled and percent // 10 != self._shown // 10:
            self._shown = percent
            logger.info("tournament: %d/%d hands (%d%%)", self.count, self.total, percent)

    def close(self) -> None:
        return None


def _progress(total: int, initial: int, enabled: bool) -> Any:
    try:
        from tqdm import tqdm
    except ImportError:
        return _Progress(total, initial, enabled)
    return tqdm(
        total=total,
        initial=initial,
        unit="hand",
        desc="tournament",
        disable=not enabled,
        dynamic_ncols=True,
        smoothing=0.05,
    )
