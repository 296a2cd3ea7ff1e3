"""Batched play for training: the learner against a pool of opponents on `VectorMahjong`.

This module owns how training games are played; `training.ppo` owns what is learnt from them.

- `OpponentPool`: who the learner meets. Each game draws one kind for its three other seats:
  ``heuristic`` (`agents.heuristic.HeuristicAgent`), ``random``, ``snapshot`` (frozen copies
  of the learner from earlier updates, greedy as the evaluation plays them) or ``self`` (the current
  learner in every seat: pure self-play, four learner seats).
- `SelfPlayRunner`: ``num_envs`` games stepped together (`mahjong_env.adapters.vector.VectorMahjong`:
  one decision per game per step, whoever's it is; or the same games in worker processes or
  Ray actors, `mahjong_env.adapters.workers.ParallelVectorMahjong`, with ``rollout_workers > 0``).
  Learner decisions of a step go through
  one forward pass; opponents act through the `agents.Agent` protocol and see only their own
  observation and view (RULES.md R13). The runner keeps each game's episode and the actions
  taken in it so far, so its whole state (`SelfPlayRunner.state_dict`: games, seatings, scores,
  the pool, the random generators) can be saved and put back anywhere, the games rebuilt by
  `VectorMahjong.restore`. On Ray, a rollout actor lost with its node is restarted elsewhere
  (``max_restarts``) and `SelfPlayRunner.collect` plays the rollout again from its start, with
  the same draws: the rollout is the one an uninterrupted run collects.
- `Rollout`: the buffer of one collection, ``(num_steps, num_envs)`` rows; ``learner`` marks
  the rows the learner decided (only those are trained on). Rewards are credited to the
  deciding seat's decision by `mahjong_env.adapters.vector.RewardAccumulator` (raw points).
- `heuristic_dataset`: decisions of four heuristic players, for behaviour cloning
  (`training.paired` adds the analysis planes and paired rollouts).
"""

from __future__ import annotations

import copy
import logging
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from agents.base import Agent
from agents.cluster import ClusterError, last_line
from agents.heuristic import HeuristicAgent
from agents.network import PolicyNetwork, StateCritic, masked_logits
from agents.random_agent import RandomAgent
from agents.torch_agent import TorchAgent
from mahjong_env.actions import NUM_ACTIONS
from mahjong_env.adapters.vector import RewardAccumulator, VectorMahjong, seat_advantages
from mahjong_env.adapters.workers import ParallelVectorMahjong
from mahjong_env.observation import NUM_CHANNELS, STATE_SIZE
from mahjong_env.tiles import NUM_KINDS
from mahjong_env.variants import get_variant

__all__ = ["OPPONENT_KINDS", "OpponentPool", "Rollout", "SelfPlayRunner", "decision_infos", "heuristic_dataset"]

log = logging.getLogger(__name__)

OPPONENT_KINDS = ("heuristic", "random", "snapshot", "self")
RECOVERIES = 3
"""Rollouts played again in one `SelfPlayRunner.collect` after lost Ray actors, before giving up
(also how often Ray restarts each actor)."""


def decision_infos(venv: VectorMahjong | ParallelVectorMahjong, rows: list[int]) -> list[dict[str, Any]]:
    """The ``info`` each listed game's player to move gets (as `agents.agent_info`): its view
    and the variant name; one query for all rows (one round trip per worker in parallel)."""
    variant = get_variant(venv.variant).name
    config = venv.config.to_dict()
    return [{"view": view, "variant": variant, "config": config} for view in venv.views(rows)]


class OpponentPool:
    """Opponent kinds with sampling weights, plus the learner's frozen snapshots."""

    def __init__(self, weights: dict[str, float], seed: int = 0, max_snapshots: int = 5) -> None:
        unknown = sorted(set(weights) - set(OPPONENT_KINDS))
        if unknown or not any(w > 0 for w in weights.values()) or any(w < 0 for w in weights.values()):
            raise ValueError(
                f"opponent weights must be non-negative, not all zero, over {OPPONENT_KINDS}; got {weights}"
            )
        self.weights = dict(weights)
        self.rng = np.random.default_rng(seed)
        self.max_snapshots = max_snapshots
        self.fixed: dict[str, Agent] = {"heuristic": HeuristicAgent(seed=seed), "random": RandomAgent(seed=seed)}
        self.snapshots: list[TorchAgent] = []
        self._seed = seed

    def add_snapshot(self, network: PolicyNetwork) -> None:
        """Freeze a copy of ``network`` (on CPU, greedy: it plays as evaluated) as a future opponent."""
        frozen = copy.deepcopy(network).cpu().eval()
        self.snapshots.append(TorchAgent(frozen, device="cpu", greedy=True, seed=self._seed + len(self.snapshots) + 1))
        del self.snapshots[: -self.max_snapshots]

    def draw_kind(self) -> str:
        kinds = [k for k, w in self.weights.items() if w > 0 and (k != "snapshot" or self.snapshots)]
        if not kinds:  # only snapshots were asked for and none exists yet
            return "self"
        p = np.array([self.weights[k] for k in kinds], dtype=np.float64)
        return kinds[int(self.rng.choice(len(kinds), p=p / p.sum()))]

    def seating(self) -> tuple[str, list[Agent | None]]:
        """(kind, four players): None marks a learner seat; at least one seat is the learner."""
        kind = self.draw_kind()
        if kind == "self":
            return kind, [None] * 4
        learner = int(self.rng.integers(4))
        players: list[Agent | None] = []
        for seat in range(4):
            if seat == learner:
                players.append(None)
            elif kind == "snapshot":
                players.append(self.snapshots[int(self.rng.integers(len(self.snapshots)))])
            else:
                players.append(self.fixed[kind])
        return kind, players


