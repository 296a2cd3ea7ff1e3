"""Mahjong environments for reinforcement learning: Xinjiang Balang (巴郎新疆麻将) and
Changchun (长春麻将) mahjong on one engine, as PettingZoo AEC and parallel environments and
single-agent Gymnasium environments.

Importing the package registers ``mahjong_env/xinjiang-v0`` and ``mahjong_env/changchun-v0``
in PettingZoo's AEC and parallel registries (``env()`` / ``parallel_env()``) and
``mahjong_env/Xinjiang-v0`` and ``mahjong_env/Changchun-v0`` in Gymnasium's.
"""

from __future__ import annotations

import mahjong_env._native  # noqa: F401  (first: the core's modules load compiled or from source)
from mahjong_env import changchun_v0, xinjiang_v0
from mahjong_env.adapters.registration import register_all
from mahjong_env.tools.records import replay

__all__ = ["xinjiang_v0", "changchun_v0", "replay"]

register_all()
