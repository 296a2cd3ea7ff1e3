"""The compiled core: which modules the package build compiles, and which ones this process runs.

The core's modules are plain Python. The package build (``setup.py``) compiles the modules of
:data:`COMPILED_MODULES` with Cython into extension modules that sit beside their ``.py``
sources; the same sources run uncompiled (the pure-Python core) wherever no extension was
built. Both must give bit-identical output (``tests/test_exactness.py``, ``tests/test_native.py``).

At import, :func:`install` puts a finder in front of Python's own, so that a core module is
loaded from its extension only when the extension was built from the ``.py`` that is there now:

- ``MAHJONG_ENV_PURE=1`` in the environment runs every module from its ``.py`` (the reference
  against which the compiled core is checked, and a way round a broken build);
- if any core ``.py`` (or the ``.pxd`` of C types beside it) was edited since the build (its
  SHA-256 differs from the one the build recorded in ``_build_hashes.json``), every core
  module runs from its source, with one warning naming the edited ones: the compiled modules are a snapshot that must not be mixed with newer
  sources (an edited ``state.py`` beside a ``game`` compiled against the old one), and an
  editable install never runs stale compiled code. ``pip install -e .`` rebuilds them.

`core_info()` says which modules run compiled in this process.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
import warnings
from pathlib import Path
from typing import Any

__all__ = ["COMPILED_MODULES", "PURE_ENV", "core_info", "install", "source_digest", "source_path"]

COMPILED_MODULES: tuple[str, ...] = (
    "mahjong_env.tiles",
    "mahjong_env.actions",
    "mahjong_env.wall",
    "mahjong_env.hand.tables",
    "mahjong_env.hand.shape",
    "mahjong_env.hand.analysis",
    "mahjong_env.engine.state",
    "mahjong_env.engine.hotpath",
    "mahjong_env.engine.window",
    "mahjong_env.engine.ledger",
    "mahjong_env.engine.game",
    "mahjong_env.rules.base",
    "mahjong_env.rules.xinjiang",
    "mahjong_env.rules.changchun",
    "mahjong_env.features",
    "mahjong_env.adapters.aec",
    "mahjong_env.adapters.wrappers",
)
"""The modules the package build compiles, by import name (``setup.py`` reads this tuple)."""

PURE_ENV = "MAHJONG_ENV_PURE"
"""Set to ``1`` to run the pure-Python core even where compiled modules are installed."""

_PACKAGE_DIR = Path(__file__).resolve().parent
_HASHES_FILE = _PACKAGE_DIR / "_build_hashes.json"


def source_path(name: str) -> Path:
    """The ``.py`` source of a module of this package, compiled or not (``inspect.getfile`` gives
    a compiled module's extension file)."""
    return _PACKAGE_DIR.joinpath(*name.split(".")[1:]).with_suffix(".py")


def source_digest(name: str) -> str:
    """SHA-256 of what the build compiles for module ``name``: its ``.py`` and, where there is
    one, the ``.pxd`` beside it (the C types; an edited ``.pxd`` makes the extension stale too)."""
    digest = hashlib.sha256(source_path(name).read_bytes())
    declarations = source_path(name).with_suffix(".pxd")
    if declarations.exists():
        digest.update(b"\0pxd\0" + declarations.read_bytes())
    return digest.hexdigest()


def _pure_requested() -> bool:
    return os.environ.get(PURE_ENV, "").strip().lower() not in ("", "0", "false", "no")


class _CoreFinder:
    """Finds the core's modules, deciding between the extensions and the ``.py`` sources."""

    def __init__(self) -> None:
        self.pure = _pure_requested()
        self.loaded: dict[str, str] = {}  # module name -> "compiled" or why it runs from source
        self._reason: str | None = None  # why every core module runs from source, once known
        self._checked = False

    def _source_reason(self) -> str | None:
        """Why the core must run from its sources (None: the extensions are current)."""
        if self.pure:
            return f"{PURE_ENV} is set"
        if not self._checked:
            self._checked = True
            try:
                hashes = json.loads(_HASHES_FILE.read_text())
            except (OSError, ValueError):
                hashes = {}
            edited = [
                name
                for name in COMPILED_MODULES
                if source_path(name).exists() and hashes.get(name) != source_digest(name)
            ]
            if edited:
                self._reason = "stale: a core source changed after the build"
                warnings.warn(
                    f"the compiled core is older than its sources ({', '.join(edited)} changed); running "
                    "the pure-Python sources instead (rebuild with `pip install -e .`)",
                    RuntimeWarning,
                    stacklevel=3,
                )
        return self._reason

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name not in COMPILED_MODULES:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or not isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
            self.loaded[name] = "not compiled"
            return spec
        reason = self._source_reason()
        if reason is None:
            self.loaded[name] = "compiled"
            return spec
        self.loaded[name] = reason
        return importlib.util.spec_from_file_location(name, source_path(name))


_FINDER: _CoreFinder | None = None


def install() -> None:
    """Put the core's finder in front of Python's (once per process)."""
    global _FINDER
    if _FINDER is None:
        _FINDER = _CoreFinder()
        sys.meta_path.insert(0, _FINDER)


def core_info() -> dict[str, Any]:
    """Which core modules run compiled: ``{"compiled": [...], "source": {name: why}, "pure": bool}``
    for the modules imported so far (importing ``mahjong_env`` imports them all)."""
    finder = _FINDER
    loaded = dict(finder.loaded) if finder else {}
    return {
        "pure": bool(finder and finder.pure),
        "compiled": sorted(name for name, how in loaded.items() if how == "compiled"),
        "source": {name: how for name, how in sorted(loaded.items()) if how != "compiled"},
    }


if __name__ == "mahjong_env._native":  # setup.py loads this file alone, for its names only
    install()  # importing this module (the package's first import) puts the finder in place
