"""Text tables that fit the terminal.

A table wider than the terminal is split into column groups printed one under the other,
each repeating the first (key) column, and long cells are wrapped; ``--wide`` (or
``TAUGUARD_WIDE=1``) prints every table on one line per row. Output that is not a terminal
(a pipe, a file, a CI log) fits 120 columns unless ``COLUMNS`` is set (scripts wanting whole
rows set ``TAUGUARD_WIDE=1``, or use ``--format json|csv``). Markdown and other formats meant for files are
never split.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from typing import Any, cast

from tabulate import tabulate

_state = {"wide": False}
MIN_WIDTH = 40
MAX_CELL = 60  # characters before a cell wraps when the table does not fit
PIPE_WIDTH = 120  # output that is not a terminal (a pipe, a file, a CI log): the width it keeps to


def set_wide(wide: bool) -> None:
    """``--wide``: never split or wrap tables in this process."""
    _state["wide"] = bool(wide)


def terminal_width() -> int | None:
    """The width tables must fit, or None when they need not (``--wide``, or not a terminal)."""
    if _state["wide"] or os.environ.get("TAUGUARD_WIDE", "").lower() in ("1", "true", "yes"):
        return None
    if not os.environ.get("COLUMNS") and not sys.stdout.isatty():
        return PIPE_WIDTH
    return max(MIN_WIDTH, shutil.get_terminal_size((100, 24)).columns)


def fit_text(text: str, width: int | None = -1) -> str:
    """``text`` with every line longer than ``width`` (default: :func:`terminal_width`) wrapped at
    word boundaries, its continuation indented two spaces: the prose lines of a summary (notes,
    legends); tables are fitted by :func:`fit_table` before."""
    import textwrap

    limit = terminal_width() if width == -1 else width
    if limit is None:
        return text
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) <= limit:
            out.append(line)
            continue
        lead = len(line) - len(line.lstrip(" "))
        out.extend(textwrap.wrap(line, width=limit, subsequent_indent=" " * (lead + 2), break_on_hyphens=False,
                                 break_long_words=True) or [line])
    return "\n".join(out)


def _width(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)


def _as_rows(rows: Sequence[Mapping[str, Any]] | Sequence[Sequence[Any]], headers: Any) -> tuple[list[str], list[list[Any]]]:
    if headers == "keys":
        keys: list[str] = []
        for row in rows:
            for key in row:
                if key not in keys:
                    keys.append(key)
        return keys, [[row.get(k, "") for k in keys] for row in rows]  # type: ignore[union-attr]
    return list(headers), [list(r) for r in rows]


def fit_table(
    rows: Sequence[Mapping[str, Any]] | Sequence[Sequence[Any]],
    headers: Any = "keys",
    tablefmt: str = "simple",
    width: int | None = -1,
    **options: Any,
) -> str:
    """``tabulate(rows, headers, tablefmt, **options)``, split into column groups that fit
    ``width`` (default: :func:`terminal_width`; None: no limit)."""
    # tabulate ships no type information; it returns the table as a str.
    text = cast(str, tabulate(rows, headers=headers, tablefmt=tablefmt, **options))
    limit = terminal_width() if width == -1 else width
    if limit is None or tablefmt not in ("simple", "plain") or _width(text) <= limit or not rows:
        return text
    names, body = _as_rows(rows, headers)
    options.pop("maxcolwidths", None)
    cell = max(12, min(MAX_CELL, limit // 2))

    def render(cols: list[int]) -> str:
        return cast(str, tabulate(  # untyped library, as above
            [[r[c] for c in cols] for r in body], headers=[names[c] for c in cols], tablefmt=tablefmt,
            maxcolwidths=[cell] * len(cols), **options,
        ))

    groups: list[list[int]] = []
    current = [0]
    for col in range(1, len(names)):
        if _width(render(current + [col])) <= limit or len(current) == 1:
            current.append(col)
        else:
            groups.append(current)
            current = [0, col]
    groups.append(current)
    return "\n\n".join(render(g) for g in groups)
