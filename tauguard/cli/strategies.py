"""`tauguard strategies`: list registered strategies."""

from __future__ import annotations

import typer

from tauguard.cli.common import OutputFormat
from tauguard.store import dump_json


def strategies(
    fmt: OutputFormat = typer.Option(OutputFormat.table, "--format", help="table, json or markdown"),
) -> None:
    """List strategies: name, one-line description and origin (built-in or entry point)."""
    from tauguard.registry import available, describe

    rows = [
        {"name": info.name, "description": describe(info), "origin": info.origin}
        for info in available().values()
    ]
    if fmt == OutputFormat.json:
        typer.echo(dump_json(rows))
        return
    from tabulate import tabulate

    typer.echo(tabulate(rows, headers="keys", tablefmt="github" if fmt == OutputFormat.markdown else "simple"))
