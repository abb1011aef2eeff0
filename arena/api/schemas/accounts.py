"""Schemas of the accounts' routes: sign-up, log-in, tokens, resets, where notices go,
and the notices themselves."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from marshmallow import Schema, ValidationError, fields, pre_load, validate, validates_schema

from arena.api.schemas.fields import (
    PageArgsSchema,
    StrictBoolean,
    UtcDateTime,
    id_field,
    name_field,
)
from arena.models import (
    ACCOUNT_ROLES,
    NOTICE_KINDS,
)


def password_field(**kwargs: Any) -> fields.String:
    return fields.String(
        validate=validate.Length(min=1, max=200),
        load_only=True,
        metadata={"description": "10 to 200 characters, not the account's name"},
        **kwargs,
    )


class AccountCreateSchema(Schema):
    name = name_field(required=True)
    password = password_field(required=True)
    join_code = fields.String(
        validate=validate.Length(min=1, max=32),
        metadata={"description": "an event's join code: the account joins it"},
    )
    role = fields.String(
        load_default="contestant",
        validate=validate.OneOf(ACCOUNT_ROLES),
        metadata={"description": "organiser and admin: only the admin makes them"},
    )


class LoginSchema(Schema):
    name = fields.String(required=True, validate=validate.Length(min=1, max=64))
    password = fields.String(required=True, validate=validate.Length(min=1, max=200))
    label = fields.String(
        load_default="",
        validate=validate.Length(max=64),
        metadata={"description": "what the token is for (shown in your list of tokens)"},
    )


class AccountEventSchema(Schema):
    id = fields.Integer()
    name = fields.String()
    role = fields.String(metadata={"description": "organiser or contestant"})


class ApiTokenSchema(Schema):
    id = fields.Integer()
    label = fields.String()
    created_at = UtcDateTime()
    last_used_at = UtcDateTime(allow_none=True)


class AccountSchema(Schema):
    id = fields.Integer()
    name = fields.String()
    role = fields.String(metadata={"description": "one of " + ", ".join(ACCOUNT_ROLES)})
    created_at = UtcDateTime()
    events = fields.List(fields.Nested(AccountEventSchema))


class AccountDetailSchema(AccountSchema):
    tokens = fields.List(fields.Nested(ApiTokenSchema))
    notify_url = fields.String(
        allow_none=True,
        metadata={"description": "the webhook your notices are POSTed to (docs/notices.md)"},
    )
    email = fields.String(
        allow_none=True,
        metadata={"description": "where your notices are mailed, when the server sends mail"},
    )


def _webhook(url: str) -> None:
    if urlsplit(url).username is not None:
        raise ValidationError("The webhook must not contain credentials.")


class AccountUpdateSchema(Schema):
    notify_url = fields.Url(
        schemes={"http", "https"},
        require_tld=False,  # loopback for a local receiver, where the server allows it
        allow_none=True,
        validate=[validate.Length(max=512), _webhook],
        metadata={
            "description": "a webhook for your notices (Slack and Discord incoming webhooks "
            "take them as they are), or null to stop; each setting makes a new notify_secret"
        },
    )
    email = fields.Email(
        allow_none=True,
        validate=validate.Length(max=254),
        metadata={"description": "an address for your notices, or null to stop"},
    )

    @pre_load
    def _empty_is_none(self, data: Any, **kwargs: Any) -> Any:
        """An emptied field of the account page's form removes it, as null does."""
        if isinstance(data, dict):
            return {k: (None if v == "" else v) for k, v in data.items()}
        return data

    @validates_schema
    def _something(self, data: dict[str, Any], **kwargs: Any) -> None:
        if not data:
            raise ValidationError("Give notify_url and/or email (null to remove one).")


class AccountUpdatedSchema(AccountDetailSchema):
    notify_secret = fields.String(
        metadata={
            "description": "shown once, when notify_url is set: the key of the webhook's "
            "X-Arena-Signature HMAC"
        }
    )


class AccountCreatedSchema(AccountSchema):
    token = fields.String(
        metadata={"description": "shown once: an API token, for Authorization: Bearer"}
    )


class TokenCreatedSchema(Schema):
    id = fields.Integer()
    token = fields.String(metadata={"description": "shown once: Authorization: Bearer <token>"})
    account = fields.Nested(AccountSchema)


class ResetLinkSchema(Schema):
    account_id = fields.Integer()
    reset_path = fields.String(
        metadata={"description": "a one-time link to set a new password: hand it over"}
    )
    expires_at = UtcDateTime()


class SignedOutSchema(Schema):
    account_id = fields.Integer()
    sessions_ended = fields.Integer(
        metadata={"description": "the account's login sessions of the pages that ended"}
    )
    tokens_revoked = fields.Integer(metadata={"description": "its API tokens revoked"})


class PasswordResetSchema(Schema):
    secret = fields.String(required=True, validate=validate.Length(min=1, max=200))
    password = password_field(required=True)


class AccountListArgsSchema(PageArgsSchema):
    role = fields.String(validate=validate.OneOf(ACCOUNT_ROLES))


class NoticeSchema(Schema):
    id = fields.Integer()
    kind = fields.String(metadata={"description": "one of " + ", ".join(NOTICE_KINDS)})
    text = fields.String()
    bot_id = fields.Integer(allow_none=True)
    tournament_id = fields.Integer(allow_none=True)
    match_id = fields.Integer(allow_none=True)
    created_at = UtcDateTime()
    read = fields.Boolean()
    read_at = UtcDateTime(allow_none=True)


class NoticeListArgsSchema(PageArgsSchema):
    unread = fields.Boolean(
        load_default=False,
        truthy={"true", "1"},
        falsy={"false", "0"},
        metadata={"description": "only the unread ones"},
    )


class NoticesReadSchema(Schema):
    ids = fields.List(
        id_field(),
        validate=validate.Length(min=1, max=1000),
        metadata={"description": "the notices to mark read"},
    )
    all = StrictBoolean(
        load_default=False, metadata={"description": "true: mark every notice of yours read"}
    )

    @validates_schema
    def _one_of(self, data: dict[str, Any], **kwargs: Any) -> None:
        if bool(data.get("ids")) == bool(data.get("all")):
            raise ValidationError('Give either "ids" or "all": true.')


class NoticesMarkedSchema(Schema):
    marked = fields.Integer(metadata={"description": "notices that were unread"})
    unread = fields.Integer(metadata={"description": "your notices still unread"})
