"""Président's rounds: the roles (PR-9), the deal and the start of a round (PR-3, PR-4,
PR-11), the end of a round and its points (PR-8, PR-12), and the end of the match.  Mixed
into :class:`President`; a round starts with the exchange, putsch or jeu blanc of
:mod:`arena.games.president.exchange`.
"""

from __future__ import annotations

from arena.games.base import DEAL_EVENT, JSON, Outcome, competition_ranks
from arena.games.president.menteur import MENTEUR_PLAYS_PER_CARD
from arena.games.president.state import PresidentState

PRESIDENT = "president"
VICE_PRESIDENT = "vice_president"
NEUTRAL = "neutral"
VICE_TROU = "vice_trou_du_cul"
TROU = "trou_du_cul"


def roles_for(n_players: int) -> tuple[str, ...]:
    """PR-9: the role of each finishing place, first to last."""
    if n_players == 3:
        return (PRESIDENT, NEUTRAL, TROU)
    middle = (NEUTRAL,) * (n_players - 4)
    return (PRESIDENT, VICE_PRESIDENT, *middle, VICE_TROU, TROU)


class Rounds:
    """Starting and ending rounds, and the order a round cut short starts from."""

    def _standing(self, state: PresidentState, seat: int, *, roles: bool = True) -> list[int]:
        """The order a round cut short starts from: the roles in force, Président first (the
        seats of PR-11); ruling, in round 1 (no roles yet) or without ``roles``: the players
        out in their places, then the others by fewest cards (ties clockwise from
        ``seat``), then the forbidden finishes (PV-3, PV-4)."""
        if roles and state.round > 1:
            return list(state.table)
        n = state.n_players
        ahead = [s for s in state.places[: state.front] if s is not None]
        behind = [s for s in state.places[state.back + 1 :] if s is not None]
        rest = sorted(
            (s for s in range(n) if state.active[s]),
            key=lambda s: (state.sizes[s], (s - seat) % n),
        )
        return ahead + rest + behind

    def _end_round(
        self, state: PresidentState, order: list[int] | None = None, why: str | None = None
    ) -> None:
        """The round is over: in finishing order (PR-8), or in ``order`` when it ended
        early, for ``why``: a coup d'état or guillotine (PV-8), a failed putsch (PV-9), a
        jeu blanc (PV-10), the PV-15 safety cap."""
        n = state.n_players
        if order is None:
            last = next(s for s in range(n) if state.active[s])
            places = state.places[:]
            places[state.front] = last  # the one still holding cards (PR-8)
            order = [s for s in places if s is not None]
        points = [0] * n
        for place, seat in enumerate(order):
            points[seat] = n - 1 - place  # PR-12
        putschist = state.putschist
        if putschist is not None:
            if order[0] == putschist:
                # PV-9 and Wikilivres' "Comptage des points": "le putschiste récolte alors 1
                # point de plus qu'un Président dit normal"
                points[putschist] = n
            else:
                # PV-9: "tous les autres joueurs retrouvent la position qu'ils avaient", and
                # "s'il est raté, le putschiste en perd 1"; ruling: the round being "hors
                # phase", the others score nothing
                order = list(state.table)
                points = [0] * n
                points[putschist] = -1
                state.putsch_due = putschist
        state.places = list(order)
        state.scores = [a + b for a, b in zip(state.scores, points, strict=True)]
        roles = roles_for(n)
        result: dict[str, JSON] = {
            "round": state.round,
            "order": order,
            "roles": [roles[order.index(s)] for s in range(n)],
            "points": points,
            "scores": list(state.scores),
        }
        if why is not None:
            result["ended_by"] = why
        if putschist is not None:
            result["putsch"] = {"seat": putschist, "succeeded": order[0] == putschist}
        state.round_results.append(result)
        state.emit({"type": "round_over", **result})
        state.turn = None
        o = state.options
        limit = o.round_limit
        reached = o.target is not None and max(state.scores) >= o.target
        if reached or state.round >= limit:  # PR-12
            ranks = competition_ranks([-s for s in state.scores])
            state.phase = "over"
            state.result = Outcome(ranks, list(state.scores), state.round_results)
            state.emit({"type": "match_over", "scores": list(state.scores), "ranks": ranks})
            return
        self._start_round(state)

    def _start_round(self, state: PresidentState) -> None:
        spec = state.spec
        o = state.options
        n = state.n_players
        state.round += 1
        if state.round == 1:
            table = list(range(n))
            state.dealer = 0  # PR-4
            leader = 1 % n
        else:
            # PR-11: seats in role order, Président first; ruling: the Trou du Cul deals
            table = [s for s in state.places if s is not None]
            roles = roles_for(n)
            state.roles = [roles[table.index(s)] for s in range(n)]
            state.dealer = table[-1]
            leader = table[-1] if o.later_lead == "trou_du_cul" else table[0]
        state.table = table
        for i, s in enumerate(table):
            state.after[s] = table[(i + 1) % n]
        if not o.revolution_lasts:  # PV-7: the order comes back with the new round
            state.reversed = False
        state.active = [True] * n
        state.n_active = n
        state.places = [None] * n
        state.front, state.back = 0, n - 1
        state.exchanged = [None] * n
        state.pile, state.pile_names = [], []
        state.played_view = (
            {"cards": [], "face_down": 0} if state.menteur else {"cards": state.pile_names}
        )
        state.sizes = [0] * n
        state.top_rank = state.last_player = None
        state.top_count = state.top_jokers = state.passes = state.run = 0
        state.top_length = 1
        state.trick = []
        state.leader = leader
        state.putschist = None
        state.guillotine = None
        state.window = []
        state.on_trick = [0] * spec.n_ranks
        if state.menteur:
            state.down = [[] for _ in range(n)]
            state.down_view = [{"cards": []} for _ in range(n)]
            state.trick_cards = []
            state.announcing = state.announced = state.announced_view = None
            state.announcements = 0
            cards_dealt = len(spec.deck) - len(spec.deck) % n
            state.max_announcements = MENTEUR_PLAYS_PER_CARD * cards_dealt

        deck = list(spec.deck)
        state.rng.shuffle(deck)
        per = len(deck) // n  # PR-3: equal hands, the rest set aside face up
        first = table.index(state.after[state.dealer])
        state.emit(
            {  # the gathering and shuffle: what was seen before says nothing now
                "type": DEAL_EVENT,
                "round": state.round,
                "table": list(table),
                "dealer": state.dealer,
                "roles": list(state.roles),
                "reversed": state.reversed,
                "hand_size": per,
            }
        )
        rank_of = spec.rank_of
        for i in range(n):  # one by one from the seat after the dealer
            seat = table[(first + i) % n]
            hand: list[list[int]] = [[] for _ in range(spec.n_ranks + 2)]
            for c in sorted(deck[i : per * n : n]):  # so each rank's cards are sorted
                hand[rank_of[c]].append(c)
            state.hands[seat], state.sizes[seat] = hand, per
            state.counts[seat] = [len(cs) for cs in hand]
            state.refresh_hand(seat)
            state.emit({"type": "hand", "seat": seat, "cards": state.hand_view[seat][:]}, to=[seat])
        state.leftover = sorted(deck[per * n :])
        state.leftover_names = [spec.names[c] for c in state.leftover]
        state.leftover_view = {"cards": list(state.leftover_names)}
        state.emit({"type": "leftover", "cards": list(state.leftover_names)})
        if state.count_trick:
            state.count_in_round()

        state.exchange_due = {}
        penalty, state.putsch_due = state.putsch_due, None
        if state.round > 1:
            if o.jeu_blanc and self._jeu_blanc(state):
                return
            # PV-9: the Trou du Cul decides before any exchange; one who failed may not
            # try again the next round (Wikilivres: "ne peut pas putscher à nouveau avant un
            # tour")
            if o.putsch and table[-1] != penalty:
                state.phase = "putsch"
                state.turn = None
                return
        self._exchange(state, penalty)
