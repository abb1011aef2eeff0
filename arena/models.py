"""The database: bots, tournaments, matches, replays, ratings and their history.

SQLAlchemy 2 declarative models; the schema itself is owned by the alembic migrations in
``arena/migrations`` (``arena db upgrade``), which tests check against these models.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship, validates

from arena.match import records
from arena.names import skeleton
from arena.sealing import SealedSecret

# a match's statuses (its transitions are arena.worker.lifecycle's): still to be played, or ended
MATCH_OPEN = ("queued", "running")
MATCH_ENDED = ("finished", "failed", "cancelled")
MATCH_STATUSES = MATCH_OPEN + MATCH_ENDED
MATCH_PLAYED = "finished"  # the matches a count of played matches counts
# a bot's statuses: paused by the arena after forfeits in a row (``Bot.paused_reason``),
# deleted softly (it keeps its matches and name); its owner sets the others
BOT_STATUSES = ("active", "paused", "disabled", "deleted")
BOT_OWNER_STATUSES = ("active", "disabled")  # what an owner may set (DELETE deletes)
BOT_SET_STATUSES = (*BOT_OWNER_STATUSES, "paused")  # an organiser pauses too
# who answers for a bot row: a contestant's program, one of the arena's own policies
# (played in the worker), or a person (a browser, over the connect transport)
BOT_KINDS = ("bot", "house", "person")
# a hosted bot's code versions: checked by a validation match, then it may play
CODE_STATUSES = ("validating", "passed", "failed")
# what a notice tells its account of (arena.services.notices)
NOTICE_KINDS = (
    "bot_paused",
    "bot_faults",
    "validation_failed",
    "tournament_finished",
    "grade_decided",
)
# who an account is: the arena's admin (as the organiser token's holder is), an organiser
# of events, or a contestant; and what a member is in one event
ACCOUNT_ROLES = ("admin", "organiser", "contestant")
MEMBER_ROLES = ("organiser", "contestant")
EVENT_VISIBILITIES = ("public", "private")
# who paused a bot: the arena (forfeits in a row: its owner may set it active again) or an
# organiser (only an organiser may)
PAUSED_BY = ("arena", "organiser")
# a tournament's statuses: running until its matches are over or it is cancelled
# building: a worker is writing its matches (arena.services.tournaments.build_tournament)
TOURNAMENT_STATUSES = ("building", "running", "finished", "cancelled")
# who sees a match's hidden cards while it is played: nobody (only the public table
# until it ends) or everyone (every perspective, live)
LIVE_VIEWS = ("public", "everyone")
# the processes that send heartbeats (``WorkerBeat``): a Celery worker, ``arena beat``
WORKER_KINDS = ("worker", "beat")


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def aware(moment: dt.datetime) -> dt.datetime:
    """SQLite gives back naive datetimes; every one stored here is UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)


def bot_name(name: str) -> str:
    """A bot's name as it is stored: trimmed, each run of spaces inside it one space."""
    return " ".join(name.split())


NAME_KEY_LENGTH = 192  # the key column's width


def bot_name_key(name: str) -> str:
    """What two names must differ in to be two bots (or two accounts): ``" Alpha "``,
    ``"alpha"``, ``"ALPHA"``, and ``alpha`` with a Cyrillic a or in fullwidth letters
    have the same key: the stored name as it looks (``arena.names.skeleton``: compatibility forms
    folded, case folded, look-alike letters replaced), each run of spaces one space.  A
    name written in ASCII keeps its case-folded self.  Folding can make a name longer
    (one character of it can become eighteen): the key is its first NAME_KEY_LENGTH
    characters, so two names alike that far are one (migration 0015)."""
    return " ".join(skeleton(bot_name(name)).split())[:NAME_KEY_LENGTH]


class Base(DeclarativeBase):
    type_annotation_map = {
        dict[str, Any]: JSON,
        list[Any]: JSON,
        dt.datetime: DateTime(timezone=True),
    }


