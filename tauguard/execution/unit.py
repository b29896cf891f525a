"""The (task, trial) unit of work: a small picklable descriptor sent to workers.

Imports neither tau2 nor litellm, so the parent can plan and resume cheaply.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class UnitSpec(BaseModel):
    """Everything a worker needs to run one simulation."""

    run_id: str
    domain: str
    split: str
    task_id: str
    trial: int
    seed: int  # the run seed; the trial's seed derives from it
    strategy: str
    strategy_options: dict[str, Any] = Field(default_factory=dict)
    agent_llm: str
    user_llm: str
    guard_llm: str | None = None
    llm_args: dict[str, dict[str, Any]] = Field(default_factory=dict)
    max_steps: int
    max_errors: int
    max_guard_retries: int
    fault_profile: dict[str, Any]
    attack: dict[str, Any] | None = None  # {tactic, set, llm}: tauguard.attacks.runtime
    sim_feedback: str = "feedback"  # the sim agent's reaction to guards (tauguard.sim.reaction)
    verbose: bool = False
    # The run's process: a worker started by it exits when it dies (see processes.exit_with_parent).
    parent_pid: int | None = None
    # Provider discipline (real LLMs only): {model: [rpm, tpm?]}, split over ``rate_share``
    # processes; retries before the unit becomes an infrastructure error.
    rate_limits: dict[str, list[float]] = Field(default_factory=dict)
    rate_share: int = 1
    max_retries: int = 5
    cache: str | None = None  # --cache: directory of stored completions
    no_key: bool = False  # the api_base servers need no key (config no_key)

    @property
    def key(self) -> tuple[str, str, int]:
        """The unit's identity within a run."""
        return (self.domain, self.task_id, self.trial)

    @property
    def trial_seed(self) -> int:
        """The seed given to tau2's orchestrator (and LLM calls) for this trial."""
        return self.seed * 1000 + self.trial


def by_task(units: list[UnitSpec]) -> list[list[UnitSpec]]:
    """Units grouped by (domain, task), in first-seen order: a worker given a task's units
    computes the task's caches (gold side, sim plan) once for all its trials."""
    groups: dict[tuple[str, str], list[UnitSpec]] = {}
    for unit in units:
        groups.setdefault((unit.domain, unit.task_id), []).append(unit)
    return list(groups.values())


def deal(units: list[UnitSpec], shares: int) -> list[list[UnitSpec]]:
    """Units dealt by task over ``shares`` (all trials of a task in one share); empty shares dropped."""
    out: list[list[UnitSpec]] = [[] for _ in range(shares)]
    for i, group in enumerate(by_task(units)):
        out[i % shares].extend(group)
    return [share for share in out if share]
