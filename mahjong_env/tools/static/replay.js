
"use strict";
const DATA = JSON.parse(document.getElementById("replay-data").textContent);
const META = DATA.meta, FRAMES = DATA.frames, TERMS = DATA.terms;
const SUITS = "mpsz";
const DIGITS = "一二三四五六七八九";
const SUIT_CN = {m: "万", p: "饼", s: "条"};
const HONORS = "东南西北白发中";
const HONOR_EN = ["East", "South", "West", "North", "White", "Green", "Red"];
const HONOR_GLYPHS = [0x1F000, 0x1F001, 0x1F002, 0x1F003, 0x1F006, 0x1F005, 0x1F004];
const GLYPH_BASE = {m: 0x1F007, p: 0x1F019, s: 0x1F010};
let index = 0, timer = null;

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = text;
  return node;
}
function parseTiles(text) {
  const out = [];
  let digits = [];
  for (const ch of text || "") {
    if (ch >= "1" && ch <= "9") digits.push(ch);
    else if (SUITS.includes(ch)) { for (const d of digits) out.push(d + ch); digits = []; }
  }
  return out;
}
function glyph(name) {
  const r = Number(name[0]), s = name[1];
  return String.fromCodePoint(s === "z" ? HONOR_GLYPHS[r - 1] : GLYPH_BASE[s] + r - 1);
}
function chinese(name) {
  const r = Number(name[0]), s = name[1];
  return s === "z" ? HONORS[r - 1] : DIGITS[r - 1] + SUIT_CN[s];
}
function tile(name, extra) {
  const s = name[1], r = Number(name[0]);
  const node = el("span", "tile " + s + (extra ? " " + extra : ""));
  node.title = name + " " + chinese(name) + (s === "z" ? " " + HONOR_EN[r - 1] : "") + " " + glyph(name);
  node.dataset.tile = name;
  node.appendChild(el("span", "rank", s === "z" ? HONORS[r - 1] : String(r)));
  node.appendChild(el("span", "suit", s === "z" ? HONOR_EN[r - 1] : SUIT_CN[s]));
  node.appendChild(el("span", "code", name));
  return node;
}
function back(extra) {
  const node = el("span", "tile back" + (extra ? " " + extra : ""));
  node.title = "face-down tile";
  return node;
}
function fmt(x) {
  const v = Math.round(x * 1000) / 1000;
  return (v > 0 ? "+" : "") + String(v);
}
function term(table, key) {
  const t = TERMS[table][key];
  return t ? t[0] + " " + t[1] : key;
}
function player(s) {
  return "player_" + s + (META.players ? " (" + META.players[s] + ")" : "");
}
function row(label) {
  const r = el("div", "row");
  r.appendChild(el("span", "label", label));
  return r;
}

function renderMeta() {
  const parts = [META.variant, "hand " + META.hand + " of " + META.num_hands, "dealer 庄 player_" + META.dealer,
    META.seat === null ? "mode: full table, every hand face up" : "mode: player_" + META.seat + "'s view (others face down)"];
  if (META.seed !== undefined && META.seed !== null) parts.push("seed " + META.seed);
  if (META.start && META.start.base !== undefined) parts.push("base 底 " + META.start.base);
  const start = META.start || {};
  if (start.silver) parts.push("silver 银 at the start " + start.silver.map(String).join(" / "));
  if (META.hand > 0 && start.scores) parts.push("scores before this hand " + start.scores.map(fmt).join(" / "));
  if (META.players) parts.push("players " + META.players.map((name, s) => "p" + s + " " + name).join(", "));
  if (!META.finished) parts.push("hand not finished in the record");
  document.getElementById("meta").textContent = parts.join(" · ");
}

