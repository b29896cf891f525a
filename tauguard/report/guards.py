"""The report's guard sections: guard against guard, guard latency and errors, false holds.

- **Guard against guard.** Every pair of candidate runs compared with
  :func:`tauguard.analysis.compare.compare_runs` (the same paired statistics as against the baseline),
  so two guards are compared on the tasks both ran, not only each against the baseline.
- **Guard latency and errors.** Per run, from the recorded guard events: decisions on WRITE
  calls, their latency (mean, median, 95th percentile of ``latency_s``), guard errors per
  decision and trials with a guard error per evaluated trial.
- **False holds on the real-write benchmark.** Given audits (``tauguard audit --output``
  JSON) of imported runs and labelled writes (:mod:`tauguard.benchmark.real_writes`): held
  complying writes / complying writes (passed and failed simulations apart) and held
  violating writes / violating writes, with Wilson intervals, and the false holds per rule.
  Audits are read as the plain JSON objects ``audit`` writes, so this module imports
  neither tau2 nor litellm.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Sequence
from itertools import combinations
from pathlib import Path
from statistics import mean, median
from typing import Any, NamedTuple

from pydantic import BaseModel, Field

from tauguard.runs.store import Run
from tauguard.errors import TauguardInputError

HELD = ("VERIFY", "REVISE", "BLOCK")
WAITING_ON_LABELS = (
    "No labelled write matched: no write of the audited runs' simulations is labelled in the real-write "
    "benchmark given (matched by simulation id, message and call, as `tauguard audit` matches them), so "
    "false holds cannot be measured; give --labels files that label these simulations' writes."
)


class GuardPairRow(BaseModel):
    """Candidate ``b`` against candidate ``a`` on one k-metric (Δ = b - a)."""

    a: str
    b: str
    a_strategy: str
    b_strategy: str
    metric: str
    k: int
    primary: bool
    tasks: int
    a_value: float
    b_value: float
    delta: float
    ci_low: float
    ci_high: float
    p_permutation: float
    verdict: str


class GuardStatsRow(BaseModel):
    """One run's guard decisions on WRITE calls: how long they took and how often the guard failed."""

    run_id: str
    strategy: str
    decisions: int
    held: int
    latency_mean_s: float | None
    latency_median_s: float | None
    latency_p95_s: float | None
    guard_errors: int
    guard_error_rate: float | None  # guard errors / decisions
    trials: int
    guard_error_trials: int
    guard_error_trial_rate: float | None  # trials with a guard error / evaluated trials


class Rate(BaseModel):
    """A proportion with its Wilson interval."""

    count: int
    total: int
    rate: float | None
    low: float | None
    high: float | None


class FalseHoldRow(BaseModel):
    """One strategy of one audited run against the labelled writes of its source file."""

    run_id: str
    strategy: str
    false_holds_passed: Rate  # held complying writes in passed simulations
    false_holds_failed: Rate  # held complying writes in failed simulations
    catches: Rate  # held violating writes
    ambiguous_held: int
    ambiguous: int
    by_rule: dict[str, int] = Field(default_factory=dict)  # rule id -> false holds


class FalseHoldSection(BaseModel):
    """False holds and catches on the labelled real-write benchmark."""

    rows: list[FalseHoldRow] = Field(default_factory=list)
    labelled: int = 0  # labelled writes of the audited files
    matched: int = 0  # of which the audits saw
    confidence: float = 0.95
    note: str | None = None


def _records(run: Run, conversations: bool = False) -> list[Any]:
    """The run's records: in memory, or read back when the report loaded outcomes only."""
    if run.records and (not conversations or all(r.simulation is not None for r in run.records[:1])):
        return list(run.records)
    from tauguard.runs.store import iter_records

    return iter_records(Path(run.path), conversations=conversations)[0]


# --------------------------------------------------------------------------- guard against guard


def guard_pairs(runs: Sequence[Run], stats: dict[str, Any]) -> tuple[list[GuardPairRow], list[str]]:
    """Every pair of candidate runs (the baseline excluded: it has its own section)."""
    from tauguard.analysis.compare import CompareError, compare_runs
    from tauguard.analysis.render import compare_json_obj

    rows: list[GuardPairRow] = []
    notes: list[str] = []
    for a, b in combinations(runs[1:], 2):
        try:
            obj = compare_json_obj(compare_runs([a, b], **stats))
        except CompareError as exc:
            notes.append(f"{b.manifest.run_id} vs {a.manifest.run_id} not compared: {exc}")
            continue
        comp = obj["comparisons"][0]
        for r in comp["results"]:
            rows.append(GuardPairRow(
                a=a.manifest.run_id, b=b.manifest.run_id, a_strategy=a.manifest.strategy, b_strategy=b.manifest.strategy,
                metric=r.get("metric") or f"pass^{r['k']}", k=r["k"], primary=r["primary"], tasks=r["tasks"],
                a_value=r["baseline"], b_value=r["candidate"], delta=r["delta"], ci_low=r["ci_low"],
                ci_high=r["ci_high"], p_permutation=r["p_permutation"], verdict=r["verdict"],
            ))
    return rows, notes


