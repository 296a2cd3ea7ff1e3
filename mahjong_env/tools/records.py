"""Game records, their validation and their replay (API.md "Game records").

A record is ``{"variant", "config", "seed", "num_hands", "hands": [{"dealer", "hands", "wall",
"dice", "actions", "result"}, ...]}``, optionally with ``"players"`` (four names, by seat, for
the viewers) and ``"silver"`` (the four starting silver amounts when the reset option set them,
X7). `check_record` validates its shape and every deal (R1: four of each of the 34 kinds; R3:
the dealer holds 14 tiles; hands after the first are dealt from (seed, hand index) to the R11
dealer), `replay` then plays every hand again through the engine as one match, checking every
step (each action is legal, a penalised ``illegal ...`` action names one that was not legal
or, as ``illegal -1``, none at all, from any seat,
the dice are the ones the hand rolled, the result is the recorded one). Anything malformed or
inconsistent raises ValueError naming the problem, never another exception. Records are stored
one JSON object per line (``.jsonl``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from mahjong_env import actions as A
from mahjong_env.adapters.aec import validate_deal, validate_dice, validate_silver
from mahjong_env.engine.game import Game
from mahjong_env.engine.state import Phase
from mahjong_env.tiles import format_tiles, parse_tiles
from mahjong_env.wall import shuffled_deal

__all__ = [
    "check_record",
    "replay",
    "replay_hand",
    "replay_match",
    "variant_rules",
    "read_jsonl",
    "write_jsonl",
]

_HAND_KEYS = ("dealer", "hands", "wall", "dice", "actions", "result")
OnStep = Callable[[Game, "tuple[int, str] | None"], None]


def variant_rules(variant: Any, config: Any) -> Any:
    """The rule set object of a recorded variant and configuration (ValueError if invalid)."""
    from mahjong_env.rules.base import make_config
    from mahjong_env.variants import get_variant

    try:
        entry = get_variant(variant)
    except ValueError as err:
        raise ValueError(f"record variant: {err}") from None
    if not isinstance(config, dict):
        raise ValueError(f"record config must be a dict of rule fields, got {type(config).__name__}")
    return entry.rules_class(make_config(entry.config_class, dict(config)))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_hand(rules: Any, index: int, hand: Any) -> tuple[int, list[list[int]], list[int], list[int]]:
    """The parsed deal of one recorded hand: (dealer, hands, wall, dice); ValueError if malformed."""
    where = f"hand {index}"
    if not isinstance(hand, dict):
        raise ValueError(f"{where}: must be a dict with keys {', '.join(_HAND_KEYS)}, got {type(hand).__name__}")
    missing = [key for key in _HAND_KEYS if key not in hand]
    if missing:
        raise ValueError(f"{where}: missing key(s) {', '.join(missing)}")
    dealer = hand["dealer"]
    if not _is_int(dealer) or dealer not in (0, 1, 2, 3):
        raise ValueError(f"{where}: dealer must be a seat 0-3, got {dealer!r}")
    try:
        hands, wall, _ = validate_deal(hand["hands"], hand["wall"], dealer)  # R1, R3
    except ValueError as error:
        raise ValueError(f"{where}: {str(error).replace('options', 'record')}") from None
    dice = validate_dice(hand["dice"], rules.dice_count, f"{where}: dice")
    actions = hand["actions"]
    if not isinstance(actions, list):
        raise ValueError(f"{where}: actions must be a list of [seat, action name] pairs")
    for i, item in enumerate(actions):
        if (
            not isinstance(item, (list, tuple))
            or len(item) != 2
            or not _is_int(item[0])
            or item[0] not in (0, 1, 2, 3)
            or not isinstance(item[1], str)
        ):
            raise ValueError(f"{where}, step {i}: each action must be [seat 0-3, action name], got {item!r}")
    if hand["result"] is not None and not isinstance(hand["result"], dict):
        raise ValueError(f"{where}: result must be a dict or null, got {type(hand['result']).__name__}")
    return dealer, hands, wall, dice


def check_record(record: Any) -> Any:
    """Validate a record's shape (see the module doc) and return its rule set; ValueError
    naming the first malformed field. The steps are checked by `replay`."""
    if not isinstance(record, dict):
        raise ValueError(f"a record must be a dict, got {type(record).__name__}")
    for key in ("variant", "seed", "hands"):
        if key not in record:
            raise ValueError(f"record has no {key!r} key (API.md 'Game records')")
    rules = variant_rules(record["variant"], record.get("config", {}))
    seed = record["seed"]
    if not _is_int(seed) or seed < 0:
        raise ValueError(f"record seed must be a non-negative int, got {seed!r}")
    hands = record["hands"]
    if not isinstance(hands, list) or not hands:
        raise ValueError("record hands must be a non-empty list of hands")
    num_hands = record.get("num_hands", len(hands))
    if not _is_int(num_hands) or num_hands < len(hands):
        raise ValueError(f"record num_hands must be an int >= the {len(hands)} hand(s) recorded, got {num_hands!r}")
    players = record.get("players")
    if players is not None and (
        not isinstance(players, list) or len(players) != 4 or not all(isinstance(p, str) for p in players)
    ):
        raise ValueError(f"record players must be four names by seat, got {players!r}")
    if "silver" in record:
        validate_silver(record["silver"])
    for index, hand in enumerate(hands):
        _check_hand(rules, index, hand)
    return rules


def _play_hand(game: Game, rules: Any, index: int, hand: dict[str, Any], on_step: OnStep | None) -> None:
    """Deal one recorded hand into ``game`` (which carries the match's scores and silver) and
    replay its actions, checking each one."""
    dealer, hands, wall, dice = _check_hand(rules, index, hand)
    game.hand_index = index
    game.dealer = dealer
    game.over = False
    game.start_hand(hands, wall, list(dice))
    if on_step is not None:
        on_step(game, None)
    for i, (seat, name) in enumerate(hand["actions"]):
        where = f"hand {index}, step {i} ({name!r} by player_{seat})"
        if game.phase == Phase.OVER:
            raise ValueError(f"{where}: the record goes on after the hand ended")
        if seat != game.actor and name != _FORFEIT:
            raise ValueError(f"{where}: record says player_{seat} acts but player_{game.actor} is to move")
        if name.startswith("illegal "):  # an illegal action penalised by the env (API.md)
            game.penalize(seat, _illegal_action(game, where, name.removeprefix("illegal ")))
        else:
            try:
                game.step(A.action_id(name))
            except ValueError as error:
                raise ValueError(f"{where}: {error}") from None
        if on_step is not None:
            on_step(game, (seat, name))
    if list(game.dice.rolls) != dice:
        raise ValueError(f"hand {index}: the record's dice {dice} are not the {game.dice.rolls} the hand rolled")


_FORFEIT = "illegal -1"
"""A penalty that names no action: a missing action (None) of the mover, or a forfeit of any
seat outside its turn (a tournament entrant that could not be built for the hand)."""


def _illegal_action(game: Game, where: str, shown: str) -> int:
    """The action a recorded ``illegal <shown>`` penalty names; it must not have been legal."""
    if shown.lstrip("-").isdigit():
        value = int(shown)
        if 0 <= value < A.NUM_ACTIONS:
            raise ValueError(f"{where}: an action id in range is recorded by name, not as {shown!r}")
        return value
    try:
        action = A.action_id(shown)
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None
    if action in game.legal_actions():
        raise ValueError(f"{where}: {shown!r} was legal, so it cannot have been penalised")
    return action


def _normalised(result: Any, where: str) -> Any:
    try:
        return json.loads(json.dumps(result, allow_nan=False))
    except (TypeError, ValueError, RecursionError) as error:
        raise ValueError(f"{where}: the recorded result is not plain JSON ({type(error).__name__})") from None


def replay_match(
    record: dict[str, Any], last: int | None = None, on_step: OnStep | None = None
) -> tuple[Game, list[dict[str, Any]]]:
    """Replay hands 0..``last`` (default: all) of a record as one match; returns
    ``(game, results)``: the `Game` after the last replayed hand (scores and silver carried
    over from the earlier hands, as the env had them) and each finished hand's result.
    ``on_step(game, action)`` is called at the start and after every action of hand ``last``
    (the HTML viewer uses it). ValueError for anything malformed or inconsistent."""
    rules = check_record(record)
    hands = record["hands"]
    last = len(hands) - 1 if last is None else last
    if not _is_int(last) or not 0 <= last < len(hands):
        raise ValueError(
            f"hand must be an index 0..{len(hands) - 1} into the record's {len(hands)} hand(s), got {last!r}"
        )
    game = Game(rules, int(record.get("num_hands", len(hands))))
    silver = record.get("silver") or [rules.starting_silver] * 4
    game.start_match(record["seed"], hands[0]["dealer"], [float(x) for x in silver])
    results: list[dict[str, Any]] = []
    for index, hand in enumerate(hands[: last + 1]):
        if index > 0:
            _check_dealt(record, index, game)
        _play_hand(game, rules, index, hand, on_step if index == last else None)
        recorded = hand["result"]
        if game.phase != Phase.OVER:
            if recorded is not None:
                raise ValueError(f"hand {index}: the record ends before the hand does")
            if index + 1 < len(hands):
                raise ValueError(f"hand {index}: unfinished, yet the record has a hand {index + 1}")
            continue
        result = _normalised(game.result, f"hand {index}")
        if recorded is None or _normalised(recorded, f"hand {index}") != result:
            raise ValueError(f"hand {index}: replayed result {result} differs from the recorded {recorded}")
        results.append(result)
        if game.over and index + 1 < len(hands):
            raise ValueError(f"hand {index}: the match ended there, yet the record has a hand {index + 1}")
    return game, results


def _check_dealt(record: dict[str, Any], index: int, game: Game) -> None:
    """R3, R11: a later hand of a match is dealt from (seed, hand index) to the R11 dealer."""
    hand = record["hands"][index]
    dealer = game.next_hand_dealer()
    if hand["dealer"] != dealer:
        raise ValueError(f"hand {index}: dealer is {hand['dealer']}, but R11 makes player_{dealer} the dealer")
    hands, wall = shuffled_deal(record["seed"], index, dealer)
    if [format_tiles(h) for h in hands] != [format_tiles(parse_tiles(h)) for h in hand["hands"]] or format_tiles(
        wall
    ) != format_tiles(parse_tiles(hand["wall"])):
        raise ValueError(f"hand {index}: the deal is not the one the seed deals for that hand (R3)")


def replay_hand(rules: Any, seed: int, hand_index: int, hand: dict[str, Any], on_step: OnStep | None = None) -> Game:
    """Replay one recorded hand on its own (scores start at zero); returns the `Game`.
    ``on_step(game, action)`` is called at the start and after every action."""
    if not _is_int(seed) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    game = Game(rules, 1)
    game.start_match(seed, 0, [rules.starting_silver] * 4)
    _play_hand(game, rules, hand_index, hand, on_step)
    return game


def replay(record: dict[str, Any]) -> list[dict[str, Any]]:
    """Replay every hand of a record through the engine; returns the results, which equal the
    recorded ones, or raises ValueError naming the first inconsistent step."""
    return replay_match(record)[1]


def write_jsonl(path: str | Path, records: list[dict[str, Any]]) -> None:
    """Append each record as one line of JSON."""
    with open(path, "a", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")


def read_jsonl(path: str | Path) -> Iterator[dict[str, Any]]:
    """The records of a JSON Lines file, one per non-empty line (ValueError naming a bad line)."""
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except (json.JSONDecodeError, RecursionError) as error:
                    raise ValueError(f"{path}, line {number}: not JSON ({type(error).__name__})") from None
