"""`tauguard faults`: list the sim agent's fault catalog (id, class, tools, violated clause)."""

from __future__ import annotations

import json
from typing import Any, Optional

import typer

from tauguard.cli.common import OutputFormat, fail

CLAUSE_WIDTH = 60  # wrap width of the clause column in table output


def fault_rows(domain: str | None) -> list[dict[str, Any]]:
    """One row per (domain, fault) applying there; ``domain`` None lists every domain."""
    from tauguard.faults.catalog import load_catalog

    catalog = sorted(load_catalog(), key=lambda f: (f.domain == "*", f.id))
    domains = sorted({d for f in catalog for d in f.clauses})
    if domain is not None and domain not in domains:
        fail(f"unknown domain '{domain}'; allowed: {', '.join(domains)}")
    rows = []
    for d in [domain] if domain else domains:
        for spec in catalog:
            if spec.domain not in ("*", d) or d not in spec.clauses:
                continue
            rows.append(
                {
                    "domain": d,
                    "id": spec.id,
                    "class": spec.fault_class,
                    "kind": spec.kind,
                    "label": spec.label,
                    "tools": spec.domain_tools.get(d, spec.tools),
                    "clause": spec.clause(d),
                    "applies_when": spec.applies_when,
                    "tool_error": spec.tool_error,
                }
            )
    return rows


def faults(
    domain: Optional[str] = typer.Option(None, "--domain", "-d", help="airline, retail or telecom (default: all)."),
    fmt: OutputFormat = typer.Option(OutputFormat.table, "--format", help="table, json or markdown"),
) -> None:
    """List the fault catalog: id, class (A/T/D/W), kind, probe label, write tools and the verbatim policy clause each fault breaks."""
    rows = fault_rows(domain)
    if fmt == OutputFormat.json:
        typer.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    from tauguard.tables import fit_table

    from tauguard.faults.profiles import profile_names

    markdown = fmt == OutputFormat.markdown
    shown = []
    for row in rows:
        clause = row["clause"] or "(no single clause: a missed required action)"
        shown.append(
            {
                "domain": row["domain"],
                "id": row["id"],
                "class": row["class"],
                "kind": row["kind"],
                "label": row["label"],
                "tools": ", ".join(row["tools"]),
                "clause": clause.replace("\n", " ") if markdown else clause,
            }
        )
    if markdown:
        typer.echo(fit_table(shown, headers="keys", tablefmt="github"))
    else:
        widths = [None, None, None, None, None, 30, CLAUSE_WIDTH]
        typer.echo(fit_table(shown, headers="keys", tablefmt="simple", maxcolwidths=widths))
    typer.echo("")
    typer.echo(
        "Plus one policy-violation temptation per PV task where a forbidden write exists "
        "(tauguard/faults/temptations/<domain>.toml); rates per fault live in fault profiles: "
        f"{', '.join(profile_names())} (packaged in tauguard/defaults/faults/; `tauguard run --faults NAME` "
        "or a path to your own TOML file)."
    )
