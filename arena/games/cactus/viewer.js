// Cactus in the replay viewer: each seat's layout of cards by slot (with the card in hand
// of the seat to play), the stock, the discard pile and who called Cactus, and the log's
// sentence for each event the engine emits.  Registered with the viewer's core
// (arena/web/static/replay.js), which loads this script on the pages of Cactus matches
// and inlines it in their replay files; the core's header describes the interface.
"use strict";

ArenaViewer.register("cactus", (kit) => {
  const { el, card, player, seats, perSeat, plural, humanize, seatPanel, pile, fact } = kit;

  function slotsSeen(seen) {
    return (seen || []).map((s, i) => [i ? ", " : "", "slot " + s.slot + " ", card(s.card)]);
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

  // the log's sentence for each event type (a type left out, such as match_over, gets
  // the core's sentence, or its raw fields)
  const events = {
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
  };

  // a legal action as a person would say it (the buttons of a person's seat, /play)
  function action(a, view) {
    const discard = view.discard || [];
    const inHand = view.drawn !== null && view.drawn !== undefined ? card(view.drawn) : "it";
    switch (a.type) {
      case "initial_peek":
        return ["Look at your slots " + a.slots.join(" and ")];
      case "draw":
        return ["Draw from the stock"];
      case "take_discard":
        return ["Take ", discard.length ? card(discard[discard.length - 1]) : "the top card",
          " from the discard pile"];  // prettier-ignore
      case "peek":
        return ["Look at your slot " + a.slot];
      case "swap":
        return ["Put ", inHand, " in your slot " + a.slot];
      case "discard":
        return ["Discard ", inHand];
      case "snap":
        return ["Snap your slot " + a.slot];
      case "pass":
        return ["Pass"];
      case "skip":
        return ["Skip the power"];
      case "peek_other":
        return ["Look at ", player(a.player), "'s slot " + a.slot];
      case "blind_swap":
        return ["Swap your slot " + a.slot + " with ", player(a.player), "'s slot " + a.other_slot];
      case "call":
        return ["Call Cactus!"];
      default:
        return null;
    }
  }

  // the table at one step: [the centre, one area per seat]; once the match is over, every
  // layout face up as the round's last reveal showed it (CA-10), when the view has it
  function table(view, frame) {
    let layouts = view.layouts || [];
    if (view.phase === "over") {
      const reveal = (view.events || []).filter((e) => e.type === "reveal").pop();
      if (reveal && Array.isArray(reveal.layouts)) layouts = reveal.layouts;
    }
    const seatsDrawn = layouts.map((layout, seat) => {
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
      view.phase === "snap"
        ? el("div", "banner", ["Snap window open: anyone may throw a match"])
        : "",
      view.called_by !== null && view.called_by !== undefined
        ? el("div", "banner", [player(view.called_by), " called Cactus"])
        : "",
    ]);
    return [center, seatsDrawn];
  }

  return { events, table, action };
});
