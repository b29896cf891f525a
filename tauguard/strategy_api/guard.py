"""The guard hook contract: what a strategy may do around the inner agent.

A strategy wraps the inner agent (LLM or sim) with optional hooks, all receiving the
conversation so far as :class:`~tauguard.strategy_api.conversation.Conversation`:

- ``on_user_turn``: after each user message, may return guidance text for the agent;
- ``before_write``: before each WRITE tool call (tau2's own tool type), returns a
  :class:`GuardDecision`. Anything but ALLOW keeps the call from the environment; the
  inner agent gets the decision as that call's error result;
- ``after_tool``: after each tool result (observe only);
- ``render_context``: extra context placed in an LLM agent's prompt before each call.

This module imports neither tau2 nor litellm.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from enum import Enum
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from tauguard.strategy_api.conversation import Conversation, ConversationEvent, ToolCallView


class Verdict(str, Enum):
    """Outcome of a gate."""

    ALLOW = "ALLOW"
    VERIFY = "VERIFY"  # a required fact or step is missing: read or ask first
    REVISE = "REVISE"  # an argument conflicts with observed facts; a compliant variant exists
    BLOCK = "BLOCK"  # the request itself is not permitted


class GuardUsage(BaseModel):
    """Model usage of one hook firing (zero for deterministic guards)."""

    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0

    def __add__(self, other: "GuardUsage") -> "GuardUsage":
        return GuardUsage(
            llm_calls=self.llm_calls + other.llm_calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cost=self.cost + other.cost,
        )


class ReadRequest(BaseModel):
    """A read a VERIFY decision asks for before the write may go ahead.

    ``arguments`` is None when they are the agent's to supply (e.g. an email the user gives).
    """

    tool: str
    arguments: dict[str, Any] | None = None
    why: str = ""

    def key(self) -> str:
        """What makes two requests the same read: the tool and its arguments (not ``why``)."""
        return self.tool + json.dumps(self.arguments, sort_keys=True, default=str)

    def describe(self) -> str:
        """``tool(k=v, ...)``, or ``tool(...)`` when the arguments are the agent's to supply."""
        if self.arguments is None:
            return f"{self.tool}(...)"
        args = ", ".join(f"{k}={v!r}" for k, v in self.arguments.items())
        return f"{self.tool}({args})"


class GuardDecision(BaseModel):
    """A gate's decision on one proposed WRITE call."""

    verdict: Verdict
    reason: str = ""
    remediation: str = ""
    rule_id: str | None = None
    # Facts the decision used (e.g. ledger values), for audit and for show/probes.
    evidence: dict[str, Any] = Field(default_factory=dict)
    # For REVISE: the compliant arguments, when the guard can name them.
    revised_arguments: dict[str, Any] | None = None
    # For VERIFY: the reads that would supply the missing facts, when the guard can name them.
    required_reads: list[ReadRequest] = Field(default_factory=list)
    usage: GuardUsage = Field(default_factory=GuardUsage)
    # Raw model output for LLM-backed guards (always kept, also on parse failures).
    raw: str | None = None

    @classmethod
    def allow(cls, reason: str = "") -> "GuardDecision":
        """An ALLOW decision."""
        return cls(verdict=Verdict.ALLOW, reason=reason)

    def as_tool_error(self) -> str:
        """The text the inner agent receives as the held call's error result."""
        parts = [f"GUARD {self.verdict.value}"]
        if self.rule_id:
            parts[0] += f" [{self.rule_id}]"
        parts[0] += ": the call was NOT executed."
        if self.reason:
            parts.append(f"Reason: {self.reason}")
        if self.remediation:
            parts.append(f"To proceed: {self.remediation}")
        return " ".join(parts)


# Text a guard puts in its rendered context while a user request is unfinished; the sim agent
# reads it where it would otherwise close the conversation (a premature stop).
OPEN_REQUEST_MARKER = "REQUEST STILL OPEN"

# How much a verdict holds a call: the most severe finding decides.
SEVERITY: dict[Verdict, int] = {Verdict.ALLOW: 0, Verdict.VERIFY: 1, Verdict.REVISE: 2, Verdict.BLOCK: 3}

# Evidence keys every combined decision carries; readers (sweeps, show, probes) use these
# names, never string literals.
FINDINGS_KEY = "findings"  # the held findings: rule_id, verdict, detail (and their evidence)
REQUIRED_READS_KEY = "required_reads"  # on VERIFY: the merged reads, as ReadRequest dumps


