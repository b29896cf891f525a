"""`tauguard faults validate REAL_RUN`: does a fitted sim forecast tasks it was not fitted on?

Each partition splits the real run's tasks at random (seeded) into two halves; each half is a
fold: fit a profile on it (`faults fit` on those tasks only), simulate the other half with
`react` and that profile, and compare the sim's pass^1 on the held-out half with the real one.
The yardstick is the trivial forecast "the fitted half's real pass^1". Printed: per fold the
three pass^1 values and both absolute errors; the mean absolute error (MAE) of each forecast
over the folds with a 95 % bootstrap interval (folds resampled; the folds of one run share tasks,
so the interval is indicative), the paired difference and how often the sim is closer; and, with
``--in-sample``, the sim fitted and run on every task beside the real pass^1. SIMULATION: the sim
figures describe the simulator, never real LLMs.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any, Optional

import typer
from pydantic import BaseModel

from tauguard.cli.common import OutputFormat, fail

CONFIDENCE = 0.95


class Fold(BaseModel):
    """One held-out half: the forecasts of its real pass^1."""

    partition: int
    fold: int
    fitted_tasks: int
    held_out_tasks: int
    real_fitted: float  # the trivial forecast
    real_held_out: float
    sim_held_out: float
    sim_error: float
    trivial_error: float


class Validation(BaseModel):
    """The cross-fit validation of one real run (SIMULATION figures in the sim columns)."""

    real_run: str
    domain: str
    tasks: int
    trials: int
    seed: int
    prior_strength: float
    uptake: float
    block_transfer: float
    folds: list[Fold]
    sim_mae: float
    sim_mae_ci: tuple[float, float]
    trivial_mae: float
    trivial_mae_ci: tuple[float, float]
    difference: float  # sim MAE - trivial MAE (negative: the sim forecasts better)
    difference_ci: tuple[float, float]
    sim_closer: int
    in_sample_real: float | None = None
    in_sample_sim: float | None = None
    in_sample_ceiling: float | None = None


def _ci(values: list[float]) -> tuple[float, float]:
    import numpy as np

    from scipy.stats import bootstrap

    data = np.asarray(values, dtype=float)
    if len(data) < 2 or np.ptp(data) == 0:
        return float(data.mean()), float(data.mean())
    res = bootstrap((data,), np.mean, confidence_level=CONFIDENCE, n_resamples=2000, method="percentile", random_state=0)
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def _real_outcomes(real: Path) -> tuple[str, dict[str, float]]:
    """The real run's domain and per-task success rate (tasks τ² 26.3 defines)."""
    import numpy as np
    from tauguard.tau2_adapter import compat as t2
    from tauguard.faults.fit import FitError
    from tauguard.runs.store import load_run

    run = load_run(real, conversations=False)
    if run.manifest.source != "imported":
        raise FitError(f"{real}: not an imported real run (tauguard import)")
    if len(run.manifest.domains) != 1:
        raise FitError(f"{real}: a run of one domain is needed, got {', '.join(run.manifest.domains) or 'none'}")
    domain = run.manifest.domains[0]
    known = {t.id for t in t2.load_tasks(domain, "base")}
    per_task: dict[str, list[float]] = {}
    for r in run.records:
        if r.success is not None and r.task_id in known:
            per_task.setdefault(r.task_id, []).append(float(r.success))
    return domain, {t: float(np.mean(v)) for t, v in sorted(per_task.items())}


def _simulate(domain: str, tasks: list[str], profile: Path, trials: int, seed: int, name: str, out: Path) -> float:
    """pass^1 (mean over tasks of the per-task success rate) of `react` with ``profile`` on ``tasks``."""
    import numpy as np
    from tauguard.config import resolve_config
    from tauguard.execution import lifecycle
    from tauguard.runs.store import load_run

    config = resolve_config(None, {
        "strategy": "react", "domains": [domain], "trials": trials, "task_ids": tasks, "faults": str(profile),
        "seed": seed, "name": name, "out": str(out),
    })
    result = lifecycle.run(config)
    per_task: dict[str, list[float]] = {}
    for r in load_run(result.run_dir, conversations=False).records:
        if r.success is not None:
            per_task.setdefault(r.task_id, []).append(float(r.success))
    return float(np.mean([np.mean(v) for v in per_task.values()])) if per_task else float("nan")


