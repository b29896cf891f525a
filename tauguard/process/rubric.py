"""The process rubric's data: per domain, what a compliant trace does around each write.

One TOML file per domain beside this module (``airline.toml`` ...), validated here. The
checks themselves are in :mod:`tauguard.process.score`. Imports neither tau2 nor litellm.
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

DIR = Path(__file__).parent
CLAUSE_ID = r"^[a-z]+\.[a-z0-9_]+$"


class TargetRead(BaseModel):
    """The read that observes a write's target: ``read(read_argument=<write's argument>)``."""

    model_config = ConfigDict(extra="forbid")

    argument: str
    read: str
    read_argument: str
    clause: str = Field(pattern=CLAUSE_ID)


class ClosedReason(BaseModel):
    """A write argument the policy restricts to a closed set of reasons."""

    model_config = ConfigDict(extra="forbid")

    argument: str
    allowed: list[str] = Field(min_length=1)
    clause: str = Field(pattern=CLAUSE_ID)


class WriteRule(BaseModel):
    """The checks around one agent WRITE tool."""

    model_config = ConfigDict(extra="forbid")

    tool: str
    identify: str = Field(pattern=CLAUSE_ID)  # identification before the write
    targets: list[TargetRead] = Field(default_factory=list)
    confirm: str | None = Field(default=None, pattern=CLAUSE_ID)  # explicit yes to the stated action
    reason: ClosedReason | None = None


class FixRule(BaseModel):
    """A device fix (user-side WRITE) and the diagnostic checks that must come first."""

    model_config = ConfigDict(extra="forbid")

    tool: str
    diagnose: list[str] = Field(min_length=1)
    clause: str = Field(pattern=CLAUSE_ID)


class VerifyRule(BaseModel):
    """Verify-after-act: after the last fix, a read observes the result."""

    model_config = ConfigDict(extra="forbid")

    after: list[str] = Field(default_factory=list)  # fixes besides the device fixes
    reads: list[str] = Field(min_length=1)
    clause: str = Field(pattern=CLAUSE_ID)


class DomainRubric(BaseModel):
    """The process rubric of one domain."""

    model_config = ConfigDict(extra="forbid")

    domain: str
    identify_reads: list[str] = Field(min_length=1)
    refusal_clause: str = Field(pattern=CLAUSE_ID)  # no write after a refusal or a transfer
    write: list[WriteRule]
    fix: list[FixRule] = Field(default_factory=list)
    verify: VerifyRule | None = None

    def rule(self, tool: str) -> WriteRule | None:
        """The rule of a write tool, None for a tool the rubric does not cover."""
        return next((w for w in self.write if w.tool == tool), None)

    def fix_rule(self, tool: str) -> FixRule | None:
        """The rule of a device fix, None when ``tool`` is not one."""
        return next((f for f in self.fix if f.tool == tool), None)

    def clause_ids(self) -> set[str]:
        """Every clause id the rubric cites."""
        ids = {self.refusal_clause}
        for w in self.write:
            ids.add(w.identify)
            ids.update(t.clause for t in w.targets)
            if w.confirm:
                ids.add(w.confirm)
            if w.reason:
                ids.add(w.reason.clause)
        ids.update(f.clause for f in self.fix)
        if self.verify:
            ids.add(self.verify.clause)
        return ids


def domains() -> list[str]:
    """Domains with a rubric file."""
    return sorted(p.stem for p in DIR.glob("*.toml"))


@cache
def load(domain: str) -> DomainRubric:
    """The validated rubric of ``domain`` (KeyError for a domain without one)."""
    path = DIR / f"{domain}.toml"
    if not path.exists():
        raise KeyError(domain)
    with path.open("rb") as fh:
        rubric = DomainRubric.model_validate(tomllib.load(fh))
    if rubric.domain != domain:
        raise ValueError(f"{path}: declares domain '{rubric.domain}'")
    return rubric
