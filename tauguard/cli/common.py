"""Shared CLI helpers: one-line user errors, output formats, environment defaults."""

from __future__ import annotations

import json
import os
import sys
from enum import Enum
from typing import Any, NoReturn

import typer

EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_USAGE = 2
EXIT_INCOMPLETE = 3  # a run ended without a measured outcome for every unit (resume finishes it)


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
    """Fail with one line, before any work, when ``path`` cannot be a regular file to write
    (a folder, a device, a FIFO, under a file...: the rule of :mod:`tauguard.output_file`)."""
    from tauguard.output_file import OutputPathError, output_target

    try:
        output_target(path, flag)
    except OutputPathError as exc:
        fail(exc.first_line())