class RuleFinding(BaseModel):
    """One rule's judgement of a proposed call; guards of every kind report in this type.

    ALLOW means the rule holds (the finding then does not count); VERIFY a fact or dialogue
    step is missing (``required_reads`` names reads that would supply it); REVISE an
    argument conflicts with observed facts (``revised_arguments`` when a compliant variant
    is determined); BLOCK the request is not permitted. ``rule_id`` may be left empty by a
    rule function whose registry knows its id (the strategy fills it in).
    """

    rule_id: str = ""
    verdict: Verdict
    detail: str = ""  # what the guard observed, in words
    remediation: str = ""  # what would make the call compliant
    revised_arguments: dict[str, Any] | None = None
    required_reads: list[ReadRequest] = Field(default_factory=list)
    evidence: dict[str, Any] = Field(default_factory=dict)  # values this rule used

    def summary(self) -> dict[str, Any]:
        """The finding as listed under ``evidence[FINDINGS_KEY]``."""
        out: dict[str, Any] = {"rule_id": self.rule_id, "verdict": self.verdict.value, "detail": self.detail}
        if self.evidence:
            out["evidence"] = self.evidence
        return out


def held(findings: Iterable[RuleFinding]) -> list[RuleFinding]:
    """The findings that hold the call, most severe first (ties keep their order)."""
    return sorted((f for f in findings if f.verdict != Verdict.ALLOW), key=lambda f: -SEVERITY[f.verdict])


def merge_reads(findings: Iterable[RuleFinding]) -> list[ReadRequest]:
    """The findings' required reads in order, each read (tool and arguments) once."""
    merged: dict[str, ReadRequest] = {}
    for finding in findings:
        for read in finding.required_reads:
            merged.setdefault(read.key(), read)
    return list(merged.values())


def combine(
    findings: Iterable[RuleFinding], *, allow_reason: str = "", evidence: dict[str, Any] | None = None
) -> GuardDecision:
    """One decision from the findings of every rule a guard checked.

    The most severe finding decides the verdict and the rule id (the first of equally severe
    findings in the order given). The reason lists every held finding; remediations are
    joined (most severe first, each once), followed by any merged read they do not already
    name; on VERIFY the merged reads are the decision's ``required_reads``; on REVISE the
    deciding finding's ``revised_arguments`` are the decision's. ``evidence`` (the guard's
    own keys) is extended with :data:`FINDINGS_KEY` and, on VERIFY, :data:`REQUIRED_READS_KEY`.
    With no held finding the decision is ALLOW with ``allow_reason``.
    """
    findings = list(findings)
    holding = held(findings)
    out: dict[str, Any] = dict(evidence or {})
    out[FINDINGS_KEY] = [f.summary() for f in findings if f.verdict != Verdict.ALLOW]
    if not holding:
        return GuardDecision(verdict=Verdict.ALLOW, reason=allow_reason, evidence=out)
    primary = holding[0]
    reads = merge_reads(holding)
    steps: list[str] = []
    for finding in holding:
        if finding.remediation and finding.remediation not in steps:
            steps.append(finding.remediation)
    remediation = "; ".join(steps)
    unnamed = [r.describe() for r in reads if r.describe() not in remediation]
    if unnamed:
        remediation = (remediation + "; " if remediation else "") + "read first: " + ", ".join(unnamed)
    verify = primary.verdict == Verdict.VERIFY
    if verify:
        out[REQUIRED_READS_KEY] = [r.model_dump() for r in reads]
    return GuardDecision(
        verdict=primary.verdict,
        rule_id=primary.rule_id or None,
        reason="; ".join(f"[{f.rule_id}] {f.detail}" if f.rule_id else f.detail for f in holding),
        remediation=remediation,
        evidence=out,
        revised_arguments=primary.revised_arguments if primary.verdict == Verdict.REVISE else None,
        required_reads=reads if verify else [],
    )


# Rule id prefix of decisions a guard made because it failed (an exception, a malformed or
# missing model answer, a timeout), as opposed to decisions about the call. Such events
# count towards a run's guard error rate.
GUARD_ERROR_RULE = "guard.error"

HookName = Literal["user_turn", "before_write", "after_tool", "retry_exhausted"]


