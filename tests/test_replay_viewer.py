"""The HTML replay viewer (`mahjong_env.tools.html_replay`) and ``mahjong-env replay``.

The page is loaded in headless Chromium (``--dump-dom`` and ``--screenshot`` at ``#step=last``)
to check that the settlement it shows equals the record's result and that it draws something;
those tests skip when no ``chromium`` is on the PATH (Debian: ``apt-get install chromium``).
The hidden-information tests need no browser: they read the HTML source.
"""

from __future__ import annotations

import html.parser
import json
import random
import re
import shutil
import sqlite3
import subprocess
import tempfile
import zlib
from pathlib import Path
from typing import Any

import pytest
from scenario import act, deal, legal, mover

from mahjong_env import changchun_v0, xinjiang_v0
from mahjong_env.actions import action_id
from mahjong_env.tiles import counts_of, format_counts, parse_tiles
from mahjong_env.tools.cli import load_records, main
from mahjong_env.tools.html_replay import replay_frames, replay_html, write_replay
from mahjong_env.tools.records import replay_hand, variant_rules
from mahjong_env.view import table_view

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (apt-get install chromium)")

# Changchun, dealer player_0 ready at once on 5s (单吊); the bao indicator is 8p (dice 2: the
# upper tile of the 2nd stack from the tail, i.e. the 4th tile taken by replacement draws).
# player_1 never holds, draws or sees an 8p; the other three copies are with players 2 and 3.
BAO_HANDS = ["1239m456p5789s111z", "2468m1357p2468s2z", "157m2388p369s346z", "4679m38p57s34567z"]
BAO = "8p"


def bao_record() -> dict[str, Any]:
    env = deal(changchun_v0, BAO_HANDS, wall="5z6z7z5s", tail="123z8p", dealer=0, dice=[2])
    act(env, "player_0: ready 9m")
    act(env, "player_0: view_bao")
    for seat in (1, 2, 3):
        agent = f"player_{seat}"
        while mover(env) != agent:
            act(env, "pass")
        act(env, f"{agent}: discard {env.view(agent)['drawn']}")
    act(env, "player_0: win")
    record = env.record()
    assert record["hands"][0]["result"]["winner"] == 0
    return record


def concealed_kong_record() -> dict[str, Any]:
    """Xinjiang (concealed kongs face down, R7): player_0 kongs all four 8p, then play goes on."""
    hands = ["8888p123m456s1z2z3z4z", "123p456p789s1199m", "234m567m2349s557z", "12567p789m33s667z"]
    env = deal(xinjiang_v0, hands, wall="9p9s1s", tail="1s")
    act(env, "player_0: concealed_kong 8p")
    act(env, "player_0: discard 1z")
    for _ in range(6):
        options = sorted(legal(env))
        act(env, "pass" if "pass" in options else next(o for o in options if o.startswith("discard")))
    return env.record()


def greedy_record(module: Any, seed: int) -> dict[str, Any]:
    """A hand where every seat takes wins, special kongs, views, kongs and claims when it can."""
    env = module.env()
    env.reset(seed=seed)
    raw = env.unwrapped
    rng = random.Random(seed)
    prefer = ("win", "special_winds", "special_dragons", "special_ones", "special_nines", "view_bao", "kong", "pong")
    for agent in env.agent_iter():
        _, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        options = raw.legal_actions(agent)
        choice = next((p for p in prefer if p in options), None)
        if choice is None:
            bold = [
                o for o in options if o.startswith(("chow", "ready", "concealed_kong", "added_kong", "special_add"))
            ]
            choice = rng.choice(bold or options)
        env.step(action_id(choice))
    return raw.record()


@pytest.fixture(scope="module")
def greedy_records() -> list[dict[str, Any]]:
    return [greedy_record(changchun_v0, s) for s in range(12)] + [greedy_record(xinjiang_v0, s) for s in range(6)]


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _tile_tokens(source: str) -> set[str]:
    """Every tile named in compact notation anywhere in the text (``"568p"`` names 5p 6p 8p)."""
    tiles = set()
    for digits, suit in re.findall(r"(?<![0-9A-Za-z_.#-])([1-9]+)([mpsz])(?![A-Za-z0-9_])", source):
        tiles.update(d + suit for d in digits)
    return tiles


def _sorted(tiles: str) -> str:
    return format_counts(counts_of(parse_tiles(tiles)))


