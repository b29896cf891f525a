"""Per-trial views: a trial's conversation with each guard event placed at the step it fired.

Guard events carry ``step``, an index into the guard wrapper's own view of the conversation
(:class:`tauguard.strategy_api.conversation.Conversation`: user text turns, the agent's text turns and tool
calls, and the results of the agent's tool calls). tau2's stored messages are replayed into the
same indices, so a ``before_write`` event lands just before the message the agent sent after
the gate, and a ``user_turn`` event just after the user message it answered. Held calls never
reach tau2's messages, so the event itself shows the held call.

Long texts are trimmed so that the page stays small; the full trial is in the run's
``simulations.jsonl``.

Pure library: imports neither tau2 nor litellm.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tauguard.strategy_api.guard import GuardEvent
from tauguard.runs.outcome_index import trial_success
from tauguard.runs.records import TrialRecord
from tauguard.report.model import GuardNote, ReportMessage, TrialView

TEXT_LIMIT = 600
TOOL_RESULT_LIMIT = 160
ARGS_LIMIT = 200
_CLAUSE_RE = re.compile(r'Policy \([^)]*\):\s*"(?P<text>.+?)"(?:\s|$)', re.DOTALL)


def _trim(text: str | None, limit: int) -> tuple[str | None, bool]:
    if text is None or len(text) <= limit:
        return text, False
    return text[: limit - 1].rstrip() + "…", True


def _args(arguments: Any) -> str:
    text = json.dumps(arguments, ensure_ascii=False, sort_keys=True, default=str)
    return _trim(text, ARGS_LIMIT)[0] or ""


def clause_text(event: GuardEvent) -> str | None:
    """The policy clause an event cites: from its evidence when given, else quoted in its reason."""
    for key in ("clause_text", "clause"):
        value = event.evidence.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
        if isinstance(value, dict) and isinstance(value.get("text"), str):
            text: str = value["text"]  # checked a str just above
            return text.strip()
    match = _CLAUSE_RE.search(event.reason or "")
    return match.group("text").strip() if match else None


def guard_note(event: GuardEvent) -> GuardNote:
    """The fields of a guard event the page shows."""
    call = event.tool_call
    clause = clause_text(event)
    reason = event.reason or ""
    match = _CLAUSE_RE.search(reason)
    if match and clause == match.group("text").strip():
        # The ledger quotes the clause in its reason; show it once, as the clause.
        reason = (reason[: match.start()] + reason[match.end() :]).strip()
    return GuardNote(
        hook=event.hook,
        verdict=event.verdict.value if event.verdict is not None else None,
        rule_id=event.rule_id,
        clause=clause,
        reason=_trim(reason, TEXT_LIMIT)[0] or "",
        remediation=_trim(event.remediation, TEXT_LIMIT)[0] or "",
        guidance=_trim(event.guidance, TEXT_LIMIT)[0],
        tool=call.name if call is not None else None,
        arguments=_args(call.arguments) if call is not None else None,
        fault_id=event.fault_id,
    )


def _wrapper_width(msg: dict[str, Any]) -> int:
    """How many events of the guard wrapper's conversation one tau2 message accounts for."""
    role = msg.get("role")
    calls = msg.get("tool_calls") or []
    if role == "assistant":
        return len(calls) if calls else int(bool(msg.get("content")))
    if role == "user":
        return 0 if calls else 1
    if role == "tool":
        return 1 if msg.get("requestor", "assistant") == "assistant" else 0
    return 0


def _messages(record: TrialRecord) -> list[dict[str, Any]]:
    sim = record.simulation or {}
    msgs = sim.get("messages") or []
    # The opening greeting counts: the wrapper records it from the message history it starts with.
    return [m for m in msgs if isinstance(m, dict)]


def trial_view(record: TrialRecord) -> TrialView:
    """The trimmed conversation of one trial with its guard events inline."""
    msgs = _messages(record)
    starts: list[int] = []
    position = 0
    for msg in msgs:
        starts.append(position)
        position += _wrapper_width(msg)
    trimmed = False
    steps: list[ReportMessage] = []
    for msg in msgs:
        content = msg.get("content")
        if content is not None and not isinstance(content, str):
            content = json.dumps(content, ensure_ascii=False, default=str)
        text, cut = _trim(content, TOOL_RESULT_LIMIT if msg.get("role") == "tool" else TEXT_LIMIT)
        trimmed = trimmed or cut
        calls = [f"{c.get('name')}({_args(c.get('arguments'))})" for c in msg.get("tool_calls") or []]
        steps.append(ReportMessage(role=str(msg.get("role")), text=text, tool_calls=calls, error=bool(msg.get("error"))))
    for event in record.guard_events:
        if event.hook == "after_tool":
            continue  # observation only: no decision to show
        note = guard_note(event)
        if not steps:
            continue
        # The message whose wrapper events cover the event's step (the last one starting at or before it).
        idx = max((i for i, s in enumerate(starts) if s <= event.step), default=0)
        if event.hook == "user_turn":
            steps[idx].after.append(note)
        else:
            # before_write / retry_exhausted fire before the agent's next message goes out.
            nxt = next((i for i, s in enumerate(starts) if s >= event.step and msgs[i].get("role") == "assistant"), None)
            (steps[nxt].before if nxt is not None else steps[-1].after).append(note)
    faults = []
    for f in record.faults:
        state = "not applied" if not f.applied else ("detected" if f.intercepted else "not detected") + (
            "" if f.reached is None or not f.applied else (", prevented" if f.reached is False else ", reached the environment")
        )
        faults.append(f"{f.fault_id} [{f.fault_class}] on {f.tool or '-'}: {state}")
    return TrialView(
        run_id=record.run_id,
        trial=record.trial,
        success=trial_success(record) if record.error is None else None,
        reward=record.reward,
        termination=record.termination_reason,
        error=_trim(record.error, TEXT_LIMIT)[0],
        faults=faults,
        steps=steps,
        trimmed=trimmed,
    )
