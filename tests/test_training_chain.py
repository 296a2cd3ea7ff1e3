"""The training guide's chain (docs/training.md: paired → bc → duplicate → ppo) runs as written.

The one bash block of commands in docs/training.md is extracted and run command by command, in
order, in a fresh folder, with only the size flags of `TINY` given tiny values; every command must
exit 0, print the path it wrote (or its table) on stdout and nothing else there, and show no
traceback and no progress bar (stderr is not a terminal). The README's training block, where it
has ``python -m training.`` commands, must hold the same commands.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).absolute().parents[1]
GUIDE = ROOT / "docs" / "training.md"
README = ROOT / "README.md"

TINY = {
    "--decisions": "300",
    "--epochs": "1",
    "--deals": "2",
    "--total-steps": "256",
    "--num-envs": "4",
    "--num-steps": "64",
    "--gate-deals": "2",
}
"""Size flags and the tiny values the test runs them with; every other flag runs as written."""

CHAIN = ("training.paired", "training.bc", "training.duplicate", "training.ppo")


def bash_blocks(markdown: str) -> list[str]:
    return re.findall(r"^```bash\n(.*?)^```", markdown, flags=re.MULTILINE | re.DOTALL)


def training_commands(block: str) -> list[list[str]]:
    """The ``python -m training.*`` commands of a bash block, as argv lists (continuation lines
    joined, comments dropped)."""
    text = block.replace("\\\n", " ")
    commands = [shlex.split(line, comments=True) for line in text.splitlines()]
    return [argv for argv in commands if argv[:2] == ["python", "-m"] and argv[2].startswith("training.")]


def section(text: str, title: str) -> str:
    """The part of a markdown text under the first heading that starts with ``title``, up to the
    next heading of the same or a higher level ("" if there is no such heading)."""
    match = re.search(rf"^(#+) {re.escape(title)}\b.*?$", text, flags=re.MULTILINE)
    if match is None:
        return ""
    end = re.search(rf"^#{{1,{len(match.group(1))}}} ", text[match.end() :], flags=re.MULTILINE)
    return text[match.end() : match.end() + end.start() if end else None]


def guide_chain() -> list[list[str]]:
    """The commands of the bash block of the guide's section "The chain" (the only block there)."""
    blocks = bash_blocks(section(GUIDE.read_text(encoding="utf-8"), "The chain"))
    assert len(blocks) == 1, "docs/training.md holds the chain in one bash block under '## The chain'"
    return training_commands(blocks[0])


def readme_training_commands() -> list[list[str]]:
    """The training commands of the bash blocks of the README's section "Training"."""
    text = section(README.read_text(encoding="utf-8"), "Training")
    return [argv for block in bash_blocks(text) for argv in training_commands(block)]


def flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def shrink(argv: list[str]) -> list[str]:
    """``argv`` with the values of the size flags of `TINY` replaced."""
    out = list(argv)
    for k, item in enumerate(argv[:-1]):
        if item in TINY:
            out[k + 1] = TINY[item]
    return out


def test_the_guide_chains_paired_bc_duplicate_ppo_by_fixed_paths():
    chain = guide_chain()
    assert [argv[2] for argv in chain] == list(CHAIN)
    paired, bc, duplicate, ppo = chain
    assert len({flag(argv, "--variant") for argv in chain}) == 1  # one variant throughout
    assert flag(bc, "--data") == flag(paired, "--out")
    assert flag(duplicate, "--candidate") == "torch:" + flag(bc, "--save-path")
    assert flag(ppo, "--init") == flag(bc, "--save-path")
    assert "--no-analysis" in bc  # PPO's batched games encode the plain observation
    used = {item for argv in chain for item in argv if item.startswith("--")}
    assert set(TINY) <= used, f"size flags the guide no longer uses: {set(TINY) - used}"
    for argv in chain:  # the test only ever shrinks the chain
        assert all(float(TINY[f]) <= float(flag(argv, f)) for f in TINY if f in argv)


def test_the_readme_training_commands_are_the_guides_chain():
    commands = readme_training_commands()
    if commands:
        assert commands == guide_chain()


def test_the_guide_chain_runs_as_written_in_a_fresh_folder(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    for argv in guide_chain():
        command = shrink(argv)
        proc = subprocess.run(
            [sys.executable, *command[1:]], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )
        shown = " ".join(command)
        assert proc.returncode == 0, f"{shown} failed:\n{proc.stderr}"
        assert "Traceback" not in proc.stderr and "%|" not in proc.stderr, f"{shown}:\n{proc.stderr}"
        if command[2] == "training.duplicate":
            assert "points/hand" in proc.stdout and "candidate" in proc.stdout
            continue
        written = proc.stdout.strip()
        assert written.count("\n") == 0, f"{shown}: stdout holds more than the path:\n{proc.stdout}"
        expected = flag(command, "--out") if "--out" in command else flag(command, "--save-path")
        assert written == expected and (tmp_path / written).is_file()
    assert (tmp_path / "runs").is_dir()
    run_dirs = sorted(p.name.split("__")[1] for p in (tmp_path / "runs").iterdir() if "__" in p.name)
    assert run_dirs == ["bc", "ppo"]
