// The table page for the games besides Vault Assault (The Big Score, Vault solitaire,
// Vault abstract): a scoreboard from each game's summary and controls built from its
// legal moves ("moves"), all by touch. Loaded before app.js; uses its helpers (el, card,
// send, post, notice, $, bump, money, undoCard, renderLists) at render time. S.game is
// set only for these games. People count from 1: seats, dice and skimmers are shown
// from 1 here, and sent as the events' indices (from 0).
"use strict";

// These games' own sheet (the page's policy takes the box's own files only).
(function addSheet() {
  if (document.querySelector('link[href="/static/games.css"]')) return;
  const link = document.createElement("link");
  link.rel = "stylesheet";
  link.href = "/static/games.css";
  document.head.append(link);
})();

const TOKENS_SHOWN = { cash20: "$20K", cash30: "$30K", cash50: "$50K", cash100: "$100K",
  silver: "Silver bar", gold: "Gold bar", key: "Digital key", cop: "Cop",
  artifact: "Artifact", diamond: "Diamond" };
const TOKENS_SHORT = { cash20: "$20K", cash30: "$30K", cash50: "$50K", cash100: "$100K",
  silver: "Silver", gold: "Gold", key: "Key", cop: "Cop", artifact: "Artifact", diamond: "Diamond" };
// The Big Score's numbers, as companion/games/big_score/definition.py has them (a test
// reads both and checks they agree).
const BIG = {
  vault: { cash20: 4, cash30: 6, cash50: 6, cash100: 4, silver: 5, gold: 1, key: 6, cop: 10,
    artifact: 10, diamond: 10 },
  floorSize: 5,
  startCash: 200,
  cashToken: 10,
  supply: { diamonds: 30, artifacts: 30, hard_drives: 30 },
  maxSameExpert: 2,
  experts: { muscle: "Muscle", con_man: "Con Man", driver: "Driver", grease_man: "Grease Man",
    gun_man: "Gun Man", hacker: "Hacker" },
};
const PAYOUT_COUNTS = [["diamonds", "Diamonds"], ["artifacts", "Artifacts"], ["hard_drives", "Hard drives"]];
const STATUS_SHOWN = { in: "in the vault", fled: "fled", busted: "busted" };

// What the person is choosing now, kept across live updates. `at`: the events applied
// when the choices were begun (a move elsewhere makes them stale).
const GX = { at: null, sel: null, cmd: "", reveal: {}, driver: {}, grease: {}, give: null, steal: null,
  roll: [], dice: [], way: null, reroll: null, setup: null };

function gname(seat) {
  if (S.game === "vault-abstract") return S.names[seat] || `seat ${seat + 1}`;
  if (S.game === "vault-solitaire") return S.name;
  return S.players[seat] ? S.players[seat].name : `seat ${seat + 1}`;
}

function renderOtherGame() {
  $("phase").textContent = (S.details && S.details.headline) || S.title;
  $("verdict").textContent = "";
  const w = $("winners");
  w.hidden = !S.over;
  if (S.over) w.textContent = overText();
  renderOtherScore();
  renderLists();
  if (MODE === "control") renderOtherControls();
  showSecondsLeft();
}

// The choosing window's seconds left (the box pushes them as they go), updated in
// place so a button is never rebuilt under a thumb.
function showSecondsLeft() {
  const w = S.window;
  for (const e of document.querySelectorAll("[data-seconds-left]")) {
    e.textContent = w ? `${w.seconds_left} s left` : "";
  }
}

function overText() {
  if (S.game === "big-score") {
    return "Winner" + (S.winners.length > 1 ? "s: " : ": ") +
      S.winners.map((s) => `${gname(s)} (${money(S.players[s].total)})`).join(" and ");
  }
  if (S.game === "vault-solitaire") return `Game over: ${S.score} points, ${S.rank}`;
  return S.winner === null ? "Game over: a draw" : `Winner: ${gname(S.winner)} (${S.end})`;
}

// ---- the scoreboard (the phone and the spectator board)
function renderOtherScore() {
  const box = $("score");
  box.textContent = "";
  if (S.game === "big-score") bigScoreScore(box);
  else if (S.game === "vault-solitaire") solitaireScore(box);
  else {
    box.append(el("p", { text: `White ${S.names[0]}: ${S.pawns[0]} pawns · Black ${S.names[1]}: ${S.pawns[1]} pawns · ${S.summary.moves.length} moves` }));
    // The paired phone has the board among its controls; everyone else sees it here.
    if (!(MODE === "control" && paired && S.moves.move)) box.append(abstractBoard(false));
  }
}

