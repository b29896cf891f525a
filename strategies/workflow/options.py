"""Options of the workflow strategies (``--strategy-option KEY=VALUE``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class WorkflowOptions(BaseModel):
    """Strategy options; an unknown key is an error naming the allowed ones."""

    model_config = ConfigDict(extra="forbid")

    variant: Literal["graph", "raw", "self"] = Field(
        default="graph",
        description="graph: the guide (PolicyGuide); raw: the raw policy instead of the graph; self: graph in the agent's prompt, no external verifier",
    )
    failure_policy: Literal["closed", "open"] = Field(
        default="closed",
        description="when the LLM verifier fails: closed leaves its dialogue nodes unmet (writes needing them are held), open falls back to the deterministic judge",
    )
    dialogue: Literal["compiled", "llm"] = Field(
        default="compiled",
        description="who judges an explicit yes for the tracker: the compiled dialogue judge, or the LLM one (needs --guard-llm)",
    )
    intercept: bool = Field(default=True, description="hold a write whose authorization node is not reached (VERIFY with the next step)")


class WorkflowAblationOptions(BaseModel):
    """Options of ``workflow-raw`` and ``workflow-self``: the ablation fixes the variant, so
    ``variant`` is not an option of theirs (a given one is an error, never silently replaced)."""

    model_config = ConfigDict(extra="forbid")

    failure_policy: Literal["closed", "open"] = WorkflowOptions.model_fields["failure_policy"]  # type: ignore[assignment]
    intercept: bool = WorkflowOptions.model_fields["intercept"]  # type: ignore[assignment]
