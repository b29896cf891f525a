"""Checks of every file that restates part of a write contract, against the contract.

Consumers that keep rules of their own (action-guard checklists, workflow graphs, ledger read
maps and predicates, fault catalogs, temptations, attack targets) call these when they load
their files, so a restatement that contradicts ``tauguard/domains/<domain>/writes.toml`` or a
clause citation outside the clause's scope is a load error naming the file, the entry and the
contradiction. Each function raises :class:`ContractError` (a ``ValueError``: inside a pydantic
validator it becomes the one-line file error of :mod:`tauguard.datafiles`).

This module imports neither tau2 nor litellm.
"""

from __future__ import annotations

from collections.abc import Iterable

from tauguard.domains import UnknownClauseError, clause
from tauguard.domains.contract import ContractError, contract, contract_domains


def _known(domain: str) -> bool:
    return domain in contract_domains()


def check_scope(domain: str, tools: Iterable[str], clause_id: str, where: str) -> None:
    """The clause must constrain at least one of ``tools`` (its ``tools`` in the policy pack).

    ``tools`` are the WRITE tools the citing entry is about ("*" entries are not checked). A
    clause that constrains no agent write (a conduct rule, a device fix of the technical-support
    manual) has no scope to leave and is not checked.
    """
    wanted = [t for t in tools if t != "*"]
    if not wanted or not _known(domain):
        return
    try:
        scope = clause(clause_id).tools
    except UnknownClauseError:
        raise ContractError(f"{where}: cites unknown clause '{clause_id}'") from None
    if scope and not any(t in scope for t in wanted):
        raise ContractError(
            f"{where}: cites {clause_id} for {', '.join(wanted)}, outside its scope ({', '.join(scope) or 'no write tools'})"
        )


def check_write(domain: str, tool: str, where: str) -> None:
    """``tool`` must be an agent WRITE of the domain's contract."""
    if _known(domain) and contract(domain).rule(tool) is None:
        raise ContractError(f"{where}: {tool} is not a write of the {domain} contract ({', '.join(contract(domain).tools)})")


def check_confirmation(domain: str, tool: str, asks: bool, clauses: Iterable[str], where: str) -> None:
    """A consumer's "this write needs an explicit yes" must be the contract's, citing its clause."""
    if not _known(domain):
        return
    rule = contract(domain).rule(tool)
    if rule is None:
        raise ContractError(f"{where}: {tool} is not a write of the {domain} contract")
    needed = rule.confirmation is not None
    if asks != needed:
        said = "asks for an explicit yes" if asks else "asks for no explicit yes"
        raise ContractError(f"{where}: {said} before {tool}, but the {domain} write contract says it {'needs' if needed else 'needs none'}")
    if needed and rule.confirmation is not None:
        wanted = rule.confirmation.clause
        # the clause itself, or a finer quote of it (``part_of``)
        if not any(c == wanted or clause(c).part_of == wanted for c in clauses):
            raise ContractError(f"{where}: the confirmation of {tool} must cite {wanted} (the contract's clause) or a part of it")


def check_entity_read(domain: str, argument: str, read: str, where: str, read_argument: str | None = None) -> None:
    """A read named as observing ``argument`` must be the contract's: its entity read or a target read."""
    if not _known(domain):
        return
    c = contract(domain)
    allowed = {(e.read, e.argument) for a, e in c.entities.items() if a == argument}
    allowed |= {(t.read, t.read_argument) for w in c.write for t in w.targets if t.argument == argument}
    if not allowed:
        raise ContractError(f"{where}: the {domain} contract names no read for argument '{argument}'")
    if not any(r == read and (read_argument is None or ra == read_argument) for r, ra in allowed):
        shown = ", ".join(f"{r}({ra})" for r, ra in sorted(allowed))
        raise ContractError(f"{where}: {read} observes '{argument}' here, the {domain} contract says {shown}")


def contract_reads(domain: str) -> set[str]:
    """Every read the contract names (identification, entities, targets, prior reads)."""
    if not _known(domain):
        return set()
    c = contract(domain)
    reads = set(c.identification.reads) | {e.read for e in c.entities.values()}
    for w in c.write:
        reads |= {t.read for t in w.targets} | {p.tool for p in w.prior}
    return reads


def check_reads_known(domain: str, known: Iterable[str], where: str) -> None:
    """A consumer that maps reads to facts must know every read the contract relies on."""
    missing = sorted(contract_reads(domain) - set(known))
    if missing:
        raise ContractError(f"{where}: no entry for {', '.join(missing)}, which the {domain} write contract relies on")


__all__ = [
    "ContractError", "check_confirmation", "check_entity_read", "check_reads_known", "check_scope",
    "check_write", "contract_reads",
]
