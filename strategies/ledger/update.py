"""Ledger updates from tool results: reads fill it, successful writes mark what they touched stale."""

from __future__ import annotations

from pydantic import ValidationError

from tauguard_strategies.ledger.ledger import LedgerBase, WriteRecord
from tauguard_strategies.ledger.parse import is_error_text, parse_content
from tauguard_strategies.ledger.readmap.base import DomainMap
from tauguard.strategy_api.conversation import ConversationEvent, ToolCallView


def absorb(ledger: LedgerBase, dmap: DomainMap, tool_types: dict[str, str], result: ConversationEvent) -> list[str]:
    """Apply one agent-side tool result; returns the paths it observed or marked stale.

    Successful READ returns add state (LedgerAgent, arXiv:2606.20529, §3 "Ledger updates"); a
    successful WRITE is appended to the history and marks its touched paths stale, then, where
    the write returns the updated record (``DomainMap.returns``: τ²'s reservation and order
    writes do), that record is absorbed like a read, so the agent's own write does not leave
    its target stale (real agents act on the returned record; tauguard's extension of the
    paper). Failed calls and user-side calls change nothing.
    """
    call = result.tool_call
    if call is None or call.requestor != "assistant" or result.error or is_error_text(result.content):
        return []
    if tool_types.get(call.name) == "WRITE":
        ledger.history.append(WriteRecord(seq=len(ledger.history) + 1, tool=call.name, arguments=dict(call.arguments)))
        touch = dmap.touches.get(call.name)
        paths = touch(ledger, call) if touch is not None else []
        ledger.mark_stale(paths)
        returned = dmap.returns.get(call.name)
        return paths + (_observe(ledger, dmap, returned, call, result) if returned else [])
    return _observe(ledger, dmap, call.name, call, result)


def _observe(ledger: LedgerBase, dmap: DomainMap, read_tool: str, call: ToolCallView, result: ConversationEvent) -> list[str]:
    """Parse ``result`` with ``read_tool``'s parser into the ledger; the paths it refreshed."""
    read = dmap.reads.get(read_tool)
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
