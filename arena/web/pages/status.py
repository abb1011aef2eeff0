"""The organisers' status page (``/status``): the workers alive, the queues, beat, the
matches finished and the bots' faults per minute, and the warnings; what
``GET /api/status`` answers, for a person.  Who may read it: ``workers.may_read_status``.
"""

from __future__ import annotations

from typing import Any

from flask import render_template

from arena.api.health import broker_waiting
from arena.services import workers
from arena.web.pages.accounts import login_redirect
from arena.web.pages.common import bp, config, database, reader

REFRESH_SECONDS = 10  # the page reloads itself this often


@bp.get("/status")
def status() -> Any:
    with database().session() as session:
        who = reader(session)
        if not workers.may_read_status(config().profile, who):
            if who.anonymous:
                return login_redirect()
            return render_template("status.html", forbidden=True), 403
        found = workers.status(session)
    found["matches"]["broker_waiting"] = broker_waiting(config())
    return render_template("status.html", forbidden=False, status=found, refresh=REFRESH_SECONDS)


@bp.app_template_global()
def status_in_nav() -> bool:
    """The top bar links the status page for those who may read it (a logged-in
    organiser or admin; everyone in the local profile)."""
    from flask_login import current_user

    role = getattr(current_user, "role", None)
    return config().profile == "local" or role in ("admin", "organiser")
