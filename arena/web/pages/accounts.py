"""The account pages: logging in and out, signing up, a one-time password reset link, your
account (role, events, API tokens), "My bots", and the admin's list of accounts.

Logging in, signing up, logging out, signing out everywhere and setting a password are
this module's own Flask-WTF forms (a POST with the form's CSRF token, then a redirect):
they start or end the login session, which the JSON API does not.  Everything else that changes data
(making or revoking a token, attaching a bot, creating an organiser) goes through the API
from ``static/forms.js``, which sends the page's CSRF token.  The rules (who may sign up,
what a password must be) are ``arena.services.accounts``'; this module only shows them.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from flask import abort, flash, redirect, render_template, request, url_for
from flask_wtf import FlaskForm
from sqlalchemy import func, select
from werkzeug.wrappers import Response
from wtforms import PasswordField, StringField
from wtforms.validators import DataRequired, Length, Optional

from arena import services
from arena.logins import failed_logins, limit_signup, log_in, log_out, rate_limit
from arena.models import Account, ApiToken, Bot, Event
from arena.services import accounts, notices
from arena.web.pages.common import bp, config, database, reader
from arena.worker.lifecycle import declared_version

LOGIN_PAGE = "web.login"


class LoginForm(FlaskForm):
    name = StringField("Name", validators=[DataRequired(), Length(max=64)])
    password = PasswordField("Password", validators=[DataRequired(), Length(max=200)])


class SignupForm(FlaskForm):
    name = StringField("Name", validators=[DataRequired(), Length(max=64)])
    password = PasswordField("Password", validators=[DataRequired(), Length(max=200)])
    join_code = StringField("Join code", validators=[Optional(), Length(max=32)])


class ResetForm(FlaskForm):
    password = PasswordField("New password", validators=[DataRequired(), Length(max=200)])


class LogoutForm(FlaskForm):
    """Only its CSRF token: logging out is a POST a stranger's page cannot make."""


def safe_next(target: str | None) -> str | None:
    """``next`` when it is a path of this site (``/my/bots``), else None: a login link
    must not send anyone to another site after they typed their password."""
    if not target or not target.startswith("/") or target.startswith("//"):
        return None
    if "\\" in target or any(ord(c) < 0x20 for c in target):
        return None  # browsers read "/\evil" as "//evil"
    parts = urlsplit(target)
    if parts.scheme or parts.netloc:
        return None
    return target


def login_redirect() -> Response:
    """To the login page, back here afterwards."""
    return redirect(url_for(LOGIN_PAGE, next=request.full_path.rstrip("?")))


@bp.route("/login", methods=["GET", "POST"])
def login() -> Any:
    form = LoginForm()
    wanted = safe_next(request.args.get("next"))
    message = busy = None
    if request.method == "POST":
        if form.validate():
            name = form.name.data or ""
            try:
                with failed_logins(name), database().session() as session:
                    account = accounts.authenticate(session, name, form.password.data or "")
                    log_in(session, account)
            except services.ServiceError as exc:
                message, busy = exc.message, exc.fields.get("retry_after")
            else:
                return redirect(wanted or url_for("web.my_bots"))
        else:
            message = "Give your name and password."
    # a refused login is the form again with the reason, answered 401 as the API does (a
    # crowd's 503, with when to come back, as the API does too)
    page = render_template("login.html", form=form, message=message, next=wanted)
    if busy is not None:
        return page, 503, {"Retry-After": str(busy)}
    return (page, 401) if message else page


@bp.post("/logout")
def logout() -> Response:
    """End this session on the server (its row), not only in this browser's cookie: a
    copy of the cookie taken before is refused afterwards.  The account's sessions on
    other devices stay."""
    # the CSRF token was checked before this ran (arena.logins: every page POST)
    with database().session() as session:
        log_out(session)
    flash("You are logged out.")
    return redirect(url_for("web.index"))


@bp.post("/account/sign-out")
def sign_out_everywhere() -> Response:
    """End every session of the signed-in account (this one too) and revoke its API
    tokens: for a person who fears someone else is signed in as them.  Their password
    stays; a stolen one is changed with a reset link."""
    with database().session() as session:
        who = reader(session)
        if who.account_id is None:
            return login_redirect()
        ended = accounts.sign_out_everywhere(session, accounts.get_account(session, who.account_id))
        log_out(session)
    flash(
        f"You are signed out everywhere: {ended['sessions_ended']} sessions ended and "
        f"{ended['tokens_revoked']} API tokens revoked. Log in again here."
    )
    return redirect(url_for(LOGIN_PAGE))


