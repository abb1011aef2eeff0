"""Cactus Game (set collection with action cards), game id ``cactus-game``."""

from arena.games.cactus_game.encoding import ENCODING as ENCODING
from arena.games.cactus_game.engine import GAME_CLASS as _CactusGame
from arena.games.cactus_game.policies import CactusGameHeuristic, RandomPolicy

GAME = _CactusGame()
POLICIES = {"random": RandomPolicy, "heuristic": CactusGameHeuristic}
