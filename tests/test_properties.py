"""Invariants over random play (hypothesis and seeded runs), replay and hidden information (R13).

Every step: all 136 tiles accounted for, rewards sum to zero, the mover has a legal action and
every other agent an all-zero mask; every hand ends; the same seed gives the same episode;
``replay(record())`` reproduces the results; an observer's view does not depend on what it may
not see.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mahjong_env import replay, xinjiang_v0
from mahjong_env.actions import action_id
from mahjong_env.engine.state import MeldKind, Phase
from mahjong_env.hand import seven_pairs_waits, waits
from mahjong_env.tiles import format_tiles, parse_tiles
from mahjong_env.variants import all_variants

VARIANTS = {v.name: v.env_module for v in all_variants()}
# every (variant, profile) pair (RULES.md C14): the invariants hold under each profile
PROFILE_CASES = [(v, p) for v, module in VARIANTS.items() for p in sorted(module.raw_env.config_class.profiles)]
MAX_STEPS = 2000


def tiles_accounted(game) -> int:
    total = game.wall.remaining + (1 if game.wall.gap is not None else 0)
    for seat in game.seats:
        total += sum(seat.counts) + sum(len(m.tiles) for m in seat.melds) + len(seat.river)
    return total


def play_checked(module, seed: int, policy_seed: int, num_hands: int = 1, **overrides):
    """Play one episode with random legal actions, checking every invariant at every step."""
    env = module.env(num_hands=num_hands, **overrides)
    env.reset(seed=seed)
    raw = env.unwrapped
    rng = random.Random(policy_seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    trace = []
    steps = 0
    hands_done = 0
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        totals[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        assert len(legal) > 0, "the acting agent must have a legal action"
        assert sorted(a for a in raw.game.legal_actions()) == legal.tolist()
        for other in env.agents:
            if other != agent:
                assert not env.observe(other)["action_mask"].any()
        action = int(legal[rng.randrange(len(legal))])
        trace.append((agent, action, float(obs["observation"].sum())))
        env.step(action)
        steps += 1
        assert steps < MAX_STEPS * num_hands, "a hand did not end"
        assert abs(sum(raw.rewards.values())) < 1e-9, "step rewards must sum to zero (R12)"
        game = raw.game
        if game.phase != Phase.OVER:
            assert tiles_accounted(game) == 136
            if module is VARIANTS["changchun"]:  # C13: no draw breaks into the seven stacks (the slot counted)
                assert game.wall.slots >= 14 + (game.wall.tail_draws & 1)
            for seat in game.seats:  # the engine's caches of the concealed hand (SeatState.remove/receive)
                assert seat.held == sum(seat.counts)
                expected = waits(seat.counts) | (0 if seat.melds else seven_pairs_waits(seat.counts))
                assert seat.shape_waits() == expected
        if "result" in raw.infos[agent]:
            hands_done += 1
    assert hands_done >= num_hands
    assert abs(sum(totals.values())) < 1e-9
    return raw, totals, trace


@pytest.mark.parametrize("variant,profile", PROFILE_CASES)
def test_random_play_invariants_seeded(variant, profile):
    """300 hands per variant and profile by default (the 2,000-hand run is marked slow)."""
    for seed in range(300):
        raw, totals, _ = play_checked(VARIANTS[variant], seed, seed + 1, profile=profile)
        result = raw.game.result
        for seat, agent in enumerate(raw.possible_agents):
            expected = result["deltas"][seat] + result["kong_deltas"][seat]
            assert totals[agent] == pytest.approx(expected)


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
def test_random_play_invariants_2000_hands(variant):
    for seed in range(10_000, 12_000):
        play_checked(VARIANTS[variant], seed, seed)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    variant=st.sampled_from(sorted(VARIANTS)),
    seed=st.integers(0, 2**31 - 1),
    policy_seed=st.integers(0, 2**31 - 1),
    num_hands=st.integers(1, 3),
    overrides=st.sampled_from(
        [{}, {"allow_discard_win": True}, {"allow_seven_pairs": False}, {"allow_tianhu": True}]
    ),
)
def test_hypothesis_invariants_and_replay(variant, seed, policy_seed, num_hands, overrides):
    module = VARIANTS[variant]
    if variant == "changchun" and "allow_discard_win" in overrides:
        overrides = {"allow_seven_pairs": True, "discard_all_pay": True}
    raw, _, trace = play_checked(module, seed, policy_seed, num_hands, **overrides)
    record = raw.record()
    assert len(record["hands"]) == num_hands
    results = replay(record)
    assert results == [h["result"] for h in record["hands"]]
    # the same seed and the same actions give the same episode, bit for bit
    _, _, again = play_checked(module, seed, policy_seed, num_hands, **overrides)
    assert again == trace


def test_replay_rejects_a_corrupted_record():
    raw, _, _ = play_checked(xinjiang_v0, 5, 5)
    record = raw.record()
    actions = record["hands"][0]["actions"]
    seat, _ = actions[0]
    actions[0] = [seat, "discard 1z" if "discard 1z" != actions[0][1] else "discard 2z"]
    with pytest.raises(ValueError, match="hand 0, step 0"):
        replay(record)


def _swap_hidden(hand_strings: list[str], a: int, b: int, rng: random.Random):
    """Swap one tile between seats a and b's dealt hands (two different kinds)."""
    hands = [parse_tiles(h) for h in hand_strings]
    for _ in range(50):
        i, j = rng.randrange(len(hands[a])), rng.randrange(len(hands[b]))
        if hands[a][i] != hands[b][j]:
            hands[a][i], hands[b][j] = hands[b][j], hands[a][i]
            return [format_tiles(h) for h in hands]
    return None