function bigScoreScore(box) {
  const head = el("tr", {}, ...["Player", "Status", "Vault tokens", "Total"].map((t) => el("th", { text: t })));
  const rows = S.players.map((p, i) => el("tr", { "data-seat": i },
    el("td", { class: "name" }, el("div", { class: "pname", text: p.name }), // whole, wrapped
      el("div", { class: "tags" },
        i === S.first_player && !S.over ? el("span", { class: "tag", text: "marker" }) : null,
        p.expert ? el("span", { class: "tag", text: BIG.experts[p.expert] + (p.ability_used ? " (used)" : "") }) : null,
        (S.details.chosen || []).includes(i) ? el("span", { class: "tag", text: "chosen" }) : null,
        revealedTag(i),
        S.winners.includes(i) ? el("span", { class: "tag win", text: "winner" }) : null)),
    el("td", { text: STATUS_SHOWN[p.status] || p.status }),
    el("td", { text: p.vault_tokens.map((t) => TOKENS_SHOWN[t] || t).join(", ") || "–" }),
    el("td", { text: money(p.total) })));
  box.append(el("table", { class: "score" }, el("thead", {}, head), el("tbody", {}, ...rows)));
  box.append(el("p", { class: "sub", text: `Round ${S.round} · cops ${S.cops} of ${S.busted_at} (the ${ordinal(S.busted_at)} busts)` +
    (S.busted ? " · BUSTED" : "") + ` · ${S.tokens_in_vault} tokens in the vault` }));
  box.append(el("p", { class: "sub", text: "Vault Floor: " + (S.floor.map((t) => TOKENS_SHOWN[t] || t).join(", ") || "empty") }));
  for (const a of S.advice) box.append(el("p", { class: "sub advice", text: a }));
  if (S.over) {
    for (const p of S.players) {
      const parts = Object.entries(p.breakdown).filter(([, v]) => v).map(([k, v]) => `${k.replace("_", " ")} ${money(v)}`);
      box.append(el("p", { class: "sub", text: `${p.name}: ${parts.join(" + ") || "$0"} = ${money(p.total)}` }));
    }
  }
}

function ordinal(n) {
  return n + (n % 10 === 1 && n !== 11 ? "st" : n % 10 === 2 && n !== 12 ? "nd" : n % 10 === 3 && n !== 13 ? "rd" : "th");
}

function solitaireScore(box) {
  const D = S.details;
  const score = S.over ? `final score ${S.score}: ${S.rank}` : `score ${S.score} so far`;
  box.append(el("p", { text: `${S.name} · round ${S.round} · ${score} · gems ${S.gems}` }));
  box.append(el("p", { class: "sub", text: `Locks closed: ${S.locks_closed || "–"} · cracked: ${S.circled.join(" ") || "–"}` +
    ` · re-rolls used ${S.rerolls_used} of ${D.rerolls}` }));
  // The paired phone has the board among its controls; everyone else sees it here.
  if (!(MODE === "control" && paired && !S.over)) {
    box.append(solitaireBoard(false), skimmersBox());
  }
}

// ---- the controls
function renderOtherControls() {
  const box = $("controls");
  if (!box) return;
  $("pair-card").hidden = paired;
  $("device-card").hidden = !paired;
  if (GX.at !== S.events_applied) { // the game moved on: half-made choices are stale
    Object.assign(GX, { at: S.events_applied, sel: null, reveal: {}, driver: {}, grease: {},
      give: null, steal: null, roll: [], dice: [], way: null, allWays: false, reroll: null });
  }
  const key = JSON.stringify([paired, S.moves, S.phase, S.events_applied, local.version, S.undo_takes_back, ME.seat]);
  if (key === ctrlKey) return;
  ctrlKey = key;
  box.textContent = "";
  if (!paired) return;
  const M = S.moves;
  if (S.over && M.new_game) box.append(nextGameCard());
  if (S.game === "vault-abstract" && M.move) {
    const side = S.to_move === 0 ? "White" : "Black";
    box.append(card(`${side} (${gname(S.to_move)}) to move: tap a pawn, then where it goes`,
      abstractBoard(true),
      el("div", { class: "row" }, el("span", { class: "who", text: "Companion plays" }),
        ...M.bot.filter((l) => l <= 2).map((l) => el("button", { "data-bot": l,
          onclick: () => send({ command: `bot ${l}` }) }, `level ${l}`))),
      el("div", { class: "row" }, ...M.resign.map((s) => el("button", { class: "danger", "data-resign": s,
        onclick: () => send({ type: "resign", seat: s }) }, `${gname(s)} resigns`)),
        el("button", { id: "draw", onclick: () => send({ type: "draw" }) }, "Agreed draw"))));
  }
  if (S.game === "big-score") bigScoreControls(box, M);
  if (S.game === "vault-solitaire") solitaireControls(box, M);
  box.append(commandCard());
  if (M.undo) box.append(undoCard());
}

function abstractBoard(active) {
  const D = S.details;
  const n = D.size;
  const files = "abcdefghij".slice(0, n);
  const legal = (S.moves && S.moves.move) || {};
  const dests = active && GX.sel ? legal[GX.sel] || [] : [];
  const last = D.last_move || [];
  const rows = [];
  for (let rank = n; rank >= 1; rank--) {
    const cells = [el("th", { text: rank })];
    for (const f of files) {
      const c = f + rank;
      const who = D.white.includes(c) ? "W" : D.black.includes(c) ? "B" : "";
      const cls = ["cell", who === "W" ? "white" : who === "B" ? "black" : "",
        c === GX.sel ? "sel" : "", dests.includes(c) ? "dest" : "", last.includes(c) ? "last" : ""].join(" ");
      const attrs = { class: cls, "data-cell": c, text: who === "W" ? "○" : who === "B" ? "●" : (dests.includes(c) ? "·" : "") };
      if (active && (legal[c] || dests.includes(c))) {
        attrs.onclick = () => {
          if (dests.includes(c)) { const from = GX.sel; GX.sel = null; send({ type: "move", from, to: c }); }
          else { GX.sel = c === GX.sel ? null : c; bump(); }
        };
      }
      cells.push(el("td", attrs));
    }
    rows.push(el("tr", {}, ...cells));
  }
  rows.push(el("tr", {}, el("th", {}), ...[...files].map((f) => el("th", { text: f }))));
  return el("table", { class: "grid", id: active ? "abstract-board" : "abstract-view" }, el("tbody", {}, ...rows));
}

