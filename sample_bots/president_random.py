"""The president random house policy as an HTTP bot:
``python -m sample_bots.president_random --port 8001 [--secret S] [--host H]``, or from a
laptop ``--connect URL --bot-id ID --secret S`` (no port)."""

from sample_bots.policy_bot import main

if __name__ == "__main__":
    main("president", "random")
