"""What a tournament shows: the terminal leaderboard and the report folder.

The leaderboard and both reports say which rule profile and overrides were played
(`rules_text`). The report folder holds ``report.md`` and ``report.html`` (leaderboard,
head-to-head table, notable hands in words (the winner by name, the win method and fans with
their Chinese terms), forfeits, entrants with the variant each was trained for and its source files),
and, with matplotlib (the ``tournament`` extra), three plots: ``points.png`` (mean points per
hand with confidence intervals), ``headtohead.png`` (the answer to "is A better than B": each
pair's paired difference in points per hand with its interval; an interval clear of zero is a
significant difference) and ``rating.png`` (each entrant's OpenSkill skill estimate mu over the
hands played, with a band of ± sigma, its uncertainty). Notable hands (the largest win, each
entrant's worst hand) are listed by ``(deal, seating)`` with replays written to ``replays/``
(`mahjong_env.tools.html_replay`): the full table face up and each seat's own view, titled with the
deal and seating and with the entrants' names on every seat.

Everything an agent or a database can put into the report (exception text, specs, paths) is
escaped for HTML and Markdown.
"""

from __future__ import annotations

import html
import json
import math
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from agents.tournament.schedule import hands_per_deal
from agents.tournament.stats import Summary
from agents.tournament.storage import ResultStore
from mahjong_env.rules.base import DEFAULT_PROFILE, FAN_TERMS
from mahjong_env.tools.narrator import METHOD_TERMS

__all__ = ["leaderboard_text", "rules_text", "write_report"]

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


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|])")
"""What could start a link, an image, emphasis or code, or end a table cell (``<`` is
handled by HTML escaping)."""


def _md(text: Any) -> str:
    """Text safe to put in Markdown (also inside a table cell): HTML escaped, Markdown
    punctuation backslash-escaped, on one line."""
    one_line = " ".join(str(text).split())
    return _MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(one_line, quote=False))


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
                "–" if math.isnan(a.mu) else f"{a.mu:.2f} ± {a.sigma:.2f}",
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


def rules_text(config: Any) -> str:
    """``"rules: profile mil2024; overrides: fan_cap=5"``: the rule profile (RULES.md C14) and
    the rule overrides (``--rule``) the tournament was played with."""
    rules = dict(config.rules)
    profile = str(rules.pop("profile", DEFAULT_PROFILE))
    shown = f"{profile} (the defaults)" if profile == DEFAULT_PROFILE else profile
    overrides = ", ".join(f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in rules.items())
    return f"rules: profile {shown}; overrides: {overrides or 'none'}"


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
    parts = [_title(summary), rules_text(summary.config), "", _text_table(_rows(summary))]
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
    if summary.replays:
        notes.append(replays_text(summary.replays))
    played = [a.deals for a in summary.agents if a.deals]
    if played and min(played) < 30:
        notes.append(
            f"Only {min(played)} deals for some entrant: the intervals are rough (rare big hands may not have "
            "shown up yet); play more deals (--deals) before making claims"
        )
    if summary.agents and all(math.isnan(a.mu) for a in summary.agents) and summary.hands_played:
        notes.append("No ratings: the openskill package is not installed (pip install -e '.[tournament]')")
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
    _use_cjk_font()
    files = []
    level = f"{round(100 * summary.confidence)}% CI"
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
        ax.set_title(f"Mean points per hand, {level}\n(bootstrap over deals)")
        fig.tight_layout()
        fig.savefig(out / "points.png", dpi=110)
        plt.close(fig)
        files.append("points.png")
    pairs = [p for p in summary.pairs if not math.isnan(p.diff)]
    if pairs:
        fig, ax = plt.subplots(figsize=(7.5, 1.2 + 0.45 * len(pairs)))
        ys = list(range(len(pairs)))[::-1]
        low = [p.diff - p.ci_low if not math.isnan(p.ci_low) else 0 for p in pairs]
        high = [p.ci_high - p.diff if not math.isnan(p.ci_high) else 0 for p in pairs]
        colors = ["tab:green" if p.significant else "tab:grey" for p in pairs]
        for y, p, lo, hi, color in zip(ys, pairs, low, high, colors):
            ax.errorbar([p.diff], [y], xerr=[[lo], [hi]], fmt="o", capsize=5, color=color)
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_yticks(ys, [f"{p.a} − {p.b}" for p in pairs])
        ax.set_xlabel(f"A − B: points per hand, paired over the same deals ({level})")
        ax.set_title("Is A better than B? Green: the interval excludes 0 (significant)")
        fig.tight_layout()
        fig.savefig(out / "headtohead.png", dpi=110)
        plt.close(fig)
        files.append("headtohead.png")
    if summary.skill_history:
        fig, ax = plt.subplots(figsize=(7.5, 3.8))
        xs = np.arange(1, len(summary.skill_history) + 1)
        for a in summary.config.names:
            mu = np.array([h[a][0] for h in summary.skill_history])
            sigma = np.array([h[a][1] for h in summary.skill_history])
            (line,) = ax.plot(xs, mu, label=a)
            ax.fill_between(xs, mu - sigma, mu + sigma, color=line.get_color(), alpha=0.15)
        ax.set_xlabel("hands played")
        ax.set_ylabel("OpenSkill mu (skill estimate)")
        ax.set_title(
            "Rating over hands played: mu, band ± sigma (its uncertainty)\nhigher is better; "
            "bands apart = clearly different",
            fontsize="medium",
        )
        ax.legend(fontsize="small")
        fig.tight_layout()
        fig.savefig(out / "rating.png", dpi=110)
        plt.close(fig)
        files.append("rating.png")
    return files