class Rollout:
    """One collection's rows, ``(num_steps, num_envs)``; see the module docstring."""

    def __init__(self, num_steps: int, num_envs: int, central_critic: bool = False) -> None:
        t, n = num_steps, num_envs
        self.num_steps, self.num_envs = t, n
        self.obs = torch.zeros((t, n, NUM_CHANNELS, NUM_KINDS))
        self.masks = torch.zeros((t, n, NUM_ACTIONS), dtype=torch.bool)
        self.actions = torch.zeros((t, n), dtype=torch.long)
        self.logprobs = torch.zeros((t, n))
        self.values = torch.zeros((t, n))
        self.seats = torch.zeros((t, n), dtype=torch.long)
        self.learner = torch.zeros((t, n), dtype=torch.bool)
        self.states = torch.zeros((t, n, STATE_SIZE)) if central_critic else None
        self.credit = RewardAccumulator(n, t)

    def advantages(self, gamma: float, lam: float, reward_scale: float) -> tuple[torch.Tensor, torch.Tensor]:
        """GAE over each seat's own decisions (`mahjong_env.adapters.vector.seat_advantages`), rewards
        multiplied by ``reward_scale``; rows the rollout ended on bootstrap their own value."""
        credit = self.credit
        raw = credit.rewards.copy()
        credit.rewards *= reward_scale
        try:
            adv, ret = seat_advantages(self.values.numpy(), credit, gamma, lam)
        finally:
            credit.rewards[:] = raw
        return torch.from_numpy(adv), torch.from_numpy(ret)


