"""The write contract: what a compliant agent WRITE requires, one file per domain.

``tauguard/domains/<domain>/writes.toml`` is the one place that says, for every agent WRITE tool
of the domain:

- **identification**: the clause, and every way the policy allows the user to be identified
  (a successful identifying read, or a user id the user states plus a read showing that user
  owns the target);
- **target reads**: which write argument names which entity, and which read observes it;
- **prior reads**: further reads a compliant agent makes first (facts the policy asks to check);
- **confirmation**: the clause, and the user-visible arguments a statement of the action must
  convey (by value or by unambiguous reference) before the user's explicit yes;
- **closed-set arguments**: arguments the policy restricts to a constant set (reasons, ...);
- **bases**: for writes that need one (a cancellation, a compensation), the alternatives, each
  marked observable from tool results or only from the dialogue.

The process rubric, the sim's read lookups, the classifier's reads and the scopes of the
generic faults are derived from it (:func:`entity_reads`, :func:`confirmed_tools`, ...);
every other data file that restates a part of it is checked against it when loaded
(:mod:`tauguard.domains.consistency`). Contract: ``tauguard/domains/README.md``.

This module imports neither tau2 nor litellm.
"""

from __future__ import annotations

from functools import cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tauguard.datafiles import DataFileError, load_toml
from tauguard.domains import CLAUSE_ID, UnknownClauseError, constants, domain_dir, domains, load