def _use_cjk_font() -> None:
    """Let matplotlib draw Chinese labels with a CJK font where one is installed (`mahjong_env.tools.fonts`)."""
    import matplotlib.pyplot as plt

    from mahjong_env.tools.fonts import matplotlib_cjk_family

    family = matplotlib_cjk_family()
    if family is not None and family not in plt.rcParams["font.sans-serif"]:
        plt.rcParams["font.sans-serif"] = [family, *plt.rcParams["font.sans-serif"]]


def _table_title(deal: int, seating: int, seats: list[str]) -> str:
    return f"deal {deal}, seating {seating}: " + " vs ".join(f"{name} (seat {k})" for k, name in enumerate(seats))


def _notable(summary: Summary, store: ResultStore, out: Path) -> list[dict[str, Any]]:
    """Notable hands with a description and replays: the full table and every seat's view."""
    from mahjong_env.tools.html_replay import write_replay

    items = []
    for entry in summary.notable:
        item = dict(entry)
        record = store.record(entry["deal"], entry["seating"])
        hands = (record or {}).get("hands") or [{}]
        result = hands[-1].get("result") or {} if isinstance(hands[-1], dict) else {}
        seats = _seat_names(record, store, entry)
        item["what"] = _describe(result, entry["seat"], (record or {}).get("config"), seats)
        item["title"] = _table_title(entry["deal"], entry["seating"], seats)
        if record is not None:
            stem = f"deal{entry['deal']}-seating{entry['seating']}"
            try:
                (out / "replays").mkdir(parents=True, exist_ok=True)
                views: dict[str, str] = {}
                for seat in (None, 0, 1, 2, 3):
                    name = f"{stem}.html" if seat is None else f"{stem}-seat{seat}.html"
                    if not (out / "replays" / name).exists():
                        write_replay(
                            record, out / "replays" / name, seat=seat, hand=0, title=item["title"], players=seats
                        )
                    views["table" if seat is None else f"seat {seat} ({seats[seat]})"] = f"replays/{name}"
                item["replays"] = views
            except Exception as error:  # a replay is a convenience; the report stands without it
                item["replay_error"] = str(error)
        items.append(item)
    return items


