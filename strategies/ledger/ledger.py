"""The typed ledger core: observed entities at canonical paths, staleness and write history.

Following LedgerAgent (Uddin et al., arXiv:2606.20529, §3), the ledger is filled only from
successful READ tool returns; writes, failed calls and user claims never add state. After a
successful write the entities it touched are marked stale until a read observes them again.

A canonical path is ``collection/id[/field...]`` (e.g. ``reservations/SI5UKW/cabin``). The
domain subclasses (``models/``) declare the collections as typed pydantic fields.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

FactState = Literal["fresh", "stale", "missing"]


def join(*parts: str) -> str:
    """The canonical path of ``parts``."""
    return "/".join(str(p) for p in parts)


class Fact(BaseModel):
    """A ledger lookup: the value at a path and whether it can be relied on."""

    path: str
    state: FactState
    value: Any = None

    @property
    def fresh(self) -> bool:
        """Observed by a read and not changed by a write since."""
        return self.state == "fresh"


class WriteRecord(BaseModel):
    """A successful WRITE call (the paper's ``ledger.history``); its return is not absorbed."""

    seq: int
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class Entity(BaseModel):
    """Base of every ledger entity: tolerant of fields tau2 may add later."""

    model_config = ConfigDict(extra="ignore")


class LedgerBase(BaseModel):
    """State shared by every domain ledger."""

    model_config = ConfigDict(extra="forbid")

    domain: str
    stale: set[str] = Field(default_factory=set)
    history: list[WriteRecord] = Field(default_factory=list)
    reads_absorbed: int = 0
    # Read returns that could not be parsed into the schema (kept for audit, never guessed).
    unparsed_reads: list[str] = Field(default_factory=list)
    # path -> the entity as observed before the agent's own write first changed it (a
    # reservation's flights before a flight change): what qualified the write stays known
    before_writes: dict[str, Any] = Field(default_factory=dict)

    # --- staleness -------------------------------------------------------------------

    def is_stale(self, path: str) -> bool:
        """Whether ``path`` or one of its ancestors is marked stale.

        Marks below ``path`` do not make it stale: a write that changed a gift card's
        balance (``users/u/payment_methods/g/amount``) leaves the user's membership fresh.
        Predicates therefore look up the leaf facts they rely on.
        """
        return any(mark == path or path.startswith(mark + "/") for mark in self.stale)

    def mark_stale(self, paths: list[str]) -> None:
        """Mark paths changed by a successful write."""
        self.stale.update(paths)

    def refresh(self, path: str) -> None:
        """A read observed ``path`` (and everything under it) again."""
        self.stale = {m for m in self.stale if not (m == path or m.startswith(path + "/"))}

    def stale_under(self, path: str) -> list[str]:
        """Stale marks at, below or above ``path`` (for rendering an entity's marks)."""
        return sorted(m for m in self.stale if m == path or m.startswith(path + "/") or path.startswith(m + "/"))

    # --- lookup ----------------------------------------------------------------------

    def lookup(self, *parts: str) -> Fact:
        """The fact at ``parts``: its value and whether it is fresh, stale or missing."""
        path = join(*parts)
        node: Any = self
        for part in parts:
            node = _child(node, str(part))
            if node is _MISSING:
                return Fact(path=path, state="missing")
        return Fact(path=path, state="stale" if self.is_stale(path) else "fresh", value=node)


_MISSING = object()


def _child(node: Any, part: str) -> Any:
    if isinstance(node, BaseModel):
        # An observed entity's null field is an observed null (e.g. a reservation whose
        # status is null is not cancelled); only absent entities are missing.
        return getattr(node, part) if part in type(node).model_fields else _MISSING
    if isinstance(node, dict):
        return node.get(part, _MISSING)
    if isinstance(node, list) and part.isdigit():
        index = int(part)
        return node[index] if index < len(node) else _MISSING
    return _MISSING