def _full_states(record: dict[str, Any], hand: int = 0) -> list[dict[str, Any]]:
    """The full table after every step, computed here without the viewer."""
    rules = variant_rules(record["variant"], record["config"])
    views: list[dict[str, Any]] = []
    replay_hand(
        rules, record["seed"], hand, record["hands"][hand], lambda game, _: views.append(table_view(game, None, True))
    )
    return views


# ---------------------------------------------------------------------- hidden information (R13)


def test_single_seat_page_hides_other_hands_the_wall_and_the_unseen_bao() -> None:
    record = bao_record()
    full = replay_html(record)
    sorted_hands = [_sorted(h) for h in BAO_HANDS]  # views write concealed hands sorted
    for h in sorted_hands:
        assert _quoted(h) in full
    assert BAO in _tile_tokens(full)

    viewer = replay_html(record, seat=1)
    assert _quoted(sorted_hands[1]) in viewer
    for s in (0, 2, 3):
        assert _quoted(sorted_hands[s]) not in viewer, f"player_{s}'s hand leaked into player_1's page"
    assert record["hands"][0]["wall"] not in viewer
    assert BAO not in _tile_tokens(viewer), "the bao leaked into the page of a player that never saw it"
    assert "seed" not in replay_frames(record, seat=1)["meta"]

    # the player that looked at the bao sees it, from that step on only
    frames = replay_frames(record, seat=0)["frames"]
    seen = [f["view"]["bao"] for f in frames]
    assert seen[:2] == [None, None] and all(b == BAO for b in seen[2:])
    assert BAO in _tile_tokens(replay_html(record, seat=0))


def test_every_step_hides_the_other_concealed_hands(greedy_records: list[dict[str, Any]]) -> None:
    for record in greedy_records[:6] + greedy_records[-2:]:
        states = _full_states(record)
        for seat in range(4):
            page = replay_html(record, seat=seat)
            mine = {v["hands"][seat] for v in states}
            for view in states:
                for other in range(4):
                    hand = view["hands"][other]
                    if other != seat and len(parse_tiles(hand)) >= 4 and hand not in mine:
                        assert _quoted(hand) not in page, (record["seed"], seat, other, hand)


def test_single_seat_text_tells_no_private_decision_of_others(greedy_records: list[dict[str, Any]]) -> None:
    private = re.compile(r"player_(\d) (passes|does not|declines|looks at the bao|calls)")
    for record in greedy_records:
        for seat in range(4):
            data = replay_frames(record, seat=seat)
            for frame in data["frames"]:
                for line in frame["text"]:
                    match = private.search(line)
                    assert match is None or int(match.group(1)) == seat, (record["seed"], seat, line)
                assert frame["actor"] in (None, *range(4))
                assert "hands" not in frame["view"] and "bao_seen_by" not in frame
                bao = frame["view"]["bao"]
                assert bao is None or frame["view"]["bao_seen"]


def test_face_down_concealed_kong_stays_face_down() -> None:
    record = concealed_kong_record()
    full = replay_html(record)
    assert "8p" in _tile_tokens(full) and "concealed kong (暗杠) of 8p" in full
    for seat in (1, 2, 3):
        page = replay_html(record, seat=seat)
        assert "8p" not in _tile_tokens(page), f"player_{seat} learns the concealed kong's tile"
        melds = replay_frames(record, seat=seat)["frames"][-1]["view"]["melds"][0]
        assert melds[0]["kind"] == "concealed_kong" and melds[0]["tiles"] is None
    own = replay_frames(record, seat=0)["frames"][-1]["view"]["melds"][0]
    assert own[0]["tiles"] == "8888p"


def test_frames_follow_the_engine(greedy_records: list[dict[str, Any]]) -> None:
    for record in greedy_records[:4]:
        states = _full_states(record)
        frames = replay_frames(record)["frames"]
        assert len(frames) == len(record["hands"][0]["actions"]) + 1 == len(states)
        for frame, view in zip(frames, states):
            assert frame["view"] == json.loads(json.dumps(view))
            rivers = [[d["tile"] for d in river if d["claimed"] is None] for river in frame["rivers"]]
            assert rivers == view["discards"]
        assert frames[-1]["result"] == record["hands"][0]["result"]
        single = replay_frames(record, seat=2)["frames"]
        assert 1 < len(single) <= len(frames)
        assert single[-1]["result"] == record["hands"][0]["result"]


def test_bad_arguments_are_refused() -> None:
    record = bao_record()
    with pytest.raises(ValueError, match="seat"):
        replay_html(record, seat=4)
    with pytest.raises(ValueError, match="hand"):
        replay_html(record, hand=1)


