"""Président's views: what a seat may see (docs/rules/president.md, "What each seat may
see") and what the audience sees.  Mixed into :class:`President`.
"""

from __future__ import annotations

from arena.games.base import JSON
from arena.games.president.state import PresidentState


class Views:
    """The seat's view and the spectator's."""

    def view(self, state: PresidentState, seat: int) -> dict[str, JSON]:
        """The seat's information set (rules, "What each seat may see").

        A view shares the state's lists and dicts instead of copying them: the engine
        replaces such a piece when it changes and never alters one it has shown, so a
        view stays what it was when built.  Views are read-only for their users."""
        spec = state.spec
        top = state.top_rank
        view = {
            "seat": seat,
            "round": state.round,
            "phase": state.phase,
            "turn": state.turn,
            "cards": state.hand_view[seat],
            "hand_sizes": state.sizes,
            "rank_order": spec.order_names[state.reversed],
            "reversed": state.reversed,
            "table": state.table,
            "dealer": state.dealer,
            "roles": state.roles,
            "scores": state.scores,
            "leftover": state.leftover_view,
            "places": state.places,
            "played": state.played_view,
            "trick": {
                "rank": None if top is None else spec.rank_names[top],
                "count": state.top_count,
                "jokers": state.top_jokers,
                "by": state.last_player,
                "passes": state.passes,
                "forced": state.run >= 2,
                "plays": state.trick,
            },
            "exchange": state.exchanged[seat],
            "events": state.events_for(seat, state.shown_upto[seat]),
        }
        if state.extra_view:
            o = state.options
            if o.suites:  # PV-13: 1 for a set, 3 or more for a run
                view["trick"]["length"] = state.top_length
            if o.putsch:  # PV-9: public, it was announced
                view["putsch"] = state.putschist
            if state.menteur:  # PV-15
                # the cards this seat laid face down on the trick (its own knowledge), the
                # announcement it is laying cards for, the one the others may call
                view["face_down"] = state.down_view[seat]
                announcing = state.announcing
                view["announcing"] = (
                    announcing[1] if announcing is not None and announcing[0] == seat else None
                )
                view["announced"] = state.announced_view
        return view

    def spectator_view(self, state: PresidentState, reveal: bool = False) -> dict[str, JSON]:
        view = self.view(state, 0)
        del view["events"]
        # PR-3: hands are private, and PR-10: so are the exchanged cards; the revealed
        # table shows every hand and every exchange
        view["seat"] = None
        view["cards"] = None
        view["hands"] = list(state.hand_view) if reveal else None
        view["exchange"] = None
        view["exchanges"] = list(state.exchanged) if reveal else None
        if state.phase == "rapidite" and not reveal:
            # PV-14: a window is asked of a seat holding the rest of the rank; the audience
            # may not learn that it exists, so it sees the turn that follows
            view["phase"] = "play"
        if state.menteur:  # PV-15: the face-down cards and an announcement being laid
            names = state.spec.names
            view["face_down"] = list(state.down_view) if reveal else None
            view["announcing"] = state.announcing[1] if reveal and state.announcing else None
            if reveal:
                view["played"] = {
                    "cards": [names[c] for c in state.pile],
                    "face_down": len(state.pile),
                }
        return view
