"""Run plumbing shared by the training scripts: command-line flags generated from an ``Args``
dataclass, the run directory, metric logging (TensorBoard with a CSV fallback) and the
learning-curve plot.

Every field of an ``Args`` dataclass becomes a flag: ``total_steps`` → ``--total-steps``, its
type from the annotation, its default from the field, its help text from the docstring written
under the field (the CleanRL/tyro convention). Booleans get ``--flag`` / ``--no-flag``.
"""

from __future__ import annotations

import argparse
import ast
import csv
import dataclasses
import inspect
import itertools
import textwrap
import types
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

__all__ = [
    "MetricLogger",
    "field_docs",
    "make_parser",
    "new_run_dir",
    "parse_args",
    "plot_curves",
    "progress_bar",
    "require",
    "script_main",
]

T = TypeVar("T")


def field_docs(cls: type) -> dict[str, str]:
    """The docstring written under each field of a dataclass, by field name."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    docs: dict[str, str] = {}
    body = ast.parse(source).body[0].body  # type: ignore[attr-defined]
    for node, following in itertools.pairwise(body):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            docs[node.target.id] = inspect.cleandoc(following.value.value)
    return docs


def _scalar_type(annotation: Any) -> tuple[type, bool]:
    """(the argparse type, whether None is allowed) of a field annotation."""
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) != 1:
            raise TypeError(f"unsupported union annotation {annotation!r}")
        return args[0], True
    return annotation, False


def _none_or(kind: type) -> Any:
    def convert(text: str) -> Any:
        return None if text.lower() in ("none", "") else kind(text)

    convert.__name__ = kind.__name__
    return convert


def make_parser(cls: type, description: str | None = None) -> argparse.ArgumentParser:
    """An argparse parser with one flag per field of the dataclass ``cls``."""
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls!r} is not a dataclass")
    hints = typing.get_type_hints(cls)
    docs = field_docs(cls)
    parser = argparse.ArgumentParser(
        description=description or inspect.cleandoc(cls.__doc__ or ""),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    for field in dataclasses.fields(cls):
        flag = "--" + field.name.replace("_", "-")
        kind, optional = _scalar_type(hints[field.name])
        default = field.default if field.default is not dataclasses.MISSING else field.default_factory()  # type: ignore[misc]
        help_text = (docs.get(field.name, "") or " ").replace("%", "%%")
        if kind is bool:
            parser.add_argument(
                flag, dest=field.name, action=argparse.BooleanOptionalAction, default=default, help=help_text
            )
        elif kind in (int, float, str):
            parser.add_argument(
                flag, dest=field.name, type=_none_or(kind) if optional else kind, default=default, help=help_text
            )
        else:
            raise TypeError(f"{cls.__name__}.{field.name}: unsupported flag type {kind!r}")
    return parser


def parse_args(cls: type[T], argv: Sequence[str] | None = None) -> T:
    """Parse command-line flags into an instance of the dataclass ``cls``."""
    namespace = make_parser(cls).parse_args(argv)
    return cls(**vars(namespace))


def script_main(prog: str, cls: type[T], check: Any, train: Any, argv: Sequence[str] | None = None) -> Any:
    """A training script's entry point: parse the flags into ``cls``, ``check`` them (a bad flag
    exits with one line naming it, before anything is created), then ``train``."""
    args = parse_args(cls, argv)
    try:
        check(args)
    except ValueError as error:
        raise SystemExit(f"{prog}: {error}") from None
    return train(args)


def require(condition: bool, message: str) -> None:
    """Raise ``ValueError(message)`` unless ``condition``: argument checks that run before a
    training script creates anything."""
    if not condition:
        raise ValueError(message)


def new_run_dir(out_dir: str | Path, variant: str, exp_name: str, seed: int) -> Path:
    """A fresh run directory ``{out_dir}/{variant}__{exp_name}__{seed}__{unix time}`` (CleanRL's
    naming; ``-2``, ``-3`` … appended if it exists), so a run never overwrites another's files."""
    import time

    base = Path(out_dir) / f"{variant}__{exp_name}__{seed}__{int(time.time())}"
    path, k = base, 1
    while True:
        try:
            path.mkdir(parents=True, exist_ok=False)
            return path
        except FileExistsError:
            k += 1
            path = base.with_name(f"{base.name}-{k}")


def progress_bar(total: int, desc: str, enabled: bool) -> Any:
    """A tqdm bar, or a silent stand-in with the same ``update``/``set_postfix``/``n`` when
    disabled or when tqdm is not installed."""
    if enabled:
        try:
            from tqdm import tqdm

            return tqdm(total=total, desc=desc, unit="it")
        except ImportError:
            pass
    return _SilentBar()


class _SilentBar:
    def __init__(self) -> None:
        self.n = 0

    def update(self, k: int = 1) -> None:
        self.n += k

    def set_postfix(self, **_: Any) -> None:
        return None

    def close(self) -> None:
        return None

    def __enter__(self) -> _SilentBar:
        return self

    def __exit__(self, *_: Any) -> None:
        return None


class MetricLogger:
    """Scalars to TensorBoard (``torch.utils.tensorboard``) when it is installed, and always to
    ``metrics.csv`` (columns ``step, tag, value``) in the run directory."""

    def __init__(self, run_dir: str | Path, tensorboard: bool = True) -> None:
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.csv_path = self.run_dir / "metrics.csv"
        if self.csv_path.exists():
            raise ValueError(f"{self.csv_path} exists: a run directory holds one run (use training.cli.new_run_dir)")
        self._file = self.csv_path.open("w", newline="")
        self._csv = csv.writer(self._file)
        self._csv.writerow(["step", "tag", "value"])
        self.history: dict[str, list[tuple[int, float]]] = {}
        self.writer: Any = None
        if tensorboard:
            try:
                from torch.utils.tensorboard import SummaryWriter

                self.writer = SummaryWriter(str(self.run_dir))
            except ImportError:  # tensorboard not installed: the CSV is the log
                self.writer = None

    def add_text(self, tag: str, text: str) -> None:
        if self.writer is not None:
            self.writer.add_text(tag, text)

    def scalar(self, tag: str, value: float, step: int) -> None:
        value = float(value)
        self.history.setdefault(tag, []).append((step, value))
        self._csv.writerow([step, tag, value])
        if self.writer is not None:
            self.writer.add_scalar(tag, value, step)

    def close(self) -> None:
        self._file.close()
        if self.writer is not None:
            self.writer.close()


def plot_curves(
    history: dict[str, list[tuple[int, float]]], tags: Sequence[str], path: str | Path, title: str, smooth: int = 1
) -> Path | None:
    """Plot the logged ``tags`` (one panel each, moving average over ``smooth`` points) into a
    PNG; returns its path, or None when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    import numpy as np

    shown = [t for t in tags if history.get(t)]
    fig, axes = plt.subplots(len(shown) or 1, 1, figsize=(7, 2.6 * max(1, len(shown))), squeeze=False)
    for ax, tag in zip(axes[:, 0], shown):
        steps, values = map(np.asarray, zip(*history[tag]))
        ax.plot(steps, values, alpha=0.35 if smooth > 1 else 1.0, label=tag)
        if smooth > 1 and len(values) >= smooth:
            kernel = np.ones(smooth) / smooth
            ax.plot(steps[smooth - 1 :], np.convolve(values, kernel, mode="valid"), label=f"{tag} ({smooth}-pt mean)")
        ax.set_ylabel(tag.split("/")[-1])
        ax.grid(alpha=0.3)
        ax.legend(loc="best", fontsize=8)
    axes[-1, 0].set_xlabel("step")
    fig.suptitle(title)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
