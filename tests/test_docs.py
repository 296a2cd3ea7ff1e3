"""The documentation against the code: the observation tables of README.md and docs/api.md
against the layouts declared in `mahjong_env.observation` (so that a moved row or a renamed
slot fails here, not in a user's network), every relative link of README.md and docs/*.md,
the README's length and first lines, and the project metadata files.

A table is checked when its header names its kind:

- ``| rows | piece | ... |`` (or ``row``): rows of the observation, base rows and analysis rows
  (`observation_layout` with `mahjong_env.features.ANALYSIS_PIECES`);
- ``| slots | piece | ... |``: slots of the scalar block (`SCALAR_LAYOUT`).

A rows cell is ``a``, ``a–b`` or, for the four seat blocks, ``B + Sr``, ``B + Sr + a`` or
``B + Sr + a…b`` (S the planes per seat, r = 0..3). A piece cell holds piece names in
backticks (``seat<r>_...`` for seat blocks, ``unused`` for padding); two names joined by ``…``
stand for every piece from the first to the second. The pieces must lie end to end and cover
exactly the rows of the cell. A ``slot names`` column, where there is one, holds slot labels
(``<r>`` stands for 0..3; other ``<...>`` patterns are not checked) that must lie in the cell's
slots. Full tables (docs/api.md, and the README's base rows) must cover every row or slot once.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pytest

from mahjong_env.features import ANALYSIS_CHANNELS, ANALYSIS_PIECES
from mahjong_env.observation import (
    NUM_CHANNELS,
    OBSERVATION_LAYOUT,
    SCALAR_LAYOUT,
    SEAT_PLANES,
    Layout,
    observation_layout,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
API = ROOT / "docs" / "api.md"
MAX_README_LINES = 350
FULL_LAYOUT = observation_layout(ANALYSIS_PIECES)  # base rows, then the analysis rows
DASHES = "–—-"  # en dash, em dash, hyphen


def markdown_files() -> list[Path]:
    return [README, *sorted((ROOT / "docs").glob("*.md"))]


# ---------------------------------------------------------------------- tables


@dataclass
class Table:
    path: Path
    line: int  # 1-based line of the header
    header: list[str]
    rows: list[list[str]]

    def where(self, i: int) -> str:
        name = self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path
        return f"{name}:{self.line + 2 + i}"


def split_row(line: str) -> list[str]:
    # cells split on | outside backticks (a code span may hold a |)
    cells, cell, code = [], [], False
    for ch in line.strip().strip("|"):
        if ch == "`":
            code = not code
        if ch == "|" and not code:
            cells.append("".join(cell).strip())
            cell = []
        else:
            cell.append(ch)
    cells.append("".join(cell).strip())
    return cells


def tables(path: Path) -> list[Table]:
    """Every Markdown table of the file outside fenced code blocks."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Table] = []
    fenced = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif (
            not fenced
            and line.lstrip().startswith("|")
            and i + 1 < len(lines)
            and re.fullmatch(r"\s*\|[\s:|-]+\|\s*", lines[i + 1])
        ):
            header = [c.lower() for c in split_row(line)]
            body: list[list[str]] = []
            i += 2
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                body.append(split_row(lines[i]))
                i += 1
            found.append(Table(path, i - len(body) - 1, header, body))
            continue
        i += 1
    return found


def layout_tables(path: Path, kind: str) -> list[Table]:
    """The file's tables of one kind: ``rows`` (observation rows) or ``slots`` (scalars)."""
    first = {"rows": ("rows", "row"), "slots": ("slots",)}[kind]
    return [t for t in tables(path) if t.header[0] in first and "piece" in t.header]


def pieces_of(layout: Layout) -> list[tuple[str, int, int]]:
    """(name, first, last) of every piece in order; padding is named ``unused``."""
    out, at = [], 0
    for piece in layout.pieces:
        out.append(("unused" if piece.unused else piece.name, at, at + piece.size - 1))
        at += piece.size
    return out


def parse_number(text: str) -> int:
    if not text.strip().isdigit():
        raise ValueError(f"not a row or slot number: {text!r}")
    return int(text)


