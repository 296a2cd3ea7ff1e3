"""Adapters that let policies trained with other frameworks enter a tournament as agents.

- `SB3Agent` (spec ``sb3:path/to/model.zip``): a model trained with sb3-contrib's
  ``MaskablePPO`` (or any stable-baselines3 algorithm whose ``predict`` takes
  ``action_masks``) on our Gymnasium env (``mahjong_env/Changchun-v0``, ``Xinjiang-v0``),
  whose observation is the planes array. Needs the ``train`` extra. SB3 zip files unpickle
  Python objects, so the tournament runs this agent in its own process (`agents.sandbox`).
- `RLlibAgent` (spec ``rllib:path/to/checkpoint``): an RLlib RLModule checkpoint of an
  action-masking module that reads ``{"observations": flat planes, "action_mask"}`` (the
  layout of ``training/rllib_example.py``). The path is a module folder, or the folder
  ``Algorithm.save_to_path`` wrote (then ``module=`` names the RLModule, default ``learner``,
  else the only one). Needs the ``ray`` extra.

Both play the most probable legal action by default (``deterministic=false`` samples) and
accept ``variant=`` (the variant the policy was trained for); the RLlib adapter also reads it
from ``mahjong_meta.json`` next to the checkpoint, which `training.rllib_example` writes. The
tournament refuses an entrant trained for another variant (``--allow-variant-mismatch``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Agent
from mahjong_env.actions import NUM_ACTIONS
from mahjong_env.observation import NUM_CHANNELS

__all__ = ["META_FILE", "RLlibAgent", "SB3Agent"]

META_FILE = "mahjong_meta.json"
"""Written next to an RLlib checkpoint: ``{"variant": ..., "module": ...}``."""

_VARIANTS = ("xinjiang", "changchun")


def _check_variant(variant: Any, path: Path) -> str | None:
    if variant is not None and variant not in _VARIANTS:
        raise ValueError(f"{path}: variant must be one of {', '.join(_VARIANTS)}, got {variant!r}")
    return variant


class SB3Agent(Agent):
    """A stable-baselines3 / sb3-contrib model as an agent (module docstring)."""

    name = "sb3"

    def __init__(
        self, model: Any, *, variant: str | None = None, deterministic: bool = True, seed: int | None = 0
    ) -> None:
        self.model = model
        self.variant = variant
        self.deterministic = bool(deterministic)
        self.seed(seed)

    @classmethod
    def from_path(
        cls, path: str | Path, *, seed: int | None = 0, variant: str | None = None, deterministic: bool = True
    ) -> SB3Agent:
        path = Path(path)
        if not path.is_file():
            raise ValueError(f"sb3 model {str(path)!r} does not exist (give the .zip that model.save wrote)")
        try:
            from sb3_contrib import MaskablePPO
        except ImportError as error:
            raise ValueError(f"sb3:{path} needs sb3-contrib: pip install -e '.[train]' ({error})") from None
        try:
            model = MaskablePPO.load(str(path), device="cpu")
        except Exception as error:  # a corrupt or foreign zip: say which file
            raise ValueError(f"{str(path)!r} is not a MaskablePPO model: {type(error).__name__}: {error}") from None
        shape = tuple(getattr(model.observation_space, "shape", ()) or ())
        if shape[-1:] != (34,) or int(np.prod(shape)) % 34 or getattr(model.action_space, "n", None) != NUM_ACTIONS:
            raise ValueError(
                f"{str(path)!r} was trained for observations {shape} and actions {model.action_space}; "
                f"this environment has ({NUM_CHANNELS}, 34) and Discrete({NUM_ACTIONS})"
            )
        return cls(model, variant=_check_variant(variant, path), deterministic=deterministic, seed=seed)

    def seed(self, seed: int | None) -> None:
        if seed is not None:
            self.model.set_random_seed(int(seed) % 2**32)

    def act(self, observation: dict[str, np.ndarray], info: dict[str, Any] | None = None) -> int:
        mask = np.asarray(observation["action_mask"]).astype(bool)
        action, _ = self.model.predict(observation["observation"], action_masks=mask, deterministic=self.deterministic)
        return int(np.asarray(action).reshape(-1)[0])


class RLlibAgent(Agent):
    """An RLlib action-masking RLModule as an agent (module docstring)."""

    name = "rllib"

    def __init__(
        self, module: Any, *, variant: str | None = None, deterministic: bool = True, seed: int | None = 0
    ) -> None:
        self.module = module
        self.variant = variant
        self.deterministic = bool(deterministic)
        self.rng = np.random.default_rng(seed)

    @classmethod
    def from_path(
        cls,
        path: str | Path,
        *,
        seed: int | None = 0,
        module: str | None = None,
        variant: str | None = None,
        deterministic: bool = True,
    ) -> RLlibAgent:
        path = Path(path)
        if not path.is_dir():
            raise ValueError(f"rllib checkpoint {str(path)!r} is not a folder (give the folder save_to_path wrote)")
        meta: dict[str, Any] = {}
        meta_file = next((p / META_FILE for p in (path, *path.parents[:4]) if (p / META_FILE).is_file()), None)
        if meta_file is not None:
            try:
                meta = json.loads(meta_file.read_text(encoding="utf-8"))
            except ValueError as error:
                raise ValueError(f"{meta_file}: not JSON ({error})") from None
            if not isinstance(meta, dict):
                raise ValueError(f"{meta_file}: expected a JSON object")
        module_dir = _module_dir(path, module or meta.get("module"))
        try:
            from ray.rllib.core.rl_module.rl_module import RLModule
        except ImportError as error:
            raise ValueError(f"rllib:{path} needs RLlib: pip install -e '.[ray]' ({error})") from None
        try:
            rl_module = RLModule.from_checkpoint(str(module_dir))
        except Exception as error:  # not an RLModule checkpoint: say which folder
            raise ValueError(f"{str(module_dir)!r} is not an RLlib RLModule checkpoint: {error}") from None
        variant = variant if variant is not None else meta.get("variant")
        return cls(rl_module, variant=_check_variant(variant, path), deterministic=deterministic, seed=seed)

    def seed(self, seed: int | None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: dict[str, np.ndarray], info: dict[str, Any] | None = None) -> int:
        import torch

        mask = np.asarray(observation["action_mask"], dtype=np.float32)
        batch = {
            "obs": {
                "observations": torch.from_numpy(np.asarray(observation["observation"], np.float32).reshape(1, -1)),
                "action_mask": torch.from_numpy(mask.reshape(1, -1)),
            }
        }
        with torch.no_grad():
            out = self.module.forward_inference(batch)
        logits = out["action_dist_inputs"].reshape(-1).double().numpy()
        logits[mask == 0] = -np.inf
        if not self.deterministic:
            logits = logits + self.rng.gumbel(size=logits.shape)
        return int(np.argmax(logits))


def _module_dir(path: Path, module: str | None) -> Path:
    """The RLModule folder inside an algorithm checkpoint, or ``path`` if it is one."""
    modules = path / "learner_group" / "learner" / "rl_module"
    if not modules.is_dir():
        return path
    names = sorted(p.name for p in modules.iterdir() if p.is_dir())
    if module is None:
        module = "learner" if "learner" in names else (names[0] if len(names) == 1 else None)
    if module not in names:
        raise ValueError(f"{path}: name the RLModule with ?module=NAME, one of {', '.join(names) or '(none)'}")
    return modules / module
