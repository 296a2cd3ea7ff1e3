"""The policy-value network of `TorchAgent` and the training scripts, and its checkpoint format.

Input: the observation planes of `mahjong_env.observation` (``(NUM_CHANNELS, 34)``): rows
0–135 are planes over the 34 tile kinds, the next three rows hold scalar features; a network
made with ``extra_planes=K`` also reads the first K analysis planes appended after them
(`mahjong_env.features.ANALYSIS_CHANNELS`, the env option ``analysis_features=True``), which
go into the convolution with the tile planes (`PolicyNetwork.analysis_rows`: networks made
before a channel was added read the rows that existed then). With ``prior_planes=True`` the last two of them
are the prior planes (`prior_planes`: the default heuristic's choice), so the network learns
where to depart from the rule-based player rather than the whole policy.

Trunk: the tile planes are laid out per group (m, p, s, z) with zero columns between groups so
that the 1-D convolutions over tile ranks never mix suits, then a 1-D convolution and
``blocks`` residual blocks (kernel 3); the scalar features go through a small MLP; both meet in
a fully connected layer of width ``hidden``.

Heads: policy logits over the 182 actions (a linear layer on the shared features, plus for the
five tile-indexed action families (discard, ready, concealed kong, added kong, special add) a
per-tile logit read from the convolution features at that tile's column) and a scalar value.
With ``advantage_head=True`` a second head of the same shape estimates, for each action, the
points it gains over the policy's usual choice (trained on paired rollouts, `training.paired`);
`agents.torch_agent.TorchAgent` uses it to choose among `mahjong_env.features.decision_candidates`.
Illegal actions are masked with `masked_logits` before any softmax or argmax.

Checkpoints are data only (loadable with ``torch.load(path, weights_only=True)``)::

    {"format": 1, "state_dict": {name: tensor},
     "arch": {"channels", "blocks", "hidden", "extra_planes", "advantage_head", "prior_planes"},
     "obs_shape": [139 + extra_planes, 34], "num_actions": 182, "variant": "changchun", "metadata": {...}}

``metadata`` holds plain values only (how the checkpoint was trained). `load_checkpoint` bounds
every ``arch`` value before building anything (a hostile file cannot make it allocate much)
and checks every tensor's shape against the network it describes.
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from mahjong_env.actions import CHOW_LOW, NUM_ACTIONS
from mahjong_env.features import ANALYSIS_CHANNELS
from mahjong_env.observation import NUM_CHANNELS
from mahjong_env.tiles import NUM_KINDS

__all__ = [
    "CHECKPOINT_FORMAT",
    "PolicyNetwork",
    "StateCritic",
    "load_checkpoint",
    "masked_logits",
    "prior_planes",
    "save_checkpoint",
]

CHECKPOINT_FORMAT = 1
SCALAR_ROWS = 3
TILE_PLANES = NUM_CHANNELS - SCALAR_ROWS
SCALAR_SIZE = SCALAR_ROWS * NUM_KINDS
PRIOR_ROWS = 2
"""Rows of the prior planes (`prior_planes`)."""
LEGACY_ANALYSIS_ROWS = 10
"""Analysis rows of the networks made before ``discard_prospects`` (row 10) was added."""
ARCH_LIMITS = {
    "channels": (1, 256),
    "blocks": (0, 16),
    "hidden": (1, 2048),
    "extra_planes": (0, len(ANALYSIS_CHANNELS) + PRIOR_ROWS),
}
"""Inclusive bounds of each integer ``arch`` field a checkpoint may ask for."""
ARCH_FLAGS = ("advantage_head", "prior_planes")
"""Boolean ``arch`` fields (False when absent)."""
TILE_FAMILIES = CHOW_LOW // NUM_KINDS  # discard, ready, concealed_kong, added_kong, special_add
_GROUP_WIDTH = 11  # one zero column, up to nine ranks, zero columns


def _layout() -> tuple[list[int], list[int]]:
    """Column → tile kind (NUM_KINDS = a zero column) and tile kind → column."""
    columns: list[int] = []
    where = [0] * NUM_KINDS
    for start, size in ((0, 9), (9, 9), (18, 9), (27, 7)):
        group = [NUM_KINDS] * _GROUP_WIDTH
        for r in range(size):
            group[1 + r] = start + r
            where[start + r] = len(columns) + 1 + r
        columns.extend(group)
    return columns, where


class _Residual(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv1d(channels, channels, 3, padding=1)
        self.conv2 = nn.Conv1d(channels, channels, 3, padding=1)

    def forward(self, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.conv1(x)) * keep
        return torch.relu(x + self.conv2(y)) * keep


class PolicyNetwork(nn.Module):
    """Observation planes → (masked-later policy logits over 182 actions, value)."""

    def __init__(
        self,
        channels: int = 32,
        blocks: int = 2,
        hidden: int = 256,
        extra_planes: int = 0,
        advantage_head: bool = False,
        prior_planes: bool = False,
    ) -> None:
        super().__init__()
        problem = _plane_problem(extra_planes, prior_planes)
        if problem:
            raise ValueError(problem)
        self.channels, self.blocks, self.hidden = channels, blocks, hidden
        self.extra_planes, self.advantage_head = extra_planes, advantage_head
        self.prior_planes = prior_planes
        columns, where = _layout()
        self.register_buffer("columns", torch.tensor(columns), persistent=False)
        self.register_buffer("tile_columns", torch.tensor(where), persistent=False)
        keep = torch.tensor([0.0 if c == NUM_KINDS else 1.0 for c in columns])
        self.register_buffer("keep", keep.view(1, 1, -1), persistent=False)
        self.stem = nn.Conv1d(TILE_PLANES + extra_planes, channels, 3, padding=1)
        self.tower = nn.ModuleList(_Residual(channels) for _ in range(blocks))
        self.scalars = nn.Sequential(nn.Linear(SCALAR_SIZE, 64), nn.ReLU())
        self.joint = nn.Sequential(nn.Linear(channels * len(columns) + 64, hidden), nn.ReLU())
        self.policy = nn.Linear(hidden, NUM_ACTIONS)
        self.tile_policy = nn.Conv1d(channels, TILE_FAMILIES, 1)
        self.value = nn.Linear(hidden, 1)
        nn.init.orthogonal_(self.policy.weight, 0.01)
        nn.init.zeros_(self.policy.bias)
        nn.init.orthogonal_(self.value.weight, 1.0)
        nn.init.zeros_(self.value.bias)
        if advantage_head:
            self.advantage_trunk = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU())
            self.advantage_out = nn.Linear(hidden, NUM_ACTIONS)
            self.tile_advantage = nn.Conv1d(channels, TILE_FAMILIES, 1)
            nn.init.zeros_(self.advantage_out.weight)
            nn.init.zeros_(self.advantage_out.bias)

    @property
    def analysis_rows(self) -> int:
        """How many of the analysis planes (the first ones of `ANALYSIS_CHANNELS`) it reads:
        networks trained before a channel was added read the rows that existed then."""
        return self.extra_planes - (PRIOR_ROWS if self.prior_planes else 0)

    @property
    def obs_rows(self) -> int:
        """Rows of the observation this network reads."""
        return NUM_CHANNELS + self.extra_planes

    def arch(self) -> dict[str, int]:
        """The constructor arguments, stored in checkpoints."""
        return {
            "channels": self.channels,
            "blocks": self.blocks,
            "hidden": self.hidden,
            "extra_planes": self.extra_planes,
            "advantage_head": self.advantage_head,
            "prior_planes": self.prior_planes,
        }

    def features(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(shared features (B, hidden), per-tile convolution features (B, channels, 34))."""
        batch = obs.shape[0]
        planes = obs[:, :TILE_PLANES]
        if self.extra_planes:
            planes = torch.cat([planes, obs[:, NUM_CHANNELS : NUM_CHANNELS + self.extra_planes]], dim=1)
        padded = torch.cat([planes, planes.new_zeros(batch, planes.shape[1], 1)], dim=2)
        x = padded.index_select(2, self.columns)
        x = torch.relu(self.stem(x)) * self.keep
        for block in self.tower:
            x = block(x, self.keep)
        scalars = self.scalars(obs[:, TILE_PLANES:NUM_CHANNELS].reshape(batch, SCALAR_SIZE))
        shared = self.joint(torch.cat([x.flatten(1), scalars], dim=1))
        return shared, x.index_select(2, self.tile_columns)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Unmasked logits (B, 182) and values (B,) for observations (B, NUM_CHANNELS, 34)."""
        shared, per_tile = self.features(obs)
        logits = _with_tiles(
            self.policy(shared), self.tile_policy(per_tile)
        )  # tile families are family-major like the ids
        return logits, self.value(shared).squeeze(-1)

    def policy_and_advantages(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Unmasked logits (B, 182) and the advantage head's estimates (B, 182), in points."""
        if not self.advantage_head:
            raise ValueError("this network has no advantage head (advantage_head=False)")
        shared, per_tile = self.features(obs)
        logits = _with_tiles(self.policy(shared), self.tile_policy(per_tile))
        adv = _with_tiles(self.advantage_out(self.advantage_trunk(shared)), self.tile_advantage(per_tile))
        return logits, adv


