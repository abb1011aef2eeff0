// The replay viewer's core: shows a match at every step, from one perspective: "all"
// (every card face up, once the match is over), "public" (what someone at no seat may
// know: the only one of a match being played, unless its organiser opened the others) or
// one seat (exactly what that seat knew at that step, from the engine's own view of it).
// The frames come from GET /api/matches/<id>/frames, one perspective at a time, so a
// seat's page never holds another seat's cards; a replay file opened with `arena view`
// carries them in the page instead.  Everything is built with textContent (no HTML from a
// record ever reaches the page as markup).
//
// The core knows no game: it holds the controls, the perspectives, the loading and live
// polling of frames, the links, the log, the decisions and the pieces a table is built
// of.  Each game draws its own table in a script beside its rules
// (arena/games/<game>/viewer.js), which the page loads after this one and which
// registers itself with one call:
//
//   ArenaViewer.register("<game id>", (kit) => ({
//     events: { <event type>: (event) => parts, ... },  // the log's sentence per event
//     table: (view, frame) => [center, seatAreas],      // the table at one step
//     action: (action, view) => parts,                  // a legal action in words
//   }));
//
// The core calls the function once, when the page is ready, with the kit: the pieces
// below (el, card, cards, player, seats, perSeat, plural, humanize, seatPanel, faceDown,
// faceUp, pile, fact, describe).  "parts" are what el() takes as children: strings,
// nodes, arrays of them, and "" or null for nothing.  `view` is the frame's view (the
// engine's view of the perspective's seat, or the whole or public table), `frame` the
// step (its events and decisions); `center` is one node, `seatAreas` one seatPanel() per
// seat.  `action` says a legal action as a person would ("Play two 7s"), for the buttons
// of a person's seat (/play), given the view it is legal in; null for one it does not
// know.  Every member is optional: an event type a game leaves out gets the core's
// sentence (turn, match_over) or its raw fields, as does one whose sentence throws; with
// no table (or none registered for the page's game) the log and decisions are shown alone.
"use strict";

