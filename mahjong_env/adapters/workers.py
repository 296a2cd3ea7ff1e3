"""`VectorMahjong` split over several processes: local workers over shared memory, or Ray actors.

`ParallelVectorMahjong` has `VectorMahjong`'s interface and results: game ``i`` plays the
same episodes (`mahjong_env.adapters.vector.episode_seed`) whichever worker owns it, so for the same
seed and actions it returns exactly what one `VectorMahjong` of ``num_envs`` games returns::

    from mahjong_env.adapters.workers import ParallelVectorMahjong

    with ParallelVectorMahjong("changchun", num_envs=256, num_workers=8, seed=1) as venv:
        obs, masks, seats = venv.reset()
        for _ in range(1000):
            obs, masks, seats, rewards, dones, infos = venv.step(policy(obs, masks))

Worker ``w`` owns a contiguous block of games. Backends:

- ``"local"``: worker processes (``multiprocessing``, start method ``"spawn"`` by default,
  safe next to PyTorch threads). Observations, masks, seats, rewards, dones and actions live in
  one ``multiprocessing.shared_memory`` block that every worker's `VectorMahjong` writes into
  directly; a pipe per worker carries only the one-word commands and, when a hand ends, its
  info dict. Nothing is pickled per step.
- ``"ray"``: the same workers as Ray actors (one CPU each, spread over the nodes), for a Ray
  cluster: ``ray_address`` is passed to ``ray.init`` (None starts or joins a local Ray);
  ``max_restarts`` lets Ray restart an actor whose node was lost (on another node), after which
  `ParallelVectorMahjong.restore` rebuilds its games. Each step's arrays come back
  through Ray's object store (zero-copy numpy serialisation) and are gathered into the same
  batch buffers. Needs ``pip install -e '.[ray]'``.

As with `VectorMahjong`, the returned arrays are buffers overwritten by the next call.
``views(indices)`` and ``states(indices)`` ask only the workers that own those games (small
pickled answers), for rule-based opponents and centralised critics.
"""

from __future__ import annotations

import multiprocessing as mp
import signal
import traceback
import weakref
from collections.abc import Sequence
from itertools import pairwise
from multiprocessing import shared_memory
from typing import Any

import numpy as np

from mahjong_env import actions as A
from mahjong_env.adapters.vector import VectorMahjong, batch_actions
from mahjong_env.observation import NUM_CHANNELS, STATE_SIZE
from mahjong_env.tiles import NUM_KINDS

__all__ = ["ParallelVectorMahjong"]

_BUFFERS = ("obs", "masks", "seats", "rewards", "dones", "actions")


def _layout(n: int) -> tuple[dict[str, tuple[int, tuple[int, ...], str]], int]:
    """Offsets, shapes and dtypes of the batch arrays inside one shared block (64-byte aligned)."""
    specs = {
        "obs": ((n, NUM_CHANNELS, NUM_KINDS), "float32"),
        "masks": ((n, A.NUM_ACTIONS), "int8"),
        "seats": ((n,), "int64"),
        "rewards": ((n, 4), "float32"),
        "dones": ((n,), "bool"),
        "actions": ((n,), "int64"),
    }
    layout, offset = {}, 0
    for key, (shape, dtype) in specs.items():
        layout[key] = (offset, shape, dtype)
        size = int(np.prod(shape)) * np.dtype(dtype).itemsize
        offset += (size + 63) // 64 * 64
    return layout, offset


def _views(buf: Any, layout: dict[str, tuple[int, tuple[int, ...], str]]) -> dict[str, np.ndarray]:
    return {
        key: np.ndarray(shape, dtype=np.dtype(dtype), buffer=buf, offset=offset)
        for key, (offset, shape, dtype) in layout.items()
    }


def _split(num_envs: int, num_workers: int) -> list[tuple[int, int]]:
    """Contiguous game blocks, sizes differing by at most one."""
    bounds = np.linspace(0, num_envs, num_workers + 1).round().astype(int).tolist()
    return list(pairwise(bounds))


