"""Text rendering of an audit report (table or markdown); JSON is the pydantic dump."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tabulate import tabulate

from tauguard.benchmark.audit import rate_text
from tauguard.trajectories.audit import OVER_BLOCKING, AuditReport, ClassStats, StrategyAudit

NO_LABELLED_WRITES = (
    "labelled real-write benchmark: no write of this run is labelled (matched by simulation id, message and call), "
    "so false holds and catches cannot be measured here: the proxies above are all this audit has; "
    "give --labels FILE with labels for these simulations"
)

#: What an audit answered by the scripted loopback server says about its guard verdicts.
PLUMBING = "loopback server: plumbing, not a measurement of any model"


#: How the two sets of figures are labelled wherever they are printed (audit, the bench).
DEFAULT_FIGURES = ("default figures: held = the guard's first decision; a VERIFY whose reads the agent "
                   "does not perform counts as a hold")
AFTER_READS_FIGURES = ("after reads (not assumed of a real agent): the decision once every read a VERIFY "
                       "names is performed and the write gated again")


def _rate(stats: ClassStats, after: bool = False) -> str:
    held, rate = (stats.held_after_reads, stats.hold_rate_after_reads) if after else (stats.held, stats.hold_rate)
    if held is None or rate is None:
        return f"-/{stats.writes}" if stats.writes == 0 else "-"
    return f"{held}/{stats.writes} ({rate:.1%})"


def _over_blocking_lines(strategies: Sequence[StrategyAudit]) -> list[str]:
    """One line per strategy that over-blocks (by the labels where complying writes are labelled,
    else by the gold-plan proxy), or whose proxy alone would have said so."""
    out: list[str] = []
    for s in strategies:
        if s.over_blocking and s.over_blocking_basis == "labels" and s.labels is not None:
            rules = list(s.labels.false_holds_by_rule)
            fh = s.labels.false_holds
            out.append(
                f"{s.strategy} holds {fh.held}/{fh.writes} labelled complying writes, more than {OVER_BLOCKING:.0%} "
                f"(over-blocking on real behaviour); rules: {', '.join(rules)}"
            )
        elif s.over_blocking:
            rules = [rule for rule, counts in s.per_rule.items() if counts.get("gold_passed")]
            out.append(
                f"{s.strategy} holds more than {OVER_BLOCKING:.0%} of gold-matching writes in passed simulations "
                f"(over-blocking by the gold-plan proxy: no labelled complying write in this run); rules: {', '.join(rules)}"
            )
        elif s.over_blocking_basis == "labels" and s.labels is not None and (s.false_block_proxy or 0.0) > OVER_BLOCKING:
            fh = s.labels.false_holds
            out.append(
                f"{s.strategy}: not over-blocking by the labels ({fh.held}/{fh.writes} labelled complying writes held); the "
                f"false-block proxy's {s.false_block_proxy:.1%} counts gold-matching writes labelled violating or unlabelled"
            )
    return out


def render_audit(report: AuditReport, fmt: str, writes: bool = False) -> str:
    """The audit as text: one row per strategy, per-rule holds, replay faithfulness, held writes."""
    md = fmt == "markdown"
    tablefmt = "github" if md else "simple"
    r = report
    if r.simulated:
        origin = "SIMULATION: the run used the built-in sim model; not findings about real LLMs."
    elif r.source == "imported":
        origin = f"IMPORTED: recorded conversations of a real agent ({r.agent_llm}; user {r.user_llm})."
    else:
        origin = f"recorded conversations of agent {r.agent_llm} (user {r.user_llm})."
    lines = [("> **" + origin + "**") if md else origin]
    if r.left_out is not None:
        lines.append(("> " + r.left_out.line()) if md else r.left_out.line())
    if r.guard_llm:
        where = f" at {r.guard_api_base}" if r.guard_api_base else ""
        llm = f"guard LLM backends: {r.guard_llm}{where}" + (f" -- {PLUMBING.upper()}" if r.plumbing else "")
        lines.append(("> **" + llm + "**") if md else llm)
    lines.append("")
    lines.append(
        f"audit of run {r.run_id} ({r.domain}): {r.simulations} simulations ({r.passed} passed, {r.failed} failed), "
        f"{r.writes} agent writes: gold-matching in passed {r.class_counts['gold_passed']}, gold-matching in failed "
        f"{r.class_counts['gold_failed']}, off-gold in failed {r.class_counts['off_gold_failed']}, off-gold in passed "
        f"{r.class_counts['off_gold_passed']}"
    )
    rp = r.replay
    lines.append(
        f"replay: {rp.tool_calls} recorded tool calls; {rp.mismatches} replayed results differ from the recorded ones "
        f"({rp.benign} only in pydantic's error-URL version); {rp.unfaithful_simulations} simulation(s) not faithful"
    )
    lines.append("")
    rows = []
    for s in r.strategies:
        row: dict[str, Any] = {
            "strategy": s.strategy,
            "held gold/passed (false-block proxy)": _rate(s.by_class["gold_passed"]),
            "held off-gold/failed (catch proxy)": _rate(s.by_class["off_gold_failed"]),
            "rescue potential": f"{s.rescued}/{s.failed_with_off_gold}"
            + (f" ({s.rescue_potential:.1%})" if s.rescue_potential is not None else ""),
            "held gold/failed": _rate(s.by_class["gold_failed"]),
            "held off-gold/passed": _rate(s.by_class["off_gold_passed"]),
        }
        if r.follow_reads:
            row["false-block proxy after reads"] = _rate(s.by_class["gold_passed"], after=True)
            row["catch proxy after reads"] = _rate(s.by_class["off_gold_failed"], after=True)
        if s.guard_usage.llm_calls:
            row["guard calls"] = s.guard_usage.llm_calls
            row["guard $"] = f"{s.guard_usage.cost:.4f}"
        row["guard errors"] = s.guard_errors
        rows.append(row)
    lines.append("hold = VERIFY, REVISE or BLOCK; each write is gated on exactly its recorded prefix")
    lines.append(tabulate(rows, headers="keys", tablefmt=tablefmt, disable_numparse=True))
    lines.extend(_over_blocking_lines(r.strategies))
    lines.extend(_usage_lines(r, tablefmt))
    labelled = [s for s in r.strategies if s.labels is not None]
    if not labelled and r.labels_checked:
        lines.append("")
        lines.append(NO_LABELLED_WRITES)
    if labelled:
        lines.append("")
        first = labelled[0].labels
        assert first is not None
        lines.append(
            f"against the labelled real-write benchmark (tauguard/benchmark/real_writes; {first.labelled} labelled writes "
            f"of this run, {first.unmatched} not reached); Wilson 95 % intervals"
            + (f" ({PLUMBING})" if r.plumbing else "")
        )
        lines.append(f"{DEFAULT_FIGURES}:")
        label_rows = []
        for s in labelled:
            la = s.labels
            assert la is not None
            row = {
                "strategy": s.strategy,
                "false holds (complying)": rate_text(la.false_holds),
                "in passed sims": rate_text(la.false_holds_passed),
                "in failed sims": rate_text(la.false_holds_failed),
                "catches (violating)": rate_text(la.catches),
                "held ambiguous": rate_text(la.ambiguous_held),
            }
            row["guard errors"] = la.guard_errors
            label_rows.append(row)
        lines.append(tabulate(label_rows, headers="keys", tablefmt=tablefmt, disable_numparse=True))
        after_rows = [
            {"strategy": s.strategy, "false holds after reads": rate_text(s.labels.false_holds_after_reads),
             "catches after reads": rate_text(s.labels.catches_after_reads)}
            for s in labelled if s.labels is not None and s.labels.false_holds_after_reads is not None
        ]
        if after_rows:
            lines.append("")
            lines.append(f"{AFTER_READS_FIGURES}:")
            lines.append(tabulate(after_rows, headers="keys", tablefmt=tablefmt, disable_numparse=True))
        cause_rows = [{"strategy": s.strategy, "false holds by rule": rule, "count": n}
                      for s in labelled if s.labels for rule, n in s.labels.false_holds_by_rule.items()]
        if cause_rows:
            lines.append("")
            lines.append(tabulate(cause_rows, headers="keys", tablefmt=tablefmt, disable_numparse=True))
        for s in labelled:
            if s.labels and (s.labels.caught or s.labels.missed):
                lines.append(f"{s.strategy}: caught {', '.join(s.labels.caught) or '-'}; missed {', '.join(s.labels.missed) or '-'}")
        lines.append("(the write-class columns above are proxies from the gold plan; the labels are the measure)")
    rule_rows = [
        {"strategy": s.strategy, "rule": rule, **{c: counts.get(c, 0) for c in ("gold_passed", "gold_failed", "off_gold_failed", "off_gold_passed")}}
        for s in r.strategies for rule, counts in s.per_rule.items()
    ]
    if rule_rows:
        lines.append("")
        lines.append("holds per rule and write class")
        lines.append(tabulate(rule_rows, headers="keys", tablefmt=tablefmt, disable_numparse=True))
    if rp.details and any(not d["benign"] for d in rp.details):
        lines.append("")
        lines.append("replay mismatches (replayed result differs from the recorded one)")
        lines.extend(
            f"  task {d['task_id']} trial {d['trial']} message {d['step']} {d['tool']}: {d['why']}"
            for d in rp.details if not d["benign"]
        )
    if writes:
        held = [
            {"strategy": s.strategy, "task": w.task_id, "trial": w.trial, "step": w.step, "tool": w.tool,
             "class": w.write_class, "verdict": w.verdict
             + (f" -> {w.verdict_after_reads}" if w.verdict_after_reads else ""),
             "rule": w.rule_id or "", "reason": (w.reason or "").replace("\n", " ")[:200]}
            for s in r.strategies for w in s.held_writes
        ]
        lines.append("")
        lines.append(f"held writes ({len(held)})")
        if held:
            lines.append(tabulate(held, headers="keys", tablefmt=tablefmt, disable_numparse=True))
    return "\n".join(lines)


def _usage_lines(r: AuditReport, tablefmt: str) -> list[str]:
    """The LLM backends' calls, tokens and cost per strategy, in total and per write."""
    if not r.guard_llm:
        return []
    rows = []
    for s in r.strategies:
        u, per = s.guard_usage, s.guard_usage_per_write
        rows.append({
            "strategy": s.strategy, "LLM calls": u.llm_calls, "prompt tokens": u.prompt_tokens,
            "completion tokens": u.completion_tokens, "cost $": f"{u.cost:.4f}",
            "calls/write": f"{per.llm_calls:.2f}" if per else "-",
            "tokens/write": f"{per.prompt_tokens + per.completion_tokens:.0f}" if per else "-",
            "$/write": f"{per.cost:.5f}" if per else "-",
        })
    title = f"guard LLM usage ({r.guard_llm}; per write = total / the strategy's gated writes, user-turn calls included)"
    if r.plumbing:
        title += f"; {PLUMBING}"
    return ["", title, tabulate(rows, headers="keys", tablefmt=tablefmt, disable_numparse=True)]