// ---- The Big Score
function revealedTag(seat) {
  const r = (S.details.revealed || []).find((x) => x.seat === seat);
  return r ? el("span", { class: "tag " + (r.flee ? "flees" : "robs"), text: r.flee ? "flees" : "robs" }) : null;
}

function bigScoreControls(box, M) {
  const mine = ME.seat !== null && S.players[ME.seat] ? ME.seat : null;
  if (S.details.revealed) box.append(revealCard(S.details.revealed));
  if (M.choose && mine !== null) box.append(privateChoiceCard(M, mine));
  else if (M.choose) {
    box.append(card("Rob or Flee? (secret: the box shows only who has chosen)",
      el("p", { class: "sub", text: "Or each player on their own phone: “This phone is…” below." }),
      el("p", { class: "secs", "data-seconds-left": "" }),
      ...M.choose.map((s) => el("div", { class: "row" }, el("span", { class: "who", text: gname(s) }),
        el("button", { "data-flee": s, onclick: () => send({ type: "choose", seat: s, flee: true }) }, "Flee"),
        el("button", { "data-rob": s, onclick: () => send({ type: "choose", seat: s, flee: false }) }, "Rob"))),
      el("button", { class: "primary", id: "close-choices", onclick: () => send({ type: "close_choices" }) },
        "Close the window (the rest rob)")));
  }
  if (M.reveal) box.append(tokensDrawnCard(M.reveal));
  if (M.trade) box.append(tradeCard(M.trade));
  else if (M.pass) {
    const s = M.pass[0];
    box.append(card(`${gname(s)}: the Vault Floor is empty`,
      el("button", { id: "pass", onclick: () => send({ type: "pass", seat: s }) }, "Keep the token (pass)")));
  }
  if (M.muscle) {
    box.append(card("Muscle", ...M.muscle.map((s) => el("button", { "data-muscle": s,
      onclick: () => send({ type: "muscle", seat: s }) }, `${gname(s)} takes the marker`))));
  }
  if (!S.over) box.append(seatCard(mine));
}

// Token buttons: tapping one calls pick(token); `chosen` is lit.
function tokenButtons(kinds, chosen, attr, pick) {
  return el("div", { class: "tokens" }, ...kinds.map((t) => el("button", {
    class: (t === chosen ? "on " : "") + (t === "cop" ? "cop" : ""), [attr]: t,
    onclick: () => pick(t) }, TOKENS_SHORT[t] || t)));
}

function pickRow(label, chosen, extra) {
  return el("div", { class: "pick-row" }, el("span", { class: "who", text: label }),
    el("span", { class: "now" + (chosen ? "" : " unset"), text: chosen ? TOKENS_SHOWN[chosen] || chosen : "choose" }),
    extra);
}

// The fists are open: the token each robber drew, tapped (no token is assumed), and
// the abilities that act now (a fleeing Driver's two draws, a fleeing Grease Man's steal).
function tokensDrawnCard(R) {
  const parts = R.seats.map((s) => {
    const row = pickRow(`${gname(s)} drew`, GX.reveal[s],
      tokenButtons(R.tokens, GX.reveal[s], "data-token-kind", (t) => { GX.reveal[s] = t; bump(); }));
    row.setAttribute("data-token", s);
    return row;
  });
  for (const s of R.driver || []) {
    const use = GX.driver[s];
    parts.push(el("div", { class: "pick-row" }, el("span", { class: "who", text: `${gname(s)} fled: a Driver draws two tokens (once a game)` }),
      el("button", { class: use ? "on" : "", "data-driver-use": s, onclick: () => {
        GX.driver[s] = use ? undefined : [null, null]; bump(); } }, use ? "Using it" : "Use it")));
    if (use) {
      for (const j of [0, 1]) {
        const row = pickRow(`draw ${j + 1} (a cop goes back)`, use[j],
          tokenButtons(R.tokens, use[j], "data-driver-kind", (t) => { use[j] = t; bump(); }));
        row.setAttribute("data-driver-draw", j);
        parts.push(row);
      }
    }
  }
  for (const s of R.grease || []) {
    const use = GX.grease[s];
    parts.push(el("div", { class: "pick-row" }, el("span", { class: "who", text: `${gname(s)} fled: a Grease Man steals from the floor (once a game)` }),
      el("button", { class: use !== undefined ? "on" : "", "data-grease-use": s, onclick: () => {
        GX.grease[s] = use !== undefined ? undefined : null; bump(); } }, use !== undefined ? "Using it" : "Use it")));
    if (use !== undefined) {
      parts.push(pickRow("steals", use, tokenButtons(R.floor, use, "data-grease-kind", (t) => { GX.grease[s] = t; bump(); })));
    }
  }
  const missing = R.seats.filter((s) => !GX.reveal[s]).map(gname);
  const driverSeat = (R.driver || []).find((s) => GX.driver[s]);
  const greaseSeat = (R.grease || []).find((s) => GX.grease[s] !== undefined);
  if (driverSeat !== undefined && GX.driver[driverSeat].includes(null)) missing.push("the Driver's draws");
  if (greaseSeat !== undefined && !GX.grease[greaseSeat]) missing.push("the Grease Man's token");
  const ev = { type: "reveal", tokens: S.players.map((_, i) => R.seats.includes(i) ? GX.reveal[i] || null : null) };
  if (driverSeat !== undefined) ev.driver = { seat: driverSeat, tokens: GX.driver[driverSeat] };
  if (greaseSeat !== undefined) ev.grease = { seat: greaseSeat, token: GX.grease[greaseSeat] };
  return card(R.seats.length ? "Open the fists: tap the token each robber drew" : "Everyone fled: no token to enter",
    ...parts,
    missing.length ? el("p", { class: "sub", id: "reveal-missing", text: "Still to choose: " + missing.join(", ") }) : null,
    el("button", { class: "primary big", id: "reveal", disabled: missing.length > 0,
      onclick: () => send(ev) }, "Reveal"));
}

