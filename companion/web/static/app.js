// The table page: state from /api/state and the /api/ws stream, controls built from
// the server's list of legal moves ("moves"), events POSTed to /api/events.
// No framework, no external assets. Positions and cars are shown 1-based to people.
"use strict";

const MODE = document.body.dataset.mode; // "control" or "board"
const FACE_NAMES = { alarm: "Alarm", dye_pack: "Dye pack", diamond: "Diamond" };
const FACE_LETTER = { alarm: "A", dye_pack: "P", diamond: "D" };
const NEXT_FACE = { alarm: "dye_pack", dye_pack: "diamond", diamond: "alarm" };

let S = null; // the latest state
let paired = false;
// Which player this device said it is (POST /api/seat; the box keeps it per session).
let ME = { seat: null, name: null };
let led = null;
let ctrlKey = "";
// What the person is choosing now (kept across live updates).
const local = {
  version: 0,
  row: null, rowTurn: null,
  flips: {},
  bang: [],
  ng: { players: 3, names: ["", "", "", ""], cop: 0 },
  tally: {},
  sticky: null,
  undoAsk: false,
};

const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "onclick") e.addEventListener("click", v);
    else if (k === "oninput") e.addEventListener("input", v);
    else if (k === "class") e.className = v;
    else if (k === "disabled") e.disabled = !!v;
    else if (k === "text") e.textContent = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function name(seat) {
  return S && S.seats[seat] ? S.seats[seat].name : `seat ${seat + 1}`;
}

function money(n) {
  return n === null || n === undefined ? "–" : "$" + n.toLocaleString("en-US");
}

function bump() { local.version++; render(); }

// ---- talking to the box
async function post(path, body) {
  let r;
  try {
    r = await fetch(path, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-Vault-Companion": "1" },
      body: JSON.stringify(body),
    });
  } catch (e) {
    return { status: 0, body: { error: "the box does not answer" } };
  }
  let j = {};
  try { j = await r.json(); } catch (e) { j = { error: `HTTP ${r.status}` }; }
  return { status: r.status, body: j };
}

let noticeTimer = null;
function notice(text, ok) {
  const n = $("notice");
  if (!n) return;
  n.hidden = !text;
  n.textContent = text || "";
  n.className = ok ? "notice ok" : "notice";
  clearTimeout(noticeTimer);
  if (ok) noticeTimer = setTimeout(() => { n.hidden = true; }, 3000);
}

async function send(event) {
  const { status, body } = await post("/api/events", event);
  if (status === 200 || status === 202) {
    // 202: accepted and shown, but not yet on the box's disk (its warning says why).
    // `help` in the command box: the commands now, as lines (no event was sent).
    if (body.help) { notice(body.help.join("\n")); return status; }
    notice(status === 202 ? body.warning || "accepted; not yet saved on the box" : "");
    local.bang = []; local.flips = {}; local.sticky = null; local.undoAsk = false;
    local.version++;
    update(body.state);
  } else if (status === 409) {
    notice(body.rejected);
    if (body.state) update(body.state);
  } else if (status === 401) {
    paired = false;
    notice(body.error);
    render();
  } else {
    notice(body.error || `HTTP ${status}`);
  }
  return status;
}

function update(state) {
  if (!state) return;
  if (S && state.events_applied !== S.events_applied) {
    // The game moved on (here or on another phone): half-made choices are stale.
    local.bang = []; local.flips = {}; local.sticky = null; local.undoAsk = false;
    local.version++;
  }
  S = state;
  render();
}

function connect() {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(`${proto}//${location.host}/api/ws`);
  ws.onopen = () => { $("conn").textContent = "live"; $("conn").className = "conn live"; };
  ws.onmessage = (m) => {
    const msg = JSON.parse(m.data);
    if (msg.kind === "state") update(msg);
    else if (msg.kind === "led") { led = msg; drawLed(); }
    else if (msg.kind === "me") { ME = { seat: msg.seat, name: msg.name }; render(); }
  };
  ws.onclose = () => {
    $("conn").textContent = "offline"; $("conn").className = "conn";
    setTimeout(connect, 1000);
  };
}

