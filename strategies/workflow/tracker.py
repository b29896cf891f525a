"""Code-owned request state and the deterministic tracker (no LLM).

Tool-observable nodes (a read done, a write's result) are satisfied from the agent's tool
results; dialogue nodes (a request, an explicit yes, a device report) by a deterministic
judge over the conversation's text, the sim's own phrasings first. PolicyGuide keeps the
same split: "code-owned request state" persisted by the runtime, node judgements by the
verifier (shared/papers/workflow-guide_policyguide.md §3.4); with ``--guard-llm`` the LLM
verifier judges the dialogue nodes instead (:mod:`.verifier`).
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, Field

from tauguard_strategies.workflow.graph import FlatGraph, Node
from tauguard.strategy_api.conversation import Conversation, ConversationEvent, ToolCallView
from tauguard.dialogue import NEUTRAL, DialogueJudge, view_of
from tauguard.dialogue.polarity import is_short_answer
from tauguard_strategies.action_guard.dialogue import payment_named

TRANSFER_TOOL = "transfer_to_human_agents"
_DEVICE_REPORT = re.compile(r"\bI did (\w+)")
_REFUSAL = re.compile(r"\bI(?:'m| am) sorry, but I cannot perform (\w+)")


def _ids_of(content: str | None) -> list[tuple[str, str]]:
    """The top-level ``*_id`` fields of a write's JSON result (what it created or changed)."""
    try:
        data = json.loads(content or "")
    except ValueError:
        return []
    if not isinstance(data, dict):
        return []
    return [(k, v) for k, v in data.items() if k.endswith("_id") and isinstance(v, str) and v]


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
    # (key, id) of the entities the agent's own writes returned (a booking's reservation id):
    # a write's result shows what it created as a read would
    created: list[tuple[str, str]] = Field(default_factory=list)
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
                state.created += _ids_of(event.content)
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
        if node.match is not None and call is not None and node.match.write in call.arguments:
            # the target is what one of the agent's own writes returned (it booked it)
            return (node.match.read, str(call.arguments[node.match.write])) in self.state.created
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
            return call is None or payment_named(call, view_of(conversation))
        if node.judge in ("request", "reason"):
            # the user stated something beyond a short answer (the request, the reason)
            return any(
                e.kind == "user_message" and e.content and not is_short_answer(e.content) and not _DEVICE_REPORT.search(e.content)
                for e in conversation.events
            )
        return True  # no deterministic judge: advisory