def _with_tiles(flat: torch.Tensor, per_tile: torch.Tensor) -> torch.Tensor:
    """Add the per-tile outputs (B, families, 34) to the tile-indexed actions of (B, 182)."""
    tiles = per_tile.flatten(1)
    return torch.cat([flat[:, : tiles.shape[1]] + tiles, flat[:, tiles.shape[1] :]], 1)


class StateCritic(nn.Module):
    """Centralised critic (training only): the env's privileged ``state()`` plus the learner's
    seat (one-hot) → value. Never part of an agent checkpoint's policy."""

    def __init__(self, state_size: int, hidden: int = 256) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(state_size + 4, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1)
        )

    def forward(self, state: torch.Tensor, seat: torch.Tensor) -> torch.Tensor:
        onehot = torch.nn.functional.one_hot(seat.long(), 4).to(state.dtype)
        return self.net(torch.cat([state, onehot], dim=1)).squeeze(-1)


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Logits with illegal actions (mask 0) set to a large negative number (finite: no NaN)."""
    return logits.masked_fill(mask == 0, -1e9)


def save_checkpoint(
    path: str | Path, network: PolicyNetwork, variant: str, metadata: dict[str, Any] | None = None
) -> Path:
    """Write a data-only checkpoint (see the module docstring); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "format": CHECKPOINT_FORMAT,
        "state_dict": {k: v.detach().cpu().clone() for k, v in network.state_dict().items()},
        "arch": network.arch(),
        "obs_shape": [network.obs_rows, NUM_KINDS],
        "num_actions": NUM_ACTIONS,
        "variant": variant,
        "metadata": dict(metadata or {}),
    }
    torch.save(payload, path)
    return path