class Account(Base):
    """A person who logs in: the arena's admin, an organiser of events, or a contestant.
    The password is kept as an argon2 hash (``arena.services.accounts``)."""

    __tablename__ = "accounts"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(64))
    # bot_name_key(name): unique, so that "Ada" and " ada " are one account
    name_key: Mapped[str] = mapped_column(String(192), unique=True)
    password_hash: Mapped[str] = mapped_column(String(200))
    role: Mapped[str] = mapped_column(String(16), default="contestant")  # ACCOUNT_ROLES
    # a one-time link to set a new password (an organiser makes it): its hash, and until when
    reset_token_hash: Mapped[str | None] = mapped_column(String(64), default=None)
    reset_expires_at: Mapped[dt.datetime | None] = mapped_column(default=None)
    # bumped when the password changes (kept for the record: since migration 0017 what
    # ends a page's session is its ``WebSession`` row going)
    session_epoch: Mapped[int] = mapped_column(Integer, default=0)
    # where its notices go besides the app: a webhook (its posts signed with notify_secret)
    # and an e-mail address (when the operator configured SMTP)
    notify_url: Mapped[str | None] = mapped_column(String(512), default=None)
    notify_secret: Mapped[str | None] = mapped_column(SealedSecret(), default=None)
    email: Mapped[str | None] = mapped_column(String(254), default=None)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)

    @validates("name")
    def _name_and_key(self, _attribute: str, name: str) -> str:
        name = bot_name(name)
        self.name_key = bot_name_key(name)
        return name


