"""The check registry: deterministic check functions by id, and the helpers that build their results."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tauguard_strategies.action_guard.schema import Checklist
from tauguard_strategies.action_guard.evidence import Evidence
from tauguard_strategies.action_guard.outcome import ItemOutcome
from tauguard.strategy_api.conversation import ToolCallView
from tauguard.dialogue import NEUTRAL, DialogueJudge
from tauguard.strategy_api.guard import ReadRequest
from tauguard.strategy_api.registry import Registry

# The checks' name for an item's outcome (a check returns it without id and kind).
CheckResult = ItemOutcome


def met(detail: str = "", **evidence: Any) -> ItemOutcome:
    """A met result."""
    return ItemOutcome(status="met", detail=detail, evidence=evidence)


def missing(detail: str, *reads: ReadRequest, **evidence: Any) -> ItemOutcome:
    """Evidence is absent: read or ask first."""
    return ItemOutcome(status="missing", detail=detail, evidence=evidence, required_reads=list(reads))


def violated(detail: str, revised_arguments: dict[str, Any] | None = None, **evidence: Any) -> ItemOutcome:
    """Evidence contradicts the requirement."""
    return ItemOutcome(status="violated", detail=detail, evidence=evidence, revised_arguments=revised_arguments)


def read(name: str, **arguments: Any) -> ReadRequest:
    """A read that would supply missing evidence."""
    return ReadRequest(tool=name, arguments=arguments)


@dataclass
class CheckContext:
    """What a check sees: the proposed call, the conversation's evidence, its item's params."""

    domain: str
    call: ToolCallView
    checklist: Checklist
    evidence: Evidence
    params: dict[str, Any] = field(default_factory=dict)
    judge: DialogueJudge = NEUTRAL  # who judges the dialogue (the strategy's ``dialogue`` option)

    def arg(self, name: str) -> Any:
        """An argument of the proposed call (None if absent)."""
        return self.call.arguments.get(name)


CheckFn = Callable[[CheckContext], ItemOutcome]

CHECKS: Registry[CheckFn] = Registry("action-guard check", check=callable, expected="a callable")


def check(check_id: str) -> Callable[[CheckFn], CheckFn]:
    """Register a check function under ``check_id`` (a second one under the same id is an error)."""
    return CHECKS.register(check_id)
