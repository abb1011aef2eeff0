// Cactus Game in the replay viewer: each seat's hand (face down unless the perspective
// may see it) and points, the draw and discard piles, the Stop chain and what was played
// this turn, and the log's sentence for each event the engine emits.  Registered with the
// viewer's core (arena/web/static/replay.js), which loads this script on the pages of
// Cactus Game matches and inlines it in their replay files; the core's header describes
// the interface.
"use strict";

ArenaViewer.register("cactus-game", (kit) => {
  const { el, card, cards, player, seats, perSeat, plural, humanize, seatPanel, faceDown,
    faceUp, pile, fact, describe } = kit;

  // the log's sentence for each event type (a type left out, such as match_over, gets
  // the core's sentence, or its raw fields)
  const events = {
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
  };

  // a legal action as a person would say it (the buttons of a person's seat, /play)
  function action(a) {
    switch (a.type) {
      case "draw":
        return ["Draw a card"];
      case "play_set":
        return ["Play the set ", cards(a.cards)];
      case "play":
        return [
          "Play ",
          card(a.card),
          typeof a.target === "number" ? [" at ", player(a.target)] : "",
          Array.isArray(a.players) ? [": ", seats(a.players)] : "",
          a.named ? [", asking for ", card(a.named)] : "",
        ];
      case "pass":
        return ["Let it be"];
      case "stop":
        return ["Play a Stop"];
      case "take":
        return ["Take ", card(a.card)];
      default:
        return null;
    }
  }

  // the table at one step: [the centre, one area per seat]
  function table(view, frame) {
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
          view.player === seat && view.phase !== "over"
            ? { text: "to play", cls: "to-play" }
            : null,
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
      ? el("div", "banner", [
          player(view.player),
          " looked at ",
          player(view.looked.player),
          "'s hand: ",
          cards(view.looked.cards),
        ])
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
  }

  return { events, table, action };
});
