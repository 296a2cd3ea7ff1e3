"""Changchun mahjong 长春麻将 as a PettingZoo AEC environment (``changchun_v0``).

Description
    Four players, 136 tiles; chow from the previous player, special kongs (旋风杠 喜杠 幺蛋
    九蛋), optional ready, the bao 宝牌, and the winning conditions 三色全 幺九 一叉
    (RULES.md C1–C13). README.md has the rules summary, actions and observation channels.

Action Space
    ``Discrete(182)``, `mahjong_env.actions`.

Observation Space
    ``{"observation": float32 (NUM_CHANNELS, 34), "action_mask": int8 (182,)}``, see
    `mahjong_env.observation`; the bao enters a player's observation only after it views it.

Rewards
    Each step's change in points (R12): kong payments (C12) when a kong stands, never
    refunded; each payer's 2^(F−1) (cap 64) when the hand is won.

Episode End
    After ``num_hands`` hands (default 1); a hand ends at the first win or when only seven
    whole stacks remain (C13).

Arguments
    ``render_mode``, ``num_hands``, ``render_seat``, ``illegal_action`` ("raise" | "penalize"),
    and every field of `mahjong_env.rules.changchun.ChangchunConfig`.

Version History
    v0: initial release.
"""

from __future__ import annotations

from mahjong_env.aec import MahjongEnv, make_env_factory
from mahjong_env.rules.changchun import ChangchunConfig, ChangchunRules

__all__ = ["env", "raw_env"]


class raw_env(MahjongEnv):  # noqa: N801 (PettingZoo naming)
    metadata = {"render_modes": ["ansi", "human"], "name": "changchun_v0", "is_parallelizable": False}
    rules_class = ChangchunRules
    config_class = ChangchunConfig


env = make_env_factory(raw_env)
