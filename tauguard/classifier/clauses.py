"""The clause pool a retriever ranks, and a probe's gold clause ids in it.

The pool is the domain's clause table (one id scheme with every other component): the
policy pack ``tauguard/domains/<d>/policy.toml`` when this tauguard has one, else the
ledger's clause table (``strategies/ledger/clauses/<d>.toml``). :func:`clause_pool` is the one
place that decides.

A probe carries its clause as verbatim text (``Probe.clause``); its gold ids are the pool
clauses with the same text (whitespace and list dashes aside), else those whose text the
probe's quotes. An ``allow`` probe (a gold call) has no violated clause; the paper's gold
policy is "the applicable assertion" of the state (§2), so its gold clause is the first pool
clause governing the called tool -- a label-independent rule, so the clause alone does not
give the label away.
"""

from __future__ import annotations

import importlib.util
import random
import re
import tomllib
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from tauguard.errors import TauguardInputError


class PoolClause(BaseModel):
    """One clause of the pool."""

    model_config = ConfigDict(frozen=True)

    id: str
    text: str
    tools: tuple[str, ...] = ()


class ClausePoolError(TauguardInputError):
    """No clause table for a domain."""


def _pack_clauses(domain: str) -> list[PoolClause] | None:
    try:
        from tauguard import domains as packs  # the policy packs (seams-clauses)
    except ImportError:
        return None
    if domain not in packs.domains():
        return None
    return [PoolClause(id=c.id, text=c.text.strip(), tools=tuple(c.tools)) for c in packs.load(domain).clause]


def _ledger_clauses(domain: str) -> list[PoolClause] | None:
    spec = importlib.util.find_spec("tauguard_strategies")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "ledger" / "clauses" / f"{domain}.toml"
    if not path.exists():
        return None
    with path.open("rb") as fh:
        data = tomllib.load(fh)
    clauses = [c for c in data.get("clause", []) if c.get("text")]  # tables citing pack ids carry no text
    return [PoolClause(id=c["id"], text=c["text"].strip(), tools=tuple(c.get("tools", []))) for c in clauses] or None


@cache
def clause_pool(domain: str) -> tuple[PoolClause, ...]:
    """The domain's clause table as the retrieval pool (ClausePoolError if there is none)."""
    pool = _pack_clauses(domain) or _ledger_clauses(domain)
    if not pool:
        raise ClausePoolError(f"no clause table for domain '{domain}'")
    return tuple(pool)


def normalize(text: str) -> str:
    """Text for matching: list dashes at line starts dropped, whitespace collapsed."""
    return " ".join(re.sub(r"(?m)^\s*-\s+", "", text).split())


def gold_clause_ids(domain: str, clause_text: str, tool: str) -> list[str]:
    """The pool ids of a probe's clause text; for an empty text, the tool's governing clause."""
    pool = clause_pool(domain)
    if clause_text.strip():
        wanted = normalize(clause_text)
        exact = [c.id for c in pool if normalize(c.text) == wanted]
        if exact:
            return exact
        quoted = [c.id for c in pool if normalize(c.text) in wanted or wanted in normalize(c.text)]
        if quoted:
            return quoted
        return []
    governing = [c.id for c in pool if tool in c.tools]
    return governing[:1]


def clause_text(domain: str, clause_id: str) -> str:
    """The text of a pool clause."""
    for c in clause_pool(domain):
        if c.id == clause_id:
            return c.text
    raise KeyError(clause_id)


def mismatched_clause(domain: str, gold_ids: list[str], key: str, seed: int) -> str:
    """A plausible wrong clause: a pool clause of the same domain that is not gold, drawn
    deterministically from ``key`` and ``seed`` (the paper's mismatched-policy control, §4)."""
    others = [c.id for c in clause_pool(domain) if c.id not in gold_ids]
    return random.Random(f"{seed}:{key}").choice(others)