function tradeCard(t) {
  const give = GX.give && t.give.includes(GX.give) ? GX.give : t.drawn;
  const parts = [];
  if (t.give.length > 1) {
    parts.push(pickRow("Gives (a Con Man may give an earlier token, once)", give,
      tokenButtons(t.give, give, "data-give", (tok) => { GX.give = tok; bump(); })));
  }
  if (t.steal) {
    const kinds = [...new Set([...t.take, give])].sort();
    parts.push(el("div", { class: "pick-row" }, el("span", { class: "who", text: "A Gun Man also steals one (once a game)" }),
      el("span", { class: "now" + (GX.steal ? "" : " unset"), text: GX.steal ? TOKENS_SHOWN[GX.steal] : "no steal" }),
      tokenButtons(kinds, GX.steal, "data-steal", (tok) => { GX.steal = tok === GX.steal ? null : tok; bump(); })));
  }
  parts.push(el("div", { class: "pick-row" }, el("span", { class: "who", text: "Take from the floor" }),
    tokenButtons(t.take, null, "data-take", (tok) => {
      const ev = { type: "trade", seat: t.seat, take: tok };
      if (give !== t.drawn) ev.give = give;
      if (GX.steal) ev.steal = GX.steal;
      send(ev);
    })));
  return card(`${gname(t.seat)} drew ${TOKENS_SHOWN[t.drawn] || t.drawn}: trade it with the Vault Floor, or keep it`,
    ...parts, el("button", { id: "pass", onclick: () => send({ type: "pass", seat: t.seat }) }, "Keep it (pass)"));
}

// A phone that said which player it is: only that player's Flee and Rob, then "chosen"
// (never what: someone may be looking at this screen), until all reveal at once.
function privateChoiceCard(M, seat) {
  const p = S.players[seat];
  if (p.status !== "in") {
    return card(`${p.name}: out of the vault (${p.status === "fled" ? "fled: safe" : p.status})`,
      el("p", { class: "sub", text: "The others are choosing." }));
  }
  const others = M.choose.filter((s) => s !== seat).map(gname);
  if (!M.choose.includes(seat)) {
    return el("section", { class: "card private", id: "my-waiting" },
      el("h2", { text: `${p.name}: chosen — waiting for the others` }),
      el("p", { text: others.length ? `Still choosing: ${others.join(", ")}` : "Everyone has chosen." }),
      el("p", { class: "secs", "data-seconds-left": "" }));
  }
  return el("section", { class: "card private", id: "my-choice" },
    el("h2", { text: `${p.name}: Rob or Flee?` }),
    el("p", { class: "sub", text: "Secret: the box tells nobody until everyone has chosen." }),
    el("div", { class: "choice-buttons" },
      el("button", { class: "flee", id: "my-flee", onclick: () => send({ type: "choose", seat, flee: true }) }, "Flee"),
      el("button", { class: "rob", id: "my-rob", onclick: () => send({ type: "choose", seat, flee: false }) }, "Rob")),
    el("p", { class: "secs", "data-seconds-left": "" }));
}

// The window has closed: every choice at once.
function revealCard(revealed) {
  return el("section", { class: "card reveal-card", id: "revealed" },
    el("h2", { text: "Open your fists!" }),
    el("ul", { class: "choices" }, ...revealed.map((r) => el("li", { "data-revealed": r.seat,
      class: r.flee ? "flees" : "robs", text: `${r.name} ${r.flee ? "flees" : "robs"}` }))));
}

// "This phone is…": the player whose secret choices this phone makes (kept by the box
// for this phone's session; a new game clears it). Nobody: the table's own controls.
function seatCard(mine) {
  const claim = async (seat) => {
    const { status, body } = await post("/api/seat", { seat });
    if (status === 200) { ME = { seat: body.seat, name: body.name }; notice(""); bump(); }
    else notice(body.error || `HTTP ${status}`);
  };
  return card(mine === null ? "This phone is…" : `This phone is ${gname(mine)}'s`,
    el("div", { class: "row" },
      ...S.players.map((p, i) => el("button", { class: i === mine ? "on" : "", "data-claim": i,
        onclick: () => claim(i) }, p.name)),
      el("button", { class: mine === null ? "on" : "", "data-claim": "none", onclick: () => claim(null) },
        "Nobody (table controls)")));
}

// ---- Vault solitaire
function solitaireControls(box, M) {
  const D = S.details;
  if (M.take) {
    box.append(card("The camera reads " + M.take.dice.join(" "),
      el("button", { class: "primary", id: "take-roll", onclick: () => send(M.take) }, "Take this roll")));
  }
  if (M.take_back) { // the camera entered the roll itself: one tap takes it back
    box.append(card(M.take_back.text,
      el("p", { class: "sub", text: "The camera read all five dice surely and entered them as the roll." }),
      el("button", { id: "take-back", onclick: () => send({ type: "undo" }) }, "Take back")));
  }
  if (M.roll) box.append(rollCard());
  if (M.suggestion) box.append(helperCard(M.suggestion));
  if (S.phase === "play") box.append(diceCard(M));
  if (!S.over) {
    const lock = D.locks.find((k) => k.state === "closing");
    box.append(card(lock ? `Round ${lock.lock}: lock ${lock.lock} closes ${lock.line} (${gems(lock.gems)}) at its end` : "The vault",
      el("p", { class: "sub", text: S.phase === "play" ? "Tap a lit square to mark it with these dice." : "Roll the dice to mark squares." }),
      solitaireBoard(true), waysBox(), skimmersBox()));
  }
}

