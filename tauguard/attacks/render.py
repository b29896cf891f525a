"""Text tables of the attack report (used by `tauguard show` and `tauguard attacks`)."""

from __future__ import annotations

from typing import Any, Sequence

from tauguard.tables import fit_table

from tauguard.analysis.attack_report import AttackGroup, AttackReport, UtilitySafety
from tauguard.analysis.metrics import KValue


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _ks(row: dict[str, Any], prefix: str, values: Sequence[KValue]) -> None:
    for kv in values:
        row[f"{prefix}{kv.k}"] = _fmt(kv.value)


def group_rows(groups: Sequence[AttackGroup], label: str) -> list[dict[str, Any]]:
    """One row per group: tasks, trials, successes, unknown, ASR@1..k."""
    rows = []
    for g in groups:
        row: dict[str, Any] = {label: g.group, "tasks": g.tasks, "trials": g.trials, "attacks ok": g.successes}
        _ks(row, "ASR@", g.asr)
        row["unknown"] = g.unknown
        rows.append(row)
    return rows


def utility_rows(views: Sequence[UtilitySafety]) -> list[dict[str, Any]]:
    """One row per run: benign pass^k next to ASR@k on the attacked tasks."""
    rows = []
    for v in views:
        row: dict[str, Any] = {"strategy": v.strategy, "tactic": v.tactic or "-", "benign tasks": v.benign_tasks}
        _ks(row, "pass^", v.pass_hat)
        row["attacked tasks"] = v.attacked_tasks
        _ks(row, "ASR@", v.asr)
        row["unknown"] = v.unknown
        rows.append(row)
    return rows


def attack_lines(report: AttackReport, tablefmt: str) -> list[str]:
    """The attack section of `tauguard show`."""
    lines = ["", "adversarial users: ASR@k (CRAFT: 1 - C(n-a,k)/C(n,k), mean over attacked tasks; lower is better)"]
    lines.append(fit_table(group_rows(report.by_tactic, "tactic"), headers="keys", tablefmt=tablefmt, disable_numparse=True))
    lines.append("")
    lines.append("by violated clause")
    lines.append(fit_table(group_rows(report.by_clause, "clause"), headers="keys", tablefmt=tablefmt, disable_numparse=True))
    lines.append("")
    lines.append("utility / safety: pass^k on benign tasks, ASR@k on attacked tasks (unknown outcomes excluded)")
    lines.append(fit_table(utility_rows([report.utility_safety]), headers="keys", tablefmt=tablefmt, disable_numparse=True))
    return lines
