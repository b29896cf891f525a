"""Gather a report's data from loaded runs, reusing the library's computations.

- comparisons: :func:`tauguard.analysis.compare.compare_runs`, kept as the JSON object `tauguard compare
  --format json` prints (:func:`tauguard.analysis.render.compare_json_obj`), once over all domains and
  once per domain;
- pass^k / ASR@k: :mod:`tauguard.analysis.metrics` (bands from :mod:`tauguard.report.curves`);
- faults, guard verdicts, cost: :func:`tauguard.analysis.summary.summarize`;
- gates: :func:`tauguard.analysis.gate.run_gate` when floors or a baseline run are given.

Pure library: imports neither tau2 nor litellm.
"""

from __future__ import annotations

import datetime as dt
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from tauguard import __version__
from tauguard.analysis.gate import FloorsConfig, GateMode, run_gate
from tauguard.analysis.compare import CompareError, compare_runs
from tauguard.analysis.metrics import KMetricKind, Subset, TaskOutcome, common_k, metric_def, run_is_simulated, select
from tauguard.analysis.task_table import run_task_outcomes
from tauguard.runs.outcome_index import RecordTally, UnitOutcome
from tauguard.analysis.pairing import PairingDifference
from tauguard.process.score import recorded_judges, scored_by_note
from tauguard.runs.records import SIMULATION_NOTE, TrialRecord
from tauguard.report.curves import curve
from tauguard.report.model import (
    CheckRow,
    CostRow,
    CurvePanel,
    DeltaRow,
    FaultRow,
    ReportData,
    RunHeader,
    RunTiming,
    TaskCell,
    TaskRow,
    TacticRow,
    TaskTrials,
    VerdictRow,
)
from tauguard.report.trials import trial_view
from tauguard.analysis.render import compare_json_obj
from tauguard.runs.store import Run, read_record
from tauguard.analysis.summary import RunSummary, iter_tallies, summarize
from tauguard.errors import TauguardInputError

# Per-trial views are the bulk of a page; above this many bytes of trial data, further tasks are
# listed without their trials so that 4 runs x 278 tasks x 4 trials stay well under 3 MB.
TRIAL_BUDGET_BYTES = 1_200_000  # of trial JSON; the rendered HTML is about 1.5 times as large
TRIALS_PER_RUN = 2  # per changed task and run: the first failed and the first passed trial


class ReportError(TauguardInputError):
    """Runs cannot be reported together; one-line message."""


@dataclass
class ReportOptions:
    """Knobs of a report; the statistics ones mean what they mean for `tauguard compare`."""

    primary_k: int | None = None
    seed: int = 0
    n_resamples: int = 10_000
    confidence: float = 0.95
    floors: FloorsConfig | None = None
    gate_baseline: Run | None = None
    gate_metric: str | None = None
    gate_margin: float = 0.05
    gate_mode: GateMode = "non-inferiority"
    trial_budget_bytes: int = TRIAL_BUDGET_BYTES
    audits: list[dict[str, Any]] = field(default_factory=list)  # `tauguard audit --output` objects
    labels: list[Any] | None = None  # LabelledWrite; None: the packaged real-write benchmark


def _header(run: Run, summary: RunSummary, role: str) -> RunHeader:
    m = run.manifest
    reasons = []
    if m.status != "completed":
        reasons.append(f"status {m.status}")
    recorded = len(run.unit_outcomes())
    if recorded < m.expected_units:
        reasons.append(f"{recorded} of {m.expected_units} planned trials recorded")
    shared = m.model_dump(include={
        "run_id", "strategy", "strategy_options", "agent_llm", "user_llm", "guard_llm", "seed", "domains", "split",
        "trials", "versions", "git_commit", "status", "created_at",
    })
    return RunHeader(
        **shared,
        path=str(run.path),
        role=role,
        fault_profile=summary.fault_profile,
        sim_feedback=summary.sim_feedback,
        uptake=summary.uptake,
        planned_units=m.expected_units,
        recorded_units=recorded,
        infra_errors=len(summary.infra_errors),
        skipped_lines=run.skipped_lines,
        simulated=run_is_simulated(run),
        source=m.source,
        left_out=summary.left_out.line() if summary.left_out is not None else None,
        partial=bool(reasons),
        partial_reason="; ".join(reasons) or None,
    )