class ApiToken(Base):
    """An account's API token (``Authorization: Bearer``), kept hashed like owner tokens."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    label: Mapped[str] = mapped_column(String(64), default="")
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    last_used_at: Mapped[dt.datetime | None] = mapped_column(default=None)


class WebSession(Base):
    """A page's login session, live while its row is here: the signed cookie carries its
    id (in clear, like a token; this keeps the hash), and every request looks it up, so
    that logging out, a new password or signing out everywhere ends it on the server and
    a copy of the cookie taken before is worth nothing (``arena.services.accounts``)."""

    __tablename__ = "web_sessions"

    id: Mapped[int] = mapped_column(primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    # a session ends SESSION_LIFETIME after its login; older rows are deleted at a login
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow, index=True)


class Event(Base):
    """A competition with its own bots, tournaments, ladder and ratings: a class, a
    hackathon.  Its bots never meet another event's (or the open arena's)."""

    __tablename__ = "events"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    games: Mapped[list[Any]] = mapped_column(default=list)
    visibility: Mapped[str] = mapped_column(String(16), default="public")  # EVENT_VISIBILITIES
    join_code: Mapped[str] = mapped_column(String(32), unique=True)
    # bots one account may have in the event (not deleted); organisers are not counted
    bots_per_account: Mapped[int] = mapped_column(Integer, default=1)
    # registration of new bots (None: open from its creation / until the freeze)
    registration_opens_at: Mapped[dt.datetime | None] = mapped_column(default=None)
    registration_closes_at: Mapped[dt.datetime | None] = mapped_column(default=None)
    # after it: no new bots, no endpoint or transport changes, versions pinned
    freeze_at: Mapped[dt.datetime | None] = mapped_column(default=None)
    # the event's rated ladder per game: {game: {"enabled": bool, "seats_per_match": n}}
    ladder: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_by: Mapped[int | None] = mapped_column(ForeignKey("accounts.id"), default=None)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)

    members: Mapped[list[EventMember]] = relationship(
        back_populates="event", cascade="all, delete-orphan", order_by="EventMember.account_id"
    )


class EventMember(Base):
    """An account in an event, as one of its organisers or a contestant."""

    __tablename__ = "event_members"

    event_id: Mapped[int] = mapped_column(ForeignKey("events.id"), primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), primary_key=True)
    role: Mapped[str] = mapped_column(String(16), default="contestant")  # MEMBER_ROLES
    joined_at: Mapped[dt.datetime] = mapped_column(default=utcnow)

    event: Mapped[Event] = relationship(back_populates="members")
    account: Mapped[Account] = relationship()


class Bot(Base):
    __tablename__ = "bots"
    # a deleted bot keeps its name on its matches, but the name is free again (migration 0019)
    __table_args__ = (
        Index(
            "uq_bots_live_name_key",
            "name_key",
            unique=True,
            sqlite_where=text("status <> 'deleted'"),
            postgresql_where=text("status <> 'deleted'"),
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(64))
    # bot_name_key(name), set whenever the name is: unique among the bots not deleted, so
    # that names differing only in case or spaces are one bot (migrations 0004, 0019)
    name_key: Mapped[str] = mapped_column(String(192))
    # where the arena calls the bot (the webhook transport); None: the bot connects out to
    # the arena instead and takes its requests over its session (arena.relay)
    endpoint: Mapped[str | None] = mapped_column(String(512), default=None)
    owner: Mapped[str] = mapped_column(String(64))
    owner_token_hash: Mapped[str] = mapped_column(String(128))
    # kept to sign every request to the bot; shown to the owner once, at registration;
    # stored sealed with ARENA_SECRETS_KEY (arena.sealing, migration 0015)
    signing_secret: Mapped[str] = mapped_column(SealedSecret())
    games: Mapped[list[Any]] = mapped_column(default=list)
    # BOT_STATUSES: paused by the arena (see paused_reason) after several forfeits in a
    # row, until its owner sets it active again
    status: Mapped[str] = mapped_column(String(16), default="active")
    paused_reason: Mapped[str | None] = mapped_column(String(300), default=None)
    forfeit_streak: Mapped[int] = mapped_column(Integer, default=0)  # forfeits in a row
    description: Mapped[str] = mapped_column(String(500), default="")
    info: Mapped[dict[str, Any]] = mapped_column(default=dict)  # its answer to GET /
    kind: Mapped[str] = mapped_column(String(16), default="bot", server_default="bot")
    # the owner lets people pick it as an opponent at /play
    playable: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # the deadline of each of its decisions, when not the arena's (a person's, per match)
    deadline_ms: Mapped[int | None] = mapped_column(Integer, default=None)
    # the account it belongs to (None: only its owner token manages it) and the event it
    # plays in (None: the open arena); PAUSED_BY says who paused a paused bot
    account_id: Mapped[int | None] = mapped_column(
        ForeignKey("accounts.id"), index=True, default=None
    )
    event_id: Mapped[int | None] = mapped_column(ForeignKey("events.id"), index=True, default=None)
    paused_by: Mapped[str | None] = mapped_column(String(16), default=None)
    # the arena runs the bot's uploaded code (arena.hosted): no endpoint, no session;
    # code_version is the version (BotCode.version) that plays, None before one passed
    hosted: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    code_version: Mapped[str | None] = mapped_column(String(16), default=None)
    # an organiser offers it in every event's tournaments, as the house bots are
    reference: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # its owner lets others pick it as an opponent of a scrimmage (arena.services.scrimmages)
    accepts_challenges: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # the verdict of its last validation match (CODE_STATUSES; None: never validated); a
    # hosted bot's versions keep theirs in BotCode
    validation_status: Mapped[str | None] = mapped_column(String(16), default=None)
    validation_reason: Mapped[str | None] = mapped_column(String(500), default=None)
    validation_match_id: Mapped[int | None] = mapped_column(Integer, default=None)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow, onupdate=utcnow)

    @property
    def connect(self) -> bool:
        """The bot connects out to the arena (no endpoint to be called at, no code of its
        own that the arena runs)."""
        return self.endpoint is None and not self.hosted

    @property
    def transport(self) -> str:
        """How the arena reaches it: ``webhook``, ``connect`` or ``hosted``."""
        return "hosted" if self.hosted else "connect" if self.endpoint is None else "webhook"

    @validates("name")
    def _name_and_key(self, _attribute: str, name: str) -> str:
        """Every assignment of a name stores it trimmed and keeps its key in step."""
        name = bot_name(name)
        self.name_key = bot_name_key(name)
        return name


class BotCode(Base):
    """A version of a hosted bot's code: the upload as it came (a Python file or a zip,
    checked by ``arena.hosted.bundles``), named by the first 12 hex digits of its SHA-256.
    A new version plays a validation match (``match_id``) before it may become the bot's
    ``code_version``: CODE_STATUSES, and ``reason`` when it failed."""

    __tablename__ = "bot_code"
    __table_args__ = (UniqueConstraint("bot_id", "version", name="uq_bot_code_version"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), index=True)
    version: Mapped[str] = mapped_column(String(16))
    sha256: Mapped[str] = mapped_column(String(64))
    media_type: Mapped[str] = mapped_column(String(32))
    size: Mapped[int] = mapped_column(Integer)
    files: Mapped[int] = mapped_column(Integer)
    data: Mapped[bytes] = mapped_column(LargeBinary)
    status: Mapped[str] = mapped_column(String(16), default="validating")
    reason: Mapped[str | None] = mapped_column(String(500), default=None)
    match_id: Mapped[int | None] = mapped_column(Integer, default=None)
    uploaded_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class MatchLog(Base):
    """A seat's private log of one match: its bot's ``debug`` texts and a hosted bot's
    stderr, per decision (``arena.match.referee.MatchRecord.logs``).  Only the bot's
    owner and the organisers read it; it is never part of the replay."""

    __tablename__ = "match_logs"

    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    entries: Mapped[list[Any]] = mapped_column(default=list)


class Notice(Base):
    """Something an account should hear of (NOTICE_KINDS): shown in the app until read,
    and sent to the account's notify_url and e-mail (``deliveries``: each way's outcome)."""

    __tablename__ = "notices"

    id: Mapped[int] = mapped_column(primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), index=True)
    kind: Mapped[str] = mapped_column(String(32))
    text: Mapped[str] = mapped_column(String(500))
    bot_id: Mapped[int | None] = mapped_column(Integer, default=None)
    tournament_id: Mapped[int | None] = mapped_column(Integer, default=None)
    match_id: Mapped[int | None] = mapped_column(Integer, default=None)
    deliveries: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    read_at: Mapped[dt.datetime | None] = mapped_column(default=None)


class BotSession(Base):
    """The live session of a bot that connects out (its last one, once closed): which web
    process holds it (``home``, the address workers hand it requests at), since when, what
    the bot said of itself when it opened it, and when it was last heard from."""

    __tablename__ = "bot_sessions"

    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), primary_key=True)
    token: Mapped[str] = mapped_column(String(64))
    home: Mapped[str] = mapped_column(String(200))
    opened_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    seen_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    closed_at: Mapped[dt.datetime | None] = mapped_column(default=None)
    # the bot's GET / answer as it opened the session: its SDK, version and capacity
    info: Mapped[dict[str, Any]] = mapped_column(default=dict)
    draining: Mapped[bool] = mapped_column(Boolean, default=False)
    # sessions of the bot that a newer one replaced, and when the last one was
    replaced: Mapped[int] = mapped_column(Integer, default=0)
    replaced_at: Mapped[dt.datetime | None] = mapped_column(default=None)


class SeenRequest(Base):
    """The ``request_id`` of a signed request a bot that connects out sent, which some web
    process accepted: the same id again is a replay (``arena.relay.replays``, the store
    every web process shares when no Redis is configured).  A row is needed only while
    the request's timestamp could still be accepted; older ones are deleted."""

    __tablename__ = "seen_requests"

    request_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    seen_at: Mapped[dt.datetime] = mapped_column(index=True)


