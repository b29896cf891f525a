"""The sim's fault-free plan: the gold plan plus the reads a compliant agent performs.

Before each agent WRITE the sim reads what the write targets and the write's prior reads (per
the domain's write contract, ``tauguard/domains/<domain>/writes.toml``) unless it already read
them since the last write, and it identifies the user once at the start.
Identities come from the task's own database (the sim is a simulation and may look them
up); reads never change the database, so tau2's rewards are unaffected.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict

from tauguard import tau2compat as t2
from tauguard.domains.contract import contract, contract_domains
from tauguard.conversation import ToolCallView
from tauguard.guard import ReadRequest
from tauguard.sim.oracle import reads_for
from tauguard.sim.plan import Step, gold_plan

class Lookup(BaseModel):
    """The read observing one kind of identifier."""

    model_config = ConfigDict(extra="forbid")
    tool: str
    argument: str


class DomainLookups(BaseModel):
    """A domain's identification read and lookups by write argument name."""

    model_config = ConfigDict(extra="forbid")
    identify: str
    identified_by: list[str]
    lookups: dict[str, Lookup]
    before: dict[str, list[str]] = {}


@lru_cache(maxsize=1)
def load_lookups() -> dict[str, DomainLookups]:
    """Per domain, the reads the sim makes before writes, derived from the write contract."""
    out: dict[str, DomainLookups] = {}
    for domain in contract_domains():
        c = contract(domain)
        out[domain] = DomainLookups(
            identify=c.identification.reads[0],
            identified_by=c.identification.reads,
            lookups={arg: Lookup(tool=e.read, argument=e.argument) for arg, e in c.entities.items()},
            before={w.tool: [p.tool for p in w.prior] for w in c.write if w.prior},
        )
    return out


def _owner(domain: str, db: Any, call: ToolCallView) -> str | None:
    """The user (airline, retail) or customer (telecom) a write acts for."""
    args = call.arguments
    if domain == "airline":
        res = db.reservations.get(args.get("reservation_id", ""))
        return res.user_id if res is not None else args.get("user_id")
    if domain == "retail":
        order = db.orders.get(args.get("order_id", ""))
        return order.user_id if order is not None else args.get("user_id")
    return args.get("customer_id")


def _identify(domain: str, db: Any, owner: str) -> ToolCallView | None:
    spec = load_lookups()[domain]
    if domain == "retail":
        user = db.users.get(owner)
        return None if user is None else ToolCallView(id="", name=spec.identify, arguments={"email": user.email})
    if domain == "airline":
        return ToolCallView(id="", name=spec.identify, arguments={"user_id": owner})
    return ToolCallView(id="", name=spec.identify, arguments={"customer_id": owner})


def confirmation_note(domain: str, db: Any, call: ToolCallView) -> str | None:
    """What a compliant agent adds when stating a write: the price of a telecom refuel
    ("To refuel data you should: ... Confirm the price")."""
    if domain != "telecom" or call.name != "refuel_data":
        return None
    line = next((ln for ln in db.lines if ln.line_id == call.arguments.get("line_id")), None)
    plan = next((p for p in db.plans if line is not None and p.plan_id == line.plan_id), None)
    amount = call.arguments.get("gb_amount")
    if plan is None or not isinstance(amount, (int, float)):
        return None
    return f"The price is ${plan.data_refueling_price_per_gb * amount:.2f} (${plan.data_refueling_price_per_gb:.2f} per GB)."


def _key(call: ToolCallView) -> tuple[str, tuple]:
    return (call.name, tuple(sorted((k, str(v)) for k, v in call.arguments.items())))


def _read_step(call: ToolCallView, n: int) -> Step:
    return Step(kind="call", call=call.model_copy(update={"id": f"compliance-{call.name}-{n}"}), tool_type="READ")


_CACHE: dict[tuple[str, str], list[Step]] = {}


def sim_plan(domain: str, task: t2.Task, pristine: t2.Environment | None = None) -> list[Step]:
    """The gold plan with the compliance reads inserted (cached per process).

    ``pristine``: an environment already in the task's initial state, to read identities
    from instead of building one (it is only read).
    """
    key = (domain, task.id)
    if key not in _CACHE:
        _CACHE[key] = _build(domain, task, pristine)
    return [s.model_copy(deep=True) for s in _CACHE[key]]


def _build(domain: str, task: t2.Task, pristine: t2.Environment | None) -> list[Step]:
    plan = gold_plan(domain, task)
    writes = [s for s in plan if s.is_write and s.call is not None]
    if not writes or domain not in load_lookups():
        return plan
    spec = load_lookups()[domain]
    db = (pristine if pristine is not None else t2.task_environment(domain, task)).tools.db
    out: list[Step] = []
    seen: set[tuple[str, tuple]] = set()  # reads done since the last write
    identified = False
    added = 0
    for pos, step in enumerate(plan):
        if step.kind == "call" and step.call is not None and step.tool_type == "READ":
            seen.add(_key(step.call))
        if step.kind == "confirm" and step.call is not None and step.write_index is not None:
            reads: list[ToolCallView] = []
            owner = _owner(domain, db, step.call)
            if not identified and owner:
                ident = _identify(domain, db, owner)
                if ident is not None and not any(
                    s.kind == "call" and s.call is not None and s.call.name in spec.identified_by for s in plan[:pos]
                ):
                    reads.append(ident)
                identified = True
            for arg, value in step.call.arguments.items():
                lookup = spec.lookups.get(arg)
                if lookup is not None and isinstance(value, str) and value:
                    reads.append(ToolCallView(id="", name=lookup.tool, arguments={lookup.argument: value}))
            for tool in spec.before.get(step.call.name, []):
                reads += reads_for(domain, db, step.call, ReadRequest(tool=tool))
            for read in reads:
                if _key(read) not in seen:
                    seen.add(_key(read))
                    out.append(_read_step(read, added))
                    added += 1
        if step.kind == "confirm" and step.call is not None:
            note = confirmation_note(domain, db, step.call)
            if note:
                step = step.model_copy(update={"infos": [note]})
        out.append(step)
        if step.is_write:
            seen = set()  # a write makes what was read stale
    return out
