"""Running a tournament: validate, schedule, skip what the database holds, play, summarise."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import agents
from agents.tournament.backends import BACKENDS, execute
from agents.tournament.config import TournamentConfig
from agents.tournament.schedule import HandTask, schedule
from agents.tournament.stats import Summary, summarize
from agents.tournament.storage import ResultStore

__all__ = ["TournamentError", "load_summary", "resolve_config", "run_tournament", "validate"]


class TournamentError(Exception):
    """A problem with the user's input or database, reported before anything is played."""


def validate(config: TournamentConfig) -> None:
    """Build the environment and every entrant once, so that a typo fails now, not mid-run."""
    from agents.tournament.play import _env

    try:
        _env(config.variant, config.rules)
    except (TypeError, ValueError) as error:
        raise TournamentError(f"invalid rule option for {config.variant}: {error}") from None
    for name, spec in config.agents:
        try:
            agent = agents.load(spec, seed=0)
        except Exception as error:  # any failure to build the agent is the user's to fix
            raise TournamentError(f"agent {name!r} (spec {spec!r}) cannot be loaded: {error}") from None
        if not callable(getattr(agent, "act", None)):
            raise TournamentError(f"agent {name!r} (spec {spec!r}) has no act(observation, info) method")


def resolve_config(
    db: str | Path, given: TournamentConfig | None, resume: bool, given_fields: set[str]
) -> TournamentConfig:
    """The configuration to run: ``given`` for a new tournament; for ``resume``, the stored one
    with the explicitly given fields checked against it (only ``deals`` may grow)."""
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
    if not path.exists():
        raise TournamentError(f"--resume: there is no database {path} to resume")
    with ResultStore(path) as store:
        stored = store.config()
    if stored is None:
        raise TournamentError(f"--resume: {path} holds no tournament configuration")
    if given is None:
        return stored
    merged = stored
    conflicts = []
    for field in sorted(given_fields):
        old, new = getattr(stored, field), getattr(given, field)
        if field == "deals":
            if new < old:
                raise TournamentError(
                    f"--resume: the tournament has {old} deals; --hands may extend it, not shrink it to {new}"
                )
            merged = dataclasses.replace(merged, deals=new)
        elif old != new:
            conflicts.append(f"{field}: stored {old!r}, given {new!r}")
    if conflicts:
        raise TournamentError(
            "--resume: the given options differ from the stored tournament (" + "; ".join(conflicts) + "); "
            "omit them to continue it as it was"
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
) -> Summary:
    """Play every hand of ``config`` that ``db`` does not hold yet and return the summary of
    all of them. ``on_hand(hand)`` is called after each hand is stored."""
    if backend not in BACKENDS:
        raise TournamentError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if workers < 0:
        raise TournamentError(f"workers must be 0 (play in this process) or more, got {workers}")
    validate(config)
    with ResultStore(db) as store:
        stored = store.config()
        if stored is not None and dataclasses.replace(stored, deals=config.deals) != config:
            raise TournamentError(f"{db} holds a different tournament; use resolve_config() or another database")
        if stored is None or stored.deals != config.deals:
            store.save_config(config)
        tasks = schedule(config)
        done = store.done()
        todo = [task for task in tasks if task.key not in done]
        bar = _progress(len(tasks), len(tasks) - len(todo), progress)

        def stored_hand(hand: dict[str, Any]) -> None:
            store.add_hand(hand)
            bar.update(1)
            if on_hand is not None:
                on_hand(hand)

        def failed(task: HandTask, attempts: int, error: str) -> None:
            store.add_failure(task.deal, task.seating, attempts, error)
            bar.update(1)

        try:
            execute(todo, stored_hand, failed, backend, workers, ray_address, max_attempts)
        finally:
            bar.close()
        return summarize(config, store.hands(), len(tasks), store.failures())


def load_summary(db: str | Path) -> Summary:
    """The summary of a stored tournament, as far as it has been played."""
    with ResultStore(db) as store:
        config = store.config()
        if config is None:
            raise TournamentError(f"{db} holds no tournament")
        return summarize(config, store.hands(), len(schedule(config)), store.failures())


def _progress(total: int, initial: int, enabled: bool) -> Any:
    from tqdm import tqdm

    return tqdm(
        total=total,
        initial=initial,
        unit="hand",
        desc="tournament",
        disable=not enabled,
        dynamic_ncols=True,
        smoothing=0.05,
    )