class BotPin(Base):
    """Which worker process may send requests to a bot that declares how many it takes at
    once (its ``capacity``): one at a time, so that the process's connection pool bounds
    them all.  Held like a match's lease (renewed by the holder's warden, lapsing when it
    dies) and let go when the holder plays no more matches of the bot
    (``arena.worker.lifecycle``)."""

    __tablename__ = "bot_pins"

    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), primary_key=True)
    owner: Mapped[str | None] = mapped_column(String(200), default=None)
    expires_at: Mapped[dt.datetime | None] = mapped_column(default=None)


class Tournament(Base):
    __tablename__ = "tournaments"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    game: Mapped[str] = mapped_column(String(32))
    options: Mapped[dict[str, Any]] = mapped_column(default=dict)  # resolved, complete
    seats_per_match: Mapped[int] = mapped_column(Integer)
    # a name of arena.competition.formats.FORMATS, and independent | duplicate deals
    format: Mapped[str] = mapped_column(String(16), default="round_robin")
    deal: Mapped[str] = mapped_column(String(16), default="independent")
    games_per_pairing: Mapped[int | None] = mapped_column(Integer, default=None)  # round robin
    matches_per_bot: Mapped[int | None] = mapped_column(Integer, default=None)  # the others
    # the gauntlet's stop rule ({elo0, elo1, alpha, beta}); None: play every match
    sprt: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    # what the schedule achieved (arena.competition.formats.Balance.to_json)
    balance: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    # who may see a match's hidden cards while it is played: "public" (nobody: only the
    # public table until it ends) or "everyone" (every perspective, live)
    live_view: Mapped[str] = mapped_column(String(16), default="public")
    # the event it belongs to (None: the open arena); a qualifier's pass rule
    # (arena.competition.grading); the tournament a final run was cloned from
    event_id: Mapped[int | None] = mapped_column(ForeignKey("events.id"), index=True, default=None)
    pass_rule: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    # each bot's time, per match, to draw on past its decisions' deadlines (None: none)
    time_bank_ms: Mapped[int | None] = mapped_column(Integer, default=None)
    # the account that started it (None: started with a token, or before migration 0019)
    created_by: Mapped[int | None] = mapped_column(ForeignKey("accounts.id"), default=None)
    cloned_from: Mapped[int | None] = mapped_column(ForeignKey("tournaments.id"), default=None)
    seed: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(16), default="running")  # TOURNAMENT_STATUSES
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[dt.datetime | None] = mapped_column(default=None)

    entries: Mapped[list[TournamentEntry]] = relationship(
        back_populates="tournament", cascade="all, delete-orphan", order_by="TournamentEntry.bot_id"
    )
    matches: Mapped[list[Match]] = relationship(back_populates="tournament", order_by="Match.id")


