"""The package layout the README's Layout section describes: the core at the top level of
``mahjong_env`` (with ``hand/``, ``engine/`` and ``rules/``), the framework adapters in
``adapters/`` and the tools in ``tools/``, each layer importing only the layers below it, and
nothing in ``mahjong_env`` importing ``agents`` or ``training``. Imports inside functions count.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import mahjong_env

PACKAGE = Path(mahjong_env.__file__).parent

CORE_MODULES = {
    "tiles", "actions", "wall", "visibility", "observation", "view", "features", "variants",
}
CORE_PACKAGES = {"hand", "engine", "rules"}
PAGES = {"__init__", "xinjiang_v0", "changchun_v0"}  # the PettingZoo entry points
NATIVE = {"_native"}  # which core modules run compiled (mahjong_env._native)
LAYERS = {"adapters", "tools"}


def imported_modules(path: Path) -> set[str]:
    """Every absolute module name imported anywhere in the file (relative imports stay inside
    their own package)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            if node.module == "mahjong_env":
                names.update(f"mahjong_env.{alias.name}" for alias in node.names)
    return names


def layer_files(*parts: str) -> list[Path]:
    return sorted(PACKAGE.joinpath(*parts).rglob("*.py"))


def reaches(names: set[str], package: str) -> set[str]:
    return {name for name in names if name == package or name.startswith(package + ".")}


def test_the_top_level_holds_only_the_core_the_pages_and_the_layer_folders():
    modules = {path.stem for path in PACKAGE.glob("*.py")}
    folders = {path.name for path in PACKAGE.iterdir() if path.is_dir() and (path / "__init__.py").exists()}
    assert modules == CORE_MODULES | PAGES | NATIVE, "a new top-level module must be placed in a layer (README Layout)"
    assert folders == CORE_PACKAGES | LAYERS


def core_files() -> list[Path]:
    files = [PACKAGE / f"{name}.py" for name in sorted(CORE_MODULES - {"variants"})]
    for package in sorted(CORE_PACKAGES):
        files += layer_files(package)
    return files


@pytest.mark.parametrize("path", core_files(), ids=lambda path: str(path.relative_to(PACKAGE)))
def test_the_core_imports_no_adapter_and_no_tool(path):
    names = imported_modules(path)
    assert not reaches(names, "mahjong_env.adapters") | reaches(names, "mahjong_env.tools")
    assert not {"xinjiang_v0", "changchun_v0"} & {name.rsplit(".", 1)[-1] for name in reaches(names, "mahjong_env")}


def test_the_registry_reaches_the_adapters_only_to_register_and_never_the_tools():
    names = imported_modules(PACKAGE / "variants.py")
    assert reaches(names, "mahjong_env.adapters") == {"mahjong_env.adapters.registration"}
    assert not reaches(names, "mahjong_env.tools")


@pytest.mark.parametrize("path", layer_files("adapters"), ids=lambda path: path.name)
def test_the_adapters_import_no_tool(path):
    assert not reaches(imported_modules(path), "mahjong_env.tools")


@pytest.mark.parametrize("path", layer_files(), ids=lambda path: str(path.relative_to(PACKAGE)))
def test_the_env_package_never_imports_agents_or_training(path):
    names = imported_modules(path)
    assert not reaches(names, "agents") | reaches(names, "training")
