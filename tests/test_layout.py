"""The package layout that docs/architecture.md ("Layers") describes, and the rules that keep
its arrows pointing down.

The layers, lowest first: the core at the top level of ``mahjong_env`` (with ``hand/``,
``engine/`` and ``rules/``), the framework adapters in ``adapters/``, the PettingZoo pages
(``xinjiang_v0.py``, ``changchun_v0.py``: a rule set bound to the AEC env), the tools in
``tools/``, and the package's ``__init__``. No module imports a layer above its own (the pages
and the rest of the package are reached from below only through the variant registry), and
nothing in ``mahjong_env`` imports ``agents`` or ``training``. Imports inside functions count.

No code outside ``rules/`` names a variant: no string literal but a docstring spells a variant's
name, and no module imports a variant's rules module, except the few places in `NAMES_A_VARIANT`.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import mahjong_env

PACKAGE = Path(mahjong_env.__file__).parent
ROOT = PACKAGE.parent

CORE_MODULES = {
    "tiles", "actions", "wall", "visibility", "observation", "view", "features", "variants",
}
CORE_PACKAGES = {"hand", "engine", "rules"}
PAGES = {"__init__", "xinjiang_v0", "changchun_v0"}  # the PettingZoo entry points
NATIVE = {"_native"}  # which core modules run compiled (mahjong_env._native)
LAYERS = {"adapters", "tools"}
LEVELS = {"core": 0, "adapters": 1, "pages": 2, "tools": 3, "package": 4}
"""The layers, lowest first (docs/architecture.md "Layers"); ``package`` is ``mahjong_env/__init__``."""

VARIANT_NAME = re.compile("xinjiang|changchun", re.IGNORECASE)
NAMES_A_VARIANT = {
    "mahjong_env/__init__.py": "the package's face: exports the two pages",
    "mahjong_env/_native.py": "the build's list of the modules it compiles",
    "mahjong_env/variants.py": "the registry: the built-in variants' names and rule sets, the default variant",
    "mahjong_env/xinjiang_v0.py": "a page: binds its rule set",
    "mahjong_env/changchun_v0.py": "a page: binds its rule set",
    "mahjong_env/tools/play.py": "to move: the default of play(variant=...) should be variants.DEFAULT_VARIANT",
    "agents/__init__.py": "to move: the spec language's help names torch:changchun (agents/spec.py)",
    "agents/adapters.py": "to move: _VARIANTS should be variants.variant_names()",
    "agents/bench.py": "to move: --variant choices should be variants.variant_names()",
    "agents/heuristic.py": "to move: imports Changchun's special groups (C5) instead of asking the rule set",
    "agents/tournament/cli.py": "the --help examples",
    "agents/tournament/config.py": "to move: VARIANTS should be variants.variant_names()",
    "training/paired.py": "to move: --variant choices and defaults should come from the registry",
    "training/ppo.py": "to move: REWARD_SCALE per variant, --variant choices and default",
    "training/bc.py": "to move: --variant choices and default should come from the registry",
    "training/duplicate.py": "to move: --variant choices and default should come from the registry",
    "training/evaluate.py": "to move: --variant choices and default should come from the registry",
    "training/rllib_example.py": "to move: --variant choices and default should come from the registry",
}
"""Files outside ``mahjong_env/rules/`` that may name a variant, and why (relative to the
repository root). The ones marked "to move" should lose their entry."""


def imported_modules(path: Path) -> set[str]:
    """Every absolute module name imported anywhere in the file (relative imports stay inside
    their own package). A name the package re-exports (``from mahjong_env import replay``)
    counts as an import of the module that defines it."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module != "mahjong_env":
                names.add(node.module)
                continue
            for alias in node.names:
                value = getattr(mahjong_env, alias.name)
                names.add(value.__name__ if isinstance(value, type(mahjong_env)) else value.__module__)
    return names


def level(module: str) -> int:
    """The layer of a module of ``mahjong_env`` (`LEVELS`)."""
    parts = module.split(".")
    if parts == ["mahjong_env"] or parts[1:] == ["__init__"]:
        return LEVELS["package"]
    if parts[1] in PAGES:
        return LEVELS["pages"]
    if parts[1] in LAYERS:
        return LEVELS[parts[1]]
    assert parts[1] in CORE_MODULES | CORE_PACKAGES | NATIVE, f"{module} is in no layer"
    return LEVELS["core"]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" and len(parts) > 2 else parts)


def layer_files(*parts: str) -> list[Path]:
    return sorted(PACKAGE.joinpath(*parts).rglob("*.py"))


def reaches(names: set[str], package: str) -> set[str]:
    return {name for name in names if name == package or name.startswith(package + ".")}


def test_the_top_level_holds_only_the_core_the_pages_and_the_layer_folders():
    modules = {path.stem for path in PACKAGE.glob("*.py")}
    folders = {path.name for path in PACKAGE.iterdir() if path.is_dir() and (path / "__init__.py").exists()}
    assert modules == CORE_MODULES | PAGES | NATIVE, (
        "a new top-level module must be placed in a layer (docs/architecture.md Layers)"
    )
    assert folders == CORE_PACKAGES | LAYERS


@pytest.mark.parametrize("path", layer_files(), ids=lambda path: str(path.relative_to(PACKAGE)))
def test_no_module_imports_a_layer_above_its_own(path):
    own = level(module_name(path))
    above = {name for name in reaches(imported_modules(path), "mahjong_env") if level(name) > own}
    assert not above, f"{module_name(path)} imports {sorted(above)} from a layer above its own"


@pytest.mark.parametrize("path", layer_files(), ids=lambda path: str(path.relative_to(PACKAGE)))
def test_the_env_package_never_imports_agents_or_training(path):
    names = imported_modules(path)
    assert not reaches(names, "agents") | reaches(names, "training")


def variant_namings(path: Path) -> list[str]:
    """Where the file names a variant: string literals other than docstrings (a string standing
    alone as a statement: a module's, class's or function's, or an attribute's below it) that
    spell one, and imports of a variant's rules module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    found = [
        f"line {node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and VARIANT_NAME.search(node.value)
    ]
    rules_modules = {name for name in imported_modules(path) if name.startswith("mahjong_env.rules.")}
    found += [f"imports {name}" for name in sorted(rules_modules) if VARIANT_NAME.search(name)]
    return found


def code_files() -> list[Path]:
    files = [p for p in layer_files() if PACKAGE / "rules" not in p.parents]
    return files + sorted((ROOT / "agents").rglob("*.py")) + sorted((ROOT / "training").rglob("*.py"))


@pytest.mark.parametrize("path", code_files(), ids=lambda path: str(path.relative_to(ROOT)))
def test_no_code_outside_the_rules_names_a_variant(path):
    relative = path.relative_to(ROOT).as_posix()
    found = variant_namings(path)
    if relative in NAMES_A_VARIANT:
        assert found, f"{relative} names no variant any more: drop it from NAMES_A_VARIANT"
    else:
        assert not found, (
            f"{relative} names a variant ({'; '.join(found)}): ask the rule set or the registry "
            "(mahjong_env.variants: variant_names(), DEFAULT_VARIANT, get_variant(name))"
        )
