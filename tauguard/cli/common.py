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
EXIT_INCOMPLETE = 3  # a run ended without a measured outcome for every unit (resume finishes it)
EXIT_INTERNAL = 4  # a bug: the traceback is saved to a file (tauguard.cli.internal_error)


class OutputFormat(str, Enum):
    """Formats for tabular output."""

    table = "table"
    json = "json"
    markdown = "markdown"


def error_line(message: str) -> str:
    """``error: message``, with every credential value and URL userinfo scrubbed (an error may
    quote a flag's value, e.g. an address with a password in it)."""
    from tauguard.secrets import scrub

    return scrub(f"error: {message}")


_notice = {"shown": False}


def startup_notice(text: str) -> None:
    """On a terminal, say what the process is doing before a slow start (τ² and litellm take
    seconds to import, more under load), on a line the next output replaces. Logs get
    nothing: their first line stays the first real output (or the one ``error:`` line)."""
    if sys.stderr.isatty() and os.environ.get("CI", "").lower() not in ("1", "true"):
        sys.stderr.write(text + "\r")
        sys.stderr.flush()
        _notice["shown"] = True


def clear_startup_notice() -> None:
    """Erase the start-up line (if any) before the first real output."""
    if _notice["shown"]:
        sys.stderr.write("\r\x1b[K")
        sys.stderr.flush()
        _notice["shown"] = False


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Print one clear line to stderr and exit (2 = usage or input error by default)."""
    clear_startup_notice()
    typer.echo(error_line(message), err=True)
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


# ANSI escape sequences (CSI ... final byte, OSC ... BEL/ST, two-byte ESC x), then any other
# C0/C1 control character but newline and tab.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]|[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """``text`` without terminal escape codes or control characters (newlines and tabs kept).

    Imported files and provider errors are foreign text: printed raw, an escape sequence in a
    model name could recolour, retitle or clear the user's terminal.
    """
    return _ESCAPES.sub("", text)


def _finite(value: Any) -> Any:
    # click's ranges let NaN through (every comparison with NaN is false).
    if isinstance(value, float) and value != value:
        raise typer.BadParameter("must be a number, got nan")
    return value


def ranged(flag: str) -> dict[str, Any]:
    """``typer.Option`` keywords for the documented range of ``flag`` (tauguard.bounds): an
    out-of-range or NaN value is a usage error naming the range."""
    from tauguard.bounds import BOUNDS

    b = BOUNDS[flag]
    return {"min": b.low, "max": b.high, "callback": _finite}


TASK_IDS_HELP = "Only these task ids: comma-separated and/or repeated (one domain). \\[default: every task]"
PLAIN_HELP = "Progress as plain lines on stderr (for logs); default: one updating line on a terminal."


def domain_choices() -> str:
    """The domains for a help text, e.g. ``airline, retail or telecom``: read from the domain
    folders (:data:`tauguard.domains.DOMAINS`), so a new domain needs no help text edited."""
    from tauguard.domains import DOMAINS

    return " or ".join(filter(None, [", ".join(DOMAINS[:-1]), DOMAINS[-1]]))


def task_ids_option() -> Any:
    """``--task-ids``: the one spelling of task selection in every command."""
    return typer.Option(None, "--task-ids", help=TASK_IDS_HELP)


def old_task_option() -> Any:
    """``--task``: the old spelling of ``--task-ids`` (hidden; kept for one release)."""
    return typer.Option(None, "--task", hidden=True)


def merge_task_ids(*given: list[str] | None) -> list[str] | None:
    """The task ids of ``--task-ids`` (and its old spellings): commas split, order kept,
    duplicates dropped; None when none of the options was given. Given but empty
    (``--task-ids ""``) is an error: leaving the option out selects every task."""
    if all(g is None for g in given):
        return None
    ids: list[str] = []
    for items in given:
        for item in items or []:
            ids += [t.strip() for t in item.split(",") if t.strip() and t.strip() not in ids]
    if not ids:
        fail("--task-ids needs at least one task id (leave it out to select every task)")
    return ids


def show_progress(plain: bool) -> tuple[bool, bool]:
    """(show progress at all, as plain lines) for a command whose progress is optional:
    an updating line when stderr is a terminal, plain lines with ``--plain``."""
    on_terminal = sys.stderr.isatty() and os.environ.get("CI", "").lower() not in ("1", "true")
    return plain or on_terminal, plain


def packaged_default(key: str) -> str:
    """``[default: VALUE]`` for a help text, from the packaged default run config (the same
    file `run` reads, so the help cannot drift from it); "none" when the key is unset."""
    from tauguard.datafiles import read_toml
    from tauguard.defaults import default_config

    value = read_toml(default_config()).get(key)
    shown = "none" if value is None else ",".join(map(str, value)) if isinstance(value, list) else str(value)
    return f"\\[default: {shown}]"  # escaped: typer's help is rich markup