def test_page_is_self_contained_and_escapes_names(tmp_path: Path) -> None:
    record = bao_record()
    record["players"] = ["</script><script>alert(1)</script>", "b", "c", "d"]
    path = write_replay(record, tmp_path / "hand.html", seat=None)
    source = path.read_text(encoding="utf-8")
    assert "http://" not in source and "https://" not in source
    assert "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:" in source
    assert "<script>alert(1)" not in source
    assert not re.search(r"<(link|img|iframe)\b|\bsrc=", source)


# ---------------------------------------------------------------------- the command line


def test_cli_reads_jsonl_and_sqlite(tmp_path: Path) -> None:
    records = [concealed_kong_record(), bao_record()]
    jsonl = tmp_path / "games.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    out = tmp_path / "a.html"
    assert main(["replay", str(jsonl), "--record", "1", "--seat", "1", "-o", str(out)]) == 0
    assert BAO not in _tile_tokens(out.read_text(encoding="utf-8"))
    assert main(["replay", str(jsonl), "--record", "5", "-o", str(out)]) == 2

    db = tmp_path / "results.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE hands (deal INTEGER, seating INTEGER, result TEXT, record TEXT)")
    conn.execute("CREATE TABLE seats (deal INTEGER, seating INTEGER, seat INTEGER, agent TEXT)")
    for i, r in enumerate(records):
        conn.execute("INSERT INTO hands VALUES (?, ?, ?, ?)", (7, i, "{}", json.dumps(r)))
        conn.executemany("INSERT INTO seats VALUES (?, ?, ?, ?)", [(7, i, s, f"bot{s}") for s in range(4)])
    conn.commit()
    conn.close()
    assert [r["variant"] for r in load_records(db)] == ["xinjiang_v0", "changchun_v0"]
    assert load_records(db, deal=7, seating=1)[0]["players"] == ["bot0", "bot1", "bot2", "bot3"]
    assert main(["replay", str(db), "--deal", "7", "--seating", "1", "-o", str(out)]) == 0
    assert "bot3" in out.read_text(encoding="utf-8")
    assert "<title>deal 7, seating 1 · hand 0: full table, face up</title>" in out.read_text(encoding="utf-8")


# ---------------------------------------------------------------------- in a browser


