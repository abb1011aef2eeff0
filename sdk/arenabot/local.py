"""Play matches in-process against the arena's house policies, without any server.

The bot is called with exactly the JSON objects the HTTP protocol would carry (each one
is encoded and decoded again), through the arena's own referee, so a bot that plays well
here plays the same over HTTP.  It needs the arena package (the repository that hosts
the tournaments) installed next to the SDK, of which it uses one module, the interface
``arena.match.local``::

    python -m arenabot.local mybot:MyBot --game cactus --matches 20 --opponents random,heuristic
    python -m arenabot.local bot.py:act                    # the first game the bot declares
    python -m arenabot.local http://127.0.0.1:9000 --game cactus --secret "$SECRET"
    python -m arenabot.local bot.py:act --game cactus --concurrent 4

With ``--concurrent N``, N matches are played at once, as the arena plays them: an
in-process bot is served over HTTP on a loopback port for the occasion, and the bot is
never sent more requests at once than the capacity its ``GET /`` declares (the others
wait on the runner's side, not counted against their deadline).

A mistake in the command (a bot that cannot be loaded or does not answer, an unknown
game, policy or option, a bad number) is one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import sys
import threading
import traceback
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, NoReturn, TextIO

from arenabot.bot import ActFunction, Bot, as_bot, make_answer
from arenabot.loading import UsageError, load_bot  # also imported from here by its users
from arenabot.server import SECRET_ENV, make_server

ARENA_MISSING = (
    "arenabot.local plays matches with the arena's game engines, which are not installed: "
    "install the arena repository first (pip install -e /path/to/card-bot-arena)"
)
DEFAULT_OPPONENT = "random"  # in every other seat, as few seats as the game allows


class ArenaMissing(ModuleNotFoundError):
    """The arena package, whose engines and referee the runner uses, is not installed."""


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
    """A ``Bot`` behind the referee's client interface, through JSON as over HTTP; called
    one at a time, as the SDK's server calls it, unless it is thread-safe.

    The referee turns a bot's exception into a fault quietly; the first one's traceback
    is shown (on stderr), since it is a bug to fix, and the others are counted
    (``errors``): the same bug in every match is one traceback and a count, not one
    traceback per decision."""

    def __init__(self, bot: Bot, name: str):
        self.bot = bot
        self.name = name
        self.lock: contextlib.AbstractContextManager[Any] = (
            contextlib.nullcontext() if bot.thread_safe else threading.Lock()
        )
        self.errors = 0  # exceptions the bot raised
        self._errors_lock = threading.Lock()

    def start(self, info: dict[str, Any]) -> None:
        with self.lock:
            self._loudly(self.bot.start, _wire(info))

    def act(self, payload: dict[str, Any]) -> Any:
        with self.lock:
            return _wire(make_answer(self._loudly(self.bot.on_act, _wire(payload))))

    def end(self, info: dict[str, Any]) -> None:
        with self.lock:
            self._loudly(self.bot.end, _wire(info))

    def close(self) -> None:
        pass

    def _loudly(self, call: Callable[[dict[str, Any]], Any], arg: dict[str, Any]) -> Any:
        try:
            return call(arg)
        except Exception:
            with self._errors_lock:
                self.errors += 1
                first = self.errors == 1
            if first:
                print(f"{self.name} raised an exception (a fault):", file=sys.stderr)
                traceback.print_exc()
            raise


def _wire(value: Any) -> Any:
    """``value`` as the other side of an HTTP request would read it."""
    return json.loads(json.dumps(value, allow_nan=False))


def _labels(names: Sequence[str]) -> list[str]:
    """Distinct labels: a name used twice becomes ``name#1``, ``name#2``."""
    seen: dict[str, int] = {}
    labels = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        labels.append(name if names.count(name) == 1 else f"{name}#{seen[name]}")
    return labels


def play(
    bot: Bot | ActFunction | str,
    game: str | None = None,
    opponents: Sequence[str | Bot | ActFunction] | None = None,
    matches: int = 10,
    seed: int = 0,
    options: Mapping[str, Any] | None = None,
    *,
    max_strikes: int = 3,
    quiet: bool = False,
    out: TextIO | None = None,
    secret: str | None = None,
    concurrent: int = 1,
) -> LocalResult:
    """Play ``matches`` matches of ``game``: ``bot`` against ``opponents``, each a house
    policy name (``"random"``, ``"heuristic"``) or another bot; one seat each.
    ``concurrent`` matches at once: see the module's docstring.

    ``bot`` is a ``Bot``, a function ``act(view, legal_actions)``, or the URL of a bot
    already running (signed with ``secret`` if it has one).  ``game`` defaults to the
    first game the bot declares, and must be one of them when it declares any;
    ``opponents`` to ``"random"`` in as few seats as the game allows.  Every argument
    is checked before the first match (``UsageError``).

    Match ``m`` uses seed ``seed + m`` and seats rotate so every entry plays every seat
    equally often.  Prints a summary table unless ``quiet``; returns the standings and
    the match records."""
    return prepare(
        bot, game, opponents, matches, options, secret=secret, concurrent=concurrent
    ).run(seed, max_strikes=max_strikes, quiet=quiet, out=out)


