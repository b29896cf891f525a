"""`tauguard power RUN [--vs RUN2] --delta D --k K`: tasks × trials for 80 % power, by simulation."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from tauguard.cli.common import OutputFormat, fail, ranged

if TYPE_CHECKING:
    from tauguard.analysis.metrics import TaskOutcome
    from tauguard.analysis.power import GateDesign, PowerPlan
    from tauguard.runs.store import Run


def domain_task_count(run: Run) -> int | None:
    """How many tasks the run's domains have in its split (τ²'s split_tasks.json); None when unknown
    (an imported run, a domain τ² does not know)."""
    m = run.manifest
    if m.source != "run":
        return None
    from tauguard.tau2_adapter.task_counts import split_task_count

    counts = [split_task_count(d, m.split) for d in m.domains]
    return None if any(c is None for c in counts) else sum(c for c in counts if c is not None) or None


def _pilot(plan: PowerPlan) -> str:
    """The pilot's pass^k, and the model's when they differ (rates between 0 and 1 raise (c/n)^k above it)."""
    model = f"{plan.baseline_value:.3f}"
    if plan.pilot_value is None:
        return f"model {plan.metric} {model} from per-task rates"
    pilot = f"{plan.pilot_value:.3f}"
    return f"pilot {plan.metric} {pilot}" + ("" if pilot == model else f", model {model} from per-task rates (c/n)^{plan.k}")


def render_power(plan: PowerPlan, fmt: str) -> str:
    """The plan as a table or markdown."""
    from tabulate import tabulate

    from tauguard.runs.records import SIMULATION_NOTE

    md = fmt == "markdown"
    lines: list[str] = []
    if plan.simulated:
        lines += [f"> **{SIMULATION_NOTE}**" if md else SIMULATION_NOTE, ""]
    versus = f" vs {plan.vs_run_id}" if plan.vs_run_id else ""
    lines.append(
        f"power plan for Δ{plan.metric} = {plan.delta:+.3f} from pilot {plan.run_id}{versus} "
        f"({plan.pilot_tasks} tasks, {_pilot(plan)}): "
        f"{plan.target_power:.0%} power at {plan.confidence:.0%} confidence, {plan.simulations} simulated pairs per design"
    )
    lines.append("")
    rows = [
        {"trials per task": d.trials, "tasks needed": d.tasks, "total trials per run": d.tasks * d.trials, "power": f"{d.power:.3f}"}
        for d in plan.designs
    ]
    if rows:
        lines.append(tabulate(rows, headers="keys", tablefmt="github" if md else "simple", disable_numparse=True))
        lines.append("")
    c = plan.current
    lines.append(f"this run as it stands ({c.tasks} tasks × {c.trials} trials): power {c.power:.3f} at Δ = {plan.delta:+.3f}")
    if plan.mde is None:
        lines.append(f"minimum detectable effect: none of this sign reaches {plan.target_power:.0%} power at this design")
    else:
        lines.append(f"minimum detectable effect: |Δ{plan.metric}| ≥ {plan.mde:.3f} ({plan.target_power:.0%} power)")
    lines += [f"note: {n}" for n in plan.notes]
    lines.append(
        "Model: tasks drawn from the pilot's per-task success rates, independent trials, compare's adjusted CI "
        "(see docs/compare_and_check.md); sim runs on one seed are more alike, so this is conservative for them."
    )
    if plan.simulated:
        lines.append(
            "note: `check` gates two sim runs that differ only in the strategy exactly, outcome by outcome (no interval); "
            "this plan is for noisy runs (real LLMs)."
        )
    return "\n".join(lines)


def power(
    run: Path = typer.Argument(..., help="The pilot run whose per-task success rates stand for the tasks."),
    vs: Path | None = typer.Option(None, "--vs", help="A second run: its per-task rates shape the candidate. \\[default: none]"),
    delta: float | None = typer.Option(
        None, "--delta", help="Δpass^k to detect, e.g. -0.05 or 0.05 (default with --vs: the observed Δ)."
    ),
    k: int | None = typer.Option(None, "--k", **ranged("--primary-k"), help="pass^k's k (default: the largest k every pilot task supports)."),
    target: float = typer.Option(0.8, "--power", min=0.5, max=0.99, help="Target power."),
    confidence: float = typer.Option(0.95, "--confidence", **ranged("--confidence"), help="CI confidence level."),
    simulations: int = typer.Option(1000, "--simulations", min=100, max=100_000, help="Simulated pairs of runs per design."),
    seed: int = typer.Option(0, "--seed", **ranged("--seed (statistics)"), help="Seed of the simulation."),
    fmt: OutputFormat = typer.Option(OutputFormat.table, "--format", help="table, json or markdown"),
    margin: float | None = typer.Option(
        None,
        "--margin",
        min=0.0,
        max=1.0,
        help="Also say whether `check --margin M` can pass an unchanged strategy at this design, and which design can. "
        "\\[default: none]",
    ),
) -> None:
    """Plan tasks × trials: the design needed for 80 % power to detect Δpass^k, and the run's MDE;
    with --margin, whether `check` can pass an unchanged strategy at this design (--margin alone: only that).

    Simulates pairs of runs from the pilot run's per-task success rates and decides each as
    `compare` does. Without --vs the candidate breaks (Δ < 0) or fixes (Δ > 0) whole tasks.
    """
    from tauguard.analysis.compare import load_runs
    from tauguard.analysis.metrics import run_is_simulated
    from tauguard.analysis.task_table import run_task_outcomes
    from tauguard.analysis.power import PowerError, plan_power
    from tauguard.runs.store import RunLoadError

    try:
        loaded = load_runs([run] + ([vs] if vs is not None else []), conversations=False, records=False)
        pilot = run_task_outcomes(loaded[0])
        versus = run_task_outcomes(loaded[1]) if vs is not None else None
        ns = [o.trials for o in pilot if o.trials > 0]
        kk = k if k is not None else max(1, min(ns, default=1))
        available = domain_task_count(loaded[0])
        simulated = any(run_is_simulated(r) for r in loaded)
        plan = None
        # --margin alone asks only check's design question; --delta (or --vs) plans for an effect.
        if delta is not None or vs is not None or margin is None:
            plan = plan_power(
                pilot,
                run_id=loaded[0].manifest.run_id,
                simulated=simulated,
                k=kk,
                delta=delta,
                versus=versus,
                vs_run_id=loaded[1].manifest.run_id if vs is not None else None,
                target_power=target,
                confidence=confidence,
                simulations=simulations,
                seed=seed,
                available_tasks=available,
            )
        design = None
        if margin is not None:
            design = _gate_design(
                pilot, kk, margin, confidence=confidence, available_tasks=available, simulations=simulations, seed=seed
            )
    except (RunLoadError, PowerError) as exc:
        fail(str(exc))
    if vs is not None:
        from tauguard.analysis.pairing import pairing_warnings

        for line in pairing_warnings(loaded[0].manifest, loaded[1].manifest):
            typer.echo(f"warning: {line}", err=True)
    if fmt == OutputFormat.json:
        import json

        data = plan.model_dump(mode="json") if plan is not None else {"run_id": loaded[0].manifest.run_id, "simulated": simulated}
        if design is not None:
            data["gate_design"] = design.model_dump(mode="json")
        typer.echo(json.dumps(data, indent=2))
        return
    if plan is not None:
        typer.echo(render_power(plan, fmt.value))
    elif simulated:
        from tauguard.runs.records import SIMULATION_NOTE

        typer.echo(f"> **{SIMULATION_NOTE}**" if fmt == OutputFormat.markdown else SIMULATION_NOTE)
    if design is not None:
        typer.echo(gate_design_line(design))


def _gate_design(
    pilot: list[TaskOutcome], k: int, margin: float, *, confidence: float, available_tasks: int | None, simulations: int,
    seed: int,
) -> GateDesign:
    """`check`'s design question for the pilot as both baseline and candidate (the same function `check` asks):
    its tasks with at least k evaluated trials, at their smallest trial count."""
    from tauguard.analysis.metrics import metric_def
    from tauguard.analysis.power import PowerError, gate_design

    used = [o for o in pilot if o.trials >= k]
    if not used:
        raise PowerError(f"no pilot task has {k} evaluated trials: give a smaller --k")
    return gate_design(
        [o.successes / o.trials for o in used], metric_def("pass^"), k, tasks=len(used),
        trials=min(o.trials for o in used), margin=margin, confidence=confidence, target=0.8,
        simulations=simulations, seed=seed, available_tasks=available_tasks,
    )


def gate_design_line(design: GateDesign) -> str:
    """One line: can `check` pass an unchanged strategy at this design and margin, and which design can."""
    verdict = "can" if design.feasible else "cannot"
    line = (
        f"gate design: `check --margin {design.margin:g}` on {design.metric} {verdict} pass an unchanged strategy at "
        f"{design.tasks} tasks × {design.trials} trials (probability {design.pass_probability:.2f}, "
        f"{design.target:.0%} needed)"
    )
    return line if design.feasible else f"{line}; {design.advice()}"
