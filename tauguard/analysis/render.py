"""Rendering of compare and check results: table, markdown, csv, json, JUnit XML.

Every renderer states when the runs are simulations, so no output of a sim run can be read as
a finding about real LLMs.
"""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET
from typing import Any, Literal

from tauguard.tables import fit_table

from tauguard.analysis.exact import flip_rows, flip_summary
from tauguard.analysis.gate import GateReport
from tauguard.analysis.compare_model import (
    CompareReport,
    Comparison,
    KComparison,
    McNemarSummary,
    MetricComparison,
    RunRef,
)
from tauguard.analysis.metrics import metric_def

TextFormat = Literal["table", "markdown"]


def fmt_num(value: float | None, signed: bool = False) -> str:
    """Three decimals, '-' for a missing value."""
    if value is None:
        return "-"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def fmt_p(value: float | None) -> str:
    """A p-value with four decimals; tiny ones as '<0.0001'."""
    if value is None:
        return "-"
    return "<0.0001" if value < 0.0001 else f"{value:.4f}"


def _tablefmt(fmt: TextFormat) -> str:
    return "github" if fmt == "markdown" else "simple"


def _simulation_line(note: str | None, fmt: TextFormat) -> list[str]:
    if note is None:
        return []
    return [f"> **{note}**", ""] if fmt == "markdown" else [note, ""]


def _run_label(ref: RunRef) -> str:
    return f"{ref.run_id} (strategy {ref.strategy}, agent {ref.agent_llm}, user {ref.user_llm})"


# --------------------------------------------------------------------------- compare


def verdict_label(r: KComparison) -> str:
    """The verdict, with the smallest detectable |Δ| beside "no detectable difference".

    "No detectable difference" is not evidence of equivalence: saying what the design could
    have detected (80 % power) keeps a thin comparison from reading as "no effect".
    """
    label: str = r.verdict
    if r.verdict == "no detectable difference":
        label += f"; this design could detect |Δ| ≥ {r.mde:.2f}"
    # Secondary ks are each tested at alpha too (Holm-adjusted only among themselves), so a
    # verdict there is exploratory: it backs no claim on its own.
    return f"{label} (exploratory)" if r.exploratory else label


def _k_rows(mc: MetricComparison) -> list[dict[str, Any]]:
    pct = f"{mc.results[0].confidence:.0%} CI" if mc.results else "CI"
    rows = []
    for r in mc.results:
        rows.append(
            {
                "k": f"{r.k}*" if r.primary else str(r.k),
                "baseline": fmt_num(r.baseline),
                "candidate": fmt_num(r.candidate),
                "Δ": fmt_num(r.delta, signed=True),
                pct: f"[{fmt_num(r.ci_low, True)}, {fmt_num(r.ci_high, True)}]",
                "p": fmt_p(r.p_permutation),
                "p (Holm)": "primary" if r.primary else fmt_p(r.p_holm),
                "tasks": r.tasks,
                "improved": r.improved,
                "regressed": r.regressed,
                "unchanged": r.unchanged,
                "verdict": verdict_label(r),
            }
        )
    return rows


def _mcnemar_line(mc: McNemarSummary) -> str:
    per_domain = ", ".join(f"{d.domain} b={d.b} c={d.c}" for d in mc.per_domain)
    left_out = f"; {mc.left_out_unequal_n} left out (different n in the two runs)" if mc.left_out_unequal_n else ""
    return (
        f"McNemar on '{mc.event}' ({mc.tasks} tasks with the same n >= {mc.k} in both runs{left_out}): "
        f"b={mc.b} (only baseline), c={mc.c} (only candidate), "
        f"p={fmt_p(mc.p_exact)}, mid-p={fmt_p(mc.p_midp)}"
        + (f"; per domain: {per_domain}" if len(mc.per_domain) > 1 else "")
    )


def _metric_section(mc: MetricComparison, fmt: TextFormat, comp: Comparison) -> list[str]:
    mdef = metric_def(mc.metric)
    direction = "higher is better" if mdef.higher_is_better else "lower is better"
    title = (
        f"{mdef.kind}k ({mdef.description}; {direction}; Δ = candidate - baseline; * = primary k "
        f"{mc.primary_k}, other ks exploratory):"
    )
    lines = [
        title,
        *([f"note: {mdef.note}"] if mdef.note else []),
        "",
        fit_table(_k_rows(mc), headers="keys", tablefmt=_tablefmt(fmt), disable_numparse=True),
        "",
        _mcnemar_line(mc.mcnemar),
    ]
    if mc.metric.startswith("process_valid"):
        from tauguard.process.score import scored_by_note

        runs = [(f"baseline {comp.baseline.run_id}", comp.baseline.process_judges),
                (f"candidate {comp.candidate.run_id}", comp.candidate.process_judges)]
        lines.append(f"process rubric: {scored_by_note(runs)}")
    return lines


