"""τ²'s command-line conventions, accepted by every command (the root group applies them).

- ``--task-ids 0 1 2`` (τ²'s space-separated form) as well as ``--task-ids 0,1,2``: the ids after
  ``--task-ids`` up to the next option (or an existing path: a run folder after them) are its values;
- on an unexpected extra argument, the one ``error:`` line names the right form (one value per
  option use; a list as ``A,B`` or the option repeated; quotes around a value with spaces).
"""

from __future__ import annotations

import os
import re
from typing import Any

from typer.core import TyperGroup

#: Options that take several values in τ² (``nargs="+"``).
MULTI_VALUE = ("--task-ids",)


def spread_multi_values(args: list[str]) -> list[str]:
    """``--task-ids 0 1 2`` -> ``--task-ids 0 --task-ids 1 --task-ids 2`` (other arguments unchanged)."""
    out: list[str] = []
    i = 0
    while i < len(args):
        token = args[i]
        out.append(token)
        i += 1
        if token == "--":
            out.extend(args[i:])
            break
        name = token.split("=", 1)[0]
        if name not in MULTI_VALUE or (name == token and i >= len(args)):
            continue
        if name == token:
            out.append(args[i])  # its first value, whatever it looks like (click checks it)
            i += 1
        while i < len(args) and not args[i].startswith("-") and not os.path.exists(args[i]):
            out.extend([name, args[i]])
            i += 1
    return out


def extra_argument_hint(args: list[str], message: str, lists: dict[str, str] | None = None) -> str:
    """A hint naming the right form for click's "Got unexpected extra argument(s) (...)".

    ``lists``: how each option of the command takes several values ("repeat", "comma"); an option
    not in it takes one value.
    """
    found = re.search(r"\(([^()]*)\)\s*$", message)
    extra = found.group(1).split() if found else []
    at = next((i for i in range(len(args) - len(extra), 0, -1) if args[i:i + len(extra)] == extra), None) if extra else None
    if at is None:
        return "give each option one value (see the command's -h); quote a value with spaces"
    option = args[at - 2] if at >= 2 and args[at - 2].startswith("-") and not args[at - 1].startswith("-") else None
    if option is None:
        return (f"{' '.join(extra)} is not an argument of this command (see its -h for the arguments it takes); "
                "quote a value with spaces")
    values = [args[at - 1], *extra]
    kind = (lists or {}).get(option)
    if kind in ("repeat", "repeat-comma"):
        form = " ".join(f"{option} {v}" for v in values)
        also = f"{option} {','.join(values)} or " if kind == "repeat-comma" else ""
        return f"{option} takes one value per use: write {also}{form}"
    if kind == "comma":
        return f"{option} takes a comma-separated list: {option} {','.join(values)}"
    return (f"{option} takes one value ({len(values)} given: {' '.join(values)}): give one, or quote a value "
            f"that holds spaces ({option} \"{' '.join(values)}\")")


def _lists(group: Any, ctx: Any, args: list[str]) -> dict[str, str]:
    """How each option of the command ``args`` name takes several values."""
    command: Any = group
    for token in args:
        if not hasattr(command, "get_command"):
            break
        found = command.get_command(ctx, token)
        if found is None:
            continue
        command = found
    out: dict[str, str] = {}
    for param in getattr(command, "params", []):
        for name in getattr(param, "opts", []):
            comma = "comma" in (getattr(param, "help", "") or "").lower()
            if getattr(param, "multiple", False):
                out[name] = "repeat-comma" if comma else "repeat"
            elif comma:
                out[name] = "comma"
    return out


class ConventionsGroup(TyperGroup):
    """The root command group: τ²'s conventions before parsing, a hint on extra arguments."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """Spread multi-value options, remember the arguments for the hint, then parse."""
        spread = spread_multi_values(list(args))
        ctx.meta["tauguard.args"] = spread
        return super().parse_args(ctx, spread)

    def invoke(self, ctx: Any) -> Any:
        """Invoke the subcommand; an "unexpected extra argument" usage error gets its hint."""
        from typer._click.exceptions import UsageError

        try:
            return super().invoke(ctx)
        except UsageError as exc:
            text = exc.message
            if "unexpected extra argument" in text and "hint:" not in text:
                args = ctx.meta.get("tauguard.args", [])
                exc.message = f"{text}; hint: {extra_argument_hint(args, text, _lists(self, ctx, args))}"
            raise
