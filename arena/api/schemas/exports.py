"""Flat tables, the JSON answer and its CSV alike (arena.api.exports)."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from arena.api.schemas.ratings import PROVISIONAL, TIE_GROUP
from arena.games import GAMES


class LeaderboardArgsSchema(Schema):
    game = fields.String(
        validate=validate.OneOf(sorted(GAMES)),
        metadata={"description": "one of the event's games (default: every one)"},
    )


class LeaderboardExportRowSchema(Schema):
    game = fields.String()
    rank = fields.Integer(metadata={"description": "1 for the best Elo of the game"})
    bot_id = fields.Integer()
    bot = fields.String()
    owner = fields.String()
    elo = fields.Float()
    matches = fields.Integer(metadata={"description": "rated matches played"})
    fitted_rating = fields.Float(allow_none=True, metadata={"description": "null: not fitted"})
    fitted_low = fields.Float(allow_none=True, metadata={"description": "its 95% interval"})
    fitted_high = fields.Float(allow_none=True)
    provisional = fields.Boolean(metadata={"description": PROVISIONAL})
    tie_group = fields.Integer(
        allow_none=True, metadata={"description": TIE_GROUP + " (numbered within its game)"}
    )


class StandingRowSchema(Schema):
    rank = fields.Integer(metadata={"description": "1 for the best"})
    bot_id = fields.Integer()
    bot = fields.String()
    matches = fields.Integer()
    points = fields.Float(
        metadata={"description": "1 per opponent ranked below, 1/2 per opponent ranked equal"}
    )
    points_per_match = fields.Float(allow_none=True)
    wins = fields.Integer()
    mean_rank = fields.Float(allow_none=True)
    challenger = fields.Boolean(metadata={"description": "a gauntlet's challenger"})
    faults = fields.Integer()
    struck_out = fields.Integer()
    forfeits = fields.Integer()
    deals = fields.Integer(
        allow_none=True, metadata={"description": "duplicate deals only: complete deals"}
    )
    par_per_deal = fields.Float(
        allow_none=True,
        metadata={"description": "duplicate deals only: points above par per complete deal"},
    )


class CrosstableRowSchema(Schema):
    bot_id = fields.Integer()
    bot = fields.String()
    opponent_id = fields.Integer()
    opponent = fields.String()
    wins = fields.Integer(metadata={"description": "matches the bot ranked above the opponent"})
    draws = fields.Integer()
    losses = fields.Integer()
