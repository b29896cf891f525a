"""The per-simulation workflow guide: request state, guidance at user turns, write intercept.

PolicyGuide's runtime (shared/papers/workflow-guide_policyguide.md, Algorithm 1): the guide
fires at user-turn boundaries with one verifier generation for all open requests, carries
code-owned request state across turns, returns remediation for unmet steps, and intercepts a
mutating call whose authorization node is not reached. It never ends a conversation; while a
request is open its context says so (``OPEN_REQUEST_MARKER``), which is what catches a
premature stop.
"""

from __future__ import annotations

from typing import Any

from tauguard_strategies.action_guard.outcome import ItemOutcome
from tauguard_strategies.action_guard.schema import ChecklistItem
from tauguard_strategies.workflow.decisions import unmet
from tauguard_strategies.workflow.graph import FlatGraph, Node, load
from tauguard_strategies.workflow.options import WorkflowOptions
from tauguard_strategies.workflow.tracker import RequestRecord, Tracker
from tauguard_strategies.workflow.verifier import build_messages, judge, prefix
from tauguard.dialogue.guards import dialogue_judge
from tauguard.domains import UnknownClauseError
from tauguard.domains.contract import contract
from tauguard.process.score import identified
from tauguard.strategy_api.conversation import Conversation, ConversationEvent, ToolCallView
from tauguard.strategy_api.guard import (
    GUARD_ERROR_RULE,
    OPEN_REQUEST_MARKER,
    GuardDecision,
    GuardSession,
    ReadRequest,
    RuleFinding,
    SessionContext,
    Verdict,
    combine,
)

DIALOGUE = ("user_input", "agent_action")
HEADER = "WORKFLOW GUIDE (tauguard `workflow`)"


def _describe(node: Node) -> str:
    return f"{node.id}: {node.tool or node.action} (satisfied when {node.satisfied})"


