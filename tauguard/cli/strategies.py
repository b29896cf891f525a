"""`tauguard strategies`: list registered strategies with their hooks and options."""

from __future__ import annotations

import json
from typing import Any

import typer

from tauguard.cli.common import OutputFormat
from tauguard.runs.store import dump_json


def strategy_rows(include_hidden: bool) -> list[dict[str, Any]]:
    """One row per strategy: name, description, origin, hooks and options (with types and defaults)."""
    from tauguard.strategy_api.registry import RegistryLoadError, available, describe, option_fields, strategies

    rows = []
    for info in available(include_hidden).values():
        try:
            cls = strategies.get(info.name)
            hooks, options = list(cls.hooks()), option_fields(cls.options_model)
        except RegistryLoadError:  # a broken plug-in is listed with its error as description
            hooks, options = [], []
        rows.append(
            {"name": info.name, "description": describe(info), "origin": info.origin, "hooks": hooks, "options": options}
        )
    return rows


def _options_cell(options: list[dict[str, Any]]) -> str:
    return "\n".join(f"{o['name']}: {o['type']} = {json.dumps(o['default'])}" for o in options) or "-"


def strategies(
    fmt: OutputFormat = typer.Option(OutputFormat.table, "--format", help="table, json or markdown"),
    all_: bool = typer.Option(False, "--all", help="Also list test-only strategies (e.g. block-tool)."),
) -> None:
    """List strategies: name, description, origin (built-in or entry point), hooks and options."""
    rows = strategy_rows(all_)
    if fmt == OutputFormat.json:
        typer.echo(dump_json(rows))
        return
    from tauguard.tables import fit_table

    markdown = fmt == OutputFormat.markdown
    shown = [
        {
            "name": r["name"],
            "description": r["description"],
            "origin": r["origin"],
            "hooks": ", ".join(r["hooks"]) or "none",
            "options": _options_cell(r["options"]).replace("\n", "<br>" if markdown else "\n"),
        }
        for r in rows
    ]
    if markdown:
        typer.echo(fit_table(shown, headers="keys", tablefmt="github"))
    else:
        typer.echo(fit_table(shown, headers="keys", tablefmt="simple", maxcolwidths=[None, 50, None, 20, 45]))