class _DomReader(html.parser.HTMLParser):
    """Collects elements by id and class with their data attributes and text."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[dict[str, Any]] = []
        self._open: list[dict[str, Any]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = {"tag": tag, "attrs": dict(attrs), "text": ""}
        self.elements.append(element)
        if tag not in ("meta", "input", "br", "link", "img"):
            self._open.append(element)

    def handle_endtag(self, tag: str) -> None:
        while self._open:
            if self._open.pop()["tag"] == tag:
                break

    def handle_data(self, data: str) -> None:
        for element in self._open:
            element["text"] += data

    def by_id(self, name: str) -> dict[str, Any] | None:
        return next((e for e in self.elements if e["attrs"].get("id") == name), None)

    def by_class(self, name: str) -> list[dict[str, Any]]:
        return [e for e in self.elements if name in (e["attrs"].get("class") or "").split()]


def _chromium(*args: str) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as profile:
        command = [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            f"--user-data-dir={profile}",
            *args,
        ]
        return subprocess.run(command, capture_output=True, text=True, timeout=90)


def _dom(path: Path, step: str) -> _DomReader:
    done = _chromium("--dump-dom", f"{path.resolve().as_uri()}#step={step}")
    assert done.returncode == 0, done.stderr[-2000:]
    reader = _DomReader()
    reader.feed(done.stdout)
    return reader


def _check_settlement(reader: _DomReader, result: dict[str, Any]) -> None:
    outcome = reader.by_id("outcome")
    assert outcome is not None, "no settlement on the last step"
    assert outcome["attrs"]["data-outcome"] == result["outcome"]
    winner = result["winner"]
    assert outcome["attrs"]["data-winner"] == ("" if winner is None else str(winner))
    if winner is not None:
        assert f"winner player_{winner}" in outcome["text"]
        assert f"total fan 番 {result['total_fan']}" in outcome["text"]
    fans = [(e["attrs"]["data-fan"], int(e["attrs"]["data-value"])) for e in reader.by_class("fan")]
    assert fans == [(name, value) for name, value in result["fans"]]
    for element in reader.by_class("fan"):
        assert element["attrs"]["data-fan"] in element["text"]
    rows = reader.by_class("seat-total")
    assert [int(r["attrs"]["data-seat"]) for r in rows] == [0, 1, 2, 3]
    for s, row in enumerate(rows):
        assert float(row["attrs"]["data-delta"]) == result["deltas"][s]
        assert float(row["attrs"]["data-kong"]) == result["kong_deltas"][s]
        total = result["deltas"][s] + result["kong_deltas"][s]
        assert (f"+{total:g}" if total > 0 else f"{total:g}") in row["text"]
    payments = [
        (
            int(e["attrs"]["data-from"]),
            int(e["attrs"]["data-to"]),
            float(e["attrs"]["data-points"]),
            e["attrs"]["data-reason"],
        )
        for e in reader.by_class("payment")
    ]
    assert payments == [(p["from"], p["to"], p["points"], p["reason"]) for p in result["payments"]]


@needs_chromium
def test_browser_shows_the_settlement_of_the_record(tmp_path: Path, greedy_records: list[dict[str, Any]]) -> None:
    wins = [r for r in greedy_records if r["hands"][0]["result"]["method"] == "discard"][:1]
    draws = [r for r in greedy_records if r["hands"][0]["result"]["outcome"] == "draw"][:1]
    assert wins and draws, "the greedy hands no longer include a discard win and a draw: pick other seeds"
    cases = [(bao_record(), 1), *((r, None) for r in wins + draws)]
    for i, (record, seat) in enumerate(cases):
        path = write_replay(record, tmp_path / f"hand{i}.html", seat=seat)
        reader = _dom(path, "last")
        _check_settlement(reader, record["hands"][0]["result"])
        frames = replay_frames(record, seat=seat)["frames"]
        counter = reader.by_id("counter")
        assert counter is not None and counter["text"] == f"step {len(frames) - 1} / {len(frames) - 1}"
        action = reader.by_id("action")
        assert action is not None and frames[-1]["text"][-1] in action["text"]
    start = _dom(tmp_path / "hand0.html", "0")
    assert start.by_id("outcome") is None
    assert "deal: player_0 is the dealer" in start.by_id("action")["text"]
    assert len(start.by_class("back")) == 14 + 13 + 13  # player_1's view: the others face down
    middle = _dom(tmp_path / "hand0.html", "1")
    assert "player_0 declares ready (听) and discards 9m" in middle.by_id("action")["text"]
    assert middle.by_id("bao") is None  # player_1 never sees it


def _pixels(png: Path) -> Any:
    """The screenshot as an array (matplotlib when present), else its decompressed scanlines."""
    try:
        import matplotlib.image

        return matplotlib.image.imread(str(png))
    except ImportError:
        import numpy as np

        data = png.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        pos, chunks = 8, b""
        while pos < len(data):
            length = int.from_bytes(data[pos : pos + 4], "big")
            if data[pos + 4 : pos + 8] == b"IDAT":
                chunks += data[pos + 8 : pos + 8 + length]
            pos += 12 + length
        return np.frombuffer(zlib.decompress(chunks), dtype=np.uint8).astype(float)


@needs_chromium
def test_browser_screenshot_is_not_blank(tmp_path: Path) -> None:
    path = write_replay(bao_record(), tmp_path / "hand.html")
    png = tmp_path / "shot.png"
    done = _chromium(f"--screenshot={png}", "--window-size=1200,900", f"{path.resolve().as_uri()}#step=last")
    assert done.returncode == 0 and png.is_file(), done.stderr[-2000:]
    pixels = _pixels(png)
    assert pixels.size > 1000 and float(pixels.std()) > 0.05 * (1.0 if pixels.max() <= 1.0 else 255.0)


def _png_rgb(png: Path) -> Any:
    """A screenshot as an ``(height, width, channels)`` uint8 array (8-bit PNG, any filter)."""
    import struct

    import numpy as np

    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height, channels = 8, b"", 0, 0, 0
    while pos < len(data):
        length = int.from_bytes(data[pos : pos + 4], "big")
        kind = data[pos + 4 : pos + 8]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", data[pos + 8 : pos + 18])
            assert depth == 8, "only 8-bit screenshots are decoded"
            channels = {0: 1, 2: 3, 4: 2, 6: 4}[color]
        elif kind == b"IDAT":
            idat += data[pos + 8 : pos + 8 + length]
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    out = np.zeros((height, stride), np.uint8)
    prev = np.zeros(stride, np.int64)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], np.frombuffer(raw, np.uint8, stride, start + 1).astype(np.int64)
        if kind == 0:
            cur = line
        elif kind == 2:
            cur = (line + prev) & 255
        else:  # Sub, Average, Paeth depend on the pixel to the left: byte by byte
            cur = np.zeros(stride, np.int64)
            for x in range(stride):
                a = cur[x - channels] if x >= channels else 0
                b = prev[x]
                c = prev[x - channels] if x >= channels else 0
                if kind == 1:
                    p = a
                elif kind == 3:
                    p = (a + b) // 2
                else:
                    pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                    p = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                cur[x] = (line[x] + p) & 255
        out[y] = cur
        prev = cur
    return out.reshape(height, width, channels)


@needs_chromium
def test_browser_renders_the_chinese_labels_not_empty_boxes(tmp_path: Path) -> None:
    """Issue 14: without a CJK font the labels (庄 听 碰 杠 胡 番) are empty boxes (tofu), all
    the same .notdef glyph. In the viewer's font stack each label must draw ink of its own,
    unlike a code point no font has. Needs a CJK font: apt-get install fonts-wqy-microhei."""
    from mahjong_env.tools.fonts import CSS_FONT_STACK, DEBIAN_PACKAGE

    assert CSS_FONT_STACK in replay_html(bao_record())  # the page uses this font stack
    labels = "庄听碰杠胡番"
    tofu = "\U0010fffd"  # a private-use code point: no font draws it
    cells = "".join(
        f'<div style="position:absolute;left:{i * 120}px;top:0;width:120px;height:120px;font-size:96px;'
        f'line-height:120px;text-align:center">{c}</div>'
        for i, c in enumerate(labels + tofu)
    )
    page = tmp_path / "labels.html"
    page.write_text(
        '<!DOCTYPE html><html><head><meta charset="utf-8"><style>html, body { margin: 0; overflow: hidden; '
        f"background: #fff; color: #000; font-family: {CSS_FONT_STACK}; }}</style></head><body>{cells}</body></html>",
        encoding="utf-8",
    )
    png = tmp_path / "labels.png"
    done = _chromium(f"--screenshot={png}", "--hide-scrollbars", "--window-size=900,200", page.resolve().as_uri())
    assert done.returncode == 0 and png.is_file(), done.stderr[-2000:]
    ink = _png_rgb(png)[:120, :, :3].astype(int).sum(axis=2) < 384  # dark pixels
    glyphs = [ink[:, i * 120 : (i + 1) * 120] for i in range(len(labels) + 1)]
    missing = f"the labels render as empty boxes: install a CJK font (apt-get install {DEBIAN_PACKAGE})"
    for i, label in enumerate(labels):
        assert glyphs[i].sum() > 200, f"{label!r} drew nothing; {missing}"
        assert (glyphs[i] != glyphs[-1]).sum() > 200, f"{label!r} is drawn as the missing-glyph box; {missing}"
        for j in range(i):
            assert (glyphs[i] != glyphs[j]).sum() > 200, f"{label!r} and {labels[j]!r} look the same; {missing}"


# ---------------------------------------------------------------------- matches, names, caps


def _random_match(module: Any, seed: int, num_hands: int, **rules: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A match played with random legal actions (wins and kongs taken); also player_0's info and
    the scores at each hand's start."""
    raw = module.raw_env(num_hands=num_hands, **rules)
    raw.reset(seed=seed)
    rng = random.Random(seed)
    starts = [dict(raw.infos["player_0"], scores=list(raw.game.scores))]
    hand = 0
    while not all(raw.terminations.values()):
        options = raw.legal_actions(raw.agent_selection)
        eager = [o for o in options if o == "win" or "kong" in o]
        raw.step(action_id(eager[0] if eager else rng.choice(options)))
        if raw.game.hand_index != hand and not raw.game.over:
            hand = raw.game.hand_index
            starts.append(dict(raw.infos["player_0"], scores=list(raw.game.scores)))
    return json.loads(json.dumps(raw.record())), starts


