"""Single-agent Gymnasium view of either variant (API.md "Gymnasium registration").

The learner plays one seat; ``opponents`` play the other three: a policy name registered in the
``mahjong_env.policies`` entry-point group (``"random"``, ``"heuristic"``,
``"torch:ckpt.pt"``, ...: `mahjong_env.adapters.policies`; the env package never imports ``agents``), an
agent object with ``act(observation, info)``, or a callable taking the observation dict and
returning an action id; one for all three seats or a list of three. Names are checked when the
env is made. An episode is one match of ``num_hands`` hands; the reward of a step is the
learner's points change since its previous decision (RULES.md R12). An illegal action ends the
episode with the learner paying 1 point to each opponent (``illegal_action="penalize"``, the
default here; ``"raise"`` raises ValueError). An opponent that returns anything but a legal
action id forfeits the same way whatever ``illegal_action`` (it pays 1 point to each other
seat, the episode ends with the ``illegal`` outcome): the learner's step returns normally and
its ``info["forfeit"]`` (``{"seat", "message"}``) names the opponent; an opponent that raises
is not caught. ``action_masks()`` serves sb3-contrib's MaskablePPO and the mask is also in
``info["action_mask"]``.

Reset always returns a decision of the learner; a bad reset option raises ValueError before
anything changes (``np_random``, the learner's seat, the opponents). The opponents act first
until the learner must decide; if they end the whole episode before that (an opponent's win
before the learner's first decision: rare, about once in 10^4 Changchun deals), the episode is
dealt again with the next episode seed drawn from the env's ``np_random`` (so ``reset(seed=s)``
stays deterministic), the ``hands``/``wall``/``dice`` options dropped since they described the
deal that already ended, and ``info["redeals"]`` counts how often that happened (0 almost
always). Points the learner received before its first decision within an episode (kong payments,
or an earlier hand of a match the opponents finished) are not lost: they are added to the reward
of its first step.

Rendering shows the learner's view only (R13): ``render_mode="ansi"`` (``render()`` returns
the text), ``"human"`` (the text printed after every reset and step) or ``"rgb_array"`` (an
``(H, W, 3)`` ``uint8`` frame, `mahjong_env.adapters.picture`; Stable-Baselines3's
``make_vec_env`` asks for it).

Registered ids: ``mahjong_env/Xinjiang-v0`` and ``mahjong_env/Changchun-v0``. The env is built
from its id and keyword arguments alone (opponents given by name are built where the env is),
so vector envs may build it in worker processes: SB3's ``SubprocVecEnv`` and
``gym.make_vec(..., vectorization_mode="async")``. A worker started fresh (forkserver, spawn)
knows the ids only if it imports ``mahjong_env``: it does when the main script imports it; from
a notebook, ``python -c`` or pytest, use the id ``"mahjong_env:mahjong_env/Changchun-v0"``,
whose ``module:`` prefix makes Gymnasium import the package first.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from mahjong_env import actions as A
from mahjong_env.adapters.aec import action_int
from mahjong_env.adapters.picture import table_picture
from mahjong_env.adapters.policies import CallablePolicy, build_policy, check_policy_spec, decision_info
from mahjong_env.observation import observation_box
from mahjong_env.variants import DEFAULT_VARIANT, get_variant

__all__ = ["MahjongGymEnv", "MAX_REDEALS"]

MAX_REDEALS = 100
"""Redeals after which `MahjongGymEnv.reset` gives up (RuntimeError): only opponents that always
end the hand before the learner acts get there."""


class MahjongGymEnv(gym.Env):
    """One learner seat against fixed opponents; see the module docstring."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 4}

    def __init__(
        self,
        variant: str = DEFAULT_VARIANT,
        opponents: Any = "random",
        seat: int | str = "random",
        num_hands: int = 1,
        render_mode: str | None = None,
        illegal_action: str = "penalize",
        **rule_overrides: Any,
    ) -> None:
        entry = get_variant(variant)  # a rule-set name or an env name; ValueError names the valid ones
        is_seat = isinstance(seat, (int, np.integer)) and not isinstance(seat, (bool, np.bool_)) and 0 <= seat <= 3
        if seat != "random" and not is_seat:
            raise ValueError(f"seat must be 0-3 or 'random', got {seat!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self._opponent_specs = self._check_opponents(opponents)
        # rendering is this env's (the learner's view, once per step), not the AEC env's
        self.aec = entry.raw_env(num_hands=num_hands, illegal_action=illegal_action, **rule_overrides)
        self.variant = variant
        self.render_mode = render_mode
        self.seat_choice = seat if seat == "random" else int(seat)
        self.observation_space = observation_box()
        self.action_space = gym.spaces.Discrete(A.NUM_ACTIONS)
        self.opponents: dict[str, Any] = {}
        self.learner = "player_0"
        self._mask = np.zeros(A.NUM_ACTIONS, dtype=np.int8)
        self._carried = 0.0
        self._redeals = 0
        self._forfeit: dict[str, Any] | None = None

    @staticmethod
    def _check_opponents(opponents: Any) -> list[Any]:
        specs = list(opponents) if isinstance(opponents, (list, tuple)) else [opponents] * 3
        if len(specs) != 3:
            raise ValueError(f"opponents must be one policy or a list of three, got {len(specs)}")
        for spec in specs:
            if isinstance(spec, str):
                check_policy_spec(spec)
            elif not (callable(spec) or callable(getattr(spec, "act", None))):
                raise ValueError(f"opponent {spec!r} is not a policy name, an agent or a callable")
        return specs

    def _build_opponents(self, seed: int) -> None:
        seats = [a for a in self.aec.possible_agents if a != self.learner]
        self.opponents = {}
        for i, (agent, spec) in enumerate(zip(seats, self._opponent_specs)):
            if isinstance(spec, str):
                policy = build_policy(spec, seed * 4 + i)
            elif callable(getattr(spec, "act", None)):
                policy = spec
            else:
                policy = CallablePolicy(spec)
            self.opponents[agent] = policy

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        checked = self.aec._check_reset_options(options)  # a bad option raises before anything changes
        super().reset(seed=seed)
        self._redeals = 0
        while True:
            self._forfeit = None
            episode_seed = int(self.np_random.integers(2**31))
            if self.seat_choice == "random":
                self.learner = f"player_{int(self.np_random.integers(4))}"
            else:
                self.learner = f"player_{self.seat_choice}"
            self._build_opponents(episode_seed)
            for policy in self.opponents.values():
                reset = getattr(policy, "reset", None)
                if callable(reset):
                    reset()
            self.aec._start_episode(episode_seed, checked)
            self._carried, done = self._play_opponents()
            if not done:
                break
            if self._redeals >= MAX_REDEALS:
                last = f" (the last: {self._forfeit['message']})" if self._forfeit else ""
                raise RuntimeError(
                    f"the opponents ended {MAX_REDEALS + 1} episodes in a row before the learner's first decision{last}"
                )
            self._redeals += 1
            checked = checked.without_deal()
        if self.render_mode == "human":
            self.render()
        return self._observe(0.0, False)[0], self._info()

    def _play_opponents(self) -> tuple[float, bool]:
        """Let the opponents act until the learner must decide or the episode ends; returns the
        learner's points since its last decision and whether the episode ended."""
        aec = self.aec
        while True:
            agent = aec.agent_selection
            if aec.terminations[agent] or aec.truncations[agent]:
                return aec._cumulative_rewards.get(self.learner, 0.0), True
            if agent == self.learner:
                return aec._cumulative_rewards[self.learner], False
            observation = aec.observe(agent)
            action = self.opponents[agent].act(observation, decision_info(aec, agent))
            if action.__class__ is not int or action not in aec.game.legal_actions():
                action = self._checked_opponent_action(agent, action)
                if action is None:
                    continue
            aec.step(action)

    def _checked_opponent_action(self, agent: str, action: Any) -> int | None:
        """``action`` as an int when it is legal for the opponent ``agent``; otherwise None and the
        opponent has forfeited (the AEC env's ``illegal`` outcome whatever ``illegal_action``:
        the learner's call was fine), named in ``info["forfeit"]``."""
        legal = self.aec.game.legal_actions()
        try:
            given = action_int(action)
        except ValueError as error:
            given, reason = None, str(error)
        else:
            if given in legal:
                return given
            reason = A.illegal_action_message(given, agent, None)  # the learner sees it: not the legal actions (R13)
        self._forfeit = {"seat": int(agent[-1]), "message": f"opponent {agent} forfeits the hand: {reason}"}
        self.aec._forfeit(given)
        return None

    def _observe(self, reward: float, done: bool) -> tuple[np.ndarray, float, bool]:
        obs = self.aec.observe(self.learner)
        self._mask = obs["action_mask"]
        return obs["observation"], reward, done

    def _info(self) -> dict[str, Any]:
        info = dict(self.aec.infos.get(self.learner, {}))
        info["action_mask"] = self._mask
        info["seat"] = int(self.learner[-1])
        info["redeals"] = self._redeals
        if self._forfeit is not None:
            info["forfeit"] = dict(self._forfeit)
        return info

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        aec = self.aec
        if not aec.agents or aec.terminations[self.learner] or aec.agent_selection != self.learner:
            raise RuntimeError("step() called after the episode ended: call reset()")
        aec.step(action.item() if isinstance(action, np.ndarray) and action.size == 1 else action)
        # the AEC env accumulates the learner's points from its own step to its next decision;
        # what it got before its first decision (kept at reset) goes to this first step
        reward, done = self._play_opponents()
        reward += self._carried
        self._carried = 0.0
        obs, _, _ = self._observe(reward, done)
        if self.render_mode == "human":
            self.render()
        return obs, float(reward), done, False, self._info()

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as booleans (sb3-contrib MaskablePPO)."""
        return self._mask.astype(bool)

    def render(self) -> str | np.ndarray | None:
        """The learner's view (R13: never the opponents' hidden tiles): an RGB frame
        (``"rgb_array"``, `mahjong_env.adapters.picture`), printed text (``"human"``: also
        after every reset and step) or the text (``"ansi"``, and without a render mode)."""
        if self.render_mode == "rgb_array":
            return table_picture(self.aec.view(self.learner), self.aec.metadata["name"])
        text = self.aec.render_view(self.learner)
        if self.render_mode == "human":
            print(text)
            return None
        return text
