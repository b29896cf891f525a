"""`workflow`, `workflow-raw`, `workflow-self`: PolicyGuide and its two ablations."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel

from tauguard_strategies.workflow.options import WorkflowAblationOptions, WorkflowOptions
from tauguard_strategies.workflow.session import WorkflowSession
from tauguard.strategy_api.guard import GuardSession, SessionContext, Strategy


class WorkflowStrategy(Strategy):
    """PolicyGuide: workflow graph + code-owned request state; guidance at user turns, intercept on unreached authorization (LLM verifier with --guard-llm)."""

    options_model: ClassVar[type[BaseModel]] = WorkflowOptions
    session_class = WorkflowSession
    options: WorkflowOptions
    variant: ClassVar[Literal["graph", "raw", "self"] | None] = None  # set by the ablations

    def __init__(self, options: BaseModel | dict[str, Any] | None = None) -> None:
        super().__init__(options)
        if self.variant is not None:  # an ablation: its options plus its fixed variant
            self.options = WorkflowOptions(**self.options.model_dump(), variant=self.variant)

    def new_session(self, context: SessionContext) -> GuardSession:
        return WorkflowSession(context, self.options)


class WorkflowRawStrategy(WorkflowStrategy):
    """PolicyGuide-Raw ablation: the raw policy instead of the graph, same verifier and schedule."""

    options_model = WorkflowAblationOptions
    variant = "raw"


class WorkflowSelfStrategy(WorkflowStrategy):
    """PolicyGuide-Self ablation: the graph in the agent's prompt, no external verifier or intercept."""

    options_model = WorkflowAblationOptions
    variant = "self"
