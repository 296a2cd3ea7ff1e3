"""Baseline agents, the agent spec strings that name them, and the tournament runner.

``agents.load(spec)`` builds an agent from a spec string::

    SPEC    = BASE [ "?" KWARGS ]
    KWARGS  = key=value [ "&" key=value ... ]

BASE is one of

- ``random``: `RandomAgent`, uniform over legal actions;
- ``heuristic``: `HeuristicAgent`, the rule-based baseline;
- ``torch:path/to/ckpt.pt``: `TorchAgent` from a data-only checkpoint (``torch.load(weights_only=True)``);
  ``torch:NAME``, a bare name (no path separator, no ``.pt``), is a checkpoint shipped in the
  package data, from any working directory: ``torch:changchun``, ``torch:xinjiang``
  (`shipped_checkpoints`, `checkpoint_path`);
- ``sb3:path/to/model.zip``: a model trained with sb3-contrib's ``MaskablePPO`` on our Gymnasium
  env (`agents.adapters.SB3Agent`);
- ``rllib:path/to/checkpoint``: an RLlib RLModule checkpoint, such as the one
  ``training/rllib_example.py`` saves (`agents.adapters.RLlibAgent`);
- ``module.path:ClassName``: a user agent class, imported like ``python -m`` would from the
  current working directory (it is added to the end of ``sys.path``) or any installed package;
- ``path/to/agent.py:ClassName``: a user agent class from a Python file.

KWARGS, written like a URL query, are keyword arguments for the agent's constructor (the
checkpoint loaders' options for ``torch:``/``sb3:``/``rllib:``). A value is read as JSON when
it parses (``0.5``, ``3``, ``true``, ``null``, ``"text"``) and as a string otherwise; write
``%26`` for a literal ``&`` and ``%3F`` for ``?``. Examples::

    mymodule:MyAgent?ckpt=run/model.zip&temperature=0.5
    torch:changchun?greedy=false
    torch:runs/changchun_bc.pt
    sb3:runs/ppo/model.zip?variant=changchun&deterministic=false

User classes get only these keyword arguments (not the tournament seed; give the class a
``seed(seed)`` method to be re-seeded per hand, see `agents.tournament.play`).

`parse_spec` splits a spec, `resolve_spec` rewrites its relative paths as absolute ones (so
that a stored spec means the same file from any folder), `is_trusted` says whether a spec
names only this package's code and data-only checkpoints (the tournament runs every other
entrant in its own process, `agents.sandbox`), and `describe` lists what an agent was trained
for and the files it was built from, with their SHA-256.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import hashlib
import importlib
import importlib.resources
import importlib.util
import json
import os
import sys
import urllib.parse
from pathlib import Path
from typing import Any

from agents.base import Agent, agent_info
from agents.random_agent import RandomAgent

__all__ = [
    "Agent",
    "AgentSpec",
    "RandomAgent",
    "agent_info",
    "checkpoint_path",
    "describe",
    "file_sha256",
    "is_checkpoint_name",
    "is_trusted",
    "load",
    "parse_spec",
    "resolve_spec",
    "shipped_checkpoints",
]

_CHECKPOINT_KINDS = ("torch", "sb3", "rllib")
_BUILTIN = ("random", "heuristic")
_FORMS = (
    "use 'random', 'heuristic', 'torch:changchun', 'torch:path/to/ckpt.pt', 'sb3:path/to/model.zip', "
    "'rllib:path/to/checkpoint', "
    "'module.path:ClassName' or 'path/to/agent.py:ClassName', optionally followed by ?key=value&key=value"
)


_SHIPPED = "checkpoints"
"""The package-data folder of the shipped checkpoints (``agents/checkpoints/NAME.pt``)."""
_extracted = contextlib.ExitStack()  # shipped checkpoints copied out of a zipped install, for this process
atexit.register(_extracted.close)


def shipped_checkpoints() -> tuple[str, ...]:
    """The names of the checkpoints shipped in the package data, for ``torch:NAME``."""
    folder = importlib.resources.files(__name__) / _SHIPPED
    return tuple(sorted(entry.name[: -len(".pt")] for entry in folder.iterdir() if entry.name.endswith(".pt")))


def is_checkpoint_name(target: str | Path) -> bool:
    """Whether ``target`` is a bare checkpoint name (no path separator, no ``.pt`` suffix)
    rather than a path."""
    text = str(target)
    return bool(text) and not any(sep and sep in text for sep in ("/", os.sep, os.altsep)) and not text.endswith(".pt")


def checkpoint_path(target: str | Path) -> Path:
    """The file of a ``torch:`` target: a bare name (`is_checkpoint_name`) is a shipped checkpoint,
    found through the package data (``importlib.resources``) from any working directory, and
    ValueError listing the shipped names if there is none of that name; anything else is a path."""
    if not is_checkpoint_name(target):
        return Path(target)
    resource = importlib.resources.files(__name__) / _SHIPPED / f"{target}.pt"
    if not resource.is_file():
        raise ValueError(
            f"no shipped checkpoint named {str(target)!r}: the shipped ones are {', '.join(shipped_checkpoints())} "
            f"(for a file, write a path: ./{target} or {target}.pt)"
        )
    if isinstance(resource, Path):
        return resource
    return _extracted.enter_context(importlib.resources.as_file(resource))  # a zipped install


@dataclasses.dataclass(frozen=True)
class AgentSpec:
    """A parsed spec: ``kind`` is ``random``, ``heuristic``, ``torch``, ``sb3``, ``rllib``,
    ``module`` or ``file``; ``target`` the checkpoint path, module name or file path;
    ``attribute`` the class name (module and file forms); ``kwargs`` the keyword arguments."""

    kind: str
    target: str = ""
    attribute: str = ""
    kwargs: tuple[tuple[str, Any], ...] = ()

    def text(self) -> str:
        """The spec string again (values that are not plain strings written as JSON)."""
        if self.kind in _BUILTIN:
            base = self.kind
        elif self.kind in _CHECKPOINT_KINDS:
            base = f"{self.kind}:{self.target}"
        else:
            base = f"{self.target}:{self.attribute}"
        if not self.kwargs:
            return base
        query = "&".join(
            f"{key}={urllib.parse.quote(_value_text(value), safe='/:.,-_~+@')}" for key, value in self.kwargs
        )
        return f"{base}?{query}"


def _value_text(value: Any) -> str:
    if isinstance(value, str):
        try:
            json.loads(value)
        except ValueError:
            return value
    return json.dumps(value)


def _parse_value(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_spec(spec: str) -> AgentSpec:
    """Split a spec string (module docstring); ValueError naming the problem if malformed."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec must be a non-empty string, got {spec!r}")
    text = spec.strip()
    base, sep, query = text.partition("?")
    kwargs: list[tuple[str, Any]] = []
    if sep:
        if not query:
            raise ValueError(f"agent spec {spec!r}: nothing after '?' (write key=value&key=value or drop the '?')")
        for item in query.split("&"):
            key, eq, value = item.partition("=")
            key = urllib.parse.unquote(key).strip()
            if not eq or not key.isidentifier():
                raise ValueError(f"agent spec {spec!r}: {item!r} is not key=value with a Python identifier as key")
            if any(key == k for k, _ in kwargs):
                raise ValueError(f"agent spec {spec!r}: keyword {key!r} given twice")
            kwargs.append((key, _parse_value(urllib.parse.unquote(value))))
    if base in _BUILTIN:
        return AgentSpec(base, kwargs=tuple(kwargs))
    kind, colon, rest = base.partition(":")
    if colon and kind in _CHECKPOINT_KINDS:
        if not rest:
            raise ValueError(f"agent spec {spec!r}: {kind}: needs a path, e.g. {kind}:path/to/checkpoint")
        return AgentSpec(kind, rest, kwargs=tuple(kwargs))
    target, colon, attribute = base.rpartition(":")
    if colon and target and attribute:
        if not attribute.isidentifier():
            raise ValueError(f"agent spec {spec!r}: {attribute!r} is not a class name")
        is_file = target.endswith(".py") or "/" in target or os.sep in target
        if not is_file and not all(part.isidentifier() for part in target.split(".")):
            raise ValueError(f"agent spec {spec!r}: {target!r} is neither a module name nor a path to a .py file")
        return AgentSpec("file" if is_file else "module", target, attribute, tuple(kwargs))
    raise ValueError(f"unknown agent spec {spec!r}: {_FORMS}")