def _check_unique_ids(runs: Sequence[Run]) -> None:
    seen: set[str] = set()
    for run in runs:
        rid = run.manifest.run_id
        if rid in seen:
            raise ReportError(f"run id {rid!r} given twice; give each run once")
        seen.add(rid)


# --------------------------------------------------------------------------- comparisons


def _delta_rows(compare_obj: dict[str, Any], slice_label: str) -> list[DeltaRow]:
    """Δ rows from `compare --format json`'s object: the one place that reads its shape.

    The headline results (pass^k) come first; metrics compare lists besides them
    (``other_metrics``, e.g. a paired ASR@k) follow when present.
    """
    rows = []
    for comp in compare_obj["comparisons"]:
        results = [(r, None) for r in comp["results"]]
        for other in comp.get("other_metrics") or []:
            results += [(r, other.get("note")) for r in other.get("results", [])]
        for r, note in results:
            rows.append(
                DeltaRow(
                    note=note or "",
                    candidate=comp["candidate"]["run_id"],
                    slice=slice_label,
                    metric=r.get("metric") or f"pass^{r['k']}",
                    k=r["k"],
                    primary=r["primary"],
                    tasks=r["tasks"],
                    baseline=r["baseline"],
                    candidate_value=r["candidate"],
                    delta=r["delta"],
                    ci_low=r["ci_low"],
                    ci_high=r["ci_high"],
                    p_permutation=r["p_permutation"],
                    p_holm=r["p_holm"],
                    verdict=r["verdict"],
                )
            )
    return rows


def _incomplete(run: Run) -> bool:
    return run.manifest.status != "completed" or len(run.unit_outcomes()) < run.manifest.expected_units


def _planned(run: Run) -> set[tuple[str, str]]:
    return {(d, t) for d, ids in run.manifest.task_ids.items() for t in ids}


def _comparable(runs: Sequence[Run], stats: dict[str, Any]) -> tuple[list[Run], list[str]]:
    """The runs compare can take. A partial run that cannot be compared *yet* (it plans tasks the
    baseline has, but has not recorded enough of them) is left out with a note; any other failure
    (disjoint tasks, no common k) is the user's error."""
    kept, notes = [runs[0]], []
    for cand in runs[1:]:
        try:
            compare_runs([runs[0], cand], **{**stats, "n_resamples": 1})
        except CompareError as exc:
            pending = (_incomplete(cand) or _incomplete(runs[0])) and _planned(cand) & _planned(runs[0])
            if not pending:
                raise ReportError(str(exc)) from None
            notes.append(f"{cand.manifest.run_id} is not compared yet (partial run): {exc}")
            continue
        kept.append(cand)
    return kept, notes


def _comparisons(
    runs: Sequence[Run], opts: ReportOptions
) -> tuple[dict[str, Any] | None, list[DeltaRow], list[str]]:
    stats: dict[str, Any] = {
        "primary_k": opts.primary_k, "n_resamples": opts.n_resamples, "confidence": opts.confidence, "seed": opts.seed,
    }
    try:
        overall = compare_runs(runs, **stats)
        notes: list[str] = []
    except CompareError as exc:
        kept, notes = _comparable(runs, stats)
        if len(kept) == len(runs):
            raise ReportError(str(exc)) from None  # e.g. a primary k one pair lacks
        if len(kept) < 2:
            return None, [], notes
        runs = kept
        overall = compare_runs(runs, **stats)
    obj = compare_json_obj(overall, tasks=True)
    rows = _delta_rows(obj, "all domains")
    domains = sorted({d for comp in obj["comparisons"] for d in comp["domains"]})
    if len(domains) > 1:
        for dom in domains:
            for cand in runs[1:]:
                try:
                    per = compare_runs([runs[0], cand], domain=dom, **stats)
                except CompareError as exc:
                    notes.append(f"{dom}: {exc}")
                    continue
                rows += _delta_rows(compare_json_obj(per), dom)
    return obj, rows, notes


