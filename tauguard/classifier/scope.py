"""Which clauses a classifier decision on a write may cite, and which reads its VERIFY may ask for.

A retriever ranks the whole clause pool by similarity to the request and the evidence, so its
top clause may govern another tool (issue 22: a cancellation held "under" the payment limits of
a booking). A decision may only cite a clause whose scope covers the gated tool: the pool
clause's tool scope (the policy pack's ``tools``) or a clause the domain's write contract
(``tauguard/domains/<domain>/writes.toml``) cites for that write. A VERIFY may only ask for the
reads the contract derives for that write: its target reads whose id argument no successful
read has returned. Both come from data files; nothing here is fitted to a task.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict

from tauguard.classifier.clauses import clause_pool
from tauguard.classifier.state import DecisionState, read_map
from tauguard.domains.contract import contract, contract_domains


class ContractRead(BaseModel):
    """A read the contract derives for a write and the evidence lacks, with the clause requiring it."""

    model_config = ConfigDict(frozen=True)

    tool: str
    arguments: dict[str, Any]
    why: str
    clause: str | None  # None for an entity read of a tool the contract has no entry for


@cache
def clause_scope(domain: str, tool: str) -> frozenset[str]:
    """The clause ids a decision on ``tool`` may cite: pool clauses scoped to it, and the
    clauses the write contract cites for it."""
    ids = {c.id for c in clause_pool(domain) if tool in c.tools}
    if domain in contract_domains():
        rule = contract(domain).rule(tool)
        if rule is not None:
            ids |= rule.clause_ids()
    return frozenset(ids)


def in_scope(domain: str, tool: str, ranking: Iterable[str]) -> list[str]:
    """``ranking`` (best first) without the clauses outside ``tool``'s scope, order kept."""
    scope = clause_scope(domain, tool)
    return [cid for cid in ranking if cid in scope]


def contract_reads(state: DecisionState) -> list[ContractRead]:
    """The reads the contract derives for the pending write that the evidence lacks: each
    target read whose id argument value no successful read has returned. A tool with no
    contract entry falls back to the contract's entity reads of its id arguments."""
    seen = {f.value for f in state.evidence}
    tool, args = state.action.name, state.action.arguments
    rule = contract(state.domain).rule(tool) if state.domain in contract_domains() else None
    wanted: list[tuple[str, str, str, str | None]]
    if rule is not None:
        wanted = [(t.argument, t.read, t.read_argument, t.clause) for t in rule.targets]
    else:
        wanted = [(arg, r.tool, r.argument, None) for arg, r in read_map().get(state.domain, {}).items()]
    out = []
    for argument, read, read_argument, clause in wanted:
        value = args.get(argument)
        if isinstance(value, str) and value and value not in seen:
            out.append(ContractRead(tool=read, arguments={read_argument: value}, why=f"no read has returned {argument} {value}", clause=clause))
    return out
