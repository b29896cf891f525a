"""Internal errors: a bug, not a bad input, escaped a command.

The user sees one line, ``internal error, please report: <file>``, and the process exits 4;
the traceback goes to that file instead of the terminal (a traceback is not a message a user
can act on, and a long one buries the line that says what to do). The file is written under
``$XDG_STATE_HOME/tauguard/internal-errors/`` (default ``~/.local/state/...``), or the system
temp folder when that cannot be written. Like every file tauguard writes, it holds no
credential: environment values of credential variables (``*_API_KEY``, ``*_TOKEN``,
``*SECRET*``, ``*PASSWORD*``) are never listed and are scrubbed from the whole text.

Imports nothing heavy.
"""

from __future__ import annotations

import os
import platform
import re
import sys
import tempfile
import time
import traceback
from pathlib import Path

# Environment variables worth having in a bug report (values shown unless a credential).
_REPORTED_ENV = ("TAUGUARD_", "LITELLM_", "TAU2_", "CI")


def report_dir() -> Path:
    """Where internal-error reports go: ``$XDG_STATE_HOME/tauguard/internal-errors``."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "tauguard" / "internal-errors"


def _environment_lines() -> list[str]:
    from tauguard.secrets import REDACTED, is_credential_key, secret_values

    secrets = set(secret_values())
    lines = []
    for name in sorted(os.environ):
        if not name.startswith(_REPORTED_ENV):
            continue
        value = os.environ[name]
        shown = REDACTED if is_credential_key(name) or name.upper().endswith(("_KEY", "_TOKEN")) or value in secrets else value
        lines.append(f"  {name}={shown}")
    return lines


# Options whose value is a JSON config that may carry a credential or a header value.
_JSON_OPTIONS = ("--llm-args",)


_STRING_VALUES = re.compile(r':\s*"((?:[^"\\]|\\.)+)"')


def _command_line(argv: list[str]) -> tuple[str, list[str]]:
    """The command line with every JSON argument redacted (credential keys, header values, URL
    userinfo) and an unparsable ``--llm-args`` value left out; and the secret values found, to
    scrub from the rest of the report (an exception message may quote them)."""
    import json

    from tauguard.secrets import REDACTED, config_secrets, credential_values, redact

    shown: list[str] = []
    secrets: list[str] = []
    after_json_option = False
    for arg in argv:
        option, eq, inline = arg.partition("=")
        value = inline if eq and option in _JSON_OPTIONS else arg
        try:
            parsed = json.loads(value) if value[:1] in "{[" else None
        except (json.JSONDecodeError, RecursionError):
            parsed = None
        if isinstance(parsed, (dict, list)):
            secrets += credential_values(parsed) + config_secrets(parsed)
            value = json.dumps(redact(parsed))
        elif after_json_option or (eq and option in _JSON_OPTIONS):
            # Unparsable: every string value in it (after a colon) may be a key or a header.
            secrets += [value, *_STRING_VALUES.findall(value)]
            value = f"{REDACTED} (not JSON)"
        shown.append(f"{option}={value}" if eq and option in _JSON_OPTIONS else value)
        after_json_option = arg in _JSON_OPTIONS
    return " ".join(shown), secrets


def _scrub_known(text: str, secrets: list[str]) -> str:
    # The values a refused config carried are secrets whatever their length (scrub() leaves
    # values under 6 characters alone, as an environment variable that short is no real key).
    for value in sorted(set(secrets), key=len, reverse=True):
        if len(value) >= 3:
            text = text.replace(value, "<redacted>")
    return text


def report_text(exc: BaseException) -> str:
    """The report for ``exc``: versions, command line, environment, traceback; scrubbed."""
    from tauguard import __version__
    from tauguard.secrets import scrub

    command, secrets = _command_line(list(sys.argv))
    parts = [
        f"tauguard {__version__}, Python {platform.python_version()} on {platform.platform()}",
        f"time: {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}",
        f"command: {command}",
        "environment:",
        *_environment_lines(),
        "",
        "".join(traceback.format_exception(exc)),
    ]
    return _scrub_known(scrub("\n".join(parts), extra=secrets), secrets)


def save_report(exc: BaseException) -> Path | None:
    """Write the report of ``exc`` to a new file and return its path (None if nothing could be written)."""
    name = f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{os.getpid()}.txt"
    text = report_text(exc)
    for folder in (report_dir(), Path(tempfile.gettempdir()) / "tauguard-internal-errors"):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / name
            # 0600: a traceback may quote inputs (file contents, arguments) the user keeps private.
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text)
            return path
        except OSError:
            continue
    return None


def internal_error_line(exc: BaseException) -> str:
    """Save the report of ``exc`` and return the one line the user sees."""
    path = save_report(exc)
    if path is None:
        return f"internal error ({type(exc).__name__}), please report it (the traceback could not be saved)"
    return f"internal error, please report: {path}"


__all__ = ["internal_error_line", "report_dir", "report_text", "save_report"]
