// Président in the replay viewer: each seat's hand, role, place and card exchange, the
// trick on the table, the rank order and who has finished, and the log's sentence for each
// event the engine emits.  Registered with the viewer's core (arena/web/static/replay.js),
// which loads this script on the pages of Président matches and inlines it in their replay
// files; the core's header describes the interface.
"use strict";

ArenaViewer.register("president", (kit) => {
  const { el, cards, player, seats, perSeat, plural, humanize, seatPanel, faceDown,
    faceUp, fact } = kit;

  const TRICK_ENDS = { cut: "cut", passes: "everyone else passed" };

  // the log's sentence for each event type (a type left out, such as match_over, gets
  // the core's sentence, or its raw fields)
  const events = {
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
  };

  // cards of one rank in words: "A", "two 7s", "the black Joker"
  const NUMBERS = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"];
  const JOKERS = { BJ: "black", RJ: "red" };
  function ofRank(rank, count) {
    const many = NUMBERS[count] || String(count);
    if (JOKERS[rank]) {
      return count === 1 ? "the " + JOKERS[rank] + " Joker" : many + " " + JOKERS[rank] + " Jokers";
    }
    return count === 1 ? String(rank) : many + " " + rank + "s";
  }
  const jokers = (n) => (n === 1 ? "a Joker" : (NUMBERS[n] || String(n)) + " Jokers");

  // a legal action as a person would say it (the buttons of a person's seat, /play)
  function action(a) {
    switch (a.type) {
      case "pass":
        return ["Pass"];
      case "play":
        return ["Play " + ofRank(a.rank, a.count) + (a.jokers ? " (with " + jokers(a.jokers) + ")" : "")];
      case "give":
        return ["Give " + (a.ranks.length ? a.ranks.join(" and ") : "nothing")];
      case "run":
        return ["Play a run of " + a.length + " from " + a.rank +
          (a.count > 1 ? ", " + (NUMBERS[a.count] || a.count) + " of each" : "")];  // prettier-ignore
      case "throw":
        return ["Throw " + ofRank(a.rank, a.count)];
      case "coup_d_etat":
      case "guillotine":
        return [(a.type === "guillotine" ? "Guillotine" : "Coup d'état") + ": " +
          ofRank(a.rank, a.count - a.jokers) + " and " + jokers(a.jokers)];  // prettier-ignore
      case "name":
        return [
          "Name ",
          player(a.trou_du_cul),
          " Trou du Cul",
          typeof a.vice_president === "number" ? [" and ", player(a.vice_president), " Vice-Président"] : "",
        ];
      case "putsch":
        return ["Putsch: cancel every exchange"];
      case "lay":
        return ["Lay " + ofRank(a.rank, a.count) + " face down"];
      case "call":
        return ["Call menteur!"];
      default:
        return null;
    }
  }

  // the table at one step: [the centre, one area per seat]
  function table(view, frame) {
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
  }

  return { events, table, action };
});
