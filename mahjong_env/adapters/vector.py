"""Many games in one process behind one batched interface, for fast self-play.

`VectorMahjong` drives ``num_envs`` `Game` objects directly (no PettingZoo layer). Every game
always has exactly one player to move, so a batch holds exactly one decision per game and one
forward pass of a policy serves all of them::

    from mahjong_env.adapters.vector import VectorMahjong

    venv = VectorMahjong("changchun", num_envs=64, seed=1)
    obs, masks, seats = venv.reset()            # (64, C, 34) f32, (64, 182) i8, (64,) i64
    for _ in range(1000):
        actions = policy(obs, masks)            # one batched call, any seat
        obs, masks, seats, rewards, dones, infos = venv.step(actions)

- ``obs[i]`` is the observation of ``seats[i]``, the player to move in game ``i``, exactly as
  the AEC env's ``observe(f"player_{seats[i]}")``; ``masks[i]`` its action mask.
- ``rewards[i, s]``: seat ``s``'s points change at this step (R12; zero-sum in every row).
  A reward usually belongs to an earlier decision of that seat: `RewardAccumulator` credits it.
- ``dones[i]``: game ``i``'s episode (``num_hands`` hands) ended at this step; the game was
  reset at once to its next episode and ``obs[i]``/``masks[i]``/``seats[i]`` already describe
  the new episode's first decision.
- ``infos[i]``: ``{}`` for most games; when a hand ends, ``{"result": ..., "hand_index": h,
  "episode": k, "seed": ...}`` (API.md "Results"), plus ``"record"`` (API.md "Game records")
  when the episode ended and the env was made with ``record=True``.

Seeding: game ``i``'s ``k``-th episode (k = 0, 1, ... counting auto-resets) is the AEC env's
episode ``reset(seed=episode_seed(seed, i, k))``: same dealer, walls, dice, observations,
masks, rewards and results for the same actions. `episode_seed` hashes ``(seed, i, k)``
through ``numpy.random.SeedSequence`` so that neighbouring base seeds share no episodes.

`VectorMahjong.views` gives the movers' readable views (API.md ``view()``) for rule-based
agents and `VectorMahjong.states` the privileged ``state()`` arrays for centralised critics.

The arrays returned by `reset`/`step` are the env's own buffers, overwritten by the next
call: copy what you keep (a rollout buffer's ``buf[t] = obs`` does). Observations are
encoded straight into them by `mahjong_env.observation.encode_batch` (one numpy call per kind
of row for the whole batch) and the masks are set with one indexed write.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mahjong_env import actions as A
from mahjong_env.engine.state import Phase
from mahjong_env.observation import NUM_CHANNELS, STATE_SIZE, ObservationEncoder, encode_batch, encode_state
from mahjong_env.tiles import NUM_KINDS
from mahjong_env.variants import build_table, get_variant
from mahjong_env.view import table_view
from mahjong_env.wall import first_dealer, shuffled_deal

__all__ = ["VectorMahjong", "RewardAccumulator", "batch_actions", "episode_seed", "seat_advantages"]

_OBS_SHAPE = (NUM_CHANNELS, NUM_KINDS)
_OVER = Phase.OVER  # a module constant: an enum member read costs ~90 ns on Python 3.11


def episode_seed(seed: int, env_index: int, episode: int) -> int:
    """The AEC seed of game ``env_index``'s ``episode``-th episode in a vector env seeded ``seed``:
    ``w = SeedSequence([seed, env_index, episode]).generate_state(2, uint32)``, then
    ``(w[0] << 31) | (w[1] >> 1)`` (a non-negative 63-bit int)."""
    state = np.random.SeedSequence([int(seed), int(env_index), int(episode)]).generate_state(2, np.uint32)
    return (int(state[0]) << 31) | (int(state[1]) >> 1)  # a non-negative 63-bit int


def _check_count(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return int(value)


def batch_actions(actions: Sequence[int] | np.ndarray, num_envs: int) -> np.ndarray:
    """One integer action id per game as an ``int64`` array, checked before any game moves:
    floats, bools, strings, a wrong count or shape and a masked entry raise ValueError (legality
    is checked after). The shape is ``(num_envs,)``, or ``(num_envs, 1)`` as a column (a
    scalar for one game)."""
    if isinstance(actions, np.ma.MaskedArray) and np.ma.getmaskarray(actions).any():
        raise ValueError("actions has masked entries: a masked action is no action id (no game was stepped)")
    acts = np.asarray(actions)
    if acts.dtype.kind not in "iu":
        raise ValueError(
            f"actions must be integer action ids (an int array or a list of ints), got dtype {acts.dtype} "
            "(no game was stepped)"
        )
    if acts.ndim == 2 and acts.shape[1] == 1 or acts.ndim == 0 and num_envs == 1:
        acts = acts.reshape(-1)
    if acts.shape != (num_envs,):
        raise ValueError(
            f"step needs one action per game, shape ({num_envs},), got shape {acts.shape} (no game was stepped)"
        )
    if acts.dtype.kind == "u" and acts.size and int(acts.max()) > np.iinfo(np.int64).max:
        raise ValueError("actions must be action ids 0-181; got an unsigned value beyond int64 (no game was stepped)")
    return acts.astype(np.int64, copy=False)


class VectorMahjong:
    """``num_envs`` games of one variant stepped together; see the module docstring.

    Arguments: ``variant`` (a name of `mahjong_env.variants.variant_names`, or its env name),
    ``num_envs``, ``seed`` (base seed of `episode_seed`), ``num_hands`` (hands per episode, as
    the AEC env), ``record`` (put each finished episode's record in its info),
    ``illegal_action`` ("raise": a masked-out action raises ``ValueError`` before any game
    moves; "penalize": as the AEC env), ``env_ids`` (the games' indices in `episode_seed`,
    default ``range(num_envs)``; parallel workers use it to own a slice of a bigger batch),
    ``buffers`` (preallocated output arrays, for shared memory: a dict with ``obs``, ``masks``,
    ``seats``, ``rewards``, ``dones`` of the shapes `step` returns) and the variant's rule
    fields as keywords.
    """

    def __init__(
        self,
        variant: str,
        num_envs: int,
        seed: int = 0,
        num_hands: int = 1,
        record: bool = False,
        illegal_action: str = "raise",
        env_ids: Sequence[int] | None = None,
        buffers: dict[str, np.ndarray] | None = None,
        **rule_overrides: Any,
    ) -> None:
        entry = get_variant(variant)
        n = _check_count("num_envs", num_envs)
        self.num_hands = _check_count("num_hands", num_hands)
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seed must be a non-negative int, got {seed!r}")
        if illegal_action not in ("raise", "penalize"):
            raise ValueError(f"illegal_action must be 'raise' or 'penalize', got {illegal_action!r}")
        self.variant = entry.env_name
        table = build_table(entry, rule_overrides)
        self.config = table.config
        self.rules = table.rules
        self.num_envs = n
        self.seed = int(seed)
        self.record = bool(record)
        self.illegal_action = illegal_action
        self.env_ids = list(range(n)) if env_ids is None else [int(i) for i in env_ids]
        if len(self.env_ids) != n:
            raise ValueError(f"env_ids must name {n} games, got {len(self.env_ids)}")
        self.games = [table.new_game(self.num_hands) for _ in range(n)]
        self.encoders = [ObservationEncoder(self.config.concealed_kong_visible) for _ in range(n)]
        self.episodes = [0] * n
        self.episode_seeds = [0] * n
        self._silver = self.rules.starting_silver
        shapes = {
            "obs": ((n, *_OBS_SHAPE), np.float32),
            "masks": ((n, A.NUM_ACTIONS), np.int8),
            "seats": ((n,), np.int64),
            "rewards": ((n, 4), np.float32),
            "dones": ((n,), np.bool_),
        }
        buffers = dict(buffers or {})
        for key, (shape, dtype) in shapes.items():
            if key not in buffers:
                buffers[key] = np.zeros(shape, dtype)
            elif buffers[key].shape != shape or buffers[key].dtype != dtype or not buffers[key].flags.c_contiguous:
                got = f"{buffers[key].dtype} {buffers[key].shape}"
                raise ValueError(f"buffers[{key!r}] must be C-contiguous {np.dtype(dtype).name} {shape}, got {got}")
        self.obs = buffers["obs"]
        self.masks = buffers["masks"]
        self.seats = buffers["seats"]
        self.rewards = buffers["rewards"]
        self.dones = buffers["dones"]
        self._mask_flat = self.masks.reshape(-1)

    # ------------------------------------------------------------------ episodes

    def _start_episode(self, i: int) -> None:
        seed = episode_seed(self.seed, self.env_ids[i], self.episodes[i])
        self.episode_seeds[i] = seed
        game = self.games[i]
        dealer = first_dealer(seed)
        game.start_match(seed, dealer, [self._silver] * 4)
        hands, wall = shuffled_deal(seed, 0, dealer)
        game.start_hand(hands, wall)

    def reset(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Start every game's episode 0 again; returns ``(obs, masks, seats)``."""
        self.episodes = [0] * self.num_envs
        for i in range(self.num_envs):
            self._start_episode(i)
        self.rewards.fill(0.0)
        self.dones.fill(False)
        self._write_observations()
        return self.obs, self.masks, self.seats

    def restore(
        self, episodes: Sequence[int], actions: Sequence[Sequence[int]]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Put every game back where a run left it: game ``i`` in its ``episodes[i]``-th episode
        (counting auto-resets, as `episode_seed`), after ``actions[i]``, every action `step` took
        in that episode so far. A runner that keeps these can rebuild its games anywhere (a
        restarted worker, a resumed run) and gets the same observations, rewards and results
        from there on. Returns ``(obs, masks, seats)`` as `reset`."""
        if len(episodes) != self.num_envs or len(actions) != self.num_envs:
            raise ValueError(f"restore needs an episode and a list of actions for each of the {self.num_envs} games")
        scratch = np.zeros((1, *_OBS_SHAPE), np.float32)
        for i, (episode, played) in enumerate(zip(episodes, actions)):
            self.episodes[i] = int(episode)
            self.encoders[i] = encoder = ObservationEncoder(self.config.concealed_kong_visible)
            self._start_episode(i)
            game = self.games[i]
            for a in played:
                encode_batch([encoder], [game], [game.actor], scratch)  # the encoder follows every step, as in `step`
                if a in game.legal_actions():
                    game.step(int(a))
                else:
                    game.penalize(game.actor, int(a))
                if game.phase == _OVER:
                    game.end_of_step()
                    if game.over:
                        raise ValueError(f"game {i}: the actions end its episode; give only those since it began")
        self.rewards.fill(0.0)
        self.dones.fill(False)
        self._write_observations()
        return self.obs, self.masks, self.seats

    def _write_observations(self) -> None:
        games = self.games
        actors = [game.actor for game in games]
        encode_batch(self.encoders, games, actors, self.obs)
        mask = bytearray(len(games) * A.NUM_ACTIONS)  # set item by item, then one copy into the rows
        offset = 0
        for game in games:
            for a in game.legal_actions():
                mask[offset + a] = 1
            offset += A.NUM_ACTIONS
        self._mask_flat[:] = np.frombuffer(mask, np.int8)  # whole rows: a caller may have written into them
        self.seats[:] = actors

    # ------------------------------------------------------------------ stepping

    def step(
        self, actions: Sequence[int] | np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """Apply one action per game; returns ``(obs, masks, seats, rewards, dones, infos)``."""
        acts = batch_actions(actions, self.num_envs).tolist()
        games = self.games
        illegal = [i for i, (g, a) in enumerate(zip(games, acts)) if a not in g.legal_actions()]
        if illegal and self.illegal_action == "raise":
            i = illegal[0]
            message = A.illegal_action_message(acts[i], f"player_{games[i].actor}", games[i].legal_actions())
            raise ValueError(f"game {i}: {message} (no game was stepped)")
        bad = set(illegal)
        rewards = []
        infos: list[dict[str, Any]] = [{} for _ in acts]
        dones = self.dones
        dones.fill(False)
        for i, (game, a) in enumerate(zip(games, acts)):
            if i in bad:
                game.penalize(game.actor, a)
            else:
                game.step(a)
            rewards.append(game.rewards)
            if game.phase == _OVER:
                dones[i] = game.over
                infos[i] = self._hand_over(i)
        self.rewards[:] = rewards
        self._write_observations()
        return self.obs, self.masks, self.seats, self.rewards, dones, infos

    def _hand_over(self, i: int) -> dict[str, Any]:
        """Info of a finished hand; starts the next hand or the next episode."""
        game = self.games[i]
        info: dict[str, Any] = {
            "result": game.result,
            "hand_index": game.hand_index,
            "episode": self.episodes[i],
            "seed": self.episode_seeds[i],
        }
        game.end_of_step()  # the match's next hand, if it goes on
        if game.over:
            if self.record:
                info["record"] = self.episode_record(i)
            self.episodes[i] += 1
            self._start_episode(i)
        return info

    def views(self, indices: Sequence[int] | None = None) -> list[dict[str, Any]]:
        """The readable view (API.md ``view()``) of each listed game's player to move, for
        rule-based agents; all games when ``indices`` is None."""
        ids = range(self.num_envs) if indices is None else [int(i) for i in indices]
        visible = self.config.concealed_kong_visible
        return [table_view(self.games[i], self.games[i].actor, visible) for i in ids]

    def states(self, indices: Sequence[int] | None = None) -> np.ndarray:
        """The privileged global state (API.md ``state()``) of each listed game, ``(k, STATE_SIZE)``;
        for centralised critics only."""
        ids = range(self.num_envs) if indices is None else [int(i) for i in indices]
        out = np.zeros((len(ids), STATE_SIZE), np.float32)
        for row, i in enumerate(ids):
            out[row] = encode_state(self.games[i])
        return out

    def episode_record(self, i: int) -> dict[str, Any]:
        """Game ``i``'s current episode as the AEC env's ``record()`` gives it."""
        return self.games[i].match_record(self.variant, self.config.to_dict())

    def close(self) -> None:
        return None


class RewardAccumulator:
    """Credits rewards to the decision of the seat that receives them.

    In a four-player game a seat's reward arrives at other players' steps (a kong payment,
    the hand's settlement). For a rollout of ``horizon`` batched steps, decision ``(t, i)`` is
    seat ``seats[t, i]``'s; its credited reward is everything that seat receives from step
    ``t`` until its next decision in the same episode, or until the episode ends::

        acc = RewardAccumulator(num_envs, horizon)
        obs, masks, seats = venv.reset()
        for t in range(horizon):
            acc.decide(t, seats)                     # before stepping
            obs, masks, seats, rewards, dones, infos = venv.step(actions)
            acc.receive(rewards, dones)
        # acc.rewards[t, i]: credited reward of decision (t, i)
        # acc.dones[t, i]: the episode ended before that seat decided again (terminal)
        # acc.next_index[t, i]: the row of that seat's next decision in game i, -1 if none
        #   (terminal, or beyond the horizon: then the decision is still pending)
        advantages, returns = seat_advantages(values, acc, gamma, lam, bootstrap)

    Call `start_rollout` before the next rollout: pending decisions are forgotten, and the
    rewards they would still have received go to ``unassigned`` (as do rewards a seat gets
    before its first decision in an episode).
    """

    def __init__(self, num_envs: int, horizon: int) -> None:
        self.num_envs = _check_count("num_envs", num_envs)
        self.horizon = _check_count("horizon", horizon)
        self.rewards = np.zeros((horizon, num_envs), np.float32)
        self.dones = np.zeros((horizon, num_envs), np.bool_)
        self.next_index = np.full((horizon, num_envs), -1, np.int64)
        self.unassigned = np.zeros((num_envs, 4), np.float64)
        self._last = np.full((num_envs, 4), -1, np.int64)
        self._cols = np.arange(num_envs)

    def start_rollout(self) -> None:
        self.rewards.fill(0.0)
        self.dones.fill(False)
        self.next_index.fill(-1)
        self._last.fill(-1)

    def decide(self, t: int, seats: np.ndarray) -> None:
        """Row ``t`` of the rollout holds one decision per game, by ``seats``."""
        cols = self._cols
        seats = np.asarray(seats)
        prev = self._last[cols, seats]
        linked = prev >= 0
        self.next_index[prev[linked], cols[linked]] = t
        self._last[cols, seats] = t

    def receive(self, rewards: np.ndarray, dones: np.ndarray) -> None:
        """A step's ``(num_envs, 4)`` rewards and ``(num_envs,)`` episode ends."""
        last = self._last
        pending = last >= 0
        env_idx, seat_idx = np.nonzero(pending)
        self.rewards[last[env_idx, seat_idx], env_idx] += rewards[env_idx, seat_idx]  # rows differ per game
        self.unassigned += np.where(pending, 0.0, rewards)
        ended = np.flatnonzero(dones)
        if ended.size:
            rows = last[ended]
            envs = np.repeat(ended, 4).reshape(-1, 4)
            ok = rows >= 0
            self.dones[rows[ok], envs[ok]] = True
            last[ended] = -1

    def pending(self) -> np.ndarray:
        """``(horizon, num_envs)`` bool: decisions with neither a next decision nor an end."""
        return (self.next_index < 0) & ~self.dones


def seat_advantages(
    values: np.ndarray,
    acc: RewardAccumulator,
    gamma: float = 1.0,
    lam: float = 0.95,
    bootstrap: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """GAE over each seat's own decisions: ``(advantages, returns)``, both ``(horizon, num_envs)``.

    ``values[t, i]`` is the critic's value of decision ``(t, i)`` for the seat deciding. The
    successor of a decision is that seat's next decision (``acc.next_index``); terminal
    decisions bootstrap 0; pending ones (the rollout ended first) bootstrap ``bootstrap[t, i]``
    if given, else their own value (a common truncation approximation).
    """
    values = np.asarray(values, np.float64)
    horizon, n = values.shape
    boot = values if bootstrap is None else np.asarray(bootstrap, np.float64)
    adv = np.zeros((horizon, n), np.float64)
    cols = np.arange(n)
    nxt = acc.next_index
    for t in range(horizon - 1, -1, -1):
        has_next = nxt[t] >= 0
        rows = np.where(has_next, nxt[t], 0)
        next_value = np.where(has_next, values[rows, cols], np.where(acc.dones[t], 0.0, boot[t]))
        next_adv = np.where(has_next, adv[rows, cols], 0.0)
        delta = acc.rewards[t] + gamma * next_value - values[t]
        adv[t] = delta + gamma * lam * next_adv
    return adv.astype(np.float32), (adv + values).astype(np.float32)
