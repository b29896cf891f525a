"""What a verifier backend returns: one outcome per checklist item, plus raw output and usage."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from tauguard_strategies.action_guard.schema import ItemKind
from tauguard.guard import GuardUsage

ItemStatus = Literal["met", "missing", "violated", "unchecked"]


class ItemOutcome(BaseModel):
    """The verdict on one checklist item.

    ``missing``: the evidence the item needs is absent (read or ask first);
    ``violated``: the evidence contradicts it; ``unchecked``: the backend could not judge
    it (no deterministic check, or skipped by option).
    """

    id: str
    kind: ItemKind | None = None  # None for an item id the LLM invented
    status: ItemStatus
    detail: str = ""
    evidence: dict[str, Any] = Field(default_factory=dict)
    revised_arguments: dict[str, Any] | None = None
    suggested_reads: list[dict[str, Any]] = Field(default_factory=list)


class VerifierResult(BaseModel):
    """A backend's judgement of one proposed call."""

    backend: Literal["compiled", "llm"]
    outcomes: list[ItemOutcome] = Field(default_factory=list)
    remediation: str = ""  # the verifier's own advice to the agent (LLM backend)
    raw: str | None = None
    usage: GuardUsage = Field(default_factory=GuardUsage)
    failure: str | None = None  # set when the verifier produced no usable verdict
