"""Helpers for rule scenario tests: hand-built deals played by action name.

Import it from a test module in ``tests/`` as ``from scenario import deal, act, ...``.

A scenario builds its deal in tile notation, then plays actions by name::

    env = deal(xinjiang_v0, ["123m…" (14 tiles, the dealer), "…", "…", "…"],
               wall="5m7z",          # head of the wall, in draw order
               tail="9s",            # tiles the replacement draws take, first one first
               allow_discard_win=True)
    act(env, "player_0: discard 5m")    # asserts player_0 is the one to move
    assert legal(env) == {"pong", "pass"}
    assert result(env)["winner"] == 2

Wall building: ``wall`` is the head of the wall in draw order, ``tail`` the tiles taken by
replacement draws (杠后补牌, R4) in the order they are taken, so ``tail``'s first tile is the
wall's LAST tile; ``last`` (draw order) goes just before the tail, so with no kong the final
head draws (Xinjiang 分张, X4) are ``last``'s tiles in order. Every tile of the 136 not named in
the hands, ``wall``, ``last`` or ``tail`` fills the middle, sorted by tile index (so the filler's
order is fixed and readable). ``wall`` may also be given as all the tiles outside the hands, in
which case nothing is filled.

Quiet seats: a hand given as None is filled with a "quiet" hand (`quiet_hand`): distinct
kinds only, suited ranks at least 3 apart, at most three winds and two dragons, never all of
1m1p1s or 9m9p9s. Such a hand can never pong, kong, chow, win, declare ready or declare a
Changchun special group, as long as it discards what it draws (``"discard drawn"``). The
dealer is the seat of the 14-tile hand, or ``dealer`` (a None dealer seat gets 14 tiles).

Action names are the env's (``"discard 5m"``, ``"pong"``) plus ``"discard drawn"``, the
discard of the mover's drawn tile.

Stepping helpers: `tsumogiri` (a seat discards what it drew), `step_on` (one neutral step: pass
where offered, else discard the drawn tile), `run_until` and `play_to_end` built on it, and
`safe_discard` (a tile no given hand can claim).

Changchun deals: `cc` deals a Changchun hand; `IDLE` hands never claim, declare or win;
`CC_DEALER` is a dealer hand that opens with ``discard 9m``; `bao_deal` places the bao
indicator where the dice will find it (`indicator_index`, `wall_with`).

Reward tracking: every step made through `act`/`play` adds ``env.rewards`` (PettingZoo's
per-step rewards) to a running total per agent (`totals`), asserts the step is zero-sum (R12)
and records the hand results (`results`). The raw env's own ``_cumulative_rewards`` is reset
for an agent each time that agent acts (PettingZoo convention), so the totals are kept here.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from types import ModuleType
from typing import Any

from mahjong_env.tiles import NUM_KINDS, format_tiles, parse_tiles, tile_index

__all__ = [
    "AGENTS",
    "CC_DEALER",
    "IDLE",
    "KONG_BASE",
    "SPECIALS",
    "WAIT_1Z_4Z",
    "XIGANG_WAIT_3M_6M",
    "act",
    "bao_deal",
    "cc",
    "deal",
    "deal_options",
    "fans",
    "fill_hands",
    "fill_wall",
    "full_wall",
    "hand_of",
    "indicator_index",
    "legal",
    "mover",
    "only_discards_or_ready",
    "phase",
    "play",
    "play_out",
    "play_to_end",
    "quiet_hand",
    "result",
    "results",
    "rewards_list",
    "run_until",
    "safe_discard",
    "seat_of",
    "step_log",
    "step_on",
    "totals",
    "tsumogiri",
    "view",
    "wall_with",
]

AGENTS = tuple(f"player_{i}" for i in range(4))


class _Track:
    __slots__ = ("log", "results", "totals")

    def __init__(self) -> None:
        self.totals = {a: 0.0 for a in AGENTS}
        self.log: list[tuple[str, str, dict[str, float]]] = []  # (agent, action, rewards)
        self.results: list[dict[str, Any]] = []


_TRACKS: weakref.WeakKeyDictionary[Any, _Track] = weakref.WeakKeyDictionary()


def _raw(env: Any) -> Any:
    return getattr(env, "unwrapped", env)


def _track(env: Any) -> _Track:
    raw = _raw(env)
    track = _TRACKS.get(raw)
    if track is None:
        track = _TRACKS[raw] = _Track()
    return track


# ---------------------------------------------------------------------- building deals


def _rank_sets() -> list[tuple[int, ...]]:
    """Rank sets 0..8 of one suit with every two ranks at least 3 apart, largest first."""
    out: list[tuple[int, ...]] = []
    for a in range(9):
        out.append((a,))
        for b in range(a + 3, 9):
            out.append((a, b))
            for c in range(b + 3, 9):
                out.append((a, b, c))
    out.sort(key=lambda r: (-len(r), r))
    return out + [()]


_RANK_SETS = _rank_sets()
_HONOR_SETS = sorted(
    (
        tuple(h for h in range(7) if mask >> h & 1)
        for mask in range(128)
        if (mask & 0b1111).bit_count() <= 3 and (mask >> 4).bit_count() <= 2
    ),
    key=lambda h: (-len(h), h),
)


def quiet_hand(available: list[int], size: int = 13) -> list[int]:
    """A quiet hand of ``size`` tiles (13 or 14) from ``available`` (34 counts, not changed).

    Prefers the kinds with the most copies left (a deterministic depth-first search). See the
    module docstring; raises ValueError when the remaining tiles do not allow one.
    """

    def options(groups: list[list[int]]) -> list[list[int]]:
        usable = [k for k in groups if all(available[t] for t in k)]
        return sorted(usable, key=lambda k: (-len(k), -sum(available[t] for t in k), k))

    suits = [options([[9 * suit + r for r in rs] for rs in _RANK_SETS]) for suit in range(3)]
    honors = options([[27 + h for h in hs] for hs in _HONOR_SETS])

    def search(suit: int, need: int, chosen: list[int]) -> list[int] | None:
        if suit == 3:
            if need or {0, 9, 18} <= set(chosen) or {8, 17, 26} <= set(chosen):
                return None
            return chosen
        for group in suits[suit]:
            if len(group) <= need and need - len(group) <= 3 * (2 - suit):
                found = search(suit + 1, need - len(group), chosen + group)
                if found is not None:
                    return found
        return None

    for h in honors:
        found = search(0, size - len(h), list(h))
        if found is not None:
            return sorted(found)
    raise ValueError("no quiet hand can be built from the remaining tiles; write this seat's hand explicitly")


def fill_hands(
    hands: list[str | None],
    wall: str | None = None,
    *,
    last: str | None = None,
    tail: str | None = None,
    dealer: int | None = None,
) -> list[str]:
    """The four hands with every None seat replaced by a `quiet_hand` (14 tiles for the dealer)."""
    if len(hands) != 4:
        raise ValueError("give four hands, one per seat (None for a quiet seat)")
    if dealer is None:
        fourteen = [s for s, h in enumerate(hands) if h is not None and len(parse_tiles(h)) == 14]
        dealer = fourteen[0] if fourteen else None
    available = [4] * NUM_KINDS
    for text in [h for h in hands if h is not None] + [wall or "", last or "", tail or ""]:
        for t in parse_tiles(text):
            available[t] -= 1
    if min(available) < 0:
        over = [t for t in range(NUM_KINDS) if available[t] < 0]
        raise ValueError(f"more than four copies of {format_tiles(over)} in the hands, wall, last and tail")
    out = list(hands)
    order = sorted(range(4), key=lambda s: s != dealer)  # the 14-tile quiet hand is the hardest
    for s in order:
        if out[s] is None:
            if dealer is None:
                raise ValueError("name the dealer (or give its 14-tile hand) to fill quiet seats")
            kinds = quiet_hand(available, 14 if s == dealer else 13)
            for t in kinds:
                available[t] -= 1
            out[s] = format_tiles(kinds)
    return out  # type: ignore[return-value]


def fill_wall(
    hands: Iterable[str], wall: str | None = None, tail: str | None = None, last: str | None = None
) -> str:
    """The full wall string (draw order): ``wall`` + sorted filler + ``last`` + reversed ``tail``.

    Raises ValueError if the hands and these parts hold more than four copies of a kind.
    """
    used = [0] * NUM_KINDS
    head = parse_tiles(wall or "")
    end = parse_tiles(last or "")
    back = parse_tiles(tail or "")
    for t in [t for h in hands for t in parse_tiles(h)] + head + end + back:
        used[t] += 1
    over = [t for t in range(NUM_KINDS) if used[t] > 4]
    if over:
        raise ValueError(f"more than four copies of {format_tiles(over)} in the hands, wall, last and tail")
    filler = [t for t in range(NUM_KINDS) for _ in range(4 - used[t])]
    return format_tiles(head + filler + end + back[::-1])


def deal_options(
    hands: list[str | None],
    wall: str | None = None,
    *,
    tail: str | None = None,
    last: str | None = None,
    dealer: int | None = None,
    dice: list[int] | None = None,
    silver: list[float] | None = None,
) -> dict[str, Any]:
    """Reset options for a custom deal: the hands (quiet seats filled) and the filled wall."""
    full = fill_hands(hands, wall, last=last, tail=tail, dealer=dealer)
    options: dict[str, Any] = {"hands": full, "wall": fill_wall(full, wall, tail, last)}
    if dealer is not None:
        options["dealer"] = dealer
    if dice is not None:
        options["dice"] = list(dice)
    if silver is not None:
        options["silver"] = list(silver)
    return options


def deal(
    env_module: ModuleType,
    hands: list[str | None],
    wall: str | None = None,
    dealer: int | None = None,
    dice: list[int] | None = None,
    *,
    tail: str | None = None,
    last: str | None = None,
    seed: int = 0,
    silver: list[float] | None = None,
    num_hands: int = 1,
    wrapped: bool = False,
    **rule_overrides: Any,
) -> Any:
    """A reset env of ``env_module`` (``xinjiang_v0`` / ``changchun_v0``) with a custom deal.

    ``hands`` are the four tile strings by seat (the dealer's holds 14; None: a quiet seat);
    ``wall`` is the head of the wall in draw order, ``last`` the final head draws and ``tail``
    the replacement draws in the order taken (see the module docstring); the rest of the 136
    tiles is filled in sorted. ``rule_overrides`` are rule configuration fields
    (``allow_discard_win=True``) or env keywords (``illegal_action``, ``render_mode``).
    Returns the raw env, or the wrapped ``env()`` when ``wrapped`` is True.
    """
    factory = env_module.env if wrapped else env_module.raw_env
    env = factory(num_hands=num_hands, **rule_overrides)
    options = deal_options(hands, wall, tail=tail, last=last, dealer=dealer, dice=dice, silver=silver)
    env.reset(seed=seed, options=options)
    _TRACKS[_raw(env)] = _Track()
    return env


# ---------------------------------------------------------------------- playing


def mover(env: Any) -> str:
    """The agent to move (``agent_selection``)."""
    return env.agent_selection


def seat_of(agent: str) -> int:
    return int(agent.rsplit("_", 1)[1])


def legal(env: Any, agent: str | None = None) -> set[str]:
    """Legal action names of ``agent`` (default: the mover); empty if it is not deciding."""
    return set(_raw(env).legal_actions(agent or mover(env)))


def hand_of(env: Any, agent: str) -> str:
    """``agent``'s concealed tiles, sorted, in notation (from its own view)."""
    return _raw(env).view(agent)["hand"]


def act(env: Any, action: str) -> dict[str, float]:
    """Step by action name; ``"player_2: pong"`` also asserts that player_2 is the mover.

    Returns the step's rewards (``env.rewards``), adds them to `totals` and asserts they sum to
    zero (R12). Illegal actions raise the env's ValueError (nothing is recorded then).
    """
    from mahjong_env.actions import action_id

    agent, sep, name = action.partition(":")
    if sep:
        agent = agent.strip()
        assert mover(env) == agent, (
            f"expected {agent} to move for {name.strip()!r}, but {mover(env)} is to move "
            f"(legal: {sorted(legal(env))})"
        )
    else:
        name = action
    actor = mover(env)
    name = name.strip()
    if name == "discard drawn":
        drawn = _raw(env).view(actor)["drawn"]
        assert drawn is not None, f"{actor} has no drawn tile to discard"
        name = f"discard {drawn}"
    env.step(action_id(name))
    rewards = {a: float(env.rewards[a]) for a in AGENTS}
    assert abs(sum(rewards.values())) < 1e-9, f"step {actor}: {name} is not zero-sum: {rewards}"
    track = _track(env)
    for a in AGENTS:
        track.totals[a] += rewards[a]
    track.log.append((actor, name, rewards))
    info_result = env.infos[actor].get("result")  # the actor's info: cleared by its step, so set by it
    if info_result is not None:
        track.results.append(info_result)
    return rewards


def play(env: Any, *actions: str) -> dict[str, float]:
    """`act` each action in order; returns the rewards of the last step."""
    rewards: dict[str, float] = {}
    for action in actions:
        rewards = act(env, action)
    return rewards


def play_out(env: Any, max_steps: int = 2000) -> list[dict[str, Any]]:
    """Play to the end of the episode taking no win, kong or ready: ``pass`` when offered, else
    the first legal discard, else the first legal action. Returns `results`."""
    raw = _raw(env)
    steps = 0
    while not all(raw.terminations.values()):
        options = sorted(raw.legal_actions(mover(env)))
        if not options:
            break
        if "pass" in options:
            choice = "pass"
        else:
            discards = [o for o in options if o.startswith("discard ")]
            choice = discards[0] if discards else options[0]
        act(env, choice)
        steps += 1
        assert steps < max_steps, "episode did not end"
    return results(env)


# ---------------------------------------------------------------------- reading outcomes


def result(env: Any) -> dict[str, Any] | None:
    """The latest hand result seen through `act` (``info["result"]``), or None."""
    track = _track(env)
    if track.results:
        return track.results[-1]
    for a in AGENTS:
        found = env.infos[a].get("result")
        if found is not None:
            return found
    return None


def results(env: Any) -> list[dict[str, Any]]:
    """Every hand result seen through `act`, in order."""
    return list(_track(env).results)


def totals(env: Any) -> dict[str, float]:
    """Sum of every step's rewards per agent since `deal`."""
    return dict(_track(env).totals)


def step_log(env: Any) -> list[tuple[str, str, dict[str, float]]]:
    """(agent, action, rewards) of every step made through `act`."""
    return list(_track(env).log)


def rewards_list(rewards: dict[str, float]) -> list[float]:
    """A step's rewards by seat."""
    return [rewards[a] for a in AGENTS]


def fans(res: dict[str, Any]) -> dict[str, int]:
    """A result's fans as ``{name: fan}``."""
    return {name: fan for name, fan in res["fans"]}


# ---------------------------------------------------------------------- stepping


def view(env: Any, seat: int) -> dict[str, Any]:
    """Seat ``seat``'s view."""
    return _raw(env).view(AGENTS[seat])


def phase(env: Any) -> str:
    """The phase as the mover sees it."""
    return _raw(env).view(mover(env))["phase"]


def only_discards_or_ready(names: set[str]) -> bool:
    return all(n.startswith(("discard ", "ready ")) for n in names)


def tsumogiri(env: Any, seat: int) -> dict[str, float]:
    """``seat`` discards the tile it just drew."""
    drawn = view(env, seat)["drawn"]
    assert drawn is not None, f"player_{seat} has no drawn tile"
    return act(env, f"player_{seat}: discard {drawn}")


def step_on(env: Any) -> None:
    """One neutral step: pass where offered (claims, bao view, 对宝), else discard the drawn
    tile (the lowest tile on the dealer's first turn)."""
    names = legal(env)
    assert names, "the hand ended"
    if "pass" in names:
        act(env, "pass")
        return
    drawn = _raw(env).view(mover(env))["drawn"]
    if drawn is not None and f"discard {drawn}" in names:
        act(env, f"discard {drawn}")
    else:
        act(env, min((n for n in names if n.startswith("discard ")), key=lambda n: tile_index(n[8:])))


def run_until(env: Any, seat: int, *, max_steps: int = 400) -> None:
    """`step_on` until ``seat`` is to move on its own turn."""
    for _ in range(max_steps):
        if mover(env) == AGENTS[seat] and phase(env) == "turn":
            return
        step_on(env)
    raise AssertionError("never reached")


def play_to_end(env: Any, *, max_steps: int = 400) -> dict[str, Any] | None:
    """`step_on` until the hand ends; returns the result."""
    for _ in range(max_steps):
        if all(env.terminations.values()):
            return result(env)
        step_on(env)
    raise AssertionError("the hand did not end")


def safe_discard(env: Any, seat: int, against: str) -> str:
    """A tile of ``seat``'s hand that no tile of ``against`` can pong, chow or win with: a
    different kind, and not a suited tile within two ranks of one in ``against``."""
    theirs = parse_tiles(against)
    for t in parse_tiles(view(env, seat)["hand"]):
        if all(t != x and not (t < 27 and x < 27 and t // 9 == x // 9 and abs(t - x) <= 2) for x in theirs):
            return format_tiles([t])
    raise AssertionError("no safe discard")


# ---------------------------------------------------------------------- Changchun deals

IDLE = ("147m258p369s1256z", "258m369p147s1347z", "369m147p258s2345z")
"""Changchun hands with no pair, no two tiles within a chow's reach and no complete special
group: a seat holding one never claims, declares or wins (in the seed profile)."""
CC_DEALER = "3569m369p34s13456z"
"""A Changchun dealer hand that opens with ``discard 9m``, which nobody dealt `IDLE` claims."""
WAIT_1Z_4Z = "222m345p678s11z44z"
"""Ready once it discards what it draws: waits on 1z and 4z."""
XIGANG_WAIT_3M_6M = "567z45m123p789s99p"
"""Declares 喜杠, then ready with what it draws: waits on 3m and 6m (two-sided)."""
KONG_BASE = "479m58p479s23z"
"""Ten tiles that never meet the kong tiles of the C12 scenarios."""
SPECIALS = {"special_winds", "special_dragons", "special_ones", "special_nines"}
"""C5's declaration actions."""


def cc(hands: list[str | None], wall: str | None = None, **kwargs: Any) -> Any:
    """A Changchun raw env with a hand-built deal (`deal`)."""
    from mahjong_env import changchun_v0

    return deal(changchun_v0, hands, wall, **kwargs)


def full_wall(hands: list[str], wall: str | None = None, tail: str | None = None) -> list[int]:
    """The wall `deal` builds, as tile indices in draw order."""
    return parse_tiles(fill_wall(hands, wall, tail))


def indicator_index(s: int, tail_draws: int = 0, wall_size: int = 83) -> int:
    """R4/C8: absolute wall index of the upper tile of the s-th stack from the tail, with
    ``tail_draws`` replacement draws made and no head draw reaching the tail."""
    return wall_size - tail_draws - (tail_draws % 2) - 2 * s


def wall_with(hands: list[str], wall: str = "", tail: str = "", at: dict[int, str] | None = None) -> str:
    """The whole wall (draw order) as `fill_wall` builds it, with the tile named in ``at``
    moved to each index (swapped with a filler copy of that tile)."""
    tiles = full_wall(hands, wall, tail)
    fixed = set(range(len(parse_tiles(wall)))) | set(range(len(tiles) - len(parse_tiles(tail)), len(tiles)))
    fixed |= set((at or {}).keys())
    for index, name in (at or {}).items():
        t = tile_index(name)
        if tiles[index] != t:
            j = next(i for i in range(len(tiles)) if i not in fixed and tiles[i] == t)
            tiles[index], tiles[j] = tiles[j], tiles[index]
    return format_tiles(tiles)


def bao_deal(
    hand1: str,
    head: str,
    indicator: str,
    dice: list[int],
    tail: str = "",
    others: tuple[str, str] = (IDLE[0], IDLE[2]),
    **kwargs: Any,
) -> Any:
    """A Changchun deal of `CC_DEALER`, ``hand1`` and ``others`` for seats 2 and 3, the wall's
    head ``head``, and ``indicator`` where the first roll, ``dice[0]``, sets the bao aside (C8)."""
    hands = [CC_DEALER, hand1, others[0], others[1]]
    at = {indicator_index(dice[0]): indicator}
    return cc(hands, wall=wall_with(hands, head, tail, at), dice=dice, **kwargs)
