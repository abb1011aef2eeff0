"""The leaderboards: every game's best five, and one game's with each fitted rating's
interval drawn as a bar (``arena.web.charts``).  These are the open arena's: an event's
bots are ranked among their event's only (events never mix).

Also how every page words a rating (the leaderboards, an event's, a bot's page): a
provisional one says so and why (``provisional_note``) instead of an interval too wide to
mean anything, and a row statistically tied with its neighbours says with which
(``tie_title``).  The rows come from ``services.leaderboard`` and ``services.bot_ratings``,
which build each rating the one way (``services.rating_view``)."""

from __future__ import annotations

from typing import Any

from flask import abort, render_template
from sqlalchemy.orm import Session

from arena import services
from arena.competition.ratings import PROVISIONAL_MATCHES, PROVISIONAL_WIDTH
from arena.games import GAMES
from arena.web import charts
from arena.web.pages.common import bp, database, game_rows


@bp.get("/leaderboard")
def leaderboards() -> str:
    with database().session() as session:
        boards = [(game, sorted_leaderboard(session, game["id"])[:5]) for game in game_rows()]
        return render_template("leaderboards.html", boards=boards)


def sorted_leaderboard(
    session: Session, game_id: str, event_id: int | None = None
) -> list[dict[str, Any]]:
    """The service's rows of the open arena (``event_id`` None) or of one event, best Elo
    first (ties keep the service's order)."""
    rows = services.leaderboard(session, game_id, event_id=event_id)
    return sorted(rows, key=lambda row: -row["elo"])


@bp.get("/leaderboard/<game_id>")
def leaderboard(game_id: str) -> str:
    if game_id not in GAMES:
        abort(404, f"There is no game {game_id!r}.")
    with database().session() as session:
        rows = sorted_leaderboard(session, game_id)
        return render_template(
            "leaderboard.html", game=GAMES[game_id], rows=rows, **_interval_bars(rows)
        )


def _interval_bars(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Each fitted row's 95% interval as a bar (by bot id), all on one scale that holds
    every interval of the page, and that scale's tick values for the column's heading."""
    fitted = [row for row in rows if not row["provisional"]]  # a provisional one has no bar
    scale = charts.scale_of([(row["fitted"]["low"], row["fitted"]["high"]) for row in fitted])
    if scale is None:
        return {"bars": {}, "bars_axis": None}
    return {
        "bars": {
            row["bot_id"]: charts.interval_bar(
                row["fitted"]["rating"],
                row["fitted"]["low"],
                row["fitted"]["high"],
                scale=scale,
                label=row["name"],
            )
            for row in fitted
        },
        "bars_axis": charts.interval_axis(scale),
    }


# -- how a rating is worded ----------------------------------------------------------------
PROVISIONAL_TITLE = (
    f"Provisional: too little evidence for the fitted rating to be compared. A fitted "
    f"rating counts once it rests on {PROVISIONAL_MATCHES} rated matches or more and its 95% "
    f"interval is narrower than {PROVISIONAL_WIDTH:.0f} points."
)


@bp.app_template_global()
def provisional_title() -> str:
    return PROVISIONAL_TITLE


@bp.app_context_processor
def provisional_rule() -> dict[str, Any]:
    """The provisional rule's numbers, for the pages that explain it."""
    return {
        "provisional_matches": PROVISIONAL_MATCHES,
        "provisional_width": f"{PROVISIONAL_WIDTH:.0f}",
    }


@bp.app_template_filter("provisional_note")
def provisional_note(view: dict[str, Any]) -> str:
    """Why a rating (``services.rating_view``) is provisional, in a few words."""
    fitted = view["fitted"]
    if fitted is None:
        return "not fitted yet"
    if fitted["matches"] < PROVISIONAL_MATCHES:
        played = fitted["matches"]
        return (
            f"{played} rated match{'es' if played != 1 else ''} of the {PROVISIONAL_MATCHES} needed"
        )
    return f"interval still wider than {PROVISIONAL_WIDTH:.0f} points"


@bp.app_template_filter("tie_title")
def tie_title(row: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    """The words of a row's tie mark: the bots of its tie group (``row["tie_group"]``) in
    ``rows`` (its leaderboard), and what being tied means."""
    others = [r["name"] for r in rows if r["tie_group"] == row["tie_group"] and r is not row]
    names = others[0] if len(others) == 1 else ", ".join(others[:-1]) + " and " + others[-1]
    return (
        f"Statistically tied with {names}: their fitted ratings differ by less than the 95% "
        "margin of the difference, so the order between them may be chance."
    )
