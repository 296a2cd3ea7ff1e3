"""The PettingZoo AEC environment shared by both variants (API.md "Environments").

A thin layer over `mahjong_env.engine.game.Game`: agent names, spaces, masks, rewards, infos,
reset options, records and rendering. Each variant module (`xinjiang_v0`, `changchun_v0`)
binds a rule set to it.
"""

from __future__ import annotations

import copy
import math
import warnings
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from mahjong_env import actions as A
from mahjong_env.actions import action_int
from mahjong_env.adapters.picture import table_picture
from mahjong_env.adapters.wrappers import wrap
from mahjong_env.engine.state import Phase
from mahjong_env.features import ANALYSIS_PIECES, analysis_planes
from mahjong_env.observation import ObservationEncoder, encode_state, observation_box, state_box
from mahjong_env.rules.base import MAX_SILVER
from mahjong_env.tiles import NUM_KINDS, format_tiles, parse_tiles
from mahjong_env.variants import build_table, get_variant
from mahjong_env.view import render_text, table_view
from mahjong_env.visibility import sees_decider
from mahjong_env.wall import first_dealer, shuffled_deal

__all__ = ["MahjongEnv", "action_int", "make_env_factory", "validate_deal", "validate_dice", "validate_silver"]

AGENTS = tuple(f"player_{i}" for i in range(4))
_SEAT = {name: i for i, name in enumerate(AGENTS)}
_A0, _A1, _A2, _A3 = AGENTS
_RESET_KEYS = {"dealer", "hands", "wall", "dice", "silver"}
_OVER = Phase.OVER  # a module constant: an enum member read costs ~90 ns on Python 3.11


def validate_deal(hands: Any, wall: Any, dealer: int | None) -> tuple[list[list[int]], list[int], int]:
    """Check a custom deal (reset options ``hands``/``wall``) and return it parsed."""
    if not isinstance(hands, (list, tuple)) or len(hands) != 4 or not all(isinstance(h, str) for h in hands):
        raise ValueError("options['hands'] must be four tile strings, one per seat, e.g. '123m456p...'")
    if not isinstance(wall, str):
        raise ValueError("options['wall'] must be one tile string in draw order (head first)")
    parsed = [parse_tiles(h) for h in hands]
    wall_tiles = parse_tiles(wall)
    sizes = [len(h) for h in parsed]
    fourteen = [s for s, n in enumerate(sizes) if n == 14]
    if sorted(sizes) != [13, 13, 13, 14]:
        raise ValueError(f"options['hands'] must hold 14 tiles for the dealer and 13 for each other seat, got {sizes}")
    if dealer is not None and fourteen != [dealer]:
        raise ValueError(f"options['dealer'] is {dealer} but the 14-tile hand is seat {fourteen[0]}'s")
    counts = [0] * NUM_KINDS
    for t in wall_tiles + [t for h in parsed for t in h]:
        counts[t] += 1
    if counts != [4] * NUM_KINDS:
        missing = [t for t in range(NUM_KINDS) for _ in range(max(0, 4 - counts[t]))]
        extra = [t for t in range(NUM_KINDS) for _ in range(max(0, counts[t] - 4))]
        raise ValueError(
            "options['hands'] and options['wall'] must hold exactly the 136 tiles (four of each kind): "
            f"missing {format_tiles(missing) or 'nothing'}, extra {format_tiles(extra) or 'nothing'}"
        )
    return parsed, wall_tiles, fourteen[0]


