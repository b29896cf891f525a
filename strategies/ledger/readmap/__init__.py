"""Per-domain maps: READ tool -> ledger update, WRITE tool -> touched paths, path -> the read that observes it.

The path map is data-like: one small function per read tool, keyed by tool name, so a new
tool is one entry. Read functions receive the parsed return and the call (for arguments the
return omits, e.g. the date of ``get_flight_status``) and return the canonical paths they
observed; the session refreshes those paths. A domain's map is the ``MAP`` of
``readmap/<domain>.py``, found by name (adding a domain adds the file, nothing here).
"""

from __future__ import annotations

from tauguard_strategies.domain_modules import domain_module, module_file
from tauguard_strategies.ledger.readmap.base import DomainMap
from tauguard.domains.consistency import ContractError, check_reads_known, check_write
from tauguard.domains.contract import write_tools


def domain_map(domain: str) -> DomainMap:
    """The map of ``domain``: the ``MAP`` of ``readmap/<domain>.py``, found by name."""
    module = domain_module(__name__, domain)
    dmap = getattr(module, "MAP", None) if module is not None else None
    if not isinstance(dmap, DomainMap):
        raise ValueError(f"the ledger strategy has no read map for domain '{domain}' ({module_file(__name__, domain)} with a MAP)")
    check_map(domain, dmap)
    return dmap


def check_map(domain: str, dmap: DomainMap) -> None:
    """The map knows every read the write contract relies on and touches exactly its writes."""
    where = f"ledger read map {domain}"
    check_reads_known(domain, dmap.reads, where)
    for tool in dmap.touches:
        check_write(domain, tool, where)
    for tool, read in dmap.returns.items():
        check_write(domain, tool, where)
        if read not in dmap.reads:
            raise ContractError(f"{where}: the result of {tool} is read as {read}, which the map does not parse")
    missing = sorted(set(write_tools(domain)) - set(dmap.touches))
    if missing:
        raise ContractError(f"{where}: no touch entry for {', '.join(missing)}, writes of the {domain} contract")
