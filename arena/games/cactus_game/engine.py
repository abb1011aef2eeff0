"""Cactus Game, the set-collection game with action cards: rules CG-1..CG-21 of
docs/rules/cactus-game.md.

A match runs through three kinds of request:

``turn`` (the player draws, plays a set or plays an action card with its targets) →
``stop`` windows (every other seat holding a Stop, all at once, CG-17/CG-18) → the
effect → ``take`` (Look and Steal's second decision, CG-12) → back to ``turn`` until the
turn ends by a draw or a gain of Points (CG-4).

Cards are their kind names (``"charlie"``, ``"stop"``...): copies of a kind are
indistinguishable, so a kind is all a physical white card is.  Point cards are counted
(the supply and what each player owns); :meth:`CactusGame.all_cards` lists them as
``"point"`` so that conservation covers them too.

Rulings (where the rules are silent) are marked ``Ruling`` next to the code they shape.
"""

from __future__ import annotations

from collections import _count_elements  # Counter's C loop, without a Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from arena.games import options as opts
from arena.games.base import (
    DEAL_EVENT,
    JSON,
    Action,
    Game,
    OptionsError,
    Outcome,
    Request,
    State,
    competition_ranks,
    first_in_priority,
)

# CG-1: the 90 white cards
CHARACTERS: tuple[str, ...] = ("charlie", "spike", "walter", "joker")
ACTIONS: tuple[str, ...] = (
    "free_point",
    "swap_hands",
    "look_and_steal",
    "draw_three",
    "steal_a_point",
    "ask_for_a_card",
    "steal_a_card",
    "stop",
)
KINDS: tuple[str, ...] = CHARACTERS + ACTIONS
DECK: dict[str, int] = {
    "charlie": 16, "spike": 12, "walter": 5, "joker": 3,
    "free_point": 3, "swap_hands": 3, "look_and_steal": 6, "draw_three": 6,
    "steal_a_point": 6, "ask_for_a_card": 10, "steal_a_card": 10, "stop": 10,
}  # fmt: skip
POINT_CARDS = 30  # CG-2
POINT = "point"  # how all_cards names a Point card
HAND_SIZE = 5  # CG-3
FORCED_DRAW = 3  # CG-6
DRAW_THREE = 3  # CG-13
JOKER = "joker"
SET_SIZE = 3
SET_POINTS: dict[str, int] = {"charlie": 1, "spike": 2, "walter": 3, "joker": 3}  # CG-7
DEFAULT_TARGET: dict[int, int] = {2: 7, 3: 7, 4: 5, 5: 5, 6: 4}  # CG-20

Phase = Literal["turn", "stop", "take", "over"]

# [players][seat] -> the other seats clockwise from the next one, and the turn actions that
# depend only on them, in the order _turn_actions lists them (templates: each request gets
# its own copies, so a caller changing an action changes no other request)
_OTHERS: list[list[tuple[int, ...]]] = [
    [tuple((p + i) % n for i in range(1, n)) for p in range(n)] for n in range(7)
]
_LOOK_ACTIONS: list[list[tuple[Action, ...]]] = [
    [tuple({"type": "play", "card": "look_and_steal", "target": t} for t in others)
     for others in by_seat]
    for by_seat in _OTHERS
]  # fmt: skip
_ASK_ACTIONS: list[list[tuple[Action, ...]]] = [
    [
        tuple(
            {"type": "play", "card": "ask_for_a_card", "target": t, "named": named}
            for t in others
            for named in KINDS
        )
        for others in by_seat
    ]
    for by_seat in _OTHERS
]


@dataclass(frozen=True)
class CactusGameOptions:
    # each option's doc is what the API and the tournament form show; the bounds repeat
    # resolve_options for the schema (tests/test_game_options.py checks that they agree)
    target: int | None = opts.option(  # CG-20: None = 7 for 2-3 players, 5 for 4-5, 4 for 6
        None,
        minimum=1,
        maximum=POINT_CARDS,
        doc="Points that win at once, 1 to 30 (empty: 7 for 2-3 players, 5 for 4-5, 4 for 6).",
    )
    max_turns: int = opts.option(  # CG-21
        400, minimum=1, doc="Turns after which the game ends, ranked by Points owned."
    )


