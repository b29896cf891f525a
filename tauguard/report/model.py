"""The data of an HTML report: everything the page shows, computed once, rendered by a template.

The comparison part is kept as the JSON object `tauguard compare --format json` prints (a plain
dict), not as compare's pydantic models, so the report depends on that stable output shape only.

Pure library: imports neither tau2 nor litellm.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from tauguard.report.guards import FalseHoldSection, GuardPairRow, GuardStatsRow


class RunHeader(BaseModel):
    """One run as the report's header lists it."""

    run_id: str
    path: str
    role: str  # "baseline" or "candidate"
    strategy: str
    strategy_options: dict[str, Any] = Field(default_factory=dict)
    agent_llm: str
    user_llm: str
    guard_llm: str | None = None
    seed: int
    domains: list[str]
    split: str
    trials: int
    fault_profile: str | None = None
    # The sim agent's reaction to guards ("oracle" = from the gold plan: an upper bound) and uptake.
    sim_feedback: str | None = None
    uptake: float | None = None
    versions: dict[str, str] = Field(default_factory=dict)
    git_commit: str | None = None
    status: str
    created_at: str
    planned_units: int
    recorded_units: int
    infra_errors: int
    skipped_lines: int = 0
    simulated: bool
    source: str = "run"  # "imported": recorded τ² conversations of real agents
    left_out: str | None = None  # an imported run: what the import left out of the file, in one line
    partial: bool
    partial_reason: str | None = None


class CurvePoint(BaseModel):
    """A k-metric of one run at one k, with its adjusted Wald CI over tasks."""

    k: int
    value: float | None
    low: float | None = None
    high: float | None = None
    tasks: int = 0


class Curve(BaseModel):
    """One run's metric against k on one slice."""

    run_id: str
    points: list[CurvePoint]


class CurvePanel(BaseModel):
    """A plot of a k-metric against k for every run, on one slice of the tasks."""

    key: str  # html id
    title: str
    metric: str  # "pass^k", "ASR@k", "process_valid^k"
    curves: list[Curve]
    svg: str = ""


class DeltaRow(BaseModel):
    """Δ of one candidate against the baseline at one k, on one domain slice (from compare's JSON)."""

    candidate: str
    slice: str  # "all domains" or a domain
    metric: str  # e.g. "pass^4"
    k: int
    primary: bool
    tasks: int
    baseline: float
    candidate_value: float
    delta: float
    ci_low: float
    ci_high: float
    p_permutation: float
    p_holm: float
    verdict: str
    note: str = ""  # the metric's label, e.g. process_valid^k: "tauguard's extension ..."


class TaskCell(BaseModel):
    """One task in one run: successes of evaluated trials, and its change against the baseline."""

    successes: int = 0
    trials: int = 0
    infra_errors: int = 0
    change: str | None = None  # improved / regressed / unchanged (candidates only)


class TaskRow(BaseModel):
    """One task across runs."""

    domain: str
    task_id: str
    anchor: str  # html id of its per-trial view
    policy_violation: bool
    cells: list[TaskCell | None]  # per run; None when the run has no record of the task
    changed: bool
    embedded: bool = False  # per-trial view in the page


class GuardNote(BaseModel):
    """A guard event as shown inline in a trial's conversation."""

    hook: str
    verdict: str | None = None
    rule_id: str | None = None
    clause: str | None = None
    reason: str = ""
    remediation: str = ""
    guidance: str | None = None
    tool: str | None = None
    arguments: str | None = None
    fault_id: str | None = None


class ReportMessage(BaseModel):
    """One message of a trial's conversation, with the guard events around it."""

    role: str  # assistant / user / tool
    text: str | None = None
    tool_calls: list[str] = Field(default_factory=list)  # "name(args)"
    error: bool = False
    before: list[GuardNote] = Field(default_factory=list)
    after: list[GuardNote] = Field(default_factory=list)