# --------------------------------------------------------------------------- curves


def _panels(
    run_ids: Sequence[str], outcomes: Sequence[list[TaskOutcome]], kind: KMetricKind, metric: str, opts: ReportOptions
) -> list[CurvePanel]:
    domains = sorted({o.domain for outs in outcomes for o in outs})
    slices: list[tuple[str, str, Subset, str | None]] = [("all", "all tasks, all domains", "all", None)]
    if len(domains) > 1:
        slices += [(d, f"{d}, all tasks", "all", d) for d in domains]
    if metric == "pass^k":
        slices += [
            ("pv", "policy-violation tasks (gold plan has no write)", "policy_violation", None),
            ("mut", "mutation tasks (gold plan writes)", "mutation", None),
        ]
    panels = []
    for key, title, subset, dom in slices:
        curves = []
        for rid, outs in zip(run_ids, outcomes, strict=True):
            chosen = select(outs, subset, dom)
            if kind == "asr@" and not any(o.is_attacked for o in chosen):
                continue
            # tau2's rule, as in `show`: up to the smallest trial count, every k over the same tasks.
            k_max = common_k(chosen, metric_def(kind))
            if not chosen or k_max == 0:
                continue
            curves.append(
                curve(rid, chosen, kind, k_max, confidence=opts.confidence)
            )
        if curves:
            slug = metric.replace("^", "").replace("@", "").replace(" ", "-").lower()
            panels.append(CurvePanel(key=f"{slug}-{key}", title=title, metric=metric, curves=curves))
    return panels


def _tactic_rows(summaries: Sequence[RunSummary]) -> list[TacticRow]:
    """Attacked and successful trials per tactic and run (from each run's attack breakdown)."""
    return [
        TacticRow(run_id=s.run_id, tactic=g.group, attacked=g.trials, succeeded=g.successes)
        for s in summaries if s.attacks is not None for g in s.attacks.by_tactic
    ]


# --------------------------------------------------------------------------- task grid and trials


def _task_rows(runs: Sequence[Run], outcomes: Sequence[list[TaskOutcome]], compare_obj: dict[str, Any] | None) -> list[TaskRow]:
    change: dict[tuple[str, str, str], str] = {}
    if compare_obj is not None:
        for comp in compare_obj["comparisons"]:
            rid = comp["candidate"]["run_id"]
            for t in comp.get("tasks", []):
                if t.get("change"):
                    change[(rid, t["domain"], t["task_id"])] = t["change"]
    keys = sorted({o.key for outs in outcomes for o in outs}, key=lambda k: (k[0], _num(k[1])))
    by_run = [{o.key: o for o in outs} for outs in outcomes]
    rows = []
    for dom, tid in keys:
        cells: list[TaskCell | None] = []
        for run, table in zip(runs, by_run, strict=True):
            o = table.get((dom, tid))
            cells.append(
                None if o is None else TaskCell(successes=o.successes, trials=o.trials, infra_errors=o.infra_errors,
                                               change=change.get((run.manifest.run_id, dom, tid)))
            )
        pv = any(t[(dom, tid)].policy_violation_task for t in by_run if (dom, tid) in t)
        changed = any(c is not None and c.change in ("improved", "regressed") for c in cells)
        if len(runs) == 1:  # nothing to compare: show the trials of failing tasks instead
            changed = any(c is not None and c.successes < c.trials for c in cells)
        rows.append(TaskRow(domain=dom, task_id=tid, anchor=_anchor(dom, tid), policy_violation=pv, cells=cells,
                            changed=changed))
    return rows