@dataclass
class LocalMatches:
    """Checked arguments of ``play``: ``run`` plays the matches."""

    game: str
    entries: list[Any]  # the bot's client, then policy names and opponents' clients
    labels: list[str]
    matches: int
    options: Mapping[str, Any] | None
    http: Any = None  # the bot's HTTP client, closed after the matches
    concurrent: int = 1  # matches played at once
    capacity: int | None = None  # what the bot declared, when it is played over HTTP
    closing: list[Callable[[], None]] = field(default_factory=list)  # after the matches

    def run(
        self,
        seed: int = 0,
        *,
        max_strikes: int = 3,
        quiet: bool = False,
        out: TextIO | None = None,
    ) -> LocalResult:
        from arena.match.local import PolicyClient, Referee, make_policy, policy_rng

        n_players = len(self.entries)
        standings = [Standing(label) for label in self.labels]
        referee = Referee(max_strikes=max_strikes)
        result = LocalResult(self.game, standings)
        stop = threading.Event()

        def one(m: int) -> dict[str, Any]:
            match_seed = seed + m
            clients: list[Any] = []
            for seat, entry in enumerate(_seating(m, n_players)):
                player = self.entries[entry]
                if isinstance(player, str):
                    policy = make_policy(self.game, player, policy_rng(match_seed, seat))
                    clients.append(PolicyClient(policy, self.labels[entry]))
                else:
                    clients.append(player)
            return referee.run(
                self.game,
                clients,
                match_seed,
                self.options,
                match_id=f"local-{match_seed}",
                stop=stop,
            ).to_json()

        try:
            if self.concurrent == 1:
                records = [one(m) for m in range(self.matches)]
            else:
                pool = ThreadPoolExecutor(min(self.concurrent, self.matches), "arenabot-match")
                futures = [pool.submit(one, m) for m in range(self.matches)]
                try:
                    records = [f.result() for f in futures]
                except BaseException:  # Ctrl-C: the matches stop before their next step
                    stop.set()
                    for f in futures:
                        f.cancel()
                    raise
                finally:
                    pool.shutdown(wait=True)
        finally:
            self.close()
        for m, record in enumerate(records):
            result.records.append(record)
            _tally(record, _seating(m, n_players), standings)
        for entry in self.entries:
            errors = getattr(entry, "errors", 0)
            if errors > 1:
                print(
                    f"{entry.name} raised {errors} exceptions in all (the first one's "
                    "traceback is above)",
                    file=sys.stderr,
                )
        if not quiet:
            print(result.table(), file=out or sys.stdout)
            if self.concurrent > 1:
                takes = "as many as it is sent" if self.capacity is None else self.capacity
                print(
                    f"{self.concurrent} matches at once; {self.labels[0]} takes {takes} "
                    "request(s) at a time",
                    file=out or sys.stdout,
                )
        return result

    def close(self) -> None:
        """Close the bot's client, and its server when the runner served it."""
        if self.http is not None:
            self.http.close()
        for close in reversed(self.closing):
            close()
        self.closing = []


def _seating(m: int, n_players: int) -> list[int]:
    """Match ``m``'s seats: seat -> entry (they rotate between matches)."""
    return [(m + seat) % n_players for seat in range(n_players)]


def _import_arena() -> None:
    """Import ``arena.match.local`` from the arena package: not from a folder named
    ``arena`` in the current folder, which ``python -m`` puts first on the path (a bot's
    project may well have one).  Only a package found nowhere else (a checkout of the
    arena run in place) is imported from there."""
    if "arena" in sys.modules:
        import arena.match.local

        return
    here = os.path.realpath(os.getcwd())
    saved = sys.path[:]
    sys.path[:] = [p for p in saved if os.path.realpath(p or ".") != here]
    try:
        import arena.match.local
    except ModuleNotFoundError as exc:
        if exc.name != "arena":
            raise
        sys.path[:] = saved
        import arena.match.local  # noqa: F401
    finally:
        sys.path[:] = saved


