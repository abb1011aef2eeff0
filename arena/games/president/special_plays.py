"""Président's special plays: runs (PV-13), the coup d'état and the guillotine (PV-8) and
rapidité, cards thrown out of turn (PV-14).  Mixed into :class:`President`, whose play flow
(``_take``, ``_face_up``, ``_settle``, ``_end_round``, ``_standing``) it uses.
"""

from __future__ import annotations

from collections.abc import Mapping

from arena.games.base import JSON, Action, Request, first_in_priority
from arena.games.president.actions import coup_action, run_action
from arena.games.president.state import PresidentState

MIN_RUN = 3  # PV-13 ruling: a run has three ranks at least (Wikilivres' shared runs need 3)
MAX_RUN_WIDTH = 3  # PV-13: runs of single cards, pairs or triples


class SpecialPlays:
    """The legal runs and coups of a hand, and playing them; the rapidité window."""

    def _runs(
        self,
        state: PresidentState,
        counts: list[int],
        size: int,
        start: int,
        widths: tuple[int, ...] | range,
        length: int | None,
    ) -> list[Action]:
        """PV-13: the runs of ``widths`` cards per rank (of ``length`` ranks, or of any
        length from MIN_RUN) whose weakest rank is at ``start`` or above, in the order in
        force (ruling: a revolution turns runs round too; the strongest rank may end one)."""
        spec = state.spec
        order = spec.order[state.reversed]
        names = spec.rank_names
        m = len(order)
        out: list[Action] = []
        for width in widths:
            if width > spec.max_set:
                continue
            for low in range(start, m - MIN_RUN + 1):
                end = low
                while end < m and counts[order[end]] >= width:
                    end += 1
                if length is not None:
                    if end - low >= length and length * width <= size:
                        out.append(run_action(names[order[low]], length, width))
                    continue
                for ranks in range(MIN_RUN, end - low + 1):
                    if ranks * width <= size:
                        out.append(run_action(names[order[low]], ranks, width))
        return out

    def _coups(self, state: PresidentState, counts: list[int]) -> list[Action]:
        """PV-8: a coup d'état (four of a kind and a Joker, or three and two Jokers) or a
        guillotine (four and two Jokers), on one's turn whatever the trick (Wikilivres: "Le
        coup d'État peut être posé n'importe quand lors de la partie")."""
        o = state.options
        if not (o.coup_d_etat or o.guillotine):
            return []
        spec = state.spec
        n = spec.n_ranks
        jokers = counts[n] + counts[n + 1]
        if not jokers:
            return []
        names = spec.rank_names
        out: list[Action] = []
        for r in spec.order[state.reversed]:
            k = counts[r]
            if o.coup_d_etat:
                if k >= 4:
                    out.append(coup_action("coup_d_etat", names[r], 4, 1))
                if k >= 3 and jokers >= 2:
                    out.append(coup_action("coup_d_etat", names[r], 3, 2))
            if o.guillotine and k >= 4 and jokers >= 2:
                out.append(coup_action("guillotine", names[r], 4, 2))
        return out

    def _play_run(self, state: PresidentState, seat: int, r: int, length: int, count: int) -> None:
        """PV-13: ``count`` cards of each of ``length`` ranks from ``r`` up."""
        spec = state.spec
        order, low = spec.order[state.reversed], spec.pos[state.reversed][r]
        played: list[int] = []
        for i in range(low, low + length):
            played += self._take(state, seat, order[i], count, 0)
        event: dict[str, JSON] = {
            "type": "run",
            "seat": seat,
            "rank": spec.rank_names[r],
            "length": length,
            "count": count,
        }
        self._face_up(state, event, played)
        self._settle(state, seat, r, count, 0, length)

    def _open_rapidite(self, state: PresidentState, seat: int, r: int) -> None:
        """PV-14: the seats holding every card of the rank not yet on the trick may throw
        them (ruling: the cards set aside by PR-3 excepted), clockwise from the seat after
        the last player.  At most one seat can hold them all; the window is still asked
        in priority order, as a reaction window."""
        need = state.in_round[r] - state.on_trick[r]
        if need <= 0:
            return
        window = []
        s = seat
        for _ in range(state.n_players - 1):
            s = state.after[s]
            if state.active[s] and state.counts[s][r] >= need:
                window.append(s)
        if window:
            state.window = window
            state.window_rank = r
            state.window_need = need
            state.phase = "rapidite"

    def _resolve_rapidite(
        self, state: PresidentState, requests: list[Request], answers: Mapping[int, Action]
    ) -> None:
        thrower = first_in_priority(requests, answers, "throw")
        state.phase = "play"
        state.window = []
        if thrower is None:
            return  # the turn that was next goes on
        r, need = state.window_rank, state.window_need
        played = self._take(state, thrower, r, need, 0)
        event: dict[str, JSON] = {
            "type": "throw",
            "seat": thrower,
            "rank": state.spec.rank_names[r],
            "count": need,
        }
        self._face_up(state, event, played)
        # ruling: the thrower is now the last player, and play goes on after them
        self._settle(state, thrower, r, need, 0, thrown=True)

    def _coup(
        self, state: PresidentState, seat: int, kind: str, r: int, count: int, jokers: int
    ) -> None:
        """PV-8: the player becomes Président at once and the round ends."""
        played = self._take(state, seat, r, count - jokers, jokers)
        event: dict[str, JSON] = {
            "type": kind,
            "seat": seat,
            "rank": state.spec.rank_names[r],
            "count": count,
            "jokers": jokers,
        }
        self._face_up(state, event, played)
        standing = self._standing(state, seat)
        if kind == "coup_d_etat":
            # Wikilivres: "Le Président déchu vient prendre la place de celui qui a posé le
            # coup d'État"
            i = standing.index(seat)
            standing[0], standing[i] = standing[i], standing[0]
            self._end_round(state, standing, "coup_d_etat")
        else:  # Wikilivres: "décide qui sera le Balayeur, et il choisit son Premier Ministre"
            state.guillotine = (seat, standing)
            state.phase = "guillotine"
            state.turn = seat

    def _name(self, state: PresidentState, action: Action) -> None:
        """PV-8 guillotine: the player first, the Vice-Président named second, the Trou du
        Cul named last, the others between in their standing."""
        assert state.guillotine is not None
        seat, standing = state.guillotine
        state.guillotine = None
        trou, vice = action["trou_du_cul"], action.get("vice_president")
        event: dict[str, JSON] = {"type": "named", "seat": seat, "trou_du_cul": trou}
        head = [seat]
        if vice is not None:
            event["vice_president"] = vice
            head.append(vice)
        state.emit(event)
        order = head + [s for s in standing if s not in head and s != trou] + [trou]
        self._end_round(state, order, "guillotine")
