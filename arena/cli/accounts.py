"""``arena accounts``: create an account (an organiser, an admin, a contestant) and log in
for a new API token, against a running arena (``/api/accounts``).

A password never goes on the command line (it would stay in the shell's history and in
``ps``): it is asked for without echo, or read from the first line of standard input
with ``--password-stdin``.  The token printed is shown this once: commands read it from
``$ARENA_TOKEN``.
"""

from __future__ import annotations

import argparse
import getpass
import sys
import warnings
from typing import Any

from arena.cli.output import UsageError, printed_as_json
from arena.cli.remote import credential, open_client, remote_options

ROLES = ("contestant", "organiser", "admin")


def read_password(args: argparse.Namespace, confirm: bool = False) -> str:
    """The password: standard input's first line (``--password-stdin``), else asked on
    the terminal (twice when ``confirm``)."""
    if args.password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = _ask(f"password for {args.name}: ")
        if confirm and _ask("the same password again: ") != password:
            raise UsageError("the two passwords differ: nothing was done")
    if not password:
        raise UsageError("the password is empty")
    return password


def _ask(prompt: str) -> str:
    # with no terminal getpass would read standard input with the password echoed,
    # after a warning: refused instead, with the way that works
    with warnings.catch_warnings():
        warnings.simplefilter("error", getpass.GetPassWarning)
        try:
            return getpass.getpass(prompt)
        except (getpass.GetPassWarning, EOFError):
            raise UsageError(
                "no terminal to ask the password on: give it on standard input with "
                "--password-stdin"
            ) from None


def _print_token(token: str) -> None:
    print(f"API token:  {token}")
    print(
        "Shown this once. Commands read it from $ARENA_TOKEN (export ARENA_TOKEN=...); "
        "the API\ntakes it as Authorization: Bearer <token>."
    )


def cmd_accounts_create(args: argparse.Namespace) -> int:
    from arena.cli.client import ORGANISER_TOKEN_ENV, TOKEN_ENV

    body: dict[str, Any] = {"name": args.name, "role": args.role}
    if args.join_code:
        body["join_code"] = args.join_code
    body["password"] = read_password(args, confirm=True)
    with open_client(args) as client:
        # organisers and admins are made by the admin: the organiser token, or an
        # admin's account
        account = client.post("/api/accounts", body, credential(ORGANISER_TOKEN_ENV, TOKEN_ENV))
    if printed_as_json(args, account):
        return 0
    events = ", ".join(f"{e['name']} ({e['id']})" for e in account.get("events") or [])
    print(f"account {account['id']} created: {account['name']} ({account['role']})"
          + (f", in {events}" if events else ""))  # fmt: skip
    _print_token(account["token"])
    return 0


def cmd_accounts_token(args: argparse.Namespace) -> int:
    body = {"name": args.name, "password": read_password(args), "label": args.label}
    with open_client(args) as client:
        answer = client.post("/api/accounts/tokens", body)
    if printed_as_json(args, answer):
        return 0
    account = answer["account"]
    print(f"account {account['id']}: {account['name']} ({account['role']}), token {answer['id']}")
    _print_token(answer["token"])
    return 0


def add_commands(sub: Any) -> None:
    """``arena accounts create`` and ``arena accounts token``."""
    from arena.cli.client import ORGANISER_TOKEN_ENV

    remote = remote_options()
    accounts = sub.add_parser("accounts", help="create accounts and log in for an API token")
    a_sub = accounts.add_subparsers(dest="action", required=True)
    create = a_sub.add_parser(
        "create",
        parents=[remote],
        help=f"a new account and its first API token (organisers, admins: ${ORGANISER_TOKEN_ENV})",
        description="Prints the account's id and an API token, shown once.",
    )
    create.add_argument("name", help="the account's name, to log in with")
    create.add_argument("--role", choices=ROLES, default="contestant", help="(contestant)")
    create.add_argument("--join-code", metavar="CODE", help="an event's code: it joins it")
    create.add_argument(
        "--password-stdin", action="store_true", help="read the password from standard input"
    )
    create.set_defaults(func=cmd_accounts_create)
    token = a_sub.add_parser(
        "token",
        parents=[remote],
        help="log in: a new API token for the account (for $ARENA_TOKEN)",
    )
    token.add_argument("name", help="the account's name")
    token.add_argument(
        "--password-stdin", action="store_true", help="read the password from standard input"
    )
    token.add_argument("--label", default="arena cli", help="what it is for (in your token list)")
    token.set_defaults(func=cmd_accounts_token)
