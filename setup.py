"""Builds the compiled core: the modules listed in ``mahjong_env/_native.py`` compiled by Cython.

Everything else about the package is in ``pyproject.toml``. The build records the SHA-256 of
every source it compiles in ``mahjong_env/_build_hashes.json``, so that an edited source runs
uncompiled rather than stale (``mahjong_env._native``). ``MAHJONG_ENV_PURE_BUILD=1`` builds
the package without compiling anything (the pure-Python core, for a machine with no C compiler).
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent


def _native():
    """``mahjong_env/_native.py`` loaded on its own, without importing the package: its
    ``COMPILED_MODULES`` and ``source_digest`` (what the staleness check compares)."""
    spec = importlib.util.spec_from_file_location("_mahjong_env_native", HERE / "mahjong_env" / "_native.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def extensions() -> list:
    if os.environ.get("MAHJONG_ENV_PURE_BUILD", "").strip() not in ("", "0"):
        return []
    from Cython.Build import cythonize
    from setuptools import Extension

    native = _native()
    sources = {name: Path(*name.split(".")).with_suffix(".py") for name in native.COMPILED_MODULES}
    hashes = {name: native.source_digest(name) for name in sources}
    (HERE / "mahjong_env" / "_build_hashes.json").write_text(json.dumps(hashes, indent=1, sort_keys=True) + "\n")
    return cythonize(
        [Extension(name, [str(path)], extra_compile_args=["-O2", "-g0"]) for name, path in sources.items()],
        build_dir="build/cython",
        nthreads=os.cpu_count() or 1,
        quiet=True,
        compiler_directives={
            "language_level": 3,
            "annotation_typing": False,  # annotations document; types for C come from .pxd files
            "binding": True,  # functions keep Python's introspection (signatures, docstrings)
            "embedsignature": True,
        },
    )


setup(ext_modules=extensions())
