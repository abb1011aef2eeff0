"""A linear softmax policy over a game's fixed action space, in numpy only.

``logits = W @ observation + b`` over the encoding's action space, restricted to the legal
indices (the action mask); ``choose`` is greedy (play time), ``sample`` draws from the
softmax (training).  The observation and the indices come from the game's encoding
(``arena/games/<game>/encoding.py``): this module knows nothing of any game's rules.

One ``.npz`` file holds the weights and what they were trained for: the game id, the
player count and options, the encoding's size, action count and a fingerprint of its
layout.  ``load`` refuses a file whose encoding differs from the installed one (the
weights would read the wrong slices), with a message that says how to retrain.
"""

from __future__ import annotations

import hashlib
import importlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from arena.games.base import Action
from arena.games.encoding import Encoding

FORMAT = "arena-learned-policy/1"


class WeightsError(ValueError):
    """A weights file that cannot be played: missing, not ours, or for another encoding."""


def encoding_of(game: str) -> Encoding:
    """The encoding of ``game`` (``arena.games.ENCODINGS``, else the game package's own
    ``encoding`` module, for a registry that does not list it yet)."""
    from arena.games import ENCODINGS, get_game

    game_id = get_game(game).id
    found = ENCODINGS.get(game_id)
    if found is None:
        module = importlib.import_module(f"arena.games.{game_id.replace('-', '_')}.encoding")
        found = module.ENCODING
    return found


def fingerprint(encoding: Encoding) -> str:
    """A short hash of the layout (field names, offsets, sizes) and the action keys: two
    encodings with the same sizes but moved slices or renumbered actions differ here."""
    text = json.dumps(
        [
            [[f.name, f.start, f.size] for f in encoding.fields],
            [repr(key) for key in encoding.actions.keys],
        ]
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class LinearPolicy:
    """``weights`` (actions x size) and ``bias`` (actions), float32, for ``game`` played
    by ``players`` with ``options`` (what it was trained on; recorded, not enforced: the
    observation has the same size for every player count and option)."""

    def __init__(
        self,
        game: str,
        players: int,
        options: Mapping[str, Any] | None = None,
        weights: np.ndarray | None = None,
        bias: np.ndarray | None = None,
        info: Mapping[str, Any] | None = None,
    ):
        self.encoding = encoding_of(game)
        self.game = self.encoding.game_id
        self.players = int(players)
        self.options = dict(options or {})
        shape = (len(self.encoding.actions), self.encoding.size)
        self.weights = np.zeros(shape, np.float32) if weights is None else weights
        self.bias = np.zeros(shape[0], np.float32) if bias is None else bias
        if self.weights.shape != shape or self.bias.shape != shape[:1]:
            raise WeightsError(
                f"weights {self.weights.shape} and bias {self.bias.shape} do not fit the "
                f"{self.game} encoding ({shape[0]} actions x {shape[1]} values)"
            )
        self.info = dict(info or {})  # how it was trained: command, time, matches...

    @property
    def size(self) -> int:
        return self.encoding.size

    @property
    def n_actions(self) -> int:
        return len(self.encoding.actions)

    # -- deciding ------------------------------------------------------------------------
    def logits(self, observation: np.ndarray, indices: np.ndarray) -> np.ndarray:
        """The logits of the actions ``indices`` only (a legal set is a handful of rows)."""
        return self.weights[indices] @ observation + self.bias[indices]

    def probabilities(self, observation: np.ndarray, indices: np.ndarray) -> np.ndarray:
        """The softmax over ``indices``."""
        z = self.logits(observation, indices)
        z = np.exp(z - z.max())
        return z / z.sum()

    def choose(self, observation: np.ndarray, mask: np.ndarray) -> int:
        """The greedy index among those whose ``mask`` entry is 1 (the first on a tie, so
        that a decision replays)."""
        indices = mask.view(np.bool_).nonzero()[0]  # as arena.learn.legal, without its import
        if indices.size == 0:
            raise ValueError("the action mask allows no action")
        return int(indices[int(np.argmax(self.logits(observation, indices)))])

    def sample(
        self, observation: np.ndarray, indices: np.ndarray, rng: np.random.Generator
    ) -> tuple[int, np.ndarray]:
        """A position in ``indices`` drawn from the softmax, and the probabilities."""
        p = self.probabilities(observation, indices)
        return int(rng.choice(indices.size, p=p)), p

    def observe(self, view: dict[str, Any]) -> np.ndarray:
        """The observation of a view (what ``arena.learn`` computes, for a bot)."""
        values = np.zeros(self.encoding.size, np.float32)
        self.encoding.encode(view, values)
        return values

    def act(self, view: dict[str, Any], legal_actions: list[Action]) -> Action:
        """The greedy legal action for a view, as a bot answers: the legal actions the
        fixed space cannot name (a documented cap of the encoding) are never chosen,
        unless none can be named."""
        legal = self.encoding.legal_indices(view, legal_actions)
        if not legal:  # the encoding promises this cannot happen; answer all the same
            return legal_actions[0]
        indices = np.fromiter(legal, np.int64, len(legal))
        observation = self.observe(view)
        best = int(np.argmax(self.logits(observation, indices)))
        return legal[int(indices[best])]

    # -- the file ------------------------------------------------------------------------
    def save(self, path: str | Path) -> None:
        """One compressed ``.npz``: ``weights``, ``bias`` and ``meta`` (JSON text)."""
        meta = {
            "format": FORMAT,
            "game": self.game,
            "players": self.players,
            "options": self.options,
            "size": self.size,
            "actions": self.n_actions,
            "fingerprint": fingerprint(self.encoding),
            "info": self.info,
        }
        with open(path, "wb") as f:  # np.savez would append .npz to a name without it
            np.savez_compressed(
                f,
                weights=self.weights.astype(np.float32),
                bias=self.bias.astype(np.float32),
                meta=np.array(json.dumps(meta, sort_keys=True)),
            )

    @classmethod
    def load(cls, path: str | Path) -> LinearPolicy:
        """The policy of a file written by ``save``; ``WeightsError`` when the file is not
        one, or was trained on an encoding other than the installed one."""
        try:
            with np.load(path, allow_pickle=False) as data:
                weights, bias = data["weights"], data["bias"]
                meta = json.loads(str(data["meta"]))
        except FileNotFoundError:
            raise WeightsError(f"{path}: no such weights file") from None
        except (OSError, ValueError, KeyError) as exc:
            raise WeightsError(f"{path}: not a weights file of this bot ({exc})") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise WeightsError(f"{path}: not a weights file of this bot (format {FORMAT})")
        encoding = encoding_of(meta["game"])
        retrain = (
            f"retrain it: python -m sample_bots.learned.train --game {meta['game']} "
            f"--players {meta['players']} --out {path}"
        )
        have = (encoding.size, len(encoding.actions))
        shape = (meta["size"], meta["actions"])
        if shape != have or weights.shape != (have[1], have[0]) or bias.shape != (have[1],):
            raise WeightsError(
                f"{path} was trained for a {meta['game']} encoding of {shape[0]} values and "
                f"{shape[1]} actions (weights {weights.shape}), but the installed encoding has "
                f"{have[0]} values and {have[1]} actions: {retrain}"
            )
        if meta.get("fingerprint") != fingerprint(encoding):
            raise WeightsError(
                f"{path} was trained for another layout of the {meta['game']} encoding (same "
                f"sizes, but slices or action numbering changed): {retrain}"
            )
        return cls(
            meta["game"],
            meta["players"],
            meta.get("options"),
            weights.astype(np.float32),
            bias.astype(np.float32),
            meta.get("info"),
        )
