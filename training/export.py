"""Write a shippable copy of a checkpoint: optionally without its advantage head.

    python -m training.export runs/ship/changchun.pt agents/checkpoints/changchun.pt --drop-advantage-head \\
        --note "gate: policy head alone +0.13 vs +0.03 with the head"

The policy and value weights are copied bit for bit; the metadata keeps the training record and
gains an ``export`` entry (what was dropped and why), so the shipped file says how it was made.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import tyro

from agents.network import PolicyNetwork, load_checkpoint, save_checkpoint
from training.cli import InputError, prepare_output, require_file, script_main

__all__ = ["Args", "check_args", "export", "main", "without_advantage_head"]


def without_advantage_head(network: PolicyNetwork) -> PolicyNetwork:
    """A copy of ``network`` without its advantage head: the same trunk, policy and value weights."""
    arch = network.arch()
    arch["advantage_head"] = False
    plain = PolicyNetwork(**arch)
    own = plain.state_dict()
    plain.load_state_dict({k: v for k, v in network.state_dict().items() if k in own})
    return plain.eval()


def export(source: str | Path, target: str | Path, drop_advantage_head: bool = False, note: str = "") -> Path:
    """Copy checkpoint ``source`` to ``target``, without the advantage head if asked."""
    network, meta = load_checkpoint(source)
    if drop_advantage_head:
        if not network.advantage_head:
            raise ValueError(f"{source}: this checkpoint has no advantage head to drop")
        network = without_advantage_head(network)
    metadata = dict(meta.get("metadata", {}))
    if drop_advantage_head:
        metadata.pop("advantage_margin", None)
    metadata["export"] = {"source": str(source), "dropped_advantage_head": drop_advantage_head, "note": note}
    return save_checkpoint(target, network, meta["variant"], metadata)


@dataclass
class Args:
    """Write a shippable copy of a checkpoint, optionally without its advantage head."""

    source: Annotated[str, tyro.conf.Positional, tyro.conf.arg(metavar="SOURCE")]
    """checkpoint to copy"""
    target: Annotated[str, tyro.conf.Positional, tyro.conf.arg(metavar="TARGET")]
    """where to write the copy (its folder is made first)"""
    drop_advantage_head: bool = False
    """keep the policy (and value) head only"""
    note: str = ""
    """why, recorded in the metadata"""


def check_args(args: Args) -> None:
    """The source checkpoint (its advantage head, if one is to be dropped) and the target's folder."""
    require_file(args.source, "SOURCE")
    try:
        network, _ = load_checkpoint(args.source)
    except ValueError as error:
        raise InputError(f"SOURCE: {error}") from None
    if args.drop_advantage_head and not network.advantage_head:
        raise InputError(f"SOURCE {args.source!r} has no advantage head to drop (leave out --drop-advantage-head)")
    prepare_output(args.target, "TARGET")


def _run(args: Args) -> Path:
    return export(args.source, args.target, args.drop_advantage_head, args.note)


def main(argv: list[str] | None = None) -> Path:
    """The command line: the written checkpoint's path on stdout."""
    return script_main("python -m training.export", Args, check_args, _run, argv)


if __name__ == "__main__":
    main()
