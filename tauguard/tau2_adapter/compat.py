"""The one place tauguard touches tau2's internals.

Everything tau2-specific that tauguard relies on (domain environment constructors, task
loading, tool types, message classes, base agent/user classes, orchestrator, evaluator
pieces) is imported here (its fast names through :mod:`tauguard.tau2_adapter.tau2_names`, which
prepares the import), so a change in tau2 is mended in the adapter. Imports that pull in
litellm (the orchestrator, LLMAgent, UserSimulator: ~5 s) are functions, not module-level.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, Callable

from tauguard.errors import TauguardInputError
# tau2's import is prepared (cost map, log level) in tau2_names, the base cow_env shares.
from tauguard.tau2_adapter.tau2_names import (
    DOMAINS,
    OUT_OF_SCOPE,
    STOP,
    TRANSFER,
    Action,
    AssistantMessage,
    Environment,
    Message,
    MultiToolMessage,
    Results,
    RewardInfo,
    RewardType,
    SimulationRun,
    StructuredUserInstructions,
    SystemMessage,
    Task,
    TerminationReason,
    ToolCall,
    ToolMessage,
    ToolType,
    UserMessage,
    UserState,
    _env_module,
    env_module,
)
from tauguard.tau2_adapter.cow_env import fresh_environment

__all__ = [
    "AssistantMessage", "Message", "MultiToolMessage", "SystemMessage", "ToolCall", "ToolMessage",
    "UserMessage", "Results", "RewardInfo", "SimulationRun", "TerminationReason", "Action", "RewardType",
    "StructuredUserInstructions", "Task", "Environment", "ToolType", "STOP", "TRANSFER",
    "OUT_OF_SCOPE", "UserState", "DOMAINS", "env_module",
]


def make_environment(domain: str) -> Environment:
    """A fresh environment of ``domain`` in its pristine state (copy-on-write, see ``cow_env``)."""
    return fresh_environment(domain)


def environment_constructor(domain: str) -> Callable[..., Environment]:
    """A constructor with tau2's signature (``solo_mode`` keyword), backed by the cache."""

    def construct(solo_mode: bool = False) -> Environment:
        if solo_mode:
            raise ValueError("tauguard does not run tau2's solo mode")
        return make_environment(domain)

    return construct


def task_environment(domain: str, task: Task) -> Environment:
    """A pristine environment with the task's initial state applied (as the orchestrator does)."""
    env = make_environment(domain)
    init = task.initial_state
    env.set_state(
        initialization_data=init.initialization_data if init else None,
        initialization_actions=init.initialization_actions if init else None,
        message_history=[],
    )
    return env


@lru_cache(maxsize=None)
def task_splits(domain: str) -> dict[str, list[str]]:
    """The domain's split_tasks.json: split name -> task ids."""
    return dict(_env_module(domain).get_tasks_split())


@lru_cache(maxsize=None)
def load_tasks(domain: str, split: str) -> tuple[Task, ...]:
    """The tasks of one split of one domain, in tau2's order."""
    splits = task_splits(domain)
    if split not in splits:
        raise TauguardInputError(f"unknown split '{split}' for {domain}; allowed: {', '.join(splits)}")
    return tuple(_env_module(domain).get_tasks(split))


@lru_cache(maxsize=None)
def tool_types(domain: str) -> tuple[dict[str, str], dict[str, str]]:
    """(agent tool -> type, user tool -> type), types as READ / WRITE / THINK / GENERIC."""
    env = make_environment(domain)
    agent = {t.name: _type_name(env.tools.tool_type(t.name)) for t in env.get_tools()}
    user: dict[str, str] = {}
    if env.user_tools is not None:
        user = {t.name: _type_name(env.user_tools.tool_type(t.name)) for t in env.get_user_tools()}
    return agent, user


