"""What a tournament shows: the terminal leaderboard and the report folder.

The report folder holds ``report.md`` and ``report.html`` (leaderboard, head-to-head table,
notable hands, forfeits), ``points.png`` (mean points per hand with confidence intervals) and
``rating.png`` (each entrant's OpenSkill ordinal over the hands played). Notable hands (the
largest win, each entrant's worst hand) are listed by ``(deal, seating)``; where the module
``mahjong_env.html_replay`` provides ``write_replay(record, path, seat=None, hand=0)``, their
replays are written to ``replays/`` and linked.
"""

from __future__ import annotations

import html
import importlib
import importlib.util
import math
from pathlib import Path
from typing import Any

from agents.tournament.schedule import hands_per_deal
from agents.tournament.stats import Summary
from agents.tournament.storage import ResultStore

__all__ = ["leaderboard_text", "write_report"]

_COLUMNS = (
    ("#", "rank"),
    ("agent", "name"),
    ("pts/hand", "mean"),
    ("95% CI", "ci"),
    ("win", "win_rate"),
    ("self-draw", "self_draw_rate"),
    ("deal-in", "deal_in_rate"),
    ("drawn", "draw_rate"),
    ("avg fan", "average_fan"),
    ("forfeit", "forfeit_rate"),
    ("rating", "rating"),
    ("mu ± sigma", "mu_sigma"),
    ("ms/move", "ms_per_move"),
    ("seat-hands", "seat_hands"),
)


def _number(value: float, digits: int = 2, sign: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    value = round(value, digits) + 0.0  # no "-0.00"
    return f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"


def _percent(value: float) -> str:
    return "–" if math.isnan(value) else f"{100 * value:.1f}%"


def _rows(summary: Summary) -> list[list[str]]:
    level = f"{round(100 * summary.confidence)}% CI"
    header = [title if key != "ci" else level for title, key in _COLUMNS]
    rows = [header]
    for rank, a in enumerate(summary.agents, 1):
        rows.append(
            [
                str(rank),
                a.name,
                _number(a.mean, sign=True),
                f"[{_number(a.ci_low, sign=True)}, {_number(a.ci_high, sign=True)}]",
                _percent(a.win_rate),
                _percent(a.self_draw_rate),
                _percent(a.deal_in_rate),
                _percent(a.draw_rate),
                _number(a.average_fan),
                _percent(a.forfeit_rate),
                _number(a.ordinal),
                f"{a.mu:.2f} ± {a.sigma:.2f}",
                _number(a.ms_per_move, 3),
                str(a.seat_hands),
            ]
        )
    return rows


def _pair_rows(summary: Summary) -> list[list[str]]:
    rows = [["A", "B", "A − B pts/hand", f"{round(100 * summary.confidence)}% CI", "deals", "significant"]]
    for p in summary.pairs:
        rows.append(
            [
                p.a,
                p.b,
                _number(p.diff, sign=True),
                f"[{_number(p.ci_low, sign=True)}, {_number(p.ci_high, sign=True)}]",
                str(p.deals),
                "yes" if p.significant else "no",
            ]
        )
    return rows


def _title(summary: Summary) -> str:
    c = summary.config
    per_deal = hands_per_deal(len(c.agents), c.format)
    layout = f"{per_deal} seatings" if per_deal > 1 else "one hand each"
    return (
        f"{c.variant.capitalize()} mahjong, {c.format} format, {c.deals} deals × {layout} = "
        f"{summary.hands_expected} hands ({summary.hands_played} played), seed {c.seed}"
    )


def _text_table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for index, row in enumerate(rows):
        cells = [
            cell.ljust(w) if i < 2 or index == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths))
        ]
        lines.append("  ".join(cells).rstrip())
        if index == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def leaderboard_text(summary: Summary) -> str:
    """The leaderboard and head-to-head differences as plain text for the terminal."""
    parts = [_title(summary), "", _text_table(_rows(summary))]
    if summary.pairs:
        parts += ["", "Head-to-head (paired over deals):", _text_table(_pair_rows(summary))]
    notes = _notes(summary)
    if notes:
        parts += [""] + notes
    return "\n".join(parts)


