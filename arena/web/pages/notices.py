"""Your notices: the badge of unread ones in every page's top bar, and ``/notices``, the
list (newest first), whose notices are marked read as it shows them.  What a notice says
and when one is raised is ``arena.services.notices``'; where they are also sent (a
webhook, e-mail) is set on the account page, through the API.
"""

from __future__ import annotations

from typing import Any

from flask import render_template
from flask_login import current_user

from arena.services import notices
from arena.web.pages.accounts import login_redirect
from arena.web.pages.common import bp, database, paginate, reader

NOTICES_PAGE = 50  # notices a page shows


@bp.app_template_global()
def unread_notices() -> int:
    """The signed-in account's unread notices, for the top bar's badge (0 for anyone
    else): counted as its login session is looked up (``arena.logins``), in that one
    transaction, so that no page waits on a second one."""
    return getattr(current_user, "unread_notices", 0) or 0


@bp.get("/notices")
def notices_page() -> Any:
    with database().session() as session:
        who = reader(session)
        if who.account_id is None:
            return login_redirect()
        total = notices.account_notices(session, who.account_id, page_size=1)[1]
        pager = paginate(total, NOTICES_PAGE)
        rows, _ = notices.account_notices(
            session, who.account_id, page=pager["page"], page_size=NOTICES_PAGE
        )
        shown = [notices.notice_json(n) for n in rows]
        # seen now: read from here on (this page still marks them new)
        notices.mark_read(session, who.account_id, [n["id"] for n in shown if not n["read"]])
        if hasattr(current_user, "unread_notices"):  # the badge of this page already
            current_user.unread_notices = notices.unread_count(session, who.account_id)
    return render_template("notices.html", notices=shown, pager=pager)