def _comparison_text(comp: Comparison, fmt: TextFormat, tasks: bool) -> list[str]:
    md = fmt == "markdown"
    head = f"{comp.candidate.run_id} vs baseline {comp.baseline.run_id}"
    lines = [f"### {head}" if md else f"== {head} ==", ""]
    lines.append(f"baseline:  {_run_label(comp.baseline)}")
    lines.append(f"candidate: {_run_label(comp.candidate)}")
    if md:
        lines = lines[:2] + [f"- {line}" for line in lines[2:]]
    scope = f"{comp.common_tasks} tasks compared in {', '.join(comp.domains)}"
    if comp.subset != "all":
        scope += f" ({comp.subset} tasks only)"
    lines.append(("- " if md else "") + scope)
    for warning in comp.pairing_warnings():
        lines.append(("- " if md else "") + f"warning: {warning}")
    for note in comp.notes:
        lines.append(("- " if md else "") + f"note: {note}")
    lines += _flip_section(comp, fmt)
    for mc in comp.metric_comparisons():
        lines.append("")
        lines += _metric_section(mc, fmt, comp)
    if tasks:
        kind = comp.metric
        lines.append("")
        lines.append(f"per-task {kind}{comp.primary_k} (largest changes first):")
        lines.append("")
        ordered = sorted(
            comp.tasks, key=lambda t: (-(abs(t.delta) if t.delta is not None else -1), t.domain, t.task_id)
        )
        task_rows = [
            {
                "domain": t.domain,
                "task": t.task_id,
                "baseline c/n": f"{t.baseline_successes}/{t.baseline_trials}",
                "candidate c/n": f"{t.candidate_successes}/{t.candidate_trials}",
                f"baseline {kind}{t.k}": fmt_num(t.baseline),
                f"candidate {kind}{t.k}": fmt_num(t.candidate),
                "Δ": fmt_num(t.delta, signed=True),
                "change": t.change or "excluded (n < k)",
            }
            for t in ordered
        ]
        lines.append(fit_table(task_rows, headers="keys", tablefmt=_tablefmt(fmt), disable_numparse=True))
    lines.append("")
    return lines


def _flip_section(comp: Comparison, fmt: TextFormat) -> list[str]:
    """The exact, outcome-by-outcome comparison of deterministic runs (what `check` gates on), or why there is none."""
    md = fmt == "markdown"
    if comp.flips is None:
        if comp.exact_reason is None:
            return []
        return [("- " if md else "") + f"exact comparison: not available, because {comp.exact_reason}; statistics only"]
    lines = [("- " if md else "") + f"{flip_summary(comp.flips)}, because {comp.exact_reason}"]
    if comp.flips.flips:
        lines += ["", "flipped (task, trial) outcomes:", ""]
        lines.append(fit_table(flip_rows(comp.flips), headers="keys", tablefmt=_tablefmt(fmt), disable_numparse=True))
    return lines


def render_compare_text(report: CompareReport, fmt: TextFormat = "table", tasks: bool = False) -> str:
    """The compare report as a plain-text table or markdown."""
    lines = _simulation_line(report.simulation_note, fmt)
    for run_id, left in report.left_out.items():
        lines.append(("> " if fmt == "markdown" else "") + f"{run_id}: {left.line()}")
    for comp in report.comparisons:
        lines += _comparison_text(comp, fmt, tasks)
    lines.append(
        f"p: two-sided sign-flip permutation test on per-task differences; primary k unadjusted, other ks "
        f"Holm-adjusted and their verdicts exploratory ({report.n_resamples} Monte Carlo patterns beyond 16 "
        f"non-zero differences, seed {report.seed}). CI: adjusted Wald interval of the mean per-task difference "
        f"(Bonett-Price, never zero-width). 'better'/'worse' only when the CI excludes 0 and p < 1 - confidence; "
        f"'could detect |Δ| ≥ x': 80 % power at this design."
    )
    return "\n".join(lines)


def compare_json_obj(report: CompareReport, tasks: bool = False) -> dict[str, Any]:
    """The compare report as a JSON-ready dict (per-task rows only when asked for)."""
    data = report.model_dump(mode="json")
    if not tasks:
        for comp in data["comparisons"]:
            comp.pop("tasks", None)
    return data


def render_compare_json(report: CompareReport, tasks: bool = False) -> str:
    """The compare report as JSON."""
    return json.dumps(compare_json_obj(report, tasks), indent=2)


