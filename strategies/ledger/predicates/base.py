"""Predicate plumbing: the gate context, findings, and the predicate registry.

A predicate checks one policy clause for one or more WRITE tools against ledger facts. It
returns None when the clause holds, or a :class:`~tauguard.strategy_api.guard.RuleFinding` (VERIFY /
REVISE / BLOCK). Facts are read through the context, which records every value used as
evidence and turns a missing or stale required fact into VERIFY with the read that would
observe it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tauguard.domains.consistency import check_scope, check_write
from tauguard_strategies.ledger.ledger import Fact
from tauguard_strategies.ledger.readmap.base import DomainMap
from tauguard.strategy_api.conversation import ToolCallView
from tauguard.strategy_api.guard import ReadRequest, RuleFinding, Verdict
from tauguard.strategy_api.registry import Registry

# The predicates' name for the shared finding type; a predicate leaves ``rule_id`` empty
# (the gate fills in the clause id it was registered under).
Finding = RuleFinding


def payment_source(payment_id: str) -> str | None:
    """The kind a τ² payment-method id names (``gift_card_0123`` -> ``gift_card``), or None.

    τ²'s ids are the method's source and a number; a predicate uses this only where the
    profile was not read but the entity's own payment history shows the method is the user's.
    """
    m = re.fullmatch(r"([a-z]+(?:_[a-z]+)*)_\d+", payment_id)
    return m.group(1) if m else None


class NeedFact(Exception):
    """A required fact is missing or stale (raised inside predicates, caught by the gate)."""

    def __init__(self, fact: Fact, hint: ReadRequest | None) -> None:
        super().__init__(fact.path)
        self.fact = fact
        self.hint = hint


_SCALARS = (str, int, float, bool, type(None))


@dataclass
class GateContext:
    """What a predicate sees: the proposed call and the ledger, plus an evidence log."""

    call: ToolCallView
    ledger: Any  # the domain's LedgerBase subclass
    dmap: DomainMap
    facts: dict[str, Any] = field(default_factory=dict)
    # What the user said in the conversation, for the one dialogue fact the write contract lets
    # identify a user: the user id they state (``IdentityWay.stated``; airline only).
    user_text: str = ""
    stated_identity: bool = False  # the domain's contract has a stated-id identification way
    # The calls before the proposed one in its agent message: issued, not yet executed, so not
    # in the ledger's history (tauguard.strategy_api.conversation.Conversation.gated_at).
    pending: tuple[ToolCallView, ...] = ()

    def arg(self, name: str, default: Any = None) -> Any:
        """An argument of the proposed call."""
        return self.call.arguments.get(name, default)

    def peek(self, *parts: str) -> Fact:
        """The fact at ``parts`` whatever its state (scalars are recorded as evidence)."""
        fact: Fact = self.ledger.lookup(*parts)  # ledger is Any: the domain's LedgerBase subclass
        if fact.state != "missing" and _is_small(fact.value):
            self.facts[fact.path] = fact.value if fact.fresh else {"stale": fact.value}
        return fact

    def need(self, *parts: str) -> Any:
        """The fresh value at ``parts``; raises :class:`NeedFact` when missing or stale."""
        fact = self.peek(*parts)
        if not fact.fresh:
            raise NeedFact(fact, self.hint(*parts))
        return fact.value

    def hint(self, *parts: str) -> ReadRequest | None:
        """The read that would observe ``parts``."""
        return self.dmap.hint(tuple(str(p) for p in parts))

    def user_stated(self, value: str) -> bool:
        """Whether the contract lets a stated id identify the user and the user stated ``value``."""
        found = self.stated_identity and bool(value) and re.search(rf"(?<!\w){re.escape(value)}(?!\w)", self.user_text) is not None
        if found:
            self.facts["stated_user_id"] = value
        return found

    def note(self, key: str, value: Any) -> None:
        """Record a derived value (e.g. the policy clock or a computed allowance) as evidence."""
        self.facts[key] = value

    def verify(self, detail: str, paths: list[tuple[str, ...]], remediation: str = "") -> RuleFinding:
        """VERIFY naming the reads that would observe ``paths``."""
        hints: list[ReadRequest] = []
        for parts in paths:
            h = self.hint(*parts)
            if h is not None and h not in hints:
                hints.append(h)
        if not remediation:
            remediation = "read first: " + ", ".join(h.describe() for h in hints) if hints else "observe the missing facts with a read tool first"
        return RuleFinding(verdict=Verdict.VERIFY, detail=detail, remediation=remediation, required_reads=hints)


def _is_small(value: Any) -> bool:
    if isinstance(value, _SCALARS):
        return True
    if isinstance(value, list) and len(value) <= 20:
        return all(isinstance(v, _SCALARS) for v in value)
    return False


PredicateFn = Callable[[GateContext], "RuleFinding | None"]


@dataclass(frozen=True)
class Predicate:
    """A registered predicate: one clause (rule_id) checked for one WRITE tool."""

    domain: str
    tool: str
    rule_id: str
    fn: PredicateFn

    @property
    def name(self) -> str:
        """The function name (e.g. ``cancel_requires_basis``)."""
        return self.fn.__name__


# Keyed "<domain>:<tool>:<function>", in registration order (the gate's evaluation order).
predicates: Registry[Predicate] = Registry(
    "ledger predicate", check=lambda p: isinstance(p, Predicate), expected="a Predicate"
)


def predicate(domain: str, rule_id: str, *tools: str) -> Callable[[PredicateFn], PredicateFn]:
    """Register ``fn`` as the check of clause ``rule_id`` for each of ``tools``."""

    def register(fn: PredicateFn) -> PredicateFn:
        for tool in tools:
            # a predicate enforces its clause on writes the clause constrains (the contract's scopes)
            check_write(domain, tool, f"ledger predicate {fn.__name__}")
            check_scope(domain, [tool], rule_id, f"ledger predicate {fn.__name__}")
            predicates.add(f"{domain}:{tool}:{fn.__name__}", Predicate(domain, tool, rule_id, fn))
        return fn

    return register


__all__ = ["Finding", "GateContext", "NeedFact", "Predicate", "predicate", "predicates"]