class TournamentEntry(Base):
    __tablename__ = "tournament_entries"

    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), primary_key=True)
    challenger: Mapped[bool] = mapped_column(Boolean, default=False)  # gauntlet
    # standings, kept as each match finishes (arena.competition.standings): finished matches, points
    # (1 per opponent ranked below, 1/2 per opponent ranked equal), wins (first alone)
    matches: Mapped[int] = mapped_column(Integer, default=0)
    points: Mapped[float] = mapped_column(Float, default=0.0)
    wins: Mapped[int] = mapped_column(Integer, default=0)
    rank_sum: Mapped[int] = mapped_column(Integer, default=0)
    # duplicate deals: points above par summed over the deals whose every rotation finished
    deals: Mapped[int] = mapped_column(Integer, default=0)
    par_points: Mapped[float] = mapped_column(Float, default=0.0)
    # a gauntlet challenger's stop rule: observations (its score against the field per
    # match, or per complete deal), their sum and sum of squares, the log-likelihood
    # ratio and the decision (H1 passed, H0 failed)
    sprt_n: Mapped[int] = mapped_column(Integer, default=0)
    sprt_total: Mapped[float] = mapped_column(Float, default=0.0)
    sprt_total_sq: Mapped[float] = mapped_column(Float, default=0.0)
    sprt_llr: Mapped[float | None] = mapped_column(Float, default=None)
    sprt_decision: Mapped[str | None] = mapped_column(String(2), default=None)
    # results reach the test in schedule order: the last match (id) it has gone past
    # (every match up to it was observed, or skipped for ending without a result), and
    # the finished matches after it whose results wait for an earlier one to end
    sprt_through: Mapped[int] = mapped_column(Integer, default=0)
    sprt_waiting: Mapped[int] = mapped_column(Integer, default=0)
    # what went wrong, over its finished matches: faults (answers that were faults; not
    # the defaults played once it struck out), matches forfeited (not one usable
    # answer) and matches struck out (max_strikes reached)
    faults: Mapped[int] = mapped_column(Integer, default=0)
    forfeits: Mapped[int] = mapped_column(Integer, default=0)
    struck_out: Mapped[int] = mapped_column(Integer, default=0)

    tournament: Mapped[Tournament] = relationship(back_populates="entries")
    bot: Mapped[Bot] = relationship()


class TournamentPair(Base):
    """One entry's pairwise results against another in a tournament (the crosstable),
    kept as each match finishes; a pair that never met has no row."""

    __tablename__ = "tournament_pairs"

    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), primary_key=True)
    opponent_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), primary_key=True)
    wins: Mapped[int] = mapped_column(Integer, default=0)
    draws: Mapped[int] = mapped_column(Integer, default=0)
    losses: Mapped[int] = mapped_column(Integer, default=0)


