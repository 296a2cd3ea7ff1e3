"""The compiled core (`mahjong_env._native`): the package build compiles the core's modules, the
same sources run uncompiled with ``MAHJONG_ENV_PURE=1``, both give the same output, and an
edited source never runs stale compiled code."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import mahjong_env
from mahjong_env import _native
from mahjong_env.tools import exactness

PACKAGE = Path(mahjong_env.__file__).parent
BUILT = any(PACKAGE.rglob("*.so"))
PURE_BUILD = os.environ.get("MAHJONG_ENV_PURE_BUILD", "").strip() not in ("", "0")


def run_python(code: str, *, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter; which core it runs is decided by ``env`` alone (a
    ``MAHJONG_ENV_PURE`` of the calling process is not passed on)."""
    full_env = {key: value for key, value in os.environ.items() if key != "MAHJONG_ENV_PURE"}
    full_env.update(env or {})
    command = [sys.executable, "-c", code]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, env=full_env, cwd=cwd)


@pytest.mark.skipif(PURE_BUILD or _native.core_info()["pure"], reason="a pure-Python build or run was asked for")
def test_the_install_runs_every_core_module_compiled():
    info = _native.core_info()
    assert info["compiled"] == sorted(_native.COMPILED_MODULES), info["source"]
    for name in _native.COMPILED_MODULES:
        assert sys.modules[name].__file__.endswith(".so")


def test_pure_runs_every_core_module_from_its_source():
    done = run_python(
        "import json, sys, mahjong_env; from mahjong_env import _native;"
        "files = [sys.modules[n].__file__ for n in _native.COMPILED_MODULES];"
        "print(json.dumps([_native.core_info()['compiled'], files]))",
        env={"MAHJONG_ENV_PURE": "1"},
    )
    assert done.returncode == 0, done.stderr
    compiled, files = json.loads(done.stdout)
    assert compiled == []
    assert all(f.endswith(".py") for f in files)


@pytest.mark.skipif(not BUILT, reason="no compiled core installed")
def test_compiled_and_pure_give_the_same_digests():
    """The direct check: the same hands through both cores (tests/test_exactness.py pins the
    compiled core to the golden digests of the pure one at 200 hands)."""
    hands = 25
    code = (
        "import json; from mahjong_env.tools import exactness as e;"
        f"print(json.dumps({{f'{{v}}/{{p}}/{{k}}': e.digest_hands(v, p, k, range({hands})) "
        "for v, p in e.cases() for k in e.POLICIES}))"
    )
    done = run_python(code, env={"MAHJONG_ENV_PURE": "1"})
    assert done.returncode == 0, done.stderr
    pure = json.loads(done.stdout)
    compiled = {
        f"{v}/{p}/{k}": exactness.digest_hands(v, p, k, range(hands))
        for v, p in exactness.cases()
        for k in exactness.POLICIES
    }
    assert pure == compiled


@pytest.mark.skipif(not BUILT, reason="no compiled core installed")
def test_an_edited_source_runs_the_whole_core_from_source_with_a_warning(tmp_path):
    """One edited source makes every core module run from source: the compiled modules are one
    snapshot, and a module compiled against the old source of another must not meet the new one."""
    copy = tmp_path / "mahjong_env"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    with (copy / "wall.py").open("a") as f:
        f.write("\nEDITED_AFTER_THE_BUILD = True\n")
    done = run_python(
        "import json, mahjong_env; from mahjong_env import _native, wall;"
        "print(json.dumps([_native.core_info(), wall.EDITED_AFTER_THE_BUILD]))",
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path), "PYTHONWARNINGS": "always"},
    )
    assert done.returncode == 0, done.stderr
    info, edited = json.loads(done.stdout)
    assert edited is True
    assert info["compiled"] == []
    assert set(info["source"]) == set(_native.COMPILED_MODULES)
    assert set(info["source"].values()) == {"stale: a core source changed after the build"}
    assert "the compiled core is older than its sources (mahjong_env.wall changed)" in done.stderr


@pytest.mark.skipif(not BUILT, reason="no compiled core installed")
def test_an_edited_pxd_makes_the_core_stale_too(tmp_path):
    """The C types of a module live in the ``.pxd`` beside its source: an edit there changes
    the compiled code as much as one in the ``.py``, so it too runs the core from source."""
    copy = tmp_path / "mahjong_env"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    with (copy / "hand" / "shape.pxd").open("a") as f:
        f.write("\n# edited after the build\n")
    done = run_python(
        "import json, mahjong_env; from mahjong_env import _native; print(json.dumps(_native.core_info()))",
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path), "PYTHONWARNINGS": "always"},
    )
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)
    assert info["compiled"] == [] and set(info["source"]) == set(_native.COMPILED_MODULES)
    assert "(mahjong_env.hand.shape changed)" in done.stderr
