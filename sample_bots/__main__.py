"""``python -m sample_bots``: list the sample bots; ``python -m sample_bots NAME --port N``
serves one of them (``--connect URL --bot-id ID`` connects it to an arena instead)."""

from __future__ import annotations

import sys

from sample_bots import SAMPLE_BOTS


def main(argv: list[str]) -> int:
    if argv and not argv[0].startswith("-"):
        name = argv[0].replace("-", "_")
        if name not in SAMPLE_BOTS:
            print(f"no sample bot {argv[0]!r}; run python -m sample_bots", file=sys.stderr)
            return 2
        from sample_bots.policy_bot import main as serve_bot

        serve_bot(*SAMPLE_BOTS[name], argv[1:])
        return 0
    print("Sample bots (python -m sample_bots.NAME --port N [--secret S] [--host H]),")
    print("or from a laptop (python -m sample_bots.NAME --connect URL --bot-id ID --secret S):")
    for name, (game, policy) in SAMPLE_BOTS.items():
        print(f"  {name:<24}{game:<14}{policy}")
    print(
        "In JavaScript (Node, every game): node sample_bots/js/bot.js --port N [--secret S] "
        "(or --connect URL --bot-id ID)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
