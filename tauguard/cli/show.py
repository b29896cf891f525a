"""`tauguard show RUN`: a run's summary (pass^k by slice, guard verdicts, faults, cost)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from tauguard.cli.common import OutputFormat, fail, note_live_runs, terminal_safe
from tauguard.gc_pause import gc_paused_command

if TYPE_CHECKING:
    from tauguard.analysis.axes import RunAxes
    from tauguard.analysis.summary import RunSummary
    from tauguard.runs.store import Run


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def ci_line(run: Run, confidence: float = 0.95) -> str | None:
    """pass^k over all tasks with its adjusted Wald CI over tasks (the report's bands), or None."""
    from tauguard.analysis.metrics import common_k, metric_def
    from tauguard.analysis.task_table import run_task_outcomes
    from tauguard.report.curves import curve

    # The outcome index suffices; the summary above reduced the run already (cached on it).
    outcomes = run_task_outcomes(run)
    # tau2's rule, as the table above: up to the smallest trial count, every k over the same tasks.
    max_k = common_k(outcomes, metric_def("pass^"))
    if not max_k:
        return None
    points = curve("run", outcomes, "pass^", max_k, confidence=confidence).points
    cells = [f"pass^{p.k} {_fmt(p.value)} [{_fmt(p.low)}, {_fmt(p.high)}]" for p in points]
    return (f"{confidence:.0%} CI over tasks (adjusted Wald interval of the mean, Bonett-Price pseudo-tasks; "
            "the method of compare's Δ CIs and the report's bands): " + "; ".join(cells))


def render(summary: "RunSummary", fmt: str, ci: str | None = None) -> str:
    """Render a summary as table or markdown text (``ci``: the line of :func:`ci_line`)."""
    from tauguard.tables import fit_table

    from tauguard.analysis.metrics import METRICS

    tablefmt = "github" if fmt == "markdown" else "simple"
    s = summary
    lines = []
    if s.simulated:
        from tauguard.runs.records import SIMULATION_NOTE as SIM_NOTE

        lines.append(("> **" + SIM_NOTE + "**") if fmt == "markdown" else "*** " + SIM_NOTE + " ***")
    if s.source_note:
        lines.append(("> " + s.source_note) if fmt == "markdown" else s.source_note)
    if s.left_out is not None:
        lines.append(("> " + s.left_out.line()) if fmt == "markdown" else s.left_out.line())
    lines.append(
        f"run {s.run_id} [{s.status}]  strategy={s.strategy}  domains={','.join(s.domains)}/{s.split}  "
        f"agent={s.agent_llm} user={s.user_llm}" + (f" guard={s.guard_llm}" if s.guard_llm else "")
        + f"  faults={s.fault_profile}"
    )
    if s.sim_feedback:
        from tauguard.execution.lifecycle import describe_feedback

        lines.append(f"sim feedback: {describe_feedback(s.sim_feedback, s.uptake)}")
    lines.append(f"units {s.recorded_units}/{s.planned_units}  wall time {s.wall_time_s:.1f}s")
    if s.status != "completed" or s.recorded_units < s.planned_units:
        lines.append(
            f"warning: incomplete run: {s.recorded_units} of {s.planned_units} planned units recorded, "
            f"status {s.status} (`tauguard run --resume` on the run directory finishes it)"
        )
    if s.metrics.skipped_lines:
        lines.append(f"warning: {s.metrics.skipped_lines} unparsable record line(s) skipped")
    k = s.metrics.max_k
    shown = [m for m in METRICS if m.shown]
    rows = []
    for sl in s.metrics.slices:
        row = {"slice": sl.label, "tasks": sl.evaluated_tasks, "trials": sl.trials}
        # pass^k before avg reward, the other k-metrics after it: the order readers know.
        for i, mdef in enumerate(shown):
            for kv in sl.k_values(mdef.kind) or []:
                row[f"{mdef.column}{kv.k}"] = _fmt(kv.value)
            if i == 0:
                row["avg reward"] = _fmt(sl.avg_reward)
        row["process-valid"] = _fmt(sl.process_valid_rate)
        row["step-TCR"], row["trace-TCR"] = _fmt(sl.step_tcr), _fmt(sl.trace_tcr)
        row["infra err"] = sl.infra_errors
        rows.append(row)
    columns = list(dict.fromkeys(key for row in rows for key in row))  # slices may stop at different ks
    rows = [{key: row.get(key, "-") for key in columns} for row in rows]
    lines.append("")
    overall = s.metrics.get("all")
    if k and overall is not None:
        ks = f"k = 1..{k}, each k over the same {overall.evaluated_tasks} task(s)"
        if s.metrics.max_trials > k:
            ks += (
                f"; tasks have up to {s.metrics.max_trials} evaluated trials but some only {k}, and like tau2 "
                f"pass^k stops at the smallest count (so it never rises with k)"
            )
    else:
        ks = "no evaluated trial yet"
    if s.left_out is not None:
        ks += f"; over {s.left_out.scope()}"
    lines.append(f"pass^k (tau2 estimator C(c,k)/C(n,k), mean over tasks), {ks}")
    lines.append(fit_table(rows, headers="keys", tablefmt=tablefmt, disable_numparse=True))
    if overall is not None and overall.process_traces:
        lines.append(
            f"process (PolicyGuide's process validity, see legend): process-valid = reward 1 AND every applicable check, over all "
            f"{overall.process_traces} trials with a trace; step-/trace-TCR over the {overall.process_passed_traces} "
            f"outcome-passing traces (the paper's) and {overall.process_blocked_traces} failed by a guard's block "
            f"of a write the task needed, that write an unsatisfied step (tauguard's rule: a block is not "
            f"rewarded); {overall.process_unassessed} with no applicable check, not assessed"
        )
    for note in s.metrics.metric_notes.values():
        lines.append(f"note: {note}")
    if ci:
        lines.append(ci)
    lines.append("")
    verdicts = ", ".join(f"{v} {s.guard_verdicts.get(v, 0)}" for v in ("ALLOW", "VERIFY", "REVISE", "BLOCK"))
    lines.append(f"guard decisions on WRITE calls: {verdicts}; gave up after retries: {s.guard_retry_exhausted}")
    if s.guard_calls_per_task:
        lines.append(f"guard LLM calls per trial {s.guard_calls_per_task:.2f}, cost per trial ${_fmt(s.guard_cost_per_task, 4)}")
    if s.faults:
        lines.append("")
        lines.append("injected faults by class (A argument, T tool read, D dialogue, W workflow, PV policy violation);")
        lines.append("detected: held by a guard at least once; prevented: never reached the environment")
        fault_rows = [{**f.model_dump(), "prevented": "-" if f.prevented is None else f.prevented} for f in s.faults]
        lines.append(fit_table(fault_rows, headers="keys", tablefmt=tablefmt, disable_numparse=True))
    if s.attacks is not None:
        from tauguard.attacks.render import attack_lines

        lines.extend(attack_lines(s.attacks, tablefmt))
    lines.append("")
    lines.append(
        fit_table(
            [{"role": c.role, "cost $": _fmt(c.cost, 4), "prompt tok": c.prompt_tokens, "completion tok": c.completion_tokens, "messages/calls": c.calls} for c in s.costs],
            headers="keys", tablefmt=tablefmt, disable_numparse=True,
        )
    )
    if fmt != "markdown":
        from tauguard.analysis.legend import legend_lines

        used = [*columns, *(["fault classes"] if s.faults else []), *(["clause ids"] if s.attacks is not None else [])]
        lines.append("")
        lines.extend(legend_lines(used))
    if s.infra_errors:
        lines.append("")
        lines.append(f"infrastructure errors ({len(s.infra_errors)}; excluded from metrics, re-run by --resume):")
        lines.extend(f"  {e}" for e in s.infra_errors[:10])
        if len(s.infra_errors) > 10:
            lines.append(f"  ... and {len(s.infra_errors) - 10} more")
    return "\n".join(lines)


def print_summary(run_dir: Path, fmt: str) -> None:
    """Load a run and print its summary (used by `show` and at the end of `run`)."""
    from tauguard.runs.store import RunLoadError, load_run
    from tauguard.analysis.summary import summarize

    try:
        # The outcome index holds everything the summary counts: no record is parsed.
        run = load_run(run_dir, records=False)
        summary = summarize(run)
    except RunLoadError as exc:
        fail(str(exc))
    note_live_runs([run])
    axes = run_axes_or_none(run_dir)
    if fmt == "json":
        if axes is None:
            typer.echo(summary.model_dump_json(indent=2))
        else:
            import json

            data = summary.model_dump(mode="json")
            data["axes"] = axes.model_dump(mode="json")
            typer.echo(json.dumps(data, indent=2))
    else:
        from tauguard.tables import fit_text

        text = render(summary, fmt, ci_line(run))
        if axes is not None:
            from tauguard.analysis.axes_render import render_run_axes

            text += "\n\n" + "\n".join(render_run_axes(axes))
        typer.echo(terminal_safe(fit_text(text) if fmt == "table" else text))


def run_axes_or_none(run_dir: Path) -> RunAxes | None:
    """The run's two axes (compliance, usefulness: tauguard.analysis.axes), None while it has no evaluated trial."""
    from tauguard.analysis.axes import run_axes
    from tauguard.faults.violations import violated_clauses
    from tauguard.runs.store import load_run

    # The compliance judge reads the faults and the gold-conflict calls: every record, with its conversation.
    full = load_run(run_dir, conversations=True)
    if not any(r.error is None for r in full.records):
        return None
    return run_axes(full, violated_clauses)


@gc_paused_command  # short-lived: 10^5 rows per run at scale (tauguard.gc_pause)
def show(
    run_dir: Path = typer.Argument(..., help="A run directory (runs/<run-id>)."),
    fmt: OutputFormat = typer.Option(OutputFormat.table, "--format", help="table, json or markdown"),
) -> None:
    """Summarise a run: pass^1..pass^k by slice, guard verdicts, faults, cost, errors, and its two axes
    (policy-violating writes that reached the environment; pass^k on policy-consistent tasks)."""
    print_summary(run_dir, fmt.value)