def parse_range(cell: str, seat: int | None) -> tuple[int, int]:
    """First and last row of a rows/slots cell, for one seat if the cell is per seat."""
    text = cell.replace("`", "").replace(" ", "")
    if seat is not None:
        match = re.fullmatch(r"(\d+)\+(\d+)r(?:\+(.+))?", text)
        if match is None:
            raise ValueError(f"per-seat cell must read 'B + Sr [+ a[…b]]': {cell!r}")
        base, stride, rest = int(match[1]), int(match[2]), match[3] or "0"
        assert stride == SEAT_PLANES, f"{cell!r}: a seat block has {SEAT_PLANES} planes, not {stride}"
        first, last = parse_range(rest, None)
        return base + stride * seat + first, base + stride * seat + last
    parts = re.split(f"[{DASHES}…]|\\.\\.", text)
    if len(parts) == 1:
        return parse_number(parts[0]), parse_number(parts[0])
    if len(parts) == 2:
        return parse_number(parts[0]), parse_number(parts[1])
    raise ValueError(f"a cell names one row or one range: {cell!r}")


def piece_names(cell: str, seat: int | None, layout: Layout) -> list[str]:
    """The pieces a piece cell names, in layout order, ``a … b`` expanded."""
    names = [n.replace("<r>", str(seat)) if seat is not None else n for n in re.findall(r"`([^`]+)`", cell)]
    if not names:
        raise ValueError(f"no piece named in {cell!r}")
    order = [name for name, _, _ in pieces_of(layout)]
    for name in names:
        assert name in order, f"{name!r} is not a piece of the layout (pieces: {order})"
    if "…" in cell:
        assert len(names) == 2, f"'a … b' names two pieces: {cell!r}"
        first = order.index(names[0])
        last = order.index(names[1])
        return order[first : last + 1]
    return names


def check_row(table: Table, i: int, layout: Layout, covered: list[int]) -> None:
    row = table.rows[i]
    where = table.where(i)
    per_seat = re.search(r"\d\s*r\b", row[0]) is not None
    for seat in range(4) if per_seat else (None,):
        first, last = parse_range(row[0], seat)
        names = piece_names(row[table.header.index("piece")], seat, layout)
        spans = pieces_of(layout)
        # the named pieces, each located after the previous one (``unused`` appears several times)
        at = first
        for name in names:
            span = next(((f, la) for n, f, la in spans if n == name and f == at), None)
            assert span is not None, (
                f"{where}: piece {name!r} does not start at {at} "
                f"(the layout has it at {[(f, la) for n, f, la in spans if n == name]})"
            )
            at = span[1] + 1
        assert at - 1 == last, f"{where}: {names} cover {first}–{at - 1}, the cell says {first}–{last}"
        covered.extend(range(first, last + 1))
        if "slot names" in table.header:
            for label in re.findall(r"`([^`]+)`", row[table.header.index("slot names")]):
                expanded = [label.replace("<r>", str(r)) for r in range(4)] if "<r>" in label else [label]
                for name in expanded:
                    if "<" in name:
                        continue  # a pattern over something other than the seats
                    assert name in layout.index, f"{where}: {name!r} is not a slot name"
                    assert first <= layout.index[name] <= last, (
                        f"{where}: {name!r} is slot {layout.index[name]}, outside {first}–{last}"
                    )


def check_tables(path: Path, kind: str, layout: Layout) -> list[int]:
    covered: list[int] = []
    found = layout_tables(path, kind)
    for table in found:
        for i in range(len(table.rows)):
            check_row(table, i, layout, covered)
    return covered


def test_the_api_observation_tables_match_the_layout() -> None:
    rows = check_tables(API, "rows", FULL_LAYOUT)
    assert sorted(rows) == list(range(FULL_LAYOUT.size)), "docs/api.md must list every row once"
    slots = check_tables(API, "slots", SCALAR_LAYOUT)
    assert sorted(slots) == list(range(SCALAR_LAYOUT.size)), "docs/api.md must list every scalar slot once"


def test_the_readme_observation_table_matches_the_layout() -> None:
    rows = check_tables(README, "rows", FULL_LAYOUT)
    base = [r for r in rows if r < NUM_CHANNELS]
    assert sorted(base) == list(range(NUM_CHANNELS)), "the README's rows table must cover every base row once"
    check_tables(README, "slots", SCALAR_LAYOUT)


