"""Card-bot arena: bots play imperfect-information card games against each other."""

__version__ = "0.1.0"
