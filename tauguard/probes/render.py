"""Rendering probe counts and probe scores as table, markdown or JSON."""

from __future__ import annotations

import json
from collections import Counter
from typing import Literal

from tauguard.tables import fit_table

from tauguard.probes.evaluate import ProbeReport
from tauguard.probes.model import LABELS, Probe
from tauguard.runs.records import SIMULATION_NOTE

Format = Literal["table", "markdown", "json"]

SIM_NOTE = (
    f"{SIMULATION_NOTE} Probes are decision states built from tau2's gold plans and the sim agent's "
    "catalogued faults; scores describe a gate on these simulated states, not real LLM agents."
)

RECORDED_NOTE = (
    "Probes from recorded conversations (probes build --from-run): a write of the real-write benchmark "
    "takes its human label (label_source benchmark:...); any other write's label is its outcome class "
    "(label_source outcome:...), a proxy, not a judgement of the write."
)


def _note(report: ProbeReport) -> str:
    recorded = [o for o in report.outcomes if o.label_source]
    if not recorded:
        return SIM_NOTE
    return RECORDED_NOTE if len(recorded) == len(report.outcomes) else f"{SIM_NOTE} {RECORDED_NOTE}"


def _tablefmt(fmt: Format) -> str:
    return "github" if fmt == "markdown" else "simple"


def probe_counts(probes: list[Probe]) -> list[dict[str, object]]:
    """Counts per domain and label, plus per fault class."""
    rows: list[dict[str, object]] = []
    by_domain: dict[str, Counter[str]] = {}
    for probe in probes:
        by_domain.setdefault(probe.domain, Counter())[probe.label] += 1
    for domain, counts in sorted(by_domain.items()):
        per_label: dict[str, object] = {lab: counts.get(lab, 0) for lab in LABELS}
        rows.append({"domain": domain, **per_label, "total": sum(counts.values())})
    return rows


def render_counts(probes: list[Probe], fmt: Format) -> str:
    """The label counts of a probe set."""
    rows = probe_counts(probes)
    if probes and all(p.label_source for p in probes):  # recorded writes: no faults, no gold plan
        sources = Counter((p.label_source or "").split(" ")[0].split("+")[0] for p in probes)
        if fmt == "json":
            return json.dumps({"counts": rows, "by_label_source": dict(sorted(sources.items()))}, indent=2)
        return "\n".join([fit_table(rows, headers="keys", tablefmt=_tablefmt(fmt)), "",
                          "by label source: " + ", ".join(f"{k} {v}" for k, v in sorted(sources.items()))])
    classes = Counter(p.fault_class or "gold" for p in probes)
    # gold writes labelled refuse: the documented gold/policy conflicts
    conflicts = sum(1 for p in probes if p.fault_id is None and p.label == "refuse")
    if fmt == "json":
        return json.dumps({"counts": rows, "by_fault_class": dict(sorted(classes.items())), "gold_conflicts_refuse": conflicts}, indent=2)
    lines = [fit_table(rows, headers="keys", tablefmt=_tablefmt(fmt)), ""]
    lines.append("by fault class: " + ", ".join(f"{k} {v}" for k, v in sorted(classes.items())))
    lines.append(f"gold writes labelled refuse (gold/policy conflicts, tauguard/domains/gold_conflicts.toml): {conflicts}")
    return "\n".join(lines)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def render_report(report: ProbeReport, fmt: Format) -> str:
    """Confusion matrix, per-class scores, macro-F1, false-block rate, replay failures."""
    if fmt == "json":
        return json.dumps({"note": _note(report), **report.model_dump(mode="json")}, indent=2)
    md = fmt == "markdown"
    opts = " ".join(f"{k}={v}" for k, v in report.options.items())
    title = f"strategy {report.strategy}{(' (' + opts + ')') if opts else ''}: {report.probes} probes"
    note = _note(report)
    lines = [f"### {title}" if md else title, "", f"> {note}" if md else note, ""]
    confusion = [
        {"gold \\ predicted": gold, **{p: report.confusion[gold][p] for p in LABELS}} for gold in LABELS
    ]
    lines += [fit_table(confusion, headers="keys", tablefmt=_tablefmt(fmt)), ""]
    scores = [
        {
            "label": lab,
            "precision": _pct(s.precision),
            "recall": _pct(s.recall),
            "F1": _pct(s.f1),
            "support": s.support,
            "predicted": s.predicted,
        }
        for lab, s in report.per_class.items()
    ]
    lines += [fit_table(scores, headers="keys", tablefmt=_tablefmt(fmt), disable_numparse=True), ""]
    by_class = [
        {"fault class": k, "probes": int(v["n"]), "correct": int(v["correct"]), "rate": _pct(v["rate"])}
        for k, v in report.by_fault_class.items()
    ]
    lines += [fit_table(by_class, headers="keys", tablefmt=_tablefmt(fmt), disable_numparse=True), ""]
    summary = [
        ("macro-F1", _pct(report.macro_f1)),
        ("accuracy", _pct(report.accuracy)),
        ("false-block rate (allow probes given verify/refuse)", _pct(report.false_block_rate)),
        ("probes whose prefix did not reproduce", str(report.replay_failures)),
        ("after the reads a VERIFY asks for: refuse recall", _pct(report.refuse_recall_after_reads)),
        ("after the reads a VERIFY asks for: false-block rate", _pct(report.false_block_rate_after_reads)),
    ]
    lines += [f"- {k}: {v}" if md else f"{k}: {v}" for k, v in summary]
    return "\n".join(lines)
