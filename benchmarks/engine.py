"""Engine speed: random play, games/s and answers/s, with and without views.

    python benchmarks/engine.py [--seconds 3] [--games cactus,president] [--smoke]

An *answer* is one seat's action in one step (a reaction window asked of four seats is
four answers).  "with views" builds the view of every seat asked, each step, as the
referee does before it asks a bot.  Runs pinned to one core.

When ``open_spiel`` is installed (``pip install -e .[bench]``) it also measures
OpenSpiel's C++ ``dou_dizhu`` under the same random play, with ``observation_string``
for the acting player as its "view", in the same run, and prints our ratio to it.
``--smoke``: 0.05 s per measurement (one game at least).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import parse_args, print_versions

from arena.games import GAMES

# (label, game id, players, options)
CONFIGS = [
    ("cactus classic", "cactus", 4, {"preset": "classic"}),
    ("cactus pagat", "cactus", 4, {"preset": "pagat"}),
    ("cactus-game", "cactus-game", 4, {}),
    ("president", "president", 4, {}),
]


def play_ours(game_id: str, players: int, options: dict, views: bool, seed: int) -> int:
    """One random match; returns the number of answers."""
    game = GAMES[game_id]
    chooser = random.Random(seed)
    state = game.new_state(players, seed, options)
    pending, apply, view, choice = game.pending, game.apply, game.view, chooser.choice
    answers = 0
    while requests := pending(state):
        if views:
            for r in requests:
                view(state, r.seat)
        apply(state, {r.seat: choice(r.legal_actions) for r in requests})
        answers += len(requests)
    return answers


def play_dou_dizhu(pyspiel_game, observe: Callable[[Any, int], object] | None, seed: int) -> int:
    """One random match of OpenSpiel's dou_dizhu; ``observe(state, player)`` before each
    decision (the baseline's "view"); returns the decisions made (chance nodes aside)."""
    chooser = random.Random(seed)
    state = pyspiel_game.new_initial_state()
    answers = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(chooser.choices(outcomes, probs)[0])
            continue
        if observe is not None:
            observe(state, state.current_player())
        state.apply_action(chooser.choice(state.legal_actions()))
        answers += 1
    return answers


def observation_string(state: Any, player: int) -> object:
    return state.observation_string(player)


def measure(play: Callable[[int], int], seconds: float) -> tuple[float, float]:
    """(games/s, answers/s) over whole games played for about ``seconds``."""
    games = answers = 0
    started = time.perf_counter()
    while (elapsed := time.perf_counter() - started) < seconds or games == 0:
        answers += play(games)
        games += 1
    return games / elapsed, answers / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="per measurement")
    parser.add_argument("--games", help="comma-separated labels' game ids to run")
    args = parse_args(parser, smoke={"seconds": 0.05})
    print_versions("open_spiel")
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})

    try:
        import pyspiel
    except ImportError:
        pyspiel = None

    rows = []
    baseline: float | None = None
    if pyspiel is not None:
        ddz = pyspiel.load_game("dou_dizhu")
        for views in (False, True):
            g, a = measure(
                lambda i, v=views: play_dou_dizhu(ddz, observation_string if v else None, i),
                args.seconds,
            )
            rows.append(("openspiel dou_dizhu (C++)", views, g, a))
            if views:
                baseline = a
    wanted = set(args.games.split(",")) if args.games else None
    for label, game_id, players, options in CONFIGS:
        if game_id not in GAMES or (wanted and game_id not in wanted):
            continue
        for views in (False, True):
            g, a = measure(
                lambda i, gid=game_id, p=players, o=options, v=views: play_ours(gid, p, o, v, i),
                args.seconds,
            )
            rows.append((f"{label} ({players}p)", views, g, a))

    print(f"{'engine':<28}{'views':>6}{'games/s':>11}{'answers/s':>12}{'vs dou_dizhu':>14}")
    for label, views, g, a in rows:
        ratio = f"{a / baseline:>13.2f}x" if baseline and views else f"{'':>14}"
        print(f"{label:<28}{'yes' if views else 'no':>6}{g:>11.1f}{a:>12.0f}{ratio}")
    if baseline is None:
        print("\n(open_spiel not installed: pip install -e .[bench] for the dou_dizhu baseline)")


if __name__ == "__main__":
    main()