function renderSeat(frame, s) {
  const v = frame.view;
  const box = el("div", "seat");
  box.id = "seat-" + s;
  if (v.to_move === s) box.classList.add("to-move");
  if (frame.actor === s) box.classList.add("actor");
  const head = el("div", "seat-head", player(s) + "  score " + fmt(v.scores[s]));
  if (s === v.dealer) head.appendChild(el("span", "tag", "dealer 庄"));
  if (v.ready[s]) head.appendChild(el("span", "tag ready", "ready 听"));
  if (v.xianggong[s]) head.appendChild(el("span", "tag dead", "相公 dead hand"));
  if (v.to_move === s) head.appendChild(el("span", "tag", "to move"));
  if (frame.bao_seen_by && frame.bao_seen_by[s]) head.appendChild(el("span", "tag", "has seen the bao"));
  if (META.seat === s) head.appendChild(el("span", "tag", "you"));
  box.appendChild(head);

  const hand = row("hand");
  hand.classList.add("hand");
  let concealed = null, drawn = null;
  if (v.hands) { concealed = v.hands[s]; drawn = v.drawn_tiles[s]; }
  else if (s === v.seat) { concealed = v.hand; drawn = v.drawn; }
  if (concealed !== null) {
    const tiles = parseTiles(concealed);
    if (drawn) tiles.splice(tiles.indexOf(drawn), 1);
    for (const t of tiles) hand.appendChild(tile(t));
    if (drawn) hand.appendChild(tile(drawn, "drawn"));
    hand.appendChild(el("span", "river-note", concealed + (drawn ? "  drew " + drawn : "")));
  } else {
    for (let i = 0; i < v.concealed_counts[s]; i++) hand.appendChild(back());
    hand.appendChild(el("span", "river-note", v.concealed_counts[s] + " tiles"));
  }
  box.appendChild(hand);

  if (v.melds[s].length) {
    const melds = row("melds");
    for (const m of v.melds[s]) {
      const group = el("span", "meld");
      group.dataset.kind = m.kind;
      const tiles = el("span", "tiles");
      if (m.tiles) for (const t of parseTiles(m.tiles)) tiles.appendChild(tile(t, "small"));
      else for (let i = 0; i < 4; i++) tiles.appendChild(back("small"));
      group.appendChild(tiles);
      group.appendChild(el("span", "kind", term("melds", m.kind) + (m.from !== null && m.from !== undefined ? " ← p" + m.from : "")));
      melds.appendChild(group);
    }
    box.appendChild(melds);
  }

  const river = row("river");
  river.classList.add("river");
  for (const d of frame.rivers[s]) {
    const cell = el("span", "discard");
    let cls = "small";
    if (d.claimed !== null) cls += " claimed";
    if (d.won !== undefined) cls += " won";
    if (d.ready) cls += " readymark";
    cell.appendChild(tile(d.tile, cls));
    if (d.claimed !== null) cell.appendChild(el("span", "river-note", d.claimed >= 0 ? "→p" + d.claimed : "claimed"));
    else if (d.won !== undefined) cell.appendChild(el("span", "river-note", "胡 p" + d.won));
    else if (d.ready) cell.appendChild(el("span", "river-note", "听"));
    river.appendChild(cell);
  }
  if (!frame.rivers[s].length) river.appendChild(el("span", "river-note", "no discards"));
  box.appendChild(river);
  return box;
}

function renderStatus(frame) {
  const v = frame.view;
  const box = document.getElementById("status");
  box.textContent = "";
  box.appendChild(el("span", null, "wall 牌墙: " + v.wall_remaining + " tiles · phase " + v.phase +
    (v.dice.length ? " · dice 骰子 " + v.dice.join(", ") : "")));
  if (META.uses_bao) {
    box.appendChild(el("span", null, " · bao 宝牌: "));
    if (v.bao) { const b = tile(v.bao, "small"); b.id = "bao"; box.appendChild(b); }
    else if (v.seat !== null && v.dice.length) box.appendChild(el("span", null, v.ready[v.seat] ? "not seen" : "hidden"));
    else box.appendChild(el("span", null, v.dice.length ? "none" : "not rolled yet"));
  }
  if (v.claim) box.appendChild(el("div", null, v.claim.kind + " window on " + v.claim.tile + " " + chinese(v.claim.tile) + " from player_" + v.claim.seat));
}

