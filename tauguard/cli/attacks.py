"""`tauguard attacks`: the attack targets and sets, or the utility/safety view over attacked runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer

from tauguard.cli.common import OutputFormat, fail
from tauguard.domains import DOMAINS  # the one list: the domain folders


def target_rows(domain: str | None, attack_set: str) -> list[dict[str, Any]]:
    """One row per attacked task of a set (and one per task without a target in the default set)."""
    from tauguard.attacks.catalog import (
        DEFAULT_SET,
        AttackDataError,
        attack_set_names,
        no_targets,
        require_targets,
        set_targets,
        target_domains,
    )

    if attack_set not in attack_set_names():
        fail(f"unknown attack set '{attack_set}'; allowed: {', '.join(attack_set_names())}")
    if domain is not None and domain not in DOMAINS:
        fail(f"unknown domain '{domain}'; allowed: {', '.join(DOMAINS)}")
    if domain is not None:
        try:  # a known domain may have no targets file (they are optional): say so, not an empty table
            require_targets(domain)
        except AttackDataError as exc:
            fail(str(exc))
    rows: list[dict[str, Any]] = []
    for d in [domain] if domain else target_domains():
        try:
            targets = set_targets(attack_set, d)
        except AttackDataError as exc:
            fail(str(exc))
        for tid, t in targets.items():
            rows.append({"domain": d, "task": tid, "tool": t.tool, "pattern": t.pattern, "clause": t.clause, "premises": t.premises})
        if attack_set == DEFAULT_SET:
            rows += [{"domain": d, "task": tid, "tool": "-", "pattern": None, "clause": "-", "premises": [], "no target": why}
                     for tid, why in no_targets(d).items()]
    return rows


def attacks(
    runs: Optional[list[Path]] = typer.Argument(None, help="Attacked run directories; none: list the targets."),
    domain: Optional[str] = typer.Option(None, "--domain", "-d", help=f"Targets of one domain ({', '.join(DOMAINS)}). \\[default: every domain]"),
    attack_set: str = typer.Option("policy-violation", "--attack-set", help="policy-violation or a named set (craft-airline)."),
    fmt: OutputFormat = typer.Option(OutputFormat.table, "--format", help="table, json or markdown"),
    ids: bool = typer.Option(False, "--ids", help="Print the attacked task ids of one domain, comma-separated (for --task-ids)."),
) -> None:
    """List attack targets, or, given runs, pass^k on benign tasks next to ASR@k on attacked ones (one row per run)."""
    from tauguard.tables import fit_table

    tablefmt = "github" if fmt == OutputFormat.markdown else "simple"
    if ids:
        rows = [r for r in target_rows(domain, attack_set) if r["tool"] != "-"]
        domains = sorted({r["domain"] for r in rows})
        if len(domains) > 1:
            fail(f"--ids needs one domain: give --domain ({', '.join(domains)})")
        typer.echo(",".join(r["task"] for r in rows))
        return
    if not runs:
        rows = target_rows(domain, attack_set)
        if fmt == OutputFormat.json:
            typer.echo(json.dumps(rows, indent=2))
            return
        shown = [{**r, "pattern": json.dumps(r["pattern"]) if r["pattern"] else "-", "premises": len(r["premises"])} for r in rows]
        typer.echo(fit_table(shown, headers="keys", tablefmt=tablefmt, disable_numparse=True))
        return
    from tauguard.attacks.render import utility_rows
    from tauguard.analysis.attack_report import utility_safety
    from tauguard.analysis.metrics import run_is_simulated
    from tauguard.runs.store import RunLoadError, load_run
    from tauguard.runs.records import SIMULATION_NOTE as SIM_NOTE

    views, simulated = [], False
    for run_dir in runs:
        try:
            run = load_run(run_dir)
        except RunLoadError as exc:
            fail(str(exc))
        simulated = simulated or run_is_simulated(run)
        views.append(utility_safety(run.records, run.manifest.run_id, run.manifest.strategy))
    if fmt == OutputFormat.json:
        typer.echo(json.dumps({"simulated": simulated, "runs": [v.model_dump() for v in views]}, indent=2))
        return
    if simulated:
        typer.echo(("> **" + SIM_NOTE + "**") if fmt == OutputFormat.markdown else "*** " + SIM_NOTE + " ***")
    typer.echo(fit_table(utility_rows(views), headers="keys", tablefmt=tablefmt, disable_numparse=True))
