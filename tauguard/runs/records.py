"""Persisted run data: the manifest and one record per (task, trial).

Schema of ``runs/<run-id>/``:
- ``manifest.json``: :class:`Manifest`;
- ``simulations.jsonl``: one :class:`TrialRecord` per line, appended and flushed as each
  (task, trial) finishes. A resumed run appends; the loader keeps the last record of each
  (domain, task_id, trial) and tolerates a truncated last line. Lines are written by
  :func:`record_line`: fields at their default are left out, and the conversation (τ²'s
  ``SimulationRun``, ~80 % of a record) is stored zlib-compressed and base64-encoded under
  ``simulation_z`` (``simulation`` in plain runs and in runs written before schema 2, which
  load unchanged). Loading with ``context={"conversation": False}`` skips the conversation
  without decompressing it (``show``, ``compare``, ``check`` and resume need none).

This module imports neither tau2 nor litellm.
"""

from __future__ import annotations

import base64
import json
import zlib
from typing import Any, Callable, Literal

from pydantic import BaseModel, Field, ValidationInfo, model_validator

from tauguard.strategy_api.guard import GuardEvent
from tauguard.process.model import ProcessReport
from tauguard.usage_ledger import RoleUsage  # the type of TrialRecord.usage (the ledger's per-role account)

SCHEMA_VERSION = 2  # 2: defaults left out, conversation compressed (simulation_z)
# The run folder's two data files (the store writes them, the outcome index reads the records).
MANIFEST = "manifest.json"
RECORDS = "simulations.jsonl"
CONVERSATION_Z = "simulation_z"

# The one label of output made with the built-in sim model (manifest, summary, compare,
# check, probes): simulated numbers are never presented as findings about real LLMs.
SIMULATION_NOTE = (
    "SIMULATION: made with the built-in sim model (a simulated agent and/or user); "
    "these numbers describe the simulator, not findings about real LLMs."
)
SUCCESS_TOLERANCE = 1e-6  # tau2's is_successful: |reward - 1| <= 1e-6


def is_success(reward: float | None) -> bool:
    """tau2's success criterion: reward equal to 1 within 1e-6."""
    return reward is not None and (1 - SUCCESS_TOLERANCE) <= reward <= (1 + SUCCESS_TOLERANCE)


# The roles whose LLM usage a record books, in display order (tauguard.llm_call).
USAGE_ROLES = ("agent", "user", "guard", "attacker")


class InjectedFault(BaseModel):
    """A fault the sim agent was scheduled to make in this trial."""

    fault_id: str
    fault_class: str  # A / T / D / W / PV
    tool: str | None = None
    step: int | None = None  # conversation event index where it took effect; None = not reached
    applied: bool = False  # False when the trial ended before it, or it did not apply
    intercepted: bool | None = None  # detected: a guard held the faulty call at least once (None: not applied)
    # The mistake reached the environment: the faulty (or forbidden) call ran, an omitted read or
    # confirmation stood when the write ran, the premature stop closed the conversation. False:
    # prevented. None: not applied, or recorded before this field existed.
    reached: bool | None = None
    detail: dict[str, Any] = Field(default_factory=dict)


class AttackInfo(BaseModel):
    """The adversarial user of an attacked trial (``tauguard run --attack``)."""

    tactic: str
    attack_set: str
    target: dict[str, Any]  # tool, pattern (wildcards as "*"), clause id, premises
    yielded: bool | None = None  # sim agent only: whether it was drawn to give in
    judgement: str = ""  # why attack_success is True / False / unknown


