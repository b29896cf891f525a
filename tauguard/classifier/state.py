"""The decision state at a pre-action checkpoint and its four representations.

The paper (§2, "Representations" and "How the structured state is built") varies only the
classifier input:

- ``raw``: the full conversation with the raw tool outputs;
- ``masked``: the same with every tool output replaced by a typed placeholder;
- ``structured``: {request, evidence, policy, action class} -- *request* is the user's stated
  goal, *evidence* the parsed facts of tool results read so far, *policy* the applicable
  clause verbatim, *action class* the pending action's type;
- ``raw+policy``: raw with the policy clause appended.

The state is built only from what the gate sees at the checkpoint -- the agent-visible
conversation and the pending call -- never from the task's gold plan or scenario fields (the
paper excludes those as author-side leakage, §4 "Sensitivity to author-side scenario fields").
Evidence comes from *successful* reads only (the paper: "parsed facts from tool results").

Adaptations, said once here: every probe's pending action is a WRITE, so the action field
also names the tool and its arguments; the request field also carries the user's latest turn
(a confirmation is dialogue the gate needs, and our ``verify`` labels include a skipped
confirmation).
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tauguard.strategy_api.conversation import Conversation, ToolCallView
from tauguard.domains.contract import contract_domains, entity_reads

Representation = Literal["raw", "masked", "structured", "raw+policy"]
REPRESENTATIONS: tuple[Representation, ...] = ("raw", "masked", "structured", "raw+policy")
# Representations whose text carries the policy clause.
WITH_POLICY: frozenset[str] = frozenset({"structured", "raw+policy"})

# Bounds keeping the structured state compact (the paper's is ~185 tokens; ours is larger
# because the evidence lists every parsed field of a read).
MAX_FACTS_PER_READ = 30
MAX_VALUE_CHARS = 60
# Catalogue browsing (flight searches, product-type lists) returns options, not facts about
# the user's objects; the paper's evidence is facts like "cabin: basic_economy; insurance: no".
CATALOGUE_PREFIXES = ("search_", "list_")


class Fact(BaseModel):
    """One parsed fact of a successful read: ``source`` tool, dotted ``key``, ``value``."""

    source: str
    key: str
    value: str


class DecisionState(BaseModel):
    """What a gate sees before a WRITE, in the paper's fields plus the raw transcript."""

    model_config = ConfigDict(extra="forbid")

    domain: str
    request: str  # the user's stated goal (first user turn)
    latest_user_turn: str = ""
    evidence: list[Fact] = Field(default_factory=list)
    reads: list[str] = Field(default_factory=list)  # tools of the successful reads, in order
    action_class: str  # READ | WRITE | GENERIC (tau2's tool type of the pending call)
    action: ToolCallView
    transcript: list[tuple[str, str]] = Field(default_factory=list)  # (role, text), tool results kept
    result_tools: list[int] = Field(default_factory=list)  # transcript positions of tool results

    def query(self) -> str:
        """The retrieval query: request + evidence (the paper's request+evidence protocol, §4)."""
        return self.request + "\n" + _evidence_text(self.evidence)


def _scalar(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 1] + "…"


def _flatten(value: Any, prefix: str, out: list[tuple[str, str]]) -> None:
    # List positions are dropped from keys: "flights.status" reads better than "flights.0.status"
    # and repeated fields stay comparable across states.
    if isinstance(value, dict):
        for key, item in value.items():
            _flatten(item, f"{prefix}.{key}" if prefix else str(key), out)
    elif isinstance(value, list):
        if not value:
            out.append((prefix or "items", "[]"))
        for item in value:
            _flatten(item, prefix, out)
    else:
        out.append((prefix or "value", _scalar(value)))


def parse_facts(tool: str, content: str | None) -> list[Fact]:
    """The facts of one tool result: JSON flattened to dotted keys, else the text itself."""
    text = (content or "").strip()
    try:
        parsed = json.loads(text)
    except (json.JSONDecodeError, ValueError):
        parsed = text
    pairs: list[tuple[str, str]] = []
    _flatten(parsed, "", pairs)
    seen: set[tuple[str, str]] = set()
    facts = []
    for key, value in pairs:
        if (key, value) in seen:
            continue
        seen.add((key, value))
        facts.append(Fact(source=tool, key=key, value=value))
        if len(facts) >= MAX_FACTS_PER_READ:
            break
    return facts