class WorkflowSession(GuardSession):
    """Tracks requests through the domain's workflow graph and guides the agent."""

    def __init__(self, context: SessionContext, options: WorkflowOptions) -> None:
        self.context = context
        self.options = options
        self.graph: FlatGraph = load(context.domain)
        self.tracker = Tracker(self.graph, context.tool_types, dialogue_judge(options.dialogue, context))
        self.use_llm = bool(context.guard_llm) and options.variant != "self"
        self.system = prefix(context.policy, self.graph, options.variant == "raw") if self.use_llm else ""
        self.verifier_failed = False
        self._details: dict[str, Any] = {}
        self._conversation = Conversation()
        # decision node -> its unmet item and that item's outcome (last write gated)
        self._decided: dict[str, tuple[ChecklistItem, ItemOutcome]] = {}

    # -- node satisfaction ----------------------------------------------------------------

    def _satisfied(self, node: Node, call: ToolCallView | None) -> bool:
        if node.type == "tool_call":
            return self.tracker.read_satisfies(node, call)
        if node.type in DIALOGUE and node.judge is not None:
            if self.use_llm and not (self.verifier_failed and self.options.failure_policy == "open"):
                if self.options.variant == "raw":
                    # no graph positions: the verifier judges whole requests, dialogue nodes fall to the judge
                    return self.tracker.dialogue_satisfies(node, call, self._conversation)
                return node.id in self.tracker.state.llm_satisfied or (node.judge == "request")
            return self.tracker.dialogue_satisfies(node, call, self._conversation)
        if node.type == "decision" and node.checks and call is not None:
            found = unmet(self.graph.domain, node, call, self._conversation, self.tracker.judge)
            if found is not None:
                self._decided[node.id] = found
            return found is None
        return True  # decisions without checks (or without a proposed write), structure and unjudged steps are advisory

    def _identify_gap(self, call: ToolCallView | None = None) -> Node | None:
        """The unmet read of the identify subflow, unless (for ``call``) the write contract's
        identification holds another way (airline: the user stated the id the target's read
        shows as its owner; the policy asks only that the user provide their id)."""
        if call is not None and self._identified_by_contract(call):
            return None
        for node in self.graph.nodes.values():
            if node.id.startswith("identify.") and node.type == "tool_call" and not self._satisfied(node, None):
                return node
        return None

    def _identified_by_contract(self, call: ToolCallView) -> bool:
        try:
            rules = contract(self.graph.domain)
        except UnknownClauseError:  # a domain without a contract: only the graph's way
            return False
        write = rules.rule(call.name)
        if write is None:
            return False
        events = self._conversation.events
        return identified(rules, write, call, self._conversation, len(events), list(self.tracker.state.reads))

    def _authorization(self, tool: str) -> str | None:
        nodes = self.graph.authorizations(tool)
        open_types = {r.type for r in self.tracker.state.open_requests()}
        return next((n for n in nodes if n.split(".", 1)[0] in open_types), nodes[0] if nodes else None)

    def _gap(self, auth: str, call: ToolCallView | None) -> Node | None:
        """The first unmet prerequisite of an authorization node."""
        gap = self._identify_gap(call)
        if gap is not None:
            return gap
        for nid in self.graph.prerequisites(auth):
            node = self.graph.nodes[nid]
            if not self._satisfied(node, call):
                return node
        return None

    def _next_node(self, request: RequestRecord) -> Node | None:
        req = next(r for r in self.graph.requests if r.id == request.type)
        for tool in req.tools:
            auth = next((a for a in self.graph.authorizations(tool) if a.startswith(req.id + ".")), None)
            if auth is None:
                continue
            gap = self._gap(auth, None)
            return gap if gap is not None else self.graph.nodes[auth]
        return None

    # -- guidance ---------------------------------------------------------------------------

    def _guidance(self) -> str | None:
        open_requests = self.tracker.state.open_requests()
        if not open_requests:
            return None
        lines = [HEADER]
        for r in open_requests:
            node = self._next_node(r)
            r.next_node = node.id if node is not None else None
            step = _describe(node) if node is not None else "finish the request"
            lines.append(f"{OPEN_REQUEST_MARKER}: {r.type}. Next required step: {step}.")
        lines.append("Do not end the conversation while a request is open; resolve it, refuse it under the policy, or transfer.")
        return "\n".join(lines)

    def _fire_llm(self, conversation: Conversation) -> None:
        state = self.tracker.state.compact()
        outcome = judge(
            self.context.guard_llm or "", self.context.guard_llm_args, build_messages(self.system, conversation, state)
        )
        details: dict[str, Any] = {"usage": outcome.usage, "raw": outcome.raw}
        if outcome.answer is None:
            self.verifier_failed = True
            details.update(rule_id=f"{GUARD_ERROR_RULE}.verifier", reason=outcome.failure or "verifier failed")
        else:
            self.verifier_failed = False
            known = {r.id for r in self.graph.requests}
            have = {r.type: r for r in self.tracker.state.requests}
            index = len(conversation.events) - 1
            for j in outcome.answer.requests:
                if j.type not in known:
                    continue
                rec = have.get(j.type)
                if rec is None:
                    rec = RequestRecord(type=j.type, opened_at=index)
                    self.tracker.state.requests.append(rec)
                if rec.status == "open":
                    rec.status = j.status
                for nid in j.satisfied:
                    if nid in self.graph.nodes and nid not in self.tracker.state.llm_satisfied:
                        self.tracker.state.llm_satisfied.append(nid)
        self._details = details

    def _needs_llm(self) -> bool:
        # deterministic tracker first: call the verifier only when a request may start, or an
        # open request waits on a dialogue node the tracker cannot judge
        state = self.tracker.state
        if not state.requests:
            return True
        for r in state.open_requests():
            node = self._next_node(r)
            if node is not None and node.type in DIALOGUE:
                return True
        return False

    # -- hooks -------------------------------------------------------------------------------

    def on_user_turn(self, message: ConversationEvent, conversation: Conversation) -> str | None:
        """Update the state; with --guard-llm one verifier call; return the next steps."""
        self._details = {}
        self._conversation = conversation
        if self.options.variant == "self":
            return None
        self.tracker.update(conversation)
        if self.use_llm and self._needs_llm():
            self._fire_llm(conversation)
        guidance = self._guidance()
        self._details.setdefault("evidence", {"state": self.tracker.state.compact()})
        return guidance

    def turn_details(self) -> dict[str, Any]:
        """Usage, verifier failure and the persisted request state of the last user-turn firing."""
        return {k: v for k, v in self._details.items() if v is not None}

    def after_tool(self, result: ConversationEvent, conversation: Conversation) -> None:
        """Tool results update the tracker (reads done, writes' results)."""
        self._conversation = conversation
        self.tracker.update(conversation)

    def render_context(self) -> str | None:
        """The graph summary (workflow-self) or the current open requests and next steps."""
        if self.options.variant == "self":
            lines = [HEADER + ": follow this workflow."]
            lines += [f"- {_describe(n)}" for n in self.graph.nodes.values() if n.type not in ("entry", "exit", "decision")]
            return "\n".join(lines)
        return self._guidance()

    def before_write(self, call: ToolCallView, conversation: Conversation) -> GuardDecision:
        """Hold a write whose authorization node is not reached; name the next required step."""
        self._conversation = conversation
        self.tracker.update(conversation)
        if self.options.variant == "self" or not self.options.intercept:
            return GuardDecision.allow()
        auth = self._authorization(call.name)
        if auth is None:
            return GuardDecision.allow(f"{call.name} has no authorization node")
        gap = self._gap(auth, call)
        state = self.tracker.state
        if gap is None:
            if call.name not in state.authorized:
                state.authorized.append(call.name)
            return GuardDecision(verdict=Verdict.ALLOW, reason=f"authorization node {auth} reached", evidence={"node": auth, "state": state.compact()})
        reads = []
        if gap.type == "tool_call" and gap.tool:
            args = None
            if gap.match is not None and gap.match.write in call.arguments:
                args = {gap.match.read: call.arguments[gap.match.write]}
            reads.append(ReadRequest(tool=gap.tool, arguments=args, why=gap.satisfied))
        detail = f"{call.name} is authorized at {auth}, not reached: {gap.id} is unmet"
        verdict, rule_id, remediation = Verdict.VERIFY, gap.clauses[0], f"Next required step: {_describe(gap)}"
        decided = self._decided.get(gap.id) if gap.type == "decision" else None
        if decided is not None:  # the decision's check says what is missing or contradicts it
            item, outcome = decided
            detail += f" ({outcome.detail})"
            reads += outcome.required_reads
            rule_id = item.clauses[0]
            if outcome.status == "violated":
                # the policy forbids the write as proposed: the item's own verdict (BLOCK or
                # REVISE) under its clause, not a step the agent could still take
                verdict = item.on_violation
                remediation = item.remediation or remediation
        elif gap.judge == "confirm" and self.tracker.rejections.get(gap.id):  # why the dialogue judge found no yes
            detail += f" (dialogue judge: {self.tracker.rejections[gap.id]})"
        finding = RuleFinding(
            rule_id=rule_id,
            verdict=verdict,
            detail=detail,
            remediation=remediation,
            required_reads=reads,
            revised_arguments=decided[1].revised_arguments if decided is not None and verdict == Verdict.REVISE else None,
        )
        return combine([finding], evidence={"node": auth, "unmet": gap.id, "state": state.compact()})