@bp.route("/signup", methods=["GET", "POST"])
def signup() -> Any:
    form = SignupForm()
    open_signup = config().open_signup
    if request.method == "GET" and request.args.get("code"):
        form.join_code.data = request.args["code"]  # a link the organiser handed out
    message = None
    if request.method == "POST":
        if form.validate():
            with database().session() as session:
                limit_signup(session, reader(session), (form.join_code.data or "").strip() or None)
                try:
                    account, event = accounts.create_account(
                        session,
                        config(),
                        reader(session),
                        name=form.name.data or "",
                        password=form.password.data or "",
                        join_code=(form.join_code.data or "").strip() or None,
                    )
                except services.ServiceError as exc:
                    message = exc.message
                    session.rollback()
                else:
                    log_in(session, account)
                    if event is not None:
                        flash(f"Welcome, {account.name}: you joined {event.name}.")
                        return redirect(url_for("web.event", event_id=event.id))
                    flash(f"Welcome, {account.name}.")
                    return redirect(url_for("web.my_bots"))
        else:
            message = "; ".join(
                f"{form[name].label.text}: {' '.join(errors)}"
                for name, errors in form.errors.items()
            )
    return render_template(
        "signup.html", form=form, message=message, open_signup=open_signup
    ), 400 if message else 200


@bp.route("/reset/<secret>", methods=["GET", "POST"])
def reset(secret: str) -> Any:
    form = ResetForm()
    message = None
    with database().session() as session:
        try:
            account = accounts.account_for_reset(session, secret)
        except services.ServiceError as exc:
            abort(404, exc.message)
        if request.method == "POST":
            with rate_limit("login"):
                try:
                    if not form.validate():
                        raise services.ServiceError(400, "Give a new password.")
                    accounts.set_password(session, account, form.password.data or "")
                except services.ServiceError as exc:
                    message = exc.message
                else:
                    # the new password ended every session and API token of the account;
                    # this session starts afresh (a program needs a new token)
                    log_in(session, account)
                    flash(
                        "Your new password is set. Every other session and every API token "
                        "of your account has ended: make a new token on your account page if "
                        "a program needs one."
                    )
                    return redirect(url_for("web.my_bots"))
        name = account.name
    return render_template("reset.html", form=form, message=message, name=name), (
        400 if message else 200
    )


@bp.get("/account")
def account() -> Any:
    with database().session() as session:
        who = reader(session)
        if who.account_id is None:
            return login_redirect()
        me = accounts.get_account(session, who.account_id)
        tokens = list(
            session.scalars(
                select(ApiToken).where(ApiToken.account_id == me.id).order_by(ApiToken.id)
            )
        )
        me_json = {**accounts.account_json(session, me), **notices.destinations_json(me)}
        return render_template("account.html", me=me_json, tokens=tokens)


@bp.get("/my/bots")
def my_bots() -> Any:
    with database().session() as session:
        who = reader(session)
        if who.account_id is None:
            return login_redirect()
        bots = list(
            session.scalars(
                select(Bot)
                .where(Bot.account_id == who.account_id, Bot.status != "deleted")
                .order_by(Bot.name_key)
            )
        )
        event_ids = {b.event_id for b in bots if b.event_id is not None}
        event_names = dict(
            session.execute(select(Event.id, Event.name).where(Event.id.in_(event_ids))).all()
        )
        rows = [
            {"bot": b, "event": event_names.get(b.event_id), "version": declared_version(b)}
            for b in bots
        ]
        played = services.played_by_bot(session, [b.id for b in bots])
        return render_template("my_bots.html", rows=rows, played=played)


@bp.get("/accounts")
def accounts_admin() -> Any:
    with database().session() as session:
        who = reader(session)
        if who.anonymous:
            return login_redirect()
        if not who.admin:
            return render_template("accounts_admin.html", forbidden=True), 403
        people = [
            accounts.account_json(session, a)
            for a in session.scalars(select(Account).order_by(Account.role, Account.name_key))
        ]
        bot_counts = dict(
            session.execute(
                select(Bot.account_id, func.count())
                .where(Bot.account_id.is_not(None), Bot.status != "deleted")
                .group_by(Bot.account_id)
            ).all()
        )
        return render_template(
            "accounts_admin.html", forbidden=False, people=people, bot_counts=bot_counts
        )


@bp.app_context_processor
def _logout_form() -> dict[str, Any]:
    """The top bar's Log out button, on every page."""
    return {"logout_form": LogoutForm}