function gems(n) { return `${n} gem${n === 1 ? "" : "s"}`; }

// Five dice entered by tapping their faces (each tap fills the next die; a die tapped
// again is taken out), for the roll or for a re-roll.
function facesPicker(values, count, attr) {
  const slots = [];
  for (let i = 0; i < count; i++) {
    const v = values[i];
    slots.push(el("button", { class: "die" + (v ? "" : " empty"), [attr]: i,
      onclick: () => { if (v) { values.splice(i, 1); bump(); } } }, v ? String(v) : "?"));
  }
  return [el("div", { class: "dice" }, ...slots),
    el("div", { class: "faces" }, ...[1, 2, 3, 4, 5, 6].map((f) => el("button", { "data-face": f,
      disabled: values.length >= count, onclick: () => { values.push(f); bump(); } }, String(f))))];
}

function rollCard() {
  const ready = GX.roll.length === 5;
  return card("Roll the five dice, then tap their faces",
    el("p", { class: "sub", text: ready ? "Tap a die to take it out." : `Die ${GX.roll.length + 1} of 5: tap its face.` }),
    ...facesPicker(GX.roll, 5, "data-slot"),
    el("button", { class: "primary big", id: "roll", disabled: !ready,
      onclick: () => send({ type: "roll", dice: GX.roll.slice() }) }, ready ? `Enter the roll: ${GX.roll.join(" ")}` : "Enter the roll"));
}

function helperCard(tip) {
  const first = tip.events[0];
  let button = null;
  if (first && first.type === "reroll" && !first.values) {
    button = el("button", { class: "primary", id: "play-suggestion", onclick: () => {
      GX.reroll = { dice: first.dice.slice(), values: [] }; GX.dice = first.dice.slice(); bump(); } },
    `Re-roll those ${first.dice.length} dice`);
  } else if (first) {
    button = el("button", { class: "primary", id: "play-suggestion", onclick: () => send(first) },
      `Play: ${(tip.steps || [])[0] || first.type}`);
  }
  return card("Helper", el("p", { id: "suggestion", text: tip.reason }), button);
}

function diceCard(M) {
  const D = S.details;
  const parts = [];
  if (GX.reroll) {
    const n = GX.reroll.dice.length;
    parts.push(el("p", { text: `Re-roll dice ${GX.reroll.dice.map((i) => i + 1).join(", ")}: roll them and tap their new faces.` }),
      ...facesPicker(GX.reroll.values, n, "data-reslot"),
      el("button", { class: "primary", id: "reroll-send", disabled: GX.reroll.values.length !== n,
        onclick: () => send({ type: "reroll", dice: GX.reroll.dice, values: GX.reroll.values.slice() }) }, "Enter the new faces"),
      el("button", { id: "reroll-cancel", onclick: () => { GX.reroll = null; bump(); } }, "Cancel"));
    return card("Re-roll", ...parts);
  }
  parts.push(el("p", { class: "sub", text: "Tap a die to power a skimmer with it or re-roll it." }),
    el("div", { class: "dice" }, ...D.dice.map((v, i) => {
      const free = D.unused_dice.includes(i);
      return el("button", { class: "die" + (free ? "" : " used") + (GX.dice.includes(i) ? " on" : ""), "data-die": i,
        "aria-label": `die ${i + 1}: ${v}${free ? "" : " (used)"}`, disabled: !free,
        onclick: () => { GX.dice = GX.dice.includes(i) ? GX.dice.filter((x) => x !== i) : [...GX.dice, i]; bump(); } }, String(v));
    })));
  if (GX.dice.length === 1) {
    const i = GX.dice[0];
    const powers = (M.power || []).filter((p) => p.die === i);
    if (powers.length) {
      parts.push(el("div", { class: "row" }, el("span", { class: "who", text: `Power a skimmer with die ${i + 1} (a ${D.dice[i]})` }),
        ...powers.map((p) => {
          const had = S.skimmers[p.skimmer].boxes;
          return el("button", { "data-power": `${p.die}:${p.skimmer}`, onclick: () => send({ type: "power", die: p.die, skimmer: p.skimmer }) },
            `Skimmer ${p.skimmer + 1}: ${had} → ${had + D.dice[i]}`);
        })));
    }
  }
  if (GX.dice.length && M.reroll && GX.dice.every((i) => M.reroll.dice.includes(i))) {
    parts.push(el("button", { id: "reroll-start", onclick: () => { GX.reroll = { dice: GX.dice.slice().sort(), values: [] }; bump(); } },
      `Re-roll ${GX.dice.length === 1 ? "this die" : `these ${GX.dice.length} dice`} (${M.reroll.left} re-roll${M.reroll.left === 1 ? "" : "s"} left)`));
  }
  if (M.pass) {
    const left = D.unused_dice.length;
    parts.push(el("button", { id: "sol-pass", onclick: () => send({ type: "pass" }) },
      `End the round (${left} ${left === 1 ? "die" : "dice"} left unused)`));
  }
  return card("Your dice", ...parts);
}

