"""Registration of every variant of `mahjong_env.variants` in PettingZoo's and Gymnasium's
environment registries: ``mahjong_env/<name>-v0`` in PettingZoo's AEC registry (the variant's
``env()``) and parallel registry (`mahjong_env.adapters.parallel.MahjongParallelEnv`), and
``mahjong_env/<Name>-v0`` (the single-agent `mahjong_env.adapters.gym_env.MahjongGymEnv`).

``pettingzoo.make("parallel", "mahjong_env/changchun-v0")`` makes the parallel env. The Gymnasium
ids resolve where ``mahjong_env`` was imported; a process started fresh (SubprocVecEnv's
forkserver or spawn workers, when the main module does not import ``mahjong_env``: notebooks,
``python -c``, pytest) resolves ``"mahjong_env:mahjong_env/Changchun-v0"``, Gymnasium's
``module:id`` form, which imports the package first.

The ids come from the registry alone: `register_all` (called by the package's import) registers
every variant there and listens to it (`mahjong_env.variants.add_listener`), so a variant added
or removed at run time gains or loses its ids; the registry itself imports no adapter."""

from __future__ import annotations

from typing import Any

from mahjong_env.variants import Variant, add_listener, all_variants

__all__ = ["register_all", "register_variant", "unregister_variant"]

_GYM_ENTRY_POINT = "mahjong_env.adapters.gym_env:MahjongGymEnv"
_PARALLEL_ENTRY_POINT = "mahjong_env.adapters.parallel:MahjongParallelEnv"


def _pettingzoo_registry(kind: str) -> dict[str, Any] | None:
    """PettingZoo's ``"aec"`` or ``"parallel"`` registry (None where this PettingZoo has none)."""
    try:
        import pettingzoo
    except ImportError:  # pragma: no cover - pettingzoo is a core dependency
        return None
    registry: dict[str, Any] | None = getattr(pettingzoo, f"{kind}_registry", None)
    return registry


def register_variant(variant: Variant) -> None:
    """Register one `Variant`'s env ids (once: safe to call again)."""
    import gymnasium

    registry = _pettingzoo_registry("aec")
    if registry is not None and variant.pettingzoo_id not in registry:
        import pettingzoo

        pettingzoo.register("aec", variant.pettingzoo_id, entry_point=f"{variant.module}:env")
    registry = _pettingzoo_registry("parallel")
    if registry is not None and variant.pettingzoo_id not in registry:
        import pettingzoo

        pettingzoo.register(
            "parallel", variant.pettingzoo_id, entry_point=_PARALLEL_ENTRY_POINT, kwargs={"variant": variant.name}
        )
    if variant.gymnasium_id not in gymnasium.registry:
        gymnasium.register(variant.gymnasium_id, entry_point=_GYM_ENTRY_POINT, kwargs={"variant": variant.name})


def unregister_variant(variant: Variant) -> None:
    """Remove one `Variant`'s env ids from both registries (where present)."""
    import gymnasium

    for kind in ("aec", "parallel"):
        registry = _pettingzoo_registry(kind)
        if registry is not None:
            registry.pop(variant.pettingzoo_id, None)
    gymnasium.registry.pop(variant.gymnasium_id, None)


def register_all() -> None:
    """Register every variant of the registry, and every one registered later, once (safe to
    call again)."""
    for variant in all_variants():
        register_variant(variant)
    add_listener(register_variant, unregister_variant)
