"""Per-domain maps: READ tool -> ledger update, WRITE tool -> touched paths, path -> the read that observes it.

The path map is data-like: one small function per read tool, keyed by tool name, so a new
tool is one entry. Read functions receive the parsed return and the call (for arguments the
return omits, e.g. the date of ``get_flight_status``) and return the canonical paths they
observed; the session refreshes those paths.
"""

from __future__ import annotations

from tauguard_strategies.ledger.readmap.base import DomainMap
from tauguard.domains.consistency import ContractError, check_reads_known, check_write
from tauguard.domains.contract import write_tools


def domain_map(domain: str) -> DomainMap:
    """The map of ``domain``."""
    from tauguard_strategies.ledger.readmap import airline, retail, telecom

    maps = {"airline": airline.MAP, "retail": retail.MAP, "telecom": telecom.MAP}
    if domain not in maps:
        raise ValueError(f"the ledger strategy has no read map for domain '{domain}'")
    check_map(domain, maps[domain])
    return maps[domain]


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
