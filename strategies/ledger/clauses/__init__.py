"""How the ledger gate enforces the policy clauses it cites: one TOML file per domain.

The clauses themselves (id, verbatim text, section, write tools, kind) live once in the
domain's policy pack (:mod:`tauguard.domains`). Each file here maps a clause id to how the
ledger enforces it: by a ledger predicate, not at all because it is dialogue-level, or by the
tool's own signature; plus a note. An id the pack does not define is a load error.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tauguard import domains as policy
from tauguard.datafiles import load_toml
from tauguard.domains import ClauseKind as Kind

DIR = Path(__file__).parent
Enforcement = Literal["ledger", "not_observable", "tool_signature"]


class Enforced(BaseModel):
    """One entry of a ledger clause file: a clause id and how the ledger enforces it."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z]+\.[a-z0-9_]+$")
    enforcement: Enforcement
    note: str = ""  # may name the pack's constants as {c.<name>} (str.format)


class EnforcementFile(BaseModel):
    """A ledger clause file (``clauses/<domain>.toml``)."""

    model_config = ConfigDict(extra="forbid")

    domain: str
    clause: list[Enforced]


class LedgerClause(BaseModel):
    """One policy clause as the ledger cites it: the pack's clause plus its enforcement."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z]+\.[a-z0-9_]+$")
    kind: Kind
    enforcement: Enforcement
    tools: list[str]
    text: str = Field(min_length=10)
    note: str = ""


class ClauseBook(BaseModel):
    """The clauses of one domain."""

    model_config = ConfigDict(extra="forbid")

    domain: str
    source: str
    clause: list[LedgerClause]

    @model_validator(mode="after")
    def _ids(self) -> ClauseBook:
        ids = [c.id for c in self.clause]
        if len(ids) != len(set(ids)):
            raise ValueError(f"duplicate clause ids in {self.domain}")
        for c in self.clause:
            if not c.id.startswith(self.domain + "."):
                raise ValueError(f"clause {c.id} is not prefixed by its domain {self.domain}")
        return self

    def get(self, rule_id: str) -> LedgerClause:
        """The clause ``rule_id`` (KeyError if absent)."""
        for c in self.clause:
            if c.id == rule_id:
                return c
        raise KeyError(rule_id)


def _cited(domain: str, entry: Enforced) -> LedgerClause:
    pack = policy.load(domain)
    found = pack.get(entry.id)  # UnknownClauseError if the pack lacks it
    if found.kind is None:
        raise ValueError(f"clause {entry.id}: the ledger cites it, so the policy pack must give its kind")
    note = entry.note.format(c=policy.constants(domain))
    return LedgerClause(id=found.id, kind=found.kind, enforcement=entry.enforcement, tools=found.tools, text=found.text, note=note)


@cache
def load(domain: str) -> ClauseBook:
    """The validated clause book of ``domain``: the pack's clauses the ledger cites, with their enforcement."""
    path = DIR / f"{domain}.toml"
    entries = load_toml(path, EnforcementFile)
    if entries.domain != domain:
        raise ValueError(f"{path}: declares domain '{entries.domain}'")
    pack = policy.load(domain)
    return ClauseBook(domain=domain, source=pack.source, clause=[_cited(domain, e) for e in entries.clause])


def domains() -> list[str]:
    """Domains with a clause file."""
    return sorted(p.stem for p in DIR.glob("*.toml"))


ENFORCEMENT_LABEL = {
    "ledger": "enforced (ledger predicate)",
    "not_observable": "not observable (dialogue)",
    "tool_signature": "enforced by the tool's signature",
}


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def markdown_table(domain_names: list[str] | None = None) -> str:
    """The clause -> enforcement table of the README / docs (generated from the data)."""
    rows = ["| rule_id | write tools | enforcement | clause (verbatim) | how |", "|---|---|---|---|---|"]
    for domain in domain_names or domains():
        for c in load(domain).clause:
            tools = ", ".join(f"`{t}`" for t in c.tools) or "(none)"
            rows.append(f"| `{c.id}` | {tools} | {ENFORCEMENT_LABEL[c.enforcement]} | {_cell(c.text)} | {_cell(c.note)} |")
    return "\n".join(rows)
