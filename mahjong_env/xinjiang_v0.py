"""Xinjiang Balang mahjong 巴郎新疆麻将 as a PettingZoo AEC environment (``xinjiang_v0``).

Description
    Four players, 136 tiles (no flowers), no chow (禁止吃牌); pong and kong on a discard. A
    hand is won only by self-draw after declaring ready (报听自摸), by kong bloom (杠上开花), or
    by robbing an added kong; the last four tiles are 分张 draws; a ready player whose kong
    breaks its wait becomes 相公 and pays for everyone. Fans 2^(fan-1) points, kong payments at
    once (刮风下雨), silver and base (RULES.md X1-X10). README.md has the rules summary.

Action Space
    ``Discrete(182)``, the table both variants share (`mahjong_env.actions`): 0-33 discard T,
    34-67 ready (听) and discard T, 68-101 concealed kong, 102-135 added kong, 136-169 special
    addition, 170-172 chow low/mid/high, 173 pong, 174 kong, 175 win, 176 pass, 177 view the
    bao, 178-181 special groups. An action must be a Python or numpy integer; a masked-out one
    is handled by ``illegal_action``. ``raw_env.legal_actions(agent)`` names the legal ones.
    Chow, special-group and bao actions are always masked out in this variant.

Observation Space
    ``Dict({"observation": Box(float32, (NUM_CHANNELS, 34)), "action_mask": Box(int8, (182,))})``:
    feature planes over the 34 tile kinds, seats relative to the observer, holding exactly what
    RULES.md R13 lets that player see (channel table: `mahjong_env.observation` and the
    README). The mask marks the legal actions of the player to move (all zero for the others).
    ``raw_env.view(agent)`` gives the same information as a readable dict, ``state()`` the
    privileged global state for centralised critics (never for tournament agents).

Rewards
    Each step's change in points (R12, zero-sum): kong payments when a kong stands, refunded on
    a drawn hand; the hand's settlement 2^(fan-1) (X6, capped by ``fan_cap``) when it ends.
    Over a hand each agent's cumulative reward is ``deltas + kong_deltas`` of its seat in
    ``info["result"]``. Silver (X7) is not a reward: ``info["silver"]`` and ``info["base"]``.

Episode End
    Terminated after ``num_hands`` hands (default 1); a hand ends at the first win or after the
    分张 draws (drawn hand, 荒庄), or at a penalised illegal action. Never truncated.
    ``info["result"]`` (API.md "Results") is set on the step that ends each hand.

Arguments
    ``env(render_mode=None, num_hands=1, render_seat=None, illegal_action="raise", profile="seed", **rules)``

    - ``render_mode``: None, ``"ansi"`` (``render()`` returns text), ``"human"`` (prints it,
      also after each step) or ``"rgb_array"`` (an ``(H, W, 3)`` ``uint8`` picture of the same
      content, `mahjong_env.adapters.picture`).
    - ``num_hands``: hands per episode; a match rotates the dealer by R11 and carries the
      scores and silver over.
    - ``render_seat``: None renders the full table, a seat 0-3 that player's view.
    - ``illegal_action``: ``"raise"`` (ValueError naming the legal actions; nothing changes) or
      ``"penalize"`` (the offender pays 1 point to each other seat and the episode ends).
    - ``profile``: a named set of rule values (``"seed"``, the default); explicit rule keywords
      override it.
    - ``**rules``: any field of `mahjong_env.rules.xinjiang.XinjiangConfig` (frozen dataclass;
      the defaults are RULES.md's). An unknown keyword or a bad value raises ValueError naming it.

    ``reset(seed=None, options=None)``: options ``dealer``, ``hands`` + ``wall`` (a custom
    deal), ``dice``, ``silver`` (API.md "Reset options"); every option is checked before
    anything changes. ``env()`` wraps ``raw_env`` in PettingZoo's ``AssertOutOfBoundsWrapper``
    and ``OrderEnforcingWrapper``. ``parallel_env()`` (the same arguments) is the env under
    PettingZoo's Parallel API, one mover per step: every live agent observes, only the mover's
    mask is non-zero, and only the mover's action is needed (`mahjong_env.adapters.parallel`).

Version History
    v0: initial release; ``render_mode="rgb_array"`` and ``parallel_env()`` added (no change
    to play).
"""

from __future__ import annotations

from typing import Any, ClassVar

from mahjong_env.adapters.aec import MahjongEnv, make_env_factory
from mahjong_env.adapters.parallel import make_parallel_factory
from mahjong_env.rules.xinjiang import XinjiangConfig, XinjiangRules

__all__ = ["env", "parallel_env", "raw_env"]


class raw_env(MahjongEnv):  # noqa: N801 (PettingZoo naming)
    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi", "human", "rgb_array"],
        "name": "xinjiang_v0",
        "is_parallelizable": False,
        "render_fps": 4,
    }
    __doc__ = __doc__  # help(raw_env) shows the module's documentation
    rules_class = XinjiangRules
    config_class = XinjiangConfig


env = make_env_factory(raw_env)
parallel_env = make_parallel_factory(raw_env)
