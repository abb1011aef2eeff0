"""Planted bugs: one-line changes to the engines and encodings that the game's own tests
must catch (a mutation run).  Each :class:`Mutant` names the file, the exact text it
replaces (found once), the bug, and the rules it breaks; most sit where two rules act in
one play, the places random play and the leak oracle cannot judge.

``python -m tests.mutants`` plants them one at a time, runs the game's tests against each
and restores the file; it prints which were caught and which survived.  A survivor is
either a gap in the tests or a change that cannot alter behaviour (an *equivalent*
mutant): ``equivalent`` says why for those we have judged so.  tests/test_mutants.py checks
that every mutant still applies to the code as it stands.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mutant:
    game: str
    path: str
    before: str  # found exactly once in ``path`` (a line or part of one)
    after: str
    rules: str  # the rule ids the bug breaks, e.g. "PV-7 PV-4"
    bug: str  # what the change does, in the game's words
    equivalent: str = ""  # why no test can catch it, once judged so

    @property
    def name(self) -> str:
        return f"{self.game}:{self.path.rsplit('/', 1)[-1]}:{self.rules}: {self.bug}"


# the tests a mutant of each game runs against
GAME_TESTS: dict[str, list[str]] = {
    # the rule tables first: most mutants fall there, and -x stops at the first failure
    "president": [
        "tests/test_president_rules.py",
        "tests/test_president_variants.py",
        "tests/test_president_pairs*.py",
        "tests/test_president.py",
        "tests/test_encoding_president.py",
        "tests/test_learn_president.py",
    ],
    "cactus": [
        "tests/test_cactus.py",
        "tests/test_encoding_cactus.py",
        "tests/test_learn_cactus.py",
    ],
    "cactus-game": [
        "tests/test_cactus_game.py",
        "tests/test_encoding_cactus_game.py",
        "tests/test_learn_cactus_game.py",
    ],
}

ENGINE = "arena/games/president/engine.py"
SPECIAL = "arena/games/president/special_plays.py"
MENTEUR = "arena/games/president/menteur.py"
EXCHANGE = "arena/games/president/exchange.py"
ROUNDS = "arena/games/president/rounds.py"
CACTUS_ENCODING = "arena/games/cactus/encoding.py"
CG_ENCODING = "arena/games/cactus_game/encoding.py"


def P(path: str, before: str, after: str, rules: str, bug: str, equivalent: str = "") -> Mutant:
    return Mutant("president", path, before, after, rules, bug, equivalent)


MUTANTS: list[Mutant] = [
    # -- legal plays where two variants meet ------------------------------------------------
    P(
        ENGINE,
        "if o.jokers and not state.wild:",
        "if o.jokers:",
        "PV-13 PV-3",
        "a wild Joker is offered alone on a run",
    ),
    P(
        ENGINE,
        "out += [plays[j][1][0] for j in (n, n + 1) if counts[j]]",
        "out += [plays[j][1][0] for j in (n + 1,) if counts[j]]",
        "PV-13 PV-3",
        "the black Joker is not offered on a run",
    ),
    P(
        ENGINE,
        "return out + self._coups(state, counts)\n        jokers",
        "return out\n        jokers",
        "PV-13 PV-8",
        "no coup d'état on a run",
    ),
    P(
        ENGINE,
        "alone = [top] if top >= n and not state.wild else []",
        "alone = [top] if top >= n else []",
        "PV-6 PV-3",
        "quitte ou double on a Joker offers a wild Joker alone",
        "with joker_wild no Joker is ever played alone (PV-3), so a Joker never tops the trick",
    ),
    P(
        ENGINE,
        "alone = [top] + ([n + 1] if o.passe_breakers and top == n else [])",
        "alone = [top]",
        "PV-2 PV-3",
        "on a passe of black Jokers the coloured one no longer breaks it",
    ),
    P(
        ENGINE,
        "elif top != order[-1]:",
        "else:",
        "PV-2 PV-4",
        "on a passe of 2s the breaking 2 is offered twice",
    ),
    P(
        ENGINE,
        "ranks.append(order[-1])",
        "ranks.append(spec.order[0][-1])",
        "PV-2 PV-7",
        "after a revolution the 2, not the 3, breaks the passe",
    ),
    P(
        ENGINE,
        "alone = [j for j in alone if j > top or (state.equal_plays and j == top)]",
        "alone = [j for j in alone if j > top]",
        "PV-3 PV-5 PV-12",
        "with equal plays a Joker may not follow the same Joker",
    ),
    P(
        ENGINE,
        "if o.suites and top is None:  # PV-13: runs may be led",
        "if o.suites:  # PV-13",
        "PV-13 PR-5",
        "runs are offered on a set",
    ),
    P(
        ENGINE,
        "bare = state.wild and size > 0 and held[n] + held[n + 1] == size",
        "bare = state.wild and size > 0 and counts[n] + counts[n + 1] == size",
        "PV-3 PV-15",
        "a menteur hand of wild Jokers only may not announce the weakest rank",
    ),
    P(
        ENGINE,
        "if o.raise_count or o.wizz:  # PV-1, PV-12: as many cards or more",
        "if o.raise_count:  # PV-1",
        "PV-12 PR-5",
        "a wizz may not hold more cards than the play it follows",
    ),
    # -- a play's consequences --------------------------------------------------------------
    P(
        ENGINE,
        "same = equal and (not o.quitte_ou_double or count == prev_count)",
        "same = equal",
        "PV-6 PV-1",
        "quitte ou double binds after a raised equal play",
    ),
    P(
        ENGINE,
        "state.run = state.run + 1 if same else int(length == 1)",
        "state.run = state.run + 1 if same else 1",
        "PV-2 PV-13",
        "a run counts as the first of a passe",
        "only a run may follow a run, and a run is never an equal play: the count stays below "
        "the two that bind",
    ),
    P(
        ENGINE,
        "cut = any(order[i] in cut_ranks for i in range(low, low + length))",
        "cut = any(order[i] in cut_ranks for i in range(low, low + length - 1))",
        "PV-13 PR-7 PV-11",
        "a run that ends on the cutting rank does not cut",
    ),
    P(
        ENGINE,
        "complete = on_trick >= state.in_round[r] and naturals < on_trick",
        "complete = on_trick >= state.in_round[r]",
        "PV-5 PV-7",
        "a four of a kind alone makes a tabula rasa",
    ),
    P(
        ENGINE,
        "if o.tabula_rasa and complete and not cut:",
        "if o.tabula_rasa and complete:",
        "PV-5 PR-7",
        "a play that completes the rank and cuts ends the trick as a tabula rasa",
    ),
    P(
        ENGINE,
        "if size is not None and length == 1 and count >= size:",
        "if size is not None and count >= size:",
        "PV-7 PV-13",
        "a run of triples makes a revolution",
        "a run holds three cards of a rank at most (PV-13), fewer than a revolution's four",
    ),
    P(
        ENGINE,
        "forbidden = self._forbidden(state, r, jokers, length, reversed_order)",
        "forbidden = self._forbidden(state, r, jokers, length, state.reversed)",
        "PV-4 PV-7 PR-8",
        "a last four of 2s that makes a revolution is judged in the new order",
    ),
    P(
        ENGINE,
        "others = state.n_active - state.active[seat]",
        "others = state.n_active - 1",
        "PV-12 PR-8",
        "a wizz that finishes a hand skips one player too few",
    ),
    P(
        ENGINE,
        "if o.wizz and equal and not thrown:",
        "if o.wizz and equal:",
        "PV-12 PV-14",
        "a rapidité throw skips players as a wizz",
    ),
    P(
        ENGINE,
        "if o.rapidite and length == 1 and r < n and not thrown:",
        "if o.rapidite and r < n and not thrown:",
        "PV-14 PV-13",
        "a run opens a rapidité window",
        "a run's cards are not counted on the trick, so the cards awaited include the runner's "
        "own: no other seat can hold them all",
    ),
    P(
        ENGINE,
        "if spec.pos[reversed_order][r] + length - 1 == len(order) - 1 and r < spec.n_ranks:",
        "if spec.pos[reversed_order][r] == len(order) - 1 and r < spec.n_ranks:",
        "PV-4 PV-13",
        "a last run that ends on the 2s is no forbidden finish",
    ),
    P(
        ENGINE,
        "return o.no_finish_on_joker and (jokers > 0 or r >= spec.n_ranks)",
        "return o.no_finish_on_joker and r >= spec.n_ranks",
        "PV-3 PR-8",
        "finishing on a set with a wild Joker is allowed under no_finish_on_joker",
    ),
    P(
        ENGINE,
        "gone = first is not None or seat == putschist",
        "gone = first is not None",
        "PV-9 PV-4",
        "a putschist's forbidden finish does not fail the putsch at once",
    ),
    P(
        ENGINE,
        "leader = winner if state.active[winner] else state.next_active(winner)",
        "leader = winner",
        "PR-8 PR-7",
        "a player who went out on a cut still leads",
    ),
    # -- special plays ------------------------------------------------------------------------
    P(
        SPECIAL,
        "if o.guillotine and k >= 4 and jokers >= 2:",
        "if o.guillotine and k >= 4 and jokers >= 1:",
        "PV-8 PV-3",
        "a guillotine with one Joker",
    ),
    P(
        SPECIAL,
        "need = state.in_round[r] - state.on_trick[r]",
        "need = 4 - state.on_trick[r]",
        "PV-14 PR-3 PV-16",
        "the rapidité ignores cards set aside and the second deck",
    ),
    P(
        SPECIAL,
        "standing[0], standing[i] = standing[i], standing[0]",
        "standing[0], standing[i] = standing[i], standing[1]",
        "PV-8 PR-11",
        "the coup's player swaps with the wrong seat",
    ),
    # -- menteur ------------------------------------------------------------------------------
    P(
        MENTEUR,
        '            if size is not None and length == 1 and action["count"] >= size:  # PV-7\n',
        '            if size is not None and action["count"] >= size:  # PV-7\n',
        "PV-15 PV-7 PV-13",
        "a true run of triples called makes a revolution",
        "a run holds three cards of a rank at most (PV-13), fewer than a revolution's four",
    ),
    P(
        MENTEUR,
        "forbidden = self._forbidden(state, r, jokers, length, reversed_order)",
        "forbidden = self._forbidden(state, r, jokers, length, state.reversed)",
        "PV-15 PV-4 PV-7",
        "a true last four of 2s called is judged in the new order",
    ),
    P(
        MENTEUR,
        "honest = wild == jokers and got == claim",
        "honest = got == claim",
        "PV-15 PV-3",
        "an announcement with the wrong number of wild Jokers is true",
        "the cards laid are as many as announced, so the same natural cards as claimed leave "
        "room for exactly the Jokers claimed",
    ),
    P(
        MENTEUR,
        "if state.active[s] and state.sizes[s]:",
        "if state.active[s]:",
        "PV-15 PR-8",
        "a player with no card may call",
        "a player still in the round holds a card: only the announcer can be in the round "
        "with none, and the window never asks the announcer",
    ),
    # -- rounds: the round before a rule starts --------------------------------------------
    P(
        EXCHANGE,
        "if state.round > 1:",
        "if state.round >= 1:",
        "PR-10 PR-4",
        "round 1 has an exchange",
    ),
    P(
        EXCHANGE,
        "for r in reversed(spec.order[state.reversed]):",
        "for r in reversed(spec.order[0]):",
        "PR-10 PV-7",
        "a lasting revolution's exchange gives the strongest of the normal order",
    ),
    P(
        EXCHANGE,
        "blanc = [s for s in state.table if not any(state.counts[s][r] for r in high)]",
        "blanc = [s for s in state.table if not any(state.counts[s][r] for r in high[:-2])]",
        "PV-10 PV-3",
        "a hand whose only figure is a Joker is a jeu blanc",
    ),
    P(
        ROUNDS,
        "if state.round > 1:\n            if o.jeu_blanc",
        "if state.round >= 1:\n            if o.jeu_blanc",
        "PV-10 PV-9 PR-4",
        "a jeu blanc and a putsch in round 1",
    ),
    P(
        ROUNDS,
        "if o.putsch and table[-1] != penalty:",
        "if o.putsch:",
        "PV-9 PR-10",
        "a failed putschist may putsch again in the penalty round",
    ),
    P(
        ROUNDS,
        '            leader = table[-1] if o.later_lead == "trou_du_cul" else table[0]\n',
        '            leader = table[-1] if o.later_lead == "trou_du_cul" else table[1]\n',
        "PR-11 PR-4",
        "after_dealer: the Vice-Président leads later rounds",
    ),
    # -- encodings: every legal action an index, and the observation says what the view says
    Mutant(
        "cactus",
        CACTUS_ENCODING,
        'if view.get("eight_offer"):',
        'if view.get("eight_offered"):',
        "CL-3 CL-2",
        "the offer of a passed-on 8 is never encoded",
    ),
    Mutant(
        "cactus",
        CACTUS_ENCODING,
        "sorted(rows, key=_slot_of)[:MAX_POSITIONS]",
        "sorted(rows, key=_slot_of)[: MAX_POSITIONS - 1]",
        "CA-3 CL-5",
        "the sixteenth position of a grown layout is dropped",
    ),
    Mutant(
        "cactus",
        CACTUS_ENCODING,
        'k = (player - me) % view["players"]',
        'k = (me - player) % view["players"]',
        "PG-3 CA-3",
        "another seat's slot is named from the wrong side of the table",
    ),
    Mutant(
        "cactus",
        CACTUS_ENCODING,
        "if locked:",
        "if locked and False:",
        "CL-5",
        "a locked penalty card is not marked",
    ),
    Mutant(
        "cactus-game",
        CG_ENCODING,
        "player = stops[-1]",
        "player = stops[0]",
        "CG-18 CG-17",
        "a chain of several Stops names its first Stop's player on top",
    ),
    Mutant(
        "cactus-game",
        CG_ENCODING,
        "out[self.o_chain_cancelled] = 1.0",
        "pass",
        "CG-18",
        "an odd chain is not marked as cancelling the card",
    ),
    Mutant(
        "cactus-game",
        CG_ENCODING,
        'this_turn.append({"type": "stop", "card": kind})',
        'this_turn.append({"type": "play", "card": kind})',
        "CG-17 CG-4",
        "a Stop played this turn is explained as a card played",
    ),
    Mutant(
        "cactus-game",
        CG_ENCODING,
        "(me + rel) % n,",
        "(me - rel) % n,",
        "CG-12 CG-3",
        "a seat's row is read back to the seat on the other side",
    ),
]