// The vault: squares with their numbers (Odd, Even, x2), blacked-out and marked ones,
// the locks round it (each beside the row or column it closes, with its gems), the
// round's lock lit. Active: the squares these dice can mark are lit and tappable.
function solitaireBoard(active) {
  const D = S.details;
  const can = active && S.phase === "play" ? D.markable : [];
  const lockAt = {};
  for (const k of D.locks) lockAt[`${k.kind}${k.index}`] = k;
  const closing = D.locks.find((k) => k.state === "closing");
  const lockCell = (k) => {
    if (!k) return el("th", {});
    const mark = k.state === "cracked" ? " ✓" : "";
    return el("th", { class: `lock ${k.state}`, "data-lock": k.lock, title: `lock ${k.lock} closes ${k.line}: ${gems(k.gems)}` },
      k.lock + mark, el("small", { text: "◆".repeat(k.gems) }));
  };
  const edge = (cols) => el("tr", {}, el("th", {}), ...[0, 1, 2, 3, 4, 5].map((c) => cols.includes(c) ? lockCell(lockAt[`col${c}`]) : el("th", {})), el("th", {}));
  const rows = [edge([1, 3, 5])];
  D.board.forEach((row, r) => {
    const cells = row.map((sq, c) => {
      const inClosing = closing && ((closing.kind === "row" && closing.index === r) || (closing.kind === "col" && closing.index === c));
      const text = sq.square === null ? "" : sq.square === "odd" ? "Odd" : sq.square === "even" ? "Even" : String(sq.square);
      const cls = ["sq", sq.square === null ? "black" : sq.marked ? "marked" : "", can.includes(sq.cell) ? "can" : "",
        GX.way === sq.cell ? "sel" : "", inClosing ? "closing" : ""].join(" ");
      const attrs = { class: cls, "data-sq": sq.cell, "aria-label": `${sq.cell}: ${sq.square === null ? "blacked out" : text}${sq.marked && sq.square !== null ? ", marked" : ""}` };
      if (can.includes(sq.cell)) attrs.onclick = () => { GX.way = GX.way === sq.cell ? null : sq.cell; GX.allWays = false; bump(); };
      const shown = sq.square !== null && sq.marked ? "✓" : text;
      return el("td", attrs, text.length > 3 && shown === text ? el("span", { class: "word", text }) : shown,
        el("small", { text: sq.cell }));
    });
    const left = lockAt[`row${r}`] && "JKL".includes(lockAt[`row${r}`].lock) ? lockCell(lockAt[`row${r}`]) : el("th", {});
    const right = lockAt[`row${r}`] && "DEF".includes(lockAt[`row${r}`].lock) ? lockCell(lockAt[`row${r}`]) : el("th", {});
    rows.push(el("tr", {}, left, ...cells, right));
  });
  rows.push(edge([0, 2, 4]));
  return el("table", { class: "vault", id: active ? "vault-board" : "vault-view" }, el("tbody", {}, ...rows));
}

// The ways these dice (and powered skimmers) mark the square tapped, as the sums they are.
const WAYS_SHOWN = 6;

function waysBox() {
  const ways = GX.way ? S.details.ways[GX.way] || [] : [];
  if (!ways.length) return null;
  const shown = GX.allWays ? ways : ways.slice(0, WAYS_SHOWN);
  return el("div", { class: "ways", id: "ways" }, el("p", { class: "sub", text: `Mark ${GX.way} with:` }),
    ...shown.map((w, j) => el("button", { "data-way": j, class: "sum", onclick: () => { GX.way = null; send(w.event); } }, w.text)),
    shown.length < ways.length ? el("button", { id: "ways-all", onclick: () => { GX.allWays = true; bump(); } },
      `Show all ${ways.length} ways`) : null);
}

function skimmersBox() {
  const top = S.details.skimmer_boxes;
  return el("div", { class: "skimmers" }, ...S.skimmers.map((k, i) => {
    const fill = el("span", {});
    fill.style.width = `${Math.round((100 * k.boxes) / top)}%`; // the CSSOM: allowed by the page's policy
    return el("div", { class: "skimmer" + (k.used ? " used" : ""), "data-skimmer": i },
      el("div", { text: `Skimmer ${i + 1}` }),
      el("div", { class: "sub", text: k.used ? `${k.boxes} boxes: used` : `${k.boxes} of ${top} boxes` }),
      el("div", { class: "bar" }, fill));
  }));
}

function commandCard() {
  const input = el("input", { id: "command", placeholder: "a short command, e.g. c1 c2 · roll 1 2 3 4 5 · flee 1", maxlength: "200",
    "aria-label": "command", oninput: (ev) => { GX.cmd = ev.target.value; } });
  input.value = GX.cmd;
  return card("Command", el("div", { class: "row" }, input,
    el("button", { id: "send-command", onclick: () => { const c = GX.cmd.trim(); GX.cmd = ""; if (c) send({ command: c }); } }, "Send")));
}

// ---- a new game of these (Vault Assault's new-game card gets this sibling; after one
// of these games ends it starts the next one, the same players kept)
function nextGameCard() {
  const games = [{ game: S.game, name: S.title, players: null }, ...(S.other_games || []).filter((g) => g.game !== "vault-assault")];
  const names = S.game === "big-score" ? S.players.map((p) => p.name) : S.game === "vault-solitaire" ? [S.name] : S.names.slice();
  return otherGamesCard(games, { title: "Next game", names });
}

const GAME_PLAYERS = { "big-score": [1, 6], "vault-solitaire": [1, 1], "vault-abstract": [2, 2] };

