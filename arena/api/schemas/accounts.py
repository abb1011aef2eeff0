"""Schemas of the accounts' routes: sign-up, log-in, tokens and resets."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields, validate

from arena.api.schemas.fields import PageArgsSchema, UtcDateTime, name_field
from arena.models import (
    ACCOUNT_ROLES,
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
