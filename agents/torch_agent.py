"""`TorchAgent`: plays a trained `agents.network.PolicyNetwork` from a data-only checkpoint.

It sees only its observation dict (planes and action mask) and, for networks that read the
analysis planes (``extra_planes > 0``) or have an advantage head, the ``info`` of
`agents.agent_info` (its own view and the rule fields): the analysis is computed inside the
agent from that view (`mahjong_env.features`), never from privileged state. Observations that
already carry the analysis planes (env option ``analysis_features=True``) are used as they are.
A network with prior planes also reads the choice of the default `agents.heuristic.HeuristicAgent`
on the same observation and info (`agents.network.prior_planes`).

Greedy by default (the most probable legal action); ``greedy=False`` samples from the masked
policy with its own seeded generator, so a given seed replays the same choices on CPU and GPU.
With an advantage head, a greedy agent chooses among `mahjong_env.features.decision_candidates`
the action of highest estimated advantage (ties: the policy's order), elsewhere the policy's
choice. ``act_batch`` runs one forward pass for many observations.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.base import Agent
from agents.heuristic import HeuristicAgent
from agents.network import PolicyNetwork, load_checkpoint, masked_logits, prior_planes
from mahjong_env.features import ANALYSIS_CHANNELS, analysis_planes, decision_candidates
from mahjong_env.observation import NUM_CHANNELS

__all__ = ["TorchAgent", "choose_with_advantage", "resolve_device"]


def choose_with_advantage(policy_choice: int, candidates: list[int], advantages: np.ndarray, margin: float) -> int:
    """The candidate of highest estimated advantage if it beats the policy's own choice by more
    than ``margin`` (in the head's units), else the policy's choice; a policy choice outside the
    candidates gives way to the best candidate."""
    best = max(candidates, key=lambda a: advantages[a])
    if policy_choice not in candidates:
        return best
    return best if advantages[best] - advantages[policy_choice] > margin else policy_choice


def resolve_device(device: str | torch.device) -> torch.device:
    """``"auto"`` → CUDA when available, else CPU; anything else as ``torch.device``."""
    if isinstance(device, str) and device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        return torch.device(device)
    except (RuntimeError, TypeError) as error:
        raise ValueError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got {device!r} ({error})") from None


class TorchAgent(Agent):
    """A policy network as an `Agent`; build one with `from_checkpoint` or from a network."""

    name = "torch"

    def __init__(
        self,
        network: PolicyNetwork,
        *,
        variant: str | None = None,
        device: str | torch.device = "auto",
        greedy: bool = True,
        seed: int | None = 0,
        advantage_margin: float = 0.0,
    ) -> None:
        self.device = resolve_device(device)
        self.advantage_margin = float(advantage_margin)
        """How much better (in the advantage head's units) a candidate must look than the policy's
        own choice to replace it (stored in the checkpoint by training.bc)."""
        self.network = network.to(self.device).eval()
        self.variant = variant
        self.greedy = greedy
        self._seed = seed
        self.rng = np.random.default_rng(seed)
        self._warned = False
        self.needs_info = network.extra_planes > 0 or network.advantage_head
        """Whether `act` needs the ``info`` of `agents.agent_info` (the view and rule fields)."""
        self._prior = HeuristicAgent()
        """The rule-based player whose choice fills the prior planes (networks with ``prior_planes``)."""

    @classmethod
    def from_checkpoint(
        cls,
        path: str | Path,
        *,
        seed: int | None = 0,
        device: str | torch.device = "auto",
        greedy: bool = True,
        advantage_margin: float | None = None,
    ) -> TorchAgent:
        """Load a checkpoint written by `agents.network.save_checkpoint` (``weights_only=True``):
        ``path`` is a file, or the name of a shipped checkpoint (``"changchun"``, ``"xinjiang"``:
        `agents.checkpoint_path`); ``advantage_margin`` overrides the one stored in it (``inf``:
        the policy head alone)."""
        from agents import checkpoint_path

        path = checkpoint_path(path)
        target = resolve_device(device)
        network, meta = load_checkpoint(path, target)
        stored = meta.get("metadata", {}).get("advantage_margin", 0.0)
        margin = stored if advantage_margin is None else advantage_margin
        if isinstance(margin, bool) or not isinstance(margin, (int, float)) or np.isnan(margin):
            raise ValueError(f"checkpoint {str(path)!r}: advantage_margin must be a number, got {margin!r}")
        agent = cls(
            network, variant=meta.get("variant"), device=target, greedy=greedy, seed=seed, advantage_margin=margin
        )
        agent.name = f"torch:{Path(path).name}"
        return agent

    def reset(self) -> None:
        return None

    def seed(self, seed: int | None) -> None:
        """Re-seed: the agent then plays as ``from_checkpoint(path, seed=seed)`` would (the
        tournament re-seeds one loaded agent per hand instead of loading it again)."""
        self._seed = seed
        self.rng = np.random.default_rng(seed)

    def act(self, observation: dict[str, np.ndarray], info: dict[str, Any] | None = None) -> int:
        return self.act_batch([observation], [info])[0]

    def act_batch(
        self, observations: list[dict[str, np.ndarray]], infos: list[dict[str, Any] | None] | None = None
    ) -> list[int]:
        if not observations:
            return []
        self._check_variant(infos)
        if self.needs_info and (infos is None or any(i is None or "view" not in i for i in infos)):
            raise ValueError(
                "this TorchAgent reads the analysis of its own view: pass info=agents.agent_info(env, agent)"
            )
        obs = self._stack(observations, infos)
        mask = np.stack([o["action_mask"] for o in observations])
        if not mask.any(axis=1).all():
            raise ValueError("TorchAgent.act: an action mask has no legal action")
        network = self.network
        with torch.inference_mode():
            tensor = torch.from_numpy(obs).to(self.device)
            if network.advantage_head:
                logits, adv = network.policy_and_advantages(tensor)
                advantages = adv.float().cpu().numpy()
            else:
                logits, _ = network(tensor)
            logits = masked_logits(logits, torch.from_numpy(mask).to(self.device)).float().cpu().numpy()
        if not self.greedy:  # Gumbel-max: a sample from the masked softmax, from our own generator
            logits = logits + self.rng.gumbel(size=logits.shape)
            logits[mask == 0] = -np.inf
        actions = [int(a) for a in logits.argmax(axis=1)]
        if network.advantage_head and self.greedy:
            assert infos is not None
            for row, info in enumerate(infos):
                assert info is not None
                candidates = decision_candidates(info["view"], info["variant"], info.get("config"), mask[row])
                if candidates:
                    actions[row] = choose_with_advantage(
                        actions[row], candidates, advantages[row], self.advantage_margin
                    )
        return actions

    def _stack(
        self, observations: list[dict[str, np.ndarray]], infos: list[dict[str, Any] | None] | None
    ) -> np.ndarray:
        """The network's input rows: the observations, plus the analysis planes and the prior
        planes where the network reads them and the observation does not carry them."""
        network = self.network
        rows = network.obs_rows
        first = observations[0]["observation"]
        if first.shape[0] == rows and not network.prior_planes:
            return np.stack([o["observation"] for o in observations]).astype(np.float32, copy=False)
        analysed = NUM_CHANNELS + len(ANALYSIS_CHANNELS)
        if first.shape[0] not in (NUM_CHANNELS, analysed):
            raise ValueError(f"this network reads {rows} observation rows, the observation has {first.shape[0]}")
        reads = NUM_CHANNELS + network.analysis_rows  # the network's analysis rows end here
        out = np.zeros((len(observations), rows, first.shape[1]), np.float32)
        buffer = np.zeros((len(ANALYSIS_CHANNELS), first.shape[1]), np.float32)
        assert infos is not None
        for k, (o, info) in enumerate(zip(observations, infos)):
            assert info is not None
            out[k, :NUM_CHANNELS] = o["observation"][:NUM_CHANNELS]
            if reads > NUM_CHANNELS:
                if first.shape[0] == analysed:
                    out[k, NUM_CHANNELS:reads] = o["observation"][NUM_CHANNELS:reads]
                else:
                    mask = o["action_mask"]
                    analysis_planes(info["view"], info["variant"], info.get("config"), mask, buffer)
                    out[k, NUM_CHANNELS:reads] = buffer[: reads - NUM_CHANNELS]
        if network.prior_planes:
            choices = [self._prior.act(o, info) for o, info in zip(observations, infos)]
            prior_planes(choices, out[:, reads:])
        return out

    def _check_variant(self, infos: list[dict[str, Any] | None] | None) -> None:
        if self._warned or not infos or self.variant is None:
            return
        played = next((i.get("variant") for i in infos if i), None)
        if played is not None and played != self.variant:
            self._warned = True
            warnings.warn(
                f"TorchAgent trained on {self.variant!r} is playing {played!r}; it will play, but badly",
                stacklevel=3,
            )
