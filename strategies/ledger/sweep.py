"""No-false-block sweep: every gold WRITE of every base task through the ledger gate.

One replay per task (equivalent to ``tauguard.replay.decision_points`` +
``gate_after_prefix`` for each write, but incremental): the gold plan's calls run in order in
a real environment, agent-side results feed the sessions as the live wrapper does, and each
gold WRITE is gated before it executes (then executed regardless, as the gold plan does).

Two sessions watch the same replay:

- ``gold``: sees exactly the gold plan. Gold plans often omit reads (telecom gold plans have
  none), so VERIFY is expected where the plan never observes what the gate needs;
- ``compliant``: additionally performs the reads the gate asks for (its VERIFY
  ``required_reads``; arguments the gate leaves to the agent are filled by a small oracle
  from ledger facts, e.g. the order owner's email for authentication) and is gated again.
  Reads do not change the environment, so both sessions see the same state. This shows the
  predicates themselves accept every gold write once their facts are observed.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Literal

from pydantic import BaseModel, Field

from tauguard_strategies.ledger.session import LedgerSession
from tauguard import tau2compat as t2
from tauguard.conversation import Conversation, ToolCallView
from tauguard.guard import GuardDecision, Verdict
from tauguard.replay import call_tool, fresh_environment, plan_events
from tauguard.sim.plan import gold_plan, observing_reads

Mode = Literal["gold", "compliant"]
MAX_ROUNDS = 6


class GateRecord(BaseModel):
    """The gate's decision on one gold WRITE."""

    domain: str
    task_id: str
    write_index: int
    tool: str
    mode: Mode
    verdict: Verdict
    rule_id: str | None = None
    reason: str = ""
    required_reads: list[str] = Field(default_factory=list)
    stale: bool = False  # the VERIFY concerns a fact a previous write made stale
    gold_reads_target: bool  # the gold plan reads the write's target before it
    extra_reads: int = 0  # reads the compliant session added
    gold_write_failed: bool = False  # tau2's tool itself rejected the gold write (an error result)
    skipped: int = 0  # predicates that could not read the call (left to the tool)

    @property
    def verify_kind(self) -> str:
        """A short label of what a VERIFY asked for (tools of the requested reads)."""
        tools = sorted({r.split("(", 1)[0] for r in self.required_reads}) or ["(no read named)"]
        return ("stale: " if self.stale else "missing: ") + ", ".join(tools)


def _record(domain: str, task_id: str, index: int, call: ToolCallView, mode: Mode, decision: GuardDecision,
            gold_reads_target: bool, extra: int = 0) -> GateRecord:
    reads = [_describe(r) for r in decision.evidence.get("required_reads", [])]
    findings = decision.evidence.get("findings", [])
    stale = any("stale" in f.get("detail", "") for f in findings if f.get("verdict") == "VERIFY")
    return GateRecord(domain=domain, task_id=task_id, write_index=index, tool=call.name, mode=mode,
                      verdict=decision.verdict, rule_id=decision.rule_id, reason=decision.reason,
                      required_reads=reads, stale=stale, gold_reads_target=gold_reads_target, extra_reads=extra,
                      skipped=len(decision.evidence.get("skipped", [])))


def _describe(hint: dict[str, Any]) -> str:
    args = hint.get("arguments")
    if args is None:
        return f"{hint['tool']}(...)"
    return f"{hint['tool']}(" + ", ".join(f"{k}={v!r}" for k, v in args.items()) + ")"


# --- the compliant agent's oracle for reads whose arguments come from the user -------------


def _oracle_reads(session: LedgerSession, call: ToolCallView, hint: dict[str, Any]) -> list[ToolCallView]:
    led: Any = session.ledger
    tool = hint["tool"]
    if hint.get("arguments") is not None:
        return [ToolCallView(id="", name=tool, arguments=dict(hint["arguments"]))]
    if session.domain == "retail" and tool == "find_user_id_by_email":
        order = led.orders.get(call.arguments.get("order_id", ""))
        owner = order.user_id if order is not None else call.arguments.get("user_id")
        if owner is None:
            return []
        user = led.users.get(owner)
        if user is None:
            return [ToolCallView(id="", name="get_user_details", arguments={"user_id": owner})]
        return [ToolCallView(id="", name="find_user_id_by_email", arguments={"email": user.email})]
    if session.domain == "airline" and tool == "get_user_details":
        res = led.reservations.get(call.arguments.get("reservation_id", ""))
        owner = res.user_id if res is not None else call.arguments.get("user_id")
        return [ToolCallView(id="", name="get_user_details", arguments={"user_id": owner})] if owner else []
    if session.domain == "airline" and tool == "search_direct_flight":
        res = led.reservations.get(call.arguments.get("reservation_id", ""))
        if res is None:
            return []
        dates = sorted({str(f["date"]) for f in call.arguments.get("flights", [])})
        legs = [(res.origin, res.destination), (res.destination, res.origin)]
        return [ToolCallView(id="", name=name, arguments={"origin": o, "destination": d, "date": day})
                for day in dates for o, d in legs for name in ("search_direct_flight", "search_onestop_flight")]
    if session.domain == "airline" and tool == "get_reservation_details":
        user = led.users.get(call.arguments.get("user_id", ""))
        return [ToolCallView(id="", name=tool, arguments={"reservation_id": r}) for r in (user.reservations if user else [])]
    return []