function setupFor(games, names) {
  const ids = games.map((g) => g.game);
  if (!GX.setup || (names && GX.setup.from !== S.events_applied + ":" + S.game)) {
    GX.setup = { game: ids[0], names: (names || []).slice(), n: names && names.length ? names.length : null,
      act1: [], floor: [], first: null, from: names ? S.events_applied + ":" + S.game : null };
  }
  if (!ids.includes(GX.setup.game)) GX.setup.game = ids[0];
  return GX.setup;
}

function playersOf(setup) {
  const [lo, hi] = GAME_PLAYERS[setup.game] || [1, 6];
  const n = setup.n === null ? (setup.game === "big-score" ? 3 : lo) : setup.n;
  return Math.min(hi, Math.max(lo, n));
}

function seatLabel(game, i) {
  if (game === "vault-abstract") return i === 0 ? "White (moves first)" : "Black";
  return `Player ${i + 1}`;
}

function nameOf(setup, i) {
  return (setup.names[i] || "").trim() || (setup.game === "vault-abstract" ? ["White", "Black"][i] : `Player ${i + 1}`);
}

function act1Of(setup, i) {
  if (!setup.act1[i]) setup.act1[i] = { cash: BIG.startCash, diamonds: 0, artifacts: 0, hard_drives: 0, expert: null };
  return setup.act1[i];
}

// The rules' checks of a Big Score setup: [problems], and who holds the First Player
// Marker (null until the youngest of a tie is tapped).
function bigScoreChecks(setup) {
  const n = playersOf(setup);
  const problems = [];
  const act1 = [];
  for (let i = 0; i < n; i++) act1.push(act1Of(setup, i));
  act1.forEach((a, i) => {
    if (!Number.isInteger(a.cash) || a.cash < 0 || a.cash % BIG.cashToken) {
      problems.push(`${nameOf(setup, i)}: cash is a whole number of $${BIG.cashToken}K tokens`);
    }
  });
  for (const [f, label] of PAYOUT_COUNTS) {
    const total = act1.reduce((t, a) => t + a[f], 0);
    if (total > BIG.supply[f]) problems.push(`${total} ${label.toLowerCase()} in all: the box has ${BIG.supply[f]}`);
  }
  for (const [e, label] of Object.entries(BIG.experts)) {
    const k = act1.filter((a) => a.expert === e).length;
    if (k > BIG.maxSameExpert) problems.push(`${k} players trained a ${label}: at most ${BIG.maxSameExpert} can`);
  }
  if (setup.floor.length !== BIG.floorSize) {
    problems.push(`the Vault Floor needs ${BIG.floorSize - setup.floor.length} more token${BIG.floorSize - setup.floor.length === 1 ? "" : "s"}`);
  }
  const payout = act1.map((a) => a.diamonds + a.artifacts + a.hard_drives);
  const low = Math.min(...payout);
  const fewest = payout.map((p, i) => (p === low ? i : -1)).filter((i) => i >= 0);
  let first = fewest.length === 1 ? fewest[0] : fewest.includes(setup.first) ? setup.first : null;
  if (first === null) problems.push("tap the youngest of the players tied for the fewest payout tokens");
  return { problems, first, fewest, act1 };
}

function otherGamesCard(games, opts) {
  opts = opts || {};
  const setup = setupFor(games, opts.names);
  const pick = setup.game;
  const spec = games.find((x) => x.game === pick);
  const [lo, hi] = GAME_PLAYERS[pick] || spec.players;
  const n = playersOf(setup);
  const parts = [el("div", { class: "row" }, ...games.map((x) => el("button", { class: x.game === pick ? "on" : "", "data-game": x.game,
    onclick: () => { setup.game = x.game; bump(); } }, x.name)))];
  if (hi > lo) {
    parts.push(el("div", { class: "row" }, el("span", { class: "who", text: "Players" }),
      ...Array.from({ length: hi - lo + 1 }, (_, k) => lo + k).map((p) => el("button", {
        class: p === n ? "on" : "", "data-count": p, onclick: () => { setup.n = p; bump(); } }, String(p)))));
  }
  const problemsBox = el("div", {});
  const start = el("button", { class: "primary big", id: "start-other" }, opts.title === "Next game" && pick === S.game ? "Play again" : "Start");
  const check = () => {
    const problems = pick === "big-score" ? bigScoreChecks(setup).problems : [];
    problemsBox.replaceChildren(problems.length
      ? el("ul", { class: "problems", id: "setup-problems" }, ...problems.map((p) => el("li", { text: p })))
      : el("p", { class: "fine", text: "Ready." }));
    start.disabled = problems.length > 0;
  };
  for (let i = 0; i < n; i++) {
    const input = el("input", { id: `other-name-${i}`, class: "name", placeholder: seatLabel(pick, i), maxlength: "24",
      "aria-label": `${seatLabel(pick, i)}'s name`, oninput: (ev) => {
        setup.names[i] = ev.target.value;
        for (const e of document.querySelectorAll(`[data-name-of="${i}"]`)) e.textContent = nameOf(setup, i);
      } });
    input.value = setup.names[i] || "";
    if (pick === "big-score") parts.push(bigScorePlayer(setup, i, input, check));
    else {
      const label = pick === "vault-abstract" ? ["White", "Black"][i] : n === 1 ? "Name" : `${i + 1}`;
      parts.push(el("div", { class: "row" }, el("span", { class: "sub seatno", text: label }), input));
    }
  }
  if (pick === "big-score") parts.push(...bigScoreFloorAndMarker(setup));
  else if (pick === "vault-abstract") parts.push(el("p", { class: "sub", text: "White moves first; the companion can play either side." }));
  start.addEventListener("click", async () => {
    const names = Array.from({ length: n }, (_, i) => nameOf(setup, i));
    const ev = { type: "new_game", game: pick, players: n, names };
    if (pick === "big-score") {
      const c = bigScoreChecks(setup);
      ev.act1 = c.act1.map((a) => ({ cash: a.cash, diamonds: a.diamonds, artifacts: a.artifacts, hard_drives: a.hard_drives, expert: a.expert }));
      ev.floor = setup.floor.slice();
      ev.first_player = c.first;
    }
    const status = await send(ev);
    if (status === 200 || status === 202) GX.setup = null;
  });
  parts.push(problemsBox, start);
  check();
  return el("section", { class: "card game-setup", id: "game-setup" }, el("h2", { text: opts.title || "Another game" }), ...parts);
}