Observable = Literal["tool", "dialogue"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ReadRef(_Strict):
    """A read call: ``tool(argument=<value>)``."""

    tool: str
    argument: str


class IdentityWay(_Strict):
    """One way the policy allows the user to be identified before a write.

    Either ``reads`` (a successful call of one of these tools identifies the user, its
    result naming them), or ``stated`` (the user states this value, e.g. their user id, in
    the conversation) together with ``owner_read``: a successful target read whose result
    shows the stated user owns the target.
    """

    reads: list[str] = Field(default_factory=list)
    stated: str | None = None  # the id the user must state (a write or read argument name)
    owner_read: bool = False  # with ``stated``: a target read must show that user owns the target

    @model_validator(mode="after")
    def _one_kind(self) -> IdentityWay:
        if bool(self.reads) == (self.stated is not None):
            raise ValueError("an identification way has either reads or stated, not both or neither")
        if self.owner_read and self.stated is None:
            raise ValueError("owner_read goes with stated")
        return self


class Identification(_Strict):
    """How the user is identified in this domain (the clause a write cites may be finer)."""

    clause: str = Field(pattern=CLAUSE_ID)
    ways: list[IdentityWay] = Field(min_length=1)

    @property
    def reads(self) -> list[str]:
        """Every identifying read, in the file's order (the first is the one the sim makes)."""
        return [r for way in self.ways for r in way.reads]


class Entity(_Strict):
    """How an id argument of a write is observed: the read and, if it shows one, its owner field."""

    read: str
    argument: str
    owner: str | None = None  # field of the read's result naming the owning user


class TargetRead(_Strict):
    """The read that must have observed a write's target before the write."""

    argument: str  # the write's argument naming the target
    read: str
    read_argument: str
    clause: str = Field(pattern=CLAUSE_ID)


class PriorRead(_Strict):
    """A read a compliant agent makes before the write, not tied to one argument (e.g. flight status)."""

    tool: str
    clause: str = Field(pattern=CLAUSE_ID)


class Confirmation(_Strict):
    """The explicit yes a write needs, and what the statement it answers must convey."""

    clause: str = Field(pattern=CLAUSE_ID)
    words: list[str] = Field(default_factory=list)  # words that name the action ("cancel", "exchange")
    conveys: list[str] = Field(default_factory=list)  # argument paths the user must see (``flights.*.flight_number``)


class ClosedArgument(_Strict):
    """An argument the policy restricts to a closed set (a constant of the policy pack)."""

    argument: str
    constant: str  # name in the domain's ``[constants]``
    clause: str = Field(pattern=CLAUSE_ID)


class BasisAlternative(_Strict):
    """One ground on which the policy allows the write."""

    id: str = Field(pattern=r"^[a-z0-9_]+$")
    clause: str = Field(pattern=CLAUSE_ID)
    observable: Observable  # from tool results alone, or only from what the user says


class Basis(_Strict):
    """The grounds a write needs one of (a cancellation's eligibility, a compensation's cause)."""

    clause: str = Field(pattern=CLAUSE_ID)
    alternatives: list[BasisAlternative] = Field(min_length=1)


class WriteContract(_Strict):
    """Everything a compliant call of one agent WRITE tool requires."""

    tool: str
    # The clause requiring identification for this write; None when the policy ties the write
    # to no identification (no shipped domain has such a write).
    identify: str | None = Field(default=None, pattern=CLAUSE_ID)
    targets: list[TargetRead] = Field(default_factory=list)
    prior: list[PriorRead] = Field(default_factory=list)
    confirmation: Confirmation | None = None
    closed: list[ClosedArgument] = Field(default_factory=list)
    basis: Basis | None = None

    def clause_ids(self) -> set[str]:
        """Every clause this entry cites."""
        ids = {*([self.identify] if self.identify else []), *(t.clause for t in self.targets), *(p.clause for p in self.prior)}
        ids.update(c.clause for c in self.closed)
        if self.confirmation:
            ids.add(self.confirmation.clause)
        if self.basis:
            ids.add(self.basis.clause)
            ids.update(a.clause for a in self.basis.alternatives)
        return ids


class FixRule(_Strict):
    """A user-side device fix (telecom) and the diagnostic reads that must come first."""

    tool: str
    diagnose: list[str] = Field(min_length=1)
    clause: str = Field(pattern=CLAUSE_ID)


class VerifyRule(_Strict):
    """Verify-after-act: after the last fix, a read observes the result."""

    after: list[str] = Field(default_factory=list)  # agent writes that count as fixes too
    reads: list[str] = Field(min_length=1)
    clause: str = Field(pattern=CLAUSE_ID)


class DomainContract(_Strict):
    """The write contract of one domain (``<domain>/writes.toml``)."""

    domain: str
    refusal_clause: str = Field(pattern=CLAUSE_ID)  # no write after a refusal or a transfer
    identification: Identification
    entities: dict[str, Entity]  # id argument name -> how it is observed
    write: list[WriteContract]
    fix: list[FixRule] = Field(default_factory=list)
    verify: VerifyRule | None = None

    @model_validator(mode="after")
    def _consistent(self) -> DomainContract:
        tools = [w.tool for w in self.write]
        dupes = sorted({t for t in tools if tools.count(t) > 1})
        if dupes:
            raise ValueError(f"write tools listed twice: {', '.join(dupes)}")
        return self

    def rule(self, tool: str) -> WriteContract | None:
        """The contract of a write tool, None for a tool that is not an agent WRITE."""
        return next((w for w in self.write if w.tool == tool), None)

    def fix_rule(self, tool: str) -> FixRule | None:
        """The rule of a device fix, None when ``tool`` is not one."""
        return next((f for f in self.fix if f.tool == tool), None)

    @property
    def tools(self) -> list[str]:
        """The agent WRITE tools, in the file's order."""
        return [w.tool for w in self.write]

    def clause_ids(self) -> set[str]:
        """Every clause the contract cites."""
        ids = {self.refusal_clause, self.identification.clause}
        for w in self.write:
            ids |= w.clause_ids()
        ids.update(f.clause for f in self.fix)
        if self.verify:
            ids.add(self.verify.clause)
        return ids


class ContractError(DataFileError):
    """A write contract contradicts the policy pack (one line: file, entry, contradiction)."""


def _check_against_pack(contract: DomainContract, where: str) -> None:
    pack = load(contract.domain)
    consts = pack.constants
    for cid in sorted(contract.clause_ids()):
        try:
            pack.get(cid)
        except UnknownClauseError:
            raise ContractError(f"{where}: cites unknown clause '{cid}'") from None
    for w in contract.write:
        for c in w.closed:
            if c.constant not in consts:
                raise ContractError(f"{where}: write {w.tool}: closed argument {c.argument} names unknown constant '{c.constant}'")
        # A clause that constrains this write must say so in its scope (the pack's ``tools``).
        scoped = {*([w.identify] if w.identify else []), *(t.clause for t in w.targets), *(c.clause for c in w.closed)}
        if w.confirmation:
            scoped.add(w.confirmation.clause)
        if w.basis:
            scoped.add(w.basis.clause)
        for cid in sorted(scoped):
            clause = pack.get(cid)
            if w.tool not in clause.tools:
                raise ContractError(
                    f"{where}: write {w.tool} cites {cid}, whose scope ({', '.join(clause.tools) or 'no tools'}) "
                    f"does not include {w.tool}"
                )


def contract_path(domain: str) -> str:
    """The contract file of ``domain``, as a path string."""
    return str(domain_dir(domain) / "writes.toml")


@cache
def contract(domain: str) -> DomainContract:
    """The validated write contract of ``domain``, checked against its policy pack."""
    path = domain_dir(domain) / "writes.toml"
    if not path.exists():
        raise UnknownClauseError(f"no write contract for domain '{domain}'; known: {', '.join(contract_domains())}")
    loaded = load_toml(path, DomainContract)
    where = f"{domain}/writes.toml"
    if loaded.domain != domain:
        raise ContractError(f"{where}: declares domain '{loaded.domain}'")
    constants(domain)  # the pack's constants must validate too
    _check_against_pack(loaded, where)
    return loaded


def contract_domains() -> list[str]:
    """Domains with a write contract."""
    return [d for d in domains() if (domain_dir(d) / "writes.toml").exists()]


def write_tools(domain: str) -> list[str]:
    """The agent WRITE tools of ``domain``."""
    return contract(domain).tools


def confirmed_tools(domain: str) -> list[str]:
    """The writes that need the user's explicit yes."""
    return [w.tool for w in contract(domain).write if w.confirmation is not None]


def entity_reads(domain: str) -> dict[str, Entity]:
    """Id argument name -> the read that observes it (the sim's lookups, the classifier's reads)."""
    return dict(contract(domain).entities)


def targeted_tools(domain: str) -> list[str]:
    """The writes with a target read or prior read (the scope of a skipped-read fault)."""
    return [w.tool for w in contract(domain).write if w.targets or w.prior]
