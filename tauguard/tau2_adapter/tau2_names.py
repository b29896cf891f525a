"""tau2's import, prepared, and its fast names: the base the other adapter modules build on.

Importing tau2 needs two things first: litellm's local cost map (no download at import) and
tau2's DEBUG logging silenced. They are done here, once, before the first tau2 import; the
adapter's modules import this one (directly, or through :mod:`tauguard.tau2_adapter.compat`, which
re-exports these names) before any tau2 import of their own. Only imports without litellm are here.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

from tauguard.errors import TauguardInputError

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from loguru import logger as _loguru  # noqa: E402

# tau2 logs every tool response at DEBUG to stderr; a run's own progress output is what the
# user should see. `tauguard run --verbose` re-enables it.
_loguru.disable("tau2")

# Fast imports (no litellm): data models, environments, env/action/communicate evaluators.
from tau2.data_model.message import (  # noqa: E402
    AssistantMessage,
    Message,
    MultiToolMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from tau2.data_model.simulation import Results, RewardInfo, SimulationRun, TerminationReason  # noqa: E402
from tau2.data_model.tasks import Action, RewardType, StructuredUserInstructions, Task  # noqa: E402
from tau2.environment.environment import Environment  # noqa: E402
from tau2.environment.toolkit import ToolType  # noqa: E402
from tau2.user.base import OUT_OF_SCOPE, STOP, TRANSFER, UserState  # noqa: E402

from tauguard.domains import DOMAINS  # noqa: E402  (the one list: the domain folders)

__all__ = [
    "AssistantMessage", "Message", "MultiToolMessage", "SystemMessage", "ToolCall", "ToolMessage",
    "UserMessage", "Results", "RewardInfo", "SimulationRun", "TerminationReason", "Action", "RewardType",
    "StructuredUserInstructions", "Task", "Environment", "ToolType", "STOP", "TRANSFER",
    "OUT_OF_SCOPE", "UserState", "DOMAINS", "env_module",
]


def _env_module(domain: str) -> Any:
    if domain not in DOMAINS:
        raise TauguardInputError(f"unknown domain '{domain}'; allowed: {', '.join(DOMAINS)}")
    return importlib.import_module(f"tau2.domains.{domain}.environment")


def env_module(domain: str) -> Any:
    """The ``tau2.domains.<domain>.environment`` module."""
    return _env_module(domain)
