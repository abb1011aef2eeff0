// The replay viewer: steps through a match's events, from everyone's point of view ("All")
// or from one seat's, which is loaded from the API's ?seat=k filter and so shows exactly
// the events that seat received.  Everything shown is built with textContent (no HTML
// from the record ever reaches the page as markup).
"use strict";

(function () {
  const root = document.getElementById("replay");
  if (!root) return;

  const game = root.dataset.game;
  const players = JSON.parse(root.dataset.players || "[]");
  const replayUrl = root.dataset.replayUrl;
  const positionsNode = document.getElementById("replay-positions");
  // positions.all[i] / positions.seats[k][i]: events that existed before step i
  const positions = positionsNode ? JSON.parse(positionsNode.textContent) : null;

  const counter = document.getElementById("counter");
  const currentPane = document.getElementById("event-current");
  const decisionsPane = document.getElementById("decisions");
  const log = document.getElementById("event-log");
  const status = document.getElementById("replay-status");
  const note = document.getElementById("perspective-note");
  const buttons = {};
  root.querySelectorAll("[data-go]").forEach((b) => {
    buttons[b.dataset.go] = b;
  });

  const loaded = {}; // mode ("all" or seat number as a string) -> API answer
  let mode = "all";
  let events = [];
  let index = 0;
  let decisions = []; // decisions[step]: the decisions of that step shown in this mode

  // ---------------------------------------------------------------- building blocks
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
    if (name === null || name === undefined) return el("span", "card hidden-card", ["?"]);
    const text = String(name);
    const french = CARD.exec(text);
    if (french) {
      const node = el("span", "card suit-" + french[2], [french[1] + SUITS[french[2]]]);
      node.dataset.card = text;
      node.title = text;
      return node;
    }
    // Cactus Game's cards are kinds ("ask_for_a_card"): show them as words
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

  function slotsSeen(seen) {
    return (seen || []).map((s, i) => [i ? ", " : "", "slot " + s.slot + " ", card(s.card)]);
  }

  function shortJSON(value) {
    const text = JSON.stringify(value);
    return text.length > 160 ? text.slice(0, 157) + "…" : text;
  }

  // ---------------------------------------------------------------- events, per game
  const common = {
    turn: (e) => ["Turn " + e.turn + ": ", player(e.player), " to play"],
    match_over: (e) => [
      "Match over. Ranks: ",
      perSeat(e.ranks, (r) => "#" + r),
      e.scores ? [" · scores: ", perSeat(e.scores)] : "",
    ],
  };

  const describers = {
    cactus: {
      deal: (e) => [
        "Round " + e.round + ": ",
        player(e.dealer),
        " deals, ",
        player(e.starter),
        " starts; " + plural((e.slots && e.slots[0] ? e.slots[0].length : 0), "face-down card") +
          " each",
      ],
      initial_peek: (e) => [player(e.player), " looks at their cards: ", slotsSeen(e.seen)],
      eight_peek: (e) => [player(e.player), " peeks: ", slotsSeen(e.seen)],
      power_peek: (e) => [player(e.player), " peeks: ", slotsSeen(e.seen)],
      draw: (e) => [player(e.player), " draws from the " + (e.source || "stock")],
      draw_skipped: (e) => [player(e.player), " cannot draw: there is no card left"],
      drawn: (e) => [player(e.player), " drew ", card(e.card)],
      take_discard: (e) => [player(e.player), " takes ", card(e.card), " from the discard pile"],
      swap: (e) => [
        player(e.player),
        " puts the " + (e.source === "discard" ? "discard pile's" : "drawn") + " card in slot " +
          e.slot + " and discards ",
        card(e.card),
      ],
      discard: (e) => [player(e.player), " discards ", card(e.card)],
      snap: (e) => [
        player(e.player),
        " snaps slot " + e.slot + ": ",
        card(e.card),
        e.correct ? " — right" : " — wrong",
      ],
      penalty_card: (e) => [player(e.player), " takes a penalty card into slot " + e.slot],
      power: (e) => {
        if (e.power === "peek_other") {
          return [player(e.player), " peeks at ", player(e.target), "'s slot " + e.slot];
        }
        if (e.power === "blind_swap") {
          return [
            player(e.player),
            " swaps their slot " + e.slot + " unseen with ",
            player(e.target),
            "'s slot " + e.other_slot,
          ];
        }
        const slots = Array.isArray(e.slots) ? " on slot " + e.slots.join(", ") : "";
        return [player(e.player), " uses the power " + humanize(e.power) + slots];
      },
      seen: (e) => ["Seen: ", player(e.player), "'s slot " + e.slot + " is ", card(e.card)],
      call: (e) => [player(e.player), " calls Cactus!"],
      reshuffle: (e) => [
        "The discard pile is shuffled into a new stock of " + plural(e.stock, "card"),
      ],
      reveal: (e) =>
        [
          "Cards revealed: ",
          (e.layouts || []).map((layout, seat) => [
            seat ? "; " : "",
            player(seat),
            ": ",
            layout
              .slice()
              .sort((a, b) => a.slot - b.slot)
              .map((s, i) => [i ? " " : "", card(s.card)]),
            e.totals ? " = " + e.totals[seat] : "",
          ]),
        ],
      tas_de_merde: (e) => [player(e.player), " draws ", card(e.card), "; tally " + e.tally],
      round_result: (e) => [
        "Round " + e.round + " over. Totals: ",
        perSeat(e.totals),
        e.caller !== null && e.caller !== undefined ? [" · called by ", player(e.caller)] : "",
        Array.isArray(e.winners)
          ? e.winners.length
            ? [" · won by ", seats(e.winners)]
            : " · no winner"
          : "",
        e.points ? [" · points: ", perSeat(e.points)] : "",
        e.penalties ? [" · penalties: ", perSeat(e.penalties)] : "",
      ],
      turn: common.turn,
      match_over: common.match_over,
    },
    "cactus-game": {
      deal: (e) => [
        "New deal: " + plural((e.hand_sizes || [])[0], "card") + " each, " +
          plural(e.draw_pile, "card") + " in the draw pile; ",
        player(e.first),
        " starts",
        e.target !== undefined && e.target !== null ? "; " + e.target + " points to win" : "",
      ],
      dealt: (e) => [player(e.player), " is dealt ", cards(e.cards)],
      play: (e) => [
        player(e.player),
        " plays ",
        card(e.card),
        e.target !== undefined && e.target !== null ? [" against ", player(e.target)] : "",
        e.named ? [" naming ", card(e.named)] : "",
      ],
      play_set: (e) => [player(e.player), " plays the set ", cards(e.cards)],
      stop: (e) => [
        player(e.player),
        " plays Stop against ",
        player(e.against),
        " (chain of " + e.chain + ")",
      ],
      resolve: (e) => [
        card(e.card),
        " of ",
        player(e.player),
        e.stopped ? " is stopped" : " takes effect",
        e.stops ? " after " + plural(e.stops, "Stop") : "",
      ],
      draw: (e) => [
        player(e.player),
        " draws " + plural(e.count, "card"),
        Array.isArray(e.cards) ? [": ", cards(e.cards)] : "",
      ],
      gain: (e) => [
        player(e.player),
        " gains " + plural(e.count, "point"),
        e.reason ? " (" + humanize(e.reason) + ")" : "",
      ],
      ask: (e) => [
        player(e.player),
        " asks ",
        player(e.from),
        " for ",
        card(e.named),
        e.given ? " and gets it" : ": not given",
      ],
      look: (e) => [
        player(e.player),
        " looks at ",
        player(e.target),
        "'s hand (" + plural(e.count, "card") + ")",
        Array.isArray(e.cards) ? [": ", cards(e.cards)] : "",
      ],
      take: (e) => [
        player(e.player),
        " takes ",
        e.card !== undefined ? card(e.card) : plural(e.count, "card"),
        " from ",
        player(e.from),
      ],
      steal_card: (e) => [
        player(e.player),
        " steals ",
        e.card !== undefined ? card(e.card) : plural(e.count, "card"),
        " from ",
        player(e.from),
      ],
      swap_hands: (e) => [
        player(e.player),
        " swaps the hands of ",
        seats(e.players),
        Array.isArray(e.cards) ? [": the new hand is ", cards(e.cards)] : "",
      ],
      steal_point: (e) => [
        player(e.player),
        " steals " + plural(e.count, "point") + " from ",
        player(e.from),
      ],
      reshuffle: (e) => [
        "The discards are shuffled into a new draw pile of " + plural(e.draw_pile, "card"),
      ],
      game_over: (e) => [
        "Game over: ",
        e.winner !== null && e.winner !== undefined ? [player(e.winner), " wins"] : "no winner",
        e.reason ? " (" + humanize(e.reason) + ")" : "",
        e.points ? [". Points: ", perSeat(e.points)] : "",
      ],
      turn: common.turn,
      match_over: common.match_over,
    },
    president: {
      deal: (e) => [
        "Round " + e.round + ": ",
        player(e.dealer),
        " deals " + plural(e.hand_size, "card") + " each",
        Array.isArray(e.roles) && e.roles.some((r) => r)
          ? [" · roles: ", perSeat(e.roles, (r) => (r ? humanize(r) : "–"))]
          : "",
        e.reversed ? " · order reversed" : "",
      ],
      hand: (e) => [player(e.seat), "'s hand: ", cards(e.cards)],
      leftover: (e) => ["Left over, out of play: ", cards(e.cards)],
      play: (e) => [player(e.seat), " plays ", cards(e.cards)],
      pass: (e) => [player(e.seat), " passes"],
      trick_over: (e) => [
        "Trick won by ",
        player(e.winner),
        e.why ? " (" + (TRICK_ENDS[e.why] || humanize(e.why)) + ")" : "",
        e.leader !== undefined && e.leader !== e.winner ? ["; ", player(e.leader), " leads"] : "",
      ],
      out: (e) => [
        player(e.seat),
        " is out, place " + e.place,
        e.forbidden ? " (finished on a forbidden card)" : "",
      ],
      revolution: (e) => ["Revolution! The order is now ", String(e.order)],
      exchange: (e) => [
        player(e.giver),
        " gives " + plural(e.count, "card") + " to ",
        player(e.receiver),
      ],
      exchange_cards: (e) => [
        player(e.giver),
        " gives ",
        cards(e.cards),
        " to ",
        player(e.receiver),
      ],
      round_over: (e) => [
        "Round " + e.round + " over. Finishing order: ",
        seats(e.order),
        e.roles ? [" · roles: ", perSeat(e.roles, (r) => (r ? humanize(r) : "–"))] : "",
        e.scores ? [" · scores: ", perSeat(e.scores)] : "",
      ],
      turn: (e) => ["Turn: ", player(e.player), " to play"],
      match_over: common.match_over,
    },
  };

  const TRICK_ENDS = { cut: "cut", passes: "everyone else passed" };


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

  function describe(e) {
    const table = describers[game] || {};
    const render = table[e.type] || common[e.type];
    if (render) {
      try {
        return { known: true, parts: render(e) };
      } catch (err) {
        // a field this viewer does not expect: fall back to the raw fields
      }
    }
    return { known: false, parts: [] };
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

  // ---------------------------------------------------------------- decisions
  function boundaries() {
    if (!positions) return null;
    return mode === "all" ? positions.all : (positions.seats || [])[Number(mode)] || null;
  }

  // the steps whose decisions are shown with event ``i``: those taken before it, after the
  // previous event of this perspective
  function stepsAt(i) {
    const bounds = boundaries();
    if (!bounds) return [];
    const found = [];
    const last = i === events.length - 1;
    for (let step = 0; step < bounds.length - 1; step += 1) {
      if (bounds[step] === i || (last && bounds[step] > i)) found.push(step);
    }
    return found;
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

  function latency(ms) {
    const value = Number(ms);
    return (value < 10 ? value.toFixed(2) : value.toFixed(0)) + " ms";
  }

  // a fault's cause in words, as arena.replay.describe_fault writes it
  function causeText(cause) {
    const parts = [];
    if (cause.detail) parts.push(cause.detail);
    if (cause.received !== undefined && cause.excerpt === undefined) {
      parts.push(cause.received + " bytes received");
    }
    if (cause.excerpt) parts.push("answer: " + cause.excerpt);
    if (cause.error && String(cause.detail || "").indexOf(cause.error) < 0) parts.push(cause.error);
    return parts.join(" — ");
  }

  function renderDecisions() {
    decisionsPane.replaceChildren();
    if (!positions) {
      decisionsPane.appendChild(
        el("p", "muted", ["The decisions cannot be placed: this record does not re-simulate."]),
      );
      return;
    }
    const rows = [];
    stepsAt(index).forEach((step) => {
      (decisions[step] || []).forEach((d) => {
        const fault = d.fault
          ? el("span", "fault", [
              "fault: " + d.fault + (d.cause ? " — " + causeText(d.cause) : "") +
                " (default action played)",
            ])
          : null;
        rows.push(
          el("li", "decision" + (d.fault ? " has-fault" : ""), [
            el("span", "muted", ["step " + (step + 1) + " · "]),
            player(d.seat),
            " ",
            el("span", "kind", [d.kind]),
            " → ",
            actionText(d.action),
            d.latency_ms !== undefined && d.latency_ms !== null
              ? el("span", "latency", [" · " + latency(d.latency_ms)])
              : "",
            fault ? [" · ", fault] : "",
            d.memo ? el("q", "memo", [d.memo]) : "",
          ]),
        );
      });
    });
    if (rows.length) {
      decisionsPane.appendChild(el("h3", "", ["Decisions leading to this event"]));
      decisionsPane.appendChild(el("ul", "decision-list", rows));
    }
  }

  // ---------------------------------------------------------------- the view
  function renderLog() {
    log.replaceChildren();
    events.forEach((e, i) => {
      const item = eventNode(e, i, "li", false);
      item.addEventListener("click", () => go(i));
      log.appendChild(item);
    });
  }

  function show() {
    const total = events.length;
    if (total === 0) {
      counter.textContent = "0 / 0";
      currentPane.replaceChildren(el("p", "empty", ["No events in this perspective."]));
    } else {
      index = Math.max(0, Math.min(index, total - 1));
      counter.textContent = index + 1 + " / " + total;
      currentPane.replaceChildren(eventNode(events[index], index, "div", true));
      Array.from(log.children).forEach((item, i) => {
        item.classList.toggle("future", i > index);
        item.classList.toggle("current", i === index);
      });
      const current = log.children[index];
      if (current) {
        const top = current.offsetTop - log.offsetTop;
        if (top < log.scrollTop || top + current.offsetHeight > log.scrollTop + log.clientHeight) {
          log.scrollTop = Math.max(0, top - log.clientHeight / 2);
        }
      }
    }
    buttons.first.disabled = buttons.prev.disabled = index <= 0 || total === 0;
    buttons.next.disabled = buttons.last.disabled = index >= total - 1 || total === 0;
    renderDecisions();
    const hash = "#seat=" + mode + "&event=" + (index + 1);
    if (window.location.hash !== hash) history.replaceState(null, "", hash);
  }

  function go(target) {
    if (target === "first") index = 0;
    else if (target === "prev") index -= 1;
    else if (target === "next") index += 1;
    else if (target === "last") index = events.length - 1;
    else index = Number(target);
    show();
  }

  // Where event ``i`` is in the match: the step that produced it (-1: before any) and
  // how far into that step's events it is; keeps one's place across perspectives.
  function placeOf(i) {
    const bounds = boundaries();
    if (!bounds || events.length === 0) return null;
    if (i < bounds[0]) return { step: -1, offset: i };
    let step = 0;
    while (step + 1 < bounds.length - 1 && bounds[step + 1] <= i) step += 1;
    return { step: step, offset: i - bounds[step] };
  }

  function indexOf(place) {
    const bounds = boundaries();
    if (place.step < 0) return Math.min(place.offset, bounds[0] - 1);
    const count = bounds[place.step + 1] - bounds[place.step];
    return bounds[place.step] + Math.max(0, Math.min(place.offset, count - 1));
  }

  // the full record has every step's decisions; a seat's replay only that seat's own,
  // each with its step
  function decisionTable(which, body) {
    const table = [];
    if (which === "all") {
      (body.steps || []).forEach((step, i) => {
        table[i] = step;
      });
    } else {
      (body.decisions || []).forEach((d) => {
        (table[d.step] = table[d.step] || []).push(d);
      });
    }
    return table;
  }

  async function fetchMode(which) {
    if (loaded[which]) return loaded[which];
    const url = which === "all" ? replayUrl : replayUrl + "?seat=" + encodeURIComponent(which);
    const response = await fetch(url, { headers: { Accept: "application/json" } });
    let body = null;
    try {
      body = await response.json();
    } catch (err) {
      body = null;
    }
    if (!response.ok || !body || !Array.isArray(body.events)) {
      const message = body && body.message ? body.message : "HTTP " + response.status;
      throw new Error(message);
    }
    loaded[which] = body;
    return body;
  }

  async function setMode(which, eventNumber) {
    const place = eventNumber === undefined ? placeOf(index) : null;
    status.hidden = false;
    status.textContent = "Loading…";
    root.setAttribute("aria-busy", "true");
    try {
      const body = await fetchMode(which);
      mode = which;
      events = body.events;
      decisions = decisionTable(which, body);
    } catch (err) {
      status.textContent = "The replay could not be loaded: " + err.message;
      root.removeAttribute("aria-busy");
      return;
    }
    root.querySelectorAll("[data-seat]").forEach((b) => {
      b.setAttribute("aria-pressed", String(b.dataset.seat === mode));
    });
    note.textContent =
      mode === "all"
        ? "Showing every event, public and private."
        : "Showing only what seat " + mode + " (" + (players[Number(mode)] || "?") +
          ") received, and its own decisions.";
    root.dataset.mode = mode;
    renderLog();
    if (eventNumber !== undefined) {
      index = eventNumber - 1;
    } else if (place !== null && boundaries()) {
      index = indexOf(place);
    }
    status.hidden = true;
    root.removeAttribute("aria-busy");
    show();
  }

  // ---------------------------------------------------------------- controls
  Object.entries(buttons).forEach(([name, button]) => {
    button.addEventListener("click", () => go(name));
  });
  root.querySelectorAll("[data-seat]").forEach((button) => {
    button.addEventListener("click", () => setMode(button.dataset.seat));
  });
  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    const target = event.target;
    if (target && target.closest && target.closest("input, textarea, select, [contenteditable]")) {
      return;
    }
    const keys = { ArrowLeft: "prev", ArrowRight: "next", Home: "first", End: "last" };
    const action = keys[event.key];
    if (!action || events.length === 0) return;
    event.preventDefault();
    go(action);
  });

  // #seat=1&event=12 opens that perspective at that event
  const params = new URLSearchParams(window.location.hash.slice(1));
  const startSeat = params.get("seat");
  const startEvent = Number(params.get("event")) || 1;
  const valid = startSeat === "all" || (startSeat !== null && players[Number(startSeat)] !== undefined);
  setMode(valid ? startSeat : "all", startEvent);
})();
