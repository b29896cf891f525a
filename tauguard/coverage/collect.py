"""What each guard checks, per (clause, write tool), read from the guards' own data.

- ledger: the predicates registered for the clause and tool (``strategies/ledger/predicates``);
  a clause its clause book marks ``tool_signature`` is enforced by the tool's arguments, for
  every guard alike.
- action-guard: the checklist items of the tool citing the clause with a deterministic
  ``check`` (items without one are judged only by the ``--guard-llm`` verifier).
- workflow: the nodes the guide cannot pass before the tool's authorization node: its own
  procedure's steps (``FlatGraph.prerequisites``) and the shared identification reads. A read
  node checks that the read was made, a dialogue node with a judge what the user or agent
  said, a decision node only when it names a deterministic ``check``; other nodes are advisory.

The part_of rule (:data:`RULE`) lets a finer quote count via the clause that contains it.

A (clause, write, guard) with neither a check nor an entry in ``not_observable.toml`` is a
"gap": reported as not checked, with no reason given (or, when the guard has no rules for the
domain at all, that reason). The entries are optional for a new domain; the tests require
them for the shipped domains.
"""

from __future__ import annotations

from functools import cache

from tauguard import domains as packs
from tauguard.coverage.model import GUARDS, Cell, Guard, NotObservable, Row, not_observable, restatements

RULE = (
    "A clause with `part_of` is checked by a guard that checks the clause containing it (for the "
    "same write), unless `not_observable.toml` names that guard and the part: the finer entry says "
    "what the containing clause's check misses. A containing clause is checked by a guard that "
    "checks every one of its parts scoped to that write. A clause that `not_observable.toml` lists "
    "under `restates` (its rule is that of other clauses) is checked by a guard that checks one of those."
)
JUDGED = ("confirm", "request", "reason", "device_report", "payment")  # the workflow tracker's deterministic judges


def _ledger(domain: str, clause: str, tool: str) -> list[str]:
    from tauguard_strategies.ledger.predicates import for_tool

    return [p.name for p in for_tool(domain, tool) if p.rule_id == clause]


@cache
def _signature(domain: str) -> frozenset[str]:
    from tauguard_strategies.ledger.clauses import domains, load

    if domain not in domains():  # no clause book: nothing is marked as enforced by the signature
        return frozenset()
    return frozenset(c.id for c in load(domain).clause if c.enforcement == "tool_signature")


@cache
def has_rules(guard: Guard, domain: str) -> bool:
    """Whether ``guard`` has rules for ``domain`` at all (the ledger's clause book, action-guard's
    checklists, the workflow graph): without them it checks nothing there."""
    if guard == "ledger":
        from tauguard_strategies.ledger.clauses import domains as clause_books

        return domain in clause_books()
    if guard == "action-guard":
        from tauguard_strategies.action_guard.schema import domain_checklists

        return bool(domain_checklists(domain))
    from tauguard_strategies.workflow.graph import domains as graphs

    return domain in graphs()


def _action_guard(domain: str, clause: str, tool: str, llm: bool = False) -> list[str]:
    from tauguard_strategies.action_guard.schema import domain_checklists

    checklist = domain_checklists(domain).get(tool)
    items = checklist.items if checklist is not None else []
    return [i.id for i in items if clause in i.clauses and (i.check is None) == llm]


def _node_checks(node: object) -> bool:
    from tauguard_strategies.workflow.graph import Node

    assert isinstance(node, Node)
    if node.type == "tool_call":
        return node.actor != "tool"  # "tool" actor nodes observe the write's own result
    if node.type in ("user_input", "agent_action"):
        return node.judge in JUDGED
    if node.type == "decision":
        return bool(node.checks)
    return False


def workflow_gate(domain: str, tool: str) -> list[str]:
    """The workflow nodes that hold ``tool`` until met, in path order."""
    from tauguard_strategies.workflow.graph import load

    graph = load(domain)
    ids = [n for n in graph.nodes if n.startswith("identify.") and graph.nodes[n].type == "tool_call"]
    for auth in graph.authorizations(tool):
        ids += [p for p in graph.prerequisites(auth) if p not in ids]
    return [n for n in ids if _node_checks(graph.nodes[n])]


def _workflow(domain: str, clause: str, tool: str) -> list[str]:
    from tauguard_strategies.workflow.graph import load

    graph = load(domain)
    return [n for n in workflow_gate(domain, tool) if clause in graph.nodes[n].clauses]


