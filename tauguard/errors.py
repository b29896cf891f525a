"""The user-facing error family.

Every error caused by what a user gave tauguard (a flag, a config or data file, a run
directory, a strategy option) derives from :class:`TauguardInputError`. Its message is one
line naming the bad value and what is allowed; the CLI prints it as ``error: ...`` with exit
code 2 (caught once, in :mod:`tauguard.cli.main`). Library callers catch the same class.

This module imports nothing heavy.
"""

from __future__ import annotations


class TauguardInputError(ValueError):
    """Bad user input; the message is one line for the user."""

    def first_line(self) -> str:
        """The message's first line (what the CLI prints)."""
        text = str(self)
        return text.splitlines()[0] if text else type(self).__name__


__all__ = ["TauguardInputError"]
