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


EXPLAIN_SAMPLE = 5  # failures shown per label under --explain


@app.command("fit")
def fit_command(
    runs: list[Path] = typer.Argument(..., help="Imported real runs (tauguard import) of one domain."),
    out: Path = typer.Option(..., "-o", "--out", help="The fitted profile (TOML) to write; refused if it exists."),
    name: Optional[str] = typer.Option(None, "--name", help="Profile name (default: the file's stem)."),
    uptake: float = typer.Option(0.8, "--uptake", min=0.0, max=1.0, help="Assumed uptake of guard feedback (no real run measures it)."),
    block_transfer: float = typer.Option(0.3, "--block-transfer", min=0.0, max=1.0, help="Assumed hand-off rate after a BLOCK."),
    prior_strength: float = typer.Option(4.0, "--prior-strength", min=0.0, help="Pseudo-count m of the beta prior at the realistic rate (0: no shrinkage toward it)."),
    explain: bool = typer.Option(False, "--explain", help="Also list every failure no fault explains (unattributed, wrong choice, user ended, not reproducible): counts and a sample."),
    fmt: OutputFormat = typer.Option(OutputFormat.table, "--format", help="table, json or markdown"),
) -> None:
    """Attribute each failed real simulation's first deviation from the gold plan to a fault (or unattributed); write per-fault rates with their counts, intervals and shrinkage."""
    from tauguard.faults.draw import UNEXPLAINED
    from tauguard.faults.fit import NOT_FAULTS, UNATTRIBUTED, fit, profile_toml
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
        tmp.write_text(profile_toml(result, name or out.stem, uptake, block_transfer, prior_strength), encoding="utf-8")
        load_profile(tmp)  # a valid profile, checked before it replaces anything (a path, never a name)
    fitted = result.fitted(prior_strength)
    rows = []
    for f, n in sorted(result.counts.items(), key=lambda kv: -kv[1]):
        r = fitted.get(f)
        rows.append({
            "fault": f, "class": next((a.fault_class for a in result.attributions if a.fault_id == f), ""), "count": n,
            "opportunities": result.opportunities.get(f, ""),
            "observed": "" if r is None else f"{r.observed:.3f}",
            "95% Jeffreys": "" if r is None else f"[{r.low:.3f}, {r.high:.3f}]",
            "prior p0": "" if r is None else ("Jeffreys" if r.prior is None else f"{r.prior:g}"),
            "rate (shrunk)": "" if r is None else f"{r.rate:.4f}",
            "sim cannot make": result.not_reproducible.get(f, ""),
        })
    u = fitted.get(UNEXPLAINED)
    if u is not None:
        rows.append({"fault": f"{UNEXPLAINED} (per simulation)", "class": "U", "count": u.count, "opportunities": u.opportunities,
                     "observed": f"{u.observed:.3f}", "95% Jeffreys": f"[{u.low:.3f}, {u.high:.3f}]", "prior p0": "Jeffreys",
                     "rate (shrunk)": f"{u.rate:.4f}", "sim cannot make": ""})
    unexplained = [a for a in result.attributions if a.fault_id in NOT_FAULTS or not a.reproducible]
    if fmt == OutputFormat.json:
        payload: dict[str, Any] = {"profile": str(out), **result.model_dump(), "rates": {f: r.model_dump() for f, r in fitted.items()}}
        if explain:
            payload["unexplained"] = [a.model_dump() for a in unexplained]
        typer.echo(json.dumps(payload, indent=2))
        return
    from tabulate import tabulate

    tablefmt = "github" if fmt == OutputFormat.markdown else "simple"
    typer.echo(f"{result.domain}: {result.simulations} real simulations, {result.failures} failed; "
               f"{result.counts.get(UNATTRIBUTED, 0)} failures unattributed")
    typer.echo(tabulate(rows, headers="keys", tablefmt=tablefmt))
    typer.echo(f"rates shrunk toward the realistic profile's rate p0 with pseudo-count m = {prior_strength:g}: (count + m p0) / (opportunities + m); "
               "Jeffreys' prior where the realistic profile sets none")
    if explain:
        _explain(unexplained, result.failures, tablefmt)
    typer.echo(f"profile written to {out} (uptake {uptake:g} and block_transfer {block_transfer:g} are assumptions)")


def _explain(unexplained: list[Any], failures: int, tablefmt: str) -> None:
    """Every failure no fault the sim can make explains: count per label, then a sample of each."""
    from collections import defaultdict

    from tabulate import tabulate

    groups: dict[str, list[Any]] = defaultdict(list)
    for a in unexplained:
        groups[a.fault_id if a.reproducible else f"{a.fault_id} (sim cannot make it there)"].append(a)
    typer.echo("")
    typer.echo(f"failures no fault the sim can make explains: {len(unexplained)} of {failures}")
    typer.echo(tabulate([{"label": k, "count": len(v)} for k, v in sorted(groups.items(), key=lambda kv: -len(kv[1]))],
                        headers="keys", tablefmt=tablefmt))
    sample = [
        {"label": k, "run": a.run_id, "task": a.task_id, "trial": a.trial, "write": "" if a.write_index is None else a.write_index, "why": a.why}
        for k, items in sorted(groups.items()) for a in items[:EXPLAIN_SAMPLE]
    ]
    if sample:
        typer.echo(f"sample (up to {EXPLAIN_SAMPLE} per label):")
        typer.echo(tabulate(sample, headers="keys", tablefmt=tablefmt, maxcolwidths=[None, None, None, None, None, 80]))


def _register_validate() -> None:
    from tauguard.cli.faults_validate import validate_command

    app.command("validate")(validate_command)


_register_validate()
