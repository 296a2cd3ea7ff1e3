"""The tournament configuration: what is played, fixed when the tournament starts.

Everything that decides a hand's outcome lives here (variant, rule overrides, entrants, deals,
seed, format, move time limit) and is stored in the results database, so that `--resume`
continues exactly the tournament that was started. How it is run (workers, backend) is not part
of it: it never changes a result.
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Any

__all__ = ["FORMATS", "MAX_DEALS", "MAX_MOVE_TIMEOUT", "MAX_SEED", "VARIANTS", "TournamentConfig", "default_name"]

VARIANTS = ("xinjiang", "changchun")
FORMATS = ("duplicate", "random-seats")
MAX_DEALS = 1_000_000_000
MAX_SEED = 2**63 - 1
MAX_MOVE_TIMEOUT = 3600.0
"""An hour: a longer limit is no limit (and overflows the alarm timer near 1e10 s)."""
_NAME = re.compile(r"^[A-Za-z0-9_.+\-#@]{1,64}$")


def default_name(spec: str) -> str:
    """The display name of an entrant given without one: ``random``, ``heuristic``, the
    checkpoint's file stem for ``torch:path``, the class name for ``module:Class``."""
    spec = spec.strip().partition("?")[0]
    for kind in ("torch:", "sb3:", "rllib:"):
        if spec.startswith(kind):
            stem = spec[len(kind) :].replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
            return stem.rsplit(".", 1)[0] or kind[:-1]
    if ":" in spec:
        return spec.rsplit(":", 1)[-1] or spec
    return spec


@dataclasses.dataclass(frozen=True)
class TournamentConfig:
    """One tournament. ``deals`` counts deals (walls): the duplicate format plays every deal
    once per seating of its table, the random-seats format plays every deal once."""

    variant: str
    agents: tuple[tuple[str, str], ...]
    """Entrants as (display name, agent spec for `agents.load`), in the order given."""
    deals: int = 8
    seed: int = 0
    """Every deal, seating and agent seed derives from it (`agents.tournament.schedule`), so
    whoever knows it can reconstruct every hand and the wall. ``mahjong-tournament`` draws a
    secret one when ``--seed`` is not given; from Python, give ``secrets.randbits(63)`` for a
    competition, and a fixed seed for paired, reproducible runs."""
    format: str = "duplicate"
    rules: tuple[tuple[str, Any], ...] = ()
    """Rule overrides passed to the environment (fields of the variant's rule config)."""
    move_timeout: float | None = 10.0
    """Seconds an agent may take for one decision; over it, the agent forfeits the hand."""

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(f"variant must be one of {', '.join(VARIANTS)}, got {self.variant!r}")
        if self.format not in FORMATS:
            raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {self.format!r}")
        if isinstance(self.deals, bool) or not isinstance(self.deals, int) or not 1 <= self.deals <= MAX_DEALS:
            raise ValueError(
                f"the number of deals (--deals) must be an integer from 1 to {MAX_DEALS}, got {self.deals!r}"
            )
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or not 0 <= self.seed <= MAX_SEED:
            raise ValueError(f"seed (--seed) must be an integer from 0 to 2**63-1, got {self.seed!r}")
        timeout = self.move_timeout
        if timeout is not None and (
            isinstance(timeout, bool)
            or not isinstance(timeout, (int, float))
            or not math.isfinite(timeout)
            or not 0 < timeout <= MAX_MOVE_TIMEOUT
        ):
            raise ValueError(
                f"move timeout (--move-timeout) must be a number of seconds above 0 and at most {MAX_MOVE_TIMEOUT:g}, "
                f"got {timeout!r}"
            )
        if not isinstance(self.agents, tuple) or not all(
            isinstance(a, tuple) and len(a) == 2 and all(isinstance(x, str) for x in a) for a in self.agents
        ):
            raise ValueError(f"agents must be (name, spec) pairs of strings, got {self.agents!r}")
        if len(self.agents) < 2:
            raise ValueError(f"a tournament needs at least two agents, got {len(self.agents)}")
        names = [name for name, _ in self.agents]
        for name in names:
            if not _NAME.match(name):
                raise ValueError(
                    f"agent name {name!r} is not valid: use 1-64 letters, digits or _ . + - # @ "
                    "(give a name as NAME=SPEC)"
                )
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(
                f"agent name(s) {', '.join(duplicates)} given twice: name each entrant, e.g. a=random b=random"
            )

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.agents]

    @property
    def specs(self) -> dict[str, str]:
        return dict(self.agents)

    @property
    def env_name(self) -> str:
        return f"{self.variant}_v0"

    def to_dict(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "agents": [[name, spec] for name, spec in self.agents],
            "deals": self.deals,
            "seed": self.seed,
            "format": self.format,
            "rules": [[key, value] for key, value in self.rules],
            "move_timeout": self.move_timeout,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TournamentConfig:
        """The inverse of `to_dict`; ValueError (or KeyError, TypeError) on malformed data."""
        if not isinstance(data, dict):
            raise ValueError("the configuration is not a JSON object")
        return cls(
            variant=data["variant"],
            agents=tuple((str(n), str(s)) for n, s in data["agents"]),
            deals=data["deals"],
            seed=data["seed"],
            format=data["format"],
            rules=tuple((str(k), v) for k, v in data.get("rules", [])),
            move_timeout=data.get("move_timeout"),
        )
