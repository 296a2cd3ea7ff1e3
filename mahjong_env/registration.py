"""Registration in PettingZoo's and Gymnasium's environment registries."""

from __future__ import annotations

__all__ = ["register_all"]

_PETTINGZOO = {
    "mahjong_env/xinjiang-v0": "mahjong_env.xinjiang_v0:env",
    "mahjong_env/changchun-v0": "mahjong_env.changchun_v0:env",
}
_GYMNASIUM = {
    "mahjong_env/Xinjiang-v0": "xinjiang",
    "mahjong_env/Changchun-v0": "changchun",
}


def register_all() -> None:
    """Register every environment once (safe to call again)."""
    try:
        import pettingzoo
    except ImportError:  # pragma: no cover - pettingzoo is a core dependency
        return
    registry = getattr(pettingzoo, "aec_registry", None)
    if registry is not None:
        for env_id, entry in _PETTINGZOO.items():
            if env_id not in registry:
                pettingzoo.register("aec", env_id, entry_point=entry)
    import gymnasium

    for env_id, variant in _GYMNASIUM.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(env_id, entry_point="mahjong_env.gym_env:MahjongGymEnv", kwargs={"variant": variant})
