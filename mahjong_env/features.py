"""What one player can work out about its own hand from what it sees (RULES.md R13).

This module owns the hand analysis that players compute from their own information only, the
readable view (API.md ``view()``) plus the variant's rule fields: unseen counts, shanten (向听数)
after each discard and after each claim, acceptance (有效牌: unseen tiles that would lower the
shanten), winning tiles with their unseen counts, and the danger of each discard against
players who have declared ready (听) and may win on it. Rule-based agents
(`agents.heuristic`) decide with it; `analysis_planes` writes the same answers as feature
planes, for the env option ``analysis_features=True`` and for networks trained on them.

Everything is derived from the view, so it can reveal nothing the player may not see. The
variant's answers come from its rule set's own pure predicates (`RuleSet.allows_seven_pairs`,
`RuleSet.wins_on_discards`, `RuleSet.tile_condition_shortfall`, `RuleSet.meets_tile_conditions`),
so this module knows no variant by name.

Analysis planes (``ANALYSIS_CHANNELS``, ``(len(ANALYSIS_CHANNELS), 34)`` float32), columns are
tile kinds unless a row says otherwise:

- 0 ``discard_shanten``: (shanten after discarding T + 1) / 9 for held T (effective shanten:
  plus the rule set's `tile_condition_shortfall`, Changchun's C9), 0 for kinds not held;
- 1 ``discard_best``: 1 where discarding T reaches the lowest effective shanten;
- 2 ``discard_acceptance``: unseen tiles that lower the shanten after discarding T, / 40;
- 3 ``discard_ready_live``: after discarding T the hand is ready: 0.1 + unseen winning tiles
  / 20 (0 if not ready);
- 4 ``draw_useful``: 3n+1 hands (waiting for a draw or a claim): 1 for kinds whose draw lowers
  the shanten;
- 5 ``unseen``: unseen copies / 4;
- 6 ``winning``: 3n+1 hands: unseen copies / 4 + 0.25 for each kind that completes the hand
  (C9 included);
- 7 ``danger``: ready players that may win on a discard of T and have not shown T safe since
  their declaration, / 3;
- 8 ``seven_pairs``: where seven pairs is a winning form and the hand is closed: (seven-pairs
  shanten after discarding T + 1) / 7;
- 9 ``claim``: scalars: columns 0–4 shanten after pong / kong / chow_low / chow_mid /
  chow_high (+1, / 9; 0: not possible), 5–9 their acceptance / 40, 10 the current shanten
  (+1, / 9), 11 the current acceptance / 40;
- 10 ``discard_prospects``: where the best discards leave the hand one step from ready and
  there is more than one of them: 1 for those with the most `PlayerAnalysis.ready_prospects`
  (the unseen winning tiles their useful draws lead to), half their share of the largest for
  the others, 0 elsewhere.

Networks trained before row 10 existed read the first ten rows (`agents.network`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mahjong_env import actions as A
from mahjong_env import hand
from mahjong_env.hand.shape import NEAR, Shape, useful_kinds
from mahjong_env.observation import Piece
from mahjong_env.rules.base import RuleSet
from mahjong_env.tiles import NUM_KINDS, TERMINALS_AND_HONORS, parse_tiles
from mahjong_env.variants import Variant, build_table, get_variant

__all__ = [
    "ANALYSIS_CHANNELS",
    "ANALYSIS_PIECES",
    "MeldSummary",
    "PlayerAnalysis",
    "analysis_planes",
    "decision_candidates",
    "discard_danger",
    "rule_set",
    "unseen_counts",
]

ANALYSIS_CHANNELS = (
    "discard_shanten",
    "discard_best",
    "discard_acceptance",
    "discard_ready_live",
    "draw_useful",
    "unseen",
    "winning",
    "danger",
    "seven_pairs",
    "claim",
    "discard_prospects",
)

ANALYSIS_PIECES = tuple(Piece(name, 1, 2.0) for name in ANALYSIS_CHANNELS)
"""The analysis rows as `mahjong_env.observation.observation_layout` pieces (values in [0, 2])."""

_IS_YAOJIU = tuple(t in TERMINALS_AND_HONORS for t in range(NUM_KINDS))  # 幺九 (C9)
# tie-break order of discards: honors (0), then terminals (0), then towards the middle
CENTRALITY = tuple(0 if t >= 27 else min(t % 9, 8 - t % 9) for t in range(NUM_KINDS))
# danger of an unsafe suited discard by rank: terminals, 2/8, the middle (a ready hand waits
# more often on middle tiles: more sequence shapes use them)
_SUITED_DANGER = tuple(0.7 if t % 9 in (0, 8) else 0.85 if t % 9 in (1, 7) else 1.0 for t in range(27))
_HONOR_DANGER = (0.0, 0.3, 0.5, 0.6, 0.6)  # by unseen copies: none unseen, nobody can wait on it


_RULE_SETS: dict[Variant, list[tuple[dict[str, Any], RuleSet]]] = {}
_RULE_SETS_KEPT = 4  # configurations remembered per variant


def rule_set(variant: str, config: Mapping[str, Any] | None = None) -> RuleSet:
    """The rule set of ``variant`` (a name `mahjong_env.variants.get_variant` knows) with the
    rule fields ``config`` (the env's ``config.to_dict()``; absent fields take the defaults),
    remembered for the next decisions at the same table. ValueError for an unknown variant or
    field."""
    entry = get_variant(variant)
    fields = {} if config is None else config
    known = _RULE_SETS.setdefault(entry, [])
    for kept, rules in known:
        if kept == fields:
            return rules
    rules = build_table(entry, fields).rules
    known.insert(0, (copy.deepcopy(dict(fields)), rules))
    del known[_RULE_SETS_KEPT:]
    return rules


def unseen_counts(view: Mapping[str, Any]) -> list[int]:
    """Copies of each kind the player cannot see: 4 minus its own hand, every shown meld
    tile, every river and the bao once it has seen it (RULES.md R13)."""
    seen = [0] * NUM_KINDS
    for t in parse_tiles(view["hand"] or ""):
        seen[t] += 1
    for melds in view["melds"]:
        for meld in melds:
            for t in parse_tiles(meld["tiles"] or ""):
                seen[t] += 1
    for river in view["discards"]:
        for name in river:
            seen[parse_tiles(name)[0]] += 1
    if view.get("bao"):
        seen[parse_tiles(view["bao"])[0]] += 1
    return [max(0, 4 - n) for n in seen]


def discard_danger(view: Mapping[str, Any], unseen: Sequence[int] | None = None) -> list[float]:
    """Per kind, the danger of discarding it: summed over the other ready players (not 相公),
    0 for a kind discarded by anyone after that player's declaration (it would have won on it:
    its winning tiles are fixed, R8, C7) and otherwise a weight by the kind (honors by their
    unseen copies, suited tiles by rank). Uses the view's public discard ``history``."""
    seat = view["seat"]
    unseen = unseen_counts(view) if unseen is None else unseen
    danger = [0.0] * NUM_KINDS
    history = view.get("history") or []
    for r in range(4):
        if r == seat or not view["ready"][r] or view["xianggong"][r]:
            continue
        declared = max((i for i, entry in enumerate(history) if entry[0] == r and entry[3]), default=-1)
        safe = {parse_tiles(entry[1])[0] for entry in history[declared + 1 :]}
        for t in range(NUM_KINDS):
            if t not in safe:
                danger[t] += _HONOR_DANGER[unseen[t]] if t >= 27 else _SUITED_DANGER[t]
    return danger


