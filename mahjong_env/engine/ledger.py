"""The payments ledger and the hand result (RULES.md R12, X7).

`Ledger` owns the points and silver of one match: the running scores and silver, the current
hand's payments (in the API's record shape, `PaymentRecord`) and kong payments, and the
rewards of the current step. `hand_result` builds the result dict of a finished hand (API.md
``info["result"]``) from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, TypedDict

from mahjong_env.engine.state import Outcome, WinMethod
from mahjong_env.rules.base import Settlement
from mahjong_env.tiles import tile_name

__all__ = ["Ledger", "KongPayment", "PaymentRecord", "HandResult", "hand_result", "KONG_REASONS"]

PaymentRecord = TypedDict("PaymentRecord", {"from": int, "to": int, "points": float, "reason": str})
"""One payment as results and records show it: ``{"from", "to", "points", "reason"}``."""

KONG_REASONS = ("kong", "kong_refund")
"""Payment reasons counted in ``kong_deltas`` rather than ``deltas``."""


class KongPayment(NamedTuple):
    """One kong payment of the hand (returned on an X8 drawn hand)."""

    payer: int
    payee: int
    points: float


class _ResultFields(TypedDict):
    outcome: str
    winner: int | None
    method: str | None
    tile: str | None
    fans: list[list[str | int]]
    total_fan: int
    deltas: list[float]
    kong_deltas: list[float]
    payments: list[PaymentRecord]
    dealer: int


class HandResult(_ResultFields, total=False):
    """A finished hand's result (API.md): ``payer_fans`` only where fans differ per payer."""

    payer_fans: list[int | None]
    next_dealer: int


class Ledger:
    """Scores and silver of the match, payments of the hand, rewards of the step."""

    __slots__ = ("scores", "silver", "rewards", "base", "payments", "kong_payments")

    def __init__(self) -> None:
        self.scores = [0.0] * 4
        self.silver = [0.0] * 4
        self.rewards = [0.0] * 4
        self.base = 1.0
        """Silver per point in the current hand (X7; 1 where the variant has no silver)."""
        self.payments: list[PaymentRecord] = []
        self.kong_payments: list[KongPayment] = []

    def start_match(self, silver: Sequence[float]) -> None:
        self.scores = [0.0] * 4
        self.silver = [float(x) for x in silver]

    def start_hand(self, base: float) -> None:
        self.base = base
        self.payments = []
        self.kong_payments = []
        self.rewards = [0.0] * 4

    def pay(self, payer: int, payee: int, points: float, reason: str) -> None:
        """Move ``points`` (and their silver) from ``payer`` to ``payee``; zero is not recorded."""
        if points == 0:
            return
        self.payments.append({"from": payer, "to": payee, "points": points, "reason": str(reason)})
        self.rewards[payer] -= points
        self.rewards[payee] += points
        self.scores[payer] -= points
        self.scores[payee] += points
        money = points * self.base
        self.silver[payer] -= money
        self.silver[payee] += money

    def pay_kong(self, payer: int, payee: int, points: float) -> None:
        """A kong payment: paid now and remembered for an X8 refund."""
        self.pay(payer, payee, points, "kong")
        self.kong_payments.append(KongPayment(payer, payee, points))


def hand_result(
    ledger: Ledger,
    outcome: Outcome,
    dealer: int,
    winner: int | None = None,
    method: WinMethod | None = None,
    tile: int | None = None,
    settlement: Settlement | None = None,
) -> HandResult:
    """The result of a hand that ended now (a win's ``winner``, ``method``, winning ``tile`` and
    ``settlement``); ``next_dealer`` is added by the engine (R11)."""
    deltas = [0.0] * 4
    kong_deltas = [0.0] * 4
    for p in ledger.payments:
        target = kong_deltas if p["reason"] in KONG_REASONS else deltas
        target[p["from"]] -= p["points"]
        target[p["to"]] += p["points"]
    result: HandResult = {
        "outcome": outcome.value,
        "winner": winner,
        "method": None if method is None else method.value,
        "tile": tile_name(tile) if tile is not None else None,
        "fans": [] if settlement is None else [[str(f.name), f.fan] for f in settlement.fans],
        "total_fan": 0 if settlement is None else settlement.total_fan,
        "deltas": deltas,
        "kong_deltas": kong_deltas,
        "payments": list(ledger.payments),
        "dealer": dealer,
    }
    if settlement is not None and settlement.payer_fans is not None:
        result["payer_fans"] = list(settlement.payer_fans)
    return result