def _worker_main(conn: Any, shm_name: str, layout: dict, lo: int, hi: int, kwargs: dict[str, Any]) -> None:
    """A local worker: steps games ``lo:hi`` in the shared block on command."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    shm = shared_memory.SharedMemory(name=shm_name)  # the parent's resource tracker owns it
    arrays = _views(shm.buf, layout)
    buffers = {key: arrays[key][lo:hi] for key in _BUFFERS if key != "actions"}
    actions = arrays["actions"][lo:hi]
    venv = VectorMahjong(env_ids=range(lo, hi), buffers=buffers, **kwargs)
    try:
        while True:
            try:
                command = conn.recv()
            except (EOFError, OSError):
                break
            if command == "close":
                break
            try:
                if command == "step":
                    infos = venv.step(actions)[5]
                    conn.send(("ok", {lo + i: info for i, info in enumerate(infos) if info}))
                elif command == "reset":
                    venv.reset()
                    conn.send(("ok", {}))
                elif command[0] == "restore":  # ("restore", episodes, actions) of this worker's games
                    venv.restore(command[1], command[2])
                    conn.send(("ok", {}))
                elif command[0] in ("views", "states"):  # (name, global indices of this worker's games)
                    conn.send(("ok", getattr(venv, command[0])([i - lo for i in command[1]])))
                else:
                    conn.send(("error", f"unknown command {command!r}"))
            except Exception as exc:  # every error goes back to the parent
                conn.send(("error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"))
    finally:
        del venv, buffers, actions, arrays
        shm.close()


class _RayWorker:
    """A Ray actor's body: one `VectorMahjong` over games ``lo:hi``."""

    def __init__(self, lo: int, hi: int, kwargs: dict[str, Any]) -> None:
        self.lo = lo
        self.venv = VectorMahjong(env_ids=range(lo, hi), **kwargs)

    def reset(self) -> tuple[np.ndarray, ...]:
        obs, masks, seats = self.venv.reset()
        return obs, masks, seats

    def step(self, actions: np.ndarray) -> tuple[Any, ...]:
        obs, masks, seats, rewards, dones, infos = self.venv.step(actions)
        return obs, masks, seats, rewards, dones, {self.lo + i: info for i, info in enumerate(infos) if info}

    def restore(self, episodes: list[int], actions: list[list[int]]) -> tuple[np.ndarray, ...]:
        obs, masks, seats = self.venv.restore(episodes, actions)
        return obs, masks, seats

    def query(self, name: str, indices: list[int]) -> Any:
        return getattr(self.venv, name)([i - self.lo for i in indices])


def _close_local(processes: list[Any], conns: list[Any], shm: shared_memory.SharedMemory) -> None:
    for conn in conns:
        try:
            conn.send("close")
        except (BrokenPipeError, OSError):
            pass
    for proc in processes:
        proc.join(timeout=5)
        if proc.is_alive():
            proc.terminate()
            proc.join(timeout=5)
    for conn in conns:
        conn.close()
    try:
        shm.close()
    except BufferError:  # the caller still holds a returned array: the mapping lives until it is freed
        pass
    try:
        shm.unlink()
    except FileNotFoundError:
        pass