@dataclass
class Chain:
    """An action card waiting for its effect, and the Stops played on it (CG-17/18)."""

    play: dict[str, JSON]  # the public "play" event: player, card and targets
    stops: list[int] = field(default_factory=list)  # seats, in the order they stopped

    @property
    def player(self) -> int:
        return self.play["player"]

    @property
    def top_player(self) -> int:
        """Who played the card the open window is about (the last Stop, else the card)."""
        return self.stops[-1] if self.stops else self.play["player"]


class CactusGameState(State):
    options: CactusGameOptions

    def __init__(self, n_players: int, seed: int, options: CactusGameOptions):
        super().__init__(n_players, seed, options)
        # CG-20: the option, else the booklet's figure for this many players
        self.target = DEFAULT_TARGET[n_players] if options.target is None else options.target
        self.hands: list[list[str]] = [[] for _ in range(n_players)]
        self.draw_pile: list[str] = []
        self.discard: list[str] = []
        self.points = [0] * n_players  # CG-2: face up in front of each player
        self.supply = POINT_CARDS
        self.player = 0  # whose turn it is
        self.turn = 0  # turns begun, the forced draws of CG-6 included (CG-21)
        self.phase: Phase = "turn"
        self.chain: Chain | None = None
        self.window: list[int] = []  # seats asked in the open Stop window, by priority
        self.looked: tuple[int, list[str]] | None = None  # CG-12: (target, hand seen)
        self.this_turn: list[dict[str, JSON]] = []  # public plays of the current turn
        self.winner: int | None = None


