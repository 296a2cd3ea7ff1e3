"""Registration of every variant of `mahjong_env.variants` in PettingZoo's and Gymnasium's
environment registries: ``mahjong_env/<name>-v0`` (AEC, the variant's ``env()``) and
``mahjong_env/<Name>-v0`` (the single-agent `mahjong_env.adapters.gym_env.MahjongGymEnv`)."""

from __future__ import annotations

from typing import Any

__all__ = ["register_all", "register_variant", "unregister_variant"]

_GYM_ENTRY_POINT = "mahjong_env.adapters.gym_env:MahjongGymEnv"


def _pettingzoo_registry() -> dict[str, Any] | None:
    try:
        import pettingzoo
    except ImportError:  # pragma: no cover - pettingzoo is a core dependency
        return None
    registry: dict[str, Any] | None = getattr(pettingzoo, "aec_registry", None)
    return registry


def register_variant(variant: Any) -> None:
    """Register one `Variant`'s two env ids (once: safe to call again)."""
    import gymnasium

    registry = _pettingzoo_registry()
    if registry is not None and variant.pettingzoo_id not in registry:
        import pettingzoo

        pettingzoo.register("aec", variant.pettingzoo_id, entry_point=f"{variant.module}:env")
    if variant.gymnasium_id not in gymnasium.registry:
        gymnasium.register(variant.gymnasium_id, entry_point=_GYM_ENTRY_POINT, kwargs={"variant": variant.name})


def unregister_variant(variant: Any) -> None:
    """Remove one `Variant`'s env ids from both registries (where present)."""
    import gymnasium

    registry = _pettingzoo_registry()
    if registry is not None:
        registry.pop(variant.pettingzoo_id, None)
    gymnasium.registry.pop(variant.gymnasium_id, None)


def register_all() -> None:
    """Register every variant once (safe to call again)."""
    from mahjong_env.variants import all_variants

    for variant in all_variants():
        register_variant(variant)
