"""tauguard: compare runtime guarding strategies for tool-calling agents on tau2-bench.

The public API (imported lazily: ``import tauguard`` loads neither tau2 nor litellm)::

    import tauguard
    result = tauguard.run({"strategy": "ledger", "domains": ["airline"], "trials": 4})
    tauguard.resume(result.run_dir)          # finish an interrupted run
    df = tauguard.load_run_frame(result.run_dir)
    report = tauguard.compare_runs(["runs/react", "runs/ledger"])
    gate = tauguard.check_run("runs/ledger", baseline="runs/react")

User errors are ``ValueError`` subclasses with a one-line message.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

__version__ = "0.1.0"

__all__ = [
    "RunConfig",
    "check_run",
    "compare_runs",
    "load_run",
    "load_run_frame",
    "plan",
    "resume",
    "run",
]

if TYPE_CHECKING:
    from tauguard.analysis.gate import GateReport
    from tauguard.analysis.compare import CompareReport
    from tauguard.config import RunConfig
    from tauguard.execution.lifecycle import plan, resume, run
    from tauguard.runs.store import Run, load_run, load_run_frame

_LAZY = {
    "RunConfig": "tauguard.config",
    "plan": "tauguard.execution.lifecycle",
    "run": "tauguard.execution.lifecycle",
    "resume": "tauguard.execution.lifecycle",
    "load_run": "tauguard.runs.store",
    "load_run_frame": "tauguard.runs.store",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'tauguard' has no attribute {name!r}")


def _runs(items: Sequence["str | Path | Run"]) -> list["Run"]:
    from tauguard.runs.store import Run, load_run

    return [item if isinstance(item, Run) else load_run(item) for item in items]


def compare_runs(runs: Sequence["str | Path | Run"], **options: Any) -> "CompareReport":
    """Compare every run after the first with the first (paired statistics per k).

    ``runs`` are run folders or loaded runs; ``options`` are those of
    :func:`tauguard.analysis.compare.compare_runs` (``primary_k``, ``n_resamples``, ``seed``...).
    """
    from tauguard.analysis.compare import compare_runs as _compare

    return _compare(_runs(runs), **options)


def check_run(
    run: "str | Path | Run", *, baseline: "str | Path | Run | None" = None,
    floors: "str | Path | None" = None, **options: Any,
) -> "GateReport":
    """Gate a run against a baseline (non-inferiority or regression) and/or a floors file."""
    from tauguard.analysis.gate import load_floors, run_gate

    loaded = _runs([run] + ([baseline] if baseline is not None else []))
    return run_gate(
        loaded[0], baseline=loaded[1] if baseline is not None else None,
        floors=load_floors(floors) if floors is not None else None, **options,
    )