def _notes(summary: Summary) -> list[str]:
    notes = []
    if summary.forfeits:
        kinds: dict[str, int] = {}
        for f in summary.forfeits:
            key = f"{f['agent']} ({f['kind']})"
            kinds[key] = kinds.get(key, 0) + 1
        notes.append("Forfeits: " + ", ".join(f"{k}: {n}" for k, n in sorted(kinds.items())))
    if summary.failures:
        notes.append(f"{len(summary.failures)} hand(s) failed on every attempt (rerun them with --resume)")
    played = [a.deals for a in summary.agents if a.deals]
    if played and min(played) < 30:
        notes.append(
            f"Only {min(played)} deals for some entrant: the intervals are rough (rare big hands may not have "
            "shown up yet); play more deals (--deals) before making claims"
        )
    missing = summary.hands_expected - summary.hands_played - len(summary.failures)
    if missing > 0:
        notes.append(f"{missing} hand(s) not played yet (continue with --resume)")
    return notes


def _markdown_table(rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "|".join("---" for _ in rows[0]) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(lines)


def _html_table(rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in rows[0])
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows[1:])
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _plots(summary: Summary, out: Path) -> list[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    files = []
    agents = [a for a in summary.agents if not math.isnan(a.mean)]
    if agents:
        fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(agents) + 2), 3.6))
        means = [a.mean for a in agents]
        low = [a.mean - a.ci_low if not math.isnan(a.ci_low) else 0 for a in agents]
        high = [a.ci_high - a.mean if not math.isnan(a.ci_high) else 0 for a in agents]
        ax.errorbar(range(len(agents)), means, yerr=[low, high], fmt="o", capsize=6)
        ax.axhline(0, color="grey", linewidth=0.8)
        ax.set_xticks(range(len(agents)), [a.name for a in agents], rotation=20)
        ax.set_ylabel("mean points per hand")
        ax.set_title(f"Mean points per hand, {round(100 * summary.confidence)}% CI\n(bootstrap over deals)")
        fig.tight_layout()
        fig.savefig(out / "points.png", dpi=110)
        plt.close(fig)
        files.append("points.png")
    if summary.rating_history:
        fig, ax = plt.subplots(figsize=(7, 3.6))
        xs = range(1, len(summary.rating_history) + 1)
        for a in summary.config.names:
            ax.plot(xs, [h[a] for h in summary.rating_history], label=a)
        ax.set_xlabel("hands played")
        ax.set_ylabel("OpenSkill ordinal (mu − 3 sigma)")
        ax.set_title("Rating over hands played")
        ax.legend(fontsize="small")
        fig.tight_layout()
        fig.savefig(out / "rating.png", dpi=110)
        plt.close(fig)
        files.append("rating.png")
    return files


def _replay_writer() -> Any:
    if importlib.util.find_spec("mahjong_env.html_replay") is None:
        return None
    return getattr(importlib.import_module("mahjong_env.html_replay"), "write_replay", None)


def _notable(summary: Summary, store: ResultStore, out: Path) -> list[dict[str, Any]]:
    """Notable hands with a description and, where possible, a replay file."""
    writer = _replay_writer()
    items = []
    for entry in summary.notable:
        item = dict(entry)
        record = store.record(entry["deal"], entry["seating"])
        result = (record or {}).get("hands", [{}])[-1].get("result") or {}
        item["what"] = _describe(result, entry["seat"])
        if writer is not None and record is not None:
            name = f"deal{entry['deal']}-seating{entry['seating']}-seat{entry['seat']}.html"
            try:
                (out / "replays").mkdir(parents=True, exist_ok=True)
                writer(record, out / "replays" / name, seat=entry["seat"], hand=0)
                item["replay"] = f"replays/{name}"
            except Exception as error:  # a replay is a convenience; the report stands without it
                item["replay_error"] = str(error)
        items.append(item)
    return items


def _describe(result: dict[str, Any], seat: int) -> str:
    outcome = result.get("outcome")
    if outcome == "win":
        fans = ", ".join(f"{name} {fan}" for name, fan in result.get("fans", []))
        who = "won" if result.get("winner") == seat else f"player_{result.get('winner')} won"
        return f"{who} by {result.get('method')}, {result.get('total_fan')} fan ({fans})"
    if outcome == "illegal":
        return "forfeit"
    return "drawn hand"


