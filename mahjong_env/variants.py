"""The variant registry: the one table of the rule sets this package plays.

Each `Variant` names a rule set (``"xinjiang"``), its environment name (``"xinjiang_v0"``:
``metadata["name"]``, the ``variant`` of game records), the module that defines its PettingZoo
env (``env()`` and ``raw_env``), and holds its rules class and config class; the config class's
profile table is ``profiles`` (RULES.md C14). The env module is imported only when its env is
asked for, so the core and the vector env reach a rule set without the PettingZoo pages.
Tools, vector envs, records, the Gymnasium view and the framework registrations look variants up
here (`get_variant`), so a new rule set is one entry in ``_BUILTIN`` plus its own modules
(``rules/<name>.py`` and ``<name>_v0.py``); `register` adds one at run time (tests, plug-ins).

`build_table` is the one place where a variant and rule-field overrides become a checked config,
a rule set and games (the AEC env and `VectorMahjong` both build theirs with it). The registry
imports no adapter: the framework registrations (`mahjong_env.adapters.registration`) subscribe
with `add_listener` and hear of every variant registered or removed.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any, Protocol

from mahjong_env.engine.game import Game
from mahjong_env.rules.base import RuleConfig, RuleSet, make_config
from mahjong_env.rules.changchun import ChangchunConfig, ChangchunRules
from mahjong_env.rules.xinjiang import XinjiangConfig, XinjiangRules

__all__ = [
    "DEFAULT_VARIANT",
    "RuleBinding",
    "Table",
    "Variant",
    "add_listener",
    "all_variants",
    "build_table",
    "get_variant",
    "register",
    "unregister",
    "variant_names",
]

DEFAULT_VARIANT = "changchun"
"""The variant an env or a tool plays when none is named."""


@dataclasses.dataclass(frozen=True)
class Variant:
    """One rule set: ``name`` (``"xinjiang"``), ``env_name`` (``"xinjiang_v0"``), ``module``,
    the import path of its env module (``env()`` and ``raw_env``), and the rule set's classes:
    ``rules_class`` (a `RuleSet`) and ``config_class`` (its frozen `RuleConfig`), the same two
    that the module's ``raw_env`` binds."""

    name: str
    env_name: str
    module: str
    rules_class: type[RuleSet]
    config_class: type[RuleConfig]

    @property
    def env_module(self) -> ModuleType:
        """The env module (imported on first use)."""
        return importlib.import_module(self.module)

    @property
    def raw_env(self) -> type:
        """The unwrapped PettingZoo env class."""
        cls: type = self.env_module.raw_env
        return cls

    @property
    def env(self) -> Callable[..., Any]:
        """The ``env()`` constructor (``raw_env`` in PettingZoo's wrappers)."""
        factory: Callable[..., Any] = self.env_module.env
        return factory

    @property
    def profiles(self) -> Mapping[str, Mapping[str, Any]]:
        """The named sets of rule-field values (the ``profile`` keyword), the config's table."""
        table: Mapping[str, Mapping[str, Any]] = self.config_class.profiles  # type: ignore[attr-defined]
        return table

    @property
    def pettingzoo_id(self) -> str:
        """Id in PettingZoo's registry: ``"mahjong_env/xinjiang-v0"``."""
        return "mahjong_env/" + self.env_name.replace("_", "-")

    @property
    def gymnasium_id(self) -> str:
        """Id in Gymnasium's registry: ``"mahjong_env/Xinjiang-v0"``."""
        return "mahjong_env/" + self.env_name[0].upper() + self.env_name[1:].replace("_", "-")


class RuleBinding(Protocol):
    """What `build_table` needs of a variant: its rules class and config class (a `Variant`, or
    a page's ``raw_env``, which binds the same two)."""

    @property
    def rules_class(self) -> type[RuleSet]: ...

    @property
    def config_class(self) -> type[RuleConfig]: ...


@dataclasses.dataclass(frozen=True)
class Table:
    """The rules one table plays by: the checked ``config`` and the rule set ``rules`` over it."""

    config: RuleConfig
    rules: RuleSet

    def new_game(self, num_hands: int) -> Game:
        """A `Game` of ``num_hands`` hands under these rules (no match started yet)."""
        return Game(self.rules, num_hands)


def build_table(variant: RuleBinding | str, overrides: Mapping[str, Any]) -> Table:
    """The config and rule set of ``variant`` (a `Variant`, a name `get_variant` knows, or a
    ``raw_env`` class) with the rule-field ``overrides``: ``profile`` first, then every other
    field (`mahjong_env.rules.base.make_config`; an unknown or ill-typed one raises ValueError)."""
    binding = get_variant(variant) if isinstance(variant, str) else variant
    config = make_config(binding.config_class, overrides)
    return Table(config, binding.rules_class(config))


_BUILTIN = (
    Variant("xinjiang", "xinjiang_v0", "mahjong_env.xinjiang_v0", XinjiangRules, XinjiangConfig),
    Variant("changchun", "changchun_v0", "mahjong_env.changchun_v0", ChangchunRules, ChangchunConfig),
)
_REGISTRY: dict[str, Variant] = {v.name: v for v in _BUILTIN}
_LISTENERS: list[tuple[Callable[[Variant], None], Callable[[Variant], None]]] = []


def get_variant(name: str) -> Variant:
    """The variant called ``name``: its rule-set name (``"xinjiang"``) or its env name
    (``"xinjiang_v0"``, as in ``metadata["name"]`` and game records); both are accepted
    everywhere a variant is named. Anything else raises ValueError listing the valid names."""
    if isinstance(name, str):
        found = _REGISTRY.get(name)
        if found is not None:
            return found
        for variant in _REGISTRY.values():
            if variant.env_name == name:
                return variant
    valid = ", ".join(f"{v.name!r} ({v.env_name!r})" for v in _REGISTRY.values())
    raise ValueError(f"unknown variant {name!r}; valid variants: {valid}")


def variant_names() -> tuple[str, ...]:
    """The rule-set names, in registration order (``("xinjiang", "changchun")``)."""
    return tuple(_REGISTRY)


def all_variants() -> tuple[Variant, ...]:
    """Every registered variant, in registration order."""
    return tuple(_REGISTRY.values())


def add_listener(on_register: Callable[[Variant], None], on_unregister: Callable[[Variant], None]) -> None:
    """Call ``on_register(variant)`` after each `register` and ``on_unregister(variant)`` after
    each `unregister` from now on (once per pair: adding the same pair again changes nothing).
    The package's import adds the env-id registrations (`mahjong_env.adapters.registration`)."""
    if (on_register, on_unregister) not in _LISTENERS:
        _LISTENERS.append((on_register, on_unregister))


def register(variant: Variant) -> Variant:
    """Add ``variant`` (and, through the listeners, its env ids in PettingZoo's and Gymnasium's
    registries). Its name and env name must be new: a clash raises ValueError and changes
    nothing."""
    taken = {n for v in _REGISTRY.values() for n in (v.name, v.env_name)}
    clash = sorted({variant.name, variant.env_name} & taken)
    if clash:
        raise ValueError(f"variant name(s) {', '.join(clash)} already registered")
    _REGISTRY[variant.name] = variant
    for on_register, _ in _LISTENERS:
        on_register(variant)
    return variant


def unregister(name: str) -> None:
    """Remove a variant added with `register` (and its env ids); built-in variants stay."""
    variant = get_variant(name)
    if variant in _BUILTIN:
        raise ValueError(f"{variant.name!r} is a built-in variant and cannot be unregistered")
    del _REGISTRY[variant.name]
    for _, on_unregister in _LISTENERS:
        on_unregister(variant)