class Match(Base):
    __tablename__ = "matches"
    # the rotations of one duplicate deal, looked up at every result and every page that
    # may show one of them
    __table_args__ = (Index("ix_matches_tournament_deal", "tournament_id", "deal"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    tournament_id: Mapped[int | None] = mapped_column(
        ForeignKey("tournaments.id"), index=True, default=None
    )
    kind: Mapped[str] = mapped_column(String(16), default="tournament")  # |ladder|play
    # the event it is played in (its tournament's, or its ladder's); None: the open arena
    event_id: Mapped[int | None] = mapped_column(ForeignKey("events.id"), index=True, default=None)
    game: Mapped[str] = mapped_column(String(32), index=True)
    options: Mapped[dict[str, Any]] = mapped_column(default=dict)
    seed: Mapped[int] = mapped_column(BigInteger)
    # a duplicate deal: the matches of one tournament sharing this number play the same
    # seed with the seats rotated (None: an independent deal)
    deal: Mapped[int | None] = mapped_column(Integer, default=None)
    status: Mapped[str] = mapped_column(String(16), default="queued", index=True)
    # queued -> running -> finished | failed; cancelled from queued (arena.worker.lifecycle)
    # claims of the match: its attempt number (live steps and bots' match ids use it)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    # attempts that failed for a reason of the match itself (an error playing or
    # recording it, its time limit): the match fails after a few
    failures: Mapped[int] = mapped_column(Integer, default=0)
    # attempts abandoned because their worker lost its lease (killed, out of memory, cut
    # off): never the match's fault, so they never fail it; many raise an alert
    lost_leases: Mapped[int] = mapped_column(Integer, default=0)
    # whether ``seed`` has been dealt to bots by an attempt: the next attempt is then
    # dealt anew (``arena.worker.lifecycle.redeal``), since the bots may remember this deal
    dealt: Mapped[bool] = mapped_column(Boolean, default=False)
    # whether a finished match's result is in the ratings and standings: a rotation of a
    # duplicate deal waits for the others (its deal may still be dealt again)
    settled: Mapped[bool] = mapped_column(Boolean, default=False)
    # when a warden last sent its run_match message again (None: only when it was
    # created); a queued match whose message was lost is sent again (arena.worker.warden)
    enqueued_at: Mapped[dt.datetime | None] = mapped_column(default=None)
    # who is playing it (a worker process), and until when that worker's claim holds
    # unless renewed: a lapsed lease means the worker is gone and another takes over
    lease_owner: Mapped[str | None] = mapped_column(String(200), default=None)
    lease_expires_at: Mapped[dt.datetime | None] = mapped_column(default=None)
    rated: Mapped[bool] = mapped_column(Boolean, default=True)
    # the order in which results changed the ratings (what a rebuild replays)
    rating_seq: Mapped[int | None] = mapped_column(Integer, unique=True, default=None)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    error: Mapped[str | None] = mapped_column(String(500), default=None)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    started_at: Mapped[dt.datetime | None] = mapped_column(default=None)
    finished_at: Mapped[dt.datetime | None] = mapped_column(default=None)

    tournament: Mapped[Tournament | None] = relationship(back_populates="matches")
    seats: Mapped[list[MatchSeat]] = relationship(
        back_populates="match", cascade="all, delete-orphan", order_by="MatchSeat.seat"
    )


class MatchSeat(Base):
    __tablename__ = "match_seats"

    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), index=True)
    rank: Mapped[int | None] = mapped_column(Integer, default=None)
    score: Mapped[float | None] = mapped_column(Float, default=None)
    strikes: Mapped[int] = mapped_column(Integer, default=0)
    # no usable answer in the whole match (arena.match.referee): ranked last
    forfeited: Mapped[bool] = mapped_column(Boolean, default=False)
    # what went wrong, for the owner: {"count", "kinds": {kind: n}, "first": its cause}
    faults: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    # the version the bot declared when the match started (its GET / or its session's)
    version: Mapped[str | None] = mapped_column(String(200), default=None)

    match: Mapped[Match] = relationship(back_populates="seats")
    bot: Mapped[Bot] = relationship()


class Replay(Base):
    """A finished match's record, stored compressed (``arena.match.records.encode``)."""

    __tablename__ = "replays"

    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"), primary_key=True)
    data: Mapped[bytes] = mapped_column(LargeBinary)

    @property
    def record(self) -> dict[str, Any]:
        return records.decode(self.data)

    @record.setter
    def record(self, record: dict[str, Any]) -> None:
        self.data = records.encode(record)