// ---- the LED display, as the players see it
function drawLed() {
  const c = $("led");
  if (!c || !led) return;
  const ctx = c.getContext("2d");
  const w = led.width, h = led.height;
  const cell = c.width / w;
  c.height = Math.round(cell * h);
  ctx.fillStyle = "#0b0b0b";
  ctx.fillRect(0, 0, c.width, c.height);
  for (let y = 0; y < h; y++) {
    const row = led.rows[y];
    for (let x = 0; x < w; x++) {
      ctx.fillStyle = row[x] === "1" ? "#ff3b2f" : "#2a1210";
      ctx.beginPath();
      ctx.arc(x * cell + cell / 2, y * cell + cell / 2, cell * 0.38, 0, 2 * Math.PI);
      ctx.fill();
    }
  }
}

// ---- read-only parts (page and board)
function renderTop() {
  const status = S.status && S.status.length ? S.status[0] : S.phase;
  $("phase").textContent = status;
  const v = S.verdict;
  let text = "";
  if (v) {
    text = v.text;
    if (v.margin_ms !== null && v.margin_ms !== undefined) {
      text += v.tie ? ` · a tie (${v.margin_ms.toFixed(3)} ms apart), decided by the tie rule`
        : ` · photo finish: by ${v.margin_ms.toFixed(3)} ms`;
    }
  }
  $("verdict").textContent = text;
  const w = $("winners");
  if (S.over && S.winners.length) {
    w.hidden = false;
    w.textContent = "Winner" + (S.winners.length > 1 ? "s: " : ": ") +
      S.winners.map((s) => `${name(s)} (${money(S.seats[s].total)})`).join(" and ");
  } else if (S.over) {
    w.hidden = false;
    w.textContent = "Game over: tally each seat's cash to find the winner";
  } else {
    w.hidden = true;
  }
}

function renderScore() {
  const box = $("score");
  box.textContent = "";
  if (!S.seats.length) { box.append(el("p", { class: "sub", text: "No game yet." })); return; }
  const head = el("tr", {}, ...["Seat", "Cars", "Dia.", "Esc.", "Arr.", "Cash", "Total"]
    .map((t) => el("th", { text: t })));
  const rows = S.seats.map((s, i) => {
    const d = S.seat_details[i] || {};
    const tags = [];
    if (d.cops) tags.push(el("span", { class: "tag cops", text: "cops" }));
    if (d.escaped_now) tags.push(el("span", { class: "tag esc", text: "escaped" }));
    if (d.arrested_now) tags.push(el("span", { class: "tag arr", text: "arrested" }));
    if (d.hostage) tags.push(el("span", { class: "tag", text: "hostage" }));
    if (S.winners.includes(i)) tags.push(el("span", { class: "tag win", text: "winner" }));
    return el("tr", { "data-seat": i },
      el("td", { class: "name", title: s.name }, el("div", { class: "nm", text: s.name }),
        tags.length ? el("div", { class: "tags" }, ...tags) : null),
      el("td", { text: s.cars }), el("td", { text: s.diamonds }),
      el("td", { text: s.escaped }), el("td", { text: s.arrested }),
      el("td", { text: d.cash === null ? "–" : (d.cash / 1000) + "k" }),
      el("td", { text: s.total === null ? "–" : (s.total / 1000) + "k" }));
  });
  box.append(el("table", { class: "score" }, el("thead", {}, head), el("tbody", {}, ...rows)));
  const t = S.turn;
  const bits = [`Round ${S.round}`, `turns played ${S.turns_played}`,
    `diamonds in the box ${S.diamonds_in_box}`];
  if (t) bits.push(`stages ${t.stages}/3`, `Bang! used ${t.bangs}/4`);
  if (S.bank_empty) bits.push("BANK EMPTY");
  box.append(el("p", { class: "sub", text: bits.join(" · ") }));
}

