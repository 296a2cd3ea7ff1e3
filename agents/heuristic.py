"""`HeuristicAgent`: the rule-based baseline for both variants.

It plays from what one player may see (RULES.md R13): the action mask, the observation's
``visible`` plane (own hand, every public meld, every river) for counting unseen tiles, and the
readable view (``info["view"]``) for its own hand and melds. Hand shape comes from the engine's
hand analysis (`mahjong_env.hand` and its per-group shanten tables).

Decision rules, in order:

1. ``win`` whenever it is legal (self-draw, discard, robbing, 对宝, 分张); ``view_bao`` whenever
   offered (C8).
2. Declare ready (听, R8) when a ``ready T`` is legal: the ``T`` whose wait has the most unseen
   winning tiles (Changchun waits filtered by C9), unless every such wait is dead.
3. Discard: minimise the effective shanten (向听数: standard form, or seven pairs where it is a
   winning form and the hand is closed; in Changchun plus a penalty for each missing C9
   condition: 三色全, 幺九, 一叉), then maximise the unseen tiles that lower the shanten.
   With ``lookahead=True``, one step from ready, the discard among those of the best
   effective shanten whose useful draws lead to the widest ready hands
   (`mahjong_env.features.PlayerAnalysis.ready_prospects`: each draw's unseen copies times
   the unseen winning tiles of the best ready discard after it).
   Optional defence (``defence=True``), where others may win on a discard (Changchun C3; Xinjiang with
   ``allow_discard_win``, X9): a tile discarded by anyone since a ready player's declaration
   is safe against it (its winning tiles are fixed and it would have won); other tiles carry
   a danger by kind, weighed against the shanten the more the further the hand is from
   ready (push when ready or one step away, fold when far).
4. Kongs (杠) and Changchun special groups (C5, C6) when they do not worsen the hand
   (``kongs="always"``: every kong and special group a player that is not ready may make, on
   its turn and on a discard, since a kong pays at once, X8, C12, adds a fan, X6, and draws a
   replacement; ``kongs="first"``: the same, and on its turn before a ready declaration). A ready
   Xinjiang player kongs only if the hand stays ready without the kong tiles, so it never
   becomes 相公 (X5); a ready Changchun player's kongs keep its waits by rule (C7).
5. Claims (pong 碰, kong, chow 吃) only when the hand after the claim (and its best discard)
   has a lower effective shanten, or the same with more unseen useful tiles; otherwise ``pass``.

The agent needs ``info`` as built by `agents.agent_info` (``{"view", "variant", "config"}``):
the rule fields it reads (``allow_seven_pairs``, ``allow_discard_win``) default to each
variant's defaults when ``config`` is absent. The hand analysis is `mahjong_env.features`,
computed from the view and, where the observation is the env's ``(C, 34)`` array, its
``visible`` row (the same unseen counts the view gives, without reading every river).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.base import Agent
from mahjong_env import actions as A
from mahjong_env.engine.state import SPECIAL_KIND_OF_ACTION, MeldKind
from mahjong_env.features import PlayerAnalysis
from mahjong_env.observation import OBSERVATION_LAYOUT
from mahjong_env.rules.changchun import SPECIAL_GROUPS, declaration_tiles
from mahjong_env.tiles import NUM_KINDS

__all__ = ["KONG_POLICIES", "HeuristicAgent"]

KONG_POLICIES = ("safe", "always", "first")
"""``kongs`` options: a kong only where it does not worsen the hand; every kong (after the
ready declaration, rule 2); every kong, before the ready declaration too."""

_ROW_VISIBLE = OBSERVATION_LAYOUT.offset["visible"]
_CLAIMS = (A.KONG, A.PONG, A.CHOW_LOW, A.CHOW_MID, A.CHOW_HIGH)
_CLAIM_OFFSET = {A.PONG: 0, A.KONG: 1, A.CHOW_LOW: 2, A.CHOW_MID: 3, A.CHOW_HIGH: 4}
# weight of a discard's danger against one step of shanten, by the best shanten reachable
# (0: the discard leaves the hand ready)
_DANGER_WEIGHT = (0.3, 1.0, 2.5)


class HeuristicAgent(Agent):
    """Rule-based baseline (see the module docstring). It is deterministic: ``seed`` is
    accepted for the `agents.load` interface and changes nothing. The options default to the
    baseline; each was measured in 1-vs-3 duplicate runs against it (README, baseline
    results): ``defence=True`` adds the defence of rule 3 (no better in Changchun);
    ``kongs="always"`` or ``"first"`` takes every kong (rule 4; better in Xinjiang);
    ``lookahead=True`` chooses discards one step from ready by their ready prospects (rule 3;
    better in Changchun)."""

    name = "heuristic"

    def __init__(
        self,
        seed: int | None = 0,
        defence: bool = False,
        kongs: str = "safe",
        lookahead: bool = False,
    ) -> None:
        if kongs not in KONG_POLICIES:
            raise ValueError(f"HeuristicAgent: kongs must be one of {KONG_POLICIES}, got {kongs!r}")
        if not isinstance(lookahead, bool):
            raise ValueError(f"HeuristicAgent: lookahead must be true or false, got {lookahead!r}")
        self.lookahead = lookahead
        self._seed = seed
        self.defence = bool(defence)
        self.kongs = kongs

    def reset(self) -> None:
        return None

    # ------------------------------------------------------------------ entry point

    def act(self, observation: dict[str, np.ndarray], info: dict[str, Any] | None = None) -> int:
        mask = observation["action_mask"]
        legal = np.flatnonzero(mask).tolist()  # Python ints: cheaper to compare than numpy's
        if len(legal) == 0:
            raise ValueError("HeuristicAgent.act: the action mask has no legal action")
        if len(legal) == 1:
            return legal[0]
        if mask[A.WIN]:
            return A.WIN
        if mask[A.VIEW_BAO]:
            return A.VIEW_BAO
        if info is None or "view" not in info or "variant" not in info:
            raise ValueError(
                "HeuristicAgent.act needs info={'view': env.view(agent), 'variant': ...}; "
                "build it with agents.agent_info(env, agent)"
            )
        state = _Situation(info["view"], info["variant"], info.get("config"), _visible_row(observation))
        if mask[A.PASS]:
            return state.claim(mask, self.kongs != "safe")
        return self._turn(state, legal)

    # ------------------------------------------------------------------ own turn

    def _turn(self, s: _Situation, legal: list[int]) -> int:
        if s.ready:
            for action in legal:
                if A.CONCEALED_KONG <= action < A.CHOW_LOW and s.kong_keeps_ready(int(action)):
                    return int(action)
            return int(legal[0])  # discard ids come first: the drawn tile, the only discard
        if self.kongs == "first":
            kong = self._any_kong(legal)
            if kong is not None:
                return kong
        danger = s.danger if self.defence and s.discard_wins else None
        readies = [int(a) - A.READY for a in legal if A.READY <= a < A.CONCEALED_KONG]
        if readies:
            live = [(s.live_waits(t), t) for t in readies]
            if danger is not None:
                live = [(count - 4.0 * danger[t], count, t) for count, t in live]
                _, count, tile = max(live)
            else:
                count, tile = max(live)
            if count > 0:
                return A.READY + tile
        if self.kongs == "always":
            kong = self._any_kong(legal)
            if kong is not None:
                return kong
        discards = [int(a) for a in legal if a < A.READY]
        best_e, best_tile = self._discard(s, discards, danger)
        if self.lookahead and best_e == 1 and danger is None:
            wider = s.one_away_discard(discards)
            if wider is not None:
                best_tile = wider
        for action in legal:
            action = int(action)
            if A.CONCEALED_KONG <= action < A.ADDED_KONG:
                t = action - A.CONCEALED_KONG
                if s.effective_after(t, 4, s.melds.plus((t,) * 4, True)) <= best_e:
                    return action
            elif A.ADDED_KONG <= action < A.SPECIAL_ADD + 34:
                t = (action - A.ADDED_KONG) % 34
                if s.effective_after(t, 1, s.melds.plus((t,), True, new_meld=False)) <= best_e:
                    return action
            elif action in A.SPECIAL_DECLARATIONS:
                tiles = s.declaration(SPECIAL_KIND_OF_ACTION[action])
                after = s.effective_without(tiles, s.melds.plus(tiles, True))
                now = best_e if len(tiles) == 4 else s.effective(s.counts, s.melds)
                if after <= now:
                    return action
        return A.DISCARD + best_tile

    @staticmethod
    def _any_kong(legal: list[int]) -> int | None:
        """The first legal kong, addition or special group (``kongs`` other than ``"safe"``)."""
        for action in legal:
            if A.CONCEALED_KONG <= action < A.CHOW_LOW or action in A.SPECIAL_DECLARATIONS:
                return int(action)
        return None

    @staticmethod
    def _discard(s: _Situation, discards: list[int], danger: list[float] | None) -> tuple[float, int]:
        """(effective shanten of the best discard, the tile to discard), with the danger of
        each tile weighed in when ``danger`` is given and not all zero."""
        if danger is None or not any(danger[t] for t in discards):
            best_e, _, tile = s.best_discard(s.counts, s.melds, discards)
            return best_e, tile
        scored = s.discard_scores(s.counts, s.melds, discards)
        best_e = min(e for e, _ in scored)
        weight = _DANGER_WEIGHT[min(int(best_e), 2)] if best_e >= 0 else _DANGER_WEIGHT[0]
        adjusted = [(e + weight * danger[t], t) for e, t in scored]
        low = min(v for v, _ in adjusted)
        candidates = [t for v, t in adjusted if v == low]
        tile = candidates[0] if len(candidates) == 1 else -max(s.rank_key(s.counts, s.melds, t) for t in candidates)[-1]
        return min(e for e, t in scored if t == tile), tile


def _visible_row(observation: dict[str, Any]) -> np.ndarray | None:
    """The observation's ``visible`` row (the copies of each kind this seat sees), or None
    where the observation is not the env's ``(C, 34)`` array (a flattened or wrapped one):
    then the analysis counts the unseen tiles from the view."""
    planes = observation.get("observation")
    if isinstance(planes, np.ndarray) and planes.ndim == 2 and planes.shape[1] == NUM_KINDS:
        return planes[_ROW_VISIBLE] if planes.shape[0] > _ROW_VISIBLE else None
    return None


class _Situation(PlayerAnalysis):
    """One decision's analysis (`mahjong_env.features.PlayerAnalysis`) plus the heuristic's
    ready-kong and claim rules."""

    def declaration(self, kind: MeldKind) -> tuple[int, ...]:
        """The tiles a legal special declaration takes (C5; C14 three winds and 1s stand-ins as
        the rule fields say)."""
        config = self.config
        tiles = declaration_tiles(
            kind,
            self.counts,
            three_winds=bool(config.get("xuanfeng_three_winds")),
            yaoji=bool(config.get("yaoji_wild")),
        )
        return tuple(tiles) if tiles is not None else tuple(t for t in SPECIAL_GROUPS[kind] if self.counts[t])

    def one_away_discard(self, discards: list[int]) -> int | None:
        """At one step from ready: among the discards of the best effective shanten, the one
        with the most `ready_prospects`, ties broken by the default order (`rank_key`); None
        where there is only one such discard."""
        counts, melds = self.counts, self.melds
        scored = self.discard_scores(counts, melds, discards)
        best_e = min(e for e, _ in scored)
        candidates = [t for e, t in scored if e == best_e]
        if len(candidates) < 2:
            return None
        return max(candidates, key=lambda t: (self.ready_prospects(t), self.rank_key(counts, melds, t)))

    def kong_keeps_ready(self, action: int) -> bool:
        """Whether a ready player's kong leaves the hand ready (X5: else it becomes 相公); where
        the rule set offers a ready player only kongs that keep its waits (C7), every one does."""
        if self.rules.ready_kongs_keep_waits:
            return True
        if A.CONCEALED_KONG <= action < A.ADDED_KONG:
            tile, n = action - A.CONCEALED_KONG, 4
        elif A.ADDED_KONG <= action < A.SPECIAL_ADD:
            tile, n = action - A.ADDED_KONG, 1
        else:
            return False
        counts = list(self.counts)
        counts[tile] -= n
        return bool(self.waits(counts, self.melds.plus((tile,) * n, True, new_meld=n == 4, concealed=n == 4)))

    def claim(self, mask: np.ndarray, all_kongs: bool = False) -> int:
        """Pass, or the claim that improves the hand (pong, kong, chow, 抢叉); every kong with
        ``all_kongs`` (while not ready)."""
        tile = self.claim_tile
        options = [a for a in _CLAIMS if mask[a]]
        if tile is None or not options:
            return A.PASS
        if self.ready:
            return A.KONG if mask[A.KONG] and self._claimed_kong_keeps_ready(tile) else A.PASS
        if all_kongs and mask[A.KONG]:
            return A.KONG
        now = self.effective(self.counts, self.melds)
        if mask[A.KONG] and self.effective_after(tile, 3, self.melds.plus((tile,) * 4, True)) <= now:
            return A.KONG
        scored = []
        for action in options:
            if action == A.KONG:
                continue
            e, acc = self.after_claim(_CLAIM_OFFSET[action], tile)
            scored.append((e, -acc, action))
        if not scored:
            return A.PASS
        e, neg_acc, action = min(scored)
        if e < now or (e == now and -neg_acc > self.acceptance(self.counts, self.melds)):
            return action
        return A.PASS

    def _claimed_kong_keeps_ready(self, tile: int) -> bool:
        if self.rules.ready_kongs_keep_waits:
            return True  # C7: offered only when the waits stay the same
        counts = list(self.counts)
        counts[tile] -= 3
        return bool(self.waits(counts, self.melds.plus((tile,) * 4, True)))
