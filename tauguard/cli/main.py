"""The `tauguard` command. Commands live one per module and import heavy libraries lazily,
so `tauguard --help` and every command's `--help` stay fast (no tau2, no litellm)."""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import Any

import typer

from tauguard.cli.common import clear_startup_notice, error_line, fail, quiet_environment
from tauguard.cli.conventions import ConventionsGroup
from tauguard.errors import TauguardInputError

quiet_environment()


def _hide_flag_placeholders() -> None:
    """Typer's rich help prints ``<bool>`` in the type column of every flag (``--plain``,
    ``--help``); a flag takes no value, so its type column stays empty."""
    from typer.core import TyperOption

    shown = getattr(TyperOption, "display_type_rich", None)
    if shown is None or getattr(shown, "_tauguard", False):
        return

    def display_type_rich(self: Any, ctx: Any) -> str | None:
        return None if getattr(self, "is_flag", False) else shown(self, ctx)

    display_type_rich._tauguard = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


_hide_flag_placeholders()


def _help_that_survives_a_pipe() -> None:
    """Typer lays an option's help out as rich ``Columns``, which cut a word longer than the column
    with "…" (on a pipe the help is 80 columns wide: `tauguard run -h | cat` lost most of
    ``--resume``'s help). One folding text instead: every word is shown, a long one folded."""
    from rich.columns import Columns
    from rich.text import Text
    from typer import rich_utils

    original = getattr(rich_utils, "_get_parameter_help", None)
    if original is None or getattr(original, "_tauguard", False):
        return

    def parameter_help(*args: Any, **kwargs: Any) -> Any:
        laid_out = original(*args, **kwargs)
        items = list(getattr(laid_out, "renderables", []))
        if not isinstance(laid_out, Columns) or not all(isinstance(i, Text) for i in items):
            return laid_out
        joined = Text("\n").join(items)  # the default on a line of its own: never split inside "[default: X]"
        joined.overflow = "fold"
        return joined

    parameter_help._tauguard = True  # type: ignore[attr-defined]
    rich_utils._get_parameter_help = parameter_help
    # Not on a terminal (a pipe, a file): 120 columns, the width every summary keeps to, unless
    # the user set one; rich's 80 would cut long option names ("--strategy-opt…"). Decided when
    # the help is printed (the environment may change after import).
    console_of = rich_utils._get_rich_console

    def help_console(stderr: bool = False) -> Any:
        import os
        import sys

        console = console_of(stderr)
        if rich_utils.MAX_WIDTH is None and not os.environ.get("COLUMNS") and not sys.stdout.isatty():
            console.width = 120
        return console

    rich_utils._get_rich_console = help_console


_help_that_survives_a_pipe()

app = typer.Typer(
    name="tauguard",
    cls=ConventionsGroup,  # τ²'s --task-ids 0 1 2; a hint on extra arguments (tauguard.cli.conventions)
    help="Compare runtime guarding strategies for tool-calling agents on tau2-bench.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},  # inherited by every command
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"tauguard {version('tauguard')}")
        except PackageNotFoundError:  # a source tree that was never installed
            typer.echo("tauguard (not installed)")
        raise typer.Exit(0)


@app.callback()
def _root(
    show_version: bool = typer.Option(
        False, "--version", "-V", is_eager=True, callback=_version, help="Print tauguard's version and exit."
    ),
) -> None:
    """Compare runtime guarding strategies for tool-calling agents on tau2-bench.

    Runs with the built-in `sim` model are simulations, never findings about real LLMs.
    """


# (module, attribute, command name); a module exposing a Typer sub-app is added as a group.
_COMMANDS: list[tuple[str, str, str]] = [
    ("tauguard.cli.run", "run", "run"),
    ("tauguard.cli.show", "show", "show"),
    ("tauguard.cli.strategies", "strategies", "strategies"),
    ("tauguard.cli.compare", "compare", "compare"),
    ("tauguard.cli.check", "check", "check"),
    ("tauguard.cli.power", "power", "power"),
    ("tauguard.cli.report", "report", "report"),
    ("tauguard.cli.faults", "app", "faults"),
    ("tauguard.cli.attacks", "attacks", "attacks"),
    ("tauguard.cli.probes", "app", "probes"),
    ("tauguard.cli.import_", "import_", "import"),
    ("tauguard.cli.export", "export", "export"),
    ("tauguard.cli.audit", "audit", "audit"),
    ("tauguard.cli.workflow", "app", "workflow"),
    ("tauguard.cli.classifier", "app", "classifier"),
    ("tauguard.cli.dialogue", "app", "dialogue"),
    ("tauguard.cli.coverage", "coverage", "coverage"),
]

def _user_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """Every command's user-facing errors (TauguardInputError) become one `error:` line, exit 2.

    This is the one place they are caught: in-process callers of ``app`` (tests) get the same
    exit code and message as the console script.
    """

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except TauguardInputError as exc:
            fail(exc.first_line())

    return run


for _module, _attr, _name in _COMMANDS:
    _mod = importlib.import_module(_module)
    _obj = getattr(_mod, _attr)
    if isinstance(_obj, typer.Typer):
        for _info in _obj.registered_commands:
            _info.callback = _user_errors(_info.callback) if _info.callback else None
        app.add_typer(_obj, name=_name)
    else:
        app.command(_name)(_user_errors(_obj))


def _click_error_types() -> tuple[type[BaseException], ...]:
    # Typer >= 0.20 vendors click (typer._click); older ones use click itself.
    types: list[type[BaseException]] = []
    for module in ("typer._click.exceptions", "click.exceptions"):
        try:
            types.append(importlib.import_module(module).ClickException)
        except (ImportError, AttributeError):
            continue
    return tuple(types)


def main() -> None:
    """Console entry point: click's usage errors and user input errors become one `error:` line
    (exit 2); any other exception is an internal error: one line naming the saved traceback
    (tauguard.cli.internal_error), exit 4."""
    import sys

    try:
        code = app(standalone_mode=False)
    except TauguardInputError as exc:  # raised outside a command body (e.g. while parsing)
        typer.echo(error_line(exc.first_line()), err=True)
        sys.exit(2)
    except typer.Abort:
        typer.echo("aborted", err=True)
        sys.exit(130)
    except _click_error_types() as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":
            sys.exit(0)  # help was printed
        from tauguard.cli.bad_value import with_given_value

        message = with_given_value(exc.format_message(), exc, sys.argv[1:])  # type: ignore[attr-defined]
        typer.echo(error_line(message), err=True)
        sys.exit(getattr(exc, "exit_code", 2))
    except BrokenPipeError:  # the reader went away (`tauguard show ... | head`): not a bug
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        sys.exit(1)
    except Exception as exc:  # a bug, not a bad input: one line, the traceback to a file
        from tauguard.cli.common import EXIT_INTERNAL
        from tauguard.cli.internal_error import internal_error_line

        clear_startup_notice()
        typer.echo(internal_error_line(exc), err=True)
        sys.exit(EXIT_INTERNAL)
    sys.exit(code if isinstance(code, int) else 0)