(function () {
  const registered = new Map(); // game id -> the function that makes its drawing

  // The pieces a table is built of, for one page: ctx.players (the seats' names),
  // ctx.perspective() (the seat whose table it is, as a string, or "all" / "public"),
  // ctx.drawing() (the game's drawing, for the events' sentences).  The viewer below
  // makes one; so does a page that draws one seat's own table without the viewer (a
  // person's seat, /play).
  function makeKit(ctx) {
    const players = ctx.players;
    function el(tag, className, children) {
      const node = document.createElement(tag);
      if (className) node.className = className;
      (children || []).forEach((child) => append(node, child));
      return node;
    }

    function append(node, child) {
      if (child === null || child === undefined || child === "") return;
      if (Array.isArray(child)) {
        child.forEach((c) => append(node, c));
      } else if (child instanceof Node) {
        node.appendChild(child);
      } else {
        node.appendChild(document.createTextNode(String(child)));
      }
    }

    function player(seat) {
      if (seat === null || seat === undefined) return "nobody";
      const name = players[seat];
      const node = el("span", "player seat-" + (Number(seat) % 8), [
        name !== undefined ? name + " (seat " + seat + ")" : "seat " + seat,
      ]);
      return node;
    }

    const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };
    const CARD = /^(10|[2-9AJQK])([CDHS])$/;

    function card(name) {
      if (name === null || name === undefined || name === "hidden") {
        const back = el("span", "card face-down", ["?"]);
        back.dataset.card = "hidden";
        back.title = "face down";
        return back;
      }
      const text = String(name);
      const french = CARD.exec(text);
      if (french) {
        const node = el("span", "card suit-" + french[2], [french[1] + SUITS[french[2]]]);
        node.dataset.card = text;
        node.title = text;
        return node;
      }
      // a card that is not a French card is a kind of card ("ask_for_a_card"): in words
      const node = el("span", "card kind", [humanize(text)]);
      node.dataset.card = text;
      return node;
    }

    function cards(list) {
      if (!Array.isArray(list)) return card(list);
      if (list.length === 0) return "no cards";
      return list.map((c, i) => (i ? [" ", card(c)] : card(c)));
    }

    function humanize(text) {
      const words = String(text).replace(/_/g, " ");
      return words.charAt(0).toUpperCase() + words.slice(1);
    }

    function plural(count, word, many) {
      return count + " " + (count === 1 ? word : many || word + "s");
    }

    function perSeat(values, format) {
      if (!Array.isArray(values)) return String(values);
      return values.map((v, seat) => [
        seat ? ", " : "",
        player(seat),
        " ",
        format ? format(v) : v === null ? "–" : String(v),
      ]);
    }

    function seats(list) {
      if (!Array.isArray(list)) return player(list);
      return list.map((s, i) => [i ? ", " : "", player(s)]);
    }

    function shortJSON(value) {
      const text = JSON.stringify(value);
      return text.length > 160 ? text.slice(0, 157) + "…" : text;
    }

    // the sentences of events any game may emit, unless the game has its own
    const common = {
      turn: (e) => ["Turn " + e.turn + ": ", player(e.player), " to play"],
      match_over: (e) => [
        "Match over. Ranks: ",
        perSeat(e.ranks, (r) => "#" + r),
        e.scores ? [" · scores: ", perSeat(e.scores)] : "",
      ],
    };

    function describe(e) {
      const own = (ctx.drawing() || {}).events || {};
      const render = own[e.type] || common[e.type];
      if (render) {
        try {
          return { known: true, parts: render(e) };
        } catch (err) {
          // a field this viewer does not expect: fall back to the raw fields
        }
      }
      return { known: false, parts: [] };
    }

    function actionText(action) {
      if (!action || typeof action !== "object") return [shortJSON(action)];
      const parts = [el("strong", "", [String(action.type || "?")])];
      Object.keys(action).forEach((key) => {
        if (key === "type") return;
        const value = action[key];
        parts.push(" " + key + " ");
        if (key === "card" || key === "named") parts.push(card(value));
        else if (key === "cards") parts.push(cards(value));
        else if (key === "player" || key === "target") parts.push(player(value));
        else parts.push(Array.isArray(value) ? value.join(", ") : shortJSON(value));
      });
      return parts;
    }

    // a legal action as a person would say it: the game's own words (its drawing's
    // `action`), else its fields as actionText shows them
    function actionWords(action, view) {
      const own = (ctx.drawing() || {}).action;
      if (own && action && typeof action === "object") {
        try {
          const parts = own(action, view || {});
          if (parts) return parts;
        } catch (err) {
          // a field this drawing does not expect: the fields as they are
        }
      }
      return actionText(action);
    }

    function seatName(seat) {
      const name = players[seat];
      return name !== undefined ? name : "seat " + seat;
    }

    // the seats whose decision made this frame, or who are named by its events
    function actors(frame) {
      const found = new Set();
      (frame.decisions || []).forEach((d) => found.add(Number(d.seat)));
      if (found.size === 0) {
        (frame.events || []).forEach((e) => {
          if (e.type === "turn") return; // names who plays next, not who acted
          ["player", "seat"].forEach((key) => {
            if (typeof e[key] === "number") found.add(e[key]);
          });
        });
      }
      return found;
    }

    function seatPanel(seat, frame, parts, marks) {
      const panel = el("section", "seat-area", []);
      panel.dataset.seat = String(seat);
      panel.setAttribute("aria-label", "Seat " + seat + " · " + seatName(seat));
      if (String(seat) === ctx.perspective()) panel.classList.add("viewer-seat");
      if (actors(frame).has(seat)) panel.classList.add("acted");
      const head = el("header", "seat-head", [
        el("span", "player seat-" + (seat % 8), [seatName(seat)]),
        el("span", "muted", [" · seat " + seat]),
      ]);
      (marks || []).forEach((m) => {
        if (m) head.appendChild(el("span", "mark " + (m.cls || ""), [m.text]));
      });
      panel.appendChild(head);
      parts.forEach((p) => append(panel, p));
      return panel;
    }

    function faceDown(count, cap) {
      const shown = Math.min(count, cap || 20);
      const row = [];
      for (let i = 0; i < shown; i += 1) row.push(card(null));
      if (count > shown) row.push(el("span", "muted", [" +" + (count - shown)]));
      return el("div", "hand", row);
    }

    function faceUp(list) {
      if (!list || list.length === 0) return el("div", "hand empty-hand", ["no cards"]);
      return el("div", "hand", list.map((c) => card(c)));
    }

    function pile(label, count, top) {
      return el("div", "pile", [
        el("span", "pile-label", [label]),
        top === undefined ? card(null) : top === null ? el("span", "card empty-slot", ["–"]) : card(top),
        el("span", "muted", [" " + plural(count, "card")]),
      ]);
    }

    function fact(label, value) {
      return el("div", "fact", [el("span", "fact-label", [label + " "]), value]);
    }

    return {
      el, append, player, card, cards, humanize, plural, perSeat, seats, shortJSON,
      describe, actionText, actionWords, seatName, actors, seatPanel, faceDown, faceUp, pile,
      fact,
    };  // prettier-ignore
  }

  // what a game's drawing is given (the interface in this file's header)
  function drawingKit(k) {
    return Object.freeze({
      el: k.el, card: k.card, cards: k.cards, player: k.player, seats: k.seats,
      perSeat: k.perSeat, plural: k.plural, humanize: k.humanize, seatPanel: k.seatPanel,
      faceDown: k.faceDown, faceUp: k.faceUp, pile: k.pile, fact: k.fact, describe: k.describe,
    });  // prettier-ignore
  }

  // the drawing a game registered, made with a kit (an empty one when the game has none
  // or it throws: the page shows what it can without a table)
  function makeDrawing(gameId, k) {
    const make = registered.get(String(gameId));
    if (!make) return {};
    try {
      return make(drawingKit(k)) || {};
    } catch (err) {
      return {};
    }
  }

  window.ArenaViewer = Object.freeze({
    register(gameId, make) {
      registered.set(String(gameId), make);
    },
    // One seat's table drawn outside the viewer: { kit, drawing } for ctx (see makeKit);
    // call it once the page is parsed, when the game's script has registered.
    table(gameId, ctx) {
      let drawing = {};
      const kit = makeKit({ ...ctx, drawing: () => drawing });
      drawing = makeDrawing(gameId, kit);
      return { kit, drawing };
    },
  });

  const root = document.getElementById("replay");
  if (!root) return;

  // The private logs of the seats whose bot the reader manages (its stderr when hosted,
  // its answers' debug text), embedded by the match page for that reader only; no other
  // page has them and nothing here fetches them.  An entry of a decision is keyed by the
  // decision's id, "<the record's step>:<seat>"; those of the start and the end are the
  // page's own (below the viewer).
  const decisionLogs = new Map();
  const logsNode = document.getElementById("seat-logs");
  (logsNode ? JSON.parse(logsNode.textContent) : []).forEach((log) => {
    (log.entries || []).forEach((entry) => {
      if (entry.decision_id === undefined || entry.decision_id === null) return;
      const key = String(entry.decision_id);
      if (!decisionLogs.has(key)) decisionLogs.set(key, []);
      decisionLogs.get(key).push(entry);
    });
  });

  const embeddedNode = document.getElementById("replay-data");
  const embedded = embeddedNode ? JSON.parse(embeddedNode.textContent) : null;
  const game = root.dataset.game;
  const players = JSON.parse(root.dataset.players || "[]");
  const framesUrl = root.dataset.framesUrl;
  const POLL_MS = 1500;
  const BASE_DELAY_MS = 900; // one step at speed 1×

  const $ = (id) => document.getElementById(id);
  const counter = $("counter");
  const tablePane = $("table");
  const decisionsPane = $("decisions");
  const log = $("event-log");
  const status = $("replay-status");
  const note = $("perspective-note");
  const liveNote = $("live-note");
  const speedSelect = $("speed");
  const roundSelect = $("jump-round");
  const turnSelect = $("jump-turn");
  const buttons = {};
  root.querySelectorAll("[data-go]").forEach((b) => {
    buttons[b.dataset.go] = b;
  });
  const perspectiveButtons = Array.from(root.querySelectorAll("[data-perspective]"));

  let perspective = null; // "all", "public" or a seat number as a string
  let frames = []; // expanded: each with its whole view
  let index = 0;
  let complete = true;
  let following = true; // a live match: stay on the newest frame as frames arrive
  let playing = null; // the autoplay timer
  let pollTimer = null;
  let generation = 0; // bumped by each perspective change: late answers are dropped
  let openPerspectives = null;

  let drawing = {}; // the game's { events, table }: made once the page is ready (start)
  const kit = makeKit({ players, perspective: () => perspective, drawing: () => drawing });
  const { el, player, perSeat, describe, actionText, shortJSON, seatName } = kit;

  // ---------------------------------------------------------------- events
  function visibility(e) {
    if (e.to === "public") return el("span", "vis vis-public", ["public"]);
    if (Array.isArray(e.to)) {
      const label = e.to.length === 1 ? "only seat " + e.to[0] : "seats " + e.to.join(", ");
      return el("span", "vis vis-private", [label]);
    }
    return null;
  }

  function fields(e) {
    const list = el("dl", "ev-fields");
    Object.keys(e).forEach((key) => {
      if (key === "type") return;
      list.appendChild(el("dt", "", [key]));
      list.appendChild(el("dd", "", [shortJSON(e[key])]));
    });
    return list;
  }

  function eventNode(e, position, tag, full) {
    const node = el(tag, "event ev-" + String(e.type).replace(/[^a-z0-9_-]/gi, ""));
    node.dataset.type = e.type;
    node.dataset.index = String(position);
    const head = el("span", "ev-head", [
      el("span", "ev-index", ["#" + (position + 1)]),
      " ",
      el("span", "ev-type", [String(e.type)]),
      " ",
      visibility(e),
    ]);
    node.appendChild(head);
    const described = describe(e);
    if (described.known) {
      node.appendChild(el("span", "ev-text", described.parts));
    } else {
      node.appendChild(fields(e)); // the generic view: type and every field
    }
    if (full && described.known) {
      const details = el("details", "ev-all-fields", [el("summary", "", ["All fields"]), fields(e)]);
      node.appendChild(details);
    }
    return node;
  }

  function latency(ms) {
    const value = Number(ms);
    return (value < 10 ? value.toFixed(2) : value.toFixed(0)) + " ms";
  }

  // ---------------------------------------------------------------- the table
  function drawTable(frame) {
    tablePane.replaceChildren();
    const draw = drawing.table;
    if (!frame || !frame.view || !draw) return;
    let parts;
    try {
      parts = draw(frame.view, frame);
    } catch (err) {
      tablePane.appendChild(el("p", "muted", ["This table cannot be drawn: " + err.message]));
      return;
    }
    const [center, seatAreas] = parts;
    tablePane.appendChild(center);
    tablePane.appendChild(el("div", "seats seats-" + seatAreas.length, seatAreas));
    if (frame.outcome) {
      tablePane.appendChild(
        el("p", "banner over", ["Match over · ranks: ", perSeat(frame.outcome.ranks, (r) => "#" + r)]),
      );
    }
  }

  // ---------------------------------------------------------------- decisions and log
  // what a seat's bot wrote privately as it made this decision, or null; frame n shows the
  // decisions of the record's step n - 1 (frame 0 is the deal)
  function privateLog(frame, decision) {
    const entries = decisionLogs.get(frame.step - 1 + ":" + decision.seat);
    if (!entries) return null;
    const lines = [];
    entries.forEach((entry) => {
      ["debug", "stderr"].forEach((kind) => {
        if (entry[kind]) {
          lines.push(el("div", "log-line", [el("span", "log-kind", [kind]), el("pre", "", [entry[kind]])]));
        }
      });
    });
    return el("div", "private-log", [el("span", "private-log-label", ["Private log"]), lines]);
  }

  function renderDecisions(frame) {
    decisionsPane.replaceChildren();
    const list = (frame && frame.decisions) || [];
    if (!list.length) return;
    const rows = list.map((d) => {
      const fault = d.fault
        ? el("span", "fault", [
            d.fault === "struck_out"
              ? "struck out: the default action is played"
              : "fault: " + (d.reason || d.fault) + " (default action played)",
          ])
        : null;
      return el("li", "decision" + (d.fault ? " has-fault" : ""), [
        player(d.seat),
        " ",
        el("span", "kind", [d.kind]),
        d.action !== undefined ? [" → ", actionText(d.action)] : "",
        d.latency_ms !== undefined && d.latency_ms !== null
          ? el("span", "latency", [" · " + latency(d.latency_ms)])
          : "",
        fault ? [" · ", fault] : "",
        d.memo ? el("q", "memo", [d.memo]) : "",
        privateLog(frame, d),
      ]);
    });
    decisionsPane.appendChild(el("h3", "", ["Step " + frame.step + ": the decisions"]));
    decisionsPane.appendChild(el("ul", "decision-list", rows));
  }

  // The log holds the events of the frames up to the current one only: what comes later
  // is not in the page at all (a seat's page holds what the seat knew at that step).
  let shownUpTo = -1; // the last frame whose events are in the log
  const eventStarts = []; // eventStarts[i]: the number of events before frame i's

  function numberEvents(from) {
    for (let i = from; i < frames.length; i += 1) {
      eventStarts[i] = i === 0 ? 0 : eventStarts[i - 1] + (frames[i - 1].events || []).length;
    }
  }

  function resetLog() {
    log.replaceChildren();
    shownUpTo = -1;
    eventStarts.length = 0;
    numberEvents(0);
  }

  function appendLog(from) {
    numberEvents(from);
  }

  function markLog() {
    while (shownUpTo > index) {
      const last = log.lastElementChild;
      if (last && Number(last.dataset.frame) === shownUpTo) log.removeChild(last);
      else shownUpTo -= 1;
    }
    while (shownUpTo < index) {
      shownUpTo += 1;
      const at = shownUpTo;
      (frames[at].events || []).forEach((e, k) => {
        const item = eventNode(e, eventStarts[at] + k, "li", false);
        item.dataset.frame = String(at);
        item.addEventListener("click", () => go(at));
        log.appendChild(item);
      });
    }
    let current = null;
    Array.from(log.children).forEach((item) => {
      const mine = Number(item.dataset.frame) === index;
      item.classList.toggle("current", mine);
      if (mine && current === null) current = item;
    });
    const target = current || log.lastElementChild;
    if (target) {
      const top = target.offsetTop - log.offsetTop;
      if (top < log.scrollTop || top + target.offsetHeight > log.scrollTop + log.clientHeight) {
        log.scrollTop = Math.max(0, top - log.clientHeight / 3);
      }
    }
  }

  // ---------------------------------------------------------------- rounds and turns
  function fillJumps() {
    const rounds = [];
    const turns = [];
    let lastRound = null;
    let lastTurn = null;
    frames.forEach((f, i) => {
      const v = f.view || {};
      if (v.round !== undefined && v.round !== lastRound) {
        rounds.push([i, "Round " + v.round]);
        lastRound = v.round;
        lastTurn = null;
      }
      if (v.turn !== undefined && v.turn !== lastTurn) {
        turns.push([i, (v.round !== undefined ? "Round " + v.round + " · " : "") + "turn " + v.turn]);
        lastTurn = v.turn;
      }
    });
    [
      [roundSelect, rounds, "Jump to a round"],
      [turnSelect, turns, "Jump to a turn"],
    ].forEach(([select, items, label]) => {
      if (!select) return;
      select.replaceChildren(el("option", "", [label]));
      select.firstChild.value = "";
      items.forEach(([at, text]) => {
        const option = el("option", "", [text]);
        option.value = String(at);
        select.appendChild(option);
      });
      select.disabled = items.length < 2;
    });
  }

  function roundStarts() {
    return roundSelect ? Array.from(roundSelect.options).slice(1).map((o) => Number(o.value)) : [];
  }

  // ---------------------------------------------------------------- showing a frame
  function show() {
    const total = frames.length;
    if (total === 0) {
      counter.textContent = "Step – / –";
      tablePane.replaceChildren(el("p", "empty", [complete ? "No steps to show." : "Waiting for the match to start…"]));
    } else {
      index = Math.max(0, Math.min(index, total - 1));
      const frame = frames[index];
      counter.textContent = "Step " + frame.step + " / " + frames[total - 1].step + (complete ? "" : "…");
      root.dataset.step = String(frame.step);
      drawTable(frame);
      renderDecisions(frame);
      markLog();
    }
    buttons.first.disabled = buttons.prev.disabled = index <= 0 || total === 0;
    buttons.next.disabled = buttons.last.disabled = index >= total - 1 || total === 0;
    if (perspective !== null) {
      const hash = "#seat=" + perspective + "&step=" + (total ? frames[index].step : 0);
      if (window.location.hash !== hash) history.replaceState(null, "", hash);
    }
  }

  function go(target) {
    if (target === "first") index = 0;
    else if (target === "prev") index -= 1;
    else if (target === "next") index += 1;
    else if (target === "last") index = frames.length - 1;
    else index = Number(target);
    following = index >= frames.length - 1;
    show();
  }

  // ---------------------------------------------------------------- autoplay
  function delay() {
    return BASE_DELAY_MS / Number(speedSelect ? speedSelect.value : 1);
  }

  function setPlaying(on) {
    if (playing !== null) {
      clearTimeout(playing);
      playing = null;
    }
    if (on) {
      const tick = () => {
        if (index < frames.length - 1) {
          go("next");
          playing = setTimeout(tick, delay());
        } else if (!complete) {
          playing = setTimeout(tick, delay()); // a live match: wait for the next frame
        } else {
          setPlaying(false);
        }
      };
      if (index >= frames.length - 1 && complete) index = -1; // play again from the start
      playing = setTimeout(tick, index < 0 ? 0 : delay());
    }
    buttons.play.textContent = on ? "❚❚ Pause" : "▶ Play";
    buttons.play.setAttribute("aria-pressed", String(on));
  }

  // ---------------------------------------------------------------- loading
  function expand(list, previous) {
    let view = previous ? previous.view : null;
    return list.map((f) => {
      if (f.view) {
        view = f.view;
      } else {
        view = Object.assign({}, view, f.changes || {});
        (f.gone || []).forEach((k) => delete view[k]);
      }
      return Object.assign({}, f, { view: view });
    });
  }

  async function fetchFrames(which, since) {
    if (embedded) {
      const body = embedded.perspectives[which];
      if (!body) throw new Error("this file has no " + which + " perspective");
      return body;
    }
    const url = framesUrl + "?perspective=" + encodeURIComponent(which) + "&since=" + since;
    const response = await fetch(url, { headers: { Accept: "application/json" } });
    let body = null;
    try {
      body = await response.json();
    } catch (err) {
      body = null;
    }
    if (!response.ok || !body) {
      throw new Error(body && body.message ? body.message : "HTTP " + response.status);
    }
    return body;
  }

  function applyOpen(list) {
    openPerspectives = list.map(String);
    perspectiveButtons.forEach((b) => {
      const open = openPerspectives.indexOf(b.dataset.perspective) >= 0;
      b.disabled = !open;
      b.title = open ? "" : "hidden while the match is played";
    });
  }

  function describePerspective() {
    if (perspective === "all") return "Every card face up, every event and every decision.";
    if (perspective === "public") {
      return "Only what someone at no seat may know: the public table and the public events.";
    }
    return (
      "Exactly what seat " + perspective + " (" + seatName(Number(perspective)) +
      ") knew at each step: its own view, the events it received and its own decisions."
    );
  }

  async function setPerspective(which, step) {
    const mine = ++generation;
    const place = frames.length ? frames[index].step : 0;
    status.hidden = false;
    status.textContent = "Loading…";
    root.setAttribute("aria-busy", "true");
    let body;
    try {
      body = await fetchFrames(which, 0);
    } catch (err) {
      if (mine !== generation) return;
      status.textContent = "The replay could not be loaded: " + err.message;
      root.removeAttribute("aria-busy");
      return;
    }
    if (mine !== generation) return;
    perspective = which;
    complete = !!body.complete;
    if (body.perspectives) applyOpen(body.perspectives);
    perspectiveButtons.forEach((b) => {
      b.setAttribute("aria-pressed", String(b.dataset.perspective === perspective));
    });
    root.dataset.showing = perspective;
    note.textContent = describePerspective();
    if (body.frames === null) {
      // a record this server cannot re-simulate: its events alone, no table
      frames = [{ step: 0, view: null, events: body.events || [], decisions: [] }];
      note.textContent += " This record cannot be re-simulated here: the table is not drawn.";
    } else {
      frames = expand(body.frames || [], null);
    }
    resetLog();
    fillJumps();
    const wanted = step !== undefined ? step : place;
    index = frames.findIndex((f) => f.step >= wanted);
    if (index < 0) index = frames.length - 1;
    following = !complete && (step === undefined || index >= frames.length - 1);
    if (following) index = frames.length - 1;
    status.hidden = true;
    root.removeAttribute("aria-busy");
    show();
    schedulePoll();
  }

  function schedulePoll() {
    if (pollTimer !== null) clearTimeout(pollTimer);
    pollTimer = null;
    if (complete || embedded) {
      if (liveNote) liveNote.hidden = true;
      return;
    }
    if (liveNote) liveNote.hidden = false;
    pollTimer = setTimeout(poll, POLL_MS);
  }

  async function poll() {
    const mine = generation;
    let body;
    try {
      body = await fetchFrames(perspective, frames.length);
    } catch (err) {
      if (mine === generation) schedulePoll(); // a hiccup: try again
      return;
    }
    if (mine !== generation) return;
    if (body.status === "finished" && !complete) {
      // the match is over: every perspective opens, the result is on the page
      window.location.reload();
      return;
    }
    if (body.frames && body.frames.length) {
      const start = frames.length;
      frames = frames.concat(expand(body.frames, frames[frames.length - 1]));
      appendLog(start);
      fillJumps();
      if (following) index = frames.length - 1;
    }
    complete = !!body.complete;
    if (body.perspectives) applyOpen(body.perspectives);
    show();
    schedulePoll();
  }

  // ---------------------------------------------------------------- controls
  Object.entries(buttons).forEach(([name, button]) => {
    if (name === "play") button.addEventListener("click", () => setPlaying(playing === null));
    else button.addEventListener("click", () => go(name));
  });
  perspectiveButtons.forEach((button) => {
    button.addEventListener("click", () => setPerspective(button.dataset.perspective));
  });
  [roundSelect, turnSelect].forEach((select) => {
    if (!select) return;
    select.addEventListener("change", () => {
      if (select.value !== "") go(Number(select.value));
      select.value = "";
    });
  });
  if (speedSelect) {
    speedSelect.addEventListener("change", () => {
      if (playing !== null) setPlaying(true);
    });
  }
  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target;
    if (target && target.closest && target.closest("input, textarea, select, [contenteditable]")) {
      return;
    }
    if (event.key === " " || event.key === "k") {
      event.preventDefault();
      setPlaying(playing === null);
      return;
    }
    if (event.key === "PageDown" || event.key === "PageUp") {
      const starts = roundStarts();
      if (!starts.length) return;
      event.preventDefault();
      const next =
        event.key === "PageDown"
          ? starts.find((s) => s > index)
          : starts.filter((s) => s < index).pop();
      go(next === undefined ? (event.key === "PageDown" ? frames.length - 1 : 0) : next);
      return;
    }
    if (event.shiftKey) return;
    const keys = { ArrowLeft: "prev", ArrowRight: "next", Home: "first", End: "last" };
    const action = keys[event.key];
    if (!action || frames.length === 0) return;
    event.preventDefault();
    go(action);
  });

  // a link to another step or perspective of this match, followed on this page
  window.addEventListener("hashchange", () => {
    const linked = new URLSearchParams(window.location.hash.slice(1));
    const seat = linked.get("seat");
    const step = Number(linked.get("step"));
    if (seat === null || openPerspectives.indexOf(seat) < 0 || !Number.isFinite(step)) return;
    if (seat !== perspective) {
      setPerspective(seat, step);
    } else {
      const at = frames.findIndex((f) => f.step >= step);
      go(at < 0 ? frames.length - 1 : at);
    }
  });

  // #seat=1&step=12 opens that perspective at that step (#seat=1&event=40: at the step of
  // that perspective's 40th event, as links made before the table was drawn say)
  const params = new URLSearchParams(window.location.hash.slice(1));
  const wanted = params.get("seat");
  const initial = root.dataset.initial || "all";
  if (embedded && embedded.perspectives) applyOpen(Object.keys(embedded.perspectives));
  else applyOpen(JSON.parse(root.dataset.open || "[]"));
  const first = wanted !== null && openPerspectives.indexOf(wanted) >= 0 ? wanted : initial;
  const stepParam = params.get("step");
  const eventParam = params.get("event");

  // The game's script comes after this one (deferred, or inline further down the page),
  // so it has registered once the document is parsed: deferred scripts run while the
  // state is "interactive", before DOMContentLoaded.
  function start() {
    drawing = makeDrawing(game, kit); // broken or none: the log and the decisions show the match
    setPerspective(first, stepParam !== null ? Number(stepParam) || 0 : undefined).then(() => {
      if (stepParam === null && eventParam !== null) {
        const wantedEvent = Number(eventParam) - 1;
        let at = 0;
        while (at + 1 < frames.length && eventStarts[at + 1] <= wantedEvent) at += 1;
        go(at);
      }
    });
  }

  if (document.readyState === "complete") start();
  else document.addEventListener("DOMContentLoaded", start);
})();
