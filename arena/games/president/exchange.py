"""Président's changes of hands and power between rounds: the exchange (PR-10), the putsch
(PV-9) and the jeu blanc (PV-10).  Mixed into :class:`President`, whose ``_end_round`` a
jeu blanc uses.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

from arena.games.base import Action, Request
from arena.games.president.actions import PUTSCH, give_action
from arena.games.president.state import PresidentState


class Exchanges:
    """The forced and chosen gifts, the putsch's answer, the jeu blanc's new order."""

    def _exchange(self, state: PresidentState, penalty: int | None) -> None:
        """PR-10 from the second round on; PV-9: a failed putschist gives 4 cards."""
        table = state.table
        if state.round > 1:
            pairs = [(table[-1], table[0], 4 if penalty == table[-1] else 2)]
            if state.n_players > 3:
                pairs.append((table[-2], table[1], 1))
            for giver, receiver, number in pairs:
                given = self._forced_gift(state, giver, receiver, number)
                if given:
                    state.exchange_due[receiver] = (giver, given)
        if state.exchange_due:
            state.phase = "exchange"
            state.turn = None
        else:
            state.phase = "play"
            state.turn = state.leader

    def _resolve_putsch(self, state: PresidentState, seat: int, action: Action) -> None:
        if action is PUTSCH:  # PV-9: "tout le monde conserve ses cartes (pas d'échanges)"
            state.putschist = seat
            state.emit({"type": "putsch", "seat": seat})
            state.phase = "play"
            state.turn = state.leader
        else:
            self._exchange(state, None)

    def _jeu_blanc(self, state: PresidentState) -> bool:
        """PV-10: a hand without J, Q, K, A, 2 or Joker (ruling: the ranks above 10 in the
        normal order, so the 7s of the 32-card deck too).  Wikilivres: "Le joueur ayant reçu
        le jeu blanc prend alors la place du Président et tout joueur qui était plus élevé
        dans la hiérarchie recule d'un échelon"; ruling: several such players take the
        first places in their former order.  Only from round 2 (ruling: round 1 has no
        hierarchy, and Wikilivres places it "avant que tout échange soit fait")."""
        high = state.spec.high
        blanc = [s for s in state.table if not any(state.counts[s][r] for r in high)]
        if not blanc:
            return False
        for s in blanc:
            state.emit({"type": "jeu_blanc", "seat": s})
        rest = [s for s in state.table if s not in blanc]
        self._end_round(state, blanc + rest, "jeu_blanc")
        return True

    def _forced_gift(self, state: PresidentState, giver: int, receiver: int, number: int) -> int:
        """PR-10: the giver's strongest cards go to the receiver; PV-3: never a Joker."""
        spec = state.spec
        hand = state.hands[giver]
        moved: list[int] = []
        for r in reversed(spec.order[state.reversed]):
            moved += hand[r][max(0, len(hand[r]) - (number - len(moved))) :][::-1]
            if len(moved) == number:
                break
        self._move(state, giver, receiver, moved)
        self._emit_exchange(state, giver, receiver, moved, forced=True)
        return len(moved)

    def _move(self, state: PresidentState, giver: int, receiver: int, cards: list[int]) -> None:
        """Hand the physical ``cards`` over (the exchange, PR-10)."""
        for phys in cards:
            r = state.spec.rank_of[phys]
            state.hands[giver][r].remove(phys)
            state.counts[giver][r] -= 1
            state._take_into(receiver, phys)
            state.hands[receiver][r].sort()
        sizes = state.sizes[:]
        sizes[giver] -= len(cards)
        sizes[receiver] += len(cards)
        state.sizes = sizes
        state.refresh_hand(giver)
        state.refresh_hand(receiver)

    def _emit_exchange(
        self, state: PresidentState, giver: int, receiver: int, moved: list[int], forced: bool
    ) -> None:
        names = [state.spec.names[c] for c in moved]
        state.emit(
            {"type": "exchange", "giver": giver, "receiver": receiver, "count": len(moved)},
        )
        state.emit(
            {"type": "exchange_cards", "giver": giver, "receiver": receiver, "cards": names},
            to=[giver, receiver],
        )
        for seat, key in ((giver, "gave"), (receiver, "received")):
            record = state.exchanged[seat] or {"gave": None, "received": None}
            state.exchanged[seat] = {**record, key: {"cards": list(names), "forced": forced}}

    def _give_request(self, state: PresidentState, seat: int, number: int) -> Request:
        """PR-10: any `number` cards of the hand, Jokers excepted (PV-3)."""
        spec = state.spec
        counts = state.counts[seat]
        names = spec.rank_names
        held = [r for r in range(spec.n_ranks) if counts[r]]
        # ruling: never more cards than the hand has besides its Jokers
        number = min(number, sum(counts[: spec.n_ranks]))
        if number == 1:
            legal = [give_action((names[r],)) for r in held]
        elif number == 2:
            legal = [
                give_action((names[a], names[b]))
                for i, a in enumerate(held)
                for b in held[i:]
                if a != b or counts[a] >= 2
            ]
        else:  # weakest first in the normal order; PV-9: 4 after a failed putsch
            legal = [
                give_action(tuple(names[r] for r in ranks))
                for ranks in itertools.combinations_with_replacement(held, number)
                if all(counts[r] >= ranks.count(r) for r in set(ranks))
            ]
        # the default gives the weakest cards in the current order
        weakest: list[int] = []
        for r in spec.order[state.reversed]:
            weakest.extend([r] * min(counts[r], number - len(weakest)))
        default = give_action(tuple(names[r] for r in sorted(weakest)))
        return Request(seat, "exchange", legal, default)

    def _give_back(self, state: PresidentState, answers: Mapping[int, Action]) -> None:
        spec = state.spec
        for seat in sorted(answers):
            receiver = state.exchange_due[seat][0]
            hand = state.hands[seat]
            moved: list[int] = []
            for rank_name in answers[seat]["ranks"]:
                same = [c for c in hand[spec.rank_index[rank_name]] if c not in moved]
                moved.append(same[-1])
            self._move(state, seat, receiver, moved)
            self._emit_exchange(state, seat, receiver, moved, forced=False)
        state.exchange_due = {}
        state.phase = "play"
        state.turn = state.leader
