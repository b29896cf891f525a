"""The process rubric's stored result: a trial's :class:`ProcessReport` and its failed checks.

Pure data (pydantic only), so the run records can hold a report without importing the scoring
(:mod:`tauguard.process.score`, which fills it).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

RUBRIC_VERSION = 5  # bump on any change of a check or of a write contract (stored on each report)
CheckName = Literal[
    "identify", "target_read", "confirmation", "closed_reason", "diagnose_first", "verify_after", "no_write_after_refusal",
    "blocked_write",
]
CHECKS: tuple[CheckName, ...] = (
    "identify", "target_read", "confirmation", "closed_reason", "diagnose_first", "verify_after", "no_write_after_refusal",
    "blocked_write",
)


class ProcessCheck(BaseModel):
    """One applicable check that failed (stored), or held (counted only)."""

    check: CheckName
    clause_id: str
    step: int  # conversation event index of the call the check is about
    tool: str | None = None
    detail: str = ""


class ProcessReport(BaseModel):
    """A trial's process rubric: applicable and satisfied checks, the failures with clause ids."""

    rubric_version: int = RUBRIC_VERSION
    judge: str = ""  # the dialogue judge that scored the confirmation checks (name/version; "" before v3)
    applicable: int = 0
    satisfied: int = 0
    failures: list[ProcessCheck] = Field(default_factory=list)

    @property
    def valid(self) -> bool:
        """Whether every applicable check holds."""
        return not self.failures

    @property
    def blocked(self) -> int:
        """Writes the task needed that a guard held and that never executed (``blocked_write`` failures)."""
        return sum(1 for f in self.failures if f.check == "blocked_write")