class TrialView(BaseModel):
    """One trial of one run, trimmed for the page."""

    run_id: str
    trial: int
    success: bool | None
    reward: float | None
    termination: str | None
    error: str | None = None
    faults: list[str] = Field(default_factory=list)
    steps: list[ReportMessage] = Field(default_factory=list)
    trimmed: bool = False


class TaskTrials(BaseModel):
    """The per-trial views of one changed task."""

    domain: str
    task_id: str
    anchor: str
    trials: list[TrialView]
    omitted_trials: int = 0


class FaultRow(BaseModel):
    """Fault class counts of one run."""

    run_id: str
    strategy: str
    fault_class: str
    scheduled: int
    injected: int
    detected: int  # held by a guard at least once
    prevented: int | None  # never reached the environment (None: records predate the count)
    failed_trials: int


class VerdictRow(BaseModel):
    """Guard verdict counts on WRITE calls of one run."""

    run_id: str
    strategy: str
    counts: dict[str, int]
    retry_exhausted: int


class CostRow(BaseModel):
    """Usage of one role in one run."""

    run_id: str
    role: str
    cost: float | None
    prompt_tokens: int
    completion_tokens: int
    calls: int
    calls_per_trial: float | None


class RunTiming(BaseModel):
    """Wall time and trial durations of one run."""

    run_id: str
    wall_time_s: float
    trials: int
    mean_trial_s: float | None
    llm_calls_per_trial: float | None


class TacticRow(BaseModel):
    """Attack success per tactic in one run (only when records name tactics)."""

    run_id: str
    tactic: str
    attacked: int
    succeeded: int


class CheckRow(BaseModel):
    """One `tauguard check` result for one run."""

    run_id: str
    name: str
    kind: str
    passed: bool
    message: str


class Figure(BaseModel):
    """A rendered plot."""

    key: str
    title: str
    svg: str


class ReportData(BaseModel):
    """Everything one report page shows."""

    title: str
    generated_at: str
    tauguard_version: str
    simulated: bool
    simulation_note: str | None
    partial: bool
    runs: list[RunHeader]
    seed: int
    n_resamples: int
    confidence: float
    primary_k: int | None = None
    compare_json: dict[str, Any] | None = None  # `tauguard compare --format json` output
    compare_notes: list[str] = Field(default_factory=list)
    process_judge: str = ""  # which dialogue judge scored the process checks (tauguard.process.judge_note)
    pass_panels: list[CurvePanel] = Field(default_factory=list)
    pv_panels: list[CurvePanel] = Field(default_factory=list)  # process-valid pass^k, when present
    pv_note: str = ""  # the metric's note: process_valid^k is tauguard's extension, not PolicyGuide's
    asr_panels: list[CurvePanel] = Field(default_factory=list)
    deltas: list[DeltaRow] = Field(default_factory=list)
    forest: Figure | None = None
    task_rows: list[TaskRow] = Field(default_factory=list)
    trial_views: list[TaskTrials] = Field(default_factory=list)
    trial_note: str = ""
    faults: list[FaultRow] = Field(default_factory=list)
    faults_figure: Figure | None = None
    verdicts: list[VerdictRow] = Field(default_factory=list)
    verdicts_figure: Figure | None = None
    tactics: list[TacticRow] = Field(default_factory=list)
    tactics_figure: Figure | None = None
    costs: list[CostRow] = Field(default_factory=list)
    timings: list[RunTiming] = Field(default_factory=list)
    checks: list[CheckRow] = Field(default_factory=list)
    checks_passed: bool | None = None
    # Guard sections (tauguard.report.guards): candidate against candidate, latency and errors,
    # false holds on the labelled real-write benchmark (only when audits are given).
    guard_pairs: list[GuardPairRow] = Field(default_factory=list)
    guard_pair_notes: list[str] = Field(default_factory=list)
    guard_stats: list[GuardStatsRow] = Field(default_factory=list)
    false_holds: FalseHoldSection | None = None
    # The two axes per guard against the baseline (tauguard.analysis.axes.AxesComparison dumps).
    axes: list[dict[str, Any]] = Field(default_factory=list)
    axes_figure: Figure | None = None