function renderSettlement(frame) {
  const box = document.getElementById("settlement-box");
  box.textContent = "";
  const r = frame.result;
  if (!r) return;
  box.appendChild(el("h2", null, "Settlement 结算"));
  const summary = el("p", "summary");
  summary.id = "outcome";
  summary.dataset.outcome = r.outcome;
  summary.dataset.winner = r.winner === null ? "" : String(r.winner);
  if (r.outcome === "win") {
    summary.textContent = "winner " + player(r.winner) + ": " + term("methods", r.method) +
      (r.tile ? " on " + r.tile + " " + chinese(r.tile) : "") + " · total fan 番 " + r.total_fan +
      (META.fan_note ? " (" + META.fan_note + ")" : "");
  } else if (r.outcome === "draw") summary.textContent = "exhaustive draw 荒庄: no winner";
  else summary.textContent = "outcome " + r.outcome;
  box.appendChild(summary);
  const silver = frame.silver;  // X7: the silver 银 this hand moved (Xinjiang)
  box.appendChild(el("p", null, "dealer 庄 player_" + r.dealer + " · next dealer player_" + r.next_dealer +
    (silver ? " · base 底 " + silver.base + " silver 银 per point" : "")));
  if (r.fans.length) {
    const fans = el("table", "fans");
    fans.id = "fans";
    const h = el("tr"); for (const c of ["fan 番", "term", "value"]) h.appendChild(el("th", null, c)); fans.appendChild(h);
    for (const [name, value] of r.fans) {
      const tr = el("tr", "fan");
      tr.dataset.fan = name; tr.dataset.value = String(value);
      tr.appendChild(el("td", null, name)); tr.appendChild(el("td", null, term("fans", name))); tr.appendChild(el("td", null, String(value)));
      fans.appendChild(tr);
    }
    box.appendChild(fans);
  }
  const table = el("table");
  table.id = "settlement";
  const head = el("tr");
  const cols = ["seat", "hand 胡牌", "kongs 杠分", "total", "score after"];
  if (r.payer_fans) cols.splice(1, 0, "payer fan");
  if (silver) cols.push("silver 银 won/lost", "silver 银 after");
  for (const c of cols) head.appendChild(el("th", null, c));
  table.appendChild(head);
  for (let s = 0; s < 4; s++) {
    const tr = el("tr", "seat-total");
    tr.dataset.seat = String(s);
    tr.dataset.delta = String(r.deltas[s]);
    tr.dataset.kong = String(r.kong_deltas[s]);
    tr.appendChild(el("td", null, player(s) + (s === r.winner ? " 胡 winner" : "")));
    if (r.payer_fans) tr.appendChild(el("td", null, r.payer_fans[s] === null ? "-" : String(r.payer_fans[s])));
    tr.appendChild(el("td", null, fmt(r.deltas[s])));
    tr.appendChild(el("td", null, fmt(r.kong_deltas[s])));
    tr.appendChild(el("td", null, fmt(r.deltas[s] + r.kong_deltas[s])));
    tr.appendChild(el("td", null, fmt(frame.view.scores[s])));
    if (silver) {
      tr.dataset.silver = String(silver.moved[s]);
      tr.appendChild(el("td", "silver", fmt(silver.moved[s])));
      tr.appendChild(el("td", "silver-after", String(Math.round(silver.after[s] * 1000) / 1000)));
    }
    table.appendChild(tr);
  }
  box.appendChild(table);
  if (r.payments.length) {
    const pay = el("table", "payments");
    pay.id = "payments";
    const h = el("tr");
    for (const c of ["from", "to", "points", "reason"].concat(silver ? ["silver 银"] : [])) h.appendChild(el("th", null, c));
    pay.appendChild(h);
    for (const p of r.payments) {
      const tr = el("tr", "payment");
      tr.dataset.from = String(p.from); tr.dataset.to = String(p.to); tr.dataset.points = String(p.points); tr.dataset.reason = p.reason;
      tr.appendChild(el("td", null, "player_" + p.from)); tr.appendChild(el("td", null, "player_" + p.to));
      tr.appendChild(el("td", null, String(p.points))); tr.appendChild(el("td", null, term("reasons", p.reason)));
      if (silver) tr.appendChild(el("td", "silver", String(Math.round(p.points * silver.base * 1000) / 1000)));
      pay.appendChild(tr);
    }
    box.appendChild(pay);
  }
}

function render() {
  const frame = FRAMES[index];
  const action = document.getElementById("action");
  action.textContent = "";
  for (const line of frame.text) action.appendChild(el("div", null, line));
  if (!frame.text.length) action.appendChild(el("div", null, "…"));
  renderStatus(frame);
  const table = document.getElementById("table");
  table.textContent = "";
  for (let s = 0; s < 4; s++) table.appendChild(renderSeat(frame, s));
  renderSettlement(frame);
  document.getElementById("counter").textContent = "step " + index + " / " + (FRAMES.length - 1);
  const slider = document.getElementById("slider");
  slider.value = String(index);
  document.body.dataset.step = String(index);
}

function go(i) {
  index = Math.max(0, Math.min(FRAMES.length - 1, i));
  render();
  const hash = "#step=" + index;
  if (location.hash !== hash) { try { history.replaceState(null, "", hash); } catch (e) { /* file: URLs may refuse */ } }
  if (index === FRAMES.length - 1) stop();
}
function stop() {
  if (timer !== null) { clearInterval(timer); timer = null; }
  document.getElementById("play").textContent = "▶ play";
}
function toggle() {
  if (timer !== null) { stop(); return; }
  if (index === FRAMES.length - 1) go(0);
  timer = setInterval(() => go(index + 1), 900);
  document.getElementById("play").textContent = "■ pause";
}
function fromHash() {
  const m = /step=(last|\d+)/.exec(location.hash);
  if (!m) return 0;
  return m[1] === "last" ? FRAMES.length - 1 : Number(m[1]);
}

document.getElementById("slider").max = String(FRAMES.length - 1);
document.getElementById("slider").addEventListener("input", (e) => { stop(); go(Number(e.target.value)); });
document.getElementById("first").addEventListener("click", () => { stop(); go(0); });
document.getElementById("prev").addEventListener("click", () => { stop(); go(index - 1); });
document.getElementById("next").addEventListener("click", () => { stop(); go(index + 1); });
document.getElementById("last").addEventListener("click", () => { stop(); go(FRAMES.length - 1); });
document.getElementById("play").addEventListener("click", toggle);
document.addEventListener("keydown", (e) => {
  if (e.target && e.target.tagName === "INPUT" && e.key !== " ") return;
  if (e.key === "ArrowRight") { stop(); go(index + 1); }
  else if (e.key === "ArrowLeft") { stop(); go(index - 1); }
  else if (e.key === "Home") { stop(); go(0); }
  else if (e.key === "End") { stop(); go(FRAMES.length - 1); }
  else if (e.key === " ") { toggle(); }
  else return;
  e.preventDefault();
});
window.addEventListener("hashchange", () => go(fromHash()));
renderMeta();
go(fromHash());
