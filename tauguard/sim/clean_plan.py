"""The sim's fault-free plan: the gold plan plus the reads a compliant agent performs.

Before each agent WRITE the sim reads what the write targets and the write's prior reads (per
the domain's write contract, ``tauguard/domains/<domain>/writes.toml``) unless it already read
them since the last write, and it identifies the user once at the start.
Identities come from the task's own database (the sim is a simulation and may look them
up), through the contract: ``[entities]`` give the read that shows a target's owner,
``[identification]`` the read that identifies them; reads never change the database, so
tau2's rewards are unaffected.
"""

from __future__ import annotations

import inspect
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict

from tauguard.tau2_adapter import compat as t2
from tauguard.domains.contract import DomainContract, contract, contract_domains
from tauguard.strategy_api.conversation import ToolCallView
from tauguard.strategy_api.guard import ReadRequest
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


def identity_argument(c: DomainContract) -> str | None:
    """The argument naming the user a write acts for, from the contract: the field the
    owner-bearing ``[entities]`` name (airline, retail: ``user_id``), else the id argument of
    the entity an identifying read observes (telecom: ``customer_id``)."""
    owners = sorted({e.owner for e in c.entities.values() if e.owner})
    if owners:
        return owners[0]
    reads = set(c.identification.reads)
    return next((arg for arg, e in c.entities.items() if e.read in reads), None)


def _read(tools: Any, name: str, **arguments: Any) -> Any:
    """A read on the task's pristine toolkit (reads never change its database); None for an unknown id."""
    try:
        return tools.use_tool(name, **arguments)
    except (ValueError, KeyError, TypeError):  # tau2's tools raise ValueError for an id they do not know
        return None


def _field(record: Any, name: str) -> Any:
    return record.get(name) if isinstance(record, dict) else getattr(record, name, None)


def _owner(domain: str, tools: Any, call: ToolCallView) -> str | None:
    """The user (airline, retail) or customer (telecom) a write acts for: the owner its target
    entity's read shows (``[entities]`` with an ``owner``), else the write's own identity argument."""
    c = contract(domain)
    args = call.arguments
    for arg, entity in c.entities.items():
        value = args.get(arg)
        if entity.owner and isinstance(value, str) and value:
            owner = _field(_read(tools, entity.read, **{entity.argument: value}), entity.owner)
            if owner:
                return str(owner)
    identity = identity_argument(c)
    return args.get(identity) if identity else None


def _identify(domain: str, tools: Any, owner: str) -> ToolCallView | None:
    """The contract's first identifying read for ``owner``: each of its parameters is the
    identity itself or the field of that name on the owner's record (retail: the email)."""
    c = contract(domain)
    tool = load_lookups()[domain].identify
    identity = identity_argument(c)
    arguments: dict[str, Any] = {}
    record: Any = None
    for param in inspect.signature(tools.tools[tool]).parameters:
        if param == identity:
            arguments[param] = owner
            continue
        entity = c.entities.get(identity) if identity else None
        if record is None and entity is not None:
            record = _read(tools, entity.read, **{entity.argument: owner})
        value = _field(record, param) if record is not None else None
        if value is None:
            return None
        arguments[param] = value
    return ToolCallView(id="", name=tool, arguments=arguments)


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


def _key(call: ToolCallView) -> tuple[str, tuple[tuple[str, str], ...]]:
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
    tools = (pristine if pristine is not None else t2.task_environment(domain, task)).tools
    db = tools.db
    out: list[Step] = []
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()  # reads done since the last write
    identified = False
    added = 0
    for pos, step in enumerate(plan):
        if step.kind == "call" and step.call is not None and step.tool_type == "READ":
            seen.add(_key(step.call))
        if step.kind == "confirm" and step.call is not None and step.write_index is not None:
            reads: list[ToolCallView] = []
            owner = _owner(domain, tools, step.call)
            # A contract with no identity argument (no id names the user) identifies by a read
            # that needs none (τ²'s mock: get_users); _identify returns None if it needs one.
            anonymous = identity_argument(contract(domain)) is None
            rule = contract(domain).rule(step.call.name)
            if not identified and (owner or (anonymous and rule is not None and rule.identify is not None)):
                ident = _identify(domain, tools, owner or "")
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
