"""Tournament statistics: per-entrant means with bootstrap confidence intervals, rates,
paired head-to-head differences and OpenSkill ratings.

Units. An entrant's score in a hand is the points of the seat it played (the settlement plus
kong payments, API.md ``deltas + kong_deltas``); where it holds two seats (2 or 3 entrants)
each seat counts as one seat-hand. "Mean points per hand" is the total over its seat-hands
divided by their number.

Confidence intervals resample deals, not hands: a deal's seatings share one wall, so they are
one unit of evidence (the duplicate grouping). For each statistic we write it as a ratio of
per-deal sums, ``sum_d x_d / sum_d y_d``, draw ``resamples`` bootstrap samples of the deals
(the same samples for every statistic) and take the *expanded percentile* interval
(Hesterberg 2015): percentiles at ``α'/2`` and ``1 − α'/2`` with
``α' = 2 Φ(−sqrt(n/(n−1)) · t_{n−1, 1−α/2})``, which corrects the percentile bootstrap's
narrowness for few deals (``n`` = deals that carry the statistic; none below 2 deals).

Head-to-head: for entrants A and B (A ranked higher), over the deals where both played, the mean of the per-deal
difference of their mean points (paired: same walls, usually the same table). Significant when
the interval excludes 0.

Rates, per seat-hand: win; self-draw (won on its own tile: 自摸, kong bloom, 摸宝, 对宝);
deal-in (点炮 dianpao: its discard or kong tile was won; pays on a discard in Changchun); drawn
hand (流局); forfeit. Average fan is over its wins.

Rating: OpenSkill's Plackett–Luce model, one match per hand in (deal, seating) order, entrants
ranked by their mean points in the hand (ties share a rank). ``mu`` is the skill estimate,
``sigma`` its uncertainty, ``ordinal = mu − 3·sigma`` a conservative rank. Without the
``openskill`` package (the ``tournament`` extra) ratings are NaN and everything else stands.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np
import scipy.stats

from agents.tournament.config import TournamentConfig
from agents.tournament.schedule import derive_seed

__all__ = ["AgentStats", "PairStats", "Summary", "bootstrap_ratio", "summarize", "t_quantile"]

_SELF_DRAWN = ("self_draw", "kong_bloom", "bao_draw", "bao_match")


@dataclasses.dataclass
class AgentStats:
    name: str
    spec: str
    seat_hands: int
    deals: int
    mean: float
    ci_low: float
    ci_high: float
    win_rate: float
    self_draw_rate: float
    deal_in_rate: float
    draw_rate: float
    forfeit_rate: float
    average_fan: float
    mu: float
    sigma: float
    ordinal: float
    ms_per_move: float


@dataclasses.dataclass
class PairStats:
    a: str
    b: str
    deals: int
    diff: float
    ci_low: float
    ci_high: float

    @property
    def significant(self) -> bool:
        return bool(self.ci_low > 0 or self.ci_high < 0)


@dataclasses.dataclass
class Summary:
    config: TournamentConfig
    hands_played: int
    hands_expected: int
    agents: list[AgentStats]
    """Sorted by mean points, best first."""
    pairs: list[PairStats]
    rating_history: list[dict[str, float]]
    """Each entrant's ordinal after each hand, in (deal, seating) order."""
    notable: list[dict[str, Any]]
    forfeits: list[dict[str, Any]]
    failures: list[dict[str, Any]]
    confidence: float = 0.95
    skill_history: list[dict[str, tuple[float, float]]] = dataclasses.field(default_factory=list)
    """Each entrant's (mu, sigma) after each hand, in the same order as ``rating_history``."""
    replays: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    """Plays of hands that were lost and played again (`ResultStore.replays`)."""


def t_quantile(p: float, df: int) -> float:
    """Student's t quantile for ``df`` degrees of freedom (`scipy.stats.t`)."""
    return float(scipy.stats.t.ppf(p, df))


