"""Clause coverage: the schema of the table and of the "not observable" data.

One row per (domain, clause, write tool) for every policy clause that constrains a WRITE
(its ``tools`` scope in the domain's policy pack); one cell per guard saying what checks it:
the ledger predicate, the action-guard checklist item with a deterministic check, the workflow
node the guide cannot pass without it, the tool's own signature, or a documented reason why
the guard cannot observe it (``not_observable.toml``, validated by :func:`not_observable`).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tauguard.datafiles import load_toml

FILE = Path(__file__).with_name("not_observable.toml")
Guard = Literal["ledger", "action-guard", "workflow"]
GUARDS: tuple[Guard, ...] = ("ledger", "action-guard", "workflow")
# Why a guard cannot check a clause (each entry also says it in words):
# dialogue = only the conversation's text shows it and the guard's compiled backend does not
# judge that text for this clause; llm = only the guard's --guard-llm verifier judges it;
# procedure = the guard tracks which steps were taken, not the values a step returns.
Why = Literal["dialogue", "llm", "procedure"]
Status = Literal["check", "signature", "not_observable", "gap"]


class NotObservable(BaseModel):
    """One documented (guard, clause) pair the guard does not check, and why."""

    model_config = ConfigDict(extra="forbid")

    guard: Guard
    clause: str = Field(pattern=r"^[a-z]+\.[a-z0-9_]+$")
    tools: list[str] = Field(default_factory=list)  # empty = every write the clause constrains
    why: Why
    reason: str = Field(min_length=20)


class Restates(BaseModel):
    """A clause whose rule is the rule of other clauses (a guard checking one of those checks it).

    E.g. "Only compensate if the user is a silver/gold member or has travel insurance or flies
    business" restates "Do not compensate if the user is regular member and has no travel
    insurance and flies (basic) economy"; "the agent must make sure the rules apply" is the
    section's rules themselves.
    """

    model_config = ConfigDict(extra="forbid")

    clause: str = Field(pattern=r"^[a-z]+\.[a-z0-9_]+$")
    same_as: list[str] = Field(min_length=1)
    reason: str = Field(min_length=20)


class NotObservableFile(BaseModel):
    """``tauguard/coverage/not_observable.toml``."""

    model_config = ConfigDict(extra="forbid")

    entry: list[NotObservable] = Field(default_factory=list)
    restates: list[Restates] = Field(default_factory=list)


class Cell(BaseModel):
    """What one guard does about one (clause, tool)."""

    model_config = ConfigDict(extra="forbid")

    status: Status
    checks: list[str] = Field(default_factory=list)  # predicate / item / node ids
    via: Literal["clause", "parent", "parts", "restates"] = "clause"  # how part_of / restates counted (see RULE)
    reason: str = ""


class Row(BaseModel):
    """One (domain, clause, write tool) and each guard's cell."""

    model_config = ConfigDict(extra="forbid")

    domain: str
    clause: str
    tool: str
    part_of: str | None = None
    cells: dict[Guard, Cell]


@cache
def _file() -> NotObservableFile:
    return load_toml(FILE, NotObservableFile)


def not_observable() -> tuple[NotObservable, ...]:
    """Every documented not-observable entry (validated; read once per process)."""
    return tuple(_file().entry)


def restatements() -> tuple[Restates, ...]:
    """Every clause documented as restating others."""
    return tuple(_file().restates)
