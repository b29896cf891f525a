"""What a verifier backend returns: one outcome per checklist item, plus raw output and usage.

An item's outcome is a status, not yet a verdict: what a violation calls for is declared by
the item (``on_violation``) and what missing evidence calls for by the ``on_missing``
option; :mod:`tauguard_strategies.action_guard.verdict` turns outcomes into the shared
:class:`~tauguard.strategy_api.guard.RuleFinding` and combines them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from tauguard_strategies.action_guard.schema import ItemKind
from tauguard.strategy_api.guard import GuardUsage, ReadRequest

ItemStatus = Literal["met", "missing", "violated", "unchecked"]


class ItemOutcome(BaseModel):
    """The status of one checklist item (what a deterministic check or the LLM found).

    ``missing``: the evidence the item needs is absent (read or ask first);
    ``violated``: the evidence contradicts it; ``unchecked``: the backend could not judge
    it (no deterministic check, or skipped by option). A check returns it without ``id``
    and ``kind``; the backend fills them in from the item.
    """

    id: str = ""
    kind: ItemKind | None = None  # None for an item id the LLM invented
    status: ItemStatus
    detail: str = ""
    evidence: dict[str, Any] = Field(default_factory=dict)
    revised_arguments: dict[str, Any] | None = None
    required_reads: list[ReadRequest] = Field(default_factory=list)  # reads that would supply missing evidence


class VerifierResult(BaseModel):
    """A backend's judgement of one proposed call."""

    backend: Literal["compiled", "llm"]
    outcomes: list[ItemOutcome] = Field(default_factory=list)
    remediation: str = ""  # the verifier's own advice to the agent (LLM backend)
    raw: str | None = None
    usage: GuardUsage = Field(default_factory=GuardUsage)
    failure: str | None = None  # set when the verifier produced no usable verdict
