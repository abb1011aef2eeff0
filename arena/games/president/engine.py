"""Président (Trou du Cul), game id ``president``: rules PR-1..12 and the variants PV-1..16
of docs/rules/president.md, each variant an option; presets are named bundles of them.

The package's modules, one job each: :mod:`~arena.games.president.options` (the options,
presets and the rules they make), :mod:`~arena.games.president.deck` (ranks, orders, the
physical cards and the plays of a deck configuration), :mod:`~arena.games.president.actions`
(the actions, one canonical dict each) and :mod:`~arena.games.president.state` (a match's
state); mixed into :class:`President`, the variant families
:mod:`~arena.games.president.special_plays` (runs, coups, rapidité),
:mod:`~arena.games.president.menteur` (Président-Menteur) and
:mod:`~arena.games.president.exchange` (exchange, putsch, jeu blanc), then
:mod:`~arena.games.president.rounds` (deal, roles, points) and
:mod:`~arena.games.president.views` (what each seat sees).  This module is the state
machine: the requests, the answers applied, the legal plays and the play of a trick.

Quotations in the package ("Wikilivres: ...") are from the source of the rules, the page
« Le Président » of the Wikilivres book *Boîte à jeux*.

Rulings where the rules are silent are marked "ruling" where they are implemented; the
main ones: the strongest rank of the current order is the one that cuts (PR-7: the 7 of
the 32-card deck, the 3 during a revolution) and the one a player may not finish on
(PV-4); with Jokers the 2s do not cut, so that a Joker can still be put on them
(Wikilivres: the cut "cannot apply" with Jokers); the black Joker leaves the trick open to
the coloured one, which cuts; later rounds are dealt by the Trou du Cul, so
``after_dealer`` makes the Président lead (PR-11).  The variants' rulings are listed in
docs/rules/president.md ("How the engine reads the variants").

A play's consequences (the cut, a revolution, going out, a tabula rasa, a wizz, a rapidité
window) are settled in one place, ``President._settle``, whether the cards were played, a
run, thrown out of turn or announced face down; ``_play`` keeps the base rules' part inline
as the hot path.  A round cut short (a coup, a failed putsch, a jeu blanc, the menteur cap)
ends through ``_end_round`` with the order it decides.
"""

from __future__ import annotations

from collections.abc import Mapping

from arena.games.base import JSON, Action, Game, OptionsError, Request
from arena.games.president.actions import CALL, PASS, PLAY, PUTSCH, name_action, throw_action
from arena.games.president.deck import JOKERS, ORDER_32, ORDER_52, Spec, deck_spec
from arena.games.president.exchange import Exchanges
from arena.games.president.menteur import MENTEUR_PLAYS_PER_CARD, Menteur
from arena.games.president.options import (
    CONTRADICTIONS,
    DEFAULT_MAX_ROUNDS,
    DEFAULT_ROUNDS,
    MIN_PLAYERS_TABULA_RASA,
    MIN_PLAYERS_TWO_DECKS,
    PRESET_DOCS,
    PRESETS,
    SUB_OPTIONS,
    PresidentOptions,
    check_options,
    resolve,
    spec_for,
)
from arena.games.president.rounds import (
    NEUTRAL,
    PRESIDENT,
    TROU,
    VICE_PRESIDENT,
    VICE_TROU,
    Rounds,
    roles_for,
)
from arena.games.president.special_plays import MAX_RUN_WIDTH, MIN_RUN, SpecialPlays
from arena.games.president.state import PresidentState
from arena.games.president.views import Views

# the names other modules import from here (the engine's public face before the split)
__all__ = [
    "CALL",
    "CONTRADICTIONS",
    "DEFAULT_MAX_ROUNDS",
    "DEFAULT_ROUNDS",
    "JOKERS",
    "MAX_RUN_WIDTH",
    "MENTEUR_PLAYS_PER_CARD",
    "MIN_PLAYERS_TABULA_RASA",
    "MIN_PLAYERS_TWO_DECKS",
    "MIN_RUN",
    "NEUTRAL",
    "ORDER_32",
    "ORDER_52",
    "PASS",
    "PLAY",
    "PRESETS",
    "PRESET_DOCS",
    "PRESIDENT",
    "PUTSCH",
    "SUB_OPTIONS",
    "TROU",
    "VICE_PRESIDENT",
    "VICE_TROU",
    "President",
    "PresidentOptions",
    "PresidentState",
    "Spec",
    "check_options",
    "deck_spec",
    "roles_for",
]