def validate(
    real: Path, partitions: int, seed: int, trials: int, work: Path, prior_strength: float, uptake: float,
    block_transfer: float, in_sample: bool, echo: Any = None,
) -> Validation:
    """Fit on half the tasks, simulate the other half, for ``partitions`` seeded random partitions (two folds each)."""
    import numpy as np
    from tauguard.faults.fit import FitError, fit, profile_toml
    from tauguard.faults.profiles import load_profile

    domain, outcomes = _real_outcomes(real)
    tasks = sorted(outcomes)
    if len(tasks) < 4:
        raise FitError(f"{real} has {len(tasks)} tasks with an outcome on a τ² task definition; validation needs at least 4")
    folds: list[Fold] = []
    for p in range(partitions):
        order = list(np.random.default_rng([seed, p]).permutation(tasks))
        half = len(order) // 2
        for f, (fitted, held) in enumerate(((order[:half], order[half:]), (order[half:], order[:half]))):
            result = fit([real], task_ids=set(fitted))
            path = work / f"p{p}f{f}.toml"
            path.write_text(profile_toml(result, path.stem, uptake, block_transfer, prior_strength), encoding="utf-8")
            load_profile(str(path))
            sim = _simulate(domain, sorted(held), path, trials, seed, f"p{p}f{f}", work)
            real_fit = float(np.mean([outcomes[t] for t in fitted]))
            real_held = float(np.mean([outcomes[t] for t in held]))
            folds.append(Fold(partition=p, fold=f, fitted_tasks=len(fitted), held_out_tasks=len(held), real_fitted=real_fit,
                              real_held_out=real_held, sim_held_out=sim, sim_error=abs(sim - real_held),
                              trivial_error=abs(real_fit - real_held)))
            if echo is not None:
                echo(f"partition {p} fold {f}: real {real_held:.3f}, sim {sim:.3f}, trivial {real_fit:.3f}")
    sim_err = [x.sim_error for x in folds]
    triv_err = [x.trivial_error for x in folds]
    diff = [a - b for a, b in zip(sim_err, triv_err)]
    out = Validation(
        real_run=str(real), domain=domain, tasks=len(tasks), trials=trials, seed=seed, prior_strength=prior_strength,
        uptake=uptake, block_transfer=block_transfer, folds=folds,
        sim_mae=float(np.mean(sim_err)), sim_mae_ci=_ci(sim_err), trivial_mae=float(np.mean(triv_err)), trivial_mae_ci=_ci(triv_err),
        difference=float(np.mean(diff)), difference_ci=_ci(diff), sim_closer=sum(a < b for a, b in zip(sim_err, triv_err)),
    )
    if in_sample:
        result = fit([real])
        path = work / "all.toml"
        path.write_text(profile_toml(result, path.stem, uptake, block_transfer, prior_strength), encoding="utf-8")
        out.in_sample_sim = _simulate(domain, tasks, path, trials, seed, "all", work)
        out.in_sample_real = float(np.mean(list(outcomes.values())))
        attributed = result.failures - result.unexplained
        out.in_sample_ceiling = 1.0 - attributed / result.simulations if result.simulations else None
    return out


