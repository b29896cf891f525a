"""The gold sweep's report: verdict counts per domain and the held writes, as table, markdown or JSON."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Literal

from pydantic import BaseModel, Field
from tauguard.tables import fit_table

from tauguard.strategy_api.guard import Verdict
from tauguard.probes.sweep import GoldDecision, verdict_counts

Format = Literal["table", "markdown", "json"]

SWEEP_NOTE = (
    "SIMULATION: tau2's gold plans replayed as the sim agent states them; the counts describe a "
    "gate on these replays, not real LLM agents."
)
_REASON_WIDTH = 140  # table output shortens reasons; markdown and JSON keep them whole
_TASK_WIDTH = 48


class DomainCounts(BaseModel):
    """Verdict counts on one domain's gold writes."""

    domain: str
    tasks: int
    writes: int
    ALLOW: int
    VERIFY: int
    REVISE: int
    BLOCK: int
    rejected_by_tau2: int  # gold writes the environment itself rejects


class SweepReport(BaseModel):
    """A strategy's gold sweep over one split of one or more domains."""

    strategy: str
    options: dict[str, Any] = Field(default_factory=dict)
    split: str
    follow_reads: bool
    counts: list[DomainCounts]
    decisions: list[GoldDecision]

    @property
    def held(self) -> list[GoldDecision]:
        """The gold writes the strategy kept from the environment."""
        return [d for d in self.decisions if d.verdict != Verdict.ALLOW]


def build_report(
    strategy: str, options: dict[str, Any], split: str, follow_reads: bool, decisions: dict[str, list[GoldDecision]]
) -> SweepReport:
    """The report of per-domain sweep results."""
    counts = [
        DomainCounts(
            domain=domain,
            tasks=len({d.task_id for d in found}),
            writes=len(found),
            rejected_by_tau2=sum(not d.executed for d in found),
            **verdict_counts(found),
        )
        for domain, found in decisions.items()
    ]
    flat = [d for found in decisions.values() for d in found]
    return SweepReport(strategy=strategy, options=dict(options), split=split, follow_reads=follow_reads, counts=counts, decisions=flat)


def _short(text: str, width: int) -> str:
    """Head and tail of ``text`` (a reason's tail usually says what the guard observed)."""
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    half = (width - 5) // 2
    return f"{text[:half]} ... {text[-half:]}"


def render_sweep(report: SweepReport, fmt: Format) -> str:
    """Counts per domain, then every held write (task, write, tool, verdict, rule id, reason)."""
    if fmt == "json":
        return json.dumps({"note": SWEEP_NOTE, **report.model_dump(mode="json")}, indent=2)
    md = fmt == "markdown"
    tablefmt = "github" if md else "simple"
    opts = " ".join(f"{k}={v}" for k, v in report.options.items())
    mode = "requested reads followed" if report.follow_reads else "gold plans as they are (reads not followed)"
    title = f"gold sweep of {report.strategy}{(' (' + opts + ')') if opts else ''} on {report.split}: {mode}"
    lines = [f"### {title}" if md else title, "", f"> {SWEEP_NOTE}" if md else SWEEP_NOTE, ""]
    lines.append(fit_table([c.model_dump() for c in report.counts], headers="keys", tablefmt=tablefmt))
    held = report.held
    rejected = sum(not d.executed for d in held)
    note = f" ({rejected} of them rejected by tau2's own tool, marked '(rejected)')" if rejected else ""
    lines += ["", f"held gold writes: {len(held)}{note}"]
    if held:
        by_rule = Counter(f"{d.domain} {d.verdict.value} {d.rule_id or '-'}" for d in held)
        lines += ["", "held by rule:"]
        lines += [f"{'- ' if md else '  '}{n:4d}  {k}" for k, n in sorted(by_rule.items(), key=lambda kv: (-kv[1], kv[0]))]
        rows = [
            {
                "domain": d.domain,
                "task": d.task_id,
                "write": d.write_index,
                "tool": d.tool,
                "verdict": d.verdict.value + ("" if d.executed else " (rejected)"),
                "rule": d.rule_id or "",
                "reason": " ".join(d.reason.split()).replace("|", "\\|") if md else _short(d.reason, _REASON_WIDTH),
            }
            for d in held
        ]
        # Telecom task ids and reasons are long: a terminal table wraps them.
        widths = None if md else [None, _TASK_WIDTH, None, None, None, None, _REASON_WIDTH // 2]
        lines += ["", fit_table(rows, headers="keys", tablefmt=tablefmt, maxcolwidths=widths)]
    return "\n".join(lines)