function renderLists() {
  const m = $("messages");
  m.textContent = "";
  for (const line of S.messages.slice(-6).reverse()) m.append(el("li", { text: line }));
  const h = $("history");
  h.textContent = "";
  for (const e of S.history.slice(0, 80)) {
    h.append(el("li", { class: e.accepted ? "" : "rej", text: e.accepted ? e.text : `✗ ${e.text}` }));
  }
  const g = $("games");
  g.textContent = "";
  if (!S.games.length) g.append(el("li", { class: "sub", text: "none in this log folder" }));
  for (const game of S.games) {
    if (!game.seats) { // another game's log (games.js): its kind and whether it ended
      g.append(el("li", { text: `${game.log}: ${game.game}${game.over ? " · over" : " · unfinished"}` }));
      continue;
    }
    const seats = game.seats.map((s) => `${s.name} ${s.total === null ? "–" : money(s.total)}`);
    const win = game.winners.length ? " · winner " + game.winners.map((w) => game.seats[w].name).join(" & ") : (game.over ? "" : " · unfinished");
    g.append(el("li", { text: `${game.log}: ${seats.join(", ")}${win}` }));
  }
}

// ---- controls, built from the legal moves
function card(title, ...children) {
  return el("section", { class: "card" }, el("h2", { text: title }), ...children);
}

function renderControls() {
  const box = $("controls");
  if (!box) return;
  $("pair-card").hidden = paired;
  $("device-card").hidden = !paired;
  const key = JSON.stringify([paired, S.moves, S.phase, S.events_applied, local.version, S.undo_takes_back]);
  if (key === ctrlKey) return;
  ctrlKey = key;
  box.textContent = "";
  if (!paired) return;
  const M = S.moves;
  if (M.new_game) box.append(newGameCard(M.new_game));
  if (S.other_games && typeof otherGamesCard === "function") box.append(otherGamesCard(S.other_games));
  if (M.heist_hide) box.append(hideCard(M.heist_hide));
  if (M.heist_attempt) box.append(flipCard(M.heist_attempt));
  if (M.assault_start) {
    box.append(card("The race", el("button", { class: "primary big", id: "go",
      onclick: () => send({ type: "assault_start" }) }, "Go!")));
  }
  if (S.phase === "assault") box.append(raceCard(M));
  if (M.impound) box.append(impoundCard(M.impound));
  if (M.tally) box.append(tallyCard(M.tally));
  if (M.sticky_fingers) box.append(stickyCard(M.sticky_fingers));
  if (M.undo) box.append(undoCard());
}

function newGameCard(spec) {
  const ng = local.ng;
  const seats = spec.players[String(ng.players)];
  const players = el("div", { class: "row" }, el("span", { class: "who", text: "Players" }),
    ...Object.keys(spec.players).map((p) => el("button", {
      class: Number(p) === ng.players ? "on" : "", "data-players": p,
      onclick: () => { ng.players = Number(p); ng.cop = 0; bump(); },
    }, p)));
  const names = [];
  for (let i = 0; i < seats; i++) {
    const ph = ng.players === 4 ? `Team ${i + 1}` : `Player ${i + 1}`;
    const input = el("input", { id: `name-${i}`, placeholder: ph, maxlength: "24", "aria-label": `seat ${i + 1} name`,
      oninput: (ev) => { ng.names[i] = ev.target.value; } });
    input.value = ng.names[i] || "";
    const up = el("button", { title: "move up", "aria-label": "move up", disabled: i === 0, onclick: () => {
      [ng.names[i - 1], ng.names[i]] = [ng.names[i], ng.names[i - 1]]; bump();
    } }, "↑");
    const cop = el("button", { class: ng.cop === i ? "on" : "", "data-cop": i,
      onclick: () => { ng.cop = i; bump(); } }, "cops");
    names.push(el("div", { class: "row" }, el("span", { class: "sub seatno", text: `Seat ${i + 1}` }),
      input, up, cop));
  }
  const start = el("button", { class: "primary big", id: "start-game", onclick: () => {
    const list = [];
    for (let i = 0; i < seats; i++) {
      list.push((ng.names[i] || "").trim() || (ng.players === 4 ? `Team ${i + 1}` : `Player ${i + 1}`));
    }
    send({ type: "new_game", game: spec.game, players: ng.players, names: list, first_cop: ng.cop });
  } }, "Start the game");
  return card("New game", players,
    el("p", { class: "sub", text: "Names in seat order, clockwise; tap “cops” for who hides first." }),
    ...names, start);
}

