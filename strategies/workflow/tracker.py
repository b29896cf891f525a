"""Code-owned request state and the deterministic tracker (no LLM).

Tool-observable nodes (a read done, a write's result) are satisfied from the agent's tool
results; dialogue nodes (a request, an explicit yes, a device report) by a deterministic
judge over the conversation's text, the sim's own phrasings first. PolicyGuide keeps the
same split: "code-owned request state" persisted by the runtime, node judgements by the
verifier (shared/papers/workflow-guide_policyguide.md §3.4); with ``--guard-llm`` the LLM
verifier judges the dialogue nodes instead (:mod:`.verifier`).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field

from tauguard_strategies.workflow.graph import FlatGraph, Node
from tauguard.strategy_api.conversation import Conversation, ConversationEvent, ToolCallView
from tauguard.dialogue import NEUTRAL, DialogueJudge, view_of
from tauguard.dialogue.polarity import is_short_answer
from tauguard.dialogue.statement import facts_of, mentions_value

TRANSFER_TOOL = "transfer_to_human_agents"
_DEVICE_REPORT = re.compile(r"\bI did (\w+)")
_REFUSAL = re.compile(r"\bI(?:'m| am) sorry, but I cannot perform (\w+)")


_PAYMENT_ARGUMENTS = ("payment_id", "payment_method_id")
# "the original payment method", "the same card I used to book"
_ORIGINAL_METHOD = re.compile(r"\b(?:original|same|existing)\s+(?:\w+\s+)?(?:payment|card|method|form of payment)\b", re.IGNORECASE)


def payment_named(call: ToolCallView, conversation: Conversation) -> bool:
    """Whether the write's payment method came up in the dialogue before a user turn.

    "The user needs to provide a single gift card or credit card": the user names it, or
    answers an agent turn that named it: by id, by kind (:func:`mentions_value`), by the
    last four digits the profile shows for it ("Visa ending in 7238"), or as "the original
    payment method" when it paid the write's target (its payment history). A method the
    agent picks without ever putting it to the user is not provided by the user. A write
    without a payment argument needs none.
    """
    wanted = [v for k in _PAYMENT_ARGUMENTS if isinstance(v := call.arguments.get(k), str)]
    if not wanted:
        return True
    view = view_of(conversation)
    facts = facts_of(view)
    target = call.arguments.get("reservation_id") or call.arguments.get("order_id")
    history = (facts.records.get(str(target)) or {}).get("payment_history") if target is not None else None
    paid_target = {str(p.get("payment_id") or p.get("payment_method_id")) for p in history or [] if isinstance(p, dict)}
    last_four = {str(m["last_four"]) for r in facts.records.values() for pid, m in (r.get("payment_methods") or {}).items()
                 if pid in wanted and isinstance(m, dict) and m.get("last_four")} if len(wanted) == 1 else set()

    def names(text: str) -> bool:
        if all(mentions_value(text, v, facts.methods) for v in wanted):
            return True
        if any(re.search(r"(?<!\d)" + re.escape(d) + r"(?!\d)", text) for d in last_four):
            return True
        return set(wanted) <= paid_target and bool(_ORIGINAL_METHOD.search(text))

    turns = view.turns
    return any(names(t.text) for i, t in enumerate(turns) if t.role == "user" or any(u.role == "user" for u in turns[i + 1:]))


class RequestRecord(BaseModel):
    """One user request the guide tracks."""

    type: str  # a request id of the graph
    status: Literal["open", "done", "refused"] = "open"
    opened_at: int  # conversation event index
    next_node: str | None = None  # the first unmet node toward its authorization


class WorkflowState(BaseModel):
    """The code-owned state persisted in guard events."""

    requests: list[RequestRecord] = Field(default_factory=list)
    authorized: list[str] = Field(default_factory=list)  # write tools whose authorization node was reached
    reads: list[ToolCallView] = Field(default_factory=list)  # executed agent reads
    writes: list[tuple[int, ToolCallView]] = Field(default_factory=list)  # executed agent writes (event index)
    device_reports: list[tuple[int, str]] = Field(default_factory=list)  # (event index, device tool)
    llm_satisfied: list[str] = Field(default_factory=list)  # dialogue nodes the LLM verifier judged met
    seen: int = 0  # events processed

    def open_requests(self) -> list[RequestRecord]:
        """Requests still open."""
        return [r for r in self.requests if r.status == "open"]

    def compact(self) -> dict[str, Any]:
        """What a guard event records (not the raw reads)."""
        return {
            "requests": [r.model_dump() for r in self.requests],
            "authorized": list(self.authorized),
            "reads": len(self.reads),
            "writes": [c.name for _, c in self.writes],
        }


class Tracker:
    """Updates :class:`WorkflowState` from new conversation events."""

    def __init__(self, graph: FlatGraph, tool_types: dict[str, str], judge: DialogueJudge = NEUTRAL) -> None:
        self.graph = graph
        self.tool_types = tool_types
        self.judge = judge  # who judges an explicit yes (the strategy's ``dialogue`` option)
        self.rejections: dict[str, str] = {}  # confirm node -> the judge's last reason it is unmet ("" if none given)
        self.state = WorkflowState()
        self._calls: dict[str, ToolCallView] = {}

    def update(self, conversation: Conversation) -> None:
        """Process the events not seen yet (the calls a gated write's message issued before it
        are left for later: the message may be held and asked again)."""
        events = conversation.events
        end = conversation.settled()
        for index in range(self.state.seen, end):
            self._event(index, events[index], events)
        self.state.seen = max(self.state.seen, end)

    def _event(self, index: int, event: ConversationEvent, events: list[ConversationEvent]) -> None:
        state = self.state
        if event.kind == "user_message" and event.content:
            self._user_text(index, event.content)
        elif event.kind == "agent_message" and event.content:
            m = _REFUSAL.search(event.content)
            if m:
                self._close(m.group(1), "refused")
        elif event.kind == "tool_result" and event.tool_call is not None and not event.error:
            call = event.tool_call
            kind = self.tool_types.get(call.name)
            if call.name == TRANSFER_TOOL:
                for r in state.open_requests():
                    r.status = "refused"
            elif kind == "WRITE":
                state.writes.append((index, call))
                self._close(call.name, "done")
            else:
                state.reads.append(call)

    def _user_text(self, index: int, text: str) -> None:
        m = _DEVICE_REPORT.search(text)
        if m:
            self.state.device_reports.append((index, m.group(1)))
            return
        if is_short_answer(text):
            return
        low = text.lower()
        known = {r.type for r in self.state.requests}
        for req in self.graph.requests:
            if req.id not in known and any(t in low for t in req.triggers):
                self.state.requests.append(RequestRecord(type=req.id, opened_at=index))

    def _close(self, tool: str, status: Literal["done", "refused"]) -> None:
        for r in self.state.open_requests():
            req = next(q for q in self.graph.requests if q.id == r.type)
            if tool in req.tools:
                r.status = status

    # -- node satisfaction ----------------------------------------------------------------

    def read_satisfies(self, node: Node, call: ToolCallView | None) -> bool:
        """A tool_call node: an executed read of its tool (of the write's target, with ``match``)."""
        for read in self.state.reads:
            if read.name not in node.read_tools:
                continue
            if node.match is None or call is None or node.match.write not in call.arguments:
                return True
            if read.arguments.get(node.match.read) == call.arguments[node.match.write]:
                return True
        return False

    def dialogue_satisfies(self, node: Node, call: ToolCallView | None, conversation: Conversation) -> bool:
        """A dialogue node by the tracker's rules; an explicit yes by the dialogue judge."""
        if node.judge == "confirm":
            if call is None:
                return False
            try:
                finding = self.judge.confirmation(self.graph.domain, view_of(conversation), call)
                why = finding.rejection
                self.rejections[node.id] = why.says() if why is not None else ""
                return finding.confirmed
            except Exception:  # noqa: BLE001 -- a failed LLM judge leaves the node unmet (the write is held)
                return False
        if node.judge == "device_report":
            return any(tool in node.tools for _, tool in self.state.device_reports)
        if node.judge == "payment":
            return call is None or payment_named(call, conversation)
        if node.judge in ("request", "reason"):
            # the user stated something beyond a short answer (the request, the reason)
            return any(
                e.kind == "user_message" and e.content and not is_short_answer(e.content) and not _DEVICE_REPORT.search(e.content)
                for e in conversation.events
            )
        return True  # no deterministic judge: advisory
