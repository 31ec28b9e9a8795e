// The table page for the games besides Vault Assault (The Big Score, Vault solitaire,
// Vault abstract): a scoreboard from each game's summary and controls built from its
// legal moves ("moves"). Loaded before app.js; uses its helpers (el, card, send, $,
// undoCard, renderLists) at render time. S.game is set only for these games.
"use strict";

const TOKENS_SHOWN = { cash20: "$20K", cash30: "$30K", cash50: "$50K", cash100: "$100K",
  silver: "Silver bar", gold: "Gold bar", key: "Digital key", cop: "Cop",
  artifact: "Artifact", diamond: "Diamond" };
const GX = { sel: null, reveal: {}, dice: [1, 1, 1, 1, 1], cmd: "" };

function gname(seat) {
  if (S.game === "vault-abstract") return S.names[seat] || `seat ${seat + 1}`;
  if (S.game === "vault-solitaire") return S.name;
  return S.players[seat] ? S.players[seat].name : `seat ${seat + 1}`;
}

function renderOtherGame() {
  $("phase").textContent = S.status && S.status.length ? S.status[0] : S.title;
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
  if (S.game === "vault-solitaire") return `Score ${S.score}: ${S.rank}`;
  return S.winner === null ? "Game over: a draw" : `Winner: ${gname(S.winner)} (${S.end})`;
}

function renderOtherScore() {
  const box = $("score");
  box.textContent = "";
  if (S.game === "big-score") {
    const head = el("tr", {}, ...["Player", "Status", "Vault tokens", "Total"].map((t) => el("th", { text: t })));
    const rows = S.players.map((p, i) => el("tr", { "data-seat": i },
      el("td", { class: "name" }, el("div", { class: "nm", text: p.name }),
        el("div", { class: "tags" },
          i === S.first_player ? el("span", { class: "tag", text: "marker" }) : null,
          (S.details.chosen || []).includes(i) ? el("span", { class: "tag", text: "chosen" }) : null,
          revealedTag(i),
          S.winners.includes(i) ? el("span", { class: "tag win", text: "winner" }) : null)),
      el("td", { text: p.status }), el("td", { text: p.vault_tokens.map((t) => TOKENS_SHOWN[t] || t).join(", ") || "–" }),
      el("td", { text: money(p.total) })));
    box.append(el("table", { class: "score" }, el("thead", {}, head), el("tbody", {}, ...rows)));
    box.append(el("p", { class: "sub", text: `Round ${S.round} · cops ${S.cops}/${S.busted_at}` +
      (S.busted ? " · BUSTED" : "") + ` · floor: ${S.floor.map((t) => TOKENS_SHOWN[t] || t).join(", ")}` +
      ` · ${S.tokens_in_vault} tokens in the vault` }));
    for (const a of S.advice) box.append(el("p", { class: "sub advice", text: a }));
    if (S.over) {
      for (const p of S.players) {
        const parts = Object.entries(p.breakdown).filter(([, v]) => v).map(([k, v]) => `${k} ${money(v)}`);
        box.append(el("p", { class: "sub", text: `${p.name}: ${parts.join(" + ") || "$0"} = ${money(p.total)}` }));
      }
    }
  } else if (S.game === "vault-solitaire") {
    box.append(el("p", { text: `${S.name} · round ${S.round} · score ${S.score} (${S.rank}) · gems ${S.gems}` }));
    box.append(el("p", { class: "sub", text: `Locks closed: ${S.locks_closed || "–"} · circled: ${S.circled.join(" ") || "–"}` +
      ` · marked: ${S.marked.join(" ") || "–"} · re-rolls used ${S.rerolls_used}/3` }));
    box.append(el("p", { class: "sub", text: "Skimmers: " + S.skimmers.map((k) => k.boxes + (k.used ? " (used)" : "")).join(" · ") }));
    if (S.details.dice.length) {
      box.append(el("p", { class: "dice", text: "Dice: " + S.details.dice.map((v, i) =>
        S.details.unused_dice.includes(i) ? `[${v}]` : `(${v})`).join(" ") }));
    }
  } else {
    box.append(el("p", { text: `White ${S.names[0]}: ${S.pawns[0]} pawns · Black ${S.names[1]}: ${S.pawns[1]} pawns · ${S.summary.moves.length} moves` }));
    // The paired phone has the board among its controls; everyone else sees it here.
    if (!(MODE === "control" && paired && S.moves.move)) box.append(abstractBoard(false));
  }
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
      cells.push(el(active ? "td" : "td", attrs));
    }
    rows.push(el("tr", {}, ...cells));
  }
  rows.push(el("tr", {}, el("th", {}), ...[...files].map((f) => el("th", { text: f }))));
  return el("table", { class: "grid", id: active ? "abstract-board" : "abstract-view" }, el("tbody", {}, ...rows));
}