def load_checkpoint(path: str | Path, device: str | torch.device = "cpu") -> tuple[PolicyNetwork, dict[str, Any]]:
    """(network in eval mode on ``device``, the checkpoint's other entries); ValueError if the
    file is missing or not a checkpoint of this format and observation shape."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"checkpoint {str(path)!r} does not exist")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except (
        pickle.UnpicklingError,
        RuntimeError,
        EOFError,
        ValueError,
        OSError,
    ) as error:  # not data-only, or not torch
        raise ValueError(f"{str(path)!r} is not a data-only torch checkpoint: {error}") from None
    if not isinstance(payload, dict) or payload.get("format") != CHECKPOINT_FORMAT or "state_dict" not in payload:
        raise ValueError(f"{str(path)!r} is not a mahjong policy checkpoint (format {CHECKPOINT_FORMAT})")
    arch = _checked_arch(path, payload.get("arch"))
    for key, kinds, what in (("metadata", dict, "a dict"), ("variant", str, "a variant name")):
        if payload.get(key) is not None and not isinstance(payload[key], kinds):
            raise ValueError(f"checkpoint {str(path)!r}: {key} must be {what}, got {payload[key]!r:.80}")
    expected = [NUM_CHANNELS + arch["extra_planes"], NUM_KINDS]
    shape = payload.get("obs_shape")
    if not isinstance(shape, (list, tuple)) or list(shape) != expected or payload.get("num_actions") != NUM_ACTIONS:
        raise ValueError(
            f"checkpoint {str(path)!r} was trained for observations {payload.get('obs_shape')} and "
            f"{payload.get('num_actions')} actions; this environment has {expected} and {NUM_ACTIONS}"
        )
    network = PolicyNetwork(**arch)
    state = payload["state_dict"]
    own = network.state_dict()
    if (
        not isinstance(state, dict)
        or set(state) != set(own)
        or any(not isinstance(state[k], torch.Tensor) or state[k].shape != own[k].shape for k in own)
    ):
        raise ValueError(f"checkpoint {str(path)!r}: its tensors do not match the network its arch describes")
    network.load_state_dict(state)
    network.to(device).eval()
    meta = {k: v for k, v in payload.items() if k != "state_dict"}
    return network, meta


def _checked_arch(path: Path, arch: Any) -> dict[str, Any]:
    """The checkpoint's ``arch`` with every field type- and range-checked (ValueError otherwise)."""
    if not isinstance(arch, dict):
        raise ValueError(f"checkpoint {str(path)!r} has no arch dict")
    unknown = sorted(set(arch) - set(ARCH_LIMITS) - set(ARCH_FLAGS))
    if unknown:
        raise ValueError(f"checkpoint {str(path)!r}: unknown arch field(s) {unknown}")
    out: dict[str, Any] = {"extra_planes": 0}
    for name, (low, high) in ARCH_LIMITS.items():
        if name not in arch and name in out:
            continue
        value = arch.get(name)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(f"checkpoint {str(path)!r}: arch {name} must be an int in [{low}, {high}], got {value!r}")
        out[name] = value
    for name in ARCH_FLAGS:
        flag = arch.get(name, False)
        if not isinstance(flag, bool):
            raise ValueError(f"checkpoint {str(path)!r}: arch {name} must be True or False, got {flag!r}")
        out[name] = flag
    problem = _plane_problem(out["extra_planes"], out["prior_planes"])
    if problem:
        raise ValueError(f"checkpoint {str(path)!r}: arch {problem}")
    return out


