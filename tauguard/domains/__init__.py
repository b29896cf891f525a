"""Domain policy packs: each τ² domain's policy clauses and constants, written once, as data.

``tauguard/domains/<domain>/policy.toml`` holds every policy sentence tauguard cites (a stable
clause id, the verbatim text, its section, the write tools it concerns) and the constants
the policy states (clock, allowances, limits, reasons). Strategies, the fault catalog and the
sim refer to clauses by id and read constants from here; an id that does not resolve is a
load error. Contract: ``tauguard/domains/README.md``.

This module imports neither tau2 nor litellm.
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from tauguard.datafiles import load_toml
from tauguard.errors import TauguardInputError

DIR = Path(__file__).parent
# Further folders of domain folders (os.pathsep-separated), read once at import: a domain kept
# outside the package (a new domain being written, a test fixture) without copying it in. A
# folder there named like a packaged domain is ignored: the packaged pack wins.
EXTRA_DIRS_ENV = "TAUGUARD_DOMAIN_DIRS"


def _domain_dirs() -> dict[str, Path]:
    """Domain -> its folder (holding ``policy.toml``): the packaged ones, then those of :data:`EXTRA_DIRS_ENV`."""
    found = {p.parent.name: p.parent for p in sorted(DIR.glob("*/policy.toml"))}
    for root in os.environ.get(EXTRA_DIRS_ENV, "").split(os.pathsep):
        if root.strip():
            for p in sorted(Path(root).expanduser().glob("*/policy.toml")):
                found.setdefault(p.parent.name, p.parent)
    return found


DOMAIN_DIRS: dict[str, Path] = _domain_dirs()
# The domains tauguard knows: one folder each (here or under TAUGUARD_DOMAIN_DIRS) with its policy
# pack and write contract. The one list (config, tau2compat, the CLI and data schemas read it): a
# new domain is a new folder.
DOMAINS: tuple[str, ...] = tuple(sorted(d for d, folder in DOMAIN_DIRS.items() if (folder / "writes.toml").is_file()))


def domain_dir(domain: str) -> Path:
    """The folder of ``domain``'s policy pack and write contract (under this package unless
    :data:`EXTRA_DIRS_ENV` adds it; an unknown domain's would-be packaged folder)."""
    return DOMAIN_DIRS.get(domain, DIR / domain)


def known_domain(value: str) -> str:
    """``value`` if it is one of :data:`DOMAINS`, else ValueError naming the allowed ones."""
    if value not in DOMAINS:
        raise ValueError(f"unknown domain '{value}'; allowed: {', '.join(DOMAINS)}")
    return value


# A domain field of a data schema: a string checked against the domain folders (not a Literal
# that a new domain would have to be added to).
DomainName = Annotated[str, AfterValidator(known_domain)]
ClauseKind = Literal["identity", "state", "eligibility", "argument", "limit", "dialogue"]
CLAUSE_ID = r"^[a-z]+\.[a-z0-9_]+$"


class UnknownClauseError(TauguardInputError):
    """A clause id that no domain pack defines."""


class Clause(BaseModel):
    """One policy clause: a verbatim sentence (or block) of the domain's policy."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=CLAUSE_ID)
    section: str  # the policy heading it appears under
    text: str = Field(min_length=10)
    tools: list[str] = Field(default_factory=list)  # agent WRITE tools it constrains
    kind: ClauseKind | None = None  # what the clause constrains, for clauses a guard enforces
    part_of: str | None = None  # the clause whose text contains this one (a finer quote of it)
    defines: list[str] = Field(default_factory=list)  # names of the constants it states


class _Clock(BaseModel):
    """The policy's "current time" (never the wall clock)."""

    now: datetime
    timezone: str

    @property
    def now_iso(self) -> str:
        """The clock as ``YYYY-MM-DDTHH:MM:SS`` (comparable with τ²'s timestamps as strings)."""
        return self.now.isoformat()

    @property
    def today(self) -> str:
        """The policy date, ``YYYY-MM-DD``."""
        return self.now.date().isoformat()


class AirlineConstants(_Clock):
    """Constants of the airline policy."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cancel_window_hours: int
    flown_statuses: tuple[str, ...]
    bag_fee: int
    insurance_fee: int
    insurance_covered_reasons: tuple[str, ...]
    cancellation_reasons: tuple[str, ...]
    max_passengers: int
    payment_limits: dict[str, int]  # payment source -> at most this many per reservation
    compensation_per_passenger: dict[Literal["cancelled", "delayed"], int]
    free_bags: dict[str, dict[str, int]]  # membership -> cabin -> free bags per passenger

    @property
    def cancel_window_start(self) -> str:
        """Bookings created at or after this instant are within the cancellation window."""
        return (self.now - timedelta(hours=self.cancel_window_hours)).isoformat()


class RetailConstants(BaseModel):
    """Constants of the retail policy."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cancel_reasons: tuple[str, ...]