def _ratio_of_sums(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """``sum x / sum y`` along ``axis``: the statistic of every column, resampled or not."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return x.sum(axis) / y.sum(axis)


def bootstrap_ratio(
    x: np.ndarray, y: np.ndarray, confidence: float = 0.95, resamples: int = 2000, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Estimates ``sum x / sum y`` per column of ``x``, ``y`` (deals × statistics) and their
    expanded-percentile bootstrap intervals over rows; returns (estimate, low, high).

    The rows are resampled in pairs by `scipy.stats.bootstrap` (the same resamples for every
    column, drawn from ``numpy.random.default_rng(seed)``); each column's interval takes the
    percentiles at ``α'/2`` and ``1 − α'/2`` of its finite resampled values (module doc)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.ndim == 1:
        x, y = x[:, None], y[:, None]
    n, m = x.shape
    estimate = _ratio_of_sums(x, y, axis=0)
    low = np.full(m, np.nan)
    high = np.full(m, np.nan)
    if n < 2:
        return estimate, low, high
    batch = max(1, min(resamples, 2_000_000 // max(n * m, 1)))  # resampled values held at once per sample
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        # a column whose resamples hold no deal is NaN there; its interval is computed below
        warnings.simplefilter("ignore", scipy.stats.DegenerateDataWarning)
        samples = scipy.stats.bootstrap(
            (x, y),
            _ratio_of_sums,
            n_resamples=resamples,
            batch=batch,
            vectorized=True,
            paired=True,
            method="percentile",
            random_state=np.random.default_rng(seed),
        ).bootstrap_distribution  # columns × resamples
    effective = (y != 0).sum(0)
    alpha = 1 - confidence
    for j in range(m):
        k = int(effective[j])
        if k < 2:
            continue
        t = t_quantile(1 - alpha / 2, k - 1) * math.sqrt(k / (k - 1))
        tail = scipy.stats.norm.cdf(-t)  # α'/2
        column = samples[j]
        column = column[np.isfinite(column)]
        if len(column):
            low[j], high[j] = np.quantile(column, [tail, 1 - tail])
    return estimate, low, high


def _ratings(
    hands: list[dict[str, Any]], names: list[str]
) -> tuple[dict[str, tuple[float, float, float]], list[dict[str, float]], list[dict[str, tuple[float, float]]]]:
    """Final (mu, sigma, ordinal) per entrant, the ordinal history and the (mu, sigma) history."""
    try:
        from openskill.models import PlackettLuce
    except ImportError:
        nan = float("nan")
        return {name: (nan, nan, nan) for name in names}, [], []
    model = PlackettLuce()
    ratings = {name: model.rating(name=name) for name in names}
    history = []
    skills = []
    for hand in hands:
        scores: dict[str, list[float]] = {}
        for name, points in zip(hand["seats"], hand["points"]):
            scores.setdefault(name, []).append(points)
        present = list(scores)
        if len(present) > 1:
            updated = model.rate([[ratings[n]] for n in present], scores=[float(np.mean(scores[n])) for n in present])
            for name, team in zip(present, updated):
                ratings[name] = team[0]
        history.append({name: float(r.ordinal()) for name, r in ratings.items()})
        skills.append({name: (float(r.mu), float(r.sigma)) for name, r in ratings.items()})
    final = {name: (float(r.mu), float(r.sigma), float(r.ordinal())) for name, r in ratings.items()}
    return final, history, skills


def summarize(
    config: TournamentConfig,
    hands: Iterable[dict[str, Any]],
    hands_expected: int,
    failures: list[dict[str, Any]] | None = None,
    confidence: float = 0.95,
    resamples: int = 2000,
    replays: list[dict[str, Any]] | None = None,
) -> Summary:
    """All statistics of the stored hands (as `ResultStore.hands` yields them, in order)."""
    hands = list(hands)
    names = config.names
    k = len(names)
    column = {name: i for i, name in enumerate(names)}
    deals = sorted({h["deal"] for h in hands})
    row = {d: i for i, d in enumerate(deals)}
    n = len(deals)
    points = np.zeros((n, k))
    slots = np.zeros((n, k))
    counters = {key: np.zeros(k) for key in ("win", "self", "dealin", "draw", "forfeit", "fan", "moves", "think")}
    for hand in hands:
        r = row[hand["deal"]]
        result = hand["result"]
        for seat, (name, value) in enumerate(zip(hand["seats"], hand["points"])):
            j = column[name]
            points[r, j] += value
            slots[r, j] += 1
            won = result.get("outcome") == "win" and result.get("winner") == seat
            counters["win"][j] += won
            counters["self"][j] += won and result.get("method") in _SELF_DRAWN
            counters["fan"][j] += result.get("total_fan", 0) if won else 0
            counters["dealin"][j] += hand.get("feeder") == seat
            counters["draw"][j] += result.get("outcome") == "draw"
            counters["forfeit"][j] += bool(hand.get("forfeit")) and hand["forfeit"]["seat"] == seat
            counters["moves"][j] += hand["decisions"][seat] or 0
            counters["think"][j] += hand["think_time"][seat] or 0.0
    pairs = [(a, b) for a in range(k) for b in range(a + 1, k)]
    x_cols = [points[:, j] for j in range(k)]
    y_cols = [slots[:, j] for j in range(k)]
    for a, b in pairs:
        both = (slots[:, a] > 0) & (slots[:, b] > 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            diff = np.where(
                both, points[:, a] / np.maximum(slots[:, a], 1) - points[:, b] / np.maximum(slots[:, b], 1), 0
            )
        x_cols.append(diff)
        y_cols.append(both.astype(float))
    x = np.stack(x_cols, 1) if n else np.zeros((0, len(x_cols)))
    y = np.stack(y_cols, 1) if n else np.zeros((0, len(y_cols)))
    estimate, low, high = bootstrap_ratio(x, y, confidence, resamples, derive_seed(config.seed, 4))
    ratings, history, skills = _ratings(hands, names)
    total = slots.sum(0)

    def rate(values: np.ndarray, j: int, over: float) -> float:
        return float(values[j] / over) if over else float("nan")

    agent_stats = [
        AgentStats(
            name=name,
            spec=config.specs[name],
            seat_hands=int(total[j]),
            deals=int((slots[:, j] > 0).sum()),
            mean=float(estimate[j]) if total[j] else float("nan"),
            ci_low=float(low[j]),
            ci_high=float(high[j]),
            win_rate=rate(counters["win"], j, total[j]),
            self_draw_rate=rate(counters["self"], j, total[j]),
            deal_in_rate=rate(counters["dealin"], j, total[j]),
            draw_rate=rate(counters["draw"], j, total[j]),
            forfeit_rate=rate(counters["forfeit"], j, total[j]),
            average_fan=rate(counters["fan"], j, counters["win"][j]),
            mu=ratings[name][0],
            sigma=ratings[name][1],
            ordinal=ratings[name][2],
            ms_per_move=rate(counters["think"] * 1000, j, counters["moves"][j]),
        )
        for j, name in enumerate(names)
    ]
    agent_stats.sort(key=lambda s: (-s.mean if not math.isnan(s.mean) else math.inf, s.name))
    rank = {s.name: i for i, s in enumerate(agent_stats)}
    pair_stats = []
    for i, (a, b) in enumerate(pairs):
        c = k + i
        both = int(y[:, c].sum()) if n else 0
        diff, lo, hi = (float(estimate[c]) if both else float("nan")), float(low[c]), float(high[c])
        if rank[names[a]] > rank[names[b]]:  # the better-ranked entrant first: differences read positive
            a, b, diff, lo, hi = b, a, -diff, -hi, -lo
        pair_stats.append(PairStats(names[a], names[b], both, diff, lo, hi))
    pair_stats.sort(key=lambda p: (rank[p.a], rank[p.b]))
    return Summary(
        config=config,
        hands_played=len(hands),
        hands_expected=hands_expected,
        agents=agent_stats,
        pairs=pair_stats,
        rating_history=history,
        notable=_notable(hands, names),
        forfeits=[{"deal": h["deal"], "seating": h["seating"], **h["forfeit"]} for h in hands if h.get("forfeit")],
        failures=list(failures or []),
        replays=list(replays or []),
        confidence=confidence,
        skill_history=skills,
    )


def _notable(hands: list[dict[str, Any]], names: list[str]) -> list[dict[str, Any]]:
    """The largest win of the tournament (most points to a winner) and each entrant's worst hand."""
    found: list[dict[str, Any]] = []
    best: tuple[float, dict[str, Any]] | None = None
    worst: dict[str, tuple[float, dict[str, Any]]] = {}
    for hand in hands:
        for seat, (name, value) in enumerate(zip(hand["seats"], hand["points"])):
            entry = {"deal": hand["deal"], "seating": hand["seating"], "seat": seat, "agent": name, "points": value}
            won = hand["result"].get("outcome") == "win" and hand["result"].get("winner") == seat
            if won and (best is None or value > best[0]):
                best = (value, entry)
            if name not in worst or value < worst[name][0]:
                worst[name] = (value, entry)
    if best is not None:
        found.append({"kind": "largest win", **best[1]})
    for name in names:
        if name in worst:
            found.append({"kind": f"worst hand of {name}", **worst[name][1]})
    return found