def _public_melds(raw, observer: int) -> tuple:
    """Every seat's melds as the table shows them (a face-down concealed kong without its tile, R7)."""
    shown = raw.config.concealed_kong_visible
    return tuple(
        tuple(
            (m.kind, tuple(m.tiles) if shown or m.kind is not MeldKind.CONCEALED_KONG or s == observer else None)
            for m in melds
        )
        for s, melds in enumerate(st.melds for st in raw.game.seats)
    )


def _observer_trace(variant_module, seed, hand, observer, **overrides):
    """Observations, masks, infos and renders of ``observer`` at its decisions, following the
    recorded actions until the first one that is not legal (or not this mover's) in this deal."""
    raw = variant_module.raw_env(**overrides)
    raw.reset(seed=seed, options={"hands": hand["hands"], "wall": hand["wall"], "dice": hand["dice"]})
    seen = []
    for seat, name in hand["actions"]:
        agent = f"player_{seat}"
        if raw.agent_selection != agent or name not in raw.legal_actions(agent):
            break
        if seat == observer:
            obs = raw.observe(agent)
            me = raw.game.seats[observer]
            seen.append(
                (
                    # the observer's private information, and the melds' public tiles (a C14
                    # declaration's tiles depend on the declarer's hand: twin deals may differ)
                    (tuple(me.counts), me.drawn, _public_melds(raw, observer)),
                    obs["observation"].tobytes(),
                    obs["action_mask"].tobytes(),
                    repr(raw.infos[agent]),
                    raw.render_view(agent),
                )
            )
        raw.step(action_id(name))
    return seen


def hidden_info_comparisons(module, seed: int, hand: dict, observer: int, rng: random.Random, **overrides) -> int:
    """R13 twin deals of one recorded hand: swap a tile between two other seats' dealt hands,
    or two deep wall tiles; ``observer``'s observation, mask, info and render must stay the
    same at each of its decisions until its own private information differs. Returns the
    number of decisions compared."""
    compared = 0
    base = _observer_trace(module, seed, hand, observer, **overrides)
    others = [s for s in range(4) if s != observer]
    a, b = rng.sample(others, 2)
    changed = []
    swapped = _swap_hidden(hand["hands"], a, b, rng)
    if swapped is not None:
        changed.append(dict(hand, hands=swapped))
    wall = parse_tiles(hand["wall"])
    # swap two deep wall tiles of different kinds (outside the stacks a bao roll reaches)
    i = len(wall) - 40
    j = next((k for k in range(i + 1, len(wall) - 26) if wall[k] != wall[i]), None)
    if j is not None:
        wall[i], wall[j] = wall[j], wall[i]
        changed.append(dict(hand, wall=format_tiles(wall)))
    for other in changed:
        trace = _observer_trace(module, seed, other, observer, **overrides)
        for mine, theirs in zip(base, trace):
            if mine[0] != theirs[0]:
                break  # the observer drew a changed tile, or a changed tile was shown in a meld
            assert mine == theirs, f"seed {seed}: player_{observer}'s view depends on hidden tiles"
            compared += 1
    return compared


@pytest.mark.parametrize("variant,profile", PROFILE_CASES)
def test_r13_hidden_information_other_hands_and_wall(variant, profile):
    """R13: deals that differ only in others' concealed tiles or in the undrawn wall give the
    observer identical observations, masks, infos and renders at each of its decisions up to
    the point where the change becomes public (a changed tile is played or drawn by it)."""
    module = VARIANTS[variant]
    rng = random.Random(13)
    compared = 0
    for seed in range(40):
        raw, _, _ = play_checked(module, seed, seed, profile=profile)
        hand = raw.record()["hands"][0]
        compared += hidden_info_comparisons(module, seed, hand, rng.randrange(4), rng, profile=profile)
    assert compared >= 200
