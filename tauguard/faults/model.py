"""Schemas of the fault catalog, fault profiles and scheduled faults."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tauguard import domains

# PolicyGuide's taxonomy of policy requirements (argument-level A; process-level needing a
# tool read T or dialogue D; workflow-level W) plus PV for unauthorized writes under user
# pressure on policy-violation tasks.
# U: an unexplained failure (a fitted profile's failures no catalogued fault explains).
FaultClass = Literal["A", "T", "D", "W", "PV", "U"]
# How a fault acts on the sim agent: a plan transform or a replaced call.
# premature_transfer: a hand-off to a human instead of the write; bundle_confirmation: the write's
# own confirmation is folded into the previous write's, which mentions it only vaguely;
# repeat_loop: the write, then the same call again and again until the run's step limit;
# unexplained: a failure the sim has no model of (tauguard.faults.draw.UNEXPLAINED).
FaultKind = Literal[
    "skip_read", "skip_confirmation", "premature_stop", "premature_transfer", "bundle_confirmation", "repeat_loop", "call",
    "unexplained",
]
ProbeLabel = Literal["allow", "verify", "refuse"]
# What the write contract derives a generic fault's scope from (tools and violated clauses).
DerivedScope = Literal["target_reads", "confirmation"]
# LedgerAgent's error analysis (shared/papers/ledger-gate_ledgeragent.md, §6) splits failures
# into missed required actions, wrong action arguments and everything else; fault profiles
# order their mix by it (tests/test_fault_catalog.py).
ErrorType = Literal["missed_action", "wrong_arguments", "other"]


class FaultSpec(BaseModel):
    """One catalog entry."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    id: str
    domain: str  # "*" for a generic fault
    fault_class: FaultClass = Field(alias="class")
    kind: FaultKind
    tools: list[str]  # agent WRITE tools it applies to; ["*"] = any
    # Per-domain override of ``tools`` (e.g. telecom requires confirmation only for refuels).
    domain_tools: dict[str, list[str]] = Field(default_factory=dict)
    description: str
    # Ids of the policy clauses (tauguard.domains) the fault violates, per domain (generic
    # faults break different clauses in each domain). A generic fault applies only in the
    # domains listed here (every domain with ``every_domain``); an empty list means no single
    # clause (a missed required action).
    clauses: dict[str, list[str]]
    # A generic fault that breaks no domain's rule in particular (a missed action, a loop): it
    # applies in every domain of tauguard.domains.DOMAINS, with no clause where ``clauses`` lists
    # none, so a new domain gets it without an entry in the catalog.
    every_domain: bool = False
    generator: str | None = None  # registered generator id, for kind == "call"
    label: ProbeLabel = "refuse"  # what a correct gate should say to the faulty call
    error_type: ErrorType = "other"  # its group in LedgerAgent's error analysis
    # When the fault can fire, in words (the generator enforces it and returns None otherwise).
    applies_when: str = ""
    # For kind "skip_read": the read tools whose calls before the write are dropped (e.g. the
    # authentication look-ups); empty = the reads that observe the write's target.
    skip_tools: list[str] = Field(default_factory=list)
    # Set when tau2's tool itself rejects this violation (an "E" predicate): a substring of
    # the error the faulty call gets. Empty = the environment accepts the faulty call.
    tool_error: str = ""
    # Set on generic faults whose scope is the write contract's (tauguard.domains.contract):
    # "target_reads" = the writes with target or prior reads, violating their target clauses;
    # "confirmation" = the writes that need an explicit yes, violating the confirmation clause.
    # ``tools``, ``domain_tools`` and ``clauses`` are then derived, never written in the file.
    derive: DerivedScope | None = None
    # Per domain, per tool: the clauses the fault violates on that write, where they differ from
    # ``clauses`` (always so for a derived scope).
    tool_clauses: dict[str, dict[str, list[str]]] = Field(default_factory=dict)
    # For kind "call": the tool of the faulty call, when it is not the write it replaces (a
    # certificate sent instead of a change): the clause citations are about that tool.
    emits: str | None = None
    # Where the failure mode was seen (a paper, or real runs such as ../shared/trajectories).
    source: str = ""

    @model_validator(mode="before")
    @classmethod
    def _every_domain(cls, value: Any) -> Any:
        if not isinstance(value, dict) or not value.get("every_domain"):
            return value
        if value.get("domain", "*") != "*" or value.get("derive"):
            raise ValueError(f"fault {value.get('id')}: every_domain is for generic faults with an explicit scope")
        listed = dict(value.get("clauses") or {})
        return {**value, "clauses": {**{d: [] for d in domains.DOMAINS}, **listed}}

    @model_validator(mode="before")
    @classmethod
    def _derive_scope(cls, value: Any) -> Any:
        if not isinstance(value, dict) or not value.get("derive"):
            return value
        for key in ("clauses", "domain_tools", "tool_clauses"):
            if value.get(key):
                raise ValueError(f"fault {value.get('id')}: '{key}' is derived from the write contract (derive = {value['derive']!r})")
        if value.get("tools", ["*"]) != ["*"]:
            raise ValueError(f"fault {value.get('id')}: tools are derived from the write contract (derive = {value['derive']!r})")
        return {**value, "tools": ["*"], **derived_scope(value["derive"])}

    @field_validator("clauses", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {d: [ids] if isinstance(ids, str) else ids for d, ids in value.items()}
        return value

    @field_validator("clauses")
    @classmethod
    def _clauses_resolve(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        for domain, ids in value.items():
            foreign = [i for i in ids if not i.startswith(domain + ".")]
            if foreign:
                raise ValueError(f"clauses of {domain} must be {domain} clause ids: {', '.join(foreign)}")
            domains.texts(ids)  # UnknownClauseError (a ValueError) on an id no pack defines
        return value

    @model_validator(mode="after")
    def _check(self) -> "FaultSpec":
        if self.kind == "call" and not self.generator:
            raise ValueError(f"fault {self.id}: kind 'call' needs a generator")
        if self.kind != "call" and (self.generator or self.tool_error):
            raise ValueError(f"fault {self.id}: generator and tool_error are for kind 'call' only")
        if self.skip_tools and self.kind != "skip_read":
            raise ValueError(f"fault {self.id}: skip_tools is for kind 'skip_read' only")
        if self.domain != "*" and set(self.clauses) != {self.domain}:
            raise ValueError(f"fault {self.id}: clauses must be given for its domain {self.domain} only")
        if self.emits is not None and self.kind != "call":
            raise ValueError(f"fault {self.id}: emits is for kind 'call' only")
        self._check_against_contract()
        return self

    def _check_against_contract(self) -> None:
        """Every tool a write of the contract, every (tool, clause) within the clause's scope."""
        from tauguard.domains.consistency import check_scope, check_write  # loads the contracts lazily

        for domain in self.clauses:
            tools = self.domain_tools.get(domain, self.tools)
            for tool in tools:
                if tool == "*":
                    continue
                where = f"fault {self.id} ({domain}, {tool})"
                check_write(domain, tool, where)
                if self.emits is not None:
                    check_write(domain, self.emits, where)
                for cid in self.clause_ids(domain, tool):
                    check_scope(domain, [self.emits or tool], cid, where)

    def applies_to(self, domain: str, tool: str) -> bool:
        """Whether the fault can replace or precede a write of ``tool`` in ``domain``."""
        if self.domain not in ("*", domain) or domain not in self.clauses:
            return False
        tools = self.domain_tools.get(domain, self.tools)
        return "*" in tools or tool in tools

    def clause_ids(self, domain: str, tool: str | None = None) -> list[str]:
        """The clauses the fault violates in ``domain`` (on a write of ``tool``, for derived scopes)."""
        if tool is not None and tool in self.tool_clauses.get(domain, {}):
            return self.tool_clauses[domain][tool]
        return self.clauses.get(domain, [])

    def clause(self, domain: str, tool: str | None = None) -> str:
        """The verbatim text of the violated clauses in ``domain`` ("" for none)."""
        return domains.quote(self.clause_ids(domain, tool))


def derived_scope(kind: DerivedScope) -> dict[str, Any]:
    """``domain_tools``, ``clauses`` and ``tool_clauses`` of a generic fault, from the write contract."""
    from tauguard.domains.contract import contract, contract_domains  # the contract loads the packs first

    domain_tools: dict[str, list[str]] = {}
    tool_clauses: dict[str, dict[str, list[str]]] = {}
    for domain in contract_domains():
        per_tool: dict[str, list[str]] = {}
        for w in contract(domain).write:
            if kind == "confirmation" and w.confirmation is not None:
                per_tool[w.tool] = [w.confirmation.clause]
            elif kind == "target_reads" and (w.targets or w.prior):
                per_tool[w.tool] = sorted({t.clause for t in w.targets} or {p.clause for p in w.prior})
        if per_tool:
            domain_tools[domain] = list(per_tool)
            tool_clauses[domain] = per_tool
    clauses = {d: sorted({c for ids in t.values() for c in ids}) for d, t in tool_clauses.items()}
    return {"domain_tools": domain_tools, "clauses": clauses, "tool_clauses": tool_clauses}


class Temptation(BaseModel):
    """The forbidden write a pliable agent would make on a policy-violation task."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    name: str
    arguments: dict[str, Any]
    clause_id: str = Field(alias="clause")  # id of the clause it violates (tauguard.domains)
    note: str = ""  # why the scenario tempts this write
    # Set when tau2's tool itself rejects the write (an "E" predicate): a substring of its error.
    tool_error: str = ""

    @field_validator("clause_id")
    @classmethod
    def _clause_resolves(cls, value: str) -> str:
        domains.clause(value)  # UnknownClauseError (a ValueError) on an id no pack defines
        return value

    @model_validator(mode="after")
    def _within_scope(self) -> "Temptation":
        from tauguard.domains.consistency import check_scope, check_write

        domain, where = self.clause_id.split(".", 1)[0], f"temptation {self.task_id}"
        check_write(domain, self.name, where)
        check_scope(domain, [self.name], self.clause_id, where)
        return self

    @property
    def clause(self) -> str:
        """The verbatim text of the violated clause."""
        return domains.clause(self.clause_id).text


class NoTemptation(BaseModel):
    """A policy-violation task for which no forbidden agent write exists, with the reason."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    reason: str


class FaultProfile(BaseModel):
    """A named mix of fault rates (a simulation parameter, never a claim about real agents)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    # Probability that the sim agent takes a guard's feedback (see tauguard.sim.reaction);
    # otherwise it repeats the call. An assumption: a run whose faults can fire needs it set
    # (tauguard.faults.profiles.check_needs), never a silent default.
    uptake: float | None = Field(default=None, ge=0.0, le=1.0)
    # Feedback-only sim: probability that a BLOCKed agent transfers to a human instead of
    # telling the user it cannot (needed, like uptake, by a run whose faults can fire).
    block_transfer: float | None = Field(default=None, ge=0.0, le=1.0)
    # Per policy-violation task and trial: probability of attempting the tempting write.
    forbidden_write: float = Field(default=0.0, ge=0.0, le=1.0)
    # Per documented gold-conflict write (tauguard/domains/gold_conflicts.toml: a gold write the policy
    # forbids once the facts are read): probability that the sim agent, following the policy,
    # does not make it and transfers to a human instead. Not a fault: compliant behaviour that
    # tau2's reward scores as a failure. Recorded as `conflict_refusal` (class W, a hand-off).
    conflict_refusal: float = Field(default=0.0, ge=0.0, le=1.0)
    # Per trial: probability of a failure the sim has no model of (a fitted profile's failures
    # that no catalogued fault the sim can make explains). The sim marks it by a run τ² cuts
    # before any write (tauguard.faults.draw.UNEXPLAINED): it fails whatever the guard.
    unexplained_failure: float = Field(default=0.0, ge=0.0, le=1.0)
    # fault id -> probability per applicable gold write.
    rates: dict[str, float] = Field(default_factory=dict)
    # How a write's faults are drawn (tauguard.faults.draw): "independent" = one draw per
    # (write, fault), the first fault drawn takes the write (later ones are then less likely
    # than their rate); "first_deviation" = one draw per write, each applicable fault taken
    # with exactly its rate (a fitted profile's rates are shares of first deviations per write).
    draw: Literal["independent", "first_deviation"] = "independent"
    # Attack tactic -> probability per attacked trial that the sim agent gives in (`run --attack`).
    attack_susceptibility: dict[str, float] = Field(default_factory=dict)
    sources: dict[str, str] = Field(default_factory=dict)  # where each rate comes from
    # A fitted profile's evidence (`tauguard faults fit`): simulations, failures, counts, opportunities.
    fit: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _rates_in_range(self) -> "FaultProfile":
        for fid, rate in self.rates.items():
            if not 0.0 <= rate <= 1.0:
                raise ValueError(f"rate of {fid} must be within [0, 1], got {rate}")
        from tauguard.attacks.model import TACTICS

        for tactic, rate in self.attack_susceptibility.items():
            if tactic not in TACTICS:
                raise ValueError(f"unknown attack tactic '{tactic}' in attack_susceptibility; allowed: {', '.join(TACTICS)}")
            if not 0.0 <= rate <= 1.0:
                raise ValueError(f"attack susceptibility of {tactic} must be within [0, 1], got {rate}")
        return self

    @property
    def active(self) -> bool:
        """Whether any fault can fire."""
        return (self.forbidden_write > 0 or self.conflict_refusal > 0 or self.unexplained_failure > 0
                or any(r > 0 for r in self.rates.values()))


class ScheduledFault(BaseModel):
    """A fault drawn for one trial, attached to a gold write (or a temptation)."""

    fault_id: str
    fault_class: FaultClass
    kind: FaultKind
    tool: str
    write_index: int | None = None  # ordinal of the gold write; None for a temptation
    generator: str | None = None
    label: ProbeLabel = "refuse"
    clause: str = ""
    skip_tools: list[str] = Field(default_factory=list)  # see FaultSpec.skip_tools
