"""The learning contract: how a game's views become fixed-size observations and its JSON
actions fixed indices, for training environments (``arena.learn``) and trained bots.

An encoding reads a seat's *view* (what ``Game.view`` gives that seat), never the state:
what it writes can hold nothing that seat may not know.  Its observation has the same
size for every player count, option and preset of the game (seats are counted from the
observer: block 0 is the observer, block 1 the next seat clockwise, ...), every value lies
in [0, 1], and each slice is documented by a :class:`Field`.  Its action space is fixed
too: every JSON action the game can ask for has one index, and an action's index may
depend on the view it answers (a Cactus slot is named by its position in the layout).

Pure Python, no numpy: ``encode`` writes into any zeroed mutable sequence of floats (a
list, or a numpy array in ``arena.learn``), so a trained bot needs nothing else to play.
"""

from __future__ import annotations

from collections.abc import Iterable, MutableSequence
from dataclasses import dataclass
from typing import Any, ClassVar

from arena.games.base import JSON, Action


@dataclass(frozen=True, slots=True)
class Field:
    """One slice of an observation: ``values[start:start + size]`` means ``doc``."""

    name: str
    start: int
    size: int
    doc: str

    @property
    def stop(self) -> int:
        return self.start + self.size


class Layout:
    """Builds a list of :class:`Field` one after another: ``add`` returns the offset."""

    def __init__(self) -> None:
        self.fields: list[Field] = []
        self.size = 0

    def add(self, name: str, size: int, doc: str) -> int:
        assert size > 0 and name not in {f.name for f in self.fields}, name
        start = self.size
        self.fields.append(Field(name, start, size, doc))
        self.size += size
        return start


class ActionSpace:
    """A fixed numbering of a game's actions: ``keys[i]`` is a hashable description of
    action ``i`` (built by the game's encoding), ``docs[i]`` its words."""

    def __init__(self, entries: Iterable[tuple[Any, str]]):
        self.keys: list[Any] = []
        self.docs: list[str] = []
        self.index: dict[Any, int] = {}
        for key, doc in entries:
            assert key not in self.index, f"action {key!r} twice"
            self.index[key] = len(self.keys)
            self.keys.append(key)
            self.docs.append(doc)

    def __len__(self) -> int:
        return len(self.keys)


class Encoding:
    """Base of every game's encoding (``arena/games/<game>/encoding.py``, ``ENCODING``).

    Subclasses fill ``fields``, ``size`` and ``actions`` in ``__init__`` and implement the
    three methods.  ``encode`` is called once per decision of a training run: keep it
    lean (precomputed offsets, no JSON copies)."""

    game_id: ClassVar[str]
    fields: list[Field]
    size: int
    actions: ActionSpace

    def encode(self, view: dict[str, JSON], out: MutableSequence[float]) -> None:
        """Write the observation of ``view`` into ``out`` (``size`` zeros on entry): only
        the non-zero values need writing; each value in [0, 1]."""
        raise NotImplementedError

    def action_index(self, view: dict[str, JSON], action: Action) -> int | None:
        """The index of ``action`` (one of the legal actions sent with ``view``), or None
        for an action the fixed space cannot name (documented per game; at least one
        legal action of every request always has an index)."""
        raise NotImplementedError

    def explain(self, values: list[float]) -> dict[str, JSON]:
        """The card-bearing part of an observation as JSON shaped like the game's view
        (same keys and paths), so the tests' leak oracle checks the observation as it
        checks a view: every card the observation names stands where the view would put
        it."""
        raise NotImplementedError

    # -- shared helpers ------------------------------------------------------------------
    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)

    def legal_indices(
        self, view: dict[str, JSON], legal_actions: list[Action]
    ) -> dict[int, Action]:
        """Index -> legal action, for every legal action the space can name (the first
        one wins if two had the same index, which the tests rule out)."""
        found: dict[int, Action] = {}
        index = self.action_index
        for action in legal_actions:
            i = index(view, action)
            if i is not None and i not in found:
                found[i] = action
        return found

    def field_table(self) -> str:
        """The observation's slices as a Markdown table (docs/learn/ quotes it)."""
        rows = ["| slice | name | meaning |", "|---|---|---|"]
        rows += [f"| {f.start}:{f.stop} | `{f.name}` | {f.doc} |" for f in self.fields]
        return "\n".join(rows)
