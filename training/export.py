"""Write a shippable copy of a checkpoint: optionally without its advantage head.

    python -m training.export runs/ship/changchun.pt agents/checkpoints/changchun.pt --drop-advantage-head \\
        --note "gate: policy head alone +0.13 vs +0.03 with the head"

The policy and value weights are copied bit for bit; the metadata keeps the training record and
gains an ``export`` entry (what was dropped and why), so the shipped file says how it was made.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from agents.network import PolicyNetwork, load_checkpoint, save_checkpoint

__all__ = ["export", "main"]


def export(source: str | Path, target: str | Path, drop_advantage_head: bool = False, note: str = "") -> Path:
    """Copy checkpoint ``source`` to ``target``, without the advantage head if asked."""
    network, meta = load_checkpoint(source)
    arch = network.arch()
    if drop_advantage_head:
        if not network.advantage_head:
            raise ValueError(f"{source}: this checkpoint has no advantage head to drop")
        arch["advantage_head"] = False
        plain = PolicyNetwork(**arch)
        own = plain.state_dict()
        plain.load_state_dict({k: v for k, v in network.state_dict().items() if k in own})
        network = plain
    metadata = dict(meta.get("metadata", {}))
    if drop_advantage_head:
        metadata.pop("advantage_margin", None)
    metadata["export"] = {"source": str(source), "dropped_advantage_head": drop_advantage_head, "note": note}
    return save_checkpoint(target, network, meta["variant"], metadata)


def main(argv: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", help="checkpoint to copy")
    parser.add_argument("target", help="where to write the copy")
    parser.add_argument("--drop-advantage-head", action="store_true", help="keep the policy (and value) head only")
    parser.add_argument("--note", default="", help="why, recorded in the metadata")
    args = parser.parse_args(argv)
    try:
        path = export(args.source, args.target, args.drop_advantage_head, args.note)
    except ValueError as error:
        raise SystemExit(f"training.export: {error}") from None
    print(f"training.export: wrote {path}")
    return path


if __name__ == "__main__":
    main()
