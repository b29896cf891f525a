"""What an import left out of a run: how many of the file's simulations, why, and their rewards.

An imported run's metrics are computed over the simulations the import kept; a reader of
`show`, `audit`, `compare` or `report` must see how many the file had, how many were left out
and for what reason (an ambiguous placement, a label conflict, another task version, a task
missing from τ² 26.3), and — where the manifest records it — the recorded mean reward of the
left-out ones, since leaving out passed (or failed) simulations moves pass^k.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel, Field

from tauguard.runs.records import Manifest

# The import's reasons, by the words each reason text starts with (importer.check_tasks).
_KINDS = (
    ("ambiguous placement", "ambiguous placement"),
    ("label conflict", "label conflict"),
    ("scored against a different task version", "another task version"),
    ("cannot be placed", "not placeable"),
)
TASK_EXCLUDED = "task missing from or different in τ² 26.3"


class LeftOut(BaseModel):
    """The simulations of a results file an import did not turn into records."""

    in_file: int
    imported: int
    by_reason: dict[str, int] = Field(default_factory=dict)
    # τ²'s recorded mean reward over every simulation of the file with one, and over the left-out ones
    file_mean_reward: float | None = None
    left_out_mean_reward: float | None = None

    @property
    def left_out(self) -> int:
        """How many simulations of the file are not in the run."""
        return self.in_file - self.imported

    def line(self) -> str:
        """One line: how many were left out and why (and their rewards, when recorded)."""
        if not self.left_out:
            return f"import: all {self.in_file} simulations of the file are in this run"
        why = ", ".join(f"{n} {reason}" for reason, n in sorted(self.by_reason.items(), key=lambda kv: (-kv[1], kv[0])))
        text = f"import left out {self.left_out} of the file's {self.in_file} simulations ({why})"
        if self.left_out_mean_reward is not None and self.file_mean_reward is not None:
            text += (
                f"; their recorded mean reward {self.left_out_mean_reward:.3f}, the whole file's "
                f"{self.file_mean_reward:.3f}: metrics here describe the {self.imported} imported only"
            )
        else:
            text += f": metrics here describe the {self.imported} imported only"
        return text

    def scope(self) -> str:
        """What pass^k is computed over, for its header."""
        if not self.left_out:
            return f"all {self.in_file} simulations of the imported file"
        return f"the {self.imported} imported simulations; {self.left_out} of the file's {self.in_file} left out by the import"


def _kind(reason: str) -> str:
    for prefix, kind in _KINDS:
        if reason.startswith(prefix):
            return kind
    return reason.split(":", 1)[0].split(",", 1)[0]


def left_out_of(manifest: Manifest) -> LeftOut | None:
    """The import's left-out simulations (None: not an imported run, or one without counts)."""
    counts: dict[str, Any] = dict(manifest.counts or {})
    if manifest.source != "imported" or "simulations_in_file" not in counts:
        return None
    provenance = manifest.provenance or {}
    recorded = provenance.get("left_out") if isinstance(provenance.get("left_out"), dict) else None
    if recorded is not None:
        return LeftOut.model_validate(recorded)
    in_file, imported = int(counts["simulations_in_file"]), int(counts.get("imported", 0))
    reasons = provenance.get("excluded_simulations") or {}
    by_reason = Counter(_kind(str(r)) for r in reasons.values())
    rest = in_file - imported - sum(by_reason.values())
    if rest > 0:  # whole tasks excluded: their simulations carry no per-simulation reason
        by_reason[TASK_EXCLUDED] += rest
    return LeftOut(in_file=in_file, imported=imported, by_reason=dict(by_reason))


def left_out_summary(simulations: list[dict[str, Any]], imported_rewards: list[float | None], reasons: dict[str, str]) -> LeftOut:
    """The record an import writes: counts, reasons and recorded rewards (file and left out)."""
    def reward(sim: dict[str, Any]) -> float | None:
        info = sim.get("reward_info") if isinstance(sim, dict) else None
        value = info.get("reward") if isinstance(info, dict) else None
        return float(value) if isinstance(value, (int, float)) else None

    all_rewards = [r for r in (reward(s) for s in simulations) if r is not None]
    kept = [r for r in imported_rewards if r is not None]
    by_reason = Counter(_kind(r) for r in reasons.values())
    rest = len(simulations) - len(imported_rewards) - sum(by_reason.values())
    if rest > 0:
        by_reason[TASK_EXCLUDED] += rest
    n_out = len(all_rewards) - len(kept)
    return LeftOut(
        in_file=len(simulations),
        imported=len(imported_rewards),
        by_reason=dict(by_reason),
        file_mean_reward=sum(all_rewards) / len(all_rewards) if all_rewards else None,
        left_out_mean_reward=(sum(all_rewards) - sum(kept)) / n_out if n_out > 0 else None,
    )