class ParallelVectorMahjong:
    """``num_envs`` games over ``num_workers`` processes or Ray actors; see the module docstring.

    Arguments as `VectorMahjong` (``variant``, ``num_envs``, ``seed``, ``num_hands``,
    ``record``, ``illegal_action``, rule fields as keywords), plus ``num_workers`` (default:
    the CPU count, at most ``num_envs``), ``backend`` ("local" | "ray"), ``ray_address``,
    ``start_method`` (local backend's multiprocessing start method, default "spawn") and
    ``max_restarts`` (Ray actors: how often Ray restarts one that died, -1 without limit).
    """

    def __init__(
        self,
        variant: str,
        num_envs: int,
        num_workers: int | None = None,
        seed: int = 0,
        backend: str = "local",
        ray_address: str | None = None,
        num_hands: int = 1,
        record: bool = False,
        illegal_action: str = "raise",
        start_method: str = "spawn",
        max_restarts: int = 0,
        **rule_overrides: Any,
    ) -> None:
        if backend not in ("local", "ray"):
            raise ValueError(f"backend must be 'local' or 'ray', got {backend!r}")
        if num_workers is None:
            num_workers = min(mp.cpu_count(), int(num_envs))
        if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 1:
            raise ValueError(f"num_workers must be a positive int, got {num_workers!r}")
        if num_workers > num_envs:
            raise ValueError(f"num_workers ({num_workers}) must not exceed num_envs ({num_envs})")
        kwargs = dict(
            variant=variant,
            num_envs=1,
            seed=seed,
            num_hands=num_hands,
            record=record,
            illegal_action=illegal_action,
            **rule_overrides,
        )
        probe = VectorMahjong(**kwargs)  # check every argument here, before any worker starts
        self.variant = probe.variant
        self.config = probe.config
        self.num_hands = probe.num_hands
        self.num_envs = int(num_envs)
        self.num_workers = num_workers
        self.backend = backend
        self.illegal_action = illegal_action
        self.blocks = _split(self.num_envs, num_workers)
        del kwargs["num_envs"]
        self._closed = False
        layout, size = _layout(self.num_envs)
        if backend == "local":
            self._shm = shared_memory.SharedMemory(create=True, size=size)
            arrays = _views(self._shm.buf, layout)
            ctx = mp.get_context(start_method)
            self._conns, self._procs = [], []
            for lo, hi in self.blocks:
                parent, child = ctx.Pipe()
                proc = ctx.Process(
                    target=_worker_main,
                    args=(child, self._shm.name, layout, lo, hi, dict(kwargs, num_envs=hi - lo)),
                    daemon=True,
                    name=f"mahjong-worker-{lo}-{hi}",
                )
                proc.start()
                child.close()
                self._conns.append(parent)
                self._procs.append(proc)
            self._finalizer = weakref.finalize(self, _close_local, self._procs, self._conns, self._shm)
        else:
            import ray

            if not ray.is_initialized():
                ray.init(address=ray_address, ignore_reinit_error=True, log_to_driver=False)
            actor = ray.remote(num_cpus=1, max_restarts=max_restarts, scheduling_strategy="SPREAD")(_RayWorker)
            self._actors = [actor.remote(lo, hi, dict(kwargs, num_envs=hi - lo)) for lo, hi in self.blocks]
            arrays = {key: np.zeros(shape, dtype) for key, (_, shape, dtype) in layout.items()}
        self.obs = arrays["obs"]
        self.masks = arrays["masks"]
        self.seats = arrays["seats"]
        self.rewards = arrays["rewards"]
        self.dones = arrays["dones"]
        self._actions = arrays["actions"]
        self._arrays = arrays

    # ------------------------------------------------------------------ commands

    def _command(self, command: str) -> dict[int, dict[str, Any]]:
        for conn in self._conns:
            conn.send(command)
        return self._collect()

    def _collect(self) -> dict[int, dict[str, Any]]:
        """Every local worker's answer to the command just sent: the infos of ended hands."""
        infos: dict[int, dict[str, Any]] = {}
        errors = []
        for (lo, hi), conn in zip(self.blocks, self._conns):
            try:
                status, payload = conn.recv()
            except EOFError:
                status, payload = "error", f"worker for games {lo}:{hi} died"
            if status == "ok":
                infos.update(payload)
            else:
                errors.append(f"worker for games {lo}:{hi}: {payload}")
        if errors:
            raise RuntimeError("\n".join(errors))
        return infos

    def restore(
        self, episodes: Sequence[int], actions: Sequence[Sequence[int]], timeout: float | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """As `VectorMahjong.restore`: each worker rebuilds its games (a Ray actor restarted
        after its node was lost starts from scratch). ``timeout``: seconds to wait for the Ray
        actors (a restarted one needs a free CPU), then ``ray.exceptions.GetTimeoutError``."""
        self._check_open()
        if len(episodes) != self.num_envs or len(actions) != self.num_envs:
            raise ValueError(f"restore needs an episode and a list of actions for each of the {self.num_envs} games")
        if self.backend == "local":
            for (lo, hi), conn in zip(self.blocks, self._conns):
                conn.send(("restore", list(episodes[lo:hi]), [list(a) for a in actions[lo:hi]]))
            self._collect()
        else:
            import ray

            calls = [
                actor.restore.remote(list(episodes[lo:hi]), [list(a) for a in actions[lo:hi]])
                for (lo, hi), actor in zip(self.blocks, self._actors)
            ]
            self._gather(ray.get(calls, timeout=timeout))
        return self.obs, self.masks, self.seats

    def _gather(self, parts: list[tuple[np.ndarray, ...]]) -> None:
        """The Ray actors' ``(obs, masks, seats)`` of a reset or restore, into the batch buffers."""
        for (lo, hi), (obs, masks, seats) in zip(self.blocks, parts):
            self.obs[lo:hi] = obs
            self.masks[lo:hi] = masks
            self.seats[lo:hi] = seats
        self.rewards.fill(0.0)
        self.dones.fill(False)

    def reset(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Start every game's episode 0 again; returns ``(obs, masks, seats)``."""
        self._check_open()
        if self.backend == "local":
            self._command("reset")
        else:
            import ray

            self._gather(ray.get([actor.reset.remote() for actor in self._actors]))
        return self.obs, self.masks, self.seats

    def step(
        self, actions: Sequence[int] | np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """Apply one action per game; returns ``(obs, masks, seats, rewards, dones, infos)``."""
        self._check_open()
        acts = batch_actions(actions, self.num_envs)  # integers only, in both illegal_action modes
        if self.illegal_action == "raise":  # check here, so that an illegal action moves no game
            in_range = (acts >= 0) & (acts < A.NUM_ACTIONS)
            legal = in_range.copy()
            legal[in_range] = self.masks[np.flatnonzero(in_range), acts[in_range]] == 1
            if not legal.all():
                i = int(np.flatnonzero(~legal)[0])
                legal_ids = np.flatnonzero(self.masks[i]).tolist()
                message = A.illegal_action_message(int(acts[i]), f"player_{self.seats[i]}", legal_ids)
                raise ValueError(f"game {i}: {message} (no game was stepped)")
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if self.backend == "local":
            self._actions[:] = acts
            found = self._command("step")
        else:
            import ray

            parts = ray.get([actor.step.remote(acts[lo:hi]) for (lo, hi), actor in zip(self.blocks, self._actors)])
            found = {}
            for (lo, hi), (obs, masks, seats, rewards, dones, part_infos) in zip(self.blocks, parts):
                self.obs[lo:hi] = obs
                self.masks[lo:hi] = masks
                self.seats[lo:hi] = seats
                self.rewards[lo:hi] = rewards
                self.dones[lo:hi] = dones
                found.update(part_infos)
        for i, info in found.items():
            infos[i] = info
        return self.obs, self.masks, self.seats, self.rewards, self.dones, infos

    def _query(self, name: str, indices: Sequence[int] | None) -> list[Any]:
        """Ask the workers owning ``indices`` for `VectorMahjong`'s ``views``/``states`` of them."""
        ids = list(range(self.num_envs)) if indices is None else [int(i) for i in indices]
        asked = []
        for w, (lo, hi) in enumerate(self.blocks):
            mine = [i for i in ids if lo <= i < hi]
            if mine:
                asked.append((w, mine))
        parts: dict[int, Any] = {}
        if self.backend == "local":
            for w, mine in asked:
                self._conns[w].send((name, mine))
            for w, mine in asked:
                status, payload = self._conns[w].recv()
                if status != "ok":
                    raise RuntimeError(f"worker for games {self.blocks[w][0]}:{self.blocks[w][1]}: {payload}")
                parts.update(zip(mine, payload))
        else:
            import ray

            answers = ray.get([self._actors[w].query.remote(name, mine) for w, mine in asked])
            for (_, mine), payload in zip(asked, answers):
                parts.update(zip(mine, payload))
        return [parts[i] for i in ids]

    def views(self, indices: Sequence[int] | None = None) -> list[dict[str, Any]]:
        """As `VectorMahjong.views`: the player to move's readable view of each listed game."""
        self._check_open()
        return self._query("views", indices)

    def states(self, indices: Sequence[int] | None = None) -> np.ndarray:
        """As `VectorMahjong.states`: ``(k, STATE_SIZE)`` privileged states (centralised critics)."""
        self._check_open()
        rows = self._query("states", indices)
        return np.stack(rows) if rows else np.zeros((0, STATE_SIZE), np.float32)

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("this ParallelVectorMahjong is closed")

    def close(self) -> None:
        """Stop the workers and free the shared memory (also done at garbage collection)."""
        if self._closed:
            return
        self._closed = True
        if self.backend == "local":
            del self.obs, self.masks, self.seats, self.rewards, self.dones, self._actions, self._arrays
            self._finalizer()
        else:
            import ray

            for actor in self._actors:
                ray.kill(actor)
            self._actors = []

    def __enter__(self) -> ParallelVectorMahjong:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
