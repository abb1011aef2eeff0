"""Président-Menteur (PV-15): a turn's play or run is an announcement whose cards are laid
face down, one rank at a time; every other player holding cards may then call "menteur!",
and whoever was wrong picks up the trick.  Mixed into :class:`President`, whose play flow
(``_take``, ``_settle``, ``_revolution``, ``_forbidden``, ``_leave``, ``_end_trick``,
``_end_round``, ``_standing``) it uses.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from arena.games.base import JSON, Action, Request, first_in_priority
from arena.games.president.actions import lay_action
from arena.games.president.state import PresidentState

# PV-15 ruling: a safety cap on announcements in one round, this many per card dealt (cards
# go back to hands, so two bots that always lie and always call could play for ever; every
# announcement lays a card at least); the round then ends as it stands
MENTEUR_PLAYS_PER_CARD = 2


class Menteur:
    """The announcement, the cards laid for it, the call and its outcome."""

    def _announce(self, state: PresidentState, seat: int, action: Action) -> None:
        """The announcement stays the seat's own until its cards are laid face down."""
        state.announcing = (seat, action, [])
        state.phase = "lay"
        state.announcements += 1

    def _claim(self, state: PresidentState, action: Action) -> tuple[Counter[int], int]:
        """The natural cards by rank (a Joker alone by its own rank) and the wild Jokers
        that an announcement says were laid."""
        spec = state.spec
        r = spec.rank_index[action["rank"]]
        count = action["count"]
        if action["type"] == "run":
            order, low = spec.order[state.reversed], spec.pos[state.reversed][r]
            return Counter({order[i]: count for i in range(low, low + action["length"])}), 0
        jokers = action.get("jokers", 0)
        return Counter({r: count - jokers}), jokers

    def _lay_request(self, state: PresidentState) -> Request:
        """Cards of one rank at a time, face down; the default lays the announced cards
        while the hand has them (an honest play), else the weakest card."""
        assert state.announcing is not None
        seat, action, laid = state.announcing
        spec = state.spec
        counts = state.counts[seat]
        names = spec.rank_names
        left = action["count"] * action.get("length", 1) - len(laid)
        view_order = spec.view_order[state.reversed]
        legal = [
            lay_action(names[r], k) for r in view_order for k in range(1, min(counts[r], left) + 1)
        ]
        claim, jokers = self._claim(state, action)
        laid_ranks = Counter(spec.rank_of[c] for c in laid)
        still = claim - laid_ranks
        n = spec.n_ranks
        wild = jokers - laid_ranks[n] - laid_ranks[n + 1]
        default = legal[0]
        for r in view_order:
            want = still[r] if r < n or not jokers else wild
            if want > 0 and counts[r]:
                default = lay_action(names[r], min(want, counts[r], left))
                break
        return Request(seat, "lay", legal, default)

    def _lay(self, state: PresidentState, seat: int, r: int, k: int) -> None:
        assert state.announcing is not None
        _, action, laid = state.announcing
        spec = state.spec
        cards_laid = self._take(state, seat, r, k, 0)
        laid = laid + cards_laid
        down = state.down[seat] + cards_laid
        state.down[seat] = down
        state.down_view[seat] = {"cards": [spec.names[c] for c in down]}
        state.pile += cards_laid
        state.trick_cards += cards_laid
        state.played_view = {"cards": [], "face_down": len(state.pile)}
        if len(laid) < action["count"] * action.get("length", 1):
            state.announcing = (seat, action, laid)
            return
        state.announcing = None
        # the announced rank and count are public, the cards are the player's own
        announce: dict[str, JSON] = {"type": "announce", "seat": seat}
        announce.update((key, value) for key, value in action.items() if key != "type")
        state.emit(announce)
        state.emit({"type": "laid", "seat": seat, "cards": [spec.names[c] for c in laid]}, [seat])
        state.trick = [*state.trick, announce]
        state.announced = (seat, action, laid)
        state.announced_view = announce
        # Wikilivres: "n'importe quel joueur ayant encore des cartes peut annoncer « menteur »"
        callers = []
        s = seat
        for _ in range(state.n_players - 1):
            s = state.after[s]
            if state.active[s] and state.sizes[s]:
                callers.append(s)
        state.window = callers
        state.phase = "call"
        state.turn = None
        if not callers:  # (never: another player in the round holds cards) nobody may call
            self._resolve_call(state, [], {})

    def _resolve_call(
        self, state: PresidentState, requests: list[Request], answers: Mapping[int, Action]
    ) -> None:
        caller = first_in_priority(requests, answers, "call")
        assert state.announced is not None
        seat, action, laid = state.announced
        state.announced = None
        state.announced_view = None
        state.phase = "play"
        state.window = []
        spec = state.spec
        r = spec.rank_index[action["rank"]]
        count, jokers, length = action["count"], action.get("jokers", 0), action.get("length", 1)
        if caller is None:  # the announcement stands as the play it claims
            self._settle(state, seat, r, count, jokers, length)
        else:
            self._call(state, caller, seat, action, laid)
        if state.phase == "play" and state.announcements >= state.max_announcements:
            # ruling: the round is cut short, ranked as it stands
            self._end_round(state, self._standing(state, seat, roles=False), "menteur_cap")

    def _call(
        self, state: PresidentState, caller: int, seat: int, action: Action, laid: list[int]
    ) -> None:
        """Wikilivres: the last cards announced are turned over; if they match the
        announcement the caller picks up the whole pile, else the liar does; whoever was
        right leads.  Ruling: the pile is the trick's (PV-15), the trick is over, and a true
        announcement keeps its own effects (a revolution, going out)."""
        spec = state.spec
        claim, jokers = self._claim(state, action)
        got = Counter(spec.rank_of[c] for c in laid)
        n = spec.n_ranks
        wild = got.pop(n, 0) + got.pop(n + 1, 0) if jokers else 0
        honest = wild == jokers and got == claim
        state.emit(
            {
                "type": "menteur",
                "caller": caller,
                "seat": seat,
                "cards": [spec.names[c] for c in laid],
                "lied": not honest,
            }
        )
        loser, winner = (caller, seat) if honest else (seat, caller)
        picked = state.trick_cards
        state.trick_cards = []
        kept = len(state.pile) - len(picked)
        assert state.pile[kept:] == picked, "the trick's cards are the top of the pile"
        state.pile = state.pile[:kept]
        state.played_view = {"cards": [], "face_down": kept}
        for phys in picked:
            state._take_into(loser, phys)
        hand = state.hands[loser]
        for rank in hand:
            rank.sort()
        sizes = state.sizes[:]
        sizes[loser] += len(picked)
        state.sizes = sizes
        state.refresh_hand(loser)
        public: dict[str, JSON] = {"type": "pick_up", "seat": loser, "count": len(picked)}
        state.emit({**public, "cards": [spec.names[c] for c in picked]}, [loser])
        others = [s for s in range(state.n_players) if s != loser]
        state.emit(public, others)
        if honest:
            r = spec.rank_index[action["rank"]]
            length = action.get("length", 1)
            size = state.revolution_size
            reversed_order = state.reversed
            if size is not None and length == 1 and action["count"] >= size:  # PV-7
                self._revolution(state)
            if not state.sizes[seat]:  # PR-8: the true last cards take the player out
                forbidden = self._forbidden(state, r, jokers, length, reversed_order)
                if self._leave(state, seat, forbidden):
                    return
        self._end_trick(state, "menteur", winner)
