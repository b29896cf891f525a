"""Ledger updates from tool results: reads fill it, successful writes mark what they touched stale."""

from __future__ import annotations

from pydantic import ValidationError

from tauguard_strategies.ledger.ledger import LedgerBase, WriteRecord
from tauguard_strategies.ledger.parse import is_error_text, parse_content
from tauguard_strategies.ledger.readmap import DomainMap
from tauguard.conversation import ConversationEvent


def absorb(ledger: LedgerBase, dmap: DomainMap, tool_types: dict[str, str], result: ConversationEvent) -> list[str]:
    """Apply one agent-side tool result; returns the paths it observed or marked stale.

    Only successful READ returns add state (LedgerAgent, arXiv:2606.20529, §3 "Ledger
    updates"); a successful WRITE is appended to the history and marks its touched paths
    stale; failed calls and user-side calls change nothing.
    """
    call = result.tool_call
    if call is None or call.requestor != "assistant" or result.error or is_error_text(result.content):
        return []
    if tool_types.get(call.name) == "WRITE":
        ledger.history.append(WriteRecord(seq=len(ledger.history) + 1, tool=call.name, arguments=dict(call.arguments)))
        touch = dmap.touches.get(call.name)
        paths = touch(ledger, call) if touch is not None else []
        ledger.mark_stale(paths)
        return paths
    read = dmap.reads.get(call.name)
    if read is None:
        return []
    try:
        paths = read(ledger, call, parse_content(result.content))
    except (ValidationError, ValueError, TypeError, KeyError, AttributeError) as exc:
        # An unexpected shape is recorded, never guessed into the ledger.
        ledger.unparsed_reads.append(f"{call.name}: {type(exc).__name__}")
        return []
    for path in paths:
        ledger.refresh(path)
    ledger.reads_absorbed += 1
    return paths
