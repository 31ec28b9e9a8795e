// The table page: state from /api/state and the /api/ws stream, controls built from
// the server's list of legal moves ("moves"), events POSTed to /api/events.
// No framework, no external assets. Seats, positions and cars are shown to people
// counted from 1; the events count them from 0 (the event format).
"use strict";

const MODE = document.body.dataset.mode; // "control" or "board"
const FACE_NAMES = { alarm: "Alarm", dye_pack: "Dye pack", diamond: "Diamond" };
const FACE_LETTER = { alarm: "A", dye_pack: "P", diamond: "D" };
const NEXT_FACE = { alarm: "dye_pack", dye_pack: "diamond", diamond: "alarm" };

let S = null; // the latest state
let paired = false;
// The box no longer knows this phone's session (it restarted, or unpaired every device).
let forgotten = false;
// Which player this device said it is (POST /api/seat; the box keeps it per session),
// and what only this device may see ("secret": a 3-player robber's own dice).
let ME = { seat: null, name: null, secret: null };
let led = null;
let legendShown = null; // the last board frame with its key ({rows, legend})
let ctrlKey = "";
let socket = null;
// A tap the box refused because this phone was not paired: sent once paired again, if
// the game has not moved on meanwhile.
let unsentTap = null;
// What the person is choosing now (kept across live updates).
const local = {
  version: 0,
  row: null, rowTurn: null,
  flips: {},
  myFlip: null,
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
    local.bang = []; local.flips = {}; local.myFlip = null; local.sticky = null;
    local.undoAsk = false;
    local.version++;
    update(body.state);
  } else if (status === 409) {
    notice(body.rejected);
    if (body.state) update(body.state);
  } else if (status === 401) {
    // Not paired (any more): ask for the PIN; the tap goes once paired, unless the game
    // moved on meanwhile.
    paired = false;
    forgotten = true;
    unsentTap = { event, at: S ? S.events_applied : null };
    notice(`Not sent: ${body.error}`);
    ctrlKey = "";
    render();
    const pin = $("pin");
    if (pin) pin.focus();
  } else {
    notice(body.error || `HTTP ${status}`);
  }
  return status;
}

function update(state) {
  if (!state) return;
  if (S && state.events_applied !== S.events_applied) {
    // The game moved on (here or on another phone): half-made choices are stale.
    local.bang = []; local.flips = {}; local.myFlip = null; local.sticky = null;
    local.undoAsk = false;
    local.version++;
  }
  S = state;
  render();
}

// Who this device is, as the box says ({seat, name, paired, forgotten, secret}).
function setMe(msg) {
  ME = { seat: msg.seat === undefined ? null : msg.seat, name: msg.name || null,
    secret: msg.secret || null };
  if (msg.paired !== undefined) {
    if (paired && !msg.paired) ctrlKey = "";
    paired = !!msg.paired;
    forgotten = !!msg.forgotten && !paired;
  }
  render();
}

function connect() {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(`${proto}//${location.host}/api/ws`);
  socket = ws;
  ws.onopen = () => { $("conn").textContent = "live"; $("conn").className = "conn live"; };
  ws.onmessage = (m) => {
    if (ws !== socket) return;
    const msg = JSON.parse(m.data);
    if (msg.kind === "state") update(msg);
    else if (msg.kind === "led") { led = msg; drawLed(); }
    else if (msg.kind === "me") setMe(msg);
  };
  ws.onclose = () => {
    if (ws !== socket) return; // replaced (after pairing: the box learns this session)
    $("conn").textContent = "offline"; $("conn").className = "conn";
    setTimeout(connect, 1000);
  };
}

// A new WebSocket, so the box knows this device by its session (after pairing).
function reconnect() {
  const old = socket;
  socket = null;
  if (old) old.close();
  connect();
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
  dots(ctx, led.rows, 0, 0, cell);
  // the key reads the board's frame (under a flash word: the board it gives way to)
  legendShown = led.legend ? { rows: led.legend.frame, legend: led.legend, width: w, height: h } : null;
  drawLegend();
}

function dots(ctx, rows, x0, y0, cell) {
  for (let y = 0; y < rows.length; y++) {
    for (let x = 0; x < rows[y].length; x++) {
      ctx.fillStyle = rows[y][x] === "1" ? "#ff3b2f" : "#2a1210";
      ctx.beginPath();
      ctx.arc(x0 + x * cell + cell / 2, y0 + y * cell + cell / 2, cell * 0.38, 0, 2 * Math.PI);
      ctx.fill();
    }
  }
}