def _integer(value: Any, name: str) -> int:
    """``value`` as a Python int: Python and numpy integers pass, bools, floats and the rest
    raise ValueError naming ``name``."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an int, got {value!r} ({type(value).__name__})")
    return int(value)


def validate_dice(dice: Any, count: int, name: str) -> list[int]:
    """A list of forced dice sums of ``count`` dice each (2-12 with two, 1-6 with one)."""
    low, high = (1, 6) if count == 1 else (2, 12)
    message = f"{name} must be a list of dice sums in {low}..{high}, got {dice!r}"
    if not isinstance(dice, (list, tuple)):
        raise ValueError(message)
    out = []
    for d in dice:
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)) or not low <= d <= high:
            raise ValueError(message)
        out.append(int(d))
    return out


def validate_silver(silver: Any) -> list[float]:
    """Four finite, non-negative starting silver amounts (reset option ``silver``, X7)."""
    message = f"options['silver'] must be four finite numbers in 0..{MAX_SILVER:g}, got {silver!r}"
    if not isinstance(silver, (list, tuple)) or len(silver) != 4:
        raise ValueError(message)
    out = []
    for x in silver:
        if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer, np.floating)):
            raise ValueError(message)
        if not math.isfinite(float(x)) or not 0 <= float(x) <= MAX_SILVER:
            raise ValueError(message)
        out.append(float(x))
    return out


@dataclass(frozen=True)
class _ResetOptions:
    """Reset options that passed the checks (API.md "Reset options")."""

    dealer: int | None
    """The first dealer as given (None: not given)."""
    deal: tuple[list[list[int]], list[int], int] | None
    """The custom deal: the hands, the wall and the dealer they imply (`validate_deal`)."""
    dice: list[int] | None
    silver: list[float] | None

    def without_deal(self) -> _ResetOptions:
        """The same options without those that describe one deal (hands, wall, dice)."""
        return replace(self, deal=None, dice=None)


def _plain_copy(value: Any) -> Any:
    """A copy of JSON-like data (dicts, lists, tuples of plain values) that shares no container
    with ``value``: `copy.deepcopy` at half the cost (no memo), for the result of every hand."""
    kind = value.__class__
    if kind is dict:
        return {k: _plain_copy(v) for k, v in value.items()}
    if kind is list:
        return [_plain_copy(v) for v in value]
    if kind is tuple:
        return tuple(_plain_copy(v) for v in value)
    return value


class _ActionSpace(spaces.Discrete):
    """``Discrete(182)`` that `reset` seeds lazily: the generator of ``reset(seed=s)`` is made
    at the first ``sample()`` after it (the same draws as ``seed(s)`` at reset), not at every
    reset, which costs about 25 µs a hand that nobody samples in."""

    def __init__(self, n: int) -> None:
        super().__init__(n)
        self._seed_due: tuple[int | None] | None = None  # (seed,) until the generator is made

    def seed_later(self, seed: int | None) -> None:
        self._seed_due = (seed,)
        self._np_random = None

    def seed(self, seed: int | None = None) -> int | Any:
        self._seed_due = None
        return super().seed(seed)

    @property
    def np_random(self) -> np.random.Generator:
        if self._seed_due is not None:
            self.seed(self._seed_due[0])
        return super().np_random


class MahjongEnv(AECEnv):
    """Four-player mahjong as a PettingZoo AEC environment; see the variant modules' docs."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi", "human", "rgb_array"],
        "name": "mahjong",
        "is_parallelizable": False,
        "render_fps": 4,
    }
    rules_class: ClassVar[type]
    config_class: ClassVar[type]

    def __init__(
        self,
        render_mode: str | None = None,
        num_hands: int = 1,
        render_seat: int | None = None,
        illegal_action: str = "raise",
        analysis_features: bool = False,
        **rule_overrides: Any,
    ) -> None:
        super().__init__()
        if not isinstance(analysis_features, bool):
            raise ValueError(f"analysis_features must be True or False, got {analysis_features!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        if isinstance(num_hands, bool) or not isinstance(num_hands, int) or num_hands < 1:
            raise ValueError(f"num_hands must be a positive int, got {num_hands!r}")
        if render_seat is not None:
            is_int = isinstance(render_seat, (int, np.integer)) and not isinstance(render_seat, (bool, np.bool_))
            if not is_int or not 0 <= render_seat <= 3:
                raise ValueError(f"render_seat must be None (full table) or a seat 0-3 (an int), got {render_seat!r}")
            render_seat = int(render_seat)
        if illegal_action not in ("raise", "penalize"):
            raise ValueError(f"illegal_action must be 'raise' or 'penalize', got {illegal_action!r}")
        table = build_table(type(self), rule_overrides)  # the rule set this page binds
        self.config = table.config
        self.rules = table.rules
        self.render_mode = render_mode
        self.render_seat = render_seat
        self.num_hands = num_hands
        self.illegal_action = illegal_action
        self.possible_agents = list(AGENTS)
        self.agents = []
        self._action_space = _ActionSpace(A.NUM_ACTIONS)
        self._observation_space = spaces.Dict(
            {
                "observation": observation_box(ANALYSIS_PIECES if analysis_features else ()),
                "action_mask": spaces.Box(0, 1, (A.NUM_ACTIONS,), np.int8),
            }
        )
        self.action_spaces = {a: self._action_space for a in AGENTS}
        self.observation_spaces = {a: self._observation_space for a in AGENTS}
        self.state_space = state_box()
        self.game = table.new_game(num_hands)
        self._encoder = ObservationEncoder(self.config.concealed_kong_visible)
        self.analysis_features = analysis_features
        """Append `mahjong_env.features.ANALYSIS_CHANNELS` to every observation (from the player's view)."""
        self._custom_silver: list[float] | None = None
        self._shown_silver: tuple[list[float], Any] = ([], None)  # the silver and base that the infos show

    # ------------------------------------------------------------------ spaces

    def observation_space(self, agent: str) -> spaces.Space:
        return self._observation_space

    def action_space(self, agent: str) -> spaces.Space:
        return self._action_space

    # ------------------------------------------------------------------ reset

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new episode. Every option is checked before anything changes (API.md
        "Reset options"): a bad one raises ValueError and leaves the env as it was."""
        checked = self._check_reset_options(options)
        if seed is None:
            seed = int(np.random.SeedSequence().entropy % (2**63))
        seed = _integer(seed, "seed")
        if seed < 0:
            raise ValueError(f"seed must be a non-negative int or None, got {seed!r}")
        self._start_episode(seed, checked)

    def _check_reset_options(self, options: dict[str, Any] | None) -> _ResetOptions:
        """The reset options checked and parsed, nothing changed: a bad one raises ValueError,
        an unknown key is ignored with a warning (the Gymnasium env checks them this way before
        it draws its episode seed)."""
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"options must be a dict or None, got {type(options).__name__}")
        options = dict(options or {})
        unknown = sorted(set(options) - _RESET_KEYS)
        if unknown:
            warnings.warn(f"ignoring unknown reset option(s) {unknown}; known: {sorted(_RESET_KEYS)}", stacklevel=3)
        dealer = options.get("dealer")
        if dealer is not None:
            dealer = _integer(dealer, "options['dealer']")
            if dealer not in (0, 1, 2, 3):
                raise ValueError(f"options['dealer'] must be a seat 0-3, got {dealer!r}")
        deal = None
        if ("hands" in options) != ("wall" in options):
            raise ValueError("options['hands'] and options['wall'] must be given together")
        if "hands" in options:
            deal = validate_deal(options["hands"], options["wall"], dealer)
        dice = options.get("dice")
        if dice is not None:
            dice = validate_dice(dice, self.config_dice(), "options['dice']")
        silver = None if options.get("silver") is None else validate_silver(options["silver"])
        return _ResetOptions(dealer, deal, dice, silver)

    def _start_episode(self, seed: int, options: _ResetOptions) -> None:
        """`reset` with a checked seed and checked options: from here on the env changes."""
        self._action_space.seed_later(seed)
        if options.deal is not None:
            dealer = options.deal[2]
        elif options.dealer is not None:
            dealer = options.dealer
        else:
            dealer = first_dealer(seed)
        game = self.game
        game.start_match(seed, dealer, options.silver or [self.rules.starting_silver] * 4)
        self._custom_silver = options.silver
        if options.deal is not None:
            hands, wall = options.deal[0], options.deal[1]
        else:
            hands, wall = shuffled_deal(seed, 0, dealer)
        game.start_hand(hands, wall, options.dice)
        self.agents = list(AGENTS)
        self.rewards = {a: 0.0 for a in AGENTS}
        self._cumulative_rewards = {a: 0.0 for a in AGENTS}
        self.terminations = {a: False for a in AGENTS}
        self.truncations = {a: False for a in AGENTS}
        self.infos = {a: {} for a in AGENTS}
        self._refresh_infos()
        self.agent_selection = AGENTS[game.actor]

    def config_dice(self) -> int:
        return self.rules.dice_count

    # ------------------------------------------------------------------ stepping

    def step(self, action: int | None) -> None:
        self._step(action, self.illegal_action == "raise")

    def _step(self, action: int | None, raise_illegal: bool) -> None:
        """`step`; an illegal action raises ValueError (changing nothing) if ``raise_illegal``,
        else the mover forfeits (API.md ``illegal_action="penalize"``)."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self.game
        seat = _SEAT[agent]
        if action is None:
            action = -1
        elif action.__class__ is not int:
            action = action_int(action)
        legal = game.legal_actions()
        is_legal = action in legal
        if not is_legal and raise_illegal:
            # checked before anything changes: a rejected call leaves the env as it was (API.md)
            raise ValueError(A.illegal_action_message(action, agent, legal))
        self.infos[agent].pop("result", None)
        cumulative = self._cumulative_rewards
        cumulative[agent] = 0.0
        if is_legal:
            game.step(action)
        else:
            game.penalize(seat, action)
        rewards = game.rewards
        r0, r1, r2, r3 = rewards
        self.rewards = {_A0: r0, _A1: r1, _A2: r2, _A3: r3}  # a display: a third of dict(zip(...))'s time
        result = game.end_of_step()
        if result is not None:  # each agent its own copy: editing one changes no other, nor the record
            for a in AGENTS:
                self.infos[a]["result"] = _plain_copy(result)
            if game.over:
                for a in AGENTS:
                    self.terminations[a] = True
        if self.rules.uses_silver:
            shown_silver, shown_base = self._shown_silver
            if game.silver != shown_silver or game.base != shown_base:  # silver moves only with a payment
                self._refresh_infos()
        if any(rewards):  # AECEnv._accumulate_rewards (every agent is live here); adding 0.0 changes nothing
            for a, reward in zip(AGENTS, rewards):
                cumulative[a] += reward
        self.agent_selection = AGENTS[game.actor] if not game.over else self._first_live()
        if self.render_mode == "human" and sees_decider(game, self.render_seat):
            self.render()  # R13: no frame for another seat's private decision (it would show one was asked)

    def _forfeit(self, action: int | None) -> None:
        """The agent to move forfeits: the ``illegal`` outcome of ``illegal_action="penalize"``
        (it pays 1 point to each other seat, the episode ends), whatever this env's
        ``illegal_action``. For an adapter whose own agent misbehaved (the Gymnasium env's
        opponents); ``action`` is the illegal id it gave, the record logs it (None: no id)."""
        if action is not None and action in self.game.legal_actions():
            raise ValueError(f"action {A.action_name(action)} is legal: a forfeit needs an illegal one")
        self._step(action, raise_illegal=False)

    def _first_live(self) -> str:
        return self.agents[0] if self.agents else AGENTS[0]

    def _refresh_infos(self) -> None:
        game = self.game
        if self.rules.uses_silver:  # X7: silver and base
            silver = list(game.silver)
            base = game.base
            for a in AGENTS:  # each agent its own list: editing one changes no other
                info = self.infos[a]
                info["silver"] = list(silver)
                info["base"] = base
            self._shown_silver = (silver, base)

    # ------------------------------------------------------------------ observations

    def action_mask(self, agent: str) -> np.ndarray:
        mask = bytearray(A.NUM_ACTIONS)  # set item by item: faster than a fancy write
        game = self.game
        if _SEAT[agent] == game.actor and game.phase != _OVER:
            for a in game.legal_actions():
                mask[a] = 1
        return np.frombuffer(mask, np.int8)  # a writable array over this call's own bytearray

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = _SEAT[agent]
        obs = self._encoder.observation(self.game, seat)
        mask = self.action_mask(agent)
        if self.analysis_features:  # computed from the player's own view only (R13)
            extra = analysis_planes(
                self.view(agent), get_variant(self.metadata["name"]).name, self.config.to_dict(), mask
            )
            obs = np.concatenate([obs, extra])
        return {"observation": obs, "action_mask": mask}

    def legal_actions(self, agent: str) -> list[str]:
        """Names of ``agent``'s legal actions (empty when it is not deciding)."""
        game = self.game
        if game.phase == _OVER or _SEAT[agent] != game.actor:
            return []
        return [A.action_name(a) for a in game.legal_actions()]

    def view(self, agent: str) -> dict[str, Any]:
        """``agent``'s view of the table in readable form (API.md).

        ``phase``, ``claim``, ``to_move`` (present while a player is to move): while a player
        decides privately (``claim``, ``rob``, ``bao_view``, ``duibao``, ``fenzhang``), only that
        player's view shows the phase, the claim and ``to_move``; every other view shows
        ``"phase": "turn"``, ``"claim": None`` and no ``to_move`` (RULES.md R13: whether anybody
        is asked depends on hidden tiles, and such a state is never one in which the others act).
        """
        return table_view(self.game, _SEAT[agent], self.config.concealed_kong_visible)

    def render_view(self, agent: str) -> str:
        return render_text(self.view(agent), self.metadata["name"])

    def state(self) -> np.ndarray:
        """Privileged global state for centralised critics (never given to tournament agents)."""
        return encode_state(self.game)

    def render(self) -> str | np.ndarray | None:
        """The table (``render_seat`` None) or that seat's view: text (``"ansi"``), printed
        (``"human"``, also after every step that seat may see) or an RGB frame (``"rgb_array"``,
        `mahjong_env.adapters.picture`)."""
        if self.render_mode is None:
            warnings.warn(
                "render() called without a render_mode; pass render_mode='ansi', 'human' or 'rgb_array'", stacklevel=2
            )
            return None
        if self.render_seat is None:
            view = table_view(self.game, None, True)
        else:
            view = self.view(AGENTS[self.render_seat])
        if self.render_mode == "rgb_array":
            return table_picture(view, self.metadata["name"])
        text = render_text(view, self.metadata["name"])
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        return None

    # ------------------------------------------------------------------ records

    def record(self) -> dict[str, Any]:
        """JSON-serialisable record of the episode so far (API.md "Game records"); it also
        carries ``"silver"`` when the reset option set the starting silver (X7)."""
        record = copy.deepcopy(self.game.match_record(self.metadata["name"], self.config.to_dict()))
        if self._custom_silver is not None:
            record["silver"] = list(self._custom_silver)
        return record


def make_env_factory(raw_cls: type) -> Any:
    """The ``env()`` factory: ``raw_env`` wrapped as API.md says (in subclasses of PettingZoo's
    `AssertOutOfBoundsWrapper` and `OrderEnforcingWrapper` that skip the attribute forwarding
    on the per-decision path, `mahjong_env.adapters.wrappers.wrap`)."""

    def env(**kwargs: Any) -> AECEnv:
        return wrap(raw_cls(**kwargs))

    env.__doc__ = raw_cls.__doc__  # help(changchun_v0.env) shows the variant's documentation
    env.__module__ = raw_cls.__module__
    env.__qualname__ = "env"
    return env