def _num(task_id: str) -> tuple[int, str]:
    return (int(task_id), "") if task_id.isdigit() else (1 << 30, task_id)


def _anchor(domain: str, task_id: str) -> str:
    # Readable and unique: telecom task ids hold brackets and pipes, which ids and URLs do not like.
    safe = "".join(ch if ch.isalnum() else "-" for ch in f"{domain}-{task_id}")[:48]
    return f"task-{safe}-{zlib.crc32(f'{domain}/{task_id}'.encode()):08x}"


def _pick_trials(units: list[tuple[UnitOutcome, int]]) -> list[tuple[UnitOutcome, int]]:
    failed = [u for u in units if not u[0].error and not u[0].success]
    passed = [u for u in units if not u[0].error and u[0].success]
    errors = [u for u in units if u[0].error]
    picked = (failed[:1] + passed[:1] + errors[:1])[:TRIALS_PER_RUN]
    return sorted(picked, key=lambda u: u[0].trial)


def _record_reader(run: Run) -> Callable[[int], TrialRecord]:
    """The i-th unit's full record: from memory when the run was loaded with its records, else read
    back from simulations.jsonl by the span the outcome index gives (only displayed trials are parsed)."""
    if run.units is None:
        return run.records.__getitem__
    spans = run.spans or []
    return lambda i: read_record(run, spans[i])


def _trial_views(runs: Sequence[Run], rows: list[TaskRow], budget: int) -> tuple[list[TaskTrials], str]:
    by_task: list[dict[tuple[str, str], list[tuple[UnitOutcome, int]]]] = []
    for run in runs:
        table: dict[tuple[str, str], list[tuple[UnitOutcome, int]]] = defaultdict(list)
        for i, unit in enumerate(run.unit_outcomes()):
            table[(unit.domain, unit.task_id)].append((unit, i))
        by_task.append(table)
    readers = [_record_reader(run) for run in runs]
    views: list[TaskTrials] = []
    used = 0
    changed = [r for r in rows if r.changed]
    # Regressions first: they are what a reviewer looks for.
    changed.sort(key=lambda r: (not any(c is not None and c.change == "regressed" for c in r.cells), r.domain, _num(r.task_id)))
    skipped = 0
    for row in changed:
        trials, omitted = [], 0
        for j, table in enumerate(by_task):
            units = sorted(table.get((row.domain, row.task_id), []), key=lambda u: u[0].trial)
            cell = row.cells[j]
            # The baseline and the runs that changed explain the change; unchanged candidates are skipped.
            relevant = j == 0 or len(runs) == 1 or (cell is not None and cell.change in ("improved", "regressed"))
            picked = _pick_trials(units) if relevant else []
            omitted += len(units) - len(picked)
            trials += [trial_view(readers[j](i)) for _, i in picked]
        view = TaskTrials(domain=row.domain, task_id=row.task_id, anchor=row.anchor, trials=trials, omitted_trials=omitted)
        size = len(view.model_dump_json())
        if used + size > budget:
            skipped += 1
            continue
        used += size
        row.embedded = True
        views.append(view)
    what = "changed" if len(runs) > 1 else "failing"
    note = (
        f"Per-trial views are embedded for the {what} tasks only ({len(views)} of {len(changed)}), at most "
        f"{TRIALS_PER_RUN} trials per run (the first failed and the first passed)"
        + (" of the baseline and of each run whose outcome on the task changed" if len(runs) > 1 else "")
        + ", with long messages and tool results trimmed; the full trials are in each run's simulations.jsonl."
    )
    if skipped:
        note += f" {skipped} {what} task(s) are listed without trials to keep the page small."
    return views, note


# --------------------------------------------------------------------------- run accounting