def prepare(
    bot: Bot | ActFunction | str,
    game: str | None = None,
    opponents: Sequence[str | Bot | ActFunction] | None = None,
    matches: int = 10,
    options: Mapping[str, Any] | None = None,
    *,
    secret: str | None = None,
    concurrent: int = 1,
) -> LocalMatches:
    """Check the arguments of ``play`` (see there) without playing: ``UsageError``
    saying what is wrong, or the matches ready to ``run`` (with ``concurrent`` > 1, an
    in-process bot is already served on a loopback port: ``close()`` the result if it is
    not run)."""
    try:
        _import_arena()
    except ModuleNotFoundError as exc:
        if exc.name is not None and exc.name.split(".")[0] == "arena":
            raise ArenaMissing(ARENA_MISSING, name=exc.name) from exc
        raise
    from arena.match.local import OptionsError, get_game, make_policy, policy_rng

    if isinstance(matches, bool) or not isinstance(matches, int) or matches < 1:
        raise UsageError(f"the number of matches must be at least 1, not {matches!r}")
    if isinstance(concurrent, bool) or not isinstance(concurrent, int) or concurrent < 1:
        raise UsageError(f"the number of concurrent matches must be at least 1, not {concurrent!r}")
    http = None
    capacity: int | None = None
    closing: list[Callable[[], None]] = []
    if isinstance(bot, str):
        http, declared, capacity, closing = _http_bot(bot, secret, concurrent)
        name = http.name
    else:
        try:
            bot = as_bot(bot)
        except TypeError as exc:
            raise UsageError(str(exc)) from None
        declared, name = list(bot.games), bot.name
    try:
        try:
            engine = get_game(game if game is not None else _first_game(declared, name))
            if http is not None and engine.id not in declared:
                raise UsageError(
                    f"bot {http.endpoint} does not play {engine.id} (it plays "
                    f"{', '.join(declared) or 'nothing'})"
                )
            if http is None and declared and engine.id not in declared:
                # it would fail every decision: one line now, not a fault per decision
                raise UsageError(
                    f"{name} does not play {engine.id} (it declares {', '.join(declared)}): "
                    f"give --game {declared[0]}, or add {engine.id} to its games"
                )
            if opponents is None:
                opponents = [DEFAULT_OPPONENT] * (engine.min_players - 1)
            others: list[str | Bot] = []
            for o in opponents:
                if isinstance(o, str):
                    make_policy(engine.id, o, policy_rng(0, 0))  # an unknown policy: now
                    others.append(o)
                else:
                    others.append(as_bot(o))
            try:
                engine.check_players(1 + len(others))
            except OptionsError as exc:
                raise UsageError(
                    f"{exc} (the bot and {len(others)} opponent(s): name one per other seat)"
                ) from None
            engine.resolve_options(options)  # fail before the first match on bad options
        except (OptionsError, TypeError) as exc:
            raise UsageError(str(exc)) from None
    except BaseException:
        if http is not None:
            http.close()
        for close in reversed(closing):
            close()
        raise
    if http is None and concurrent > 1:  # played as the arena plays it: over HTTP
        assert isinstance(bot, Bot)
        http, capacity, closing = _serve_locally(bot, concurrent)
    names = [name] + [o if isinstance(o, str) else o.name for o in others]
    labels = _labels(names)
    me = http if http is not None else BotClient(bot, labels[0])  # type: ignore[arg-type]
    me.name = labels[0]
    entries = [me] + [
        o if isinstance(o, str) else BotClient(o, label)
        for o, label in zip(others, labels[1:], strict=True)
    ]
    return LocalMatches(
        engine.id, entries, labels, matches, options, http, concurrent, capacity, closing
    )


def _first_game(declared: Sequence[str], name: str) -> str:
    """The game to play when none is named: the first the bot declares (a function
    bot's module declares them in ``GAMES``, a ``Bot`` in its ``games``)."""
    if not declared:
        raise UsageError(f"name the game with --game ({name} declares no games)")
    return declared[0]


