"""Deterministic rendering of the full ledger for an LLM agent's prompt.

Collections appear in schema order, entities sorted by id, each as compact key-sorted JSON,
so the same ledger always renders to the same text (LedgerAgent, arXiv:2606.20529, §3
"State rendering": stable paths and identifiers).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from tauguard import domains
from tauguard_strategies.ledger.ledger import LedgerBase

HEADER = (
    "## Ledger: observed task state\n"
    "Facts below come only from successful read-tool returns (never from writes, failed calls or "
    "what the user says). [STALE ...] marks facts a successful write has changed since they were "
    "last read: read them again before relying on them. Each WRITE call is checked against these "
    "facts before it runs."
)
# Date/time separator of each domain's clock line, as the prompt has always shown it.
_CLOCK_SEP = {"airline": "T", "telecom": " "}
CLOCKS = {
    d: f"{domains.constants(d).now.isoformat(sep=sep)} {domains.constants(d).timezone}" for d, sep in _CLOCK_SEP.items()
}


def _json(value: Any) -> str:
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json", exclude_none=True)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def _stale_note(ledger: LedgerBase, path: str) -> str:
    marks = ledger.stale_under(path)
    if not marks:
        return ""
    rel = [m[len(path) + 1:] if m.startswith(path + "/") else "all" for m in marks]
    return f"  [STALE: {', '.join(rel)}]"


def collections(ledger: LedgerBase) -> list[str]:
    """The domain's collection fields, in schema order."""
    return [name for name in type(ledger).model_fields if name not in LedgerBase.model_fields]


def render(ledger: LedgerBase) -> str:
    """The ledger as prompt text."""
    lines = [HEADER]
    if ledger.domain in CLOCKS:
        lines.append(f"Policy clock: {CLOCKS[ledger.domain]}")
    empty = True
    for name in collections(ledger):
        value = getattr(ledger, name)
        if not value:
            continue
        empty = False
        if isinstance(value, list):
            lines.append(f"{name}: {', '.join(str(v) for v in value)}")
            continue
        lines.append(f"{name}:")
        for key in sorted(value):
            item = value[key]
            if isinstance(item, dict) and item and all(isinstance(v, BaseModel) for v in item.values()):
                # Nested collections (flight status by flight number, then date).
                for sub in sorted(item):
                    path = f"{name}/{key}/{sub}"
                    lines.append(f"- {key}/{sub}: {_json(item[sub])}{_stale_note(ledger, path)}")
                continue
            path = f"{name}/{key}"
            lines.append(f"- {key}: {_json(item)}{_stale_note(ledger, path)}")
    if empty:
        lines.append("(nothing observed yet)")
    if ledger.history:
        lines.append("writes executed (history):")
        lines += [f"{w.seq}. {w.tool} {_json(w.arguments)}" for w in ledger.history]
    return "\n".join(lines)
