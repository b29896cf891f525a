"""Text of the two axes (compliance, usefulness): `compare`'s decision block and `show`'s per-run lines."""

from __future__ import annotations

from collections.abc import Sequence

from tauguard.analysis.axes import AxesComparison, RunAxes
from tauguard.tables import fit_table


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def render_axes_comparisons(comps: Sequence[AxesComparison], fmt: str) -> str:
    """The decision block of `compare`: one headline per candidate, a table, violations per clause."""
    if not comps:
        return ""
    tablefmt = "github" if fmt == "markdown" else "simple"
    md = fmt == "markdown"
    first = comps[0]
    lines = [("### " if md else "") + f"Decision: compliance and usefulness against {first.baseline_strategy} "
             f"({first.baseline})" + (" — SIMULATION" if any(c.simulated for c in comps) else "")]
    lines.append("\n".join(("- " if md else "  ") + c.headline() for c in comps))
    rows = []
    for c in comps:
        u, p = c.usefulness, c.compliance
        row = {
            "candidate": c.candidate_strategy,
            "violations base→cand": f"{p.baseline}→{p.candidate}",
            f"prevented [{p.confidence:.0%} CI]": f"{p.prevented:g} [{p.ci_low:+.0f}, {p.ci_high:+.0f}]",
            "share prevented [CI]": "-" if p.share is None else f"{p.share:.0%} [{p.share_low:.0%}, {p.share_high:.0%}]",
            "p (compl.)": f"{p.p_permutation:.3g}",
        }
        if u is not None:
            row.update({
                f"pass^{u.k} consistent base→cand": f"{_fmt(u.baseline)}→{_fmt(u.candidate)}",
                "Δ [CI]": f"{u.delta:+.3f} [{u.ci_low:+.3f}, {u.ci_high:+.3f}]",
                "p (useful.)": f"{u.p_permutation:.3g}",
                "lost: false hold/feedback/other": f"{len(u.lost_false_hold)}/{len(u.lost_feedback_not_taken)}/{len(u.lost_other)}",
                f"conflict tasks pass^{u.k} base→cand (lost)": (
                    f"{_fmt(u.conflict_baseline)}→{_fmt(u.conflict_candidate)} ({len(u.lost_gold_conflict)} of {u.conflict_tasks})"
                ),
            })
        rows.append(row)
    columns = list(dict.fromkeys(key for row in rows for key in row))
    lines.append(fit_table([{k: r.get(k, "-") for k in columns} for r in rows], headers="keys", tablefmt=tablefmt,
                           disable_numparse=True))
    lines.append(
        "compliance: policy-violating writes that reached the environment, counted by a neutral judge (sim runs: "
        "injected faults that break a clause and reached the environment + executed gold-conflict writes; imported "
        "runs: writes the process checks find violating + executed gold-conflict writes); guard events are never "
        "evidence. CIs: percentile bootstrap over tasks (stratified by domain) of the prevented count and, with "
        "the same draws, of the share prevented (prevented / baseline violations); p: sign-flip permutation over tasks."
    )
    lines.append(
        "usefulness: pass^k on the policy-consistent tasks (gold agrees with the policy); the conflict tasks "
        "(tauguard/domains/gold_conflicts.toml) apart: there a pass means the violating gold write ran. Lost tasks "
        "(per-task pass^k below the baseline's): false hold = a write the task needed was held and never ran; "
        "feedback = a guard held an injected fault and the trial still failed; other = neither."
    )
    clause_rows: dict[str, dict[str, str]] = {}
    for c in comps:
        for d in c.compliance.by_clause:
            row = clause_rows.setdefault(d.clause_id, {"clause": d.clause_id, c.baseline_strategy: str(d.baseline)})
            row[c.candidate_strategy] = f"{d.candidate} (prevents {d.prevented})"
    if clause_rows:
        heads = ["clause", first.baseline_strategy] + [c.candidate_strategy for c in comps]
        lines.append("violations per clause (a write breaking two clauses counts under both):\n" + fit_table([{h: r.get(h, "0") for h in heads} for r in clause_rows.values()], headers="keys",
                               tablefmt=tablefmt, disable_numparse=True))
    tail = [f"lost to a false hold ({c.candidate_strategy}): {task}" for c in comps
            for task in (c.usefulness.lost_false_hold if c.usefulness else [])]
    tail += [f"note: {n}" for n in dict.fromkeys(n for c in comps for n in c.notes)]
    assumptions = next((c.sim_assumptions for c in comps if c.sim_assumptions), None)
    if assumptions:
        tail.append(assumptions)
    if tail:
        lines.append(("\n\n" if md else "\n").join(tail))
    # Markdown needs a blank line between a list, a table and a paragraph.
    return ("\n\n" if md else "\n").join(lines)


def render_run_axes(axes: RunAxes) -> list[str]:
    """`show`'s two lines (and the per-clause one) of a run's axes."""
    c, u = axes.compliance, axes.usefulness
    sources = ", ".join(f"{k} {v}" for k, v in sorted(c.by_source.items())) or "none"
    lines = [
        f"compliance: {c.violations} policy-violating write(s) reached the environment in {c.trials_with_violation} "
        f"of {c.trials} trials ({sources}); neutral judge: {c.judge}",
        f"usefulness: pass^{u.k} {_fmt(u.consistent_pass_hat)} on {u.consistent_tasks} policy-consistent task(s); "
        f"conflict tasks apart: pass^{u.k} {_fmt(u.conflict_pass_hat)} on {u.conflict_tasks} "
        f"({u.conflict_successes} of {u.conflict_trials} trials passed, each by running the violating gold write)",
    ]
    if c.by_clause:
        lines.append("violations per clause: " + ", ".join(f"{x.clause_id} {x.violations}" for x in c.by_clause))
    lines += [f"note: {n}" for n in c.notes]
    if axes.sim_assumptions:
        lines.append(axes.sim_assumptions)
    return lines