function hideCard(spec) {
  const want = spec.row;
  const len = Object.values(want).reduce((a, b) => a + b, 0);
  const turnKey = `${S.turns_played}`;
  if (!local.row || local.row.length !== len || local.rowTurn !== turnKey) {
    local.row = Array(len).fill("alarm");
    local.rowTurn = turnKey;
  }
  const tiles = el("div", { class: len === 6 ? "tiles six" : "tiles" },
    ...local.row.map((f, i) => el("button", { class: `tile face-${f}`, "data-pos": i,
      "aria-label": `position ${i + 1}: ${FACE_NAMES[f]}`,
      onclick: () => { local.row[i] = NEXT_FACE[f]; bump(); } },
    FACE_LETTER[f], el("small", { text: FACE_NAMES[f] }), el("small", { text: `#${i + 1}` }))));
  const have = {};
  for (const f of local.row) have[f] = (have[f] || 0) + 1;
  let ok = true;
  const counts = el("div", { class: "counts" }, "Needs: ",
    ...Object.entries(want).map(([f, n]) => {
      const good = (have[f] || 0) === n;
      ok = ok && good;
      return el("span", { class: good ? "good" : "bad", text: `${n} ${FACE_NAMES[f]} (${have[f] || 0}) ` });
    }));
  const send_ = el("button", { class: "primary big", id: "hide", disabled: !ok,
    onclick: () => send({ type: "heist_hide", row: local.row.slice() }) }, "Hide the row");
  return card(`${name(S.cop)}: the cops' hidden row`,
    el("p", { class: "sub", text: "Tap a tile to change it (Alarm → Dye pack → Diamond), left to right as the cops see it. Keep this screen to yourself." }),
    tiles, counts, send_);
}

function flipCard(spec) {
  const seats = Object.keys(spec.seats).map(Number);
  const revealed = (S.turn && S.turn.heist && S.turn.heist.revealed) || {};
  const rows = seats.map((seat) => {
    const allowed = spec.seats[seat].positions;
    const choice = local.flips[seat];
    const buttons = [];
    for (let p = 0; p < spec.row_length; p++) {
      const face = revealed[p];
      buttons.push(el("button", {
        class: choice === p ? "on" : "", "data-seat": seat, "data-pos": p,
        disabled: !allowed.includes(p),
        onclick: () => { local.flips[seat] = p; bump(); },
      }, face ? `${p + 1} ${FACE_LETTER[face]}` : String(p + 1)));
    }
    buttons.push(el("button", { class: choice === "stop" ? "on" : "", "data-seat": seat, "data-stop": "1",
      onclick: () => { local.flips[seat] = "stop"; bump(); } }, "Stop"));
    return el("div", { class: "row positions" }, el("span", { class: "who", text: name(seat) }), ...buttons);
  });
  const ready = seats.every((s) => local.flips[s] !== undefined);
  const go = el("button", { class: "primary big", id: "flip", disabled: !ready, onclick: () => {
    const flips = seats.map((s) => local.flips[s] === "stop" ? { seat: s, stop: true } : { seat: s, position: local.flips[s] });
    send({ type: "heist_attempt", flips });
  } }, "Cut the wires");
  return card("Diamond heist: each robber flips a die or stops",
    el("p", { class: "sub", text: "Positions 1-5 from the cops' left." }), ...rows, go);
}

