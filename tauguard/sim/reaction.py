"""The sim agent's feedback-only reaction to a guard: the decision and its own observations, no gold.

This module is the whole reaction path of ``--sim-feedback feedback`` (the default). Its
functions receive the guard's decision, the agent's own held call, what the agent has seen
(:class:`~tauguard.sim.beliefs.Beliefs`), the domain's tool schemas and write contract (policy
knowledge an agent has), and the random draws the agent made. They never receive the task, its
gold actions or the sim's plan; ``tests/test_sim_feedback.py`` checks both the signatures and a
run with poisoned gold.

Rules, by decision:

- BLOCK: the agent tells the user it cannot, or (with the profile's ``block_transfer``
  probability) transfers to a human.
- VERIFY: it performs the reads the decision requires (arguments from the decision, else from
  its call and its observations), or, when the decision names none, the reads the write contract
  prescribes for its call's targets; then it states its call again, updated by the belief-update
  rule of :mod:`tauguard.sim.beliefs`, and resubmits it after the user's yes. If it can derive no
  read and the decision asks something of the dialogue, it asks the user.
- REVISE with arguments: it proposes them to the user and resubmits after a yes. Without
  arguments it cannot know the fix: it tells the user it cannot.
- Guidance naming an open request (``OPEN_REQUEST_MARKER``) when the agent is about to close: it
  takes the request up only if it can derive the call from the conversation — exactly one WRITE
  tool is named by the guidance (by name, or the request type as a word of the tool's name), and
  every required argument has exactly one value grounded in it: among the values the agent has
  seen under that argument's name (tool results and its own calls), the ones the user said if the
  user said any of them, else all of them; if several remain, the one it last looked up (the
  latest read that took it as its own argument); for an argument with a fixed set of values (a
  schema ``enum``), the one the user said. Lists are never derived. The request type names the
  tool when every word of it is a word of the tool's name, change verbs (modify, update, change,
  edit) standing for each other: "modify_items" is ``modify_pending_order_items``, "modify_flights"
  ``update_reservation_flights``. Otherwise it closes.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field

from tauguard.strategy_api.conversation import ToolCallView
from tauguard.strategy_api.guard import OPEN_REQUEST_MARKER, GuardDecision, ReadRequest, Verdict
from tauguard.sim.beliefs import Beliefs

ReactionKind = Literal["give_up", "transfer", "verify", "propose"]
# Several candidates for one argument of a requested read: read each, up to this many.
MAX_READ_FANOUT = 5


class Reaction(BaseModel):
    """What the agent does next about its held call."""

    kind: ReactionKind
    reads: list[ToolCallView] = Field(default_factory=list)  # for verify
    ask: str | None = None  # for verify: a question to the user, when reading cannot help
    arguments: dict[str, Any] | None = None  # for propose: the revised arguments


def required_parameters(schemas: dict[str, dict[str, Any]], tool: str) -> list[str]:
    """The required parameters of ``tool`` in its OpenAI schema ([] for an unknown tool)."""
    schema = schemas.get(tool, {})
    params = schema.get("function", schema).get("parameters", {})
    return list(params.get("required", []))


def derive_read(request: ReadRequest, call: ToolCallView, beliefs: Beliefs, schemas: dict[str, dict[str, Any]]) -> list[ToolCallView]:
    """The read calls for ``request``: its own arguments, else each required parameter from the
    held call's argument of that name or the values seen under it ([] when one is unknown)."""
    if request.arguments is not None:
        return [ToolCallView(id="", name=request.tool, arguments=dict(request.arguments))]
    combos: list[dict[str, Any]] = [{}]
    for param in required_parameters(schemas, request.tool):
        if param in call.arguments and not isinstance(call.arguments[param], (dict, list)):
            candidates = [call.arguments[param]]
        else:
            candidates = [v for v in beliefs.values(param) if not isinstance(v, bool)][:MAX_READ_FANOUT]
        if not candidates:
            return []
        combos = [{**c, param: v} for c in combos for v in candidates][:MAX_READ_FANOUT]
    return [ToolCallView(id="", name=request.tool, arguments=c) for c in combos]


