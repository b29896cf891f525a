"""`tauguard import RESULTS.json[.gz]`: a τ² results file of a real agent as a tauguard run."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Optional

import typer

from tauguard.cli.common import OutputFormat, fail, is_tty


def _num(text: str) -> tuple[int, str]:
    return (int(text), "") if text.isdigit() else (10**9, text)


def _render(result: Any, rescore: Any | None, fmt: str) -> str:
    from tabulate import tabulate

    md = fmt == "markdown"
    r = result
    trials = ", ".join(f"{n} task(s) x {k} trial(s)" for k, n in sorted(r.trials.items()))
    lines = [
        f"imported {r.imported} of {r.simulations} simulations ({r.domain}"
        + (", domain inferred from the recorded gold" if r.domain_source == "content" else "")
        + f") into {r.run_dir}: {trials}",
        f"models: agent {r.agent_models}; user {r.user_models}",
        "mean recorded reward over the imported simulations (= pass^1): "
        + ("-" if r.mean_recorded_reward is None else f"{r.mean_recorded_reward:.4f}")
        + (f"; {r.without_reward} imported without a reward (errors, out of metrics)" if r.without_reward else ""),
        "placement by content: " + ", ".join(f"{k} {v}" for k, v in sorted(r.placements.items())),
    ]
    if r.filled_fields:
        lines.append(
            "τ² fields the file lacks, filled: " + ", ".join(f"{k} {v}" for k, v in r.filled_fields.items())
            + " (termination read off the conversation's stop token; times: the file's timestamp, duration 0)"
        )
    if r.different_version:
        lines.append(
            f"scored against a different task version: {len(r.different_version)} simulation(s) (their recorded gold is "
            f"no τ² 26.3 task's), excluded: labels {', '.join(sorted(set(r.different_version.values()), key=_num))}"
        )
    if r.file_tasks:
        lines.append(f"scored against the file's own task definitions: {len(r.file_tasks)} task(s)")
        lines.extend(f"  {tid}: {why}" for tid, why in r.file_tasks.items())
    if r.ambiguous:
        lines.append(
            f"ambiguous placements: {len(r.ambiguous)} ("
            + ("imported under the likeliest task, --accept-ambiguous" if r.ambiguous_accepted else "excluded, left out of per-task pairing")
            + ")"
        )
        lines.extend(f"  {key} -> {value}" for key, value in r.ambiguous.items())
    if r.shared_gold:
        lines.append(f"placed among tasks sharing a gold: {len(r.shared_gold)}")
        lines.extend(f"  {key} -> {value}" for key, value in r.shared_gold.items() if "scenario" in value)
        if any("scenario" not in v for v in r.shared_gold.values()):
            lines.append("  the others by the file's label, which agrees with the content wherever it decides (--format json lists them)")
    if r.label_conflicts:
        lines.append(
            f"label conflicts: {r.label_conflicts} simulation(s) are placed by their content (the gold τ² scored them "
            f"against, the scenario) on another task than their task_id names; {len(r.relabelled)} relabelled"
            + ("" if r.relabelled else " (use --relabel to import them under the task they ran on)")
        )
        shared = {k: v for k, v in r.relabelled.items() if not v.endswith("(gold)")}
        for key, value in shared.items():
            lines.append(f"  relabelled {key} -> {value}")
    if r.excluded_tasks:
        lines.append(f"excluded tasks: {len(r.excluded_tasks)}")
        lines.extend(f"  {tid}: {why}" for tid, why in r.excluded_tasks.items())
    if r.excluded_simulation_reasons:
        lines.append(f"excluded simulations: {len(r.excluded_simulation_reasons)} (file label/trial: reason)")
        items = list(r.excluded_simulation_reasons.items())
        lines.extend(f"  {key}: {why}" for key, why in items[:10])
        if len(items) > 10:
            lines.append(f"  ... and {len(items) - 10} more (--format json lists all)")
    if r.unchecked_tasks:
        lines.append(f"tasks without a definition in the file (gold not compared): {len(r.unchecked_tasks)}")
    if rescore is not None:
        s = rescore
        lines.append("")
        lines.append(
            f"re-scored with tauguard's evaluator against τ² 26.3: {s.agree}/{s.simulations} agree with the recorded "
            f"reward; {s.differ} differ; mean recorded {s.mean_recorded if s.mean_recorded is None else round(s.mean_recorded, 4)}, "
            f"re-scored {s.mean_rescored if s.mean_rescored is None else round(s.mean_rescored, 4)}"
        )
        lines.append(
            f"replay: {s.unfaithful} simulation(s) with a replayed tool result differing from the recorded one; "
            f"{s.benign_mismatch_sims} differing only in pydantic's error-URL version; {s.replay_errors} not replayable"
        )
        noted = [x for x in s.results if x.explanation]
        if noted:
            rows = [{"task": x.task_id, "trial": x.trial, "recorded": x.recorded, "re-scored": x.rescored,
                     "note": x.explanation[:160]} for x in noted]
            lines.append(tabulate(rows, headers="keys", tablefmt="github" if md else "simple", disable_numparse=True))
    return "\n".join(lines)


def import_(
    results: Path = typer.Argument(..., help="A τ² results file (results.json or .json.gz)."),
    name: Optional[str] = typer.Option(None, "--name", help="Run id (default imported-<domain>-<agent>-<sha8>)."),
    out: Path = typer.Option(Path("runs"), "--out", help="Parent directory of the run."),
    domain: Optional[str] = typer.Option(None, "--domain", help="The domain, for files that do not record one. \\[default: the file's own]"),
    relabel: bool = typer.Option(
        False, "--relabel",
        help="Import simulations whose content places them on another task than their label under that task (else excluded).",
    ),
    accept_ambiguous: bool = typer.Option(
        False, "--accept-ambiguous",
        help="Import simulations whose task the content does not decide under the likeliest one (else excluded).",
    ),
    tasks_from_file: bool = typer.Option(
        False, "--tasks-from-file",
        help="Score simulations of task versions other than τ² 26.3's against the file's own definitions (else excluded).",
    ),
    rescore: bool = typer.Option(
        False, "--rescore", help="Re-evaluate every conversation against τ² 26.3 and list every reward that differs."
    ),
    fmt: OutputFormat = typer.Option(OutputFormat.table, "--format", help="table, json or markdown"),
) -> None:
    """Import a τ² results file as a run: the file's models, seed, domain, tasks and provenance in
    the manifest, one record per simulation (conversation, termination, τ²'s recorded reward).

    Each simulation is placed on its task from its content (recorded gold, scenario, label
    where the file's labels are trustworthy), with a confidence. Excluded and reported:
    simulations scored against a different task version (unless --tasks-from-file and the
    file carries it), ambiguous placements (unless --accept-ambiguous), label conflicts
    (unless --relabel), tasks missing from τ² 26.3. The run is labelled as imported, never
    as a simulation.
    """
    from tauguard.domains import DOMAINS
    from tauguard.trajectories.load import ResultsFileError, read_results

    if domain is not None and domain not in DOMAINS:
        fail(f"unknown domain '{domain}'; allowed: {', '.join(DOMAINS)}")
    if name is not None and (not name or "/" in name or name in (".", "..")):
        fail(f"invalid run name {name!r}: use a plain directory name")
    from tauguard.execution.preflight import PlanError, check_out_dir

    try:  # before the file is read: /dev/null, a file or a read-only folder cannot hold a run
        check_out_dir(out)
    except PlanError as exc:
        fail(exc.first_line())
    try:
        loaded = read_results(results, domain)
    except ResultsFileError as exc:
        fail(str(exc))
    if loaded.domain is not None and loaded.domain not in DOMAINS:
        fail(f"the file's domain '{loaded.domain}' is not one of {', '.join(DOMAINS)}")
    from tauguard.trajectories.importer import ImportRunError, import_results
    try:
        result = import_results(
            loaded, out, name=name, relabel=relabel, accept_ambiguous=accept_ambiguous, tasks_from_file=tasks_from_file
        )
    except ImportRunError as exc:
        fail(str(exc))
    report = None
    if rescore:
        from tauguard.runs.store import load_run
        from tauguard.trajectories.rescore import rescore_run

        def tick(done: int, total: int) -> None:
            if fmt != OutputFormat.json and (done == total or done % 10 == 0):
                end = "\n" if done == total or not is_tty() else "\r"
                sys.stderr.write(f"  re-scored {done}/{total}{end}")

        report = rescore_run(load_run(result.run_dir), progress=tick)
        Path(result.run_dir, "rescore.json").write_text(report.model_dump_json(indent=2), encoding="utf-8")
    if fmt == OutputFormat.json:
        payload: dict[str, Any] = {"import": result.model_dump()}
        if report is not None:
            payload["rescore"] = report.model_dump(exclude={"results"})
        typer.echo(json.dumps(payload, indent=2))
    else:
        typer.echo(_render(result, report, fmt.value))
