"""The package layout the README's Layout section describes: the core at the top level of
``mahjong_env`` (with ``hand/``, ``engine/`` and ``rules/``), the framework adapters in
``adapters/`` and the tools in ``tools/``, each layer importing only the layers below it, and
nothing in ``mahjong_env`` importing ``agents`` or ``training`` (nor ``agents`` importing
``training``). Inside the core, each module imports only its own level or the ones below
(`CORE_LEVELS`: the tiles and the hand analysis, the engine and the rule sets, what one seat
knows, its encodings, the analysis a player makes of it). Imports inside functions count.

Outside ``rules/``, the variant registry and the env pages, no code names a variant: no
comparison with a variant's name and no hand-written list of them (`variant_names()` lists
them, and the rule set answers every variant question).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import mahjong_env

PACKAGE = Path(mahjong_env.__file__).parent

CORE_MODULES = {
    "tiles",
    "actions",
    "wall",
    "visibility",
    "seat_view",
    "observation",
    "view",
    "features",
    "variants",
}
CORE_LEVELS = (
    {"variants", "tiles", "actions", "wall", "hand"},  # the registry, notation, the wall, pure hand analysis
    {"engine", "rules"},  # the table mechanics and the rule sets, which answer the engine's questions
    {"seat_view", "visibility"},  # what one seat knows (R13)
    {"observation", "view"},  # its encodings: the observation planes, the view dict
    {"features"},  # what a player works out from it
)
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


def core_level(name: str) -> int | None:
    """The `CORE_LEVELS` index of the core module or package ``mahjong_env.<name>...``."""
    top = name.split(".")[1] if name.startswith("mahjong_env.") else None
    return next((i for i, level in enumerate(CORE_LEVELS) if top in level), None)


def test_the_core_levels_name_every_core_module():
    assert set().union(*CORE_LEVELS) == CORE_MODULES | CORE_PACKAGES


@pytest.mark.parametrize("path", core_files(), ids=lambda path: str(path.relative_to(PACKAGE)))
def test_a_core_module_imports_no_level_above_its_own(path):
    own = core_level("mahjong_env." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts))
    assert own is not None
    above = {name for name in reaches(imported_modules(path), "mahjong_env") if (core_level(name) or 0) > own}
    assert not above, f"{path.name} imports {sorted(above)}, above its level {own} (tests/test_layout.py CORE_LEVELS)"


@pytest.mark.parametrize("path", sorted((PACKAGE.parent / "agents").rglob("*.py")), ids=lambda path: path.name)
def test_the_agents_never_import_training(path):
    assert not reaches(imported_modules(path), "training")


VARIANT_NAMES = {"xinjiang", "changchun", "xinjiang_v0", "changchun_v0"}
NAMING_ALLOWED = {"variants", *PAGES}  # the registry and the pages (top-level modules of mahjong_env)
NAMING_PENDING = {
    "mahjong_env/tools/cli.py": "``--variant`` choices",
    "agents/tournament/config.py": "VARIANTS",
    "agents/bench.py": "``--variant`` choices and the list of both",
}
"""Files (owned by other work) that still list the variants by hand, to move to `variant_names()`."""


def variant_naming(path: Path) -> list[str]:
    """Where the file compares with a variant's name or lists variants by hand (line: code)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        named = []
        if isinstance(node, ast.Compare):
            named = [n for n in (node.left, *node.comparators) if isinstance(n, ast.Constant)]
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            named = [n for n in node.elts if isinstance(n, ast.Constant)]
            if sum(n.value in VARIANT_NAMES for n in named) < 2:
                named = []
        if any(n.value in VARIANT_NAMES for n in named):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def naming_files() -> list[Path]:
    root = PACKAGE.parent
    files = sorted(PACKAGE.rglob("*.py")) + sorted((root / "agents").rglob("*.py"))
    return [
        p
        for p in files
        if not (p.parent == PACKAGE and p.stem in NAMING_ALLOWED)
        and "rules" not in p.relative_to(root).parts
        and str(p.relative_to(root)) not in NAMING_PENDING
    ]


@pytest.mark.parametrize("path", naming_files(), ids=lambda path: str(path.relative_to(PACKAGE.parent)))
def test_no_code_outside_the_rules_names_a_variant(path):
    assert not variant_naming(path), "ask the rule set, or list the variants with mahjong_env.variants.variant_names()"


def test_the_variant_naming_check_finds_a_comparison_and_a_list(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text('ok = variant == "changchun"\nboth = ("xinjiang", "changchun")\nfine = "changchun"\n')
    assert [line.split(":")[0] for line in variant_naming(probe)] == ["1", "2"]
    pending = [PACKAGE.parent / name for name in NAMING_PENDING]
    assert all(variant_naming(path) for path in pending), "a pending file is clean: drop it from NAMING_PENDING"