function raceCard(M) {
  const parts = [];
  if (M.stage) {
    parts.push(el("button", { class: "primary big", id: "stage", onclick: () => send({ type: "stage", stage: M.stage }) },
      `Stage ${M.stage}`));
  }
  if (M.dye_pack) {
    const picks = el("div", { class: "row" }, el("span", { class: "who", text: `Bang! take a tile from (up to ${M.dye_pack.max})` }),
      ...M.dye_pack.targets.map((s) => el("button", { "data-bang": s,
        disabled: local.bang.length >= M.dye_pack.max,
        onclick: () => { local.bang.push(s); bump(); } }, name(s))));
    const chosen = local.bang.map(name).join(", ") || "nobody yet";
    parts.push(picks, el("div", { class: "row" },
      el("span", { class: "sub", text: `Targets: ${chosen}` }),
      el("button", { disabled: !local.bang.length, onclick: () => { local.bang = []; bump(); } }, "Clear"),
      el("button", { class: "primary", id: "bang", disabled: !local.bang.length,
        onclick: () => send({ type: "dye_pack", targets: local.bang.slice() }) }, "Bang!")));
  }
  const robbers = [...new Set([...(M.hostage || []), ...(M.backup || []), ...(M.loot || []),
    ...Object.keys(M.steal || {}).map(Number)])].sort();
  for (const s of robbers) {
    const b = [];
    if ((M.hostage || []).includes(s)) b.push(el("button", { "data-hostage": s, onclick: () => send({ type: "hostage", seat: s }) }, "Hostage!"));
    if ((M.backup || []).includes(s)) b.push(el("button", { "data-backup": s, onclick: () => send({ type: "backup", seat: s }) }, "Backup!"));
    if ((M.loot || []).includes(s)) b.push(el("button", { "data-loot": s, onclick: () => send({ type: "loot", seat: s }) }, "Loot"));
    for (const v of (M.steal || {})[s] || []) {
      b.push(el("button", { "data-steal": `${s}:${v}`, onclick: () => send({ type: "steal", seat: s, from: v }) }, `Steal from ${name(v)}`));
    }
    parts.push(el("div", { class: "row" }, el("span", { class: "who", text: name(s) }), ...b));
  }
  if (M.empty) parts.push(el("button", { class: "danger big", id: "empty", onclick: () => send({ type: "empty" }) }, "Empty! (the bank is empty)"));
  if (M.buzz) {
    const cop = S.cop;
    parts.push(el("details", {}, el("summary", { text: "Buttons not working? Press for a seat here" }),
      ...M.buzz.map((s) => el("button", { "data-buzz": s, onclick: () => send({ type: "buzz", seat: s }) },
        s === cop ? `Arrested! (${name(s)})` : `Escaped! ${name(s)}`))));
  }
  return card("The race", el("p", { class: "sub", text: "Escaped!/Arrested! come from the seat buttons." }), ...parts);
}

function impoundCard(spec) {
  const rows = Object.entries(spec).map(([seat, cars]) => el("div", { class: "row" },
    el("span", { class: "who", text: `${name(Number(seat))} loses a getaway car` }),
    ...cars.map((c) => el("button", { "data-impound": `${seat}:${c}`,
      onclick: () => send({ type: "impound", seat: Number(seat), car: c }) }, `Car ${c + 1}`))));
  return card("Cops: impound a car", ...rows);
}

function tallyCard(seats) {
  const rows = seats.map((s) => {
    const input = el("input", { id: `cash-${s}`, inputmode: "numeric", placeholder: "cash, e.g. 30000",
      "aria-label": `cash of ${name(s)}`, oninput: (ev) => { local.tally[s] = ev.target.value; } });
    input.value = local.tally[s] || "";
    return el("div", { class: "row" }, el("span", { class: "who", text: name(s) }), input,
      el("button", { class: "primary", "data-tally": s, onclick: () => {
        const text = String(local.tally[s] || "").replace(/[$,\s]/g, "").toLowerCase();
        const cash = text.endsWith("k") ? Number(text.slice(0, -1)) * 1000 : Number(text);
        if (!text || !Number.isInteger(cash) || cash < 0) { notice(`cash of ${name(s)}: a whole number of dollars`); return; }
        send({ type: "tally", seat: s, cash });
      } }, "Tally"));
  });
  return card("Tally: each seat's cash (without diamonds)", ...rows);
}

