"""One line for an exception, as the user sees it (plan errors, lost jobs, unreachable clusters).

Kept apart from the checks and the engines so both can use it without importing each other.
"""

from __future__ import annotations


def first_line(exc: BaseException) -> str:
    """A one-line description of an exception (a validation error names field, value and
    rule), with credential values and URL userinfo scrubbed (the value may be an address
    with a password in it)."""
    from pydantic import ValidationError

    from tauguard.secrets import scrub

    if isinstance(exc, ValidationError) and exc.errors():
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or exc.title
        msg = str(err["msg"]).removeprefix("Value error, ")
        return scrub(f"invalid option '{loc}' ({err.get('input')!r}): {msg}")
    for line in str(exc).splitlines():
        if line.strip():
            return scrub(line.strip())
    return type(exc).__name__