def react(
    decision: GuardDecision,
    call: ToolCallView,
    beliefs: Beliefs,
    schemas: dict[str, dict[str, Any]],
    target_reads: list[ToolCallView],
    transfer: bool,
    retried: int,
) -> Reaction:
    """The agent's reaction to a held call (it took up the feedback; see the module's rules).

    ``target_reads``: the contract's reads of the call's own targets (for a VERIFY naming none);
    ``transfer``: the agent's draw against the profile's ``block_transfer``; ``retried``: how
    many times it already remediated this call.
    """
    if decision.verdict == Verdict.BLOCK:
        return Reaction(kind="transfer" if transfer else "give_up")
    if decision.verdict == Verdict.REVISE:
        if decision.revised_arguments is None:
            return Reaction(kind="give_up")
        return Reaction(kind="propose", arguments=dict(decision.revised_arguments))
    reads = [r for q in decision.required_reads for r in derive_read(q, call, beliefs, schemas)]
    if not decision.required_reads:
        reads = list(target_reads)
    ask = decision.remediation if decision.remediation and (not reads or retried >= 2) else None
    return Reaction(kind="verify", reads=reads, ask=ask)


# Verbs a request type and a tool name may use for the same act ("modify_items" ~ "update_...").
CHANGE_VERBS = frozenset({"modify", "update", "change", "edit"})


def _type_matches(request_type: str, tool: str) -> bool:
    """Whether every word of the request type is a word of the tool's name (a change verb matching any change verb)."""
    words, tool_words = request_type.lower().replace("-", "_").split("_"), set(tool.lower().split("_"))
    return bool(words) and all(w in tool_words or (w in CHANGE_VERBS and tool_words & CHANGE_VERBS) for w in words if w)


def _named_tools(line: str, write_tools: list[str]) -> list[str]:
    named = [t for t in write_tools if re.search(rf"\b{re.escape(t)}\b", line)]
    if named:
        return named
    match = re.search(rf"{re.escape(OPEN_REQUEST_MARKER)}:\s*([\w-]+)", line)
    word = match.group(1) if match else ""
    return [t for t in write_tools if word and _type_matches(word, t)]


def _said(value: Any, said: str) -> bool:
    text = str(value).strip()
    return bool(text) and re.search(rf"(?<!\w){re.escape(text)}(?!\w)", said, re.IGNORECASE) is not None


def grounded_values(param: str, tool: str, beliefs: Beliefs, schemas: dict[str, dict[str, Any]], said: str) -> list[Any]:
    """The values of ``param`` the conversation grounds (module rules: seen, narrowed by what the user said)."""
    schema = schemas.get(tool, {})
    spec = schema.get("function", schema).get("parameters", {}).get("properties", {}).get(param, {})
    if isinstance(spec, dict) and spec.get("enum"):
        return [v for v in spec["enum"] if _said(v, said)]
    seen = [v for v in beliefs.values(param) if not isinstance(v, (bool, dict, list))]
    mentioned = [v for v in seen if _said(v, said)]
    if len(mentioned or seen) > 1:
        # still several: the one the agent last looked up (a read whose own argument it is)
        last = next((o.call.arguments[param] for o in reversed(beliefs.seen)
                     if not o.error and param in o.call.arguments and o.call.arguments[param] in (mentioned or seen)), None)
        return [last] if last is not None else mentioned or seen
    return mentioned or seen


def open_request_call(
    guidance: str, beliefs: Beliefs, schemas: dict[str, dict[str, Any]], write_tools: list[str], said: str = ""
) -> ToolCallView | None:
    """The call for the open request the guidance names, if the agent can derive it (module rules);
    ``said``: everything the user said in the conversation."""
    for line in guidance.splitlines():
        if OPEN_REQUEST_MARKER not in line:
            continue
        tools = _named_tools(line, write_tools)
        if len(tools) != 1:
            continue
        arguments: dict[str, Any] = {}
        for param in required_parameters(schemas, tools[0]):
            values = grounded_values(param, tools[0], beliefs, schemas, said)
            if len(values) != 1:
                break
            arguments[param] = values[0]
        else:
            return ToolCallView(id=f"resumed-{tools[0]}", name=tools[0], arguments=arguments)
    return None