class MeldSummary:
    """What one's melds contribute to a win's tile conditions (`mahjong_env.rules.base.MeldFacts`,
    Changchun's C9) and to 空听 (R8)."""

    __slots__ = ("chow", "concealed_kong", "count", "suits", "tiles", "triplet", "yaojiu")

    def __init__(self, melds: Sequence[Mapping[str, Any]] = ()) -> None:
        self.count = len(melds)
        self.tiles = [0] * NUM_KINDS
        self.suits = 0
        self.yaojiu = False
        self.triplet = False
        self.chow = False
        self.concealed_kong = False
        for meld in melds:
            kind = meld["kind"]
            if kind == "chow":
                self.chow = True
            else:
                self.triplet = True
                if kind == "concealed_kong":
                    self.concealed_kong = True
            for t in parse_tiles(meld["tiles"] or ""):
                self.tiles[t] += 1
                if t < 27:
                    self.suits |= 1 << (t // 9)
                self.yaojiu |= _IS_YAOJIU[t]

    def plus(
        self, tiles: tuple[int, ...], triplet: bool, new_meld: bool = True, concealed: bool = False
    ) -> MeldSummary:
        """A copy with ``tiles`` added: one more meld (a chow unless ``triplet``; a concealed
        kong where ``concealed``), or tiles added to a meld (kongs)."""
        other = MeldSummary()
        other.count = self.count + new_meld
        other.tiles = list(self.tiles)
        other.suits = self.suits
        other.yaojiu = self.yaojiu
        other.triplet = self.triplet or triplet
        other.chow = self.chow or (new_meld and not triplet)
        other.concealed_kong = self.concealed_kong or concealed
        for t in tiles:
            other.tiles[t] += 1
            if t < 27:
                other.suits |= 1 << (t // 9)
            other.yaojiu |= _IS_YAOJIU[t]
        return other


def connection(counts: Sequence[int], tile: int) -> int:
    """Copies held of ``tile``'s neighbours (itself and suited tiles within two ranks)."""
    total = 0
    for u in NEAR[tile]:
        total += counts[u]
    return total


def claim_tiles(action_offset: int, tile: int) -> tuple[int, ...]:
    """Tiles taken from the hand to claim ``tile``: 0 pong, 2 chow_low, 3 chow_mid, 4 chow_high."""
    if action_offset == 0:
        return (tile, tile)
    if action_offset == 2:
        return (tile + 1, tile + 2)
    if action_offset == 3:
        return (tile - 1, tile + 1)
    return (tile - 2, tile - 1)


class PlayerAnalysis:
    """One decision's hand analysis from the player's view and the variant's rule fields
    (its rule set answers the variant's questions: `rule_set`)."""

    def __init__(
        self,
        view: Mapping[str, Any],
        variant: str,
        config: Mapping[str, Any] | None = None,
        visible: Sequence[float] | None = None,
    ) -> None:
        """``visible``: where the caller has it, the observation's ``visible`` row (the copies
        of each kind this seat sees: `unseen_counts` counts the same from the view, at the cost
        of reading every river and meld); the unseen counts are ``4 - visible``."""
        seat = view["seat"]
        config = config or {}
        self.config = config
        self.view = view
        self.variant = variant
        self.rules = rules = rule_set(variant, config)
        self.conditions = rules.extra_win_conditions
        """Whether wins have conditions on the tiles held (C9): effective shanten adds the rule
        set's `tile_condition_shortfall` and waits are filtered by `meets_tile_conditions`."""
        self.seven_pairs = rules.allows_seven_pairs
        self.discard_wins = rules.wins_on_discards
        self.counts = [0] * NUM_KINDS
        for t in parse_tiles(view["hand"] or ""):
            self.counts[t] += 1
        self.melds = MeldSummary(view["melds"][seat])
        self.ready = bool(view["ready"][seat])
        claim = view.get("claim")
        self.claim_tile = parse_tiles(claim["tile"])[0] if claim else None
        if visible is None:
            self.unseen = unseen_counts(view)
        else:
            row = visible.tolist() if isinstance(visible, np.ndarray) else visible
            self.unseen = [max(0, 4 - int(n)) for n in row]
        self._danger: list[float] | None = None

    @property
    def danger(self) -> list[float]:
        """`discard_danger` of this view (all zero where nobody may win on a discard)."""
        if self._danger is None:
            self._danger = discard_danger(self.view, self.unseen) if self.discard_wins else [0.0] * NUM_KINDS
        return self._danger

    # ------------------------------------------------------------------ shanten

    def effective(self, counts: list[int], melds: MeldSummary) -> float:
        """Shanten plus, where wins have tile conditions, the rule set's `tile_condition_shortfall`."""
        shape = Shape(counts, melds.count, self.seven_pairs)
        return shape.shanten + (self.rules.tile_condition_shortfall(counts, melds) if self.conditions else 0.0)

    def effective_after(self, tile: int, n: int, melds: MeldSummary) -> float:
        """Effective shanten with ``n`` copies of ``tile`` taken out of the hand."""
        counts = list(self.counts)
        counts[tile] -= n
        return self.effective(counts, melds)

    def effective_without(self, tiles: tuple[int, ...], melds: MeldSummary) -> float:
        counts = list(self.counts)
        for t in tiles:
            counts[t] -= 1
        return self.effective(counts, melds)

    def acceptance(self, counts: list[int], melds: MeldSummary) -> int:
        """Unseen tiles that lower the shanten of a 3n+1 hand (有效牌)."""
        unseen = self.unseen
        total = 0
        for u in useful_kinds(counts, melds.count, self.seven_pairs):
            total += unseen[u]
        return total

    def discard_scores(self, counts: list[int], melds: MeldSummary, discards: Sequence[int]) -> list[tuple[float, int]]:
        """(effective shanten after discarding T, T) for each T of a 3n+2 hand."""
        shape = Shape(counts, melds.count, self.seven_pairs)
        scored = []
        for t in discards:
            e: float = shape.changed(t, -1)
            if self.conditions:
                counts[t] -= 1
                e += self.rules.tile_condition_shortfall(counts, melds)
                counts[t] += 1
            scored.append((e, t))
        return scored

    def rank_key(self, counts: list[int], melds: MeldSummary, t: int) -> tuple[int, int, int, int, int]:
        """Tie-break of discards of equal shanten: more acceptance, then fewer unseen copies
        (a deader tile), the less connected tile, honors before terminals before middle
        tiles, the lowest kind. A fixed order, so the choice is a function of the state."""
        counts[t] -= 1
        key = (self.acceptance(counts, melds), -self.unseen[t], -connection(counts, t), -CENTRALITY[t], -t)
        counts[t] += 1
        return key

    def best_discard(
        self, counts: list[int], melds: MeldSummary, discards: Sequence[int], with_acceptance: bool = False
    ) -> tuple[float, int, int]:
        """(effective shanten, acceptance, tile) of the best discard from a 3n+2 hand; the
        acceptance is -1 when a single discard is best and ``with_acceptance`` is False."""
        scored = self.discard_scores(counts, melds, discards)
        best_e = min(e for e, _ in scored)
        candidates = [t for e, t in scored if e == best_e]
        if len(candidates) == 1 and not with_acceptance:
            return best_e, -1, candidates[0]
        best = max(self.rank_key(counts, melds, t) for t in candidates)
        return best_e, best[0], -best[-1]

    # ------------------------------------------------------------------ waits

    def waits(self, counts: list[int], melds: MeldSummary) -> int:
        """Winning kinds of a 3n+1 hand (R8, without 空听; filtered by the tile conditions, C9)."""
        mask = hand.waits(counts)
        if self.seven_pairs and melds.count == 0 and sum(counts) == 13:
            mask |= hand.seven_pairs_waits(counts)
        for t in hand.wait_kinds(mask):
            if counts[t] + melds.tiles[t] >= 4 or (self.conditions and not self._wins_with(counts, melds, t)):
                mask &= ~(1 << t)
        return mask

    def _wins_with(self, counts: list[int], melds: MeldSummary, tile: int) -> bool:
        """Whether the 3n+1 ``counts`` completed by ``tile`` meet the tile conditions (C9)."""
        counts[tile] += 1
        try:
            return self.rules.meets_tile_conditions(counts, melds)
        finally:
            counts[tile] -= 1

    def live_waits(self, discard: int) -> int:
        """Unseen winning tiles after ``ready discard``."""
        counts = list(self.counts)
        counts[discard] -= 1
        return sum(self.unseen[t] for t in hand.wait_kinds(self.waits(counts, self.melds)))

    def ready_prospects(self, discard: int) -> int:
        """For a hand one step from ready after ``discard``: the unseen winning tiles it can
        expect, summed over its useful draws (each draw kind's unseen copies times the unseen
        winning tiles of the best ready discard after that draw; 0 for a draw that does not
        make the hand ready). A two-step acceptance: it prefers the discard whose ready hands
        wait wider, where plain acceptance only counts the draws."""
        counts, melds, unseen = self.counts, self.melds, self.unseen
        counts[discard] -= 1
        total = 0
        try:
            for d in useful_kinds(counts, melds.count, self.seven_pairs):
                if not unseen[d]:
                    continue
                counts[d] += 1
                best = 0
                shape = Shape(counts, melds.count, self.seven_pairs)
                for t in range(NUM_KINDS):
                    if counts[t] and shape.changed(t, -1) == 0:  # ready in shape; `waits` applies C9
                        counts[t] -= 1
                        live = sum(unseen[w] - (w == d) for w in hand.wait_kinds(self.waits(counts, melds)))
                        counts[t] += 1
                        if live > best:
                            best = live
                counts[d] -= 1
                total += unseen[d] * best
        finally:
            counts[discard] += 1
        return total

    # ------------------------------------------------------------------ claims

    def after_claim(self, offset: int, tile: int) -> tuple[float, int]:
        """(effective shanten, acceptance) after claiming ``tile`` (offset 0 pong, 2–4 chows,
        then the best discard; 1 kong: no discard follows)."""
        if offset == 1:
            counts = list(self.counts)
            counts[tile] -= 3
            melds = self.melds.plus((tile,) * 4, True)
            return self.effective(counts, melds), self.acceptance(counts, melds)
        used = claim_tiles(offset, tile)
        counts = list(self.counts)
        for t in used:
            counts[t] -= 1
        melds = self.melds.plus(tuple(sorted(used + (tile,))), offset == 0)
        discards = [t for t in range(NUM_KINDS) if counts[t]]
        e, acc, _ = self.best_discard(counts, melds, discards, with_acceptance=True)
        return e, acc


def analysis_planes(
    view: Mapping[str, Any],
    variant: str,
    config: Mapping[str, Any] | None = None,
    mask: np.ndarray | None = None,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """The analysis planes of the module docstring for the player whose ``view`` this is;
    ``mask`` (the action mask) tells which claims are open. Writes into ``out`` if given."""
    if out is None:
        out = np.zeros((len(ANALYSIS_CHANNELS), NUM_KINDS), np.float32)
    else:
        out.fill(0.0)
    a = PlayerAnalysis(view, variant, config)
    counts, melds = a.counts, a.melds
    unseen = a.unseen
    out[5] = np.asarray(unseen, np.float32) / 4.0
    out[7] = np.asarray(a.danger, np.float32) / 3.0
    size = sum(counts) + 3 * melds.count
    if size == 14:
        held = [t for t in range(NUM_KINDS) if counts[t]]
        scored = a.discard_scores(counts, melds, held)
        best = min(e for e, _ in scored)
        shape = Shape(counts, melds.count, a.seven_pairs) if a.seven_pairs and melds.count == 0 else None
        for e, t in scored:
            out[0, t] = (e + 1.0) / 9.0
            out[1, t] = e == best
            counts[t] -= 1
            out[2, t] = a.acceptance(counts, melds) / 40.0
            counts[t] += 1
            if e <= 0.0:
                live = a.live_waits(t)
                ready = live > 0 or a.waits([c - (u == t) for u, c in enumerate(counts)], melds)
                if ready:
                    out[3, t] = 0.1 + live / 20.0
            if shape is not None:
                out[8, t] = (shape.seven_pairs_changed(t, -1) + 1.0) / 7.0
        if best == 1.0:
            candidates = [t for e, t in scored if e == best]
            if len(candidates) > 1:
                prospects = [a.ready_prospects(t) for t in candidates]
                top = max(prospects)
                for t, value in zip(candidates, prospects):
                    out[10, t] = 1.0 if value == top else 0.5 * value / top  # a step between the best and the rest
    elif size == 13:
        for u in useful_kinds(counts, melds.count, a.seven_pairs):
            out[4, u] = 1.0
        for t in hand.wait_kinds(a.waits(counts, melds)):
            out[6, t] = 0.25 + unseen[t] / 4.0
        out[9, 10] = (a.effective(counts, melds) + 1.0) / 9.0
        out[9, 11] = a.acceptance(counts, melds) / 40.0
        tile = a.claim_tile
        if tile is not None and mask is not None and not a.ready:
            for offset, action in enumerate((A.PONG, A.KONG, A.CHOW_LOW, A.CHOW_MID, A.CHOW_HIGH)):
                if mask[action]:
                    e, acc = a.after_claim(offset, tile)
                    out[9, offset] = (e + 1.0) / 9.0
                    out[9, 5 + offset] = acc / 40.0
    np.minimum(out, 2.0, out=out)
    return out


def decision_candidates(
    view: Mapping[str, Any], variant: str, config: Mapping[str, Any] | None, mask: np.ndarray
) -> list[int]:
    """The few actions worth comparing at this decision, from the player's own information;
    empty where one action is clearly right or the choice is routine (then a policy decides).

    - a claim window: every legal action (pass, pong, kong, chows);
    - an own turn, not ready: every legal kong or special declaration and ``ready T`` with
      the most unseen winning tiles, next to the best plain discard (lowest effective
      shanten, then acceptance); where a ready player may win on a discard, also the second
      best and the safest discard;
    - otherwise (a ready hand's turn, wins, the bao view): nothing.

    Training compares these actions by playing each to the end of the hand
    (`training.paired`); agents with an advantage head choose among them."""
    legal = np.flatnonzero(mask)
    if len(legal) < 2 or mask[A.WIN] or mask[A.VIEW_BAO]:
        return []
    if mask[A.PASS]:
        return [int(a) for a in legal]
    a = PlayerAnalysis(view, variant, config)
    if a.ready:
        return []
    out: list[int] = [int(x) for x in legal if A.CONCEALED_KONG <= x < A.CHOW_LOW or x in A.SPECIAL_DECLARATIONS]
    readies = [int(x) - A.READY for x in legal if A.READY <= x < A.CONCEALED_KONG]
    if readies:
        out.append(A.READY + max((a.live_waits(t), t) for t in readies)[1])
    discards = [int(x) for x in legal if x < A.READY]
    if discards:
        counts, melds = a.counts, a.melds
        ranked = sorted(
            (
                (e, tuple(-v for v in a.rank_key(counts, melds, t)), t)
                for e, t in a.discard_scores(counts, melds, discards)
            )
        )
        out.append(A.DISCARD + ranked[0][2])
        danger = a.danger
        if a.discard_wins and any(danger[t] for t in discards):
            if len(ranked) > 1:
                out.append(A.DISCARD + ranked[1][2])
            safest = min((danger[t], e, t) for e, _, t in ranked)[2]
            out.append(A.DISCARD + safest)
    unique = list(dict.fromkeys(out))
    return unique if len(unique) > 1 else []