def validate_command(
    real: Path = typer.Argument(..., help="An imported real run (tauguard import) of one domain."),
    partitions: int = typer.Option(5, "--partitions", min=1, max=100, help="Random task partitions (each gives two held-out halves)."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the partitions and of the sim runs."),
    trials: int = typer.Option(4, "-k", "--trials", min=1, max=100, help="Sim trials per held-out task."),
    out: Optional[Path] = typer.Option(None, "--out", help="Keep the fitted profiles and sim runs here (default: a temporary directory, removed)."),
    prior_strength: float = typer.Option(4.0, "--prior-strength", min=0.0, help="Pseudo-count of the fitted rates' prior (faults fit)."),
    uptake: float = typer.Option(0.8, "--uptake", min=0.0, max=1.0, help="Assumed uptake (no guard runs here: react)."),
    block_transfer: float = typer.Option(0.3, "--block-transfer", min=0.0, max=1.0, help="Assumed hand-off rate after a BLOCK."),
    in_sample: bool = typer.Option(True, "--in-sample/--no-in-sample", help="Also fit on every task and simulate every task."),
    fmt: OutputFormat = typer.Option(OutputFormat.table, "--format", help="table, json or markdown"),
) -> None:
    """Fit on half the tasks, simulate the other half (several seeded partitions); print the sim's forecast error beside the trivial forecast's (the fitted half's real pass^1), with 95 % intervals. SIMULATION figures."""
    if not (real / "manifest.json").is_file():
        fail(f"{real} is not a run directory (no manifest.json); give an imported real run (tauguard import)")
    if out is not None and out.exists() and any(out.iterdir()):
        fail(f"{out} exists and is not empty; pick another --out (nothing was overwritten)")
    work = out or Path(tempfile.mkdtemp(prefix="tauguard-validate-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        result = validate(real, partitions, seed, trials, work, prior_strength, uptake, block_transfer, in_sample,
                          echo=lambda line: typer.echo(line, err=True))
    finally:
        if out is None:
            shutil.rmtree(work, ignore_errors=True)
    if fmt == OutputFormat.json:
        typer.echo(json.dumps(result.model_dump(), indent=2))
        return
    _print(result, "github" if fmt == OutputFormat.markdown else "simple")


def _print(v: Validation, tablefmt: str) -> None:
    from tabulate import tabulate

    typer.echo(f"SIMULATION (sim columns describe the simulator, not real LLMs). {v.real_run}: {v.domain}, {v.tasks} tasks; "
               f"react + fitted profile, k = {v.trials}, seed {v.seed}; prior m = {v.prior_strength:g}; "
               f"assumed uptake {v.uptake:g}, block_transfer {v.block_transfer:g}")
    rows = [{"partition": f.partition, "fold": f.fold, "fit / held-out tasks": f"{f.fitted_tasks} / {f.held_out_tasks}",
             "real (held-out)": f"{f.real_held_out:.3f}", "sim forecast": f"{f.sim_held_out:.3f}",
             "trivial forecast": f"{f.real_fitted:.3f}", "|sim - real|": f"{f.sim_error:.3f}",
             "|trivial - real|": f"{f.trivial_error:.3f}"} for f in v.folds]
    typer.echo(tabulate(rows, headers="keys", tablefmt=tablefmt, disable_numparse=True))
    typer.echo("")
    n = len(v.folds)
    summary = [
        {"forecast of held-out pass^1": "fitted sim", "MAE": f"{v.sim_mae:.3f}", "95% CI": f"[{v.sim_mae_ci[0]:.3f}, {v.sim_mae_ci[1]:.3f}]"},
        {"forecast of held-out pass^1": "trivial (fitted half's real pass^1)", "MAE": f"{v.trivial_mae:.3f}",
         "95% CI": f"[{v.trivial_mae_ci[0]:.3f}, {v.trivial_mae_ci[1]:.3f}]"},
        {"forecast of held-out pass^1": "sim - trivial", "MAE": f"{v.difference:+.3f}",
         "95% CI": f"[{v.difference_ci[0]:+.3f}, {v.difference_ci[1]:+.3f}]"},
    ]
    typer.echo(tabulate(summary, headers="keys", tablefmt=tablefmt, disable_numparse=True))
    typer.echo(f"the sim is closer in {v.sim_closer} of {n} held-out halves; "
               "intervals bootstrap the folds, which share tasks: indicative only")
    if v.in_sample_sim is not None:
        typer.echo(f"in-sample (fitted on and simulating all {v.tasks} tasks): real pass^1 {v.in_sample_real:.3f}, "
                   f"sim {v.in_sample_sim:.3f}, ceiling without the unexplained rate {v.in_sample_ceiling:.3f}")
