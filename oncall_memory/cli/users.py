"""`oncall-memory user add|remove|list`: people's own logins for the search page (`service/accounts.py`).

The password is read from the terminal without echo (asked twice), or from standard input with
`--password-stdin` for a script; never from the command line, where `ps` and the shell's history see it.
The service reads the accounts on each login, so a change takes effect without a restart.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import TYPE_CHECKING

from ..errors import InvalidInput

if TYPE_CHECKING:
    from ..service.accounts import Accounts
    from ..settings import Settings


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("user", help="people's own logins for the search page: add, remove, list")
    which = p.add_subparsers(dest="user_command", required=True, help="what to do with the logins")
    add = which.add_parser("add", help="add a person, or set their new password (ends their open sessions)")
    add.add_argument("name", help="what they type at login: their email address, say")
    add.add_argument("--password-stdin", action="store_true", help="read the password from standard input")
    add.set_defaults(func=cmd_user_add)
    remove = which.add_parser("remove", help="remove a person's login (ends their open sessions)")
    remove.add_argument("name")
    remove.set_defaults(func=cmd_user_remove)
    listing = which.add_parser("list", help="who has a login")
    listing.set_defaults(func=cmd_user_list)


def _accounts(settings: Settings) -> Accounts:
    from ..service.accounts import Accounts  # the service's imports only when this command runs

    if settings.dir.root is None:
        raise InvalidInput("accounts need a data dir on disk: ONCALL_MEMORY_DATA_DIR is :memory:")
    return Accounts(settings.dir.accounts)


def _password(args: argparse.Namespace) -> str:
    if args.password_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    if not sys.stdin.isatty():
        raise InvalidInput("no terminal to ask for the password: pipe it in with --password-stdin")
    first = getpass.getpass(f"password for {args.name}: ")
    if getpass.getpass("again: ") != first:
        raise InvalidInput("the two passwords differ; nothing changed")
    return first


def cmd_user_add(args: argparse.Namespace, settings: Settings) -> int:
    from ..service.accounts import account_name, check_password

    name = account_name(args.name)  # refused before the password is asked for
    password = _password(args)
    check_password(password)
    with _accounts(settings) as accounts:
        new = accounts.add(name, password)
    print(f"{'added' if new else 'new password for'} {name}: they log in at /login with that name")
    return 0


def cmd_user_remove(args: argparse.Namespace, settings: Settings) -> int:
    with _accounts(settings) as accounts:
        if not accounts.remove(args.name):
            raise InvalidInput(f"no login named {args.name!r}: `oncall-memory user list` shows who has one")
    print(f"removed {args.name}; their open sessions have ended")
    return 0


def cmd_user_list(args: argparse.Namespace, settings: Settings) -> int:
    with _accounts(settings) as accounts:
        names = accounts.names()
    print("\n".join(names) if names else "no logins yet: oncall-memory user add NAME")
    return 0