def _http_bot(
    url: str, secret: str | None, concurrent: int = 1
) -> tuple[Any, list[str], int | None, list[Callable[[], None]]]:
    """A bot already running, after ``GET /``: its client, the games and the capacity it
    declares (None: it declares none), and what to close after the matches.  With
    ``concurrent`` > 1 the client never has more requests in flight than the capacity
    (or the arena's own limit per endpoint, for a bot that declares none)."""
    from arena.match.local import BotFault, EndpointPool, HttpClient

    try:
        client = HttpClient(url, secret)
    except ValueError as exc:
        raise UsageError(f"bad bot URL {url!r}: {exc}") from None
    try:
        info = client.info()
    except BotFault as exc:
        client.close()
        if exc.kind == "connection_refused":
            raise UsageError(
                f"nothing answers at {url}: is the bot running, on that port?"
            ) from None
        raise UsageError(f"bot {url} does not answer GET / properly: {exc}") from None
    version = str(info.get("apiversion"))
    games = info.get("games")
    if version != "1" or not isinstance(games, list):
        client.close()
        raise UsageError(
            f"bot {url} does not speak protocol 1 (GET / answered apiversion {version!r})"
        )
    capacity = info.get("capacity")
    if capacity is not None and (
        isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1
    ):
        client.close()
        raise UsageError(
            f"bot {url} declares a capacity of {capacity!r}: it must be an integer of at "
            "least 1 (how many requests it takes at once), or absent"
        )
    closing: list[Callable[[], None]] = []
    if concurrent > 1:
        client.close()
        pool = (
            EndpointPool(url) if capacity is None else EndpointPool(url, max_connections=capacity)
        )
        client = HttpClient(url, secret, pool=pool)
        closing.append(pool.close)
    client.name = str(info.get("name") or url)
    return client, [str(g) for g in games], capacity, closing


def _serve_locally(bot: Bot, concurrent: int) -> tuple[Any, int | None, list[Callable[[], None]]]:
    """Serve an in-process bot on a loopback port, signed: its HTTP client, its capacity
    and what to close after the matches (the client's pool, then the server)."""
    token = secrets.token_hex(16)
    server = make_server(bot, "127.0.0.1", 0, secret=token)
    server.serve_in_background()
    try:
        http, _, capacity, closing = _http_bot(server.url, token, concurrent)
    except BaseException:
        server.close()
        raise
    return http, capacity, [server.close, *closing]


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


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose every error is one line (and exit status 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _is_url(spec: str) -> bool:
    return spec.startswith(("http://", "https://"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineParser(
        prog="python -m arenabot.local",
        description="Play a bot in-process against the arena's house policies.",
    )
    parser.add_argument(
        "bot",
        help="module:name or path/to/file.py:name (a Bot class or a function "
        "act(view, legal_actions)), or the URL of a running bot",
    )
    parser.add_argument(
        "--game",
        help="cactus, cactus-game, president... (default: the first the bot declares: a "
        "function bot's GAMES, a Bot's games)",
    )
    parser.add_argument(
        "--opponents",
        help="comma-separated house policies (random, heuristic), one per other seat "
        f"(default: {DEFAULT_OPPONENT}, in as few seats as the game allows)",
    )
    parser.add_argument("--matches", type=int, default=10, help="matches to play (default 10)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first match (default 0)")
    parser.add_argument(
        "--concurrent",
        type=int,
        default=1,
        help="matches played at once, as the arena plays them: the bot is served over HTTP "
        "and sent no more requests at once than its declared capacity (default 1)",
    )
    parser.add_argument("--options", default=None, help='game options as JSON: {"rounds": 3}')
    parser.add_argument("--preset", default=None, help="a preset of the game (e.g. pagat)")
    parser.add_argument(
        "--secret",
        default=os.environ.get(SECRET_ENV),
        help=f"for a bot URL: the secret it was started with (default: ${SECRET_ENV})",
    )
    args = parser.parse_args(argv)
    if args.matches < 1:
        parser.error(f"--matches must be at least 1, not {args.matches}")
    if args.concurrent < 1:
        parser.error(f"--concurrent must be at least 1, not {args.concurrent}")
    options: dict[str, Any] = {}
    if args.options:
        try:
            options = json.loads(args.options)
        except ValueError as exc:
            parser.error(f"--options is not JSON: {exc}")
        if not isinstance(options, dict):
            parser.error('--options must be a JSON object, e.g. {"rounds": 3}')
    if args.preset:
        options["preset"] = args.preset
    opponents = None
    if args.opponents is not None:
        opponents = [o.strip() for o in args.opponents.split(",") if o.strip()]
        if not opponents:
            parser.error("--opponents names no policy (e.g. --opponents random,heuristic)")
    try:
        bot = args.bot if _is_url(args.bot) else load_bot(args.bot)
        ready = prepare(
            bot,
            args.game,
            opponents,
            args.matches,
            options,
            secret=args.secret,
            concurrent=args.concurrent,
        )
    except (UsageError, ArenaMissing) as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 2
    try:
        ready.run(args.seed)
    except KeyboardInterrupt:
        print(f"{parser.prog}: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
