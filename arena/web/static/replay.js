// The replay viewer: draws the table of a match at every step, from one perspective:
// "all" (every card face up, once the match is over), "public" (what someone at no seat
// may know: the only one of a match being played, unless its organiser opened the
// others) or one seat (exactly what that seat knew at that step, from the engine's own
// view of it).  The frames come from GET /api/matches/<id>/frames, one perspective at a
// time, so a seat's page never holds another seat's cards; a replay file opened with
// `arena view` carries them in the page instead.  Everything is built with textContent
// (no HTML from a record ever reaches the page as markup).
"use strict";

(function () {
  const root = document.getElementById("replay");
  if (!root) return;

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

  // ---------------------------------------------------------------- the table, per game
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
    if (String(seat) === perspective) panel.classList.add("viewer-seat");
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

  function scoreText(view, seat) {
    const s = view.scores || {};
    const parts = [];
    if (s.penalty) parts.push("penalty " + s.penalty[seat]);
    if (s.wins) parts.push(plural(s.wins[seat], "win"));
    if (s.sum_totals) parts.push("totals " + s.sum_totals[seat]);
    if (s.tally) parts.push("tally " + s.tally[seat]);
    if (s.points) parts.push(plural(s.points[seat], "point"));
    return parts.join(" · ");
  }

  const tables = {
    cactus: (view, frame) => {
      const seatsDrawn = (view.layouts || []).map((layout, seat) => {
        const slots = layout.slice().sort((a, b) => a.slot - b.slot);
        const grid = el(
          "div",
          "layout",
          slots.map((s) => {
            const cell = el("div", "slot", [card(s.card), el("span", "slot-id", [String(s.slot)])]);
            cell.dataset.slot = String(s.slot);
            return cell;
          }),
        );
        const parts = [grid];
        if (view.drawn !== null && view.drawn !== undefined && view.to_move === seat) {
          parts.push(el("div", "drawn", ["In hand: ", card(view.drawn)]));
        }
        parts.push(el("div", "muted score", [scoreText(view, seat)]));
        return seatPanel(seat, frame, parts, [
          view.to_move === seat && view.phase !== "over" ? { text: "to play", cls: "to-play" } : null,
          view.dealer === seat ? { text: "dealer" } : null,
          view.called_by === seat ? { text: "called Cactus", cls: "called" } : null,
        ]);
      });
      const discard = view.discard || [];
      const center = el("div", "center", [
        pile("Stock", view.stock),
        pile("Discard", discard.length, discard.length ? discard[discard.length - 1] : null),
        fact("Round", String(view.round)),
        fact("Turn", String(view.turn)),
        fact("Phase", humanize(view.phase || "")),
        view.phase === "snap" ? el("div", "banner", ["Snap window open: anyone may throw a match"]) : "",
        view.called_by !== null && view.called_by !== undefined
          ? el("div", "banner", [player(view.called_by), " called Cactus"])
          : "",
      ]);
      return [center, seatsDrawn];
    },

    "cactus-game": (view, frame) => {
      const seatsDrawn = (view.hand_sizes || []).map((size, seat) => {
        let hand;
        if (Array.isArray(view.hands)) hand = faceUp(view.hands[seat]);
        else if (view.seat === seat && view.hand) hand = faceUp(view.hand.cards);
        else hand = faceDown(size);
        return seatPanel(
          seat,
          frame,
          [hand, el("div", "score", [plural((view.points || [])[seat] || 0, "point")])],
          [
            view.player === seat && view.phase !== "over" ? { text: "to play", cls: "to-play" } : null,
            { text: plural(size, "card") },
          ],
        );
      });
      const discard = (view.discard && view.discard.cards) || [];
      const chain = view.chain
        ? el("div", "banner chain", [
            "Stop chain: ",
            card(view.chain.card),
            typeof view.chain.player === "number" ? [" by ", player(view.chain.player)] : "",
            " · ",
            plural((view.chain.stops || []).length, "Stop"),
            (view.chain.stops || []).length ? [" (", seats(view.chain.stops), ")"] : "",
          ])
        : "";
      const looked = view.looked
        ? el("div", "banner", [player(view.player), " looked at ", player(view.looked.player), "'s hand: ", cards(view.looked.cards)])
        : "";
      const center = el("div", "center", [
        pile("Draw pile", view.draw_pile),
        pile("Discard", discard.length, discard.length ? discard[discard.length - 1] : null),
        fact("Points left", String(view.point_supply)),
        fact("Target", String(view.target)),
        fact("Turn", String(view.turn)),
        fact("Phase", humanize(view.phase || "")),
        chain,
        looked,
        (view.this_turn || []).length
          ? el("div", "banner this-turn", [
              "This turn: ",
              view.this_turn.map((play, i) => {
                const text = describe(play);
                return [i ? " · " : "", text.known ? text.parts : String(play.type)];
              }),
            ])
          : "",
      ]);
      return [center, seatsDrawn];
    },

    president: (view, frame) => {
      // places is the finishing order (PR-8): the seat in each place, first to last, null
      // for a place nobody has taken yet (a forbidden finish takes the last one free)
      const placeOf = (places, seat) =>
        Array.isArray(places) && places.indexOf(seat) >= 0 ? places.indexOf(seat) + 1 : null;
      const finished = (places) => {
        const out = (Array.isArray(places) ? places : [])
          .map((seat, i) => [i + 1, seat])
          .filter((x) => x[1] !== null && x[1] !== undefined);
        if (!out.length) return "";
        const list = el(
          "span",
          "finished",
          out.map(([place, seat], i) => {
            const item = el("span", "finisher", [i ? ", " : "", "#" + place + " ", player(seat)]);
            item.dataset.place = String(place);
            item.dataset.seat = String(seat);
            return item;
          }),
        );
        return fact("Finished", list);
      };
      const trick = view.trick || {};
      const passed = new Set(
        (trick.plays || []).filter((p) => p.type === "pass").map((p) => p.seat),
      );
      const seatsDrawn = (view.hand_sizes || []).map((size, seat) => {
        let hand;
        if (Array.isArray(view.hands)) hand = faceUp(view.hands[seat]);
        else if (view.seat === seat && Array.isArray(view.cards)) hand = faceUp(view.cards);
        else hand = faceDown(size);
        const role = (view.roles || [])[seat];
        const place = placeOf(view.places, seat);
        const exchange = view.seat === seat ? view.exchange : (view.exchanges || [])[seat];
        const parts = [hand, el("div", "muted score", ["score " + (view.scores || [])[seat]])];
        if (exchange && (exchange.gave || exchange.received)) {
          parts.push(
            el("div", "exchange", [
              exchange.gave ? ["gave ", cards(exchange.gave.cards), " "] : "",
              exchange.received ? ["received ", cards(exchange.received.cards)] : "",
            ]),
          );
        }
        return seatPanel(seat, frame, parts, [
          role ? { text: humanize(role), cls: "role" } : null,
          place ? { text: "out #" + place, cls: "place" } : null,
          passed.has(seat) ? { text: "passed", cls: "passed" } : null,
          trick.by === seat ? { text: "leads the trick", cls: "to-play" } : null,
          { text: plural(size, "card") },
        ]);
      });
      const plays = (trick.plays || []).filter((p) => p.type === "play");
      const center = el("div", "center", [
        el("div", "trick", [
          el("span", "pile-label", ["Trick"]),
          plays.length
            ? plays.map((p) => el("span", "play", [player(p.seat), " ", cards(p.cards)]))
            : el("span", "muted", ["empty: a lead is due"]),
        ]),
        fact("Round", String(view.round)),
        fact("Phase", humanize(view.phase || "")),
        view.reversed ? el("div", "banner", ["Revolution in force: the order is reversed"]) : "",
        fact("Order", (view.rank_order || []).join(" ")),
        view.leftover && view.leftover.cards && view.leftover.cards.length
          ? fact("Left over", cards(view.leftover.cards))
          : "",
        finished(view.places),
      ]);
      return [center, seatsDrawn];
    },
  };

  function drawTable(frame) {
    tablePane.replaceChildren();
    const draw = tables[game];
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
  const start = wanted !== null && openPerspectives.indexOf(wanted) >= 0 ? wanted : initial;
  const stepParam = params.get("step");
  const eventParam = params.get("event");
  setPerspective(start, stepParam !== null ? Number(stepParam) || 0 : undefined).then(() => {
    if (stepParam === null && eventParam !== null) {
      const wantedEvent = Number(eventParam) - 1;
      let at = 0;
      while (at + 1 < frames.length && eventStarts[at + 1] <= wantedEvent) at += 1;
      go(at);
    }
  });
})();