# --------------------------------------------------------------------------- latency and errors


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]  # nearest rank, no interpolation


class _Event(NamedTuple):
    """What the latency and error section reads of a guard event."""

    hook: str
    verdict: str | None
    latency_s: float
    guard_error: bool


def _record_events(run: Run) -> Iterator[tuple[bool, list[_Event]]]:
    """Per unit of the run (its latest record): whether it hit an infrastructure error, and its guard events.

    A report that loaded outcomes only reads each unit's record line back by its span, one at
    a time, decoding just these fields (msgspec, else pydantic): holding or fully parsing 10^5
    records took most of `report`'s time and memory at 10x.
    """
    if run.spans is None:
        for rec in run.records:
            yield rec.error is not None, [
                _Event(e.hook, None if e.verdict is None else e.verdict.value, e.latency_s, e.is_guard_error)
                for e in rec.guard_events
            ]
        return
    decode = _events_decoder()
    from tauguard.runs.records import RECORDS
    from tauguard.runs.run_files import MAX_RECORDS_BYTES, open_run_file

    path = Path(run.path) / RECORDS
    opened = open_run_file(path, MAX_RECORDS_BYTES)
    if opened is None:
        from tauguard.runs.store import RunLoadError

        raise RunLoadError(f"cannot read {path}: it is gone")
    with opened as fh:
        for start, end in run.spans:
            fh.seek(start)
            raw = fh.read(end - start)
            try:
                yield decode(raw)
            except ValueError:  # msgspec's DecodeError and pydantic's ValidationError are ValueErrors
                yield _parse_or_refuse(raw, path, start, end)


def _parse_or_refuse(raw: bytes, path: Path, start: int, end: int) -> tuple[bool, list[_Event]]:
    """A record line the fast decoder refused (e.g. a NaN latency, which JSON does not allow but
    the record parser accepts), parsed in full; one line when it is no record at all (the file
    was changed after its outcome index was written)."""
    from pydantic import ValidationError

    from tauguard.runs.records import TrialRecord
    from tauguard.runs.run_files import RunLoadError

    try:
        rec = TrialRecord.model_validate_json(raw.decode("utf-8", errors="replace"), context={"conversation": False})
    except (ValidationError, ValueError):
        raise RunLoadError(
            f"cannot read {path}: bytes {start}-{end} are not the record its outcome index names (the file was "
            f"changed after it was written); remove {path.parent}/outcomes-v1.jsonl and tallies-v1.jsonl to rebuild them"
        ) from None
    return rec.error is not None, [
        _Event(e.hook, None if e.verdict is None else e.verdict.value, e.latency_s, e.is_guard_error) for e in rec.guard_events
    ]


def _events_decoder() -> Any:
    """A function from a stored record line to ``(error, events)``, as :func:`_record_events` yields them."""
    try:
        import msgspec
    except ImportError:  # the same fields from the full record, slower
        from tauguard.runs.records import TrialRecord

        def parse(raw: bytes) -> tuple[bool, list[_Event]]:
            rec = TrialRecord.model_validate_json(raw.decode("utf-8", errors="replace"), context={"conversation": False})
            return rec.error is not None, [
                _Event(e.hook, None if e.verdict is None else e.verdict.value, e.latency_s, e.is_guard_error)
                for e in rec.guard_events
            ]

        return parse

    from tauguard.strategy_api.guard import GUARD_ERROR_RULE

    # defstruct, not class bodies: this module's annotations are strings msgspec cannot resolve here.
    event = msgspec.defstruct(
        "Event", [("hook", str), ("verdict", str | None, None), ("latency_s", float, 0.0), ("rule_id", str | None, None)]
    )
    record = msgspec.defstruct("Record", [("error", str | None, None), ("guard_events", list[event], [])])  # type: ignore[valid-type]
    decoder = msgspec.json.Decoder(record)

    def decode(raw: bytes) -> tuple[bool, list[_Event]]:
        rec: Any = decoder.decode(raw)  # a defstruct: its fields are unknown to mypy
        return rec.error is not None, [
            _Event(e.hook, e.verdict, e.latency_s, e.rule_id is not None and e.rule_id.startswith(GUARD_ERROR_RULE))
            for e in rec.guard_events
        ]

    return decode


