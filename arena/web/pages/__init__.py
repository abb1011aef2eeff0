"""The server-rendered pages: leaderboards, bots, tournaments and the replay viewer.

Pages only read.  Everything that changes data (registering a bot, starting or
cancelling a tournament) goes through the JSON API from ``static/forms.js``, so the
rules for what is accepted live in one place.  Aggregates come from the functions the
API uses: leaderboards and progress from ``arena.services``, standings, crosstables and
a gauntlet's stop rule from ``arena.competition.standings``.  Counts of matches are of
matches played (finished).

One module per area, mirroring ``arena.api``, all on the one blueprint ``bp`` (``web``):

- ``common``: the blueprint, paging, the ETags of live pages, template filters;
- ``games``: the overview and each game's drawing for the viewer;
- ``ratings``: the leaderboards;
- ``bots``: the bot list, registration form and a bot's page with its charts (and a hosted
  bot's versions of its code, for those who manage it);
- ``tournaments``: the tournament list, the form and a tournament's page;
- ``matches``: a match's page and its viewer (with the private logs of the seats whose bot
  its reader manages);
- ``play``: people at the table (pick the opponents, a person's seat);
- ``accounts``: logging in and out, signing up, reset links, your account, My bots, and
  the admin's list of accounts (the only pages with their own POST forms: they start and
  end the login session);
- ``events``: the events, a new event, and an event's roster, leaderboard and tournaments;
- ``notices``: your notices (``/notices``) and the top bar's count of unread ones;
- ``status``: the organisers' view of the workers, the queues and the throughput.
"""

from __future__ import annotations

# the modules register their pages on the blueprint as they are imported
from arena.web.pages import (  # noqa: F401
    accounts,
    bots,
    events,
    games,
    matches,
    notices,
    play,
    ratings,
    status,
    tournaments,
)
from arena.web.pages.common import bp, compact, number, signed, when

__all__ = ["bp", "compact", "number", "signed", "when"]