def build_state(domain: str, conversation: Conversation, call: ToolCallView, tool_types: dict[str, str]) -> DecisionState:
    """The decision state before ``call`` given the agent-visible ``conversation``."""
    request, latest = "", ""
    evidence: list[Fact] = []
    reads: list[str] = []
    transcript: list[tuple[str, str]] = []
    result_positions: list[int] = []
    for event in conversation.events:
        tc = event.tool_call
        if event.kind == "user_message":
            text = event.content or ""
            request = request or text
            latest = text
            transcript.append(("USER", text))
        elif event.kind == "agent_message":
            transcript.append(("AGENT", event.content or ""))
        elif event.kind in ("agent_tool_call", "user_tool_call") and tc is not None:
            transcript.append(("CALL", f"{tc.name}({json.dumps(tc.arguments, sort_keys=True)})"))
        elif event.kind == "tool_result" and tc is not None:
            result_positions.append(len(transcript))
            status = "ERROR" if event.error else "RESULT"
            transcript.append((f"{status}:{tc.name}", event.content or ""))
            if not event.error and tool_types.get(tc.name) == "READ":
                reads.append(tc.name)
                if not tc.name.startswith(CATALOGUE_PREFIXES):
                    evidence.extend(parse_facts(tc.name, event.content))
    return DecisionState(
        domain=domain,
        request=request,
        latest_user_turn=latest,
        evidence=evidence,
        reads=reads,
        action_class=tool_types.get(call.name, "WRITE"),
        action=ToolCallView(name=call.name, arguments=call.arguments),
        transcript=transcript,
        result_tools=result_positions,
    )


def _evidence_text(facts: list[Fact]) -> str:
    return "; ".join(f"{f.key}: {f.value}" for f in facts)


def _action_text(state: DecisionState) -> str:
    args = json.dumps(state.action.arguments, sort_keys=True)
    return f"{state.action_class.lower()} {state.action.name}({args})"


def _transcript_text(state: DecisionState, *, masked: bool) -> str:
    lines = []
    results = set(state.result_tools)
    for i, (role, text) in enumerate(state.transcript):
        if i in results:
            status, _, tool = role.partition(":")
            body = f"<{tool}:{status.lower()}>" if masked else text
            lines.append(f"TOOL {status} {tool}: {body}")
        else:
            lines.append(f"{role}: {text}")
    lines.append(f"PENDING ACTION: {_action_text(state)}")
    return "\n".join(lines)


def render(state: DecisionState, representation: Representation, policy: str = "") -> str:
    """The classifier input for ``representation``; ``policy`` is the clause text (may be empty)."""
    if representation == "raw":
        return _transcript_text(state, masked=False)
    if representation == "masked":
        return _transcript_text(state, masked=True)
    if representation == "raw+policy":
        return _transcript_text(state, masked=False) + f"\nPOLICY: {policy}"
    if representation == "structured":
        reads = ", ".join(dict.fromkeys(state.reads)) or "(none)"
        return (
            f"REQUEST: {state.request}\n"
            f"LATEST USER TURN: {state.latest_user_turn}\n"
            f"EVIDENCE (reads: {reads}): {_evidence_text(state.evidence) or '(none)'}\n"
            f"POLICY: {policy or '(none)'}\n"
            f"ACTION: {_action_text(state)}"
        )
    raise ValueError(f"unknown representation '{representation}'; allowed: {', '.join(REPRESENTATIONS)}")


# ---------------------------------------------------------------- how id arguments are read


class ReadTarget(BaseModel):
    """The read that observes the object an id argument names."""

    model_config = ConfigDict(extra="forbid")

    tool: str
    argument: str


@cache
def read_map() -> dict[str, dict[str, ReadTarget]]:
    """domain -> id argument of a WRITE -> the read observing it (the write contract's entities;
    :func:`tauguard.classifier.scope.contract_reads` picks a write's own)."""
    return {
        domain: {arg: ReadTarget(tool=e.read, argument=e.argument) for arg, e in entity_reads(domain).items()}
        for domain in contract_domains()
    }
