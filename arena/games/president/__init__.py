"""Président (Trou du Cul), game id ``president``."""

from arena.games.president.encoding import ENCODING as ENCODING
from arena.games.president.engine import President
from arena.games.president.policies import PresidentHeuristic, RandomPolicy

GAME = President()
POLICIES = {"random": RandomPolicy, "heuristic": PresidentHeuristic}