def direct_checks(guard: Guard, domain: str, clause: str, tool: str) -> list[str]:
    """The ids of what in ``guard`` checks ``clause`` for ``tool`` itself (not via part_of)."""
    if guard == "ledger":
        return _ledger(domain, clause, tool)
    if guard == "action-guard":
        return _action_guard(domain, clause, tool)
    return _workflow(domain, clause, tool)


def llm_items(domain: str, clause: str, tool: str) -> list[str]:
    """Action-guard items citing the clause that only the LLM verifier judges."""
    return _action_guard(domain, clause, tool, llm=True)


def _entry(guard: Guard, clause: str, tool: str) -> NotObservable | None:
    return next((e for e in not_observable() if e.guard == guard and e.clause == clause and (not e.tools or tool in e.tools)), None)


def _cell(guard: Guard, domain: str, clause: packs.Clause, tool: str, pack: packs.PolicyPack) -> Cell:
    if not has_rules(guard, domain):
        entry = _entry(guard, clause.id, tool)
        if entry is not None:
            return Cell(status="not_observable", reason=f"{entry.why}: {entry.reason}")
        return Cell(status="gap", reason=f"{guard} has no rules for {domain}")
    direct = direct_checks(guard, domain, clause.id, tool)
    if direct:
        return Cell(status="check", checks=direct)
    if clause.id in _signature(domain) or (clause.part_of is not None and clause.part_of in _signature(domain)):
        return Cell(status="signature", reason="the tool's arguments cannot express a violation (ledger clause book)")
    entry = _entry(guard, clause.id, tool)
    if entry is not None:
        return Cell(status="not_observable", reason=f"{entry.why}: {entry.reason}")
    if clause.part_of is not None:
        parent = direct_checks(guard, domain, clause.part_of, tool)
        if parent:
            return Cell(status="check", checks=parent, via="parent")
    parts = [c for c in pack.clause if c.part_of == clause.id and tool in c.tools]
    if parts:
        found = [direct_checks(guard, domain, p.id, tool) for p in parts]
        if all(found):
            return Cell(status="check", checks=sorted({x for f in found for x in f}), via="parts")
    same = next((r for r in restatements() if r.clause == clause.id), None)
    if same is not None:
        restated = sorted({x for other in same.same_as for x in direct_checks(guard, domain, other, tool)})
        if restated:
            return Cell(status="check", checks=restated, via="restates", reason=same.reason)
    return Cell(status="gap")


def write_clauses(domain: str) -> list[tuple[packs.Clause, str]]:
    """Every (clause, write tool) of the pack whose clause constrains that write, in pack order."""
    return [(c, tool) for c in packs.load(domain).clause for tool in c.tools]


def rows(domain_names: list[str] | None = None) -> list[Row]:
    """The coverage table: one row per (domain, clause, write tool)."""
    out: list[Row] = []
    for domain in domain_names or packs.domains():
        pack = packs.load(domain)
        for clause, tool in write_clauses(domain):
            cells = {g: _cell(g, domain, clause, tool, pack) for g in GUARDS}
            out.append(Row(domain=domain, clause=clause.id, tool=tool, part_of=clause.part_of, cells=cells))
    return out


def stale_entries() -> list[str]:
    """Not-observable entries that name a clause, tool or guard check that contradicts them."""
    problems = []
    for e in not_observable():
        domain = e.clause.split(".", 1)[0]
        try:
            clause = packs.clause(e.clause)
        except packs.UnknownClauseError:
            problems.append(f"{e.guard} {e.clause}: no such clause")
            continue
        if not clause.tools:
            problems.append(f"{e.guard} {e.clause}: the clause constrains no write")
        for tool in e.tools:
            if tool not in clause.tools:
                problems.append(f"{e.guard} {e.clause}: {tool} is not in the clause's scope {clause.tools}")
        for tool in e.tools or clause.tools:
            found = direct_checks(e.guard, domain, e.clause, tool)
            if found:
                problems.append(f"{e.guard} {e.clause} ({tool}): marked not observable but checked by {', '.join(found)}")
    for r in restatements():
        for cid in (r.clause, *r.same_as):
            try:
                packs.clause(cid)
            except packs.UnknownClauseError:
                problems.append(f"restates {r.clause}: no such clause {cid}")
    return problems
