"""The read-map types and helpers the per-domain maps build on.

They live apart from the package's ``__init__`` so the domain modules import only this
module and the package imports the domain modules: no import cycle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tauguard_strategies.ledger.ledger import LedgerBase
from tauguard.strategy_api.conversation import ToolCallView
from tauguard.strategy_api.guard import ReadRequest

ReadFn = Callable[[Any, ToolCallView, Any], list[str]]
TouchFn = Callable[[Any, ToolCallView], list[str]]


@dataclass(frozen=True)
class DomainMap:
    """The read map, write-touch map and hint function of one domain."""

    reads: dict[str, ReadFn]
    touches: dict[str, TouchFn]
    hint: Callable[[tuple[str, ...]], ReadRequest | None]
    # write tool -> the read whose parser reads its result: τ²'s writes return the updated
    # record (a reservation, an order), which is an observation like a read's
    returns: dict[str, str] = field(default_factory=dict)


def store(ledger: LedgerBase, collection: str, key: str, entity: Any) -> str:
    """Put an observed entity at ``collection/key`` and return its path."""
    getattr(ledger, collection)[key] = entity
    return f"{collection}/{key}"