def test_a_later_hand_starts_from_the_match_scores_base_and_silver() -> None:
    """Issue 13: the replay of hand h > 0 started the scores (and Xinjiang's base) from zero."""
    for module, seed in ((xinjiang_v0, 3), (changchun_v0, 5)):
        record, starts = next(
            (r, s) for r, s in (_random_match(module, seed + k, 3) for k in range(40)) if any(s[1]["scores"])
        )
        for h in (1, 2):
            data = replay_frames(record, hand=h)
            assert data["frames"][0]["view"]["scores"] == starts[h]["scores"]
            assert data["meta"]["start"]["scores"] == starts[h]["scores"]
            last = record["hands"][h - 1]["result"]
            before = replay_frames(record, hand=h - 1)["frames"][-1]["view"]["scores"]
            assert before == starts[h]["scores"] and last is not None
            if module is xinjiang_v0:
                assert data["meta"]["start"]["base"] == starts[h]["base"]
                assert data["meta"]["start"]["silver"] == starts[h]["silver"]


def test_title_and_player_names(tmp_path: Path) -> None:
    record = dict(bao_record(), players=["Ann", "Bo", "Cy", "Di"])
    page = replay_html(record, title="deal 3, seating 1")
    assert "<title>deal 3, seating 1 · hand 0: full table, face up</title>" in page
    assert replay_frames(record)["meta"]["players"] == ["Ann", "Bo", "Cy", "Di"]
    given = replay_html(bao_record(), players=["<b>w</b>", "x", "y", "z"])
    assert (
        "<b>w</b>" not in given
        and replay_frames(dict(bao_record(), players=["w", "x", "y", "z"]))["meta"]["players"][0] == "w"
    )
    with pytest.raises(ValueError, match="players"):
        replay_html(bao_record(), players=["only", "three", "names"])
    with pytest.raises(ValueError, match="players"):
        replay_frames(dict(bao_record(), players=["a", "b", "c", 4]))
    with pytest.raises(ValueError, match="title"):
        replay_html(bao_record(), title=7)  # type: ignore[arg-type]
    if CHROMIUM is not None:
        path = write_replay(record, tmp_path / "named.html", title="deal 3, seating 1")
        reader = _dom(path, "last")
        for seat, name in enumerate(record["players"]):
            box = reader.by_id(f"seat-{seat}")
            assert box is not None and f"player_{seat} ({name})" in box["text"]
        assert "deal 3, seating 1" in reader.by_id("title")["text"]


