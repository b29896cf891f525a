"""τ² gold writes that contradict the policy text (data: ``gold_conflicts.toml``).

One list, used by ``probes build`` (such a gold write is labelled ``refuse``), the ledger's
gold sweep test, the README's quirks table and the compliance axis
(:mod:`tauguard.analysis.axes`: a call of ``tool`` whose arguments hold ``match`` that the
environment ran is an executed violation of ``clause_id``, whoever made it).
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

FILE = Path(__file__).with_name("gold_conflicts.toml")


class LedgerExpectation(BaseModel):
    """The ledger's decision on the conflicting write in the compliant gold sweep."""

    model_config = ConfigDict(extra="forbid")

    verdict: Literal["VERIFY", "REVISE", "BLOCK"]
    rule_id: str


class GoldConflict(BaseModel):
    """One gold write (by task and ordinal among the task's agent writes) the policy forbids."""

    model_config = ConfigDict(extra="forbid")

    domain: str
    task_id: str
    write_index: int
    tool: str
    clause: str  # verbatim policy text the write contradicts
    facts: str  # what the reads show
    clause_id: str  # the pack's clause (tauguard.domains) whose text holds ``clause``
    # The gold write's arguments that make it the violating write (a subset of τ²'s gold
    # arguments; a test checks): a call of ``tool`` holding these values is this conflict.
    match: dict[str, Any]
    # The ledger's verdict; None when the conflict is dialogue-level and the ledger allows.
    ledger: LedgerExpectation | None = None

    @property
    def key(self) -> tuple[str, str, int]:
        """(domain, task id, write index)."""
        return (self.domain, self.task_id, self.write_index)


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")

    conflict: list[GoldConflict]


@cache
def gold_conflicts() -> tuple[GoldConflict, ...]:
    """Every documented conflict (validated; read once per process)."""
    with FILE.open("rb") as fh:
        return tuple(_File.model_validate(tomllib.load(fh)).conflict)


def is_conflict_call(conflict: GoldConflict, tool: str, arguments: dict[str, Any]) -> bool:
    """Whether a call of ``tool`` with ``arguments`` is the conflicting gold write (``match`` held)."""
    return tool == conflict.tool and all(arguments.get(key) == value for key, value in conflict.match.items())


@cache
def conflict_tasks() -> frozenset[tuple[str, str]]:
    """(domain, task id) of every task with a documented conflict: the policy-inconsistent slice."""
    return frozenset((c.domain, c.task_id) for c in gold_conflicts())


def conflict_at(domain: str, task_id: str, write_index: int | None) -> GoldConflict | None:
    """The documented conflict at this gold write, if any."""
    return next((c for c in gold_conflicts() if c.key == (domain, task_id, write_index)), None)


def markdown_table() -> str:
    """The README's table of the conflicts (generated from the data)."""
    rows = ["| domain | task | gold write | tool | what the reads show | clause (verbatim) |", "|---|---|---|---|---|---|"]
    rows += [f"| {c.domain} | {c.task_id} | #{c.write_index} | `{c.tool}` | {c.facts} | {c.clause} |" for c in gold_conflicts()]
    return "\n".join(rows)
