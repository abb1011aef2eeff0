"""Président's match state: the hands (counts per rank, physical cards per rank, names in
view order), the table and roles, the trick, the variants' bookkeeping, and the flags of
the rules in force (:class:`~arena.games.president.options.Rules`).

The state keeps each hand three ways: counts per rank (legal plays come from them), the
physical cards per rank (conservation) and the names in view order (so that a view only
refers to it).
"""

from __future__ import annotations

from arena.games.base import JSON, Action, State
from arena.games.president.deck import Spec
from arena.games.president.options import PresidentOptions, rules_for


class PresidentState(State):
    options: PresidentOptions

    def __init__(self, n_players: int, seed: int, options: PresidentOptions, spec: Spec):
        super().__init__(n_players, seed, options)
        self.spec = spec
        # the flags of the rules in force (wild, twos_cut, runs_bind, equal_plays,
        # revolution_size, menteur, plain, count_trick, extra_settle, sets_only, extra_view,
        # cut_ranks: see options.Rules), plain attributes of the state for the hot path
        vars(self).update(vars(rules_for(options)))
        n = n_players
        self.round = 0
        self.phase = "play"  # "exchange", "play", "over"
        self.table: list[int] = list(range(n))  # seats clockwise (PR-11)
        self.after: list[int] = [(s + 1) % n for s in range(n)]
        self.dealer = 0
        self.roles: list[str | None] = [None] * n
        self.scores = [0] * n
        self.reversed = False  # PV-7
        self.counts: list[list[int]] = [[0] * (spec.n_ranks + 2) for _ in range(n)]
        self.hands: list[list[list[int]]] = [
            [[] for _ in range(spec.n_ranks + 2)] for _ in range(n)
        ]
        self.sizes = [0] * n
        self.hand_view: list[list[str]] = [[] for _ in range(n)]  # names, view order
        self.active = [True] * n
        self.n_active = n
        self.places: list[int | None] = [None] * n  # PR-8: finishing order
        self.front = 0  # next place for a player who goes out
        self.back = n - 1  # next place for a forbidden finish (PV-3, PV-4)
        self.leftover: list[int] = []  # PR-3
        self.leftover_names: list[str] = []
        self.leftover_view: dict[str, JSON] = {"cards": []}
        self.pile: list[int] = []  # cards played this round, face up
        self.pile_names: list[str] = []
        self.played_view: dict[str, JSON] = {"cards": self.pile_names}
        # PR-10: seat that gives back -> (the seat it gives to, how many cards)
        self.exchange_due: dict[int, tuple[int, int]] = {}
        self.exchanged: list[dict[str, JSON] | None] = [None] * n
        self.leader = 1 % n
        self.turn: int | None = None
        # the current trick
        self.top_rank: int | None = None
        self.top_count = 0
        self.top_jokers = 0
        self.last_player: int | None = None
        self.passes = 0
        self.run = 0  # PV-2 / PV-6: length of the run of equal plays ending the trick
        self.top_length = 1  # PV-13: ranks in the play to beat (a run has three or more)
        self.trick: list[dict[str, JSON]] = []
        # PV-5, PV-14: natural cards of each rank on the trick, and in the round (the deck's
        # less those set aside, PR-3)
        self.on_trick = [0] * spec.n_ranks
        self.in_round = [spec.max_set] * spec.n_ranks
        # PV-14: the seats asked in a rapidité window (priority order), the rank and count
        self.window: list[int] = []
        self.window_rank = 0
        self.window_need = 0
        # PV-9: this round's putschist; the failed putschist who owes 4 cards next round
        self.putschist: int | None = None
        self.putsch_due: int | None = None
        # PV-8: the guillotine's player and the order before it, while they name seats
        self.guillotine: tuple[int, list[int]] | None = None
        # PV-15: each seat's cards face down on this trick (physical, and as a view piece);
        # the trick's cards in order; the announcement being laid (seat, action, cards to
        # lay) and the one awaiting calls (seat, action, the cards laid for it)
        self.down: list[list[int]] = [[] for _ in range(n)]
        self.down_view: list[dict[str, JSON]] = [{"cards": []} for _ in range(n)]
        self.trick_cards: list[int] = []
        self.announcing: tuple[int, Action, list[int]] | None = None
        self.announced: tuple[int, Action, list[int]] | None = None
        self.announced_view: dict[str, JSON] | None = None
        self.announcements = 0  # this round's, for the safety cap (MENTEUR_PLAYS_PER_CARD)
        self.max_announcements = 0
        self.round_results: list[dict[str, JSON]] = []

    # -- helpers for tests and tools -------------------------------------------------------
    def set_hands(self, hands: list[list[str]], turn: int | None = None) -> None:
        """Give each seat exactly the named cards and, if given, the turn to ``turn`` (tests
        build situations this way); the cards nobody holds go to the set-aside leftover."""
        spec = self.spec
        free: dict[str, list[int]] = {}
        for phys in spec.deck:
            free.setdefault(spec.names[phys], []).append(phys)
        self.sizes = [0] * self.n_players
        for seat in range(self.n_players):
            self.counts[seat] = [0] * (spec.n_ranks + 2)
            self.hands[seat] = [[] for _ in range(spec.n_ranks + 2)]
        for seat, names in enumerate(hands):
            for card_name in names:
                self._take_into(seat, free[card_name].pop(0))
            self.sizes[seat] = len(names)
        for seat in range(self.n_players):
            self.hands[seat] = [sorted(cs) for cs in self.hands[seat]]
            self.refresh_hand(seat)
        self.leftover = sorted(c for left in free.values() for c in left)
        self.leftover_names = [spec.names[c] for c in self.leftover]
        self.leftover_view = {"cards": list(self.leftover_names)}
        self.pile, self.pile_names = [], []
        # as a deal leaves it (PV-15: how many cards lie face down, none yet)
        self.played_view = {"cards": [], "face_down": 0} if self.menteur else {"cards": []}
        self.count_in_round()
        if turn is not None:
            self.turn = turn
        self._pending = None

    def count_in_round(self) -> None:
        """PV-5, PV-14: the natural cards of each rank in the round, those set aside by PR-3
        excepted (ruling: a card set aside face up never reaches the trick, so the rank is
        complete without it)."""
        spec = self.spec
        in_round = [spec.max_set] * spec.n_ranks
        for phys in self.leftover:
            r = spec.rank_of[phys]
            if r < spec.n_ranks:
                in_round[r] -= 1
        self.in_round = in_round

    def _take_into(self, seat: int, phys: int) -> None:
        """One card into a hand; the caller updates ``sizes`` and ``hand_view``."""
        r = self.spec.rank_of[phys]
        self.hands[seat][r].append(phys)
        self.counts[seat][r] += 1

    def refresh_hand(self, seat: int) -> None:
        """The seat's cards by name, weakest first in the current order, Jokers last (kept
        up to date at every change so that a view only copies it)."""
        spec = self.spec
        hand = self.hands[seat]
        names = spec.names
        self.hand_view[seat] = [names[c] for r in spec.view_order[self.reversed] for c in hand[r]]

    def next_active(self, seat: int) -> int:
        """The next seat clockwise still in the round (PR-8)."""
        after, active = self.after, self.active
        seat = after[seat]
        while not active[seat]:
            seat = after[seat]
        return seat