class SelfPlayRunner:
    """``num_envs`` games of ``variant`` where the learner plays the seats `OpponentPool` gives it."""

    def __init__(
        self,
        variant: str,
        num_envs: int,
        seed: int,
        pool: OpponentPool,
        rollout_workers: int = 0,
        backend: str = "local",
        **rule_overrides: Any,
    ) -> None:
        self._lost: tuple[type[BaseException], ...] = ()  # what a lost Ray actor raises
        if rollout_workers > 0:  # the same games (same seeds) in worker processes or Ray actors
            restarts = {"max_restarts": RECOVERIES} if backend == "ray" else {}
            self.venv: Any = ParallelVectorMahjong(
                variant, num_envs, rollout_workers, seed=seed, backend=backend, **restarts, **rule_overrides
            )
            if backend == "ray":
                from ray.exceptions import RayActorError

                self._lost = (RayActorError,)
        else:
            self.venv = VectorMahjong(variant, num_envs, seed=seed, **rule_overrides)
        self.pool = pool
        obs, masks, seats = self.venv.reset()
        self.obs, self.masks, self.seats = obs.copy(), masks.copy(), seats.copy()
        self.tables = [pool.seating() for _ in range(num_envs)]
        self.scores = np.zeros((num_envs, 4))
        self.decisions = 0
        self.episodes = [0] * num_envs
        """Each game's episode (counting from 0, as `VectorMahjong.restore` takes it)."""
        self.played: list[list[int]] = [[] for _ in range(num_envs)]
        """Each game's actions in its current episode."""
        self.restore_timeout: float | None = None
        """Seconds to wait for a restarted Ray actor (None: as long as it takes)."""

    def collect(
        self,
        network: PolicyNetwork,
        rollout: Rollout,
        device: torch.device,
        critic: StateCritic | None = None,
    ) -> list[dict[str, Any]]:
        """Play ``rollout.num_steps`` batched steps, filling ``rollout``; returns one dict per
        finished game: ``{"kind", "returns": learner seats' points, "winner_is_learner"}``.
        A Ray actor lost meanwhile is restarted and the rollout played again from its start
        (module docstring), at most `RECOVERIES` times."""
        start = self.state_dict() if self._lost else {}  # where to play again from (only Ray's actors get lost)
        attempt = 0
        while True:
            try:
                if attempt:
                    self.load_state_dict(start, network)
                return self._collect(network, rollout, device, critic)
            except self._lost as error:
                attempt += 1
                if attempt > RECOVERIES:
                    raise
                log.warning(
                    "a rollout worker was lost (%s): it is restarted and this rollout played again from its start",
                    last_line(error)[:300],
                )

    def _collect(
        self, network: PolicyNetwork, rollout: Rollout, device: torch.device, critic: StateCritic | None
    ) -> list[dict[str, Any]]:
        venv, n = self.venv, self.venv.num_envs
        rollout.credit.start_rollout()
        finished: list[dict[str, Any]] = []
        rows = np.arange(n)
        for t in range(rollout.num_steps):
            seats = self.seats
            learner = np.array([self.tables[i][1][seats[i]] is None for i in rows])
            rollout.obs[t] = torch.from_numpy(self.obs)
            rollout.masks[t] = torch.from_numpy(self.masks.astype(bool))
            rollout.seats[t] = torch.from_numpy(seats)
            rollout.learner[t] = torch.from_numpy(learner)
            rollout.credit.decide(t, seats)
            actions = np.zeros(n, dtype=np.int64)
            mine = np.flatnonzero(learner)
            if len(mine):
                with torch.no_grad():
                    obs = rollout.obs[t, mine].to(device)
                    logits, value = network(obs)
                    dist = torch.distributions.Categorical(
                        logits=masked_logits(logits, rollout.masks[t, mine].to(device))
                    )
                    action = dist.sample()
                    if critic is not None:
                        assert rollout.states is not None
                        rollout.states[t, mine] = torch.from_numpy(venv.states(mine))
                        value = critic(rollout.states[t, mine].to(device), rollout.seats[t, mine].to(device))
                rollout.actions[t, mine] = action.cpu()
                rollout.logprobs[t, mine] = dist.log_prob(action).cpu()
                rollout.values[t, mine] = value.cpu()
                actions[mine] = action.cpu().numpy()
            self._opponents_act(np.flatnonzero(~learner), actions)
            obs, masks, seats, rewards, dones, infos = venv.step(actions)
            self.decisions += n
            for i, action in enumerate(actions.tolist()):
                self.played[i].append(action)
            rollout.credit.receive(rewards, dones)
            self.scores += rewards
            for i in np.flatnonzero(dones):
                kind, players = self.tables[i]
                mine_seats = [s for s in range(4) if players[s] is None]
                winner = infos[i]["result"]["winner"]
                finished.append(
                    {
                        "kind": kind,
                        "returns": [float(self.scores[i, s]) for s in mine_seats],
                        "winner_is_learner": winner is not None and winner in mine_seats,
                    }
                )
                self.scores[i] = 0.0
                self.tables[i] = self.pool.seating()
                self.episodes[i] += 1
                self.played[i] = []
            self.obs, self.masks, self.seats = obs.copy(), masks.copy(), seats.copy()
        return finished

    def close(self) -> None:
        """Stop the rollout workers, if any."""
        self.venv.close()

    def state_dict(self) -> dict[str, Any]:
        """Everything the next rollouts depend on, in plain values and tensors (``torch.save``
        and ``torch.load(weights_only=True)`` take it): each game's episode and actions, the
        seatings, scores, the pool (its generator, its snapshots' weights) and the generators of
        the opponents and of torch (the learner's sampling)."""
        pool = self.pool
        frozen: list[TorchAgent] = []  # every snapshot in the pool or still seated, once

        def ref(agent: Agent | None) -> str | int | None:
            if agent is None:
                return None
            for kind, fixed in pool.fixed.items():
                if agent is fixed:
                    return kind
            for k, known in enumerate(frozen):
                if agent is known:
                    return k
            assert isinstance(agent, TorchAgent)
            frozen.append(agent)
            return len(frozen) - 1

        return {
            "episodes": list(self.episodes),
            "played": [list(actions) for actions in self.played],
            "pool_snapshots": [ref(agent) for agent in pool.snapshots],
            "tables": [(kind, [ref(player) for player in players]) for kind, players in self.tables],
            "snapshots": [
                {"weights": {k: v.detach().clone() for k, v in a.network.state_dict().items()}, "rng": _rng(a)}
                for a in frozen
            ],
            "scores": self.scores.tolist(),
            "decisions": self.decisions,
            "pool_rng": pool.rng.bit_generator.state,
            "fixed_rngs": {kind: _rng(agent) for kind, agent in pool.fixed.items() if _rng(agent) is not None},
            "torch_rng": torch.get_rng_state(),
        }

    def load_state_dict(self, state: dict[str, Any], network: PolicyNetwork) -> None:
        """Put back a `state_dict`: the games are rebuilt where they were (by the workers, on
        Ray after restarting any that was lost), the snapshots from their weights on a copy of
        ``network`` (the learner, whose shape they share)."""
        pool = self.pool
        frozen = []
        for entry in state["snapshots"]:
            copy_ = copy.deepcopy(network).cpu().eval()
            copy_.load_state_dict(entry["weights"])
            agent = TorchAgent(copy_, device="cpu", greedy=True)
            agent.rng.bit_generator.state = entry["rng"]
            frozen.append(agent)

        def agent(ref: str | int | None) -> Agent | None:
            if ref is None:
                return None
            return pool.fixed[ref] if isinstance(ref, str) else frozen[ref]

        pool.snapshots = [frozen[k] for k in state["pool_snapshots"]]
        pool.rng.bit_generator.state = state["pool_rng"]
        for kind, rng in state["fixed_rngs"].items():
            pool.fixed[kind].rng.bit_generator.state = rng  # type: ignore[attr-defined]
        self.tables = [(kind, [agent(ref) for ref in players]) for kind, players in state["tables"]]
        self.scores = np.array(state["scores"], dtype=np.float64)
        self.decisions = int(state["decisions"])
        self.episodes = [int(e) for e in state["episodes"]]
        self.played = [[int(a) for a in actions] for actions in state["played"]]
        torch.set_rng_state(state["torch_rng"])
        if self._lost:  # Ray actors
            obs, masks, seats = self._restore_actors()
        else:
            obs, masks, seats = self.venv.restore(self.episodes, self.played)
        self.obs, self.masks, self.seats = obs.copy(), masks.copy(), seats.copy()

    def _restore_actors(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`ParallelVectorMahjong.restore` on Ray, waiting (up to ``restore_timeout``) for actors
        that are still restarting."""
        from ray.exceptions import ActorUnavailableError, GetTimeoutError

        limit = math.inf if self.restore_timeout is None else self.restore_timeout
        deadline = time.monotonic() + limit
        while True:
            try:
                left = None if self.restore_timeout is None else max(0.0, deadline - time.monotonic())
                return self.venv.restore(self.episodes, self.played, timeout=left)
            except ActorUnavailableError:  # restarting: ask again
                if time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            except GetTimeoutError:
                break
        raise ClusterError(
            f"no free CPU to restart a lost rollout worker in {limit:g} s: add a node (ray start --address ...) "
            "or free one, then resume the run"
        )

    def _opponents_act(self, rows: np.ndarray, actions: np.ndarray) -> None:
        """Fill ``actions`` for opponent rows; torch snapshots are batched per snapshot."""
        batches: dict[int, list[int]] = {}
        plain: list[int] = []
        for i in rows:
            agent = self.tables[i][1][self.seats[i]]
            assert agent is not None
            if isinstance(agent, TorchAgent):
                batches.setdefault(id(agent), []).append(int(i))
            else:
                plain.append(int(i))
        for i, info in zip(plain, decision_infos(self.venv, plain) if plain else []):
            observation = {"observation": self.obs[i], "action_mask": self.masks[i]}
            actions[i] = self.tables[i][1][self.seats[i]].act(observation, info)  # type: ignore[union-attr]
        for group in batches.values():
            agent = self.tables[group[0]][1][self.seats[group[0]]]
            observations = [{"observation": self.obs[i], "action_mask": self.masks[i]} for i in group]
            actions[group] = agent.act_batch(observations)  # type: ignore[union-attr]


def _rng(agent: Any) -> dict[str, Any] | None:
    """The state of an agent's generator (``agent.rng``), None when it has none."""
    rng = getattr(agent, "rng", None)
    return rng.bit_generator.state if isinstance(rng, np.random.Generator) else None


def heuristic_dataset(
    variant: str,
    decisions: int,
    seed: int,
    num_envs: int = 32,
    explore: float = 0.0,
    progress: Callable[[int], None] | None = None,
    **rule_overrides: Any,
) -> dict[str, np.ndarray]:
    """Plain behaviour-cloning rows of four `HeuristicAgent` players: about ``decisions`` rows
    (decisions with more than one legal action), without analysis planes or rollouts.

    With probability ``explore`` a decision is played by a uniformly random legal action
    instead, so the data also covers states the heuristic would not reach; the label is always
    the heuristic's choice. The arrays are those of `training.paired.paired_dataset`:
    ``planes`` (uint8, the integer tile planes), ``scalars`` (float32, the scalar rows),
    ``masks``, ``actions``, ``kinds``, ``returns`` (float32: the deciding seat's points from
    that decision to the end of its hand, never cut short: rows of unfinished hands are
    dropped) and ``games`` (a hand id, for splitting by hand).
    """
    from training.paired import paired_dataset

    return paired_dataset(
        variant,
        decisions,
        seed,
        num_envs=num_envs,
        explore=explore,
        analysis=False,
        progress=progress,
        **rule_overrides,
    )