function renderOtherControls() {
  const box = $("controls");
  if (!box) return;
  $("pair-card").hidden = paired;
  $("device-card").hidden = !paired;
  const key = JSON.stringify([paired, S.moves, S.phase, S.events_applied, local.version, S.undo_takes_back, GX.sel, GX.pick, ME.seat]);
  if (key === ctrlKey) return;
  ctrlKey = key;
  box.textContent = "";
  if (!paired) return;
  const M = S.moves;
  if (S.game === "vault-abstract" && M.move) {
    const side = S.to_move === 0 ? "White" : "Black";
    box.append(card(`${side} (${gname(S.to_move)}) to move: tap a pawn, then where it goes`,
      abstractBoard(true),
      el("div", { class: "row" }, el("span", { class: "who", text: "Companion plays" }),
        ...M.bot.filter((l) => l <= 2).map((l) => el("button", { "data-bot": l,
          onclick: () => send({ command: `bot ${l}` }) }, `level ${l}`))),
      el("div", { class: "row" }, ...M.resign.map((s) => el("button", { class: "danger",
        onclick: () => send({ type: "resign", seat: s }) }, `${gname(s)} resigns`)),
        el("button", { onclick: () => send({ type: "draw" }) }, "Agreed draw"))));
  }
  if (S.game === "big-score") bigScoreControls(box, M);
  if (S.game === "vault-solitaire") solitaireControls(box, M);
  box.append(commandCard());
  if (M.undo) box.append(undoCard());
}

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
  if (M.reveal) {
    const rows = M.reveal.seats.map((s) => {
      const sel = el("select", { "data-token": s, oninput: (ev) => { GX.reveal[s] = ev.target.value; } },
        ...M.reveal.tokens.map((t) => el("option", { value: t, text: TOKENS_SHOWN[t] || t })));
      sel.value = GX.reveal[s] || M.reveal.tokens[0];
      return el("div", { class: "row" }, el("span", { class: "who", text: `${gname(s)} drew` }), sel);
    });
    box.append(card("Reveal: the token each robber drew", ...rows,
      el("button", { class: "primary", id: "reveal", onclick: () => {
        const tokens = S.players.map((_, i) => M.reveal.seats.includes(i) ? (GX.reveal[i] || M.reveal.tokens[0]) : null);
        GX.reveal = {};
        send({ type: "reveal", tokens });
      } }, "Reveal")));
  }
  if (M.trade) {
    const t = M.trade;
    box.append(card(`${gname(t.seat)} trades ${TOKENS_SHOWN[t.drawn] || t.drawn} with the Vault Floor`,
      el("div", { class: "row" }, el("span", { class: "who", text: "Take" }),
        ...t.take.map((tok) => el("button", { "data-take": tok,
          onclick: () => send({ type: "trade", seat: t.seat, take: tok }) }, TOKENS_SHOWN[tok] || tok))),
      el("button", { id: "pass", onclick: () => send({ type: "pass", seat: t.seat }) }, "Keep it (pass)")));
  }
  if (M.muscle) {
    box.append(card("Muscle", ...M.muscle.map((s) => el("button", {
      onclick: () => send({ type: "muscle", seat: s }) }, `${gname(s)} takes the marker`))));
  }
  if (!S.over) box.append(seatCard(mine));
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