class CactusGame(Game):
    id = "cactus-game"
    title = "Cactus Game"
    min_players = 2
    max_players = 6
    presets = {}  # the booklet has no variants; options only

    # -- options -----------------------------------------------------------------------
    def resolve_options(self, options: Mapping[str, JSON] | None) -> CactusGameOptions:
        o = opts.resolve(CactusGameOptions, self.id, self.presets, options)
        if o.target is not None and not 1 <= o.target <= POINT_CARDS:
            # CG-2: nobody can own more than the 30 Point cards
            raise OptionsError(
                f"{self.id} option 'target' must be between 1 and {POINT_CARDS} "
                f"(or null for the player-count default), not {o.target}"
            )
        if o.max_turns < 1:
            raise OptionsError(f"{self.id} option 'max_turns' must be at least 1")
        return o

    # -- the contract ------------------------------------------------------------------
    def new_state(
        self, n_players: int, seed: int, options: Mapping[str, JSON] | None = None
    ) -> CactusGameState:
        self.check_players(n_players)
        state = CactusGameState(n_players, seed, self.resolve_options(options))
        deck = [kind for kind in KINDS for _ in range(DECK[kind])]  # CG-1
        state.rng.shuffle(deck)
        for seat in range(n_players):  # CG-3
            state.hands[seat] = deck[-HAND_SIZE:]
            del deck[-HAND_SIZE:]
        state.draw_pile = deck
        first = state.rng.randrange(n_players)  # CG-3: the seeded "most green" player
        state.emit(
            {
                "type": DEAL_EVENT,
                "first": first,
                "target": state.target,
                "hand_sizes": [len(h) for h in state.hands],
                "draw_pile": len(state.draw_pile),
            }
        )
        for seat in range(n_players):
            state.emit(
                {"type": "dealt", "player": seat, "cards": sorted(state.hands[seat])}, [seat]
            )
        self._begin_turn(state, first)
        return state

    def _requests(self, state: CactusGameState) -> list[Request]:
        phase = state.phase
        if phase == "turn":
            actions = self._turn_actions(state)
            return [Request(state.player, "turn", actions, actions[0])]
        if phase == "stop":
            requests = []
            for seat in state.window:
                actions = [{"type": "pass"}, {"type": "stop"}]
                requests.append(Request(seat, "stop", actions, actions[0]))
            return requests
        if phase == "take":
            assert state.looked is not None
            target = state.looked[0]
            actions = [{"type": "take", "card": k} for k in sorted(set(state.hands[target]))]
            return [Request(state.player, "take", actions, actions[0])]
        return []

    def _turn_actions(self, state: CactusGameState) -> list[Action]:
        p, n, hands = state.player, state.n_players, state.hands
        hand = hands[p]
        count: dict[str, int] = {}
        _count_elements(count, hand)
        actions: list[Action] = [{"type": "draw"}]  # CG-5: always legal, the default
        jokers = count.get(JOKER, 0)
        for character in ("charlie", "spike", "walter"):  # CG-7
            have = count.get(character, 0)
            for used in (3, 2, 1):
                if have >= used and jokers >= SET_SIZE - used:
                    cards = [character] * used + [JOKER] * (SET_SIZE - used)
                    actions.append({"type": "play_set", "cards": cards})
        if jokers >= SET_SIZE:
            actions.append({"type": "play_set", "cards": [JOKER] * SET_SIZE})
        others = _OTHERS[n][p]
        # CG-16: Steal a Card names a player holding a card; CG-12 and CG-15 may name any
        # other player, even one with no card (then nothing is seen, taken or given)
        for kind in ACTIONS:
            if kind not in count:
                continue
            if kind in ("free_point", "draw_three"):  # CG-10, CG-13
                actions.append({"type": "play", "card": kind})
            elif kind == "swap_hands":  # CG-11: any two players, oneself included
                for a in range(n):
                    for b in range(a + 1, n):
                        actions.append({"type": "play", "card": kind, "players": [a, b]})
            elif kind == "look_and_steal":  # CG-12: any other player
                actions.extend(map(dict.copy, _LOOK_ACTIONS[n][p]))
            elif kind == "steal_a_card":  # CG-16: a player holding a card
                for t in others:
                    if hands[t]:
                        actions.append({"type": "play", "card": kind, "target": t})
            elif kind == "steal_a_point":  # CG-14 ruling: only at a player owning a Point
                for t in others:
                    if state.points[t]:
                        actions.append({"type": "play", "card": kind, "target": t})
            elif kind == "ask_for_a_card":  # CG-15: any of the 12 kinds may be named
                # copies of the precomputed Asks: a copy costs half a dict display
                # (3.8 -> 2.1 µs for the 36 Asks of 4 players)
                actions.extend(map(dict.copy, _ASK_ACTIONS[n][p]))
            # CG-19 ruling: a Stop has no use on one's own turn, so it is never offered
        return actions

    def _apply(
        self, state: CactusGameState, requests: list[Request], answers: Mapping[int, Action]
    ) -> None:
        phase = state.phase
        if phase == "turn":
            action = answers[state.player]
            kind = action["type"]
            if kind == "draw":
                self._draw(state, state.player, 1)  # CG-5
                # Ruling: a draw that finds both piles empty still ends the turn, as CG-9
                # ends it for a gain that finds the supply empty
                self._end_turn(state)
            elif kind == "play_set":
                self._play_set(state, action["cards"])
            else:
                self._play_action(state, action)
        elif phase == "stop":
            self._close_window(state, requests, answers)
        elif phase == "take":
            self._take(state, answers[state.player]["card"])

    # -- turns -------------------------------------------------------------------------
    def _begin_turn(self, state: CactusGameState, player: int) -> None:
        n = state.n_players
        while True:
            state.turn += 1
            state.player = player
            state.phase = "turn"
            state.this_turn = []
            state.emit({"type": "turn", "player": player, "turn": state.turn})
            if state.hands[player]:
                return
            # CG-6: an empty hand at the start of the turn draws three, no decision
            self._draw(state, player, FORCED_DRAW, forced=True)
            if self._turns_exhausted(state):
                return
            player = (player + 1) % n

    def _end_turn(self, state: CactusGameState) -> None:
        if not self._turns_exhausted(state):
            self._begin_turn(state, (state.player + 1) % state.n_players)

    def _turns_exhausted(self, state: CactusGameState) -> bool:
        if state.turn >= state.options.max_turns:  # CG-21
            self._finish(state, None)
            return True
        return False

    def _draw(self, state: CactusGameState, seat: int, count: int, forced: bool = False) -> None:
        drawn: list[str] = []
        for _ in range(count):
            if not state.draw_pile:
                if not state.discard:
                    break  # CG-8: both piles empty, the draw gives nothing
                # CG-8: the discard, shuffled, becomes the new draw pile
                state.draw_pile, state.discard = state.discard, []
                state.rng.shuffle(state.draw_pile)
                state.emit({"type": "reshuffle", "draw_pile": len(state.draw_pile)})
            drawn.append(state.draw_pile.pop())
        state.hands[seat].extend(drawn)
        public: dict[str, JSON] = {"type": "draw", "player": seat, "count": len(drawn)}
        if forced:
            public["forced"] = True
        self._emit_split(state, public, {**public, "cards": sorted(drawn)}, (seat,))

    def _gain(self, state: CactusGameState, seat: int, wanted: int, reason: str) -> None:
        """Gain Points from the supply, then the turn ends (CG-4) unless the game did."""
        gained = min(wanted, state.supply)  # CG-9: what is left, possibly nothing
        state.supply -= gained
        state.points[seat] += gained
        state.emit({"type": "gain", "player": seat, "count": gained, "reason": reason})
        if not self._check_win(state, seat):
            self._end_turn(state)

    def _check_win(self, state: CactusGameState, seat: int) -> bool:
        if state.points[seat] >= state.target:  # CG-20: the game ends at once
            self._finish(state, seat)
            return True
        return False

    def _finish(self, state: CactusGameState, winner: int | None) -> None:
        points = state.points
        # CG-20: the winner first, the others by Points; CG-21: everyone by Points
        ranks = competition_ranks([(seat != winner, -points[seat]) for seat in range(len(points))])
        state.phase = "over"
        state.winner = winner
        state.chain = None
        state.looked = None
        reason = "target" if winner is not None else "max_turns"
        state.emit(
            {
                "type": "game_over",
                "winner": winner,
                "reason": reason,
                "points": list(points),
                "ranks": ranks,
            }
        )
        state.result = Outcome(
            ranks,
            list(points),
            [{"winner": winner, "reason": reason, "turns": state.turn, "points": list(points)}],
        )

    # -- sets (CG-7) ---------------------------------------------------------------------
    def _play_set(self, state: CactusGameState, cards: list[str]) -> None:
        p = state.player
        hand = state.hands[p]
        for kind in cards:
            hand.remove(kind)
        state.discard.extend(cards)
        character = cards[0]  # the listing puts the completed character first
        event = {"type": "play_set", "player": p, "cards": list(cards)}
        state.emit(event)
        state.this_turn.append(event)
        # CG-19: a set opens no Stop window; CG-7: gaining ends the turn
        self._gain(state, p, SET_POINTS[character], "set")

    # -- action cards and Stop windows (CG-10..CG-19) -----------------------------------
    def _play_action(self, state: CactusGameState, action: Action) -> None:
        p = state.player
        card = action["card"]
        state.hands[p].remove(card)
        state.discard.append(card)  # face up on the discard, its targets named at once
        event: dict[str, JSON] = {"type": "play", "player": p, "card": card}
        if "players" in action:
            event["players"] = list(action["players"])
        if "target" in action:
            event["target"] = action["target"]
        if "named" in action:
            event["named"] = action["named"]  # CG-15: public, it was said aloud
        state.emit(event)
        state.this_turn.append(event)
        state.chain = Chain(event)
        self._open_window(state)

    def _open_window(self, state: CactusGameState) -> None:
        chain = state.chain
        assert chain is not None
        n, top = state.n_players, chain.top_player
        # CG-17: priority runs clockwise from the seat after the card's player, who may
        # not stop their own card (CG-19); CG-18: in a Stop's window the original player
        # may answer.  Only seats holding a Stop have anything to decide.
        hands = state.hands
        state.window = [s for s in _OTHERS[n][top] if "stop" in hands[s]]
        if state.window:
            state.phase = "stop"
        else:
            self._resolve(state)

    def _close_window(
        self, state: CactusGameState, requests: list[Request], answers: Mapping[int, Action]
    ) -> None:
        chain = state.chain
        assert chain is not None
        # CG-17: requests are in priority order; the first Stop is kept, the others' Stops
        # stay in their hands
        stopper = first_in_priority(requests, answers, "stop")
        if stopper is None:
            self._resolve(state)
            return
        state.hands[stopper].remove("stop")
        state.discard.append("stop")
        event = {
            "type": "stop",
            "player": stopper,
            "card": "stop",
            "against": chain.top_player,
            "chain": len(chain.stops) + 1,
        }
        chain.stops.append(stopper)
        state.emit(event)
        state.this_turn.append(event)
        self._open_window(state)  # CG-18: the Stop opens its own window

    def _resolve(self, state: CactusGameState) -> None:
        chain = state.chain
        assert chain is not None
        state.chain = None
        state.window = []
        state.phase = "turn"
        play = chain.play
        card, p = play["card"], chain.player
        stopped = len(chain.stops) % 2 == 1  # CG-18: an odd chain cancels the card
        state.emit(
            {
                "type": "resolve",
                "player": p,
                "card": card,
                "stopped": stopped,
                "stops": len(chain.stops),
            }
        )
        if stopped:
            return  # CG-10, CG-13, CG-14: a stopped card's turn goes on
        if card == "free_point":  # CG-10
            self._gain(state, p, 1, "free_point")
        elif card == "swap_hands":  # CG-11
            self._swap_hands(state, play["players"][0], play["players"][1])
        elif card == "look_and_steal":  # CG-12
            self._look(state, play["target"])
        elif card == "draw_three":  # CG-13
            self._draw(state, p, DRAW_THREE)
            self._end_turn(state)
        elif card == "steal_a_point":  # CG-14
            self._steal_point(state, play["target"])
        elif card == "ask_for_a_card":  # CG-15
            self._ask(state, play["target"], play["named"])
        elif card == "steal_a_card":  # CG-16
            self._steal_card(state, play["target"])

    def _swap_hands(self, state: CactusGameState, a: int, b: int) -> None:
        hands, p = state.hands, state.player
        hands[a], hands[b] = hands[b], hands[a]  # an empty hand simply changes sides
        sizes = [len(hands[a]), len(hands[b])]
        public: dict[str, JSON] = {
            "type": "swap_hands",
            "player": p,
            "players": [a, b],
            "sizes": sizes,
        }
        # each of the two learns the hand it now holds; nobody else sees a card
        state.emit({**public, "cards": sorted(hands[a])}, (a,))
        state.emit({**public, "cards": sorted(hands[b])}, (b,))
        rest = [s for s in range(state.n_players) if s != a and s != b]
        if rest:
            state.emit(public, rest)

    def _look(self, state: CactusGameState, target: int) -> None:
        p = state.player
        # Ruling: the effect uses the hand as it is when the window closes (the target
        # may have spent Stops meanwhile); an empty hand shows nothing and gives nothing.
        seen = sorted(state.hands[target])
        public: dict[str, JSON] = {
            "type": "look",
            "player": p,
            "target": target,
            "count": len(seen),
        }
        self._emit_split(state, public, {**public, "cards": seen}, (p,))
        if seen:
            state.looked = (target, seen)
            state.phase = "take"  # CG-12: the choice comes only after the window closed

    def _take(self, state: CactusGameState, card: str) -> None:
        assert state.looked is not None
        target = state.looked[0]
        p = state.player
        state.hands[target].remove(card)
        state.hands[p].append(card)
        state.looked = None
        state.phase = "turn"
        public: dict[str, JSON] = {"type": "take", "player": p, "from": target, "count": 1}
        self._emit_split(state, public, {**public, "card": card}, (p, target))

    def _steal_point(self, state: CactusGameState, target: int) -> None:
        p = state.player
        if state.points[target]:  # always true: Points do not move during a window
            state.points[target] -= 1
            state.points[p] += 1
            state.emit({"type": "steal_point", "player": p, "from": target, "count": 1})
            if self._check_win(state, p):
                return
        self._end_turn(state)

    def _ask(self, state: CactusGameState, target: int, named: str) -> None:
        p = state.player
        given = named in state.hands[target]
        event: dict[str, JSON] = {
            "type": "ask",
            "player": p,
            "from": target,
            "named": named,
            "given": given,
        }
        if given:
            state.hands[target].remove(named)
            state.hands[p].append(named)
            event["card"] = named  # CG-15: the kind was named, so the gift is public
        state.emit(event)

    def _steal_card(self, state: CactusGameState, target: int) -> None:
        p = state.player
        victim = state.hands[target]
        public: dict[str, JSON] = {"type": "steal_card", "player": p, "from": target}
        if not victim:  # Ruling: the target spent its last cards on Stops
            state.emit({**public, "count": 0})
            return
        # CG-16: one card at random (the booklet lets the target shuffle first)
        card = victim.pop(state.rng.randrange(len(victim)))
        state.hands[p].append(card)
        public["count"] = 1
        self._emit_split(state, public, {**public, "card": card}, (p, target))

    @staticmethod
    def _emit_split(
        state: CactusGameState,
        public: dict[str, JSON],
        private: dict[str, JSON],
        seats: tuple[int, ...],
    ) -> None:
        """``private`` to ``seats``, ``public`` (no card in it) to everyone else."""
        state.emit(private, seats)
        rest = [s for s in range(state.n_players) if s not in seats]
        if rest:
            state.emit(public, rest)

    # -- views ---------------------------------------------------------------------------
    def view(self, state: CactusGameState, seat: int) -> dict[str, JSON]:
        phase = state.phase
        decision: str | None = None
        if phase == "stop":
            if seat in state.window:
                decision = "stop"
        elif phase != "over" and seat == state.player:
            decision = phase
        view: dict[str, JSON] = {
            "seat": seat,
            "players": state.n_players,
            "target": state.target,
            "max_turns": state.options.max_turns,
            "turn": state.turn,
            "player": state.player,
            "phase": phase,
            "decision": decision,
            "hand": {"cards": sorted(state.hands[seat])},
            "hand_sizes": [len(h) for h in state.hands],
            "points": list(state.points),
            "point_supply": state.supply,
            "draw_pile": len(state.draw_pile),
            "discard": {"cards": list(state.discard)},
            "this_turn": list(state.this_turn),
            "events": state.events_for(seat, state.shown_upto[seat]),
        }
        chain = state.chain
        if chain is not None:
            view["chain"] = {**chain.play, "stops": list(chain.stops)}
        if phase == "take" and seat == state.player and state.looked is not None:
            # the hand it looked at, as it was at that moment (nothing moved since)
            view["looked"] = {"player": state.looked[0], "cards": list(state.looked[1])}
        return view

    def spectator_view(self, state: CactusGameState, reveal: bool = False) -> dict[str, JSON]:
        view = self.view(state, 0)
        del view["events"]
        view.pop("looked", None)  # seat 0's own
        # CG-3: hands are private; the revealed table shows each of them
        view.update(
            seat=None,
            decision=None,
            hand=None,
            hands=[sorted(hand) for hand in state.hands] if reveal else None,
        )
        if reveal and state.phase == "take" and state.looked is not None:
            view["looked"] = {"player": state.looked[0], "cards": list(state.looked[1])}
        return view

    # -- for tests and tools -----------------------------------------------------------
    def all_cards(self, state: CactusGameState) -> list[str]:
        cards = [kind for hand in state.hands for kind in hand]
        cards += state.draw_pile
        cards += state.discard
        cards += [POINT] * (state.supply + sum(state.points))
        return cards


GAME_CLASS = CactusGame
