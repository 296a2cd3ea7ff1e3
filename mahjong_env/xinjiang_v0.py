"""Xinjiang Balang mahjong 巴郎新疆麻将 as a PettingZoo AEC environment (``xinjiang_v0``).

Description
    Four players, 136 tiles, no chow; a hand is won only by self-draw after declaring ready,
    by kong bloom, or by robbing an added kong (RULES.md X1–X10). README.md has the rules
    summary, the action table and the observation channels.

Action Space
    ``Discrete(182)``, `mahjong_env.actions`; chow, special-kong and bao actions are always
    masked out in this variant.

Observation Space
    ``{"observation": float32 (NUM_CHANNELS, 34), "action_mask": int8 (182,)}``, see
    `mahjong_env.observation`.

Rewards
    Each step's change in points (R12): kong payments (刮风下雨) when a kong stands, refunded
    on a drawn hand; the hand's settlement 2^(fan−1) when it ends. Silver is in ``info``.

Episode End
    After ``num_hands`` hands (default 1); a hand ends at the first win or after the 分张 draws.

Arguments
    ``render_mode``, ``num_hands``, ``render_seat``, ``illegal_action`` ("raise" | "penalize"),
    and every field of `mahjong_env.rules.xinjiang.XinjiangConfig`.

Version History
    v0: initial release.
"""

from __future__ import annotations

from mahjong_env.aec import MahjongEnv, make_env_factory
from mahjong_env.rules.xinjiang import XinjiangConfig, XinjiangRules

__all__ = ["env", "raw_env"]


class raw_env(MahjongEnv):  # noqa: N801 (PettingZoo naming)
    metadata = {"render_modes": ["ansi", "human"], "name": "xinjiang_v0", "is_parallelizable": False}
    rules_class = XinjiangRules
    config_class = XinjiangConfig


env = make_env_factory(raw_env)
