"""`workflow`: PolicyGuide-style workflow guide (shared/papers/workflow-guide_policyguide.md)."""

from tauguard_strategies.workflow.strategy import WorkflowRawStrategy, WorkflowSelfStrategy, WorkflowStrategy

__all__ = ["WorkflowRawStrategy", "WorkflowSelfStrategy", "WorkflowStrategy"]
