"""Deterministic checks by id (ToolGuard-style compiled guards), imported for registration."""

from tauguard_strategies.action_guard.checks import airline, common, retail, telecom  # noqa: F401  (registers)
from tauguard_strategies.action_guard.checks.base import CHECKS, CheckContext, CheckResult, check

__all__ = ["CHECKS", "CheckContext", "CheckResult", "check"]
