"""Cactus (memory golf), game id ``cactus``, presets ``classic`` and ``pagat``."""

from arena.games.cactus.encoding import ENCODING as ENCODING
from arena.games.cactus.engine import Cactus
from arena.games.cactus.policies import CactusHeuristic, RandomPolicy

GAME = Cactus()
POLICIES = {"random": RandomPolicy, "heuristic": CactusHeuristic}