class GuardEvent(BaseModel):
    """One hook firing, as recorded in a trial record."""

    hook: HookName
    step: int  # index of the conversation event the hook fired at
    tool_call: ToolCallView | None = None
    verdict: Verdict | None = None
    reason: str = ""
    remediation: str = ""
    rule_id: str | None = None
    evidence: dict[str, Any] = Field(default_factory=dict)
    guidance: str | None = None
    latency_s: float = 0.0
    usage: GuardUsage = Field(default_factory=GuardUsage)
    raw: str | None = None
    fault_id: str | None = None  # set when the gated call carried an injected fault

    @property
    def is_guard_error(self) -> bool:
        """Whether the guard failed here (see :data:`GUARD_ERROR_RULE`)."""
        return self.rule_id is not None and self.rule_id.startswith(GUARD_ERROR_RULE)


class SessionContext(BaseModel):
    """What a strategy knows about the simulation it guards (never the gold plan)."""

    domain: str
    task_id: str
    policy: str
    tool_types: dict[str, str]  # agent tool name -> READ | WRITE | THINK | GENERIC
    user_tool_types: dict[str, str] = Field(default_factory=dict)
    guard_llm: str | None = None
    guard_llm_args: dict[str, Any] = Field(default_factory=dict)


class GuardSession:
    """Per-simulation guard state. Override only the hooks a strategy needs."""

    def on_user_turn(self, message: ConversationEvent, conversation: Conversation) -> str | None:
        """Called after each user text message; may return guidance for the agent."""
        return None

    def before_write(self, call: ToolCallView, conversation: Conversation) -> GuardDecision:
        """Called before each WRITE tool call of the agent.

        ``conversation`` ends with the calls before ``call`` in its agent message, issued and not
        yet executed (:meth:`~tauguard.strategy_api.conversation.Conversation.pending_calls`)."""
        return GuardDecision.allow()

    def after_tool(self, result: ConversationEvent, conversation: Conversation) -> None:
        """Called after each tool result the agent receives."""

    def render_context(self) -> str | None:
        """Extra context rendered into an LLM agent's prompt before each model call."""
        return None

    def turn_details(self) -> dict[str, Any]:
        """Details of the last ``on_user_turn`` firing for its guard event: any of ``usage``
        (GuardUsage), ``evidence``, ``rule_id``, ``reason``, ``raw``. Empty: nothing to record."""
        return {}


class NoOptions(BaseModel):
    """The options model of a strategy that takes none."""

    model_config = ConfigDict(extra="forbid")


# The hooks a session may override, in the order they fire around a call.
HOOKS: tuple[str, ...] = ("on_user_turn", "before_write", "after_tool", "render_context")


class Strategy:
    """A guarding strategy: a factory of per-simulation guard sessions.

    A subclass declares, once, everything ``tauguard strategies`` shows:

    - its description: the first line of the class docstring;
    - ``session_class``: the :class:`GuardSession` subclass :meth:`new_session` returns; its
      hooks are the GuardSession methods it overrides (None: no session, no hooks);
    - ``options_model``: a pydantic model of its options with ``extra="forbid"``; the
      validated instance is ``self.options`` (unknown or ill-typed options are rejected
      before any work);
    - ``hidden``: True for test-only strategies, left out of the default listing.

    Its name is the name it is registered under (entry-point group ``tauguard.strategies``).
    """

    options_model: ClassVar[type[BaseModel]] = NoOptions
    session_class: ClassVar[type[GuardSession] | None] = None
    hidden: ClassVar[bool] = False

    def __init__(self, options: BaseModel | dict[str, Any] | None = None) -> None:
        if isinstance(options, self.options_model):
            self.options: Any = options
        else:
            raw = options.model_dump() if isinstance(options, BaseModel) else dict(options or {})
            self.options = self.options_model.model_validate(raw)

    @classmethod
    def summary(cls) -> str:
        """The one-line description (the docstring's first line)."""
        lines = (cls.__doc__ or "").strip().splitlines()
        return lines[0].strip() if lines else ""

    @classmethod
    def hooks(cls) -> tuple[str, ...]:
        """The hooks the strategy's session implements (overrides of GuardSession's)."""
        session = cls.session_class
        if session is None:
            return ()
        return tuple(h for h in HOOKS if getattr(session, h) is not getattr(GuardSession, h))

    def check_domains(self, domains: list[str]) -> None:
        """Reject options that do not fit the run's domains, before any work (raise a ValueError
        with a one-line message, e.g. a tool name that is not a tool of the domain)."""

    def new_session(self, context: SessionContext) -> GuardSession | None:
        """A fresh guard session for one simulation; None means no hooks at all."""
        return None


def refusal_text(name: str, reason: str) -> str:
    """What an agent tells the user when a guard holds a call (the wrapper and the sim say it)."""
    text = f"I'm sorry, but I cannot perform {name}."
    if reason:
        text += f" {reason}"
    return text
