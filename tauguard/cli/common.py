"""Shared CLI helpers: one-line user errors, output formats, environment defaults."""

from __future__ import annotations

import json
import os
import re
import sys
from enum import Enum
from typing import Any, NoReturn

import typer

EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_USAGE = 2


class OutputFormat(str, Enum):
    """Formats for tabular output."""

    table = "table"
    json = "json"
    markdown = "markdown"


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Print one clear line to stderr and exit (2 = usage or input error by default)."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def quiet_environment() -> None:
    """Keep litellm off the network and tau2's logging out of the user's terminal."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_LOG", "ERROR")


def is_tty() -> bool:
    """Whether stdout is an interactive terminal (rich progress) or a log (plain lines)."""
    return sys.stdout.isatty() and os.environ.get("CI", "").lower() not in ("1", "true")


def parse_strategy_options(items: list[str] | None) -> dict[str, Any]:
    """``--strategy-option KEY=VALUE`` pairs; values are JSON when they parse, else strings."""
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            fail(f"--strategy-option expects KEY=VALUE, got {item!r}")
        try:
            out[key] = json.loads(raw)
        except json.JSONDecodeError:
            out[key] = raw
    return out


def note_live_runs(runs: Any) -> None:
    """One stderr note per run that a process is still writing (its figures are partial),
    and one when the same run folder is given twice."""
    from pathlib import Path

    seen: dict[Path, Any] = {}
    for run in runs:
        if getattr(run, "live", False):
            pid = run.live_pid if run.live_pid and run.live_pid > 0 else "unknown"
            typer.echo(f"note: run {run.path} is live (being written by PID {pid}); its figures are partial", err=True)
        elif run.manifest.status == "running":
            typer.echo(
                f"note: run {run.path} stopped before finishing (no process is writing it); "
                f"finish it with: tauguard run --resume {run.path}",
                err=True,
            )
        key = Path(run.path).resolve()
        if key in seen:
            typer.echo(f"note: {run.path} is the same run as {seen[key].path}: it is compared with itself", err=True)
        seen.setdefault(key, run)


def check_output_file(path: Any, flag: str) -> None:
    """Fail with one line when ``path`` cannot be a file to write (a folder, or under a file)."""
    from pathlib import Path

    target = Path(path)
    if target.is_dir():
        fail(f"{flag} {target}: is a folder, not a file")
    for part in target.parents:
        if part.exists():
            if not part.is_dir():
                fail(f"{flag} {target}: {part} is a file, not a folder")
            return


# ANSI escape sequences (CSI ... final byte, OSC ... BEL/ST, two-byte ESC x), then any other
# C0/C1 control character but newline and tab.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]|[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """``text`` without terminal escape codes or control characters (newlines and tabs kept).

    Imported files and provider errors are foreign text: printed raw, an escape sequence in a
    model name could recolour, retitle or clear the user's terminal.
    """
    return _ESCAPES.sub("", text)
