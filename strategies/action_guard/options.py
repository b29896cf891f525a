"""Options of the action-guard strategy (``--strategy-option KEY=VALUE``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

# PolicyGuard's rule (Kang et al., 2026; as given in this project's issue 6): after five
# held calls of the same tool the agent is told to transfer to a human.
DEFAULT_MAX_BLOCKS = 5


class ActionGuardOptions(BaseModel):
    """Strategy options; an unknown key is an error naming the allowed ones."""

    model_config = ConfigDict(extra="forbid")

    backend: Literal["auto", "compiled", "llm"] = Field(
        default="auto", description="who verifies the checklist; auto: the LLM verifier when --guard-llm is set"
    )
    dialogue: Literal["compiled", "llm"] = Field(
        default="compiled",
        description="who judges the dialogue items (explicit yes, stated reasons) of the compiled checks: the compiled dialogue judge, or the LLM one (needs --guard-llm)",
    )
    failure_policy: Literal["closed", "open"] = Field(
        default="closed", description="when the verifier fails: closed holds the call (VERIFY), open allows it"
    )
    on_missing: Literal["verify", "allow"] = Field(
        default="verify",
        description="allow: hold a call only on contradicting evidence, never for missing evidence (ToolGuard-like)",
    )
    max_blocks_per_tool: int = Field(
        default=DEFAULT_MAX_BLOCKS, ge=1, description="held calls of one tool before the agent is told to transfer"
    )
    skip_items: list[str] = Field(
        default_factory=list, description="fnmatch patterns of checklist item ids not to check (comma-separated)"
    )

    @field_validator("skip_items", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [v.strip() for v in value.split(",") if v.strip()]
        return value
