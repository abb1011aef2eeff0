"""Play matches in-process against the arena's house policies, without any server.

The bot is called with exactly the JSON objects the HTTP protocol would carry (each one
is encoded and decoded again), through the arena's own referee, so a bot that plays well
here plays the same over HTTP.  It needs the arena package (the repository that hosts
the tournaments) installed next to the SDK::

    python -m arenabot.local mybot:MyBot --game cactus --matches 20 --opponents random,heuristic
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from arenabot.bot import Bot, make_answer

ARENA_MISSING = (
    "arenabot.local plays matches with the arena's game engines, which are not installed: "
    "install the arena repository first (pip install -e /path/to/card-bot-arena)"
)


@dataclass
class Standing:
    """One entry's results over the matches played (the bot, or one opponent)."""

    name: str
    matches: int = 0
    wins: int = 0
    rank_sum: float = 0.0
    score_sum: float = 0.0
    decisions: int = 0
    faults: int = 0
    latency_ms: float = 0.0

    @property
    def win_rate(self) -> float:
        return self.wins / self.matches if self.matches else 0.0

    @property
    def mean_rank(self) -> float:
        return self.rank_sum / self.matches if self.matches else 0.0

    @property
    def mean_score(self) -> float:
        return self.score_sum / self.matches if self.matches else 0.0

    @property
    def mean_latency_ms(self) -> float:
        return self.latency_ms / self.decisions if self.decisions else 0.0


@dataclass
class LocalResult:
    """``standings[0]`` is the bot; ``records`` the match records (replays) as JSON."""

    game: str
    standings: list[Standing]
    records: list[dict[str, Any]] = field(default_factory=list)

    def table(self) -> str:
        lines = [
            f"{self.game}: {len(self.standings)} players, {len(self.records)} matches",
            f"{'player':<20}{'matches':>8}{'wins':>6}{'win %':>8}{'mean rank':>11}"
            f"{'mean score':>12}{'faults':>8}{'ms/act':>8}",
        ]
        for s in self.standings:
            lines.append(
                f"{s.name:<20}{s.matches:>8}{s.wins:>6}{100 * s.win_rate:>7.1f}%"
                f"{s.mean_rank:>11.2f}{s.mean_score:>12.2f}{s.faults:>8}{s.mean_latency_ms:>8.2f}"
            )
        return "\n".join(lines)


class BotClient:
    """A ``Bot`` behind the referee's client interface, through JSON as over HTTP."""

    def __init__(self, bot: Bot, name: str):
        self.bot = bot
        self.name = name

    def start(self, info: dict[str, Any]) -> None:
        _loudly(self.bot.start, _wire(info))

    def act(self, payload: dict[str, Any]) -> Any:
        return _wire(make_answer(_loudly(self.bot.on_act, _wire(payload))))

    def end(self, info: dict[str, Any]) -> None:
        _loudly(self.bot.end, _wire(info))

    def close(self) -> None:
        pass


def _wire(value: Any) -> Any:
    """``value`` as the other side of an HTTP request would read it."""
    return json.loads(json.dumps(value, allow_nan=False))


def _loudly(call: Callable[[dict[str, Any]], Any], arg: dict[str, Any]) -> Any:
    """The referee turns a bot's exception into a fault quietly; show it, as the HTTP
    server does, since it is a bug to fix."""
    try:
        return call(arg)
    except Exception:
        traceback.print_exc()
        raise


def _labels(names: Sequence[str]) -> list[str]:
    """Distinct labels: a name used twice becomes ``name#1``, ``name#2``."""
    seen: dict[str, int] = {}
    labels = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        labels.append(name if names.count(name) == 1 else f"{name}#{seen[name]}")
    return labels


