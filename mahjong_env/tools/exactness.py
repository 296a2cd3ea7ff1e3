"""Exactness digests: one SHA-256 per (variant, profile, policy) over everything a user can see.

``python -m mahjong_env.tools.exactness --hands 200`` plays seeded hands through the public
PettingZoo API and hashes, at every decision, the agent to move, its observation and action
mask, its reward, termination, truncation and info, and its ``view()``; at every hand's end
every agent's view, ``state()`` and ``record()``. It also hashes a `VectorMahjong` run
(observations, masks, seats, rewards, dones, infos).

These digests pin the behaviour of the engine: a change that is meant to keep the output
bit-identical (a faster implementation, a compiled core) must leave every digest unchanged.
``tests/golden/exactness.json`` holds the digests of the pure-Python core; the test suite
checks a share of them and ``--check`` checks a file in full::

    python -m mahjong_env.tools.exactness --hands 200 --write tests/golden/exactness.json
    python -m mahjong_env.tools.exactness --check tests/golden/exactness.json

Policies: ``random`` draws uniformly over the legal actions from a generator seeded with the
hand's seed; ``heuristic`` is the rule-based agent resolved through the ``mahjong_env.policies``
entry points (the environment package does not import ``agents``), seeded per seat.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from mahjong_env.adapters.policies import build_policy, decision_info
from mahjong_env.adapters.vector import VectorMahjong
from mahjong_env.variants import get_variant, variant_names

__all__ = ["POLICIES", "cases", "digest_hands", "digest_vector", "main"]

POLICIES = ("random", "heuristic")


def _json_default(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    return repr(value)


def _feed(h: Any, value: Any) -> None:
    if isinstance(value, np.ndarray):
        h.update(str(value.dtype).encode())
        h.update(repr(value.shape).encode())
        h.update(np.ascontiguousarray(value).tobytes())
    else:
        h.update(json.dumps(value, sort_keys=True, default=_json_default).encode())
    h.update(b"\x00")


def cases() -> Iterator[tuple[str, str]]:
    """Every (variant, profile) pair."""
    for name in variant_names():
        for profile in sorted(get_variant(name).raw_env.config_class.profiles):
            yield name, profile


def digest_hands(variant: str, profile: str, policy: str, seeds: range) -> str:
    """The SHA-256 of one seeded hand per seed in ``seeds`` played by ``policy`` at every seat."""
    h = hashlib.sha256()
    module = get_variant(variant).env_module
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
    for seed in seeds:
        env = module.env(profile=profile)
        env.reset(seed=seed)
        raw = env.unwrapped
        rng = np.random.default_rng(seed)
        if policy == "heuristic":
            agents = {a: build_policy("heuristic", seed=seed * 4 + i) for i, a in enumerate(env.agents)}
        for agent in env.agent_iter():
            obs, reward, termination, truncation, info = env.last()
            for value in (agent, obs["observation"], obs["action_mask"], float(reward), termination, truncation, info):
                _feed(h, value)
            if termination or truncation:
                env.step(None)
                continue
            _feed(h, raw.view(agent))
            legal = np.flatnonzero(obs["action_mask"])
            if policy == "random":
                action = int(rng.choice(legal))
            else:
                action = int(agents[agent].act(obs, decision_info(env, agent)))
            env.step(action)
        for agent in raw.possible_agents:
            _feed(h, raw.view(agent))
        _feed(h, raw.state())
        _feed(h, raw.record())
    return h.hexdigest()


def digest_vector(variant: str, profile: str, num_envs: int, steps: int, seed: int = 0) -> str:
    """The SHA-256 of a `VectorMahjong` run with random legal actions."""
    h = hashlib.sha256()
    venv = VectorMahjong(variant, num_envs=num_envs, seed=seed, profile=profile, record=True)
    rng = np.random.default_rng(seed)
    obs, masks, seats = venv.reset()
    for value in (obs, masks, seats):
        _feed(h, value)
    for _ in range(steps):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks], dtype=np.int64)
        obs, masks, seats, rewards, dones, infos = venv.step(actions)
        for value in (obs, masks, seats, rewards, dones, list(infos)):
            _feed(h, value)
    venv.close()
    return h.hexdigest()


def compute(hands: int, vector_steps: int) -> dict[str, str]:
    """Every digest, keyed ``variant/profile/policy`` and ``variant/profile/vector``."""
    out: dict[str, str] = {}
    for variant, profile in cases():
        for policy in POLICIES:
            out[f"{variant}/{profile}/{policy}"] = digest_hands(variant, profile, policy, range(hands))
        out[f"{variant}/{profile}/vector"] = digest_vector(variant, profile, 16, vector_steps)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=200, help="seeded hands per variant, profile and policy")
    parser.add_argument("--vector-steps", type=int, default=1000, help="VectorMahjong steps (16 games)")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", type=Path, help="write the digests to this JSON file")
    group.add_argument("--check", type=Path, help="compare with the digests in this JSON file")
    args = parser.parse_args(argv)
    if args.check:
        golden = json.loads(args.check.read_text())
        args.hands, args.vector_steps = golden["hands"], golden["vector_steps"]
    digests = compute(args.hands, args.vector_steps)
    if args.write:
        payload = {"hands": args.hands, "vector_steps": args.vector_steps, "digests": digests}
        args.write.parent.mkdir(parents=True, exist_ok=True)
        args.write.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n")
    if args.check:
        wrong = [key for key, value in digests.items() if golden["digests"].get(key) != value]
        for key in wrong:
            print(f"differs: {key}", file=sys.stderr)
        print(f"{len(digests) - len(wrong)} of {len(digests)} digests equal")
        return 1 if wrong else 0
    for key, value in digests.items():
        print(f"{key} {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
