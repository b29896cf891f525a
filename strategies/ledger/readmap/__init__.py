"""Per-domain maps: READ tool -> ledger update, WRITE tool -> touched paths, path -> read hint.

The path map is data-like: one small function per read tool, keyed by tool name, so a new
tool is one entry. Read functions receive the parsed return and the call (for arguments the
return omits, e.g. the date of ``get_flight_status``) and return the canonical paths they
observed; the session refreshes those paths.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from tauguard_strategies.ledger.ledger import LedgerBase
from tauguard.conversation import ToolCallView

ReadFn = Callable[[Any, ToolCallView, Any], list[str]]
TouchFn = Callable[[Any, ToolCallView], list[str]]


class ReadHint(BaseModel):
    """A read that would put a missing fact into the ledger.

    ``arguments`` is None when they must come from the user (e.g. authentication by email)
    or cannot be derived from the ledger.
    """

    tool: str
    arguments: dict[str, Any] | None = None
    why: str = ""

    def describe(self) -> str:
        """``tool(k=v, ...)`` or ``tool(...)`` when the arguments are the agent's to supply."""
        if self.arguments is None:
            return f"{self.tool}(...)"
        args = ", ".join(f"{k}={v!r}" for k, v in self.arguments.items())
        return f"{self.tool}({args})"


@dataclass(frozen=True)
class DomainMap:
    """The read map, write-touch map and hint function of one domain."""

    reads: dict[str, ReadFn]
    touches: dict[str, TouchFn]
    hint: Callable[[tuple[str, ...]], ReadHint | None]


def domain_map(domain: str) -> DomainMap:
    """The map of ``domain``."""
    from tauguard_strategies.ledger.readmap import airline, retail, telecom

    maps = {"airline": airline.MAP, "retail": retail.MAP, "telecom": telecom.MAP}
    if domain not in maps:
        raise ValueError(f"the ledger strategy has no read map for domain '{domain}'")
    return maps[domain]


def store(ledger: LedgerBase, collection: str, key: str, entity: Any) -> str:
    """Put an observed entity at ``collection/key`` and return its path."""
    getattr(ledger, collection)[key] = entity
    return f"{collection}/{key}"