def play(
    bot: Bot,
    game: str,
    opponents: Sequence[str | Bot] = ("random",),
    matches: int = 10,
    seed: int = 0,
    options: Mapping[str, Any] | None = None,
    *,
    max_strikes: int = 3,
    quiet: bool = False,
    out: TextIO | None = None,
) -> LocalResult:
    """Play ``matches`` matches of ``game``: ``bot`` against ``opponents``, each a house
    policy name (``"random"``, ``"heuristic"``) or another ``Bot``; one seat each.

    Match ``m`` uses seed ``seed + m`` and seats rotate so every entry plays every seat
    equally often.  Prints a summary table unless ``quiet``; returns the standings and
    the match records."""
    try:
        from arena.games import get_game, make_policy
        from arena.referee import PolicyClient, Referee, policy_rng
    except ModuleNotFoundError as exc:
        if exc.name is not None and exc.name.split(".")[0] == "arena":
            raise ModuleNotFoundError(ARENA_MISSING, name=exc.name) from exc
        raise
    engine = get_game(game)
    n_players = 1 + len(opponents)
    engine.check_players(n_players)
    engine.resolve_options(options)  # fail before the first match on bad options
    names = [bot.name] + [o if isinstance(o, str) else o.name for o in opponents]
    labels = _labels(names)
    standings = [Standing(label) for label in labels]
    entries: list[str | Bot] = [bot, *opponents]
    referee = Referee(max_strikes=max_strikes)
    result = LocalResult(engine.id, standings)
    for m in range(matches):
        match_seed = seed + m
        seating = [(m + seat) % n_players for seat in range(n_players)]  # seat -> entry
        clients: list[Any] = []
        for seat, entry in enumerate(seating):
            player = entries[entry]
            if isinstance(player, str):
                policy = make_policy(engine.id, player, policy_rng(match_seed, seat))
                clients.append(PolicyClient(policy, labels[entry]))
            else:
                clients.append(BotClient(player, labels[entry]))
        record = referee.run(
            engine.id, clients, match_seed, options, match_id=f"local-{match_seed}"
        ).to_json()
        result.records.append(record)
        _tally(record, seating, standings)
    if not quiet:
        print(result.table(), file=out or sys.stdout)
    return result


def _tally(record: dict[str, Any], seating: list[int], standings: list[Standing]) -> None:
    outcome = record["outcome"]
    for seat, entry in enumerate(seating):
        s = standings[entry]
        s.matches += 1
        s.wins += outcome["ranks"][seat] == 1
        s.rank_sum += outcome["ranks"][seat]
        s.score_sum += outcome["scores"][seat]
    for step in record["steps"]:
        for decision in step:
            if "latency_ms" not in decision:
                continue  # a struck-out seat is no longer asked
            s = standings[seating[decision["seat"]]]
            s.decisions += 1
            s.latency_ms += decision["latency_ms"]
            s.faults += "fault" in decision


def load_bot(spec: str) -> Bot:
    """``module:Name``: a Bot subclass (built with no arguments), a Bot, or a factory."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"name the bot as module:Name (e.g. mybot:MyBot), not {spec!r}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # a bot module in the current directory
    obj = getattr(importlib.import_module(module_name), attr)
    bot = obj() if callable(obj) and not isinstance(obj, Bot) else obj
    if not isinstance(bot, Bot):
        raise TypeError(f"{spec} is not an arenabot.Bot (got {type(bot).__name__})")
    return bot


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m arenabot.local",
        description="Play a bot in-process against the arena's house policies.",
    )
    parser.add_argument("bot", help="the bot as module:Name, e.g. mybot:MyBot")
    parser.add_argument("--game", required=True, help="cactus, cactus-game, president...")
    parser.add_argument(
        "--opponents",
        default="random",
        help="comma-separated house policies, one per other seat (default: random)",
    )
    parser.add_argument("--matches", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--options", default=None, help='game options as JSON: {"rounds": 3}')
    parser.add_argument("--preset", default=None, help="a preset of the game (e.g. pagat)")
    args = parser.parse_args(argv)
    options = json.loads(args.options) if args.options else {}
    if not isinstance(options, dict):
        parser.error("--options must be a JSON object")
    if args.preset:
        options["preset"] = args.preset
    opponents = [o.strip() for o in args.opponents.split(",") if o.strip()]
    try:
        play(load_bot(args.bot), args.game, opponents, args.matches, args.seed, options)
    except (ValueError, TypeError) as exc:  # a bad bot name, game, seat count or option
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