def _seat_names(record: dict[str, Any] | None, store: ResultStore, entry: dict[str, Any]) -> list[str]:
    players = (record or {}).get("players")
    if isinstance(players, list) and len(players) == 4 and all(isinstance(p, str) for p in players):
        return players
    return [str(entry.get("agent")) if k == entry["seat"] else f"player_{k}" for k in range(4)]


def _describe(result: dict[str, Any], seat: int, config: Any = None, seats: list[str] | None = None) -> str:
    """One hand from ``seat``'s side: who won (by the entrants' names in ``seats``), how (the
    Chinese term and its English gloss), with which fans (key and Chinese name)."""
    from mahjong_env.tools.html_replay import fan_cap_note

    outcome = result.get("outcome")
    if outcome == "win":
        fans = ", ".join(_fan_text(name, fan) for name, fan in result.get("fans", []))
        winner = result.get("winner")
        if winner == seat:
            who = "won"
        elif seats is not None and isinstance(winner, int) and 0 <= winner < len(seats):
            who = f"{seats[winner]} (seat {winner}) won"
        else:
            who = f"player_{winner} won"
        method = " ".join(filter(None, METHOD_TERMS.get(str(result.get("method")), ("", str(result.get("method"))))))
        rules = SimpleNamespace(fan_cap=config.get("fan_cap")) if isinstance(config, dict) else None
        capped = fan_cap_note(result, rules)
        return f"{who} by {method}, {result.get('total_fan')} fan ({fans})" + (f", {capped}" if capped else "")
    if outcome == "illegal":
        return "forfeit"
    return "drawn hand"


def _fan_text(name: str, fan: Any) -> str:
    """``"duibao 对宝 2"``: a fan key with its Chinese name (`FAN_TERMS`) and value."""
    chinese = FAN_TERMS.get(name, ("", ""))[0]
    return f"{name} {chinese} {fan}" if chinese else f"{name} {fan}"


def _entrant_rows(summary: Summary, store: ResultStore) -> list[list[str]]:
    stored = store.entrants()
    rows = [["name", "spec", "trained for", "process", "source files (sha256)"]]
    for name, spec in summary.config.agents:
        entry = stored.get(name, {})
        sources = "; ".join(f"{s.get('path')} ({str(s.get('sha256'))[:12]})" for s in entry.get("sources") or [])
        variant = entry.get("variant") or ("–" if entry else "not recorded")
        process = "own process" if entry.get("isolated") else ("in-process" if entry else "not recorded")
        rows.append([name, spec, str(variant), process, sources or "package code"])
    return rows


def replays_text(replays: list[dict[str, Any]]) -> str:
    """One line on the plays that were lost and played again (`ResultStore.replays`)."""
    hands = len({(r["deal"], r["seating"]) for r in replays})
    lost = "" if hands == len(replays) else f" ({len(replays)} plays lost)"
    return (
        f"played again: {hands} hand(s){lost}, after their node or worker was lost; the results are those of the "
        "replays (the report's 'Played again' lists which and why)"
    )


def _replay_lines(replays: list[dict[str, Any]]) -> list[str]:
    return [
        f"deal {r['deal']}, seating {r['seating']}, play {r['attempt']}"
        + (f" on {r['place']}" if r["place"] else "")
        + f": {r['reason']}"
        for r in replays
    ]


def _first_line(message: str) -> str:
    lines = message.strip().splitlines()
    return lines[-1] if lines else ""