function solitaireControls(box, M) {
  if (M.take) {
    box.append(card("The camera reads " + M.take.dice.join(" "),
      el("button", { class: "primary", id: "take-roll", onclick: () => send(M.take) }, "Take this roll")));
  }
  if (M.roll) {
    const sels = GX.dice.map((v, i) => {
      const s = el("select", { "data-die": i, oninput: (ev) => { GX.dice[i] = Number(ev.target.value); } },
        ...[1, 2, 3, 4, 5, 6].map((p) => el("option", { value: p, text: p })));
      s.value = v;
      return s;
    });
    box.append(card("Roll the five dice (or let the camera read them)", el("div", { class: "row" }, ...sels),
      el("button", { class: "primary", id: "roll", onclick: () => send({ type: "roll", dice: GX.dice.slice() }) }, "Enter the roll")));
  }
  if (M.suggestion) {
    const first = M.suggestion.events[0];
    const playable = first && !(first.type === "reroll" && !first.values);
    box.append(card("Helper", el("p", { id: "suggestion", text: M.suggestion.reason }),
      playable ? el("button", { class: "primary", id: "play-suggestion", onclick: () => send(first) },
        `Play: ${describeSol(first)}`) : null));
  }
  if (M.mark) {
    const byCell = {};
    for (const m of M.mark) (byCell[m.cell] = byCell[m.cell] || []).push(m);
    const rows = Object.keys(byCell).sort().map((c) => el("div", { class: "row" },
      el("span", { class: "who", text: c }),
      ...byCell[c].slice(0, 6).map((m) => el("button", { "data-mark": c, onclick: () => send(m) }, describeSol(m)))));
    box.append(card("Mark a square", ...rows,
      el("div", { class: "row" }, ...(M.power || []).map((p) => el("button", {
        onclick: () => send({ type: "power", die: p.die, skimmer: p.skimmer }) },
        `die ${S.details.dice[p.die]} → skimmer ${p.skimmer + 1}`))),
      M.pass ? el("button", { id: "sol-pass", onclick: () => send({ type: "pass" }) }, "End the round (pass)") : null));
  }
}

function describeSol(ev) {
  if (ev.type === "mark") {
    const parts = ev.dice.map((i) => String(S.details.dice[i])).concat(ev.skimmers.map((k) => `skimmer ${k + 1}`));
    return `${ev.cell} with ${parts.join(" + ")}`;
  }
  if (ev.type === "power") return `die ${S.details.dice[ev.die]} → skimmer ${ev.skimmer + 1}`;
  if (ev.type === "reroll") return `re-roll ${ev.dice.length} dice`;
  return ev.type;
}

function commandCard() {
  const input = el("input", { id: "command", placeholder: "a short command, e.g. c1 c2 · roll 1 2 3 4 5 · flee 0", maxlength: "200",
    "aria-label": "command", oninput: (ev) => { GX.cmd = ev.target.value; } });
  input.value = GX.cmd;
  return card("Command", el("div", { class: "row" }, input,
    el("button", { id: "send-command", onclick: () => { const c = GX.cmd.trim(); GX.cmd = ""; if (c) send({ command: c }); } }, "Send")));
}

// Vault Assault's new-game card gets a sibling: start one of the other games.
function otherGamesCard(games) {
  const pick = GX.pick || games[0].game;
  const spec = games.find((x) => x.game === pick);
  const input = el("input", { id: "other-names", placeholder: "names, separated by commas", "aria-label": "names",
    oninput: (ev) => { GX.names = ev.target.value; } });
  input.value = GX.names || "";
  const floor = el("input", { id: "other-floor", placeholder: "Vault Floor: 5 tokens, e.g. artifact,silver,cash20,diamond,key",
    oninput: (ev) => { GX.floor = ev.target.value; } });
  floor.value = GX.floor || "";
  return card("Another game",
    el("div", { class: "row" }, ...games.map((x) => el("button", { class: x.game === pick ? "on" : "", "data-game": x.game,
      onclick: () => { GX.pick = x.game; bump(); } }, x.name))),
    el("p", { class: "sub", text: `${spec.players[0]}-${spec.players[1]} players` +
      (pick === "big-score" ? "; list the youngest first (the First Player Marker); Act I holdings" +
        " come with a JSON new_game" : "") }),
    input, pick === "big-score" ? floor : null,
    el("button", { class: "primary", id: "start-other", onclick: () => {
      const names = (GX.names || "").split(",").map((x) => x.trim()).filter((x) => x);
      const ev = { type: "new_game", game: pick, players: names.length, names };
      if (pick === "big-score") {
        ev.floor = (GX.floor || "").split(",").map((x) => x.trim()).filter((x) => x);
        ev.first_player = 0; // no Act I holdings from here: all tie, the youngest (listed first) starts
      }
      send(ev);
    } }, "Start"));
}