class LiveSteps(Base):
    """Steps of a running match, in the chunks its worker writes as it plays (about one a
    second): what the match's page shows while it is played.  Keyed by the attempt, so
    the steps of an attempt that was abandoned are never mixed with the next one's;
    deleted when the match is recorded."""

    __tablename__ = "live_steps"

    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"), primary_key=True)
    attempt: Mapped[int] = mapped_column(Integer, primary_key=True)
    first: Mapped[int] = mapped_column(Integer, primary_key=True)  # the chunk's first step
    steps: Mapped[list[Any]] = mapped_column()


class Rating(Base):
    """The live Elo of a bot in a game."""

    __tablename__ = "ratings"

    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), primary_key=True)
    game: Mapped[str] = mapped_column(String(32), primary_key=True)
    elo: Mapped[float] = mapped_column(Float)
    matches: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow, onupdate=utcnow)

    bot: Mapped[Bot] = relationship()


class RatingChange(Base):
    __tablename__ = "rating_changes"
    __table_args__ = (UniqueConstraint("match_id", "bot_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"), index=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), index=True)
    game: Mapped[str] = mapped_column(String(32))
    before: Mapped[float] = mapped_column(Float)
    after: Mapped[float] = mapped_column(Float)


class FittedRating(Base):
    """The order-independent maximum-likelihood rating, refit from the whole history."""

    __tablename__ = "fitted_ratings"

    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), primary_key=True)
    game: Mapped[str] = mapped_column(String(32), primary_key=True)
    rating: Mapped[float] = mapped_column(Float)
    low: Mapped[float] = mapped_column(Float)
    high: Mapped[float] = mapped_column(Float)
    matches: Mapped[int] = mapped_column(Integer)
    fitted_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class Ladder(Base):
    """Per game: whether Celery beat keeps scheduling rated matches among active bots."""

    __tablename__ = "ladders"

    game: Mapped[str] = mapped_column(String(32), primary_key=True)
    enabled: Mapped[bool] = mapped_column(Boolean, default=False)
    seats_per_match: Mapped[int] = mapped_column(Integer, default=2)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class Counter(Base):
    """Named counters taken under a row lock (the rating sequence)."""

    __tablename__ = "counters"

    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    value: Mapped[int] = mapped_column(Integer, default=0)


class WorkerBeat(Base):
    """The heartbeat of one worker or beat process: written when it starts and every few
    seconds while it lives, so that the web can tell an operator which processes are alive
    and warn when matches are queued with no worker to play them."""

    __tablename__ = "worker_beats"

    # the process's lease owner name for a worker (``arena.worker.warden.new_owner``)
    name: Mapped[str] = mapped_column(String(160), primary_key=True)
    kind: Mapped[str] = mapped_column(String(16), default="worker")  # WORKER_KINDS
    host: Mapped[str] = mapped_column(String(100), default="")
    pid: Mapped[int] = mapped_column(Integer, default=0)
    started_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    last_seen: Mapped[dt.datetime] = mapped_column(default=utcnow, index=True)
    capacity: Mapped[int] = mapped_column(Integer, default=0)  # matches it plays at once
    in_flight: Mapped[int] = mapped_column(Integer, default=0)  # matches it plays now
    metrics_port: Mapped[int | None] = mapped_column(Integer, default=None)
    stopped_at: Mapped[dt.datetime | None] = mapped_column(default=None)


class RatingFit(Base):
    """Per game, the stored fit of the maximum-likelihood ratings and the refit running:
    a refit claims the row (``running_since``), and fits only when the game has rated
    results newer than ``rating_seq``, the newest one the stored fit includes
    (``arena.worker.refits.refit_game``)."""

    __tablename__ = "rating_fits"

    game: Mapped[str] = mapped_column(String(32), primary_key=True)
    rating_seq: Mapped[int | None] = mapped_column(Integer, default=None)
    # when the refit now running claimed the row (None: none is running); a claim older
    # than the refit's stale_after is a crashed worker's, and is taken over
    running_since: Mapped[dt.datetime | None] = mapped_column(default=None)
    fitted_at: Mapped[dt.datetime | None] = mapped_column(default=None)
