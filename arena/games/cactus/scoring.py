"""Cactus's scoring: the end of a round (every layout revealed, CL-6, CL-7), its scores
under each scoring of CL-8 and PG-5, who starts the next round (CA-11, PG-6), and the end
of the match.  Mixed into :class:`~arena.games.cactus.engine.Cactus`, whose
``_start_round`` starts the next round.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from arena.games import cards
from arena.games.base import JSON, Outcome, competition_ranks

if TYPE_CHECKING:
    from arena.games.cactus.engine import CactusState

CACTUS_LIMIT = 5  # CL-6, CL-7: a total of 5 or less "has cactus"


class Scoring:
    """Rounds scored, matches finished, and the scores a view shows."""

    def _end_round(self, state: CactusState) -> None:
        o, n = state.options, state.n_players
        totals = [sum(state.value[c] for c in layout.values()) for layout in state.layouts]
        state.emit(
            {
                "type": "reveal",
                "layouts": [
                    [{"slot": s, "card": cards.name(c)} for s, c in layout.items()]
                    for layout in state.layouts
                ],
                "totals": totals,
            }
        )
        cactus = [t <= CACTUS_LIMIT for t in totals]  # CL-7
        caller = state.caller
        result: dict[str, JSON] = {
            "round": state.round,
            "totals": totals,
            "caller": caller,
            "cactus": cactus,
        }
        round_scores: list[int]
        if o.scoring == "wins":
            best = min((t for t, c in zip(totals, cactus, strict=True) if c), default=None)
            winners = [s for s in range(n) if cactus[s] and totals[s] == best]
            for s in winners:
                state.wins[s] += 1
            for s in range(n):
                state.sum_totals[s] += totals[s]
            result["winners"] = winners
            round_scores = totals
        elif o.scoring == "tas_de_merde":
            draws: dict[str, JSON] = {}
            for s in range(n):
                if cactus[s]:
                    continue
                card = state.rng.randrange(cards.CARDS_PER_DECK)  # a fresh seeded draw
                if cards.rank(card) == "7" and state.has_drawn_tally[s]:
                    state.tally[s] = 0  # the flush, except on a first ever draw
                else:
                    state.tally[s] += o.values[cards.rank(card)]
                state.has_drawn_tally[s] = True
                draws[str(s)] = cards.name(card)
                state.emit(
                    {"type": "tas_de_merde", "player": s, "card": cards.name(card),
                     "tally": state.tally[s]}
                )  # fmt: skip
            result["tally"] = list(state.tally)
            round_scores = totals
        elif o.scoring == "maximus":
            round_scores = [
                (2 if t == 0 else 1) if c else 0 for t, c in zip(totals, cactus, strict=True)
            ]
            if caller is not None and totals[caller] > CACTUS_LIMIT:
                round_scores[caller] = -1  # a wrong call
            for s in range(n):
                state.points[s] += round_scores[s]
            result["points"] = round_scores
        else:  # PG-5
            round_scores = _pagat_penalties(totals, caller)
            for s in range(n):
                state.penalty[s] += round_scores[s]
            result["penalties"] = round_scores
        state.round_results.append(result)
        state.emit({"type": "round_result", **result})
        if self._match_over(state):
            self._finish(state)
            return
        # CA-11 / CL-8 maximus / PG-6: who starts the next round
        state.dealer = (state.dealer + 1) % n
        state.starter = (state.dealer + 1) % n
        if o.scoring == "maximus" and caller is not None and totals[caller] <= CACTUS_LIMIT:
            state.starter = (caller + 1) % n  # the seat after the "grand cactus"
        elif o.next_round == "lowest_score":
            low = min(round_scores)
            state.starter = state.rng.choice([s for s in range(n) if round_scores[s] == low])
        state.dealer = (state.starter - 1) % n
        self._start_round(state)

    def _match_over(self, state: CactusState) -> bool:
        o = state.options
        if o.scoring in ("wins", "tas_de_merde"):
            return state.round >= o.rounds
        if state.round >= o.max_rounds:
            return True
        if o.scoring == "maximus":
            top = max(state.points)
            return top >= o.maximus_target and state.points.count(top) == 1
        return max(state.penalty) >= o.target  # PG-6

    def _finish(self, state: CactusState) -> None:
        o, n = state.options, state.n_players
        if o.scoring == "wins":
            keys: list[Any] = [(-state.wins[s], state.sum_totals[s]) for s in range(n)]
            scores: list[float] = list(state.wins)
        elif o.scoring == "tas_de_merde":
            keys, scores = list(state.tally), list(state.tally)
        elif o.scoring == "maximus":
            keys, scores = [-p for p in state.points], list(state.points)
        else:
            keys, scores = list(state.penalty), list(state.penalty)
        state.phase = "over"
        state.result = Outcome(competition_ranks(keys), scores, state.round_results)
        state.emit({"type": "match_over", "ranks": state.result.ranks, "scores": scores})

    def _scores(self, state: CactusState) -> dict[str, JSON]:
        scoring = state.options.scoring
        if scoring == "wins":
            return {"wins": state.wins, "sum_totals": state.sum_totals}
        if scoring == "tas_de_merde":
            return {"tally": state.tally}
        if scoring == "maximus":
            return {"points": state.points}
        return {"penalty": state.penalty}


def _pagat_penalties(totals: list[int], caller: int | None) -> list[int]:
    """PG-5: the caller scores 0 only if strictly lowest, else total + 10; a non-caller at
    or below the caller scores 0.  Without a caller (the turn cap) every total counts."""
    if caller is None:
        return list(totals)
    c = totals[caller]
    scores = []
    for seat, total in enumerate(totals):
        if seat == caller:
            lowest = all(t > c for s, t in enumerate(totals) if s != caller)
            scores.append(0 if lowest else c + 10)
        else:
            scores.append(0 if total <= c else total)
    return scores