def write_report(summary: Summary, store: ResultStore, out: str | Path) -> Path:
    """Write the report folder; returns the path of ``report.html``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    plots = _plots(summary, out)
    notable = _notable(summary, store, out)
    title = _title(summary)
    entrants = [[name, spec] for name, spec in summary.config.agents]
    notes = _notes(summary)

    md = [f"# Tournament report\n\n{title}\n", "## Leaderboard\n", _markdown_table(_rows(summary)), ""]
    md.append(
        "Points per hand are per seat-hand; the interval resamples deals (duplicate grouping). "
        "Rating: OpenSkill Plackett–Luce ordinal (mu − 3 sigma).\n"
    )
    if summary.pairs:
        md += ["## Head-to-head\n", _markdown_table(_pair_rows(summary)), ""]
    md += [f"![{p}]({p})\n" for p in plots]
    md += ["## Notable hands\n"]
    for n in notable:
        link = f" — [replay]({n['replay']})" if "replay" in n else ""
        md.append(
            f"- {n['kind']}: deal {n['deal']}, seating {n['seating']}, seat {n['seat']} ({n['agent']}): "
            f"{n['points']:+g} points, {n['what']}{link}"
        )
    md.append("")
    if summary.forfeits:
        md += ["## Forfeits\n"]
        for f in summary.forfeits:
            first = f["message"].strip().splitlines()[-1] if f["message"].strip() else ""
            md.append(
                f"- deal {f['deal']}, seating {f['seating']}: {f['agent']} (seat {f['seat']}) {f['kind']}: {first}"
            )
        md.append("")
    md += ["## Entrants\n", _markdown_table([["name", "spec"]] + entrants), ""]
    if notes:
        md += ["## Notes\n"] + [f"- {n}" for n in notes] + [""]
    (out / "report.md").write_text("\n".join(md), encoding="utf-8")

    notable_html = "".join(
        "<li>"
        + html.escape(
            f"{n['kind']}: deal {n['deal']}, seating {n['seating']}, seat {n['seat']} ({n['agent']}): "
            f"{n['points']:+g} points, {n['what']}"
        )
        + (f' — <a href="{html.escape(n["replay"])}">replay</a>' if "replay" in n else "")
        + "</li>"
        for n in notable
    )
    forfeits_html = "".join(
        f"<li>deal {f['deal']}, seating {f['seating']}: {html.escape(f['agent'])} (seat {f['seat']}) {f['kind']}"
        f"<pre>{html.escape(f['message'][-600:])}</pre></li>"
        for f in summary.forfeits
    )
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Tournament report</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; max-width: 70em; }}
table {{ border-collapse: collapse; margin: 1em 0; }}
th, td {{ border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: right; }}
th {{ background: #f3f3f3; }} td:nth-child(2), td:first-child {{ text-align: left; }}
pre {{ background: #f7f7f7; padding: 0.5em; overflow-x: auto; }}
</style></head><body>
<h1>Tournament report</h1><p>{html.escape(title)}</p>
<h2>Leaderboard</h2>{_html_table(_rows(summary))}
<p>Points per hand are per seat-hand; the interval resamples deals (duplicate grouping).
Rating: OpenSkill Plackett–Luce ordinal (mu − 3 sigma).</p>
{"<h2>Head-to-head</h2>" + _html_table(_pair_rows(summary)) if summary.pairs else ""}
{"".join(f'<p><img src="{p}" alt="{p}"></p>' for p in plots)}
<h2>Notable hands</h2><ul>{notable_html}</ul>
{"<h2>Forfeits</h2><ul>" + forfeits_html + "</ul>" if summary.forfeits else ""}
<h2>Entrants</h2>{_html_table([["name", "spec"]] + entrants)}
{"<h2>Notes</h2><ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in notes) + "</ul>" if notes else ""}
</body></html>
"""
    (out / "report.html").write_text(page, encoding="utf-8")
    return out / "report.html"