// ---- the key to the LED board, drawn from the same frame: the board again with its
// columns named above and its parts numbered beside it, and the numbers' meanings with
// what the lit dots say now (the game says where each part is: led.legend).
function litIn(rows, r, c) {
  let n = 0, all = 0;
  const x0 = Math.max(r.x, c ? c.x : r.x), x1 = Math.min(r.x + r.w, c ? c.x + c.w : r.x + r.w);
  for (let y = r.y; y < r.y + r.h; y++) {
    for (let x = x0; x < x1; x++) { all++; if (rows[y] && rows[y][x] === "1") n++; }
  }
  return { n, all };
}

function reading(part, cols, rows) {
  const mine = cols.filter((c) => c.side === part.side && c.x < part.x + part.w && c.x + c.w > part.x);
  if (part.read === "marks") return `now: ${Math.round(litIn(rows, part, null).n / 2)}`;
  if (part.read === "count") {
    const said = mine.map((c) => {
      const n = litIn(rows, part, c).n;
      const word = part.values ? part.values[String(n)] : String(n);
      return word === undefined ? `${c.name} ${n}` : (word ? `${c.name} ${word}` : "");
    }).filter((x) => x);
    return `now: ${said.join(", ") || "none"}`;
  }
  const which = mine.filter((c) => {
    const { n, all } = litIn(rows, part, c);
    return part.read === "full" ? all > 0 && n === all : n > 0;
  }).map((c) => c.name);
  return `${part.read === "full" ? "solid now" : "now"}: ${which.join(", ") || "none"}`;
}

function fitText(ctx, text, maxWidth, size) {
  let px = size;
  ctx.font = `600 ${px}px system-ui, sans-serif`;
  while (px > 9 && ctx.measureText(text).width > maxWidth) {
    px -= 1;
    ctx.font = `600 ${px}px system-ui, sans-serif`;
  }
}