class TelecomConstants(_Clock):
    """Constants of the telecom policy."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_refuel_gb: float


class PolicyConstants(BaseModel):
    """The constants of a domain without a typed model: whatever its pack states, read as attributes."""

    model_config = ConfigDict(extra="allow", frozen=True)


# Typed models of the domains whose constants code reads by name. Optional per domain: a pack
# of another domain validates as PolicyConstants (adding a domain need not touch this module).
CONSTANTS: dict[str, type[BaseModel]] = {
    "airline": AirlineConstants,
    "retail": RetailConstants,
    "telecom": TelecomConstants,
}


def constants_model(domain: str) -> type[BaseModel]:
    """The model the constants of ``domain`` validate against."""
    return CONSTANTS.get(domain, PolicyConstants)


class PolicyPack(BaseModel):
    """One domain's clause table and constants (``<domain>/policy.toml``)."""

    model_config = ConfigDict(extra="forbid")

    domain: str
    source: str  # the policy file in τ²'s data the texts come from
    constants: dict[str, Any] = Field(default_factory=dict)
    clause: list[Clause]

    @model_validator(mode="after")
    def _consistent(self) -> PolicyPack:
        ids = [c.id for c in self.clause]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"duplicate clause ids: {', '.join(dupes)}")
        by_id = {c.id: c for c in self.clause}
        defined: dict[str, str] = {}
        for c in self.clause:
            if not c.id.startswith(self.domain + "."):
                raise ValueError(f"clause {c.id} is not prefixed by its domain {self.domain}")
            if c.part_of is not None:
                whole = by_id.get(c.part_of)
                if whole is None or c.text not in whole.text:
                    raise ValueError(f"clause {c.id}: part_of {c.part_of} is not a clause whose text contains it")
            for name in c.defines:
                if name not in self.constants:
                    raise ValueError(f"clause {c.id} defines '{name}', which is not in [constants]")
                if name in defined:
                    raise ValueError(f"constant '{name}' is defined by both {defined[name]} and {c.id}")
                defined[name] = c.id
        undefined = sorted(set(self.constants) - set(defined))
        if undefined:
            raise ValueError(f"constants no clause defines: {', '.join(undefined)}")
        return self

    def get(self, clause_id: str) -> Clause:
        """The clause ``clause_id`` (UnknownClauseError if absent)."""
        for c in self.clause:
            if c.id == clause_id:
                return c
        raise UnknownClauseError(f"unknown clause id '{clause_id}' in domain {self.domain}")

    def defining(self, constant: str) -> Clause:
        """The clause that states ``constant``."""
        return next(c for c in self.clause if constant in c.defines)


def domains() -> list[str]:
    """Domains with a policy pack."""
    return sorted(DOMAIN_DIRS)


@cache
def load(domain: str) -> PolicyPack:
    """The validated policy pack of ``domain`` (its constants validated too)."""
    path = domain_dir(domain) / "policy.toml"
    if not path.exists():
        raise UnknownClauseError(f"no policy pack for domain '{domain}'; known: {', '.join(domains())}")
    pack = load_toml(path, PolicyPack)
    if pack.domain != domain:
        raise ValueError(f"{path}: declares domain '{pack.domain}'")
    constants_model(domain).model_validate(pack.constants)
    return pack


@cache
def constants(domain: str) -> Any:
    """The typed constants of ``domain`` (see :data:`CONSTANTS`)."""
    return constants_model(domain).model_validate(load(domain).constants)


def airline() -> AirlineConstants:
    """The airline policy's constants."""
    result: AirlineConstants = constants("airline")
    return result


def retail() -> RetailConstants:
    """The retail policy's constants."""
    result: RetailConstants = constants("retail")
    return result


def telecom() -> TelecomConstants:
    """The telecom policy's constants."""
    result: TelecomConstants = constants("telecom")
    return result


def clause(clause_id: str) -> Clause:
    """The clause ``clause_id``; its domain is the id's prefix (UnknownClauseError if absent)."""
    domain = clause_id.split(".", 1)[0]
    if domain not in domains():
        raise UnknownClauseError(f"unknown clause id '{clause_id}': no domain '{domain}'")
    return load(domain).get(clause_id)


def texts(clause_ids: list[str]) -> list[str]:
    """The verbatim texts of ``clause_ids``, in order (each id must resolve)."""
    return [clause(i).text for i in clause_ids]


def quote(clause_ids: list[str]) -> str:
    """The texts of ``clause_ids`` as one quotation, one clause per line ("" for none)."""
    return "\n".join(texts(clause_ids))