class TrialRecord(BaseModel):
    """The outcome of one (task, trial) simulation."""

    schema_version: int = SCHEMA_VERSION
    run_id: str
    domain: str
    task_id: str
    trial: int
    seed: int
    strategy: str
    simulated: bool  # True when either agent or user is the built-in sim model
    policy_violation_task: bool  # gold plan has no agent-side WRITE
    # τ²'s rewards are within [0, 1] (up to its success tolerance); NaN or an out-of-range value
    # makes the line unparsable (skipped with a warning), never a figure.
    reward: float | None = Field(default=None, ge=0.0, le=1.0 + SUCCESS_TOLERANCE, allow_inf_nan=False)
    success: bool | None = None
    termination_reason: str | None = None
    # Adversarial-user outcome: True/False when judged, None when unknown or not attacked.
    attack_success: bool | None = None
    attacked: bool = False
    attack: AttackInfo | None = None
    guard_events: list[GuardEvent] = Field(default_factory=list)
    faults: list[InjectedFault] = Field(default_factory=list)
    usage: dict[str, RoleUsage] = Field(default_factory=dict)  # agent / user / guard / attacker
    duration_s: float = 0.0
    error: str | None = None  # infrastructure error; such trials are excluded from metrics
    simulation: dict[str, Any] | None = None  # tau2 SimulationRun, JSON-dumped
    # Process rubric of the trace (tauguard.process); None on older records: computed on load.
    process: ProcessReport | None = None

    @property
    def key(self) -> tuple[str, str, int]:
        """The identity of a trial within a run."""
        return (self.domain, self.task_id, self.trial)

    @model_validator(mode="before")
    @classmethod
    def _conversation(cls, data: Any, info: ValidationInfo) -> Any:
        # Stored lines carry the conversation compressed; loaders that need no
        # conversation pass context={"conversation": False} and never decompress it.
        if not isinstance(data, dict):
            return data
        skip = info.context is not None and info.context.get("conversation") is False
        if CONVERSATION_Z not in data and not (skip and data.get("simulation") is not None):
            return data
        data = dict(data)
        blob = data.pop(CONVERSATION_Z, None)
        if skip:
            data["simulation"] = None
        elif blob is not None:
            data["simulation"] = json.loads(zlib.decompress(base64.b64decode(blob)))
        return data


def record_line(record: TrialRecord, compress: bool = True, scrub: Callable[[str], str] | None = None) -> str:
    """One ``simulations.jsonl`` line (no newline): defaults left out, conversation compressed.

    ``scrub`` cleans text before it is written; the conversation is scrubbed before it is
    compressed (a secret inside compressed bytes would escape a scrub of the line).
    """
    clean = scrub or (lambda text: text)
    data = record.model_dump(mode="json", exclude_defaults=True, exclude={"simulation"})
    data["schema_version"] = record.schema_version
    conversation = None
    if record.simulation is not None:
        conversation = clean(json.dumps(record.simulation, separators=(",", ":"), ensure_ascii=False))
    line = clean(json.dumps(data, separators=(",", ":"), ensure_ascii=False))
    if conversation is None:
        return line
    if compress:
        blob = base64.b64encode(zlib.compress(conversation.encode("utf-8"), 6)).decode("ascii")
        return f'{line[:-1]},"{CONVERSATION_Z}":"{blob}"}}'
    return f'{line[:-1]},"simulation":{conversation}}}'


# "incomplete": every unit ran, some ended in an infrastructure error (a resume re-runs them).
RunStatus = Literal["running", "completed", "incomplete", "interrupted", "failed"]


class Manifest(BaseModel):
    """What a run was asked to do, with what, and how it went."""

    schema_version: int = SCHEMA_VERSION
    run_id: str
    status: RunStatus = "running"
    # Why an unfinished run stopped on its own (e.g. its --max-cost was reached).
    stop_reason: str | None = None
    # Set on runs that used the built-in sim model, so the file itself says so.
    note: str | None = None
    created_at: str
    updated_at: str
    simulated: bool
    strategy: str
    strategy_options: dict[str, Any] = Field(default_factory=dict)
    domains: list[str]
    split: str
    task_ids: dict[str, list[str]]  # domain -> task ids
    trials: int
    agent_llm: str
    user_llm: str
    guard_llm: str | None = None
    llm_args: dict[str, dict[str, Any]] = Field(default_factory=dict)  # secrets redacted
    seed: int
    max_steps: int
    fault_profile: dict[str, Any] = Field(default_factory=dict)
    # How the sim agent reacted to guards: "feedback" (decision and conversation only) or
    # "oracle" (from the gold plan: an upper bound); None for a run without the sim agent.
    sim_feedback: str | None = None
    config: dict[str, Any] = Field(default_factory=dict)  # resolved config, secrets redacted
    versions: dict[str, str] = Field(default_factory=dict)  # of the latest session (a resume updates them)
    # The versions of earlier sessions that differ from the next one's, oldest first: a resumed
    # run's records then mix versions.
    earlier_versions: list[dict[str, str]] = Field(default_factory=list)
    git_commit: str | None = None
    wall_time_s: float = 0.0
    counts: dict[str, int] = Field(default_factory=dict)
    # "run": made by `tauguard run`; "imported": a τ² results file (`tauguard import`), whose
    # provenance (source path, sha256, τ² commit, excluded tasks) is in ``provenance``.
    source: Literal["run", "imported"] = "run"
    provenance: dict[str, Any] = Field(default_factory=dict)

    @property
    def expected_units(self) -> int:
        """Number of (task, trial) units the run should contain."""
        return sum(len(ids) for ids in self.task_ids.values()) * self.trials