def _plane_problem(extra_planes: int, prior: bool) -> str | None:
    """What is wrong with this count of extra planes (the analysis planes it reads, then the
    prior planes), or None. Prior planes need the analysis planes of ten rows or more (the
    rows that existed when they were introduced)."""
    if prior and not LEGACY_ANALYSIS_ROWS + PRIOR_ROWS <= extra_planes <= len(ANALYSIS_CHANNELS) + PRIOR_ROWS:
        return (
            f"prior_planes need the analysis planes: extra_planes must be in "
            f"[{LEGACY_ANALYSIS_ROWS + PRIOR_ROWS}, {len(ANALYSIS_CHANNELS) + PRIOR_ROWS}], got {extra_planes}"
        )
    if not prior and extra_planes > len(ANALYSIS_CHANNELS):
        return f"extra_planes without prior_planes: at most {len(ANALYSIS_CHANNELS)} analysis rows, got {extra_planes}"
    return None


def prior_planes(actions: Sequence[int] | np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """The prior planes of a batch of actions ``(B, PRIOR_ROWS, 34)``, float32: row 0 marks the
    tile of a tile-indexed action (discard, ready, kongs, special add), row 1 its kind (columns
    0-4 the five tile families, 5-16 the other actions from ``chow_low`` on). ``TorchAgent``
    fills them with the choice of the default `agents.heuristic.HeuristicAgent` for networks
    made with ``prior_planes=True``: such a network learns where to depart from it."""
    actions = np.asarray(actions, np.int64)
    if out is None:
        out = np.zeros((len(actions), PRIOR_ROWS, NUM_KINDS), np.float32)
    else:
        out.fill(0.0)
    if len(actions) and (actions.min() < 0 or actions.max() >= NUM_ACTIONS):
        raise ValueError(f"prior_planes: actions must be in [0, {NUM_ACTIONS}), got {actions.tolist()}")
    rows = np.arange(len(actions))
    tiled = actions < CHOW_LOW
    out[rows[tiled], 0, actions[tiled] % NUM_KINDS] = 1.0
    kind = np.where(tiled, actions // NUM_KINDS, TILE_FAMILIES + actions - CHOW_LOW)
    out[rows, 1, kind] = 1.0
    return out
