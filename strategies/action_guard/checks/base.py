"""The check registry: deterministic check functions by id, and their result type."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

from tauguard_strategies.action_guard.schema import Checklist
from tauguard_strategies.action_guard.evidence import Evidence
from tauguard.conversation import ToolCallView
from tauguard.registry import Registry

CheckStatus = Literal["met", "missing", "violated"]


class CheckResult(BaseModel):
    """The outcome of one check: the requirement is met, lacks evidence, or is contradicted."""

    status: CheckStatus
    detail: str = ""
    evidence: dict[str, Any] = Field(default_factory=dict)
    revised_arguments: dict[str, Any] | None = None
    # Reads that would supply the missing evidence, as {"name": ..., "arguments": {...}}.
    suggested_reads: list[dict[str, Any]] = Field(default_factory=list)


def met(detail: str = "", **evidence: Any) -> CheckResult:
    """A met result."""
    return CheckResult(status="met", detail=detail, evidence=evidence)


def missing(detail: str, *reads: dict[str, Any], **evidence: Any) -> CheckResult:
    """Evidence is absent: read or ask first."""
    return CheckResult(status="missing", detail=detail, evidence=evidence, suggested_reads=list(reads))


def violated(detail: str, revised_arguments: dict[str, Any] | None = None, **evidence: Any) -> CheckResult:
    """Evidence contradicts the requirement."""
    return CheckResult(status="violated", detail=detail, evidence=evidence, revised_arguments=revised_arguments)


def read(name: str, **arguments: Any) -> dict[str, Any]:
    """A suggested read call."""
    return {"name": name, "arguments": arguments}


@dataclass
class CheckContext:
    """What a check sees: the proposed call, the conversation's evidence, its item's params."""

    domain: str
    call: ToolCallView
    checklist: Checklist
    evidence: Evidence
    params: dict[str, Any] = field(default_factory=dict)

    def arg(self, name: str) -> Any:
        """An argument of the proposed call (None if absent)."""
        return self.call.arguments.get(name)


CheckFn = Callable[[CheckContext], CheckResult]

CHECKS: Registry[CheckFn] = Registry("action-guard check", check=callable, expected="a callable")


def check(check_id: str) -> Callable[[CheckFn], CheckFn]:
    """Register a check function under ``check_id`` (a second one under the same id is an error)."""
    return CHECKS.register(check_id)
