"""``/api/accounts``: sign-up, API tokens (a program's login), the account signed in and
where its notices go, its notices, one-time reset links an organiser makes, and signing
an account out everywhere (its own, or an organiser's for a contestant).  Sign-up and
login are rate limited per client address."""

from __future__ import annotations

from typing import Any

from flask import request
from flask.views import MethodView
from sqlalchemy import func, select

from arena import services
from arena.api.common import (
    BEARER,
    OPTIONAL_BEARER,
    PAGINATION_HEADERS_DOC,
    ApiBlueprint,
    anyone,
    config,
    credentials_first,
    current_caller,
    database,
    failed_logins,
    limit_signup,
    nobody,
    paged,
    rate_limit,
)
from arena.api.schemas.accounts import (
    AccountCreatedSchema,
    AccountCreateSchema,
    AccountDetailSchema,
    AccountListArgsSchema,
    AccountSchema,
    AccountUpdatedSchema,
    AccountUpdateSchema,
    LoginSchema,
    NoticeListArgsSchema,
    NoticeSchema,
    NoticesMarkedSchema,
    NoticesReadSchema,
    PasswordResetSchema,
    ResetLinkSchema,
    SignedOutSchema,
    TokenCreatedSchema,
)
from arena.models import Account, ApiToken
from arena.services import accounts, notices

blp = ApiBlueprint(
    "accounts",
    __name__,
    url_prefix="/api/accounts",
    description="Accounts (admin, organiser, contestant) and their API tokens.",
)


def _me(session: Any) -> Account:
    who = current_caller(session)
    who.check_account("this")
    assert who.account_id is not None
    return accounts.get_account(session, who.account_id)


@blp.route("")
class Accounts(MethodView):
    @credentials_first(anyone)
    @blp.arguments(AccountCreateSchema)
    @blp.response(201, AccountCreatedSchema)
    @blp.doc(security=OPTIONAL_BEARER)
    def post(self, data: dict[str, Any]) -> dict[str, Any]:
        """Sign up

        A contestant signs up with an event's ``join_code`` (and joins it), or without one
        where the server allows open sign-up.  Only the admin (the organiser token, or an
        admin's account) makes organisers and admins.  The answer holds an API token,
        shown this once.
        """
        with database().session() as session:
            who = current_caller(session)
            limit_signup(session, who, data.get("join_code"))
            account, _ = accounts.create_account(session, config(), who, **data)
            token = accounts.issue_token(session, account, "sign-up")
            return {**accounts.account_json(session, account), "token": token}

    @credentials_first(nobody)
    @blp.arguments(AccountListArgsSchema, location="query")
    @blp.response(200, AccountSchema(many=True), headers=PAGINATION_HEADERS_DOC)
    @blp.doc(security=BEARER)
    def get(self, query: dict[str, Any]) -> tuple[list[dict[str, Any]], int, dict[str, str]]:
        """List accounts (the admin only)"""
        with database().session() as session:
            who = current_caller(session)
            if not who.admin:
                raise who.refusal("only the admin lists accounts")
            statement = select(Account)
            if "role" in query:
                statement = statement.where(Account.role == query["role"])
            total = session.scalar(select(func.count()).select_from(statement.subquery()))
            rows = session.scalars(
                statement.order_by(Account.name_key)
                .offset((query["page"] - 1) * query["page_size"])
                .limit(query["page_size"])
            )
            items = [accounts.account_json(session, a) for a in rows]
        return paged(query, items, total or 0)


@blp.route("/tokens", methods=["POST"])
@blp.arguments(LoginSchema)
@blp.response(201, TokenCreatedSchema)
def new_token(data: dict[str, Any]) -> dict[str, Any]:
    """Log in for a program: a new API token from a name and password

    The token is shown this once; list and revoke your tokens at ``/api/accounts/me``.
    """
    with failed_logins(data["name"]), database().session() as session:
        account = accounts.authenticate(session, data["name"], data["password"])
        token = accounts.issue_token(session, account, data["label"])
        row = session.scalar(
            select(ApiToken).where(ApiToken.token_hash == services.hash_token(token))
        )
        return {
            "id": row.id if row else None,
            "token": token,
            "account": accounts.account_json(session, account),
        }


@blp.route("/me")
class Me(MethodView):
    @blp.response(200, AccountDetailSchema)
    @blp.doc(security=BEARER)
    def get(self) -> dict[str, Any]:
        """The account signed in, its events and its API tokens (never in clear)"""
        with database().session() as session:
            account = _me(session)
            tokens = session.scalars(
                select(ApiToken).where(ApiToken.account_id == account.id).order_by(ApiToken.id)
            )
            return {
                **accounts.account_json(session, account),
                **notices.destinations_json(account),
                "tokens": list(tokens),
            }

    @credentials_first(nobody)
    @blp.arguments(AccountUpdateSchema)
    @blp.response(200, AccountUpdatedSchema)
    @blp.doc(security=BEARER)
    def patch(self, data: dict[str, Any]) -> dict[str, Any]:
        """Set where your notices go: a webhook and/or an e-mail address

        ``notify_url``: each notice is POSTed there as JSON that Slack and Discord incoming
        webhooks take as it is, signed like the arena's requests to bots
        (``X-Arena-Timestamp``, ``X-Arena-Signature``) with a ``notify_secret`` made when
        it is set and shown in this answer only.  It must pass the address policy bots'
        endpoints do.  ``email``: notices are mailed there when the server sends mail.
        ``null`` removes either (docs/notices.md).
        """
        with database().session() as session:
            account = _me(session)
            secret = notices.set_destinations(session, config(), account, data)
            tokens = session.scalars(
                select(ApiToken).where(ApiToken.account_id == account.id).order_by(ApiToken.id)
            )
            body = {
                **accounts.account_json(session, account),
                **notices.destinations_json(account),
                "tokens": list(tokens),
            }
            if secret is not None:
                body["notify_secret"] = secret
            return body


