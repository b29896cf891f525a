"""Scripted answers for every LLM guard backend, for plumbing runs through the loopback server.

:func:`permissive` answers each backend's request in the shape it asks for, recognised by the
JSON keys its prompt requests: the action-guard verifier passes, the classifier allows, the
workflow verifier reports no request, the dialogue judge finds no confirmation, no reason and
no polarity. The verdicts mean nothing: they exercise the plumbing (calls, parsing, usage
accounting), never a model. Every answer reports ``PROMPT_TOKENS`` and ``COMPLETION_TOKENS``.
"""

from __future__ import annotations

import json
from typing import Any

PROMPT_TOKENS = 1000
COMPLETION_TOKENS = 20

# (a key the prompt asks for, the answer), in the order they are tried
_ANSWERS: tuple[tuple[str, dict[str, Any]], ...] = (
    ('"verdict"', {"verdict": "pass", "unmet": [], "remediation": ""}),
    ('"decision"', {"decision": "allow", "clause_id": None, "missing": [], "reason": "scripted"}),
    ('"requests"', {"requests": [], "guidance": ""}),
    ('"confirmations"', {"confirmations": []}),
    ('"polarity"', {"polarity": "none"}),
    ('"turn"', {"turn": None, "kind": None}),
)


def permissive(body: dict[str, Any]) -> dict[str, Any]:
    """The loopback server's item for one chat request (see :mod:`tauguard.testing.llm_server`)."""
    prompt = "\n".join(str(m.get("content") or "") for m in body.get("messages", []))
    answer = next((a for key, a in _ANSWERS if key in prompt), {})
    return {"content": json.dumps(answer), "usage": {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": COMPLETION_TOKENS}}
