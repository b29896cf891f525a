"""The value a user gave to an option click refused, for the one-line error.

Click's message for a value it cannot convert ("Invalid value for '--workers' / '-j': Input
should be a valid integer...") names the option but not what was typed; with several numeric
flags on one command line, the user has to guess which value was meant. The value is read back
from the command line (the exception does not carry it). Imports nothing heavy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def given_value(exc: BaseException, argv: Sequence[str]) -> str | None:
    """The last value ``argv`` gives to the option ``exc`` (a click BadParameter) names, or None."""
    param: Any = getattr(exc, "param", None)
    opts = [o for o in (getattr(param, "opts", None) or []) + (getattr(param, "secondary_opts", None) or []) if o.startswith("-")]
    if not opts:
        return None
    found: str | None = None
    for i, arg in enumerate(argv):
        for opt in opts:
            if arg == opt and i + 1 < len(argv):
                found = argv[i + 1]
            elif opt.startswith("--") and arg.startswith(opt + "="):
                found = arg[len(opt) + 1 :]
            elif len(opt) == 2 and not opt.startswith("--") and arg.startswith(opt) and len(arg) > 2 and not arg.startswith("--"):
                found = arg[2:]
    return found


def with_given_value(message: str, exc: BaseException, argv: Sequence[str]) -> str:
    """``message`` with ``(got 'VALUE')`` appended when the value is known and not quoted in it already."""
    value = given_value(exc, argv)
    if value is None or repr(value) in message or f"({value})" in message:
        return message
    shown = value if len(value) <= 60 else value[:57] + "..."
    return f"{message} (got {shown!r})"


__all__ = ["given_value", "with_given_value"]
