"""The leak oracle's tables, one per game, written from shared/rules and owned by the tests.

Each table says which event types exist and who may see their cards, where every card
lies in the true state, which locations are public or a seat's own, what an action lets a
seat see, and where a view may show a card.  Nothing here reads the engine's visibility
decisions (event tags, what a state records as known): a new event type or a new place in
a view that names a card fails the oracle until a person classifies it here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain
from typing import Any

from arena.games import cards
from arena.games.base import Event, first_in_priority
from arena.games.cactus_game.engine import KINDS
from arena.games.president.engine import JOKERS, TROU, VICE_TROU
from tests.support.contract import WORD, Leak, LeakTable, Location, Path, Step, private, public


def _player(data: Mapping[str, Any], log: Sequence[Event], i: int) -> set[int]:
    return {data["player"]}


def _seat(data: Mapping[str, Any], log: Sequence[Event], i: int) -> set[int]:
    return {data["seat"]}


def _player_and_victim(data: Mapping[str, Any], log: Sequence[Event], i: int) -> set[int]:
    return {data["player"], data["from"]}


def _players(data: Mapping[str, Any], log: Sequence[Event], i: int) -> set[int]:
    return set(data["players"])


def _giver_and_receiver(data: Mapping[str, Any], log: Sequence[Event], i: int) -> set[int]:
    return {data["giver"], data["receiver"]}


def _peeker(data: Mapping[str, Any], log: Sequence[Event], i: int) -> set[int]:
    """PG-3 peek_other: the seat that used the power on this slot, as the public power
    event just before says; nobody if there is none."""
    for j in range(i - 1, -1, -1):
        before = log[j].data
        if before["type"] == "power":
            if (before.get("power"), before.get("target"), before.get("slot")) == (
                "peek_other",
                data["player"],
                data["slot"],
            ):
                return {before["player"]}
            break
    return set()


# -- Cactus (rules/cactus.md) ---------------------------------------------------------------

HAND = ("hand",)  # the card drawn or taken this turn
DISCARD = ("discard",)


class CactusTable(LeakTable):
    game_id = "cactus"
    identities = frozenset(cards.NAMES)  # CA-1: names repeat across decks
    events = {
        "deal": public("CA-3: layouts are dealt face down, slot ids only"),
        "turn": public("CA-5"),
        "draw": public("CA-5: who drew from where, not the card"),
        "draw_skipped": public("CA-4"),
        "drawn": private("CA-5: the drawer looks at the card drawn", _player, "card"),
        "take_discard": public("CA-5: the discard is face up", "card"),
        "swap": public("CA-5: the old slot card goes face up onto the discard", "card"),
        "discard": public("CA-5: a discarded card is face up", "card"),
        "power": public("PG-3, CL-2, CL-3: powers used, not what was seen"),
        "initial_peek": private("CL-1, PG-1: the owner sees its own slots", _player, "seen"),
        "eight_peek": private("CL-2, CL-3: the owner peeks at its own slot", _player, "seen"),
        "power_peek": private("PG-3 peek: the owner peeks at its own slot", _player, "seen"),
        "seen": private("PG-3 peek_other: only the peeker sees the card", _peeker, "card"),
        "snap": public("CA-8: a thrown card is face up", "card"),
        "penalty_card": public("CL-5, PG-4: penalty cards come unseen"),
        "call": public("CA-7"),
        "reshuffle": public("CA-4: the discard becomes the stock face down"),
        "reveal": public("CA-10: all layouts are revealed", "layouts"),
        "round_result": public("CL-7, CL-8, PG-5"),
        "tas_de_merde": public("CL-8: a card from a fresh shuffle, shown", "card"),
        "match_over": public("CL-8, PG-6"),
    }

    def truth(self, state: Any, memo: dict[Any, Any]) -> dict[Location, tuple[Any, ...]]:
        where: dict[Location, tuple[Any, ...]] = {
            ("layout", owner, slot): (card,)
            for owner, layout in enumerate(state.layouts)
            for slot, card in layout.items()
        }
        where[DISCARD] = tuple(state.discard)
        if state.hand is not None:
            where[HAND] = (state.hand,)
        return where

    def names(self, state: Any, tokens: tuple[Any, ...]) -> Counter[str]:
        return Counter(map(state.names.__getitem__, tokens))

    def deal(self, state: Any) -> Any:
        return state.round

    def open_to(self, state: Any, seat: int, location: Location) -> bool:
        return location == DISCARD  # the rules' legal view: the discard pile, all face up

    def learned(self, state: Any, step: Step) -> Iterable[tuple[int, Location]]:
        seats = range(state.n_players)
        if step.new_deal:  # CA-3: nobody sees a layout card, except by CL-1
            if state.options.initial_peek == "bottom_row":
                return [(s, ("layout", s, slot)) for s in seats for slot in (2, 3)]
            return []
        if step.answers is None:
            return []
        requests, answers = step.requests, step.answers
        kind = requests[0].kind
        if kind == "initial_peek":  # PG-1: each seat sees the two slots it chose
            return [
                (s, ("layout", s, slot))
                for s, action in answers.items()
                for slot in action["slots"]
            ]
        if kind == "snap":
            thrower = first_in_priority(list(requests), answers, "snap")
            if thrower is None:
                return []
            where = ("layout", thrower, answers[thrower]["slot"])
            if where in step.after and step.before.get(where) == step.after[where]:
                return [(s, where) for s in seats]  # PG-4: a wrong throw goes back, seen
            return []
        player = requests[0].seat
        action = answers[player]
        kind = action["type"]
        if kind == "draw":  # CA-5: the drawer looks at the card
            return [(player, HAND)]
        if kind == "take_discard":  # CA-5: the top discard is face up
            return [(s, HAND) for s in seats]
        if kind == "swap":  # CA-5: whoever saw the card in hand saw where it went
            slot = ("layout", player, action["slot"])
            return [(s, slot) for s in seats if step.knew(s, HAND)]
        if kind == "peek":  # CL-2, CL-3, PG-3: one's own slot
            return [(player, ("layout", player, action["slot"]))]
        if kind == "peek_other":  # PG-3: another player's slot, to the peeker only
            return [(player, ("layout", action["player"], action["slot"]))]
        return []  # discard, blind_swap (PG-3: neither card seen), skip, call, pass

    def locate(self, view: Mapping[str, Any], seat: int, path: Path) -> Location | None:
        if path == ("drawn",):
            return HAND
        if len(path) == 2 and path[0] == "discard":
            return DISCARD
        if len(path) == 4 and path[0] == "layouts" and path[3] == "card":
            try:
                slot = view["layouts"][path[1]][path[2]]["slot"]
            except (KeyError, IndexError, TypeError):
                return None
            return ("layout", path[1], slot)
        return None


# -- Cactus Game (rules/cactus-game.md) ------------------------------------------------------


class CactusGameTable(LeakTable):
    game_id = "cactus-game"
    identities = frozenset(KINDS)  # CG-1: a card is its kind; copies are alike
    embedded = frozenset({("this_turn",), ("chain",)})  # the plays of this turn, public
    events = {
        "deal": public("CG-3: hand sizes only"),
        "dealt": private("CG-3: each player sees its own hand", _player, "cards"),
        "turn": public("CG-4"),
        "draw": private("CG-5, CG-6, CG-13: drawn cards go to the drawer's hand", _player, "cards"),
        "reshuffle": public("CG-8: the discard becomes the draw pile face down"),
        "gain": public("CG-7, CG-9, CG-10: the reason names the played Free Point", "reason"),
        "game_over": public("CG-20, CG-21"),
        "play_set": public("CG-7: a set is played face up", "cards"),
        "play": public(
            "CG-10..CG-16: face up, targets and the named kind said aloud", "card", "named"
        ),
        "stop": public("CG-17, CG-18: a Stop is played face up", "card"),
        "resolve": public("CG-17, CG-18: the played card's fate", "card"),
        "swap_hands": private("CG-11: each of the two knows both hands", _players, "cards"),
        "look": private("CG-12: the player looks at the target's hand", _player, "cards"),
        "take": private("CG-12: the card taken, to the two players", _player_and_victim, "card"),
        "steal_point": public("CG-14: Points lie face up"),
        "ask": public("CG-15: the named kind and whether it was given are public", "named", "card"),
        "steal_card": private(
            "CG-16: the card stolen, to the two players", _player_and_victim, "card"
        ),
    }

    def truth(self, state: Any, memo: dict[Any, Any]) -> dict[Location, tuple[Any, ...]]:
        where: dict[Location, tuple[Any, ...]] = {
            ("hand", seat): tuple(sorted(hand)) for seat, hand in enumerate(state.hands)
        }
        where[DISCARD] = tuple(state.discard)
        return where

    def open_to(self, state: Any, seat: int, location: Location) -> bool:
        return location == DISCARD or location == ("hand", seat)

    def learned(self, state: Any, step: Step) -> Iterable[tuple[int, Location]]:
        if state.phase == "take":  # CG-12: the player looked at the target's whole hand
            return [(state.player, ("hand", state.looked[0]))]
        return []

    def locate(self, view: Mapping[str, Any], seat: int, path: Path) -> Location | None:
        if path in (("phase",), ("decision",)):
            return WORD  # "stop" is a phase and a decision as well as a card
        if len(path) == 3 and path[1] == "cards":
            if path[0] == "hand":
                return ("hand", seat)
            if path[0] == "discard":
                return DISCARD
            if path[0] == "looked":
                player = view["looked"].get("player")
                return ("hand", player) if type(player) is int else None
        return None


# -- Président (rules/president.md) ------------------------------------------------------


class PresidentTable(LeakTable):
    game_id = "president"
    identities = frozenset(cards.NAMES) | frozenset(JOKERS)  # PR-1, PV-3, PV-16
    embedded = frozenset({("trick", "plays")})  # the plays and passes of this trick
    events = {
        "deal": public("PR-3: hand sizes only"),
        "hand": private("PR-3: each player sees its own hand", _seat, "cards"),
        "leftover": public("PR-3: the cards left over are shown to all", "cards"),
        "exchange": public("PR-10: who gives how many to whom"),
        "exchange_cards": private(
            "PR-10: the cards, to the two seats", _giver_and_receiver, "cards"
        ),
        "play": public("PR-5: cards are played face up", "cards", "rank"),
        "pass": public("PR-5, PR-6"),
        "revolution": public("PV-7: the rank order"),
        "out": public("PR-8"),
        "trick_over": public("PR-6, PR-7, PV-5, PV-12, PV-15: who leads, and why"),
        "round_over": public("PR-9, PR-12, PV-8, PV-9, PV-10: the order, roles and points"),
        "match_over": public("PR-12"),
        "run": public("PV-13: a run is played face up", "cards", "rank"),
        "throw": public("PV-14: a rapidité is thrown face up", "cards", "rank"),
        "wizz": public("PV-12: who is skipped"),
        "coup_d_etat": public("PV-8: the coup is laid face up", "cards", "rank"),
        "guillotine": public("PV-8: the guillotine is laid face up", "cards", "rank"),
        "named": public("PV-8: the guillotine's Vice-Président and Trou du Cul, said aloud"),
        "putsch": public("PV-9: the Trou du Cul cancels every exchange aloud"),
        "jeu_blanc": public("PV-10: who becomes Président without play, not the hand"),
        # a Joker's rank is its name: an announced Joker names no card that was laid
        "announce": public("PV-15: the announced rank and count, never the cards", "rank"),
        "laid": private("PV-15: cards laid face down, to their player only", _seat, "cards"),
        "menteur": public("PV-15: a call turns the announced cards over", "cards"),
        "pick_up": private("PV-15: the trick's cards, to whoever picks them up", _seat, "cards"),
    }

    def truth(self, state: Any, memo: dict[Any, Any]) -> dict[Location, tuple[Any, ...]]:
        where: dict[Location, tuple[Any, ...]] = {
            ("hand", seat): tuple(chain.from_iterable(hand))
            for seat, hand in enumerate(state.hands)
        }
        # face up (PR-5), or with menteur face down (PV-15): open_to tells them apart
        where[("pile",)] = tuple(state.pile)
        where[("leftover",)] = tuple(state.leftover)
        if state.options.menteur:  # PV-15: what each seat laid face down on this trick
            for seat, down in enumerate(state.down):
                where[("down", seat)] = tuple(down)
        where.update(memo)  # the cards each seat gave and received this round (PR-10)
        return where

    def names(self, state: Any, tokens: tuple[Any, ...]) -> Counter[str]:
        if tokens and type(tokens[0]) is str:  # an exchange: names already
            return Counter(tokens)
        return Counter(map(state.spec.names.__getitem__, tokens))

    def deal(self, state: Any) -> Any:
        return state.round

    def open_to(self, state: Any, seat: int, location: Location) -> bool:
        return (
            location == ("leftover",)  # PR-3: face up
            or (location == ("pile",) and not state.options.menteur)  # PR-5; PV-15: face down
            or location == ("hand", seat)
            or (location[0] == "exchange" and location[1] == seat)  # PR-10
            or location == ("down", seat)  # PV-15: its own cards laid face down
        )

    def witness(self, state: Any, events: list[dict[str, Any]], memo: dict[Any, Any]) -> None:
        """PR-10: an exchange's cards are what the two seats may keep seeing all round.
        They are checked against the truth: in the receiver's hand, and for the forced
        gift the giver's strongest cards in the order in force (Jokers excepted, PV-3)."""
        spec = state.spec
        for data in events:
            if data["type"] != "exchange_cards":
                continue
            giver, receiver, given = data["giver"], data["receiver"], data["cards"]
            held = Counter(spec.names[c] for rank in state.hands[receiver] for c in rank)
            if Counter(given) - held:
                raise Leak(f"leak: exchange_cards names {given}, not in seat {receiver}'s hand")
            if state.roles[giver] in (TROU, VICE_TROU):  # the forced gift
                strength = spec.pos[state.reversed]
                weakest = min(strength[spec.rank_index[cards.rank_of_name(c)]] for c in given)
                kept = [
                    spec.names[c]
                    for rank in state.hands[giver][: spec.n_ranks]  # Jokers are never given
                    for c in rank
                    if strength[spec.rank_of[c]] > weakest
                ]
                assert not kept, f"PR-10: seat {giver} gave {given} but kept stronger {kept}"
            memo[("exchange", giver, "gave")] = tuple(given)
            memo[("exchange", receiver, "received")] = tuple(given)

    def locate(self, view: Mapping[str, Any], seat: int, path: Path) -> Location | None:
        if len(path) == 2 and path[0] == "cards":
            return ("hand", seat)
        if len(path) == 3 and path[1] == "cards" and path[0] in ("leftover", "played"):
            return ("leftover",) if path[0] == "leftover" else ("pile",)
        menteur = "face_down" in view["played"]  # PV-15: the table counts face-down cards
        if path == ("trick", "rank"):
            # a Joker's rank is its name: it was played (PV-3), or with menteur announced
            return WORD if menteur else ("pile",)
        if path in (("announced", "rank"), ("announcing", "rank")):
            return WORD  # PV-15: an announcement, not a card
        if len(path) == 3 and path[:2] == ("face_down", "cards"):
            return ("down", seat)  # PV-15
        if len(path) == 4 and path[0] == "exchange" and path[2] == "cards":
            return ("exchange", seat, path[1]) if path[1] in ("gave", "received") else None
        return None


TABLES: dict[str, LeakTable] = {
    table.game_id: table for table in (CactusTable(), CactusGameTable(), PresidentTable())
}
