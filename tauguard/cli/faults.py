"""`tauguard faults`: list the sim agent's fault catalog (id, class, tools, violated clause);
`tauguard faults fit`: fit a fault profile to imported real runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer

from tauguard.cli.common import OutputFormat, domain_choices, fail

CLAUSE_WIDTH = 60  # wrap width of the clause column in table output


def fault_rows(domain: str | None) -> list[dict[str, Any]]:
    """One row per (domain, fault) applying there; ``domain`` None lists every domain."""
    from tauguard.domains import DOMAINS
    from tauguard.faults.catalog import load_catalog

    catalog = sorted(load_catalog(), key=lambda f: (f.domain == "*", f.id))
    # every domain, also one without a catalog of its own (it lists the generic faults that apply there)
    domains = list(DOMAINS)
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


app = typer.Typer(invoke_without_command=True, no_args_is_help=False, help="The sim agent's fault catalog; fit a profile to real runs.")


@app.callback()
def faults(
    ctx: typer.Context,
    domain: Optional[str] = typer.Option(None, "--domain", "-d", help=f"{domain_choices()} (default: all)."),
    fmt: OutputFormat = typer.Option(OutputFormat.table, "--format", help="table, json or markdown"),
) -> None:
    """List the fault catalog: id, class (A/T/D/W), kind, probe label, write tools and the verbatim policy clause each fault breaks."""
    if ctx.invoked_subcommand is not None:
        return
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


@app.command("fit")
def fit_command(
    runs: list[Path] = typer.Argument(..., help="Imported real runs (tauguard import) of one domain."),
    out: Path = typer.Option(..., "-o", "--out", help="The fitted profile (TOML) to write; refused if it exists."),
    name: Optional[str] = typer.Option(None, "--name", help="Profile name (default: the file's stem)."),
    uptake: float = typer.Option(0.8, "--uptake", min=0.0, max=1.0, help="Assumed uptake of guard feedback (no real run measures it)."),
    block_transfer: float = typer.Option(0.3, "--block-transfer", min=0.0, max=1.0, help="Assumed hand-off rate after a BLOCK."),
    fmt: OutputFormat = typer.Option(OutputFormat.table, "--format", help="table, json or markdown"),
) -> None:
    """Attribute each failed real simulation's first deviation from the gold plan to a fault (or unattributed); write per-fault rates with their counts."""
    from tauguard.faults.fit import UNATTRIBUTED, fit, profile_toml
    from tauguard.faults.profiles import load_profile

    from tauguard.cli.common import check_output_file
    from tauguard.output_file import atomic_output

    if out.exists() or out.is_symlink():
        fail(f"{out} already exists; pick another -o (nothing was overwritten)")
    check_output_file(out, "-o/--out")  # before any work: not under a file, not in a run folder
    for run in runs:
        if not (run / "manifest.json").is_file():
            fail(f"{run} is not a run directory (no manifest.json); give imported runs (tauguard import)")
    result = fit(runs)
    with atomic_output(out, "-o/--out") as tmp:
        tmp.write_text(profile_toml(result, name or out.stem, uptake, block_transfer), encoding="utf-8")
        load_profile(tmp)  # a valid profile, checked before it replaces anything (a path, never a name)
    rows = [
        {"fault": f, "class": next((a.fault_class for a in result.attributions if a.fault_id == f), ""), "count": n,
         "opportunities": result.opportunities.get(f, ""), "rate": "" if f == UNATTRIBUTED else f"{result.rates.get(f, 0.0):.4f}",
         "sim cannot make": result.not_reproducible.get(f, "")}
        for f, n in sorted(result.counts.items(), key=lambda kv: -kv[1])
    ]
    if fmt == OutputFormat.json:
        typer.echo(json.dumps({"profile": str(out), **result.model_dump(), "rates": result.rates}, indent=2))
        return
    from tabulate import tabulate

    typer.echo(f"{result.domain}: {result.simulations} real simulations, {result.failures} failed; "
               f"{result.counts.get(UNATTRIBUTED, 0)} failures unattributed")
    typer.echo(tabulate(rows, headers="keys", tablefmt="github" if fmt == OutputFormat.markdown else "simple"))
    typer.echo(f"profile written to {out} (uptake {uptake:g} and block_transfer {block_transfer:g} are assumptions)")
