"""The legend under a summary: every abbreviation a table or note of it uses, in words.

Columns come from the metric registry (:data:`tauguard.analysis.metrics.METRICS`, so a plug-in
metric brings its own line); the fixed columns and terms are listed here once.
"""

from __future__ import annotations

from collections.abc import Iterable

#: Fixed columns and terms of the summaries (run/show, compare, check, audit).
TERMS: dict[str, str] = {
    "slice": "DOMAIN/SUBSET: all tasks, policy_violation tasks (gold plan has no agent write) or mutation tasks (it has one)",
    "avg reward": "mean τ² reward over evaluated trials",
    "process-valid": "share of trials with reward 1 AND every applicable check of tauguard's process rubric "
                     "(PolicyGuide, shared/papers/workflow-guide_policyguide.md §4.7: its process-valid rate)",
    "step-TCR": "PolicyGuide's step task-completion rate: satisfied rubric steps / applicable steps, over outcome-passing traces",
    "trace-TCR": "PolicyGuide's trace task-completion rate: traces with every applicable step satisfied / traces",
    "infra err": "trials lost to infrastructure errors (excluded from every metric; `run --resume` re-runs them)",
    "clause ids": "DOMAIN.rule ids (airline.cancel_requires_basis) name a clause of tauguard/domains/<domain>/policy.toml",
    "fault classes": "A argument, T tool read, D dialogue, W workflow, PV policy violation (PolicyGuide's taxonomy)",
    "Δ, CI, p": "candidate - baseline; paired confidence interval over tasks; permutation p (Holm-adjusted beyond the primary k)",
}


def legend_lines(columns: Iterable[str], terms: Iterable[str] = ()) -> list[str]:
    """``legend:`` lines for the metric columns among ``columns`` (``pass^4``, ``pv^2``, ``ASR@1``)
    and for every fixed term of :data:`TERMS` named in ``columns`` or ``terms``."""
    from tauguard.analysis.metrics import METRICS

    names = set(columns) | set(terms)
    out = ["legend:"]
    for metric in METRICS:
        if any(name.startswith(metric.column) for name in names):
            better = "higher is better" if metric.higher_is_better else "lower is better"
            out.append(f"  {metric.column}k: {metric.description} ({better})")
    out += [f"  {term}: {meaning}" for term, meaning in TERMS.items() if term in names]
    return out if len(out) > 1 else []