class ToolSchema:
    """A tool as an LLM agent or user sees it: its name and OpenAI schema, computed once.

    τ²'s LLM roles use their tools only for these two (calls go through the environment),
    while building the ``Tool`` objects costs ~15 ms of pydantic model creation per
    simulation and their ``openai_schema`` property re-derives the JSON schema on every
    completion.
    """

    __slots__ = ("name", "_schema")

    def __init__(self, tool: Any) -> None:
        self.name: str = tool.name
        self._schema = json.dumps(tool.openai_schema)

    @property
    def openai_schema(self) -> dict[str, Any]:
        """The tool's OpenAI function schema (a fresh dict: callers may change theirs)."""
        schema: dict[str, Any] = json.loads(self._schema)
        return schema


@lru_cache(maxsize=None)
def _tool_lists(domain: str) -> tuple[tuple[ToolSchema, ...], tuple[ToolSchema, ...] | None]:
    env = make_environment(domain)
    agent = tuple(ToolSchema(t) for t in env.get_tools())
    user = tuple(ToolSchema(t) for t in env.get_user_tools()) if env.user_tools is not None else None
    return agent, user


def agent_tools(domain: str) -> list[Any]:
    """The agent's tools of ``domain`` for an LLM agent (:class:`ToolSchema`), built once per process."""
    return list(_tool_lists(domain)[0])


def user_tools(domain: str) -> list[Any] | None:
    """The user simulator's tools of ``domain`` (telecom), shared like :func:`agent_tools`."""
    user = _tool_lists(domain)[1]
    return None if user is None else list(user)


def _type_name(tool_type: Any) -> str:
    return str(getattr(tool_type, "name", tool_type)).upper()


@lru_cache(maxsize=None)
def policy_text(domain: str) -> str:
    """The domain policy the agent receives."""
    policy: str = make_environment(domain).get_policy()  # τ² is untyped
    return policy


def is_agent_write(domain: str, action: Action) -> bool:
    """Whether a gold action is an agent-side WRITE (tau2's own tool type)."""
    agent_types, _ = tool_types(domain)
    return action.requestor == "assistant" and agent_types.get(action.name) == "WRITE"


def is_policy_violation_task(domain: str, task: Task) -> bool:
    """A task whose gold plan has no agent-side WRITE: the right outcome is to not act."""
    actions = (task.evaluation_criteria.actions if task.evaluation_criteria else None) or []
    return not any(is_agent_write(domain, a) for a in actions)


# --- heavy imports (litellm), only on the paths that run conversations -------------------


def orchestrator_class() -> Any:
    """tau2's Orchestrator (imports litellm)."""
    from tau2.orchestrator.orchestrator import Orchestrator

    return Orchestrator


def base_user_class() -> Any:
    """tau2's BaseUser."""
    from tau2.user.base import BaseUser

    return BaseUser


def llm_agent_class() -> Any:
    """tau2's LLMAgent."""
    from tau2.agent.llm_agent import LLMAgent

    return LLMAgent


def user_simulator_class() -> Any:
    """tau2's UserSimulator."""
    from tau2.user.user_simulator import UserSimulator

    return UserSimulator


def evaluate_simulation_reference(simulation: SimulationRun, task: Task, domain: str) -> RewardInfo:
    """tau2's own ``evaluate_simulation`` (ALL), the reference our cached evaluator must match."""
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation

    return evaluate_simulation(
        simulation=simulation, task=task, evaluation_type=EvaluationType.ALL, solo_mode=False, domain=domain
    )


def llm_request_messages() -> Callable[[list[Message]], list[dict[str, Any]]]:
    """tau2's conversion of its messages into a completion's ``messages`` (imports litellm)."""
    from tau2.utils.llm_utils import to_litellm_messages

    convert: Callable[[list[Message]], list[dict[str, Any]]] = to_litellm_messages
    return convert


def llm_empty_answer_retries() -> int:
    """How often tau2's ``generate`` asks again after an empty answer (no text, no tool call)."""
    from tau2.config import DEFAULT_MAX_RETRIES

    return int(DEFAULT_MAX_RETRIES)