def guard_stats(runs: Sequence[Run]) -> list[GuardStatsRow]:
    """Latency and error rates of every run whose records carry guard decisions on writes."""
    rows = []
    for run in runs:
        latency: list[float] = []
        held = errors = trials = error_trials = 0
        for error, events in _record_events(run):
            if error:
                continue
            trials += 1
            error_trials += any(e.guard_error for e in events)
            for e in events:
                if e.hook == "before_write" and e.verdict is not None:
                    latency.append(e.latency_s)
                    held += e.verdict in HELD
                    errors += e.guard_error
        if not latency:
            continue
        rows.append(GuardStatsRow(
            run_id=run.manifest.run_id, strategy=run.manifest.strategy, decisions=len(latency), held=held,
            latency_mean_s=mean(latency), latency_median_s=median(latency), latency_p95_s=_p95(latency),
            guard_errors=errors, guard_error_rate=errors / len(latency), trials=trials,
            guard_error_trials=error_trials, guard_error_trial_rate=error_trials / trials if trials else None,
        ))
    return rows


# --------------------------------------------------------------------------- false holds


class AuditInputError(TauguardInputError):
    """An audit file that cannot be used; one line for the user."""


def read_audit(path: Path) -> dict[str, Any]:
    """An audit report as ``tauguard audit --output`` writes it (a plain dict, checked for the keys used)."""
    try:
        from tauguard.safe_read import read_regular_file  # a FIFO would block, /dev/zero never end

        obj = json.loads(read_regular_file(path).decode("utf-8"))
    except TauguardInputError as exc:  # safe_read.InputFileError: a FIFO, a device, a folder, too large
        raise AuditInputError(f"--audit {exc.first_line()}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise AuditInputError(f"--audit {path}: not a readable audit report ({exc})") from None
    if not isinstance(obj, dict) or "run_id" not in obj or not isinstance(obj.get("strategies"), list):
        raise AuditInputError(f"--audit {path}: not an audit report (expected run_id and strategies; see tauguard audit --output)")
    return obj


def wilson(count: int, total: int, confidence: float = 0.95) -> Rate:
    """``count / total`` with its Wilson score interval (None when there is nothing to count)."""
    if total == 0:
        return Rate(count=count, total=total, rate=None, low=None, high=None)
    from scipy.stats import binomtest

    ci = binomtest(count, total).proportion_ci(confidence_level=confidence, method="wilson")
    return Rate(count=count, total=total, rate=count / total, low=float(ci.low), high=float(ci.high))


def false_holds(audits: Sequence[dict[str, Any]], runs: Sequence[Run], labels: Sequence[Any], confidence: float = 0.95) -> FalseHoldSection:
    """False holds and catches of every audited strategy on the labelled writes of its run.

    ``labels`` are :class:`tauguard.benchmark.real_writes.LabelledWrite` (only labelled ones count).
    A write is matched by content, as ``tauguard audit`` matches it
    (:func:`tauguard.benchmark.audit.index_labels`: the simulation's id, the message index, the
    call's position and tool), whatever the run's or the labels' file is called.
    """
    from tauguard.benchmark.audit import index_labels

    by_id = {r.manifest.run_id: r for r in runs}
    section = FalseHoldSection(confidence=confidence)
    labelled = [w for w in labels if w.label is not None]
    for audit in audits:
        run = by_id.get(audit["run_id"])
        if run is None:
            raise AuditInputError(f"the audit of run {audit['run_id']!r} needs that run among the report's runs")
        index, stray = index_labels(_records(run, conversations=True), labelled)
        section.labelled += len(index) + stray  # labels naming a simulation of the run
        section.matched += len(index)
        if not index:
            continue
        for strat in audit["strategies"]:
            held_keys: dict[tuple[str, int, int, str], str] = {}
            for w in strat.get("held_writes") or []:
                key = (str(w["task_id"]), int(w["trial"]), int(w["step"]), str(w.get("call_id") or ""))
                held_keys[key] = w.get("rule_id") or "?"
            counts: Counter[str] = Counter()
            by_rule: Counter[str] = Counter()
            for key, (label, passed) in index.items():
                bucket = {"complies": "c_pass" if passed else "c_fail", "violates": "v", "ambiguous": "a"}[label.label or "ambiguous"]
                counts[bucket] += 1
                if key in held_keys:
                    counts[bucket + "_held"] += 1
                    if label.label == "complies":
                        by_rule[held_keys[key]] += 1
            section.rows.append(FalseHoldRow(
                run_id=run.manifest.run_id, strategy=strat["strategy"],
                false_holds_passed=wilson(counts["c_pass_held"], counts["c_pass"], confidence),
                false_holds_failed=wilson(counts["c_fail_held"], counts["c_fail"], confidence),
                catches=wilson(counts["v_held"], counts["v"], confidence),
                ambiguous_held=counts["a_held"], ambiguous=counts["a"], by_rule=dict(by_rule.most_common()),
            ))
    if not section.rows:
        section.note = WAITING_ON_LABELS
    return section