class President(Views, SpecialPlays, Menteur, Exchanges, Rounds, Game):
    id = "president"
    title = "Président"
    min_players = 3  # PR-1
    max_players = 8
    presets: Mapping[str, Mapping[str, JSON]] = PRESETS
    preset_docs = PRESET_DOCS

    # -- options ---------------------------------------------------------------------------
    def resolve_options(self, options: Mapping[str, JSON] | None) -> PresidentOptions:
        return resolve(self.id, self.presets, options)

    # -- the contract ------------------------------------------------------------------------
    def new_state(
        self,
        n_players: int,
        seed: int,
        options: Mapping[str, JSON] | PresidentOptions | None = None,
    ) -> PresidentState:
        self.check_players(n_players)
        if isinstance(options, PresidentOptions):
            check_options(options)
            o = options
        else:
            o = self.resolve_options(options)
        if o.decks == 2 and n_players < MIN_PLAYERS_TWO_DECKS:  # PV-16
            raise OptionsError(
                f"president option 'decks' = 2 is for {MIN_PLAYERS_TWO_DECKS} players or more "
                f"(PV-16), not {n_players}: use 'decks' = 1"
            )
        if o.tabula_rasa and n_players < MIN_PLAYERS_TABULA_RASA:  # PV-5
            raise OptionsError(
                f"president option 'tabula_rasa' is for more than four players (PV-5), not "
                f"{n_players}"
            )
        state = PresidentState(n_players, seed, o, spec_for(o))
        self._start_round(state)
        return state

    def _requests(self, state: PresidentState) -> list[Request]:
        phase = state.phase
        if phase == "play":
            seat = state.turn
            assert seat is not None
            legal = self._legal_plays(state, seat)
            # the default is a pass when passing is legal, else the weakest lead (legal[0])
            return [Request(seat, PLAY, legal, legal[0])]
        if phase == "exchange":
            return [
                self._give_request(state, giver, number)
                for giver, (_, number) in sorted(state.exchange_due.items())
            ]
        names = state.spec.rank_names
        if phase == "rapidite":  # PV-14: each seat that can complete the rank, by priority
            throw = throw_action(names[state.window_rank], state.window_need)
            return [Request(s, "rapidite", [PASS, throw], PASS) for s in state.window]
        if phase == "call":  # PV-15: every other player still holding cards, by priority
            return [Request(s, "call", [PASS, CALL], PASS) for s in state.window]
        if phase == "lay":  # PV-15
            return [self._lay_request(state)]
        if phase == "putsch":  # PV-9: the Trou du Cul, before any exchange
            trou = state.table[-1]
            return [Request(trou, "putsch", [PASS, PUTSCH], PASS)]
        assert phase == "guillotine" and state.guillotine is not None  # PV-8
        seat = state.guillotine[0]
        others = [s for s in state.table if s != seat]
        if state.n_players == 3:  # PR-9: no Vice-Président
            legal = [name_action(None, t) for t in others]
        else:
            legal = [name_action(v, t) for v in others for t in others if v != t]
        return [Request(seat, "guillotine", legal, legal[0])]

    def _apply(
        self, state: PresidentState, requests: list[Request], answers: Mapping[int, Action]
    ) -> None:
        phase = state.phase
        if phase == "play":
            seat = requests[0].seat
            action = answers[seat]
            if action is PASS:  # answers are the engine's own canonical elements
                self._pass(state, seat)
                return
            spec = state.spec
            if state.sets_only:  # the hot path: every play is a set of one rank
                r = spec.rank_index[action["rank"]]
                self._play(state, seat, r, action["count"], action.get("jokers", 0))
                return
            if state.menteur:  # PV-15: an announcement, whose cards are laid next
                self._announce(state, seat, action)
                return
            kind = action["type"]
            r = spec.rank_index[action["rank"]]
            if kind == "play":
                self._play(state, seat, r, action["count"], action.get("jokers", 0))
            elif kind == "run":  # PV-13
                self._play_run(state, seat, r, action["length"], action["count"])
            else:  # PV-8: coup_d_etat or guillotine
                self._coup(state, seat, kind, r, action["count"], action["jokers"])
        elif phase == "exchange":
            self._give_back(state, answers)
        elif phase == "rapidite":
            self._resolve_rapidite(state, requests, answers)
        elif phase == "lay":
            seat = requests[0].seat
            action = answers[seat]
            self._lay(state, seat, state.spec.rank_index[action["rank"]], action["count"])
        elif phase == "call":
            self._resolve_call(state, requests, answers)
        elif phase == "putsch":
            self._resolve_putsch(state, requests[0].seat, answers[requests[0].seat])
        else:
            self._name(state, answers[requests[0].seat])

    def all_cards(self, state: PresidentState) -> list[int]:
        held = [c for hand in state.hands for rank in hand for c in rank]
        return held + state.pile + state.leftover

    # -- legal actions -------------------------------------------------------------------
    def _legal_plays(self, state: PresidentState, seat: int) -> list[Action]:
        """Pass first when legal, then the plays from weakest to strongest (PR-5)."""
        if state.plain:
            # the common case, straight from the counts per rank
            spec = state.spec
            counts = state.counts[seat]
            order = spec.order[state.reversed]
            top = state.top_rank
            if top is None:  # PR-5: a lead, 1 to all the cards of one rank
                leads = spec.leads
                out = []
                for r in order:
                    out += leads[r][counts[r]]
                return out
            if state.run < 2:
                plays = spec.plays
                # PR-5: as many cards, of a strictly higher rank (equal with PV-2/PV-6)
                c = state.top_count
                start = spec.pos[state.reversed][top] + (0 if state.equal_plays else 1)
                return [PASS] + [plays[r][c][0] for r in order[start:] if counts[r] >= c]
        return self._legal_plays_variants(state, seat)

    def _legal_plays_variants(self, state: PresidentState, seat: int) -> list[Action]:
        """The general case: raised counts, runs of equal plays, Jokers alone or wild, runs
        (PV-13), coups (PV-8) and announcements (PV-15)."""
        spec = state.spec
        o = state.options
        n = spec.n_ranks
        size = state.sizes[seat]
        if state.menteur:
            # PV-15: any play the hand has enough cards for may be announced, whatever the
            # cards (Wikilivres: "annoncer double 2 en mettant un 3 et un 7")
            counts = [min(spec.max_set, size)] * n + [o.decks if o.jokers else 0] * 2
        else:
            counts = state.counts[seat]
        plays = spec.plays
        order = spec.order[state.reversed]
        pos = spec.pos[state.reversed]
        top = state.top_rank
        if top is not None and state.top_length > 1:
            # PV-13: on a run, a higher run of the same shape, or a Joker alone (PV-3)
            runs = self._runs(
                state, counts, size, pos[top] + 1, (state.top_count,), state.top_length
            )
            out = [PASS, *runs]
            if o.jokers and not state.wild:
                out += [plays[j][1][0] for j in (n, n + 1) if counts[j]]
            return out + self._coups(state, counts)
        jokers = counts[n] + counts[n + 1] if state.wild else 0
        # PV-3 ruling: a hand of wild Jokers only may play them as a set of the weakest rank
        # (PV-15: the hand's own Jokers, whatever it may announce)
        held = state.counts[seat]
        bare = state.wild and size > 0 and held[n] + held[n + 1] == size
        out = []
        # PV-3 ruling: a wild set has one natural card at least and one card more than a
        # full rank at most (Wikilivres' "five")
        wild_cap = spec.max_set + 1 if state.wild else spec.max_set
        ranks: tuple[int, ...] | list[int]
        alone: tuple[int, ...] | list[int] = () if state.wild else (n, n + 1)
        if top is None:  # PR-5: a lead, any set of one rank
            ranks, low, high = order, 1, wild_cap
        else:
            out.append(PASS)  # PR-6
            low = high = state.top_count
            if o.raise_count or o.wizz:  # PV-1, PV-12: as many cards or more
                high = wild_cap
            # PV-2 / PV-6: the run of equal plays binds the next player (ruling: plays in a
            # row of the trick, whatever passes fall between; it lasts until another rank)
            if state.run >= 2:
                ranks = [top] if top < n else []
                if o.quitte_ou_double:
                    high = low  # PV-6: match exactly
                    alone = [top] if top >= n and not state.wild else []
                elif top >= n:
                    alone = [top] + ([n + 1] if o.passe_breakers and top == n else [])
                elif not o.passe_breakers:
                    alone = []
                elif top != order[-1]:
                    ranks.append(order[-1])  # PV-2: a 2 (or a Joker, kept) breaks the passe
            elif top < n:
                ranks = order[pos[top] if state.equal_plays else pos[top] + 1 :]
            else:  # PV-3: on a Joker only a stronger (or, with equal plays, the same) Joker
                ranks = ()
                alone = [j for j in alone if j > top or (state.equal_plays and j == top)]
        for r in ranks:
            k = counts[r]
            lowest = bare and r == order[0]
            if not k and not lowest:
                continue
            first = 0 if lowest else 1
            # (an announcement may not hold more cards than the hand, PV-15)
            for total in range(low, min(high, k + jokers, wild_cap, size) + 1):
                # naturals alone first, then with more and more wild Jokers (PV-3)
                for j in range(max(0, total - k), min(jokers, total - first) + 1):
                    out.append(plays[r][total][j])
        if o.jokers:
            # PV-3: a Joker alone at any time, on any set; the coloured beats the black
            for r in alone:
                if counts[r]:
                    out.append(plays[r][1][0])
        if o.suites and top is None:  # PV-13: runs may be led
            out += self._runs(state, counts, size, 0, range(1, MAX_RUN_WIDTH + 1), None)
        return out + self._coups(state, counts)

    # -- playing ---------------------------------------------------------------------------
    def _play(self, state: PresidentState, seat: int, r: int, count: int, jokers: int) -> None:
        spec = state.spec
        hand = state.hands[seat]
        counts = state.counts[seat]
        naturals = hand[r]
        k = count - jokers
        played = naturals[len(naturals) - k :]
        del naturals[len(naturals) - k :]
        counts[r] -= k
        if jokers:  # wild Jokers, black first
            n = spec.n_ranks
            for _ in range(jokers):
                j = n if counts[n] else n + 1
                played.append(hand[j].pop())
                counts[j] -= 1
        # what a view shows is replaced, never changed in place (see ``view``)
        sizes = state.sizes[:]
        sizes[seat] -= count
        state.sizes = sizes
        names = spec.names
        played_names = [names[c] for c in played]
        hand_view = state.hand_view[seat][:]
        for card_name in played_names:
            hand_view.remove(card_name)
        state.hand_view[seat] = hand_view
        state.pile += played
        state.pile_names = pile_names = state.pile_names + played_names
        state.played_view = {"cards": pile_names}
        event: dict[str, JSON] = {
            "type": "play",
            "seat": seat,
            "rank": spec.rank_names[r],
            "count": count,
            "cards": played_names,
        }
        if jokers:
            event["jokers"] = jokers
        state.emit(event)
        state.trick = [*state.trick, event]
        if state.extra_settle:
            self._settle(state, seat, r, count, jokers)
            return
        # the base rules' consequences, inline on the hot path (the general case: _settle)
        reversed_order = state.reversed
        cut = r in state.cut_ranks[reversed_order]  # PR-7, PV-3, PV-11
        state.top_rank = r
        state.top_count = count
        state.top_jokers = jokers
        state.last_player = seat
        state.passes = 0
        size = state.revolution_size
        if size is not None and count >= size:  # PV-7
            self._revolution(state)
        if not sizes[seat]:  # PR-8
            forbidden = self._forbidden(state, r, jokers, 1, reversed_order)
            if self._leave(state, seat, forbidden):
                return
        if cut:
            self._end_trick(state, "cut")
        else:
            state.turn = state.next_active(seat)

    def _take(self, state: PresidentState, seat: int, r: int, k: int, jokers: int) -> list[int]:
        """``k`` cards of rank ``r`` and ``jokers`` wild Jokers (black first) out of the
        seat's hand; the views' pieces are replaced, never changed in place."""
        spec = state.spec
        hand = state.hands[seat]
        counts = state.counts[seat]
        naturals = hand[r]
        taken = naturals[len(naturals) - k :]
        del naturals[len(naturals) - k :]
        counts[r] -= k
        n = spec.n_ranks
        for _ in range(jokers):
            j = n if counts[n] else n + 1
            taken.append(hand[j].pop())
            counts[j] -= 1
        sizes = state.sizes[:]
        sizes[seat] -= len(taken)
        state.sizes = sizes
        hand_view = state.hand_view[seat][:]
        for phys in taken:
            hand_view.remove(spec.names[phys])
        state.hand_view[seat] = hand_view
        return taken

    def _face_up(self, state: PresidentState, event: dict[str, JSON], played: list[int]) -> None:
        """Cards onto the trick face up, named in the public ``event`` (PR-5)."""
        names = [state.spec.names[c] for c in played]
        event["cards"] = names
        state.pile += played
        state.pile_names = state.pile_names + names
        state.played_view = {"cards": state.pile_names}
        state.emit(event)
        state.trick = [*state.trick, event]

    def _settle(
        self,
        state: PresidentState,
        seat: int,
        r: int,
        count: int,
        jokers: int,
        length: int = 1,
        thrown: bool = False,
    ) -> None:
        """What a play does once it lies on the trick: the runs of equal plays (PV-2, PV-6),
        the cut (PR-7, PV-3, PV-11), tabula rasa (PV-5), the revolution (PV-7), going out
        (PR-8), the wizz (PV-12), the rapidité window (PV-14) and the next turn.  ``r`` is
        a run's weakest rank (PV-13: ``length`` ranks); ``thrown``: a rapidité."""
        spec = state.spec
        o = state.options
        prev_count = state.top_count
        equal = r == state.top_rank and state.top_length == 1 and length == 1
        if state.runs_bind:  # PV-2 counts same-rank plays, PV-6 identical plays
            same = equal and (not o.quitte_ou_double or count == prev_count)
            state.run = state.run + 1 if same else int(length == 1)
        # judged in the order the cards were played in (before a revolution they make)
        reversed_order = state.reversed
        cut_ranks = state.cut_ranks[reversed_order]
        if length == 1:
            cut = r in cut_ranks
        else:  # PV-13 ruling: a run that holds a rank that cuts cuts too
            order, low = spec.order[reversed_order], spec.pos[reversed_order][r]
            cut = any(order[i] in cut_ranks for i in range(low, low + length))
        why = "cut"
        state.top_rank = r
        state.top_count = max(count, prev_count) if thrown else count  # PV-14: the larger
        state.top_jokers = jokers
        state.top_length = length
        state.last_player = seat
        state.passes = 0
        n = spec.n_ranks
        if state.count_trick and length == 1 and r < n:
            naturals = count - jokers
            on_trick = state.on_trick[r] + naturals
            state.on_trick[r] = on_trick
            # PV-5: every card of the rank lies on the trick, laid by more than one play
            # (Wikilivres: "Cette règle ne s'applique pas aux carrés")
            complete = on_trick >= state.in_round[r] and naturals < on_trick
            if o.tabula_rasa and complete and not cut:
                cut, why = True, "tabula_rasa"
        # PV-7 (ruling: wild Jokers count; the cut above was judged before the reversal)
        size = state.revolution_size
        if size is not None and length == 1 and count >= size:
            self._revolution(state)

        if not state.sizes[seat]:  # PR-8
            forbidden = self._forbidden(state, r, jokers, length, reversed_order)
            if self._leave(state, seat, forbidden):
                return
        if cut:
            self._end_trick(state, why)
            return
        following = state.next_active(seat)
        if o.wizz and equal and not thrown:
            # PV-12: an equal play skips the next player, and one more per extra card;
            # never the player themself, nor one who has gone out (Wikilivres)
            others = state.n_active - state.active[seat]
            skipped = []
            for _ in range(min(1 + count - prev_count, others)):
                skipped.append(following)
                following = state.next_active(following)
            event: dict[str, JSON] = {"type": "wizz", "seat": seat, "skipped": skipped}
            state.emit(event)
            state.trick = [*state.trick, event]
            state.passes = len(skipped)  # PR-6: as if they had passed
            if len(skipped) >= others:
                # Wikilivres: "Dès lors que la main revient au joueur ayant posé une carte
                # pour la dernière fois, le tour de jeu est clos"
                self._end_trick(state, "wizz")
                return
        state.turn = following
        if o.rapidite and length == 1 and r < n and not thrown:
            self._open_rapidite(state, seat, r)

    def _revolution(self, state: PresidentState) -> None:
        """PV-7: the order turns round (every hand's view order with it)."""
        state.reversed = not state.reversed
        for s in range(state.n_players):
            state.refresh_hand(s)
        state.emit({"type": "revolution", "order": state.spec.order_names[state.reversed]})

    def _forbidden(
        self, state: PresidentState, r: int, jokers: int, length: int, reversed_order: bool
    ) -> bool:
        """Whether a last play of rank ``r`` (a run from ``r``) is a forbidden finish: the
        strongest rank with PV-4 ``no_finish_on_two`` (ruling: of the order in force; a run
        that holds it), a Joker with PV-3 ``no_finish_on_joker``."""
        o = state.options
        spec = state.spec
        if o.no_finish_on_two:
            order = spec.order[reversed_order]
            if spec.pos[reversed_order][r] + length - 1 == len(order) - 1 and r < spec.n_ranks:
                return True
        return o.no_finish_on_joker and (jokers > 0 or r >= spec.n_ranks)

    def _pass(self, state: PresidentState, seat: int) -> None:
        event: dict[str, JSON] = {"type": "pass", "seat": seat}
        state.emit(event)
        state.trick = [*state.trick, event]
        state.passes += 1
        last = state.last_player
        assert last is not None
        # PR-6: over once every other player still in the round has passed in a row
        if state.passes >= state.n_active - state.active[last]:
            self._end_trick(state, "passes")
        else:
            state.turn = state.next_active(seat)

    def _leave(self, state: PresidentState, seat: int, forbidden: bool) -> bool:
        """PR-8: the seat goes out; True when that ends the round (the last player holding
        cards, or PV-9 a failed putsch)."""
        self._go_out(state, seat, forbidden)
        putschist, first = state.putschist, state.places[0]
        gone = first is not None or seat == putschist  # someone else first, or it is out
        if putschist is not None and first != putschist and gone:
            # PV-9: Wikilivres: "La partie peut donc être arrêtée dès lors que le premier joueur
            # à se débarrasser de toutes ses cartes n'est pas le putschiste lui-même"
            self._end_round(state, list(state.table), "putsch")
            return True
        if state.n_active == 1:
            self._end_round(state)
            return True
        return False

    def _go_out(self, state: PresidentState, seat: int, forbidden: bool) -> None:
        state.active[seat] = False
        state.n_active -= 1
        if forbidden:  # PV-3/PV-4 ruling: forbidden finishes fill the last places in turn
            place = state.back
            state.back -= 1
        else:
            place = state.front
            state.front += 1
        places = state.places[:]
        places[place] = seat
        state.places = places
        state.emit({"type": "out", "seat": seat, "place": place + 1, "forbidden": forbidden})

    def _end_trick(self, state: PresidentState, why: str, winner: int | None = None) -> None:
        if winner is None:
            winner = state.last_player
        assert winner is not None
        # PR-6/PR-7: the last player leads again; PR-8: if gone, the next one still in
        leader = winner if state.active[winner] else state.next_active(winner)
        state.emit({"type": "trick_over", "winner": winner, "leader": leader, "why": why})
        state.top_rank = None
        state.top_count = state.top_jokers = 0
        state.last_player = None
        state.passes = 0
        state.run = 0
        state.trick = []
        state.turn = leader
        if state.extra_settle:  # (the variants' bookkeeping, off the hot path)
            state.top_length = 1  # PV-13
            if state.count_trick:  # PV-5, PV-14
                state.on_trick = [0] * state.spec.n_ranks
            if state.menteur:  # PV-15: the trick's cards stay face down on the pile
                n = state.n_players
                state.trick_cards = []
                state.down = [[] for _ in range(n)]
                state.down_view = [{"cards": []} for _ in range(n)]
