"""Run plumbing shared by the training commands: the command line, errors, logging, progress bars,
output paths, the run directory, metric logging and the learning-curve plot.

Command line. Every command (``python -m training.{paired,bc,duplicate,ppo,evaluate,export,
rllib_example}``) reads its flags from an ``Args`` dataclass through tyro, as CleanRL does: a field
``total_steps`` is the flag ``--total-steps``, its type the annotation, its default the field's,
its help the docstring written under it; booleans get ``--flag`` / ``--no-flag``, ``X | None``
fields take ``None``. ``--help`` has the same layout for every command.

Streams and exit codes, the same for every command:

- stdout carries the result only: the path of what the command wrote (one line), or the table of
  an evaluation; the log (``logging``, ``training.*`` loggers) and the tqdm progress bars go to
  stderr, the bars only when stderr is a terminal and ``--no-progress`` is not given;
- exit 2: a bad flag or a bad value, one line ``error: …`` naming the flag, before anything is
  created;
- exit 1: a user error at run time (a missing or unreadable input file, a checkpoint that does
  not fit, an agent spec that cannot be built, an output folder that cannot be made), one line
  ``error: …``; every input is checked before a run directory is created or any work starts.
"""

from __future__ import annotations

import contextlib
import csv
import io
import logging
import re
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar

__all__ = [
    "InputError",
    "MetricLogger",
    "curve_figure",
    "new_run_dir",
    "parse_args",
    "plot_curves",
    "prepare_output",
    "progress_bar",
    "require",
    "require_file",
    "script_main",
]

T = TypeVar("T")
R = TypeVar("R")


class InputError(ValueError):
    """A user error found at run time (exit code 1): an input file that is missing or does not
    fit, an output path that cannot be written. A plain ``ValueError`` from an ``Args`` check is a
    bad value (exit code 2)."""


def require(condition: bool, message: str) -> None:
    """Raise ``ValueError(message)`` unless ``condition``: the checks of flag values that run
    before a command creates anything."""
    if not condition:
        raise ValueError(message)


def require_file(path: str | Path, flag: str) -> Path:
    """``path`` as a Path if it is an existing file, else `InputError` naming ``flag``."""
    path = Path(path)
    if not path.is_file():
        where = "is a folder, not a file" if path.is_dir() else "does not exist"
        raise InputError(f"{flag} {str(path)!r} {where}")
    return path


def prepare_output(path: str | Path, flag: str, suffix: str | None = None) -> Path:
    """Make the folder an output file will go to (before any work), and return the file's path;
    ``suffix`` is appended when the path lacks it (as ``numpy.savez`` does). `InputError` naming
    ``flag`` when the path is a folder or the folder cannot be made or written."""
    if str(path).endswith(("/", "\\")) or Path(path).is_dir():
        raise InputError(f"{flag} {str(path)!r} is a folder; give a file path")
    path = Path(path)
    if suffix is not None and path.suffix != suffix:
        path = path.with_name(path.name + suffix)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path.parent):  # a file can be written there (os.access says yes to root)
            pass
    except OSError as error:
        reason = error.strerror or error
        raise InputError(f"{flag}: cannot write into the folder {str(path.parent)!r}: {reason}") from None
    return path


# ---------------------------------------------------------------------- command line

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_BORDER = "│╭╮╰╯"


def _one_line(report: str) -> str:
    """tyro's boxed parse error as one line: the first paragraph of the box; for missing flags,
    their names."""
    lines = [_ANSI.sub("", line).strip().strip(_BORDER).rstrip() for line in report.splitlines()]
    title = next((line.strip("─ ") for line in lines if line.startswith("─")), "")
    body: list[str] = []
    for line in lines:
        if line.startswith("─"):  # the top border, with the title
            continue
        if not line.strip() or set(line.strip()) == {"─"}:
            if body:
                break
            continue
        body.append(line[1:] if line.startswith(" ") else line)  # the box's inner padding
    if title.lower().startswith("required"):  # "Missing from PROG:" then the flags, indented by 4
        missing = [line.strip() for line in body if line.startswith("    ") and not line.startswith("     ")]
        return "missing " + ", ".join(missing or [" ".join(body)])
    text = " ".join(" ".join(body).split()) or " ".join(report.split())
    return re.sub(r"^error:?\s+", "", text, flags=re.IGNORECASE)