def _path_like(value: Any) -> bool:
    return isinstance(value, str) and ("/" in value or os.sep in value or "." in value) and Path(value).exists()


def resolve_spec(spec: str) -> str:
    """The spec with every relative path that exists (checkpoint, agent file, keyword values
    naming files) made absolute, so the same spec means the same files from any folder."""
    parsed = parse_spec(spec)
    target = parsed.target
    shipped = parsed.kind == "torch" and is_checkpoint_name(target)  # the same file from any folder already
    if parsed.kind in (*_CHECKPOINT_KINDS, "file") and not shipped and Path(target).exists():
        target = str(Path(target).resolve())
    kwargs = tuple((k, str(Path(v).resolve()) if _path_like(v) else v) for k, v in parsed.kwargs)
    return dataclasses.replace(parsed, target=target, kwargs=kwargs).text()


def is_trusted(spec: str) -> bool:
    """True when the spec runs only this package's code: ``random``, ``heuristic``, ``torch:``
    checkpoints (data only, loaded with ``weights_only=True``) and classes of the ``agents``
    package. User modules and files, and SB3/RLlib files (which unpickle), are not."""
    parsed = parse_spec(spec)
    if parsed.kind in (*_BUILTIN, "torch"):
        return True
    return parsed.kind == "module" and (parsed.target == "agents" or parsed.target.startswith("agents."))


