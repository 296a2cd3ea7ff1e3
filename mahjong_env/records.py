"""Game records and their replay (API.md "Game records").

A record is ``{"variant", "config", "seed", "hands": [{"dealer", "hands", "wall", "dice",
"actions", "result"}, ...]}``; `replay` plays every hand again through the engine and checks
each step against it. Records are stored one JSON object per line (``.jsonl``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from mahjong_env import actions as A
from mahjong_env.engine.game import Game
from mahjong_env.engine.state import Phase
from mahjong_env.tiles import parse_tiles

__all__ = ["replay", "replay_hand", "variant_rules", "read_jsonl", "write_jsonl"]


def variant_rules(variant: str, config: dict[str, Any]) -> Any:
    """The rule set object of a recorded variant and configuration."""
    from mahjong_env.rules.base import make_config
    from mahjong_env.rules.changchun import ChangchunConfig, ChangchunRules
    from mahjong_env.rules.xinjiang import XinjiangConfig, XinjiangRules

    table = {"xinjiang_v0": (XinjiangRules, XinjiangConfig), "changchun_v0": (ChangchunRules, ChangchunConfig)}
    if variant not in table:
        raise ValueError(f"record variant {variant!r} is not one of {sorted(table)}")
    rules_cls, config_cls = table[variant]
    return rules_cls(make_config(config_cls, dict(config)))


def replay_hand(rules: Any, seed: int, hand_index: int, hand: dict[str, Any], on_step: Any = None) -> Game:
    """Replay one recorded hand; returns the finished `Game`. ``on_step(game)`` is called at
    the start and after every action (the HTML viewer uses it)."""
    game = Game(rules, 1)
    game.start_match(seed, int(hand["dealer"]), [0.0] * 4)
    game.hand_index = hand_index
    game.start_hand([parse_tiles(h) for h in hand["hands"]], parse_tiles(hand["wall"]), list(hand["dice"]))
    if on_step is not None:
        on_step(game, None)
    for i, (seat, name) in enumerate(hand["actions"]):
        if game.phase == Phase.OVER:
            raise ValueError(f"hand {hand_index}, step {i}: the record goes on after the hand ended")
        if seat != game.actor:
            raise ValueError(
                f"hand {hand_index}, step {i}: record says player_{seat} acts but player_{game.actor} is to move"
            )
        if name.startswith("illegal"):  # an illegal action penalised by the env (API.md)
            game.penalize(seat, None)
            game.log[-1][1] = name
            if on_step is not None:
                on_step(game, (seat, name))
            continue
        try:
            action = A.action_id(name)
            game.step(action)
        except ValueError as error:
            raise ValueError(f"hand {hand_index}, step {i} ({name!r} by player_{seat}): {error}") from None
        if on_step is not None:
            on_step(game, (seat, name))
    return game


def replay(record: dict[str, Any]) -> list[dict[str, Any]]:
    """Replay every hand of a record through the engine; returns the results, which equal the
    recorded ones, or raises ValueError naming the first inconsistent step."""
    rules = variant_rules(record["variant"], record.get("config", {}))
    results = []
    for index, hand in enumerate(record["hands"]):
        game = replay_hand(rules, int(record["seed"]), index, hand)
        if game.phase != Phase.OVER:
            if hand.get("result") is not None:
                raise ValueError(f"hand {index}: the record ends before the hand does")
            continue
        result = json.loads(json.dumps(game.result))
        recorded = hand.get("result")
        if recorded is not None and json.loads(json.dumps(recorded)) != result:
            raise ValueError(f"hand {index}: replayed result {result} differs from the recorded {recorded}")
        results.append(result)
    return results


def write_jsonl(path: str | Path, records: list[dict[str, Any]]) -> None:
    with open(path, "a", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")


def read_jsonl(path: str | Path) -> Iterator[dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)
