"""Deterministic checks by id (ToolGuard-style compiled guards), imported for registration.

``common`` holds the checks every domain may use; a domain's own checks, if it needs any, are the
module ``checks/<domain>.py``, found by name (optional: a domain without one uses the common checks).
"""

from tauguard_strategies.action_guard.checks import common  # noqa: F401  (registers)
from tauguard_strategies.action_guard.checks.base import CHECKS, CheckContext, CheckResult, check
from tauguard_strategies.domain_modules import load_domain_modules

# Registration: importing a domain's module registers its checks.
load_domain_modules(__name__)

__all__ = ["CHECKS", "CheckContext", "CheckResult", "check"]
