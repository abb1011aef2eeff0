"""Cactus, the memory "golf" game: rules CA-1..11, CL-1..8 and PG-1..6 of docs/rules/cactus.md.

Every ruling that changes play is an option (:class:`~arena.games.cactus.options.CactusOptions`);
the presets ``classic`` (French rules) and ``pagat`` (Vancouver rules) are option bundles.
The options live in :mod:`arena.games.cactus.options`, the scoring of rounds and matches in
:mod:`arena.games.cactus.scoring` (mixed into :class:`Cactus`); this module keeps the state
and the turn's state machine, snap windows, powers and views.

A turn runs through phases, each one a request:

``initial_peek`` (PG-1, all seats at once) → ``turn`` (draw, take the discard, or the
passed-on 8) → ``drawn`` / ``taken`` (swap, discard, the classic 8's peek) → ``snap``
windows (all eligible seats at once, CA-8/CA-9) → ``power`` (PG-3) → ``call`` (CA-7) →
the next turn.

Layout slots are stable ids per player (CA-3).  What each seat knows is kept as
``known[seat][owner][slot] = card name`` and cleared for every seat whenever the card at a
position changes without being shown.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field

from arena.games import cards
from arena.games.base import (
    DEAL_EVENT,
    JSON,
    Action,
    Game,
    Request,
    State,
    first_in_priority,
)
from arena.games.cactus.options import (
    DEFAULT_VALUES,
    PAGAT_POWERS,
    POWER_NAMES,
    PRESET_DOCS,
    PRESETS,
    CactusOptions,
    resolve,
)
from arena.games.cactus.scoring import CACTUS_LIMIT, Scoring, _pagat_penalties

# the names other modules import from here (the engine's public face before the split)
__all__ = [
    "CACTUS_LIMIT",
    "DEFAULT_VALUES",
    "LAYOUT_SIZE",
    "PAGAT_POWERS",
    "POWER_NAMES",
    "PRESETS",
    "Cactus",
    "CactusOptions",
    "CactusState",
    "SnapWindow",
    "_pagat_penalties",
]

LAYOUT_SIZE = 4  # CA-3
BOTTOM_ROW = (2, 3)  # CL-1


@dataclass
class SnapWindow:
    """An open snap window (CA-8): the card on top, who put it there, the priority."""

    top: int
    owner: int
    priority: list[int]
    missed: set[int] = field(default_factory=set)  # PG-4: seats that missed on this card


class CactusState(State):
    options: CactusOptions

    def __init__(self, n_players: int, seed: int, options: CactusOptions):
        super().__init__(n_players, seed, options)
        self.n_decks = options.decks or (1 if n_players <= 6 else 2)
        self.value = {c: options.values[cards.rank(c)] for c in cards.deck(self.n_decks)}
        self.names = tuple(cards.name(c) for c in cards.deck(self.n_decks))
        self.layouts: list[dict[int, int]] = [{} for _ in range(n_players)]
        self.next_slot = [LAYOUT_SIZE] * n_players
        self.known: list[list[dict[int, str]]] = _no_knowledge(n_players)
        # Views reuse the layout rows they built, per seat and owner, while both counters
        # stay the same.  layout_version is bumped when every layout changes at once (a
        # deal; a test's set-up), _owner_versions[owner] whenever that owner's layout or
        # what any seat knows of it changes.  Per owner, because one turn mostly changes
        # one layout: a whole-table counter rebuilt the rows of 91% of the views in random
        # play, per owner 30% of the rows are rebuilt; view went from 4.8 to 3.5 us a
        # decision (4 players, classic, process time; with the locked_slots shortcut).
        self.layout_version = 0
        self._owner_versions = [0] * n_players
        # [seat][owner]: (layout_version, owner version, rows) last shown to seat
        self._rows_cache: list[list[tuple[int, int, list[JSON]] | None]] = [
            [None] * n_players for _ in range(n_players)
        ]
        # CL-5: (owner, physical card) of the penalty cards their owner may not throw yet
        self.locked: set[tuple[int, int]] = set()
        self.stock: list[int] = []
        self.discard: list[int] = []
        self.phase = "turn"
        self.round = 0
        self.dealer = 0
        self.starter = 1 % n_players
        self.player = 0  # whose turn it is
        self.turns = 0  # turns begun this round
        self.hand: int | None = None  # the card drawn or taken this turn
        self.hand_from = "stock"
        self.turn_discard: int | None = None  # the card this turn put on the discard
        self.eight_offer: int | None = None  # CL-3: the stock-drawn 8 passed on
        self.eight_offer_to: int | None = None
        self.powers_used: set[int] = set()  # PG-3: per physical card, for the round
        self.window: SnapWindow | None = None
        self.peeking: set[int] = set()  # PG-1: seats still to choose their two cards
        self.caller: int | None = None
        self.call_turn = 0
        self.last_turns: set[int] = set()
        # match scoring
        self.wins = [0] * n_players
        self.sum_totals = [0] * n_players
        self.tally = [0] * n_players
        self.has_drawn_tally = [False] * n_players
        self.points = [0] * n_players
        self.penalty = [0] * n_players
        self.round_results: list[dict[str, JSON]] = []


class Cactus(Scoring, Game):
    id = "cactus"
    title = "Cactus"
    min_players = 2
    max_players = 8
    presets = PRESETS
    preset_docs = PRESET_DOCS
    card_vocabulary = frozenset(cards.NAMES)

    # -- options -----------------------------------------------------------------------
    def resolve_options(self, options: Mapping[str, JSON] | None) -> CactusOptions:
        return resolve(self.id, options)

    # -- the contract ------------------------------------------------------------------
    def new_state(
        self, n_players: int, seed: int, options: Mapping[str, JSON] | None = None
    ) -> CactusState:
        self.check_players(n_players)
        state = CactusState(n_players, seed, self.resolve_options(options))
        self._start_round(state)
        return state

    def _requests(self, state: CactusState) -> list[Request]:
        phase, p = state.phase, state.player
        if phase == "turn":
            return [self._turn_request(state)]
        if phase == "drawn":
            slots = list(state.layouts[p])
            actions: list[Action] = [{"type": "swap", "slot": s} for s in slots]
            actions.append({"type": "discard"})
            if self._eight_power_available(state):
                actions += [{"type": "peek", "slot": s} for s in slots]  # CL-2
            return [Request(p, "drawn", actions, {"type": "discard"})]
        if phase == "taken":
            actions = [{"type": "swap", "slot": s} for s in state.layouts[p]]
            return [Request(p, "taken", actions, actions[0])]
        if phase == "snap":
            return self._snap_requests(state)
        if phase == "power":
            actions = [{"type": "skip"}, *self._power_actions(state)]
            return [Request(p, "power", actions, actions[0])]
        if phase == "call":
            seats = [p] if state.options.call == "end_of_turn" else _clockwise(p, state.n_players)
            call_actions: list[Action] = [{"type": "pass"}, {"type": "call"}]
            return [Request(s, "call", call_actions, call_actions[0]) for s in seats]
        if phase == "initial_peek":
            requests = []
            for s in sorted(state.peeking):
                actions = [
                    {"type": "initial_peek", "slots": list(pair)}
                    for pair in itertools.combinations(state.layouts[s], 2)
                ]
                requests.append(Request(s, "initial_peek", actions, actions[0]))
            return requests
        raise AssertionError(f"unknown phase {phase}")

    def _turn_request(self, state: CactusState) -> Request:
        p = state.player
        actions: list[Action] = [{"type": "draw"}]  # CA-5; CA-4 skips it if no card
        if state.discard and state.layouts[p]:
            actions.append({"type": "take_discard"})  # CA-5, PG-2
        if self._eight_offered(state):
            actions += [{"type": "peek", "slot": s} for s in state.layouts[p]]  # CL-3
        return Request(p, "turn", actions, actions[0])

    def _snap_requests(self, state: CactusState) -> list[Request]:
        window = state.window
        assert window is not None
        requests = []
        for seat in window.priority:
            slots = self._throwable(state, seat, window)
            if slots:
                actions: list[Action] = [{"type": "pass"}]
                actions += [{"type": "snap", "slot": s} for s in slots]
                requests.append(Request(seat, "snap", actions, actions[0]))
        return requests

    def _throwable(self, state: CactusState, seat: int, window: SnapWindow) -> list[int]:
        if seat in window.missed:
            return []
        locked = state.locked
        if not locked:  # the common case: no CL-5 penalty card waits, every slot may go
            return list(state.layouts[seat])
        return [s for s, card in state.layouts[seat].items() if (seat, card) not in locked]

    def _anyone_can_throw(self, state: CactusState, window: SnapWindow) -> bool:
        """Whether _throwable is non-empty for some seat of the window, without building
        the lists (every discard asks this).  With the shortcut of _throwable: the engine
        went from 4.6 to 4.5 us a decision in classic, 5.8 to 5.4 in pagat (4 players,
        random play, process time)."""
        locked, layouts, missed = state.locked, state.layouts, window.missed
        for seat in window.priority:
            if seat in missed:
                continue
            if not locked:
                if layouts[seat]:
                    return True
            elif any((seat, card) not in locked for card in layouts[seat].values()):
                return True
        return False

    def _apply(
        self, state: CactusState, requests: list[Request], answers: Mapping[int, Action]
    ) -> None:
        phase = state.phase
        if phase == "snap":
            self._resolve_snap(state, requests, answers)
        elif phase == "call":
            self._resolve_call(state, requests, answers)
        elif phase == "initial_peek":
            for seat, action in answers.items():
                self._show_own(state, seat, action["slots"], "initial_peek")
            state.peeking.clear()
            self._begin_turn(state, state.starter)
        else:
            action = answers[state.player]
            getattr(self, f"_{phase}_{action['type']}")(state, action)

    # -- turn actions ------------------------------------------------------------------
    def _turn_draw(self, state: CactusState, action: Action) -> None:
        p = state.player
        state.eight_offer = state.eight_offer_to = None  # CL-3: the offer lapses
        card = self._draw_from_stock(state)
        if card is None:  # CA-4: no card can be had; the draw is skipped
            state.emit({"type": "draw_skipped", "player": p})
            self._after_turn(state)
            return
        state.hand, state.hand_from = card, "stock"
        state.emit({"type": "draw", "player": p, "source": "stock"})
        state.emit({"type": "drawn", "player": p, "card": cards.name(card)}, to=(p,))
        state.phase = "drawn"

    def _turn_take_discard(self, state: CactusState, action: Action) -> None:
        p = state.player
        state.eight_offer = state.eight_offer_to = None
        card = state.discard.pop()
        state.hand, state.hand_from = card, "discard"
        state.emit({"type": "take_discard", "player": p, "card": cards.name(card)})
        state.phase = "taken"

    def _turn_peek(self, state: CactusState, action: Action) -> None:
        # CL-3: the passed-on 8 stays on the discard; the turn goes on as usual
        state.eight_offer = state.eight_offer_to = None
        self._show_own(state, state.player, [action["slot"]], "eight_peek")

    def _drawn_swap(self, state: CactusState, action: Action) -> None:
        self._swap_in(state, action["slot"])

    _taken_swap = _drawn_swap

    def _drawn_discard(self, state: CactusState, action: Action) -> None:
        p, card = state.player, state.hand
        assert card is not None
        state.hand = None
        state.emit({"type": "discard", "player": p, "card": cards.name(card)})
        if state.options.passed_on_eight and self._is_powered_eight(state, card):
            state.eight_offer = card  # CL-3: unused, it passes on to the next player
        self._turn_discards(state, card)

    def _drawn_peek(self, state: CactusState, action: Action) -> None:
        # CL-2: peek with a stock-drawn 8, then the 8 must go to the discard
        p, card = state.player, state.hand
        assert card is not None
        self._show_own(state, p, [action["slot"]], "eight_peek")
        state.hand = None
        state.emit({"type": "discard", "player": p, "card": cards.name(card)})
        self._turn_discards(state, card)

    def _swap_in(self, state: CactusState, slot: int) -> None:
        p, card = state.player, state.hand
        assert card is not None
        old = state.layouts[p][slot]
        state.layouts[p][slot] = card
        state.hand = None
        self._forget(state, p, slot)
        if state.hand_from == "discard":
            for known in state.known:  # everybody saw the discard card go there
                known[p][slot] = state.names[card]
        else:
            state.known[p][p][slot] = state.names[card]
        state.emit(
            {
                "type": "swap",
                "player": p,
                "slot": slot,
                "source": state.hand_from,
                "card": cards.name(old),
            }
        )
        self._turn_discards(state, old)

    def _turn_discards(self, state: CactusState, card: int) -> None:
        state.discard.append(card)
        state.turn_discard = card
        self._open_window(state, card, state.player, set())

    # -- snaps (CA-8, CA-9, CL-4, CL-5, PG-4) --------------------------------------------
    def _open_window(self, state: CactusState, top: int, owner: int, missed: set[int]) -> None:
        n = state.n_players
        priority = [(owner + 1 + i) % n for i in range(n)]  # CA-9: the owner last
        if state.options.reaction_priority == "random":
            state.rng.shuffle(priority)
        window = SnapWindow(top, owner, priority, missed)
        if self._anyone_can_throw(state, window):
            state.window = window
            state.phase = "snap"
        else:
            state.window = None
            self._after_windows(state)

    def _resolve_snap(
        self, state: CactusState, requests: list[Request], answers: Mapping[int, Action]
    ) -> None:
        window = state.window
        assert window is not None
        # CA-9, CL-4: one throw per window, the first in priority order
        thrower = first_in_priority(requests, answers, "snap")
        if thrower is None:
            state.window = None
            self._after_windows(state)
            return
        slot = answers[thrower]["slot"]
        card = state.layouts[thrower][slot]
        right = cards.rank(card) == cards.rank(window.top)
        state.emit(
            {
                "type": "snap",
                "player": thrower,
                "slot": slot,
                "card": cards.name(card),
                "correct": right,
            }
        )
        if right:
            del state.layouts[thrower][slot]
            self._forget(state, thrower, slot)
            state.discard.append(card)
            state.eight_offer = None  # CL-3: a snap covered the 8
            if state.options.snap_chain:  # CL-4: each thrown card opens a window
                self._open_window(state, card, thrower, set())
            else:  # PG-4: one throw per discarded card, and it lands without a window
                state.window = None
                self._after_windows(state)
        elif state.options.wrong_snap == "stays":
            # CL-5: the wrong card stays on the discard, a penalty card takes its slot
            del state.layouts[thrower][slot]
            self._forget(state, thrower, slot)
            state.discard.append(card)
            state.eight_offer = None
            self._penalise(state, thrower, first_slot=slot)
            if state.options.snap_chain:  # CL-5: a window on the wrong card's rank
                self._open_window(state, card, thrower, set())
            else:  # CA-8: without the chain a thrown card opens no window, a wrong one neither
                state.window = None
                self._after_windows(state)
        else:
            # PG-4: the card goes back, seen by all; two unseen cards in new slots
            for known in state.known:
                known[thrower][slot] = state.names[card]
            state._owner_versions[thrower] += 1
            self._penalise(state, thrower, first_slot=None)
            if state.options.snap_after_miss:
                self._open_window(state, window.top, window.owner, window.missed | {thrower})
            else:
                state.window = None
                self._after_windows(state)

    def _penalise(self, state: CactusState, seat: int, first_slot: int | None) -> None:
        for i in range(state.options.penalty_cards):
            card = self._draw_from_stock(state)
            if card is None:  # CA-4: no penalty card when none can be had
                break
            if i == 0 and first_slot is not None:
                slot = first_slot
            else:
                slot = state.next_slot[seat]
                state.next_slot[seat] += 1
            state.layouts[seat][slot] = card
            state._owner_versions[seat] += 1
            state.locked.add((seat, card))  # CL-5: not throwable before its owner's next turn
            state.emit({"type": "penalty_card", "player": seat, "slot": slot})

    def _after_windows(self, state: CactusState) -> None:
        if self._power_available(state):
            state.phase = "power"
        else:
            self._after_turn(state)

    def _power_available(self, state: CactusState) -> bool:
        """Whether _power_actions would offer anything, without building the actions."""
        card = state.turn_discard
        if card is None or card in state.powers_used:
            return False
        power = state.options.powers.get(cards.rank(card))
        p, layouts = state.player, state.layouts
        others = any(layouts[q] for q in range(state.n_players) if q != p)
        if power == "peek":
            return bool(layouts[p])
        if power == "peek_other":
            return others
        return power == "blind_swap" and bool(layouts[p]) and others

    # -- powers (PG-3) -------------------------------------------------------------------
    def _power_actions(self, state: CactusState) -> list[Action]:
        card = state.turn_discard
        if card is None or card in state.powers_used:
            return []
        power = state.options.powers.get(cards.rank(card))
        p = state.player
        own = list(state.layouts[p])
        if power == "peek":
            return [{"type": "peek", "slot": s} for s in own]
        others = [(q, s) for q in _clockwise(p, state.n_players)[1:] for s in state.layouts[q]]
        if power == "peek_other":
            return [{"type": "peek_other", "player": q, "slot": s} for q, s in others]
        if power == "blind_swap":
            return [
                {"type": "blind_swap", "slot": s, "player": q, "other_slot": t}
                for s in own
                for q, t in others
            ]
        return []

    def _power_skip(self, state: CactusState, action: Action) -> None:
        self._after_turn(state)

    def _power_peek(self, state: CactusState, action: Action) -> None:
        self._use_power(state)
        self._show_own(state, state.player, [action["slot"]], "power_peek")
        self._after_turn(state)

    def _power_peek_other(self, state: CactusState, action: Action) -> None:
        self._use_power(state)
        p, q, slot = state.player, action["player"], action["slot"]
        card = state.layouts[q][slot]
        state.known[p][q][slot] = state.names[card]
        state._owner_versions[q] += 1
        state.emit({"type": "power", "power": "peek_other", "player": p, "target": q, "slot": slot})
        state.emit({"type": "seen", "player": q, "slot": slot, "card": cards.name(card)}, to=(p,))
        self._after_turn(state)

    def _power_blind_swap(self, state: CactusState, action: Action) -> None:
        self._use_power(state)
        p, slot, q, other = state.player, action["slot"], action["player"], action["other_slot"]
        mine, theirs = state.layouts[p], state.layouts[q]
        mine[slot], theirs[other] = theirs[other], mine[slot]
        self._forget(state, p, slot)  # nobody saw the cards: both become unknown
        self._forget(state, q, other)
        state.emit(
            {
                "type": "power",
                "power": "blind_swap",
                "player": p,
                "slot": slot,
                "target": q,
                "other_slot": other,
            }
        )
        self._after_turn(state)

    def _use_power(self, state: CactusState) -> None:
        assert state.turn_discard is not None
        state.powers_used.add(state.turn_discard)

    # -- calling and the end of a turn (CA-7) -------------------------------------------
    def _after_turn(self, state: CactusState) -> None:
        if state.caller is None:
            state.phase = "call"
        else:
            self._next_turn(state)

    def _resolve_call(
        self, state: CactusState, requests: list[Request], answers: Mapping[int, Action]
    ) -> None:
        caller = first_in_priority(requests, answers, "call")
        if caller is not None:
            state.caller = caller
            state.call_turn = state.turns
            state.last_turns = set(range(state.n_players)) - {caller}
            state.emit({"type": "call", "player": caller})
        self._next_turn(state)

    def _next_turn(self, state: CactusState) -> None:
        p = state.player
        if state.caller is not None:
            if state.turns > state.call_turn:
                state.last_turns.discard(p)  # that was p's last turn
            if not state.last_turns:
                self._end_round(state)
                return
            # with call "any_time" p may not have played its last turn yet
            order = _clockwise((p + 1) % state.n_players, state.n_players)
            nxt = next(s for s in order if s in state.last_turns)
        elif state.turns >= state.options.max_turns:
            self._end_round(state)  # ruling: the round is capped, nobody called
            return
        else:
            nxt = (p + 1) % state.n_players
        self._begin_turn(state, nxt)

    def _begin_turn(self, state: CactusState, player: int) -> None:
        state.player = player
        state.turns += 1
        state.phase = "turn"
        state.hand = None
        state.turn_discard = None
        # CL-5: a penalty card may be thrown once its owner's next turn has begun (the French
        # rules: "il doit attendre le tour suivant"); other seats' penalty cards stay locked
        state.locked = {(owner, card) for owner, card in state.locked if owner != player}
        state.window = None
        # CL-3: the offer goes to this player if the passed-on 8 is still on top
        offer = state.eight_offer
        state.eight_offer = state.eight_offer_to = None
        if offer is not None and state.discard[-1:] == [offer] and state.layouts[player]:
            state.eight_offer, state.eight_offer_to = offer, player
        state.emit({"type": "turn", "player": player, "turn": state.turns})

    # -- rounds ---------------------------------------------------------------------------
    def _start_round(self, state: CactusState) -> None:
        n = state.n_players
        state.round += 1
        deck = cards.deck(state.n_decks)
        state.rng.shuffle(deck)
        state.stock = deck
        state.discard = []
        state.layouts = [{} for _ in range(n)]
        state.layout_version += 1
        state.next_slot = [LAYOUT_SIZE] * n
        state.known = _no_knowledge(n)
        state.locked.clear()
        state.powers_used.clear()
        state.caller = None
        state.last_turns = set()
        state.turns = 0
        state.eight_offer = state.eight_offer_to = None
        for slot in range(LAYOUT_SIZE):  # CA-3: one card at a time from the dealer's left
            for i in range(n):
                state.layouts[(state.dealer + 1 + i) % n][slot] = state.stock.pop()
        state.emit(
            {
                "type": DEAL_EVENT,
                "round": state.round,
                "dealer": state.dealer,
                "starter": state.starter,
                "slots": [list(layout) for layout in state.layouts],
            }
        )
        if state.options.initial_peek == "bottom_row":  # CL-1
            for seat in range(n):
                self._show_own(state, seat, list(BOTTOM_ROW), "initial_peek")
            self._begin_turn(state, state.starter)
        else:  # PG-1: every seat chooses its two cards, all at once
            state.phase = "initial_peek"
            state.peeking = set(range(n))

    # -- helpers ---------------------------------------------------------------------------
    def _draw_from_stock(self, state: CactusState) -> int | None:
        if not state.stock:
            if len(state.discard) <= 1:
                return None
            # CA-4: the discard except its top card becomes the new stock
            top = state.discard.pop()
            state.stock, state.discard = state.discard, [top]
            state.rng.shuffle(state.stock)
            state.emit({"type": "reshuffle", "stock": len(state.stock)})
        return state.stock.pop()

    def _show_own(self, state: CactusState, seat: int, slots: list[int], why: str) -> None:
        shown = []
        for slot in slots:
            card = state.layouts[seat][slot]
            state.known[seat][seat][slot] = state.names[card]
            shown.append({"slot": slot, "card": cards.name(card)})
        state._owner_versions[seat] += 1
        if why != "initial_peek":
            state.emit({"type": "power", "power": why, "player": seat, "slots": slots})
        state.emit({"type": why, "player": seat, "seen": shown}, to=(seat,))

    def _forget(self, state: CactusState, owner: int, slot: int) -> None:
        """The card at (owner, slot) changed unseen: nobody knows it any more."""
        state._owner_versions[owner] += 1
        for known in state.known:
            known[owner].pop(slot, None)

    def _is_powered_eight(self, state: CactusState, card: int) -> bool:
        """CL-2: an 8 just drawn from the stock has a power, each time it is drawn (unlike
        PG-3's powers, classic tracks none per physical card)."""
        return state.options.eight_power and state.hand_from == "stock" and cards.rank(card) == "8"

    def _eight_power_available(self, state: CactusState) -> bool:
        return (
            state.hand is not None
            and self._is_powered_eight(state, state.hand)
            and bool(state.layouts[state.player])
        )

    def _eight_offered(self, state: CactusState) -> bool:
        return (
            state.eight_offer_to == state.player
            and state.eight_offer is not None
            and bool(state.discard)
            and state.discard[-1] == state.eight_offer
        )

    # -- views -------------------------------------------------------------------------------
    def view(self, state: CactusState, seat: int) -> dict[str, JSON]:
        names = state.names
        layouts = self._cached_rows(state, seat)
        decision = None
        for r in self.pending(state):
            if r.seat == seat:
                decision = r.kind
                break
        view: dict[str, JSON] = {
            "game": self.id,
            "seat": seat,
            "players": state.n_players,
            "round": state.round,
            "turn": state.turns,
            "dealer": state.dealer,
            "to_move": state.player,
            "phase": state.phase,
            "decision": decision,
            "layouts": layouts,
            "discard": [names[c] for c in state.discard],
            "stock": len(state.stock),
            "drawn": None,
            "called_by": state.caller,
            "values": state.options.values,
            "scores": self._scores(state),
            "events": state.events_for(seat, state.shown_upto[seat]),
        }
        if seat == state.player and state.hand is not None:
            view["drawn"] = names[state.hand]
        if decision == "snap":
            locked = state.locked  # mostly empty: no CL-5 penalty card waits
            view["locked_slots"] = (
                [s for s, card in state.layouts[seat].items() if (seat, card) in locked]
                if locked
                else []
            )
        elif decision == "power" and state.turn_discard is not None:
            view["power"] = state.options.powers[cards.rank(state.turn_discard)]
        elif decision == "turn" and self._eight_offered(state):
            view["eight_offer"] = True
        return view

    def spectator_view(self, state: CactusState, reveal: bool = False) -> dict[str, JSON]:
        names = state.names
        view = self.view(state, 0)
        for private in ("events", "locked_slots", "power", "eight_offer"):  # seat 0's own
            view.pop(private, None)
        view.update(
            seat=None,
            decision=None,
            # CA-3: every layout card lies face down; the revealed table shows them all
            layouts=[
                [
                    {"slot": slot, "card": names[card] if reveal else None}
                    for slot, card in lay.items()
                ]
                for lay in state.layouts
            ],
            drawn=names[state.hand] if reveal and state.hand is not None else None,
        )
        return view

    @staticmethod
    def _cached_rows(state: CactusState, seat: int) -> list[JSON]:
        """What _layout_rows gives, each owner's rows reused while unchanged (see
        CactusState._owner_versions)."""
        cache = state._rows_cache[seat]
        version, owner_versions = state.layout_version, state._owner_versions
        known = state.known[seat]
        layouts = []
        for owner, layout in enumerate(state.layouts):
            cached = cache[owner]
            if cached is None or cached[0] != version or cached[1] != owner_versions[owner]:
                get = known[owner].get
                rows = [{"slot": slot, "card": get(slot)} for slot in layout]
                cached = cache[owner] = (version, owner_versions[owner], rows)
            layouts.append(cached[2])
        return layouts

    @staticmethod
    def _layout_rows(state: CactusState, seat: int) -> list[JSON]:
        """Every layout's rows as ``seat`` sees them, built afresh."""
        return [
            [{"slot": slot, "card": get(slot)} for slot in layout]
            for layout, get in zip(state.layouts, [k.get for k in state.known[seat]], strict=True)
        ]

    def all_cards(self, state: CactusState) -> list[int]:
        found = [*state.stock, *state.discard]
        for layout in state.layouts:
            found.extend(layout.values())
        if state.hand is not None:
            found.append(state.hand)
        return found


def _no_knowledge(n: int) -> list[list[dict[int, str]]]:
    return [[{} for _ in range(n)] for _ in range(n)]


def _clockwise(start: int, n: int) -> list[int]:
    """Seats from ``start`` on, clockwise, ``start`` first."""
    return [(start + i) % n for i in range(n)]