def load(spec: str, seed: int | None = 0, **kwargs: Any) -> Agent:
    """Build an agent from a spec string (see the module docstring); ValueError if the spec is
    malformed or names nothing that can be built. ``kwargs`` are added to the spec's own."""
    parsed = parse_spec(spec)
    options = {**dict(parsed.kwargs), **kwargs}
    try:
        return _build(spec, parsed, seed, options)
    except TypeError as error:  # most often a keyword the class does not take
        raise ValueError(f"agent spec {spec!r}: cannot build it with keywords {sorted(options)}: {error}") from None


def _build(spec: str, parsed: AgentSpec, seed: int | None, options: dict[str, Any]) -> Agent:
    if parsed.kind not in ("module", "file"):
        seed = options.pop("seed", seed)  # a seed written in the spec wins
    if parsed.kind == "random":
        return RandomAgent(seed=seed, **options)
    if parsed.kind == "heuristic":
        from agents.heuristic import HeuristicAgent

        return HeuristicAgent(seed=seed, **options)
    if parsed.kind == "torch":
        try:
            from agents.torch_agent import TorchAgent
        except ImportError as error:
            raise ValueError(f"agent spec {spec!r} needs PyTorch: pip install -e '.[train]' ({error})") from None
        return TorchAgent.from_checkpoint(parsed.target, seed=seed, **options)
    if parsed.kind in ("sb3", "rllib"):
        from agents import adapters

        cls = adapters.SB3Agent if parsed.kind == "sb3" else adapters.RLlibAgent
        return cls.from_path(parsed.target, seed=seed, **options)
    cls = _user_class(spec, parsed)
    agent = cls(**options)
    if not callable(getattr(agent, "act", None)):
        raise ValueError(f"agent spec {spec!r}: {parsed.attribute} has no act(observation, info) method")
    return agent


def _user_class(spec: str, parsed: AgentSpec) -> Any:
    if parsed.kind == "file":
        module = _import_file(spec, Path(parsed.target))
    else:
        cwd = os.getcwd()
        if cwd not in sys.path and "" not in sys.path:
            sys.path.append(cwd)  # console scripts do not put the working directory on the path
        try:
            module = importlib.import_module(parsed.target)
        except ImportError as error:
            raise ValueError(
                f"agent spec {spec!r}: cannot import module {parsed.target!r} ({error}); it is looked up in the "
                f"installed packages and the current folder {cwd}, or give a file: path/to/agent.py:Class"
            ) from None
    cls = getattr(module, parsed.attribute, None)
    if cls is None:
        raise ValueError(f"agent spec {spec!r}: module {parsed.target!r} has no {parsed.attribute!r}")
    return cls


def _import_file(spec: str, path: Path) -> Any:
    if not path.is_file():
        raise ValueError(f"agent spec {spec!r}: there is no file {str(path)!r}")
    resolved = path.resolve()
    name = "_mahjong_agent_" + hashlib.sha256(str(resolved).encode()).hexdigest()[:16]
    if name in sys.modules:
        return sys.modules[name]
    module_spec = importlib.util.spec_from_file_location(name, resolved)
    if module_spec is None or module_spec.loader is None:
        raise ValueError(f"agent spec {spec!r}: {str(path)!r} cannot be imported as a Python file")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    sys.path.append(str(resolved.parent))  # so the file can import its neighbours
    try:
        module_spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def file_sha256(path: str | Path) -> str:
    """SHA-256 of a file, or of a folder (its files' relative paths and contents, in order)."""
    path = Path(path)
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        if path.is_dir():
            digest.update(str(file.relative_to(path)).encode() + b"\0")
        with open(file, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def describe(spec: str, agent: Any) -> dict[str, Any]:
    """What a built agent says about itself: ``variant`` it was trained for (its ``variant``
    attribute, None if it does not say) and ``sources``: the files it was built from (checkpoint,
    agent file or user module, keyword values naming files), each ``{"path", "sha256"}``."""
    parsed = parse_spec(spec)
    paths: list[str | Path] = []
    if parsed.kind == "torch":
        paths.append(checkpoint_path(parsed.target))
    elif parsed.kind in (*_CHECKPOINT_KINDS, "file"):
        paths.append(parsed.target)
    elif parsed.kind == "module" and not is_trusted(spec):
        module = sys.modules.get(parsed.target)
        if module is not None and getattr(module, "__file__", None):
            paths.append(module.__file__)
    paths += [v for _, v in parsed.kwargs if _path_like(v)]
    sources = [{"path": str(Path(p).resolve()), "sha256": file_sha256(p)} for p in paths if Path(p).exists()]
    variant = getattr(agent, "variant", None)
    return {"variant": variant if isinstance(variant, str) else None, "sources": sources}
