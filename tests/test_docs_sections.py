"""docs/profiles.md cites, for every rule field, the RULES.md sections of the field's own
variant: the section its docstring cites first, and no section of the other variant (issue 24:
Xinjiang's ``allow_seven_pairs`` and ``fan_cap`` cited Changchun's C9/C10, not X3/X6). The page
is written by hand; `tests/test_profiles.py` checks its values."""

from __future__ import annotations

import ast
import dataclasses
import itertools
import re
from pathlib import Path

import pytest

from mahjong_env.rules.changchun import ChangchunConfig
from mahjong_env.rules.xinjiang import XinjiangConfig

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "profiles.md"
SECTION = re.compile(r"(?<![A-Za-z0-9_])([RXC]\d{1,2})(?![0-9])")


def _field_docs(cls: type) -> dict[str, str]:
    """Each dataclass field's docstring (the string under its annotation), bases included, read
    from the modules' sources (which a compiled build does not import)."""
    fields = {f.name for f in dataclasses.fields(cls)}
    docs = {}
    for klass in reversed(cls.__mro__):
        if not dataclasses.is_dataclass(klass):
            continue
        source = ROOT.joinpath(*klass.__module__.split(".")).with_suffix(".py").read_text(encoding="utf-8")
        (definition,) = [
            node for node in ast.parse(source).body if isinstance(node, ast.ClassDef) and node.name == klass.__name__
        ]
        for node, after in itertools.pairwise(definition.body):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and node.target.id in fields
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                docs[node.target.id] = after.value.value
    return docs


def _cited(heading: str) -> dict[str, list[str]]:
    """Field -> the sections its row of the table under ``heading`` cites."""
    section = PAGE.read_text(encoding="utf-8").split(f"## {heading}", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        if line.startswith("| `"):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            rows[cells[0].strip("`")] = [s.strip() for s in cells[1].split(",")]
    return rows


@pytest.mark.parametrize(
    ("heading", "cls", "own"), [("Changchun", ChangchunConfig, "C"), ("Xinjiang", XinjiangConfig, "X")]
)
def test_each_field_cites_its_own_variant_s_section(heading: str, cls: type, own: str) -> None:
    rows = _cited(heading)
    docs = _field_docs(cls)
    assert set(rows) == set(docs)
    for field, cited in rows.items():
        assert all(SECTION.fullmatch(s) and s[0] in ("R", own) for s in cited), (field, cited)
        first = SECTION.search(docs[field])
        assert first is not None and first.group(1) in cited, (field, docs[field], cited)
