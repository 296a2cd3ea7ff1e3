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
4. Kongs (杠) and Changchun special groups (C5, C6) when they do not worsen the hand. A ready
   Xinjiang player kongs only if the hand stays ready without the kong tiles, so it never
   becomes 相公 (X5); a ready Changchun player's kongs keep its waits by rule (C7).
5. Claims (pong 碰, kong, chow 吃) only when the hand after the claim (and its best discard)
   has a lower effective shanten, or the same with more unseen useful tiles; otherwise ``pass``.

The agent needs ``info`` as built by `agents.agent_info` (``{"view", "variant"}``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.base import Agent
from mahjong_env import actions as A
from mahjong_env import hand
from mahjong_env.hand.tables import SHANTEN_OPTIONS
from mahjong_env.observation import CHANNELS
from mahjong_env.rules.changchun import SPECIAL_GROUPS
from mahjong_env.tiles import NUM_KINDS, parse_tiles

__all__ = ["HeuristicAgent"]

_VISIBLE = CHANNELS.index("visible")
_GROUPS = ((0, 9), (9, 18), (18, 27), (27, 34))
_GROUP_OF = tuple(min(t // 9, 3) for t in range(NUM_KINDS))
_YAOJIU = (0, 8, 9, 17, 18, 26, 27, 28, 29, 30, 31, 32, 33)
_IS_YAOJIU = tuple(t in _YAOJIU for t in range(NUM_KINDS))
_DRAGONS = (31, 32, 33)
# kinds that can combine with a held kind: itself and suited neighbours within two ranks
_NEAR = tuple(
    (t,) if t >= 27 else tuple(u for u in range(t - 2, t + 3) if u // 9 == t // 9 and 0 <= u < 27)
    for t in range(NUM_KINDS)
)
# tie-break order of discards: honors (0), then terminals (0), then towards the middle
_CENTRALITY = tuple(0 if t >= 27 else min(t % 9, 8 - t % 9) for t in range(NUM_KINDS))
_CLAIMS = (A.KONG, A.PONG, A.CHOW_LOW, A.CHOW_MID, A.CHOW_HIGH)
_SPECIAL_ACTION = dict(zip(SPECIAL_GROUPS, A.SPECIAL_DECLARATIONS))


def _combine(states: set[tuple[int, int, int]], options: tuple[tuple[int, int, int], ...]) -> set[tuple[int, int, int]]:
    return {
        (m + m2, min(d + d2, 4 - m - m2), p + p2) for m, d, p in states for m2, d2, p2 in options if p + p2 <= 1
    }


def _best(states: set[tuple[int, int, int]], options: tuple[tuple[int, int, int], ...]) -> int:
    best = 8
    for m, d, p in states:
        for m2, d2, p2 in options:
            if p + p2 <= 1:
                sets = m + m2
                value = 8 - 2 * sets - min(d + d2, 4 - sets) - p - p2
                best = min(best, value)
    return best


class _Shape:
    """Shanten of a hand and of every hand one tile away from it.

    The standard-form shanten combines the four groups' option tables (as
    `mahjong_env.hand.shanten` does); keeping the combination of the other three groups lets a
    one-tile change cost a single table lookup and one combination.
    """

    __slots__ = ("key", "pairs", "rest", "seven_pairs", "shanten")

    def __init__(self, counts: list[int], melds: int, seven_pairs: bool) -> None:
        key = bytes(counts)
        options = [SHANTEN_OPTIONS[g][key[a:b]] for g, (a, b) in enumerate(_GROUPS)]
        self.key = key
        self.rest = []
        for g in range(4):
            states = {(melds, 0, 0)}
            for h in range(4):
                if h != g:
                    states = _combine(states, options[h])
            self.rest.append(states)
        self.seven_pairs = seven_pairs and melds == 0
        self.pairs = sum(n >> 1 for n in key)
        self.shanten = self._total(_best(self.rest[0], options[0]), self.pairs)

    def _total(self, standard: int, pairs: int) -> int:
        return min(standard, 6 - pairs) if self.seven_pairs else standard

    def changed(self, tile: int, delta: int) -> int:
        """Shanten of the hand with ``delta`` (±1) copies of ``tile`` more."""
        g = _GROUP_OF[tile]
        start, stop = _GROUPS[g]
        key = self.key
        n = key[tile]
        group = bytearray(key[start:stop])
        group[tile - start] = n + delta
        standard = _best(self.rest[g], SHANTEN_OPTIONS[g][bytes(group)])
        return self._total(standard, self.pairs - (n >> 1) + ((n + delta) >> 1))


_USEFUL_CACHE: dict[tuple[bytes, int, bool], tuple[int, ...]] = {}
_USEFUL_CACHE_SIZE = 200_000


def _useful_kinds(counts: list[int], melds: int, seven_pairs: bool) -> tuple[int, ...]:
    """Kinds whose draw lowers the shanten of a 3n+1 hand; memoised (hands recur turn to turn)."""
    cache_key = (bytes(counts), melds, seven_pairs)
    found = _USEFUL_CACHE.get(cache_key)
    if found is not None:
        return found
    shape = _Shape(counts, melds, seven_pairs)
    near: set[int] = set()
    for t in range(NUM_KINDS):
        if counts[t]:
            near.update(_NEAR[t])
    base = shape.shanten
    found = tuple(u for u in sorted(near) if counts[u] < 4 and shape.changed(u, 1) < base)
    if len(_USEFUL_CACHE) >= _USEFUL_CACHE_SIZE:
        _USEFUL_CACHE.clear()
    _USEFUL_CACHE[cache_key] = found
    return found


class _MeldInfo:
    """What one's melds contribute to the Changchun conditions (C9) and to 空听 (R8)."""

    __slots__ = ("count", "suits", "tiles", "triplet", "yaojiu")

    def __init__(self, melds: list[dict[str, Any]]) -> None:
        self.count = len(melds)
        self.tiles = [0] * NUM_KINDS
        self.suits = 0
        self.yaojiu = False
        self.triplet = False
        for meld in melds:
            if meld["kind"] != "chow":
                self.triplet = True
            for t in parse_tiles(meld["tiles"] or ""):
                self.tiles[t] += 1
                if t < 27:
                    self.suits |= 1 << (t // 9)
                self.yaojiu |= _IS_YAOJIU[t]

    def plus(self, tiles: tuple[int, ...], triplet: bool, new_meld: bool = True) -> _MeldInfo:
        """A copy with ``tiles`` added: one more meld, or tiles added to a meld (kongs)."""
        other = _MeldInfo([])
        other.count = self.count + new_meld
        other.tiles = list(self.tiles)
        other.suits = self.suits
        other.yaojiu = self.yaojiu
        other.triplet = self.triplet or triplet
        for t in tiles:
            other.tiles[t] += 1
            if t < 27:
                other.suits |= 1 << (t // 9)
            other.yaojiu |= _IS_YAOJIU[t]
        return other


def _connection(counts: list[int], tile: int) -> int:
    """Copies held of ``tile``'s neighbours (itself and suited tiles within two ranks)."""
    return sum(counts[u] for u in _NEAR[tile])


def _changchun_penalty(counts: list[int], melds: _MeldInfo) -> float:
    """Steps a hand still lacks for the C9 conditions (a shanten-like estimate)."""
    key = bytes(counts)
    penalty = 0.0
    for s in range(3):
        if not (melds.suits >> s & 1) and not any(key[9 * s : 9 * s + 9]):
            penalty += 1.0  # 三色全
    if not melds.yaojiu and not any(key[t] for t in _YAOJIU):
        penalty += 1.0  # 幺九
    if not melds.triplet and max(key) < 3 and max(key[31:34]) < 2:
        penalty += 0.5 if max(key) >= 2 else 1.0  # 一叉: a pair may still grow into a triplet
    return penalty


class HeuristicAgent(Agent):
    """Rule-based baseline (see the module docstring). It is deterministic: ``seed`` is
    accepted for the `agents.load` interface and changes nothing."""

    name = "heuristic"

    def __init__(self, seed: int | None = 0) -> None:
        self._seed = seed

    def reset(self) -> None:
        return None

    # ------------------------------------------------------------------ entry point

    def act(self, observation: dict[str, np.ndarray], info: dict[str, Any] | None = None) -> int:
        mask = observation["action_mask"]
        legal = np.flatnonzero(mask)
        if len(legal) == 0:
            raise ValueError("HeuristicAgent.act: the action mask has no legal action")
        if len(legal) == 1:
            return int(legal[0])
        if mask[A.WIN]:
            return A.WIN
        if mask[A.VIEW_BAO]:
            return A.VIEW_BAO
        if info is None or "view" not in info or "variant" not in info:
            raise ValueError(
                "HeuristicAgent.act needs info={'view': env.view(agent), 'variant': ...}; "
                "build it with agents.agent_info(env, agent)"
            )
        state = _Situation(observation, info)
        if mask[A.PASS]:
            return state.claim(mask)
        return self._turn(state, mask, legal)

    # ------------------------------------------------------------------ own turn

    def _turn(self, s: _Situation, mask: np.ndarray, legal: np.ndarray) -> int:
        if s.ready:
            for action in legal:
                if A.CONCEALED_KONG <= action < A.CHOW_LOW and s.kong_keeps_ready(int(action)):
                    return int(action)
            return int(legal[0])  # discard ids come first: the drawn tile, the only discard
        readies = [int(a) - A.READY for a in legal if A.READY <= a < A.CONCEALED_KONG]
        if readies:
            live = [(s.live_waits(t), t) for t in readies]
            count, tile = max(live)
            if count > 0:
                return A.READY + tile
        discards = [int(a) for a in legal if a < A.READY]
        best_e, _, best_tile = s.best_discard(s.counts, s.melds, discards)
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
                kind = A.action_name(action)
                tiles = SPECIAL_GROUPS[kind]
                after = s.effective_without(tiles, s.melds.plus(tiles, True))
                now = best_e if len(tiles) == 4 else s.effective(s.counts, s.melds)
                if after <= now:
                    return action
        return A.DISCARD + best_tile


class _Situation:
    """One decision: the hand, melds and unseen counts read from the observation and view."""

    def __init__(self, observation: dict[str, np.ndarray], info: dict[str, Any]) -> None:
        view = info["view"]
        seat = view["seat"]
        self.variant = info["variant"]
        self.changchun = self.variant == "changchun"
        self.seven_pairs = not self.changchun  # X3; Changchun only with allow_seven_pairs (C9)
        self.counts = [0] * NUM_KINDS
        for t in parse_tiles(view["hand"]):
            self.counts[t] += 1
        self.melds = _MeldInfo(view["melds"][seat])
        self.ready = bool(view["ready"][seat])
        self.claim_tile = parse_tiles(view["claim"]["tile"])[0] if view.get("claim") else None
        visible = observation["observation"][_VISIBLE]
        self.unseen = [max(0, 4 - int(v)) for v in visible.tolist()]

    # ------------------------------------------------------------------ evaluation

    def effective(self, counts: list[int], melds: _MeldInfo) -> float:
        shape = _Shape(counts, melds.count, self.seven_pairs)
        return shape.shanten + (_changchun_penalty(counts, melds) if self.changchun else 0.0)

    def effective_after(self, tile: int, n: int, melds: _MeldInfo) -> float:
        """Effective shanten with ``n`` copies of ``tile`` taken out of the hand."""
        counts = list(self.counts)
        counts[tile] -= n
        return self.effective(counts, melds)

    def effective_without(self, tiles: tuple[int, ...], melds: _MeldInfo) -> float:
        counts = list(self.counts)
        for t in tiles:
            counts[t] -= 1
        return self.effective(counts, melds)

    def acceptance(self, counts: list[int], melds: _MeldInfo) -> int:
        """Unseen tiles that lower the shanten of a 3n+1 hand (有效牌)."""
        unseen = self.unseen
        return sum(unseen[u] for u in _useful_kinds(counts, melds.count, self.seven_pairs))

    def best_discard(
        self,
        counts: list[int],
        melds: _MeldInfo,
        discards: list[int],
        with_acceptance: bool = False,
    ) -> tuple[float, int, int]:
        """(effective shanten, acceptance, tile) of the best discard from a 3n+2 hand; the
        acceptance is -1 when a single discard is best and ``with_acceptance`` is False.

        Ties on shanten and acceptance go, in order, to the tile with fewer unseen copies (a
        deader tile), the less connected tile, honors before terminals before middle tiles,
        the lowest kind: a fixed order, so the choice is a function of the state (which also
        makes it learnable by behaviour cloning)."""
        shape = _Shape(counts, melds.count, self.seven_pairs)
        scored = []
        for t in discards:
            e: float = shape.changed(t, -1)
            if self.changchun:
                counts[t] -= 1
                e += _changchun_penalty(counts, melds)
                counts[t] += 1
            scored.append((e, t))
        best_e = min(e for e, _ in scored)
        candidates = [t for e, t in scored if e == best_e]
        if len(candidates) == 1 and not with_acceptance:
            return best_e, -1, candidates[0]
        ranked = []
        for t in candidates:
            counts[t] -= 1
            ranked.append((self.acceptance(counts, melds), -self.unseen[t], -_connection(counts, t), -_CENTRALITY[t], -t))
            counts[t] += 1
        best = max(ranked)
        return best_e, best[0], -best[-1]

    # ------------------------------------------------------------------ ready and kongs

    def waits(self, counts: list[int], melds: _MeldInfo) -> int:
        """Winning kinds of a 3n+1 hand (R8, without 空听; Changchun filtered by C9)."""
        mask = hand.waits(counts)
        if self.seven_pairs and melds.count == 0 and sum(counts) == 13:
            mask |= hand.seven_pairs_waits(counts)
        for t in hand.wait_kinds(mask):
            if counts[t] + melds.tiles[t] >= 4 or (self.changchun and not self._changchun_wins(counts, melds, t)):
                mask &= ~(1 << t)
        return mask

    @staticmethod
    def _changchun_wins(counts: list[int], melds: _MeldInfo, tile: int) -> bool:
        counts[tile] += 1
        try:
            # a complete hand holds a pair, so a penalty of 1 or more means a suit or 幺九 is missing
            if _changchun_penalty(counts, melds) >= 1.0:
                return False
            return melds.triplet or any(d.triplets or d.pair in _DRAGONS for d in hand.decompositions(counts))
        finally:
            counts[tile] -= 1

    def live_waits(self, discard: int) -> int:
        """Unseen winning tiles after ``ready discard``."""
        counts = list(self.counts)
        counts[discard] -= 1
        return sum(self.unseen[t] for t in hand.wait_kinds(self.waits(counts, self.melds)))

    def kong_keeps_ready(self, action: int) -> bool:
        """Whether a ready player's kong leaves the hand ready (X5: else it becomes 相公)."""
        if not self.changchun:
            if A.CONCEALED_KONG <= action < A.ADDED_KONG:
                tile, n = action - A.CONCEALED_KONG, 4
            elif A.ADDED_KONG <= action < A.SPECIAL_ADD:
                tile, n = action - A.ADDED_KONG, 1
            else:
                return False
            counts = list(self.counts)
            counts[tile] -= n
            return bool(self.waits(counts, self.melds.plus((tile,) * n, True, new_meld=n == 4)))
        return True  # C7: the mask offers a ready Changchun player only kongs that keep its waits

    # ------------------------------------------------------------------ claims

    def claim(self, mask: np.ndarray) -> int:
        """Pass, or the claim that improves the hand (pong, kong, chow, 抢叉)."""
        tile = self.claim_tile
        options = [a for a in _CLAIMS if mask[a]]
        if tile is None or not options:
            return A.PASS
        if self.ready:
            return A.KONG if mask[A.KONG] and self._claimed_kong_keeps_ready(tile) else A.PASS
        now = self.effective(self.counts, self.melds)
        if mask[A.KONG] and self.effective_after(tile, 3, self.melds.plus((tile,) * 4, True)) <= now:
            return A.KONG
        scored = []
        for action in options:
            if action == A.KONG:
                continue
            used = _claim_tiles(action, tile)
            counts = list(self.counts)
            for t in used:
                counts[t] -= 1
            melds = self.melds.plus(tuple(sorted(used + (tile,))), action == A.PONG)
            discards = [t for t in range(NUM_KINDS) if counts[t]]
            e, acc, _ = self.best_discard(counts, melds, discards, with_acceptance=True)
            scored.append((e, -acc, action))
        if not scored:
            return A.PASS
        e, neg_acc, action = min(scored)
        if e < now or (e == now and -neg_acc > self.acceptance(self.counts, self.melds)):
            return action
        return A.PASS

    def _claimed_kong_keeps_ready(self, tile: int) -> bool:
        if self.changchun:
            return True  # C7: offered only when the waits stay the same
        counts = list(self.counts)
        counts[tile] -= 3
        return bool(self.waits(counts, self.melds.plus((tile,) * 4, True)))


def _claim_tiles(action: int, tile: int) -> tuple[int, ...]:
    """The tiles taken from the hand for a claim of ``tile``."""
    if action == A.PONG:
        return (tile, tile)
    if action == A.CHOW_LOW:
        return (tile + 1, tile + 2)
    if action == A.CHOW_MID:
        return (tile - 1, tile + 1)
    return (tile - 2, tile - 1)
