"""`tauguard coverage`: which guard checks each policy clause that constrains a write.

The table is built from the guards' own data (ledger predicates, action-guard checklists,
workflow graphs) and ``tauguard/coverage/not_observable.toml``; ``--format markdown`` is the
generated docs page ``docs/clause_coverage.md``. A (clause, write, guard) with neither a check
nor a documented reason is shown as not checked, no reason given (and listed on stderr): the
reasons are optional for a new domain (tests/test_clause_coverage.py requires them for the
shipped ones). Exit 1 when a documented reason contradicts a check.
"""

from __future__ import annotations

import typer

from tauguard.cli.common import EXIT_CHECK_FAILED, OutputFormat, domain_choices, fail


def coverage(
    domain: list[str] = typer.Option(None, "--domain", "-d", help=f"{domain_choices()} (repeatable; default: all)."),
    fmt: OutputFormat = typer.Option(OutputFormat.table, "--format", help="table, json or markdown (the docs page)"),
) -> None:
    """Print the clause-coverage table: per policy clause and write, what each guard checks."""
    from tauguard import domains as packs
    from tauguard.coverage import rows, stale_entries
    from tauguard.coverage.render import as_json, markdown, summary, table_rows

    known = packs.domains()
    for d in domain or []:
        if d not in known:
            fail(f"unknown domain '{d}'; allowed: {', '.join(known)}")
    table = rows(list(domain) if domain else None)
    if fmt == OutputFormat.markdown:
        typer.echo(markdown(table))
    elif fmt == OutputFormat.json:
        typer.echo(as_json(table))
    else:
        from tauguard.tables import fit_table

        typer.echo(fit_table(table_rows(table), headers="keys", tablefmt="simple", disable_numparse=True, maxcolwidths=40))
        for guard, counts in summary(table).items():
            typer.echo(f"{guard}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for r in table:
        for g, c in r.cells.items():
            if c.status == "gap":
                typer.echo(f"coverage: not checked, {c.reason or 'no reason given'}: {r.clause} ({r.tool}) {g}", err=True)
    problems = stale_entries()
    if problems:
        for p in problems:
            typer.echo(f"coverage: {p}", err=True)
        raise typer.Exit(EXIT_CHECK_FAILED)
