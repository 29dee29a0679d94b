"""What every command shares: exit codes and how errors are printed."""

from __future__ import annotations

import sys

EXIT_FAILED, EXIT_USAGE, EXIT_REJECTED = 1, 2, 3


def err(message: str) -> None:
    print(f"oncall-memory: {message}", file=sys.stderr)


def said(exc: BaseException) -> str:
    """An error's message as it may be printed: redacted, since many are built from what the command was
    given (a field named by a token in an alert file, a rejected record's id). The scanner loads only here,
    on the way out, so a command that succeeds never pays for it."""
    from ..redact import redact

    return redact(str(exc))


def legacy_data_dir_warning() -> None:
    from ..datadir import user_data_dir

    err(
        f"using ./.oncall-memory (found here, made by an earlier version); the default is now "
        f"{user_data_dir()}: move it there, or set ONCALL_MEMORY_DATA_DIR to keep it"
    )


def terminal_style() -> tuple[bool, int | None]:
    """(colour, width) for what is printed: on a terminal, colour (unless NO_COLOR is set, or TERM=dumb)
    and its width; piped or redirected, plain text at any width."""
    import os
    import shutil

    if not sys.stdout.isatty():
        return False, None
    colour = not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
    return colour, shutil.get_terminal_size().columns