def test_a_capped_total_fan_says_so(tmp_path: Path) -> None:
    from mahjong_env.tools.html_replay import fan_cap_note
    from mahjong_env.tools.play import settlement_text

    record = next(
        r
        for r in (greedy_record_with(changchun_v0, s, fan_cap=1) for s in range(40))
        if r["hands"][0]["result"]["winner"] is not None
    )
    result = record["hands"][0]["result"]
    added = sum(v for _, v in result["fans"])
    assert result["total_fan"] == 1 < added
    note = f"capped at 1 fan (the fans add up to {added})"
    assert replay_frames(record)["meta"]["fan_note"] == note
    config = variant_rules(record["variant"], record["config"]).config
    assert fan_cap_note(result, config) == note and note in settlement_text(result, 0, config)
    uncapped = dict(result, total_fan=added)
    assert fan_cap_note(uncapped, variant_rules(record["variant"], dict(record["config"], fan_cap=30)).config) is None
    if CHROMIUM is not None:
        reader = _dom(write_replay(record, tmp_path / "capped.html"), "last")
        assert note in reader.by_id("outcome")["text"]


def greedy_record_with(module: Any, seed: int, **rules: Any) -> dict[str, Any]:
    """`greedy_record` under rule overrides."""
    env = module.env(**rules)
    env.reset(seed=seed)
    raw = env.unwrapped
    rng = random.Random(seed)
    for agent in env.agent_iter():
        _, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        options = raw.legal_actions(agent)
        env.step(action_id("win" if "win" in options else rng.choice(options)))
    return json.loads(json.dumps(raw.record()))


def test_matplotlib_finds_a_font_for_the_chinese_labels(tmp_path: Path) -> None:
    """The tournament's plots use `mahjong_env.tools.fonts.matplotlib_cjk_family`: with it, matplotlib
    draws 庄 听 番 without its "Glyph ... missing" warning (they would be empty boxes)."""
    import warnings

    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mahjong_env.tools.fonts import DEBIAN_PACKAGE, cjk_font_family, cjk_font_path, matplotlib_cjk_family

    if cjk_font_path() is None:
        pytest.skip(f"no CJK font installed (apt-get install {DEBIAN_PACKAGE})")
    family = matplotlib_cjk_family()
    assert family is not None and cjk_font_family() is not None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        figure = plt.figure()
        figure.text(0.1, 0.5, "庄 听 番 碰 杠", fontfamily=family)
        figure.savefig(tmp_path / "labels.png")
        plt.close(figure)
    assert not [w for w in caught if "missing from font" in str(w.message)], [str(w.message) for w in caught]