@pytest.mark.parametrize("path", [README, API], ids=["README.md", "docs/api.md"])
def test_observation_shapes_in_the_text_are_the_layouts(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert f"({NUM_CHANNELS}, 34)" in text
    assert f"({NUM_CHANNELS + len(ANALYSIS_CHANNELS)}, 34)" in text
    assert f"{SCALAR_LAYOUT.size} " in text or f"{SCALAR_LAYOUT.size})" in text  # the number of scalar slots


def markdown_table(header: str, *rows: str) -> str:
    cells = header.count("|") - 1
    return "\n".join([header, "|" + "---|" * cells, *rows]) + "\n"


def test_the_table_checker_catches_drift(tmp_path: Path) -> None:
    """The checker itself: a wrong range, a wrong piece, a shifted seat row and a slot label
    outside its slots fail."""
    rows, slots = "| rows | piece | content |", "| slots | piece | slot names | content |"
    good = tmp_path / "good.md"
    good.write_text(markdown_table(rows, "| 0–3 | `hand` | x |", "| 9 + 31r + 7…30 | `seat<r>_discard` | x |"), "utf-8")
    assert len(check_tables(good, "rows", OBSERVATION_LAYOUT)) == 4 + 4 * 24
    bad = tmp_path / "bad.md"
    for kind, text in (
        ("rows", markdown_table(rows, "| 0–4 | `hand` | x |")),
        ("rows", markdown_table(rows, "| 4 | `bao` | x |")),
        ("rows", markdown_table(rows, "| 9 + 31r + 1 | `seat<r>_river` | x |")),
        ("slots", markdown_table(slots, "| 14–17 | `dealer` | `ready_<r>` | x |")),
    ):
        bad.write_text(text, encoding="utf-8")
        with pytest.raises(AssertionError):
            check_tables(bad, kind, SCALAR_LAYOUT if kind == "slots" else OBSERVATION_LAYOUT)


def test_the_layouts_are_those_the_tables_were_written_for() -> None:
    # a cheap tripwire beside the tables: the base observation's first and last pieces
    assert OBSERVATION_LAYOUT.offset["scalars"] == NUM_CHANNELS - 3
    assert FULL_LAYOUT.offset[ANALYSIS_CHANNELS[0]] == NUM_CHANNELS


# ---------------------------------------------------------------------- links


def github_anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`", "", heading.strip().lower())
    kept = []
    for ch in text:
        if ch in " -_" or ch.isalnum() or unicodedata.category(ch).startswith("L"):
            kept.append("-" if ch == " " else ch)
    return "".join(kept)


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            found.add(github_anchor(line.lstrip("#")))
    return found


def links(path: Path) -> list[tuple[int, str]]:
    """(line, target) of every Markdown link outside code (fenced blocks and code spans)."""
    out: list[tuple[int, str]] = []
    fenced = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        prose = re.sub(r"`[^`]*`", "", line)
        out.extend((number, target) for target in re.findall(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", prose))
    return out


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_points_to_an_existing_file(path: Path) -> None:
    broken = []
    for number, target in links(path):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        resolved = (path.parent / file_part).resolve() if file_part else path
        if not resolved.exists():
            broken.append(f"{path.relative_to(ROOT)}:{number}: {target} (no such file)")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{path.relative_to(ROOT)}:{number}: {target} (no heading #{anchor})")
    assert not broken, "\n".join(broken)


def test_the_link_checker_sees_links() -> None:
    assert any(target.startswith("docs/") for _, target in links(README))


# ---------------------------------------------------------------------- README and metadata


def test_the_readme_stays_a_manual() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines (at most {MAX_README_LINES})"


def test_the_readme_opens_with_the_two_fresh_machine_commands() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("# ") and lines[2] == "```bash" and lines[5] == "```", lines[:6]
    for command in lines[3:5]:
        assert command.startswith("python3 -m venv .venv && . .venv/bin/activate && pip install "), command
    assert "mahjong-tournament" in lines[3]
    assert "pytest" in lines[4]


def test_license_and_citation_agree_with_the_package_metadata() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    license_text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert project["license"]["text"] == "MIT" and license_text.startswith("MIT License")
    yaml = pytest.importorskip("yaml")
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert citation["cff-version"] == "1.2.0"
    for key in ("message", "title", "authors"):
        assert citation[key], key
    assert citation["license"] == "MIT"
    assert str(citation["version"]) == project["version"]


def test_the_changelog_has_an_entry_for_this_version() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "## [Unreleased]" in text
    assert f"## [{project['version']}]" in text