// One player of a Big Score: the name, then Act I's results as the table counts them:
// cash ($K, the start's $200K included), the payout tokens, the expert trained.
function bigScorePlayer(setup, i, input, check) {
  const a = act1Of(setup, i);
  const cash = el("input", { "data-cash": i, inputmode: "numeric", "aria-label": `cash of player ${i + 1} in $K`,
    oninput: (ev) => { const v = ev.target.value.trim(); a.cash = /^\d+$/.test(v) ? Number(v) : NaN; check(); } });
  cash.value = Number.isNaN(a.cash) ? "" : String(a.cash);
  const step = (d) => { a.cash = Math.max(0, (Number.isNaN(a.cash) ? BIG.startCash : a.cash) + d); bump(); };
  const counter = (f, label) => el("div", { class: "stepper" }, el("span", { class: "lbl", text: label }),
    el("button", { "data-step": `${i}:${f}:-1`, "aria-label": `one ${label} fewer`, disabled: a[f] === 0,
      onclick: () => { a[f] -= 1; bump(); } }, "−"),
    el("span", { class: "val", "data-count-of": `${i}:${f}`, text: String(a[f]) }),
    el("button", { "data-step": `${i}:${f}:1`, "aria-label": `one ${label} more`, onclick: () => { a[f] += 1; bump(); } }, "+"));
  return el("div", { class: "player", "data-player": i },
    el("h3", { text: `Player ${i + 1}` + (i === 0 ? " (list the youngest first)" : "") }), input,
    el("p", { class: "sub", text: "Act I's results:" }),
    el("div", { class: "cash-row" }, el("span", { class: "lbl", text: "Cash $K" }), cash,
      el("button", { "data-cash-step": `${i}:-10`, onclick: () => step(-BIG.cashToken) }, "−10"),
      el("button", { "data-cash-step": `${i}:10`, onclick: () => step(BIG.cashToken) }, "+10"),
      el("button", { "data-cash-step": `${i}:100`, onclick: () => step(100) }, "+100")),
    el("div", { class: "steppers" }, ...PAYOUT_COUNTS.map(([f, label]) => counter(f, label))),
    el("div", { class: "chips" }, el("span", { class: "lbl sub", text: "Expert:" }),
      el("button", { class: a.expert === null ? "on" : "", "data-expert": `${i}:none`, onclick: () => { a.expert = null; bump(); } }, "none"),
      ...Object.entries(BIG.experts).map(([e, label]) => el("button", { class: a.expert === e ? "on" : "", "data-expert": `${i}:${e}`,
        onclick: () => { a.expert = e; bump(); } }, label))));
}

// The Vault Floor (five tokens tapped in, never a cop; tap one again to take it out)
// and who holds the First Player Marker (the fewest payout tokens; a tie: the youngest).
function bigScoreFloorAndMarker(setup) {
  const taken = {};
  for (const t of setup.floor) taken[t] = (taken[t] || 0) + 1;
  const kinds = Object.keys(BIG.vault).filter((t) => t !== "cop");
  const full = setup.floor.length >= BIG.floorSize;
  const floor = el("div", { class: "pick-row" },
    el("span", { class: "who", text: `Vault Floor: the ${BIG.floorSize} tokens drawn (cops go back)` }),
    el("div", { class: "chips", id: "floor-chosen" }, ...(setup.floor.length ? setup.floor.map((t, j) => el("button", { class: "on", "data-floor-drop": j,
      onclick: () => { setup.floor.splice(j, 1); bump(); } }, `${TOKENS_SHORT[t]} ×`)) : [el("span", { class: "sub", text: "none yet" })])),
    el("div", { class: "tokens" }, ...kinds.map((t) => el("button", { "data-floor": t,
      disabled: full || (taken[t] || 0) >= BIG.vault[t], onclick: () => { setup.floor.push(t); bump(); } }, TOKENS_SHORT[t]))));
  const c = bigScoreChecks(setup);
  let marker;
  if (c.fewest.length === 1) {
    marker = el("p", { id: "first-player", text: `First Player Marker: `, },
      el("b", { "data-name-of": c.fewest[0], text: nameOf(setup, c.fewest[0]) }), " (the fewest payout tokens)");
  } else {
    marker = el("div", { class: "pick-row", id: "first-player" },
      el("span", { class: "who", text: "Tied for the fewest payout tokens: who is the youngest? (the First Player Marker)" }),
      el("div", { class: "chips" }, ...c.fewest.map((i) => el("button", { class: c.first === i ? "on" : "", "data-first": i,
        "data-name-of": i, onclick: () => { setup.first = i; bump(); } }, nameOf(setup, i)))));
  }
  return [floor, marker];
}
