"""Text renderings (table / markdown / json) of the classifier's measurements."""

from __future__ import annotations

import json
from typing import Any

from tauguard.tables import fit_table

from tauguard.classifier.metrics import LABELS, Interval, PairedDelta, Scores

SIM_BANNER = "SIMULATION: probes built from tau2 gold plans and the sim agent's catalogued faults, not real trajectories."


def _ci(i: Interval) -> str:
    return f"{i.estimate:.3f} [{i.low:.3f}, {i.high:.3f}]"


def _fmt(fmt: str) -> str:
    return "github" if fmt == "markdown" else "simple"


def scores_rows(name: str, s: Scores) -> list[Any]:
    """One summary row: name, n, macro-F1 [CI], accuracy, per-class F1, collapsed."""
    return [name, s.n, _ci(s.macro_f1), f"{s.accuracy:.3f}", *(f"{s.per_class[lab].f1:.3f}" for lab in LABELS), "yes" if s.collapsed else ""]


SCORE_HEADERS = ["condition", "n", "macro-F1 [95% task CI]", "accuracy", *(f"F1 {lab}" for lab in LABELS), "collapsed"]


def delta_rows(deltas: list[PairedDelta]) -> list[list[Any]]:
    """Paired delta rows."""
    return [[f"{d.b} - {d.a}", _ci(d.delta), f"{d.p_le_zero:.3f}"] for d in deltas]


DELTA_HEADERS = ["paired delta (macro-F1)", "estimate [95% task CI]", "P(delta <= 0)"]


def detail(s: Scores, fmt: str) -> str:
    """Per-class precision / recall / F1 and the confusion matrix."""
    per_class = fit_table(
        [[lab, f"{c.precision:.3f}", f"{c.recall:.3f}", f"{c.f1:.3f}", c.support] for lab, c in s.per_class.items()],
        headers=["class", "precision", "recall", "F1", "support"],
        tablefmt=_fmt(fmt),
    )
    confusion = fit_table(
        [[f"gold {g}", *(s.confusion[g][p] for p in LABELS)] for g in LABELS],
        headers=["", *(f"pred {p}" for p in LABELS)],
        tablefmt=_fmt(fmt),
    )
    return f"{per_class}\n\n{confusion}"


def table(headers: list[str], rows: list[list[Any]], fmt: str) -> str:
    """A table in the text formats."""
    return fit_table(rows, headers=headers, tablefmt=_fmt(fmt))


def as_json(data: Any) -> str:
    """Pretty JSON of pydantic models / plain data."""

    def default(obj: Any) -> Any:
        if hasattr(obj, "model_dump"):
            return obj.model_dump(mode="json")
        raise TypeError(type(obj).__name__)

    return json.dumps(data, indent=2, default=default)