def _comply(session: LedgerSession, env: t2.Environment, call: ToolCallView, seen: Conversation) -> tuple[GuardDecision, int]:
    """Gate ``call``; on VERIFY perform the requested reads and gate again."""
    done: set[str] = set()
    extra = 0
    decision = session.before_write(call, seen)
    for _ in range(MAX_ROUNDS):
        if decision.verdict != Verdict.VERIFY:
            break
        reads: list[ToolCallView] = []
        for hint in decision.evidence.get("required_reads", []):
            reads += _oracle_reads(session, call, hint)
        todo = [r for r in reads if _key(r) not in done]
        if not todo:
            break
        for read in todo:
            if _key(read) in done:
                continue
            done.add(_key(read))
            read = read.model_copy(update={"id": f"oracle-{extra}"})
            session.after_tool(call_tool(env, read), seen)
            extra += 1
        decision = session.before_write(call, seen)
    return decision, extra


def _key(call: ToolCallView) -> str:
    return call.name + repr(sorted(call.arguments.items()))


# --- the sweep -------------------------------------------------------------------------------


def sweep_task(domain: str, task: t2.Task) -> list[GateRecord]:
    """Gate every gold WRITE of ``task`` in both modes (one replay)."""
    agent_types, _ = t2.tool_types(domain)
    plan = gold_plan(domain, task)
    reads_target = {step.write_index: bool(observing_reads(plan, pos)) for pos, step in enumerate(plan) if step.is_write}
    env = fresh_environment(domain, task)
    gold, compliant = LedgerSession(domain, agent_types), LedgerSession(domain, agent_types)
    seen = Conversation()
    records: list[GateRecord] = []
    index = 0
    for event in plan_events(task, plan):
        call = event.tool_call
        if event.kind == "user_tool_call" and call is not None:
            call_tool(env, call)  # device side: changes the environment, never seen by the guard
            continue
        if event.kind != "agent_tool_call" or call is None:
            continue
        if agent_types.get(call.name) == "WRITE":
            target = reads_target.get(index, False)
            records.append(_record(domain, task.id, index, call, "gold", gold.before_write(call, seen), target))
            decision, extra = _comply(compliant, env, call, seen)
            records.append(_record(domain, task.id, index, call, "compliant", decision, target, extra))
            index += 1
        result = call_tool(env, call)
        if agent_types.get(call.name) == "WRITE" and result.error:
            records[-1].gold_write_failed = records[-2].gold_write_failed = True
        seen.add(event)
        seen.add(result)
        gold.after_tool(result, seen)
        compliant.after_tool(result, seen)
    return records


def tasks_with_writes(domain: str, split: str = "base") -> list[t2.Task]:
    """Tasks of ``split`` whose gold plan has at least one agent WRITE."""
    return [t for t in t2.load_tasks(domain, split) if not t2.is_policy_violation_task(domain, t)]


def sweep(domain: str, split: str = "base", task_ids: list[str] | None = None) -> list[GateRecord]:
    """Gate every gold WRITE of the split's tasks (or of ``task_ids``)."""
    records: list[GateRecord] = []
    for task in tasks_with_writes(domain, split):
        if task_ids is None or task.id in task_ids:
            records += sweep_task(domain, task)
    return records


def counts(records: list[GateRecord], mode: Mode) -> dict[str, int]:
    """Verdict counts of one mode (all four verdicts present)."""
    c = Counter(r.verdict.value for r in records if r.mode == mode)
    return {v.value: c.get(v.value, 0) for v in Verdict}


def verify_breakdown(records: list[GateRecord], mode: Mode) -> dict[str, int]:
    """VERIFY counts by what was asked for, split by whether the gold plan reads the target."""
    c: Counter[str] = Counter()
    for r in records:
        if r.mode == mode and r.verdict == Verdict.VERIFY:
            where = "gold reads target" if r.gold_reads_target else "gold never reads target"
            c[f"{where} | {r.verify_kind}"] += 1
    return dict(sorted(c.items()))