def write_report(summary: Summary, store: ResultStore, out: str | Path) -> Path:
    """Write the report folder; returns the path of ``report.html``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    plots = _plots(summary, out)
    notable = _notable(summary, store, out)
    title = _title(summary)
    entrants = _entrant_rows(summary, store)
    notes = _notes(summary)
    level = f"{round(100 * summary.confidence)}% CI"
    explain = (
        "Points per hand are per seat-hand; the interval resamples deals (duplicate grouping). "
        "Rating: OpenSkill Plackett–Luce; mu is the skill estimate, sigma its uncertainty, "
        "rating = mu − 3 sigma (a conservative rank)."
    )

    rules = rules_text(summary.config)
    md = [
        f"# Tournament report\n\n{title}\n\n{_md(rules)}\n",
        "## Leaderboard\n",
        _markdown_table(_rows(summary)),
        "",
        explain + "\n",
    ]
    if summary.pairs:
        md += [
            "## Head-to-head\n",
            f"Is A better than B? A − B in points per hand over the deals both played ({level}); "
            "significant when the interval excludes 0.\n",
            _markdown_table(_pair_rows(summary)),
            "",
        ]
    md += [f"![{p}]({p})\n" for p in plots]
    md += ["## Notable hands\n"]
    for n in notable:
        links = ""
        if "replays" in n:
            links = " — replay: " + ", ".join(f"[{_md(k)}]({v})" for k, v in n["replays"].items())
        md.append(
            f"- {n['kind']}: {_md(n['title'])}; seat {n['seat']} ({n['agent']}): "
            f"{n['points']:+g} points, {_md(n['what'])}{links}"
        )
    md.append("")
    if summary.forfeits:
        md += ["## Forfeits\n"]
        for f in summary.forfeits:
            md.append(
                f"- deal {f['deal']}, seating {f['seating']}: {_md(f['agent'])} (seat {f['seat']}) "
                f"{_md(f['kind'])}: {_md(_first_line(f['message']))}"
            )
        md.append("")
    if summary.replays:
        md += ["## Played again\n"] + [f"- {_md(line)}" for line in _replay_lines(summary.replays)] + [""]
    md += ["## Entrants\n", _markdown_table([entrants[0]] + [[_md(c) for c in r] for r in entrants[1:]]), ""]
    if notes:
        md += ["## Notes\n"] + [f"- {n}" for n in notes] + [""]
    (out / "report.md").write_text("\n".join(md), encoding="utf-8")

    def replay_links(n: dict[str, Any]) -> str:
        if "replays" not in n:
            return ""
        return " — replay: " + ", ".join(
            f'<a href="{html.escape(v)}">{html.escape(k)}</a>' for k, v in n["replays"].items()
        )

    notable_html = "".join(
        "<li>"
        + html.escape(
            f"{n['kind']}: {n['title']}; seat {n['seat']} ({n['agent']}): {n['points']:+g} points, {n['what']}"
        )
        + replay_links(n)
        + "</li>"
        for n in notable
    )
    forfeits_html = "".join(
        f"<li>deal {f['deal']}, seating {f['seating']}: {html.escape(f['agent'])} (seat {f['seat']}) "
        f"{html.escape(f['kind'])}<pre>{html.escape(f['message'][-600:])}</pre></li>"
        for f in summary.forfeits
    )
    replays_html = "".join(f"<li>{html.escape(line)}</li>" for line in _replay_lines(summary.replays))
    pairs_html = ""
    if summary.pairs:
        pairs_html = (
            "<h2>Head-to-head</h2><p>Is A better than B? A − B in points per hand over the deals both played "
            f"({html.escape(level)}); significant when the interval excludes 0.</p>" + _html_table(_pair_rows(summary))
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
<h1>Tournament report</h1><p>{html.escape(title)}</p><p>{html.escape(rules)}</p>
<h2>Leaderboard</h2>{_html_table(_rows(summary))}
<p>{html.escape(explain)}</p>
{pairs_html}
{"".join(f'<p><img src="{p}" alt="{p}"></p>' for p in plots)}
<h2>Notable hands</h2><ul>{notable_html}</ul>
{"<h2>Forfeits</h2><ul>" + forfeits_html + "</ul>" if summary.forfeits else ""}
{"<h2>Played again</h2><ul>" + replays_html + "</ul>" if summary.replays else ""}
<h2>Entrants</h2>{_html_table(entrants)}
{"<h2>Notes</h2><ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in notes) + "</ul>" if notes else ""}
</body></html>
"""
    (out / "report.html").write_text(page, encoding="utf-8")
    return out / "report.html"