def _accounting(runs: Sequence[Run], summaries: Sequence[RunSummary], durations: Sequence[list[float]],
                data: ReportData) -> None:
    for run, s, trial_s in zip(runs, summaries, durations, strict=True):
        rid = run.manifest.run_id
        data.faults += [FaultRow(run_id=rid, strategy=s.strategy, **f.model_dump()) for f in s.faults]
        if s.guard_verdicts or s.guard_retry_exhausted:
            data.verdicts.append(
                VerdictRow(run_id=rid, strategy=s.strategy, counts=dict(s.guard_verdicts),
                           retry_exhausted=s.guard_retry_exhausted)
            )
        n = len(trial_s)
        for c in s.costs:
            data.costs.append(
                CostRow(run_id=rid, role=c.role, cost=c.cost, prompt_tokens=c.prompt_tokens,
                        completion_tokens=c.completion_tokens, calls=c.calls, calls_per_trial=c.calls / n if n else None)
            )
        llm_calls = sum(c.calls for c in s.costs)
        data.timings.append(
            RunTiming(run_id=rid, wall_time_s=s.wall_time_s, trials=n,
                      mean_trial_s=sum(trial_s) / n if n else None,
                      llm_calls_per_trial=llm_calls / n if n else None)
        )


def _noting_durations(
    tallies: Iterator[tuple[UnitOutcome, RecordTally]], out: list[float]
) -> Iterator[tuple[UnitOutcome, RecordTally]]:
    """The tallies as they are, noting each evaluated trial's duration in ``out`` on the way."""
    for unit, tally in tallies:
        if not unit.error:
            out.append(tally.duration_s)
        yield unit, tally


def _checks(runs: Sequence[Run], opts: ReportOptions, data: ReportData) -> None:
    if opts.floors is None and opts.gate_baseline is None:
        return
    base = opts.gate_baseline
    for run in runs:
        baseline = base if base is not None and base.manifest.run_id != run.manifest.run_id else None
        if baseline is None and opts.floors is None:
            continue
        try:
            gate = run_gate(run, baseline=baseline, floors=opts.floors, metric=opts.gate_metric if baseline else None,
                            margin=opts.gate_margin, mode=opts.gate_mode, n_resamples=opts.n_resamples,
                            confidence=opts.confidence, seed=opts.seed)
        except (CompareError, ValueError) as exc:
            raise ReportError(str(exc)) from None
        data.checks += [CheckRow(run_id=run.manifest.run_id, name=c.name, kind=c.kind, passed=c.passed,
                                 message=c.message) for c in gate.checks]
    data.checks_passed = all(c.passed for c in data.checks) if data.checks else None


# --------------------------------------------------------------------------- entry point


