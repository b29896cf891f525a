"""The LLM verifier: one structured call per firing, covering every open request.

The prompt puts the policy, the workflow graph (or, for ``workflow-raw``, only the raw
policy), the judging rules and the output contract in a byte-stable prefix (the system
message), and only the conversation and the latest request state in the user message, so
providers can cache the prefix (PolicyGuide, shared/papers/workflow-guide_policyguide.md,
Appendix: "The verifier prompt places the policy, workflow graph, tool specifications,
judging rules, and output contract in a byte-stable prefix"). A transport error or an
unparseable answer is returned as a failure, never raised. The call is
:func:`tauguard.llm_call.structured` (the run's rate limits, retries and cache; role ``guard``).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field

from tauguard_strategies.workflow.graph import FlatGraph
from tauguard.strategy_api.conversation import Conversation
from tauguard.strategy_api.conversation_text import render_conversation
from tauguard.dialogue.wording import CONFIRMATION_RULE
from tauguard.llm_call import StructuredResult

RULES = """\
You are the workflow verifier of a customer-service agent. You track every user request \
through the workflow and judge which workflow nodes the conversation satisfies.
Rules:
- Facts about accounts, orders, reservations, bills or lines count only when a tool result \
shows them; what the user claims is not evidence.
- A dialogue node (user_input, agent_action) is satisfied only by what was actually said. \
""" + CONFIRMATION_RULE + """
- A request is "done" when its write succeeded or nothing is left to do, "refused" when the \
agent refused or transferred it under the policy, otherwise "open".
Answer with exactly one JSON object and nothing else:
{"requests": [{"type": "<request id>", "status": "open" | "done" | "refused", "satisfied": ["<node id>", ...]}],
 "guidance": "<one or two sentences: the next required step for the agent, or empty>"}"""


class RequestJudgement(BaseModel):
    """The verifier's view of one request."""

    type: str
    status: Literal["open", "done", "refused"] = "open"
    satisfied: list[str] = Field(default_factory=list)


class Judgement(BaseModel):
    """The verifier's structured answer."""

    requests: list[RequestJudgement] = Field(default_factory=list)
    guidance: str = ""


def prefix(policy: str, graph: FlatGraph, raw_policy_only: bool) -> str:
    """The byte-stable system message: rules, policy and (unless raw) the graph as JSON."""
    parts = [RULES, "<policy>\n" + policy.strip() + "\n</policy>"]
    if raw_policy_only:
        parts.append("Request ids: " + ", ".join(r.id for r in graph.requests) + ". Node ids: use the request id for the whole request.")
    else:
        nodes = [
            {"id": n.id, "type": n.type, "actor": n.actor, "action": n.tool or n.action, "satisfied_when": n.satisfied}
            for n in graph.nodes.values()
        ]
        edges = [[e.source, e.target, e.condition] for e in graph.edges]
        requests = [{"id": r.id, "write_tools": r.tools} for r in graph.requests]
        parts.append("<workflow>\n" + json.dumps({"requests": requests, "nodes": nodes, "edges": edges}, sort_keys=True) + "\n</workflow>")
    return "\n\n".join(parts)


def build_messages(system: str, conversation: Conversation, state: dict[str, Any]) -> list[dict[str, str]]:
    """The verifier's messages: the fixed prefix, then the conversation and the state."""
    user = (
        "<conversation>\n" + render_conversation(conversation) + "\n</conversation>\n\n"
        "<request_state>\n" + json.dumps(state, sort_keys=True) + "\n</request_state>"
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def judge(model: str, llm_args: dict[str, Any], messages: list[dict[str, str]]) -> StructuredResult[Judgement]:
    """One verifier call; never raises for model-side problems (they are the result's ``failure``)."""
    from tauguard.llm_call import structured

    return structured(model, messages, Judgement, llm_args=llm_args)