def test_the_page_assets_are_package_data_read_through_importlib_resources() -> None:
    """The skeleton, style sheet and script are files of the installed package (pyproject's
    package-data), and the page is built from exactly them."""
    from importlib import resources

    from mahjong_env.tools import html_replay, narrator
    from mahjong_env.tools.fonts import CSS_FONT_STACK

    static = resources.files("mahjong_env.tools").joinpath("static")
    page = replay_html(bao_record())
    for name in html_replay.STATIC_FILES:
        asset = static.joinpath(name)
        assert asset.is_file(), name
        text = asset.read_text(encoding="utf-8")
        assert text.strip() and html_replay.static_text(name) == text
    skeleton, css, script = (html_replay.static_text(n) for n in ("replay.html", "replay.css", "replay.js"))
    assert all(mark in skeleton for mark in ("%TITLE%", "%CSS%", "%JS%", "%DATA%"))
    assert "%FONTS%" in css and css.replace("%FONTS%", CSS_FONT_STACK) in page
    assert script in page and not any(m in page for m in ("%TITLE%", "%CSS%", "%JS%", "%DATA%", "%FONTS%"))
    with pytest.raises(ValueError, match="no static file"):
        html_replay.static_text("../records.py")
    # the narrator moved to its own module; the old import path still gives the same objects
    assert html_replay.Narrator is narrator.Narrator and html_replay.reason_text is narrator.reason_text


# ---------------------------------------------------------------------- a researcher's first day (issue 24)


def _tournament_db(path: Path) -> Path:
    """A tournament-shaped database: deal 7 with seatings 0 and 1, players named by seat."""
    records = [concealed_kong_record(), bao_record()]
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE hands (deal INTEGER, seating INTEGER, result TEXT, record TEXT)")
    conn.execute("CREATE TABLE seats (deal INTEGER, seating INTEGER, seat INTEGER, agent TEXT)")
    for i, r in enumerate(records):
        conn.execute("INSERT INTO hands VALUES (?, ?, ?, ?)", (7, i, "{}", json.dumps(r)))
        conn.executemany("INSERT INTO seats VALUES (?, ?, ?, ?)", [(7, i, s, f"bot{s}") for s in range(4)])
    conn.commit()
    conn.close()
    return path


def test_replay_without_o_is_named_after_the_deal_and_seating(tmp_path: Path, capsys: Any) -> None:
    db = _tournament_db(tmp_path / "results.sqlite")
    assert main(["replay", str(db), "--deal", "7", "--seating", "1"]) == 0
    page = tmp_path / "results-deal7-seating1.html"
    assert f"wrote {page}" in capsys.readouterr().out and "bot3" in page.read_text(encoding="utf-8")
    assert main(["replay", str(db), "--deal", "7", "--seating", "0", "--seat", "2"]) == 0
    assert (tmp_path / "results-deal7-seating0-seat2.html").exists()
    assert main(["replay", str(db), "--deal", "7", "--record", "1"]) == 0  # the seating of the row picked
    assert (tmp_path / "results-deal7-seating1.html").exists()
    assert main(["replay", str(db), "--record", "1"]) == 0  # picked by record: named as before
    assert (tmp_path / "results-1-0.html").exists() and not (tmp_path / "results-0-0.html").exists()


def test_replay_says_which_deals_and_seatings_exist(tmp_path: Path, capsys: Any) -> None:
    db = _tournament_db(tmp_path / "results.sqlite")
    capsys.readouterr()
    for extra in ([], ["--seating", "0"]):
        assert main(["replay", str(db), "--deal", "9", *extra]) == 2
        assert f"--deal 9 is out of range: {db} holds deals 7..7" in capsys.readouterr().err
    assert main(["replay", str(db), "--deal", "7", "--seating", "4"]) == 2
    assert f"--seating 4 is out of range for deal 7: {db} holds seatings 0..1 of it" in capsys.readouterr().err
    empty = tmp_path / "empty.sqlite"
    conn = sqlite3.connect(empty)
    conn.execute("CREATE TABLE hands (deal INTEGER, seating INTEGER, record TEXT)")
    conn.commit()
    conn.close()
    assert main(["replay", str(empty), "--deal", "0"]) == 2
    assert f"no records in {empty}" in capsys.readouterr().err


def test_a_damaged_database_is_called_damaged(tmp_path: Path, capsys: Any) -> None:
    db = _tournament_db(tmp_path / "results.sqlite")
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(bytes(range(256)) * 8)  # not even the SQLite header
    damaged = tmp_path / "damaged.sqlite"
    data = bytearray(db.read_bytes())
    data[100:] = b"\x07" * (len(data) - 100)  # the header kept, the schema and pages overwritten
    damaged.write_bytes(bytes(data))
    for path in (garbage, damaged):
        for extra in ([], ["--deal", "7"]):
            assert main(["replay", str(path), *extra]) == 2
            err = capsys.readouterr().err
            assert f"{path} is not a readable SQLite database: the file is damaged or not SQLite" in err, err
            assert "--record" not in err and "JSON" not in err


