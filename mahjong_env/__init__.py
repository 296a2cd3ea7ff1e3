"""Mahjong environments for reinforcement learning: Xinjiang Balang (巴郎新疆麻将) and
Changchun (长春麻将) mahjong on one engine, as PettingZoo AEC environments and single-agent
Gymnasium environments.

Importing the package registers ``mahjong_env/xinjiang-v0`` and ``mahjong_env/changchun-v0``
in PettingZoo's registry and ``mahjong_env/Xinjiang-v0`` and ``mahjong_env/Changchun-v0`` in
Gymnasium's.
"""

from __future__ import annotations

from mahjong_env import changchun_v0, xinjiang_v0
from mahjong_env.adapters.registration import register_all
from mahjong_env.tools.records import replay

__all__ = ["xinjiang_v0", "changchun_v0", "replay"]

register_all()