@blp.route("/me/notices", methods=["GET"])
@credentials_first(nobody)
@blp.arguments(NoticeListArgsSchema, location="query")
@blp.response(200, NoticeSchema(many=True), headers=PAGINATION_HEADERS_DOC)
@blp.doc(security=BEARER)
def my_notices(query: dict[str, Any]) -> tuple[list[dict[str, Any]], int, dict[str, str]]:
    """Your notices, newest first: a bot paused, a bot's faults, a failed validation, a
    tournament finished, a grade decided (``unread=true``: the unread ones only)"""
    with database().session() as session:
        account = _me(session)
        rows, total = notices.account_notices(
            session,
            account.id,
            page=query["page"],
            page_size=query["page_size"],
            unread=query["unread"],
        )
        return paged(query, [notices.notice_json(n) for n in rows], total)


@blp.route("/me/notices/read", methods=["POST"])
@credentials_first(nobody)
@blp.arguments(NoticesReadSchema)
@blp.response(200, NoticesMarkedSchema)
@blp.doc(security=BEARER)
def read_notices(data: dict[str, Any]) -> dict[str, int]:
    """Mark your notices read: ``{"ids": [...]}`` or ``{"all": true}``

    Ids that are not your notices are ignored.
    """
    with database().session() as session:
        account = _me(session)
        marked = notices.mark_read(session, account.id, None if data["all"] else data["ids"])
        return {"marked": marked, "unread": notices.unread_count(session, account.id)}


@blp.route("/me/tokens/<int:token_id>", methods=["DELETE"])
@blp.response(204)
@blp.doc(security=BEARER)
def revoke(token_id: int) -> None:
    """Revoke one of your API tokens"""
    with database().session() as session:
        accounts.revoke_token(session, _me(session), token_id)


@blp.route("/me/sign-out", methods=["POST"])
@blp.response(200, SignedOutSchema)
@blp.doc(security=BEARER)
def sign_out_me() -> dict[str, Any]:
    """Sign yourself out everywhere: every session and every API token of yours ends

    The token (or the page's session) this request came with ends too: log in again
    (``POST /api/accounts/tokens``) for a new one.  Your password stays.
    """
    with database().session() as session:
        return accounts.sign_out_everywhere(session, _me(session))


@blp.route("/<int:account_id>/sign-out", methods=["POST"])
@blp.response(200, SignedOutSchema)
@blp.doc(security=BEARER)
def sign_out(account_id: int) -> dict[str, Any]:
    """Sign an account out everywhere (an organiser of one of its events, the admin, or
    the account itself)

    Every login session of the account (on every device) and every API token of it end,
    at once; its password stays, so its owner logs in again (a password someone else
    learned is changed with a reset link, which ends them too).  The event roster's
    *Sign out everywhere* button.
    """
    with database().session() as session:
        account = accounts.get_account(session, account_id)
        accounts.check_signs_out(session, current_caller(session), account)
        return accounts.sign_out_everywhere(session, account)


@blp.route("/<int:account_id>/reset", methods=["POST"])
@blp.response(201, ResetLinkSchema)
@blp.doc(security=BEARER)
def reset_link(account_id: int) -> dict[str, Any]:
    """Make a one-time link to set a new password (an organiser of one of the account's
    events, or the admin)

    No mail is sent: hand the link over.  It works once, for 24 hours; a newer one
    replaces it.
    """
    with database().session() as session:
        account = accounts.get_account(session, account_id)
        secret = accounts.make_reset_link(session, current_caller(session), account)
        return {
            "account_id": account.id,
            "reset_path": f"{request.script_root}/reset/{secret}",
            "expires_at": account.reset_expires_at,
        }


@blp.route("/reset", methods=["POST"])
@blp.arguments(PasswordResetSchema)
@blp.response(204)
def reset_password(data: dict[str, Any]) -> None:
    """Set a new password with a reset link's secret (the link's last part)

    The secret works once.  Every session and every API token of the account ends (a
    token made with the old password, the sign-up token): log in again with the new
    password (``POST /api/accounts/tokens``) for a new token.
    """
    with rate_limit("login"), database().session() as session:
        account = accounts.account_for_reset(session, data["secret"])
        accounts.set_password(session, account, data["password"])
