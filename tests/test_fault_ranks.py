"""Faults rank last, in every game and at every table size: a seat that answered as asked
ranks above every struck-out seat, and a struck-out seat that answered at least once
ranks above every seat that forfeited (not one usable answer); forfeited seats tie for
last.  Matches are played by the referee with in-process random policies and one or two
faulty clients."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest

from arena.games import GAMES, make_policy
from arena.match.exchanges import Client
from arena.match.records import check
from arena.match.referee import PolicyClient, Referee, policy_rng
from tests.support.faults import MAX_STRIKES, AnswersOnce, Down

ANSWERED, STRUCK_OUT, FORFEITED = 0, 1, 2  # the tiers, best first


FAULTY = {"forfeits": (Down, FORFEITED), "strikes out": (AnswersOnce, STRUCK_OUT)}
SCENARIOS = [("forfeits",), ("strikes out",), ("forfeits", "strikes out"), ("forfeits",) * 2]
TABLES = [
    (game_id, seats)
    for game_id, game in GAMES.items()
    for seats in range(game.min_players, game.max_players + 1)
]


def tiers(record: Any) -> list[int]:
    """Each seat's tier, read from its decisions (not from the referee's lists)."""
    answers = [0] * len(record.players)
    faults = [0] * len(record.players)
    asked = [False] * len(record.players)
    for step in record.steps:
        for decision in step:
            seat = decision["seat"]
            asked[seat] = True
            if "fault" not in decision:
                answers[seat] += 1
            elif decision["fault"] != "struck_out":
                faults[seat] += 1
    return [
        FORFEITED
        if asked[seat] and not answers[seat]
        else STRUCK_OUT
        if faults[seat] >= MAX_STRIKES
        else ANSWERED
        for seat in range(len(record.players))
    ]


def sign(x: int) -> int:
    return (x > 0) - (x < 0)


@pytest.mark.parametrize(("game_id", "n_seats"), TABLES)
def test_faulty_seats_rank_below_every_seat_that_answered(game_id: str, n_seats: int):
    for number, scenario in enumerate(SCENARIOS):
        seed = 100 * n_seats + number
        where_faulty = random.Random(f"{game_id}:{seed}").sample(range(n_seats), len(scenario))
        faulty = dict(zip(where_faulty, scenario, strict=True))
        clients: list[Client] = []
        for seat in range(n_seats):
            policy = make_policy(game_id, "random", policy_rng(seed, seat))
            if faulty.get(seat) == "forfeits":
                clients.append(Down(f"down{seat}"))
            elif faulty.get(seat) == "strikes out":
                clients.append(AnswersOnce(policy, f"once{seat}"))
            else:
                clients.append(PolicyClient(policy, f"random{seat}"))
        record = Referee(max_strikes=MAX_STRIKES).run(game_id, clients, seed)
        where = f"{game_id}, {n_seats} seats, faulty seats {faulty}"
        tier = tiers(record)
        # each faulty client did what it was built for
        assert [tier[seat] for seat in faulty] == [FAULTY[k][1] for k in faulty.values()], where
        outcome = record.outcome
        ranks, game_ranks = outcome["ranks"], outcome.get("game_ranks", outcome["ranks"])
        assert outcome["forfeited"] == [s for s in range(n_seats) if tier[s] == FORFEITED]
        assert set(outcome["struck_out"]) >= {s for s in range(n_seats) if tier[s] == STRUCK_OUT}
        for a, b in itertools.permutations(range(n_seats), 2):
            if tier[a] < tier[b]:
                assert ranks[a] < ranks[b], where
            elif tier[a] == tier[b] == FORFEITED:
                assert ranks[a] == ranks[b], where  # the defaults played are not its play
            elif tier[a] == tier[b]:  # the game's own order among equals
                assert sign(ranks[a] - ranks[b]) == sign(game_ranks[a] - game_ranks[b]), where
        assert min(ranks) == 1 and check(record.to_json()) == [], where