def render_compare_csv(report: CompareReport, tasks: bool = False) -> str:
    """One CSV row per (comparison, metric, k), or per (comparison, task) with ``tasks``."""
    rows: list[dict[str, Any]] = []
    for comp in report.comparisons:
        common = {
            "baseline_run": comp.baseline.run_id,
            "candidate_run": comp.candidate.run_id,
            "simulated": comp.simulated,
        }
        if tasks:
            rows += [{**common, **t.model_dump()} for t in comp.tasks]
            continue
        for mc in comp.metric_comparisons():
            for r in mc.results:
                rows.append(
                    {
                        **common,
                        **r.model_dump(exclude={"confidence"}),
                        "confidence": r.confidence,
                        "paired": comp.paired,
                        "seed": report.seed,
                        "n_resamples": report.n_resamples,
                        "mcnemar_b": mc.mcnemar.b,
                        "mcnemar_c": mc.mcnemar.c,
                        "mcnemar_p_exact": mc.mcnemar.p_exact,
                        "mcnemar_p_midp": mc.mcnemar.p_midp,
                        "mcnemar_left_out_unequal_n": mc.mcnemar.left_out_unequal_n,
                        # e.g. process_valid^k: "tauguard's extension", in every output
                        "note": metric_def(mc.metric).note or "",
                    }
                )
    buf = io.StringIO()
    if rows:
        writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return buf.getvalue()


# --------------------------------------------------------------------------- check


def render_gate_text(report: GateReport, fmt: TextFormat = "table") -> str:
    """Human summary of a gate: one line per check and the verdict."""
    md = fmt == "markdown"
    lines = ["### tauguard check", ""] if md else []
    lines += _simulation_line(report.simulation_note, fmt)
    lines.append(("- " if md else "") + f"run: {_run_label(report.run)}")
    if report.baseline is not None:
        lines.append(("- " if md else "") + f"baseline: {_run_label(report.baseline)}")
    if report.gate is not None:
        lines.append(("- " if md else "") + f"gate: {report.gate} ({gate_form_label(report.gate)}), because {report.gate_reason}")
    if report.design is not None:
        d = report.design
        lines.append(
            ("- " if md else "") + f"design: {d.tasks} tasks × {d.trials} trials passes an unchanged strategy at margin "
            f"{d.margin:g} with probability {d.pass_probability:.2f} (simulated, {d.simulations} pairs; ≥ {d.target:.0%} needed)"
        )
    for note in report.notes:
        lines.append(("- " if md else "") + f"note: {note}")
    lines.append("")
    if md:
        rows = [
            {"result": "PASS" if c.passed else "**FAIL**", "check": c.name, "detail": c.message} for c in report.checks
        ]
        lines.append(fit_table(rows, headers="keys", tablefmt="github", disable_numparse=True))
    else:
        lines += [f"{'PASS' if c.passed else 'FAIL'}  {c.name}: {c.message}" for c in report.checks]
    if report.flips is not None and report.flips.flips:
        lines += ["", "flipped (task, trial) outcomes:" if not md else "**flipped (task, trial) outcomes**", ""]
        lines.append(fit_table(flip_rows(report.flips), headers="keys", tablefmt=_tablefmt(fmt), disable_numparse=True))
    lines.append("")
    failed = len(report.failed)
    verdict = (
        f"PASSED ({len(report.checks)} check(s))"
        if report.passed
        else f"FAILED ({failed} of {len(report.checks)} check(s) failed)"
    )
    lines.append(f"**result: {verdict}**" if md else f"result: {verdict}")
    return "\n".join(lines) + "\n"


def gate_form_label(form: str) -> str:
    """What each form of baseline gate decides on, in words."""
    return {
        "exact": "outcome by outcome, no interval",
        "statistical": "adjusted Wald interval of the mean per-task Δ",
    }.get(form, form)


def render_gate_json(report: GateReport) -> str:
    """The gate report as JSON."""
    return report.model_dump_json(indent=2)


def render_gate_junit(report: GateReport) -> str:
    """JUnit XML: one test suite, one test case per check, failures for failed checks."""
    tests, failures = str(len(report.checks)), str(len(report.failed))
    root = ET.Element("testsuites", name="tauguard check", tests=tests, failures=failures, errors="0", time="0")
    suite = ET.SubElement(
        root,
        "testsuite",
        name=f"tauguard check {report.run.run_id}",
        tests=tests,
        failures=failures,
        errors="0",
        skipped="0",
        time="0",
    )
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="run", value=report.run.run_id)
    if report.baseline is not None:
        ET.SubElement(props, "property", name="baseline", value=report.baseline.run_id)
    ET.SubElement(props, "property", name="simulated", value=str(report.simulated).lower())
    if report.gate is not None:
        ET.SubElement(props, "property", name="gate", value=f"{report.gate}: {report.gate_reason}")
    for check in report.checks:
        # the command's name, not the module's: CI dashboards group test cases by classname
        case = ET.SubElement(suite, "testcase", classname=f"tauguard.check.{check.kind}", name=check.name, time="0")
        if not check.passed:
            failure = ET.SubElement(case, "failure", message=check.message, type=check.kind)
            failure.text = check.message
        out = ET.SubElement(case, "system-out")
        out.text = check.message
    if report.simulation_note:
        ET.SubElement(suite, "system-out").text = report.simulation_note
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