def build_report(runs: Sequence[Run], opts: ReportOptions | None = None, *, title: str | None = None) -> ReportData:
    """Compute everything a report shows. The first run is the baseline.

    Raises :class:`ReportError` (one line) when the runs cannot be reported together.
    """
    opts = opts or ReportOptions()
    if not runs:
        raise ReportError("report needs at least one run")
    _check_unique_ids(runs)
    summaries, durations = [], []
    for run in runs:  # streamed, one tally at a time: memory does not grow with the runs
        trial_s: list[float] = []
        summaries.append(summarize(run, _noting_durations(iter_tallies(run), trial_s)))
        durations.append(trial_s)
    headers = [_header(r, s, "baseline" if i == 0 else "candidate") for i, (r, s) in enumerate(zip(runs, summaries))]
    run_ids = [h.run_id for h in headers]
    simulated = any(h.simulated for h in headers)
    data = ReportData(
        title=title or ("tauguard report: " + " vs ".join(run_ids)),
        generated_at=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        tauguard_version=__version__,
        simulated=simulated,
        simulation_note=SIMULATION_NOTE if simulated else None,
        partial=any(h.partial for h in headers),
        runs=headers,
        seed=opts.seed,
        n_resamples=opts.n_resamples,
        confidence=opts.confidence,
    )
    outcomes = [run_task_outcomes(r) for r in runs]
    if len(runs) > 1:
        data.compare_json, data.deltas, notes = _comparisons(runs, opts)
        if data.compare_json is not None:
            comps = data.compare_json["comparisons"]
            # Unpaired runs (tauguard.analysis.pairing): one warning per manifest field that differs.
            notes = [
                "warning: " + PairingDifference(**d).warning(c["baseline"]["run_id"], c["candidate"]["run_id"])
                for c in comps for d in c.get("pairing", [])
            ] + [n for c in comps for n in c["notes"]] + notes
            data.primary_k = data.compare_json["comparisons"][0]["primary_k"]
        data.compare_notes = notes
    data.pass_panels = _panels(run_ids, outcomes, "pass^", "pass^k", opts)
    # process_valid^k (tauguard's extension) from the outcome index: runs whose trials carry a process report.
    pv_runs = [(rid, outs) for rid, outs in zip(run_ids, outcomes, strict=True) if any(o.process_trials for o in outs)]
    if pv_runs:
        data.pv_panels = _panels([r for r, _ in pv_runs], [o for _, o in pv_runs], "process_valid^",
                                 "process_valid^k", opts)
        data.pv_note = metric_def("process_valid^").note or ""
        recorded = {r.manifest.run_id: recorded_judges(r.manifest.versions, r.manifest.earlier_versions) for r in runs}
        data.process_judge = scored_by_note([(rid, recorded[rid]) for rid, _ in pv_runs])
    if any(o.is_attacked for outs in outcomes for o in outs):
        data.asr_panels = _panels(run_ids, outcomes, "asr@", "ASR@k", opts)
    data.tactics = _tactic_rows(summaries)
    data.task_rows = _task_rows(runs, outcomes, data.compare_json)
    data.trial_views, data.trial_note = _trial_views(runs, data.task_rows, opts.trial_budget_bytes)
    _accounting(runs, summaries, durations, data)
    _checks(runs, opts, data)
    _guards(runs, opts, data)
    _axes(runs, opts, data)
    return data


def _axes(runs: Sequence[Run], opts: ReportOptions, data: ReportData) -> None:
    """Both axes of every candidate against the baseline: records read with their conversations."""
    if len(runs) < 2:
        return
    from tauguard.analysis.axes import compare_axes
    from tauguard.analysis.compare_model import CompareError
    from tauguard.faults.violations import violated_clauses
    from tauguard.runs.store import load_run

    full = [r if r.records and r.units is None else load_run(r.path, conversations=True) for r in runs]
    try:
        comps = compare_axes(full, violated_clauses, primary_k=opts.primary_k, confidence=opts.confidence,
                             seed=opts.seed, n_resamples=opts.n_resamples)
    except CompareError as exc:
        data.compare_notes.append(f"two axes not computed: {exc}")
        return
    data.axes = [{**c.model_dump(mode="json"), "headline": c.headline()} for c in comps]
    if data.compare_json is not None:  # the page embeds what `compare --format json` prints
        data.compare_json["axes"] = [c.model_dump(mode="json") for c in comps]


def _guards(runs: Sequence[Run], opts: ReportOptions, data: ReportData) -> None:
    from tauguard.report.guards import false_holds, guard_pairs, guard_stats

    if len(runs) > 2:
        stats = {"primary_k": opts.primary_k, "n_resamples": opts.n_resamples, "confidence": opts.confidence, "seed": opts.seed}
        data.guard_pairs, data.guard_pair_notes = guard_pairs(runs, stats)
    data.guard_stats = guard_stats(runs)
    if opts.audits:
        if opts.labels is None:
            from tauguard.benchmark.real_writes import load_labels

            opts.labels = load_labels()
        try:
            data.false_holds = false_holds(opts.audits, runs, opts.labels, opts.confidence)
        except ValueError as exc:  # AuditInputError: an audit of a run the report was not given
            raise ReportError(str(exc)) from None
