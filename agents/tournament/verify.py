"""Stored hands checked against their records before any result is shown.

The results database is a file: whoever can write it could give an entrant points it never
won. So before the leaderboard is built (`agents.tournament.runner`) every stored hand is
checked by `verify`, and the first one that fails is refused and named:

- it belongs to the tournament: its seating and deal seed are the schedule's for its
  ``(deal, seating)``, its record is of one hand of this variant with the tournament's rules,
  dealt from its deal seed (hands, wall and dealer as the env deals them);
- its record replays (`mahjong_env.replay`) to its stored result;
- its result is zero-sum, and every seat's points equal the result's settlement plus the kong
  payments that stand, with a forfeit's payment (`agents.tournament.play.hand_points`), whose
  seat is the one the record penalised.

A replay costs a few milliseconds per hand (about 4 s for a thousand hands on one core).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

from agents.tournament.config import TournamentConfig
from agents.tournament.play import _env, forfeit_payment, hand_points
from agents.tournament.schedule import iter_schedule

__all__ = ["HandRefused", "verify"]

_TOLERANCE = 1e-6


class HandRefused(ValueError):  # noqa: N818 - a refusal of a stored hand, named as such
    """A stored hand that does not match its record; ``key`` is its ``(deal, seating)``."""

    def __init__(self, key: tuple[int, int], why: str) -> None:
        super().__init__(f"the stored hand of deal {key[0]} seating {key[1]} {why}")
        self.key = key


def verify(config: TournamentConfig, hands: Iterable[dict[str, Any]]) -> None:
    """Check every hand (as `ResultStore.hands(with_record=True)` yields them); `HandRefused`
    naming the first that does not hold."""
    from mahjong_env import replay

    env = _env(config.variant, config.rules)
    payment = forfeit_payment(env)
    tasks: dict[tuple[int, int], Any] = {}
    dealt: dict[int, dict[str, Any]] = {}
    for hand in hands:
        key = (hand["deal"], hand["seating"])
        if hand["deal"] not in dealt:
            tasks.update((t.key, t) for t in iter_schedule(config, range(hand["deal"], hand["deal"] + 1)))
            env.reset(seed=tasks[key].deal_seed if key in tasks else 0)
            fresh = env.record()
            dealt = {hand["deal"]: fresh}
        task = tasks.get(key)
        if task is None:
            raise HandRefused(key, "is not one of the tournament's hands")
        if hand["deal_seed"] != task.deal_seed or list(hand["seats"]) != list(task.seats):
            raise HandRefused(key, "has another deal seed or seating than the schedule's (the row was edited)")
        record = hand["record"]
        _check_record(key, record, dealt[hand["deal"]])
        try:
            results = replay(record)
        except (ValueError, KeyError, TypeError, IndexError, AttributeError) as error:
            raise HandRefused(key, f"does not replay from its record ({error})") from None
        result = hand["result"]
        if not results or _normalised(results[-1]) != _normalised(result):
            raise HandRefused(key, "has a result that differs from what its record replays to (the row was edited)")
        _check_points(key, hand, result, record, payment)


def _check_record(key: tuple[int, int], record: Any, fresh: dict[str, Any]) -> None:
    if not isinstance(record, dict) or not isinstance(record.get("hands"), list) or len(record["hands"]) != 1:
        raise HandRefused(key, "has a record that is not of one hand")
    same = (
        record.get("variant") == fresh["variant"]
        and record.get("seed") == fresh["seed"]
        and record.get("config") == fresh["config"]
        and record.get("num_hands") == fresh["num_hands"]
    )
    first, dealt = record["hands"][0], fresh["hands"][0]
    if not same or not isinstance(first, dict) or any(first.get(k) != dealt[k] for k in ("dealer", "hands", "wall")):
        raise HandRefused(key, "has a record that was not dealt by its deal seed under the tournament's rules")
    dice = first.get("dice")
    if not isinstance(dice, list) or dice[: len(dealt["dice"])] != dealt["dice"]:
        raise HandRefused(key, "has a record whose dice were not rolled from its deal seed")


def _check_points(
    key: tuple[int, int], hand: dict[str, Any], result: dict[str, Any], record: dict[str, Any], payment: float
) -> None:
    forfeit = hand.get("forfeit")
    actions = record["hands"][0].get("actions") or []
    penalised = next((int(s) for s, name in actions if str(name).startswith("illegal")), None)
    if (forfeit is None) != (result.get("outcome") != "illegal"):
        raise HandRefused(key, "has a forfeit that does not match its outcome")
    seat = None if forfeit is None else forfeit.get("seat")
    if forfeit is not None and (seat != penalised or hand["seats"][seat] != forfeit.get("agent")):
        raise HandRefused(key, "charges its forfeit to another seat than the one its record penalised")
    points = hand["points"]
    if not all(isinstance(p, (int, float)) and math.isfinite(p) for p in points) or abs(sum(points)) > _TOLERANCE:
        raise HandRefused(key, f"has points {points} that are not zero-sum")
    expected = hand_points(result, list(hand["seats"]), seat, payment)
    if any(abs(p - e) > _TOLERANCE for p, e in zip(points, expected)):
        raise HandRefused(key, f"has points {points}, but its result gives {expected} (the row was edited)")


def _normalised(result: Any) -> Any:
    return json.loads(json.dumps(result, sort_keys=True))