function drawLegend() {
  const box = $("legend");
  if (!box) return;
  box.hidden = !legendShown;
  if (!legendShown) return;
  const { rows, legend, width, height } = legendShown;
  const c = $("legend-canvas");
  const ctx = c.getContext("2d");
  const margin = 34, top = 34;
  const cell = (c.width - 2 * margin) / width;
  c.height = Math.round(top + cell * height + 8);
  ctx.fillStyle = "#1f232a";
  ctx.fillRect(0, 0, c.width, c.height);
  ctx.fillStyle = "#0b0b0b";
  ctx.fillRect(margin, top, cell * width, cell * height);
  dots(ctx, rows, margin, top, cell);
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  for (const col of legend.columns) {
    ctx.fillStyle = "#c8cfdb";
    fitText(ctx, col.label, col.w * cell + 6, 20);
    ctx.fillText(col.label, margin + (col.x + col.w / 2) * cell, top / 2);
  }
  const key = $("legend-key");
  key.textContent = "";
  legend.rows.forEach((part, i) => {
    const n = String(i + 1);
    const left = part.side !== "seats";
    const x = left ? margin / 2 : c.width - margin / 2;
    const y = top + (part.y + part.h / 2) * cell;
    ctx.strokeStyle = "#ffd166";
    ctx.lineWidth = 2;
    ctx.beginPath(); // a bracket along the part's rows, at the board's edge
    const ex = left ? margin - 4 : c.width - margin + 4;
    ctx.moveTo(ex, top + part.y * cell + 3);
    ctx.lineTo(ex, top + (part.y + part.h) * cell - 3);
    ctx.stroke();
    ctx.fillStyle = "#ffd166";
    ctx.beginPath();
    ctx.arc(x, y, Math.min(cell * 0.49, margin / 2 - 2), 0, 2 * Math.PI); // rows apart
    ctx.fill();
    ctx.fillStyle = "#111";
    ctx.font = `700 ${Math.round(Math.min(15, cell * 0.8))}px system-ui, sans-serif`;
    ctx.fillText(n, x, y + 1);
    key.append(el("li", { "data-part": n }, el("b", { text: `${n} ` }), part.label,
      el("span", { class: "now", text: ` · ${reading(part, legend.columns, rows)}` })));
  });
  const cols = legend.columns.filter((x) => x.side === "seats").map((x) => x.name);
  if (cols.length) key.append(el("li", { class: "sub", text: `Columns on the right: ${cols.join(", ")}` }));
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
  const cm = $("claims-mode");
  if (cm) {  // what the camera does with claims ([camera] claims)
    const says = { advise: "the camera checks claims and says what it sees",
      challenge: "the camera checks claims and challenges false ones" }[S.claims];
    cm.hidden = !says;
    cm.textContent = says ? `Claims: ${S.claims} (${says})` : "";
  }
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
      el("td", { class: "name", title: `seat ${i + 1}: ${s.name}` },
        el("div", { class: "nm" }, el("span", { class: "seatno", text: `${i + 1}` }), s.name),
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
  if (t) bits.push(`cops: ${name(t.cop)} (seat ${t.cop + 1})`, `stages ${t.stages}/3`, `Bang! used ${t.bangs}/4`);
  if (S.bank_empty) bits.push("BANK EMPTY");
  box.append(el("p", { class: "sub", text: bits.join(" · ") }));
  // The heist in words (3 players: how many dice each robber flipped, never which).
  const heist = (S.status || []).find((line) => line.startsWith("Heist"));
  if (heist) box.append(el("p", { class: "sub", id: "heist-status", text: heist }));
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

function renderPairCard() {
  const card = $("pair-card");
  if (!card) return;
  card.hidden = paired;
  $("pair-title").textContent = forgotten ? "This phone is no longer paired" : "Pair this phone";
  $("pair-why").textContent = forgotten
    ? "The box restarted (or every device was unpaired), so it does not know this phone any more: enter the PIN to go on. Nothing you tap is lost: it waits for the PIN."
    : "Enter the PIN to get the controls. Without it this page is a scoreboard.";
  $("pin-where").textContent = S && S.pin_where ? `Where is the PIN? ${S.pin_where[0].toUpperCase()}${S.pin_where.slice(1)}.` : "";
}

// A 3-player game: robbers hide their chosen dice from each other (the rules).
function secretHeist() {
  return !!(S.moves.heist_attempt && S.moves.heist_attempt.secret) ||
    !!(S.turn && S.turn.heist && S.turn.heist.secret);
}

function myRobberSeat() {
  return ME.seat !== null && S.cop !== undefined && ME.seat !== S.cop && S.seats[ME.seat] ? ME.seat : null;
}

function renderControls() {
  const box = $("controls");
  if (!box) return;
  renderPairCard();
  $("device-card").hidden = !paired;
  const key = JSON.stringify([paired, S.moves, S.phase, S.events_applied, local.version, S.undo_takes_back, ME]);
  if (key === ctrlKey) return;
  ctrlKey = key;
  box.textContent = "";
  if (!paired) return;
  const M = S.moves;
  const robber = S.players === 3 ? myRobberSeat() : null;
  if (M.new_game) box.append(newGameCard(M.new_game));
  if (M.play_on) box.append(challengeCard(M));
  if (S.other_games && typeof otherGamesCard === "function") box.append(otherGamesCard(S.other_games));
  if (M.heist_hide && robber === null) box.append(hideCard(M.heist_hide));
  if (M.heist_hide && robber !== null) {
    box.append(card("The cops hide their row", el("p", { class: "sub", text: `${name(S.cop)} (the cops) set the diamond, the alarms and the trap; then you flip here, in secret.` })));
  }
  if (M.heist_attempt && secretHeist()) {
    if (robber !== null) box.append(myFlipCard(robber));
    else box.append(tableFlipCard(M.heist_attempt));
  } else if (M.heist_attempt) box.append(flipCard(M.heist_attempt));
  if (M.assault_start) {
    box.append(card("The race", el("button", { class: "primary big", id: "go",
      onclick: () => send({ type: "assault_start" }) }, "Go!")));
  }
  if (S.phase === "assault") box.append(raceCard(M));
  if (M.impound) box.append(impoundCard(M.impound));
  if (M.tally) box.append(tallyCard(M.tally));
  if (M.sticky_fingers) box.append(stickyCard(M.sticky_fingers));
  // (a robber's own phone in a secret heist: its flip only, not the table's undo)
  if (M.undo && !(robber !== null && M.heist_attempt && secretHeist())) box.append(undoCard());
  if (S.players === 3 && !S.over && S.seats.length) box.append(whoCard());
}

// ---- secret flips (3 players): each robber on their own phone
function waitingFor(exceptSeat) {
  const h = S.turn && S.turn.heist;
  if (!h) return [];
  return h.in_heist.filter((s) => !h.chosen.includes(s) && s !== exceptSeat).map(name);
}

function myFlipCard(seat) {
  const h = ME.secret && ME.secret.heist;
  const who = name(seat);
  if (!h || h.seat !== seat) {
    return card(`${who}: your flip`, el("p", { class: "sub", text: "Getting your dice from the box…" }));
  }
  const faces = h.flipped || {};
  const shown = Object.keys(faces).map((p) => `${Number(p) + 1} ${FACE_NAMES[faces[p]]}`).join(", ");
  const mine = el("p", { class: "sub", id: "my-dice", text: shown ? `Your flipped dice: ${shown}.` : "You have flipped no die yet." });
  if (!h.in_heist) {
    return el("section", { class: "card private", id: "my-flip" },
      el("h2", { text: `${who}: out of the heist` }), mine,
      el("p", { text: `Still flipping: ${waitingFor(null).join(", ") || "nobody"}` }));
  }
  if (h.chosen) {
    const what = h.choice === "stop" ? "stop" : `wire ${Number(h.choice) + 1}`;
    const others = waitingFor(seat);
    return el("section", { class: "card private", id: "my-waiting" },
      el("h2", { text: `${who}: chosen (${what})` }), mine,
      el("p", { text: others.length ? `Waiting for ${others.join(", ")}.` : "Everyone has chosen." }));
  }
  const spec = h.heist_flip;
  const len = S.turn.heist.row_length;
  const buttons = [];
  for (let p = 0; p < len; p++) {
    const face = faces[String(p)];
    buttons.push(el("button", { class: local.myFlip === p ? "on" : "", "data-my-pos": p,
      disabled: !spec.positions.includes(p),
      "aria-label": face ? `wire ${p + 1}: ${FACE_NAMES[face]}` : `wire ${p + 1}`,
      onclick: () => { local.myFlip = p; bump(); } }, face ? `${p + 1} ${FACE_LETTER[face]}` : String(p + 1)));
  }
  buttons.push(el("button", { class: local.myFlip === "stop" ? "on" : "", "data-my-stop": "1",
    onclick: () => { local.myFlip = "stop"; bump(); } }, "Stop"));
  const go = el("button", { class: "primary big", id: "my-flip-send", disabled: local.myFlip === null,
    onclick: () => send(local.myFlip === "stop" ? { type: "heist_flip", seat, stop: true }
      : { type: "heist_flip", seat, position: local.myFlip }) },
  local.myFlip === null ? "Choose a wire" : local.myFlip === "stop" ? "Stop here" : `Flip wire ${local.myFlip + 1}`);
  return el("section", { class: "card private", id: "my-flip" },
    el("h2", { text: `${who}: cut a wire, in secret` }),
    el("p", { class: "sub", text: "Positions 1-5 from the cops' left. Only this phone sees your dice; the others see that you chose." }),
    mine, el("div", { class: "row positions" }, ...buttons), go);
}

// The cops' phone (or the table's own controls): the flips of the robbers who have not
// chosen on their phones, with every robber's dice (the cops compare them).
function tableFlipCard(spec) {
  const mine = ME.secret && ME.secret.heist && ME.secret.heist.heist_attempt;
  const note = el("p", { class: "sub", text: "3 players: robbers hide their dice from each other. Each robber may flip on their own phone (“This phone is…” below); the cops may enter the others here." });
  const chosen = (spec.chosen || []).map(name);
  const parts = [note];
  if (chosen.length) parts.push(el("p", { class: "sub", id: "chosen", text: `Chosen on their phones: ${chosen.join(", ")}` }));
  if (!Object.keys(spec.seats).length) return card("Diamond heist", ...parts);
  if (!mine) {
    parts.push(el("p", { class: "sub", text: "Waiting for the robbers' choices." }));
    return card("Diamond heist", ...parts);
  }
  const flipped = (ME.secret.heist.flipped) || {};
  return flipCard(mine, flipped, parts);
}

// "This phone is…": the player whose secret choices this phone makes (the box keeps it
// for this phone's session; a new game clears it). Nobody: the table's own controls.
function whoCard() {
  const claim = async (seat) => {
    const { status, body } = await post("/api/seat", { seat });
    if (status === 200) { setMe({ ...body, paired: true, forgotten: false }); notice(""); bump(); }
    else notice(body.error || `HTTP ${status}`);
  };
  const mine = ME.seat;
  return card(mine === null ? "This phone is…" : `This phone is ${name(mine)}'s (seat ${mine + 1})`,
    el("p", { class: "sub", text: "Robbers flip in secret: each robber taps their own name on their own phone." }),
    el("div", { class: "row" },
      ...S.seats.map((p, i) => el("button", { class: i === mine ? "on" : "", "data-claim": i,
        onclick: () => claim(i) }, `${i + 1} ${p.name}`)),
      el("button", { class: mine === null ? "on" : "", "data-claim": "none", onclick: () => claim(null) },
        "Nobody (table controls)")));
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

function flipCard(spec, faces, intro) {
  const seats = Object.keys(spec.seats).map(Number);
  const revealed = (S.turn && S.turn.heist && S.turn.heist.revealed) || {};
  const rows = seats.map((seat) => {
    const allowed = spec.seats[seat].positions;
    const choice = local.flips[seat];
    const buttons = [];
    for (let p = 0; p < spec.row_length; p++) {
      const face = faces ? (faces[String(seat)] || {})[String(p)] : revealed[p];
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
  return card("Diamond heist: each robber flips a die or stops", ...(intro || []),
    el("p", { class: "sub", text: `Positions 1-${spec.row_length} from the cops' left.` }), ...rows, go);
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
    // (kept open across updates once opened: a table without buttons plays from here)
    const fold = el("details", { id: "buzz-fold" }, el("summary", { text: "Buttons not working? Press for a seat here" }),
      ...M.buzz.map((s) => el("button", { "data-buzz": s, onclick: () => send({ type: "buzz", seat: s }) },
        s === cop ? `Arrested! (${name(s)})` : `Escaped! ${name(s)}`)));
    fold.open = !!local.buzzOpen;
    fold.addEventListener("toggle", () => { local.buzzOpen = fold.open; });
    parts.push(fold);
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

// The camera challenged a claim ([camera] claims = "challenge"): uphold it (the
// verdict is taken back) or play on (it stands). One card per open challenge.
function challengeCard(M) {
  const upheld = new Set(M.challenge_upheld || []);
  const box = el("section", { class: "card challenge", id: "challenges" },
    el("h2", { text: "The camera challenges" }));
  for (const c of S.challenges || []) {
    if (!M.play_on.includes(c.event)) continue;
    const who = c.seat === null || c.seat === undefined ? "The" : `${name(c.seat)}'s`;
    const what = c.claim === "escape" ? "Escape" : c.claim === "arrest" ? "Arrest" : `stage ${c.stage}`;
    const row = el("div", { class: "row" });
    if (upheld.has(c.event)) {
      row.append(el("button", { class: "danger", id: `upheld-${c.event}`,
        onclick: () => send({ type: "challenge_upheld", event: c.event }) }, "Challenge upheld"));
    }
    row.append(el("button", { id: `play-on-${c.event}`,
      onclick: () => send({ type: "play_on", event: c.event }) }, "Play on"));
    box.append(el("p", { class: "check", text: `CHECK: ${who} ${what}: ${c.text}` }), row);
  }
  return box;
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
  if (MODE === "control") renderPairCard();
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
      paired = true; forgotten = false; $("pin").value = "";
      ctrlKey = "";
      reconnect(); // the box learns this phone's new session on its WebSocket
      const tap = unsentTap;
      unsentTap = null;
      if (tap && S && tap.at === S.events_applied) {
        notice("Paired: sending what you tapped", true);
        render();
        await send(tap.event);
      } else {
        notice(tap ? "Paired. The game moved on meanwhile: tap again" : "Paired: the controls are yours", !tap);
        render();
      }
    } else {
      notice(body.error || `HTTP ${status}`);
    }
  });
  $("unpair").addEventListener("click", async () => {
    await post("/api/unpair", {}); paired = false; forgotten = false;
    ME = { seat: null, name: null, secret: null }; ctrlKey = ""; reconnect(); render();
  });
  $("unpair-all").addEventListener("click", async () => {
    if (!confirm("Unpair every phone? The box shows a new PIN.")) return;
    await post("/api/unpair", { all: true }); paired = false; forgotten = false;
    ME = { seat: null, name: null, secret: null }; ctrlKey = ""; reconnect(); render();
  });
}

async function start() {
  setupPairing();
  try {
    const r = await fetch("/api/state", { credentials: "same-origin" });
    const j = await r.json();
    paired = !!j.paired;
    forgotten = !!j.forgotten;
    ME = { seat: j.my_seat === undefined ? null : j.my_seat, name: null, secret: j.my_secret || null };
    update(j);
  } catch (e) {
    notice("the box does not answer");
  }
  connect();
}

start();