def parse_args(cls: type[T], argv: Sequence[str] | None = None, prog: str | None = None) -> T:
    """The flags (``sys.argv`` when ``argv`` is None) as an instance of the dataclass ``cls``,
    by tyro; a bad flag or value exits with code 2 and one line ``error: …`` on stderr."""
    import tyro

    prog = prog or Path(sys.argv[0]).name
    captured = io.StringIO()
    try:
        with contextlib.redirect_stderr(captured):
            args = tyro.cli(cls, args=list(sys.argv[1:] if argv is None else argv), prog=prog)
    except SystemExit as exit_:
        if exit_.code in (0, None):  # --help
            raise
        print(f"error: {_one_line(captured.getvalue())} (see {prog} --help)", file=sys.stderr)
        raise SystemExit(2) from None
    sys.stderr.write(captured.getvalue())
    return args


@contextlib.contextmanager
def _command_logging() -> Any:
    """``training.*`` log records to stderr as ``name: message`` (above the progress bars)."""
    from tqdm.contrib.logging import logging_redirect_tqdm

    root = logging.getLogger("training")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        with logging_redirect_tqdm([root]):
            yield
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def script_main(
    prog: str,
    cls: type[T],
    check: Callable[[T], None],
    run: Callable[[T], R],
    argv: Sequence[str] | None = None,
    show: Callable[[R], str] | None = str,
) -> R:
    """A training command's entry point: parse the flags into ``cls``, ``check`` them (everything
    that can be checked before work: values, input files, output folders), ``run``, and print
    ``show(result)`` on stdout. Errors exit as the module docstring says."""
    args = parse_args(cls, argv, prog)
    with _command_logging():
        try:
            check(args)
        except InputError as error:
            _fail(error, 1)
        except ValueError as error:
            _fail(error, 2)
        try:
            result = run(args)
        except (InputError, OSError) as error:
            _fail(error, 1)
    if show is not None:
        print(show(result), flush=True)
    return result


def _fail(error: Exception, code: int) -> NoReturn:
    message = str(error)
    if isinstance(error, OSError) and error.filename:
        message = f"{error.strerror}: {error.filename}"
    print(f"error: {' '.join(message.split())}", file=sys.stderr, flush=True)
    raise SystemExit(code)


# ---------------------------------------------------------------------- runs


def new_run_dir(out_dir: str | Path, variant: str, exp_name: str, seed: int) -> Path:
    """A fresh run directory ``{out_dir}/{variant}__{exp_name}__{seed}__{unix time}`` (CleanRL's
    naming; ``-2``, ``-3`` … appended if it exists), so a run never overwrites another's files."""
    base = Path(out_dir) / f"{variant}__{exp_name}__{seed}__{int(time.time())}"
    path, k = base, 1
    while True:
        try:
            path.mkdir(parents=True, exist_ok=False)
            return path
        except FileExistsError:
            k += 1
            path = base.with_name(f"{base.name}-{k}")


def progress_bar(total: int | None, desc: str, enabled: bool, unit: str = "it") -> Any:
    """A tqdm bar on stderr, shown only when ``enabled`` and stderr is a terminal (tqdm's
    ``disable=None``), so piped and logged runs stay clean."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, disable=None if enabled else True, file=sys.stderr)


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


def curve_figure(history: dict[str, list[tuple[int, float]]], tags: Sequence[str], title: str, smooth: int = 1) -> Any:
    """A matplotlib figure of the logged ``tags``, one panel each: the logged points (with markers
    up to 50 points, so a run of one or two updates still shows them) and a moving average over
    ``smooth`` points where there are that many."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    shown = [t for t in tags if history.get(t)]
    fig, axes = plt.subplots(len(shown) or 1, 1, figsize=(7, 2.6 * max(1, len(shown))), squeeze=False)
    for ax, tag in zip(axes[:, 0], shown):
        steps, values = map(np.asarray, zip(*history[tag]))
        averaged = smooth > 1 and len(values) >= smooth
        few = len(values) <= 50  # markers where a line alone would not show (one point) or hide the points
        ax.plot(steps, values, marker="o" if few else None, markersize=4, alpha=0.35 if averaged else 1.0, label=tag)
        if averaged:
            kernel = np.ones(smooth) / smooth
            ax.plot(steps[smooth - 1 :], np.convolve(values, kernel, mode="valid"), label=f"{tag} ({smooth}-pt mean)")
        ax.set_ylabel(tag.split("/")[-1])
        ax.grid(alpha=0.3)
        ax.legend(loc="best", fontsize=8)
    if not shown:
        axes[0, 0].text(0.5, 0.5, "nothing logged", ha="center", va="center", transform=axes[0, 0].transAxes)
    axes[-1, 0].set_xlabel("step")
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def plot_curves(
    history: dict[str, list[tuple[int, float]]], tags: Sequence[str], path: str | Path, title: str, smooth: int = 1
) -> Path | None:
    """`curve_figure` saved as a PNG; returns its path, or None when matplotlib is missing."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig = curve_figure(history, tags, title, smooth)
    path = Path(path)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
