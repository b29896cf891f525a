"""Options of the action-guard strategy (``--strategy-opt`` / SessionContext.options)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

# PolicyGuard's rule (Kang et al., 2026; as given in this project's issue 6): after five
# held calls of the same tool the agent is told to transfer to a human.
DEFAULT_MAX_BLOCKS = 5


class ActionGuardOptions(BaseModel):
    """Strategy options; unknown keys are ignored (they may belong to the runner)."""

    model_config = ConfigDict(extra="ignore")

    backend: Literal["auto", "compiled", "llm"] = "auto"  # auto: llm when --guard-llm is set
    failure_policy: Literal["closed", "open"] = "closed"
    # "allow": hold a call only on contradicting evidence, never for missing evidence
    # (a lenient, ToolGuard-like mode; the default verifies missing reads and asks).
    on_missing: Literal["verify", "allow"] = "verify"
    max_blocks_per_tool: int = Field(default=DEFAULT_MAX_BLOCKS, ge=1)
    skip_items: list[str] = Field(default_factory=list)  # fnmatch patterns of item ids

    @field_validator("skip_items", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [v.strip() for v in value.split(",") if v.strip()]
        return value