function stickyCard(spec) {
  const seats = Object.keys(spec).map(Number);
  const parts = [el("div", { class: "row" }, el("span", { class: "who", text: "Who has the sticky fingers?" }),
    ...seats.map((s) => el("button", { class: local.sticky === s ? "on" : "", "data-sticky": s,
      onclick: () => { local.sticky = s; bump(); } }, name(s))))];
  if (local.sticky !== null && spec[local.sticky]) {
    const s = local.sticky;
    parts.push(el("div", { class: "row" }, el("span", { class: "who", text: `${name(s)} steals a Diamond from` }),
      ...spec[s].map((v) => el("button", { "data-from": v === null ? "box" : v,
        onclick: () => send({ type: "sticky_fingers", seat: s, from: v }) }, v === null ? "the box" : name(v)))));
  }
  return card("Sticky fingers", ...parts);
}

function undoCard() {
  let what = S.undo_takes_back || "the last event";
  if (what.length > 90) what = what.slice(0, 88) + "…";
  if (!local.undoAsk) {
    return el("section", { class: "card" }, el("button", { id: "undo", onclick: () => { local.undoAsk = true; bump(); } },
      "Undo…"), el("span", { class: "sub", text: ` takes back: ${what}` }));
  }
  return el("section", { class: "card confirm" }, el("p", { text: `Take back: ${what}?` }),
    el("button", { class: "danger", id: "undo-yes", onclick: () => send({ type: "undo" }) }, "Yes, undo"),
    el("button", { onclick: () => { local.undoAsk = false; bump(); } }, "Cancel"));
}

// A damaged game log: the table chooses to keep the game up to the damage or start anew.
function renderResume() {
  const card = $("resume-card");
  if (!card) return;
  const offer = S.resume_choice;
  card.hidden = !(offer && paired && MODE === "control");
  card.replaceChildren();
  if (card.hidden) return;
  card.append(
    el("h2", { text: "The game log is damaged" }),
    el("p", { text: `Line ${offer.damaged_line}: ${offer.damage}. ` +
      `The game goes on as it was up to line ${offer.damaged_line - 1}.` }),
    el("button", { class: "primary", id: "resume-keep",
      onclick: () => send({ type: "resume_choice", choice: "keep" }) }, "Keep that game"),
    el("button", { class: "danger", id: "resume-new",
      onclick: () => send({ type: "resume_choice", choice: "new" }) }, "Start a new game"));
}

function render() {
  if (!S) return;
  document.body.dataset.seq = S.history_seq; // for tests: which update is on screen
  renderResume();
  if (S.game && typeof renderOtherGame === "function") { renderOtherGame(); return; } // games.js
  renderTop();
  renderScore();
  renderLists();
  if (MODE === "control") renderControls();
}

// ---- pairing
function setupPairing() {
  const form = $("pair-form");
  if (!form) return;
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const { status, body } = await post("/api/pair", { pin: $("pin").value.trim() });
    if (status === 200) {
      paired = true; $("pin").value = ""; notice("Paired: the controls are yours", true); ctrlKey = ""; render();
    } else {
      notice(body.error || `HTTP ${status}`);
    }
  });
  $("unpair").addEventListener("click", async () => {
    await post("/api/unpair", {}); paired = false; ME = { seat: null, name: null }; ctrlKey = ""; render();
  });
  $("unpair-all").addEventListener("click", async () => {
    if (!confirm("Unpair every phone? The box shows a new PIN.")) return;
    await post("/api/unpair", { all: true }); paired = false; ctrlKey = ""; render();
  });
}

async function start() {
  setupPairing();
  try {
    const r = await fetch("/api/state", { credentials: "same-origin" });
    const j = await r.json();
    paired = !!j.paired;
    ME = { seat: j.my_seat === undefined ? null : j.my_seat, name: null };
    update(j);
  } catch (e) {
    notice("the box does not answer");
  }
  connect();
}

start();
