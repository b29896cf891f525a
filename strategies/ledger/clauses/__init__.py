"""Policy clauses the ledger gate cites: one TOML file per domain, validated by a schema.

Each clause quotes its policy sentence verbatim (a test checks it against tau2's policy) and
says how it is enforced: by a ledger predicate, not at all because it is dialogue-level, or
by the tool's own signature.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tauguard.datafiles import load_toml

DIR = Path(__file__).parent
Enforcement = Literal["ledger", "not_observable", "tool_signature"]
Kind = Literal["identity", "state", "eligibility", "argument", "limit", "dialogue"]


class Clause(BaseModel):
    """One policy clause."""

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
    clause: list[Clause]

    @model_validator(mode="after")
    def _ids(self) -> ClauseBook:
        ids = [c.id for c in self.clause]
        if len(ids) != len(set(ids)):
            raise ValueError(f"duplicate clause ids in {self.domain}")
        for c in self.clause:
            if not c.id.startswith(self.domain + "."):
                raise ValueError(f"clause {c.id} is not prefixed by its domain {self.domain}")
        return self

    def get(self, rule_id: str) -> Clause:
        """The clause ``rule_id`` (KeyError if absent)."""
        for c in self.clause:
            if c.id == rule_id:
                return c
        raise KeyError(rule_id)


@cache
def load(domain: str) -> ClauseBook:
    """The validated clause book of ``domain``."""
    return load_toml(DIR / f"{domain}.toml", ClauseBook)


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