def _settlement_in_node(data: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    """The settlement box as replay.js draws it at the last step, run by node with a minimal DOM."""
    from mahjong_env.tools.html_replay import static_text

    harness = r"""
const fs = require("fs");
const data = fs.readFileSync(process.argv[2], "utf8"), script = fs.readFileSync(process.argv[3], "utf8");
class Node {
  constructor(tag) { this.tag = tag; this.children = []; this.dataset = {}; this.className = ""; this.id = "";
    this.text = ""; this.classList = { add: (c) => { this.className += " " + c; } }; }
  appendChild(child) { this.children.push(child); return child; }
  set textContent(v) { this.text = v === null || v === undefined ? "" : String(v); this.children = []; }
  get textContent() { return this.text + this.children.map((c) => c.textContent).join(""); }
  addEventListener() {}
}
const byId = {"replay-data": {textContent: data}};
globalThis.document = {body: new Node("body"), createElement: (tag) => new Node(tag), addEventListener() {},
  getElementById: (id) => byId[id] || (byId[id] = Object.assign(new Node("div"), {id}))};
globalThis.location = {hash: "#step=last"};
globalThis.history = {replaceState() {}};
globalThis.window = {addEventListener() {}};
(0, eval)(script);
const dump = (n) => ({tag: n.tag, id: n.id, cls: n.className.trim(), data: n.dataset, text: n.text,
  children: n.children.map(dump)});
process.stdout.write(JSON.stringify(dump(byId["settlement-box"])));
"""
    files = {"harness.js": harness, "data.json": json.dumps(data), "replay.js": static_text("replay.js")}
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    done = subprocess.run(
        [NODE, *(str(tmp_path / n) for n in files)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _nodes(tree: dict[str, Any]) -> list[dict[str, Any]]:
    return [tree] + [n for child in tree["children"] for n in _nodes(child)]


def _text(node: dict[str, Any]) -> str:
    return node["text"] + "".join(_text(c) for c in node["children"])


NODE = shutil.which("node")


def test_the_xinjiang_settlement_shows_the_silver_the_hand_moved(tmp_path: Path) -> None:
    """X7: every payment moves points × base silver; the viewer shows each seat's silver won or
    lost, its silver after the hand, and each payment's silver."""
    record = greedy_record_with(xinjiang_v0, 15)  # player_1 self-draws: each other seat pays 1 point
    result = record["hands"][0]["result"]
    assert result["winner"] == 1 and result["method"] == "self_draw"
    data = replay_frames(record)
    start = data["meta"]["start"]
    silver = data["frames"][-1]["silver"]
    assert silver["base"] == start["base"] == 100  # 3500 // 35
    points = [d + k for d, k in zip(result["deltas"], result["kong_deltas"])]
    assert silver["moved"] == [p * 100 for p in points] == [-100.0, 300.0, -100.0, -100.0]
    assert silver["after"] == [s + m for s, m in zip(start["silver"], silver["moved"])]
    assert all("silver" not in frame for frame in data["frames"][:-1])
    assert replay_frames(record, seat=2)["frames"][-1]["silver"] == silver  # public, like the result
    assert "silver" not in replay_frames(bao_record())["frames"][-1]  # Changchun has no silver
    if NODE is None:
        pytest.skip("no node on PATH to run the page's script")
    box = _nodes(_settlement_in_node(data, tmp_path))
    rows = {int(n["data"]["seat"]): n for n in box if n["cls"] == "seat-total"}
    for seat, row in rows.items():
        cells = {c["cls"]: c["text"] for c in row["children"] if c["cls"]}
        assert row["data"]["silver"] == str(int(silver["moved"][seat]))
        assert cells == {"silver": f"{silver['moved'][seat]:+g}", "silver-after": f"{silver['after'][seat]:g}"}
    headers = [n["text"] for n in box if n["tag"] == "th"]
    assert "silver 银 won/lost" in headers and "silver 银 after" in headers and "silver 银" in headers
    payments = [n for n in box if n["cls"] == "payment"]
    assert len(payments) == 3 and all(_text(p).endswith("100") for p in payments)
    assert any("base 底 100" in _text(n) for n in box if n["tag"] == "p")
    changchun = _nodes(_settlement_in_node(replay_frames(bao_record()), tmp_path))
    assert not any("silver" in n["text"] for n in changchun)
