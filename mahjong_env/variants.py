"""The variant registry: the one table of the rule sets this package plays.

Each `Variant` names a rule set (``"xinjiang"``), its environment name (``"xinjiang_v0"``:
``metadata["name"]``, the ``variant`` of game records) and the module that defines its PettingZoo
env (``env()`` and ``raw_env``). Everything else is read from that module when first asked for:
the ``raw_env`` class, its rules class and config class, and the config class's profile table
(``profiles``, RULES.md C14). Tools, vector envs, records, the Gymnasium view and the framework
registrations look variants up here (`get_variant`), so a new rule set is one entry in
``_BUILTIN`` plus its own modules (``rules/<name>.py`` and ``<name>_v0.py``); `register` adds one
at run time (tests, plug-ins).
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

__all__ = ["Variant", "get_variant", "variant_names", "all_variants", "register", "unregister"]


@dataclasses.dataclass(frozen=True)
class Variant:
    """One rule set: ``name`` (``"xinjiang"``), ``env_name`` (``"xinjiang_v0"``) and ``module``,
    the import path of its env module (``env()`` and ``raw_env``)."""

    name: str
    env_name: str
    module: str

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
    def rules_class(self) -> type:
        cls: type = self.raw_env.rules_class  # type: ignore[attr-defined]
        return cls

    @property
    def config_class(self) -> type:
        cls: type = self.raw_env.config_class  # type: ignore[attr-defined]
        return cls

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


_BUILTIN = (
    Variant("xinjiang", "xinjiang_v0", "mahjong_env.xinjiang_v0"),
    Variant("changchun", "changchun_v0", "mahjong_env.changchun_v0"),
)
_REGISTRY: dict[str, Variant] = {v.name: v for v in _BUILTIN}


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


def register(variant: Variant) -> Variant:
    """Add ``variant`` (and its env ids in PettingZoo's and Gymnasium's registries). Its name
    and env name must be new: a clash raises ValueError and changes nothing."""
    taken = {n for v in _REGISTRY.values() for n in (v.name, v.env_name)}
    clash = sorted({variant.name, variant.env_name} & taken)
    if clash:
        raise ValueError(f"variant name(s) {', '.join(clash)} already registered")
    _REGISTRY[variant.name] = variant
    from mahjong_env.adapters.registration import register_variant

    register_variant(variant)
    return variant


def unregister(name: str) -> None:
    """Remove a variant added with `register` (and its env ids); built-in variants stay."""
    variant = get_variant(name)
    if variant in _BUILTIN:
        raise ValueError(f"{variant.name!r} is a built-in variant and cannot be unregistered")
    del _REGISTRY[variant.name]
    from mahjong_env.adapters.registration import unregister_variant

    unregister_variant(variant)
