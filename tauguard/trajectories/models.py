"""Which agent and user models a results file's simulations ran with.

``info.agent_info.llm`` / ``info.user_info.llm`` when the file has an ``info``; otherwise each
message's provider ``raw_data.model`` (a simulation counts for the model most of its
messages of that role name). Files mixing models are listed with counts, never reduced to
one name.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel, Field

_ROLES = {"agent": "assistant", "user": "user"}


class FileModels(BaseModel):
    """Per role (``agent``, ``user``): model name -> number of simulations; and where it came from."""

    counts: dict[str, dict[str, int]] = Field(default_factory=dict)
    source: str = "unknown"  # "info", "raw_data" or "unknown"

    def label(self, role: str) -> str:
        """One model name, or ``mixed: a (35), b (13)`` when the simulations used several."""
        counts = self.counts.get(role) or {}
        if not counts:
            return "unknown"
        if len(counts) == 1:
            return next(iter(counts))
        return "mixed: " + ", ".join(f"{m} ({n})" for m, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def simulation_model(messages: list[Any], role: str) -> str | None:
    """The model most of one role's messages name in their ``raw_data`` (None: none named)."""
    wanted = _ROLES[role]
    named = Counter(
        str(m["raw_data"]["model"])
        for m in messages
        if isinstance(m, dict) and m.get("role") == wanted and isinstance(m.get("raw_data"), dict) and m["raw_data"].get("model")
    )
    return named.most_common(1)[0][0] if named else None


def file_models(info: dict[str, Any], simulations: list[dict[str, Any]]) -> FileModels:
    """The models of a file (call before ``raw_data`` is stripped)."""
    declared = {role: (info.get(f"{role}_info") or {}).get("llm") for role in _ROLES}
    if all(declared.values()):
        return FileModels(counts={r: {str(m): len(simulations)} for r, m in declared.items()}, source="info")
    counts: dict[str, dict[str, int]] = {}
    for role in _ROLES:
        if declared[role]:
            counts[role] = {str(declared[role]): len(simulations)}
            continue
        seen = Counter(m for s in simulations if (m := simulation_model(s.get("messages") or [], role)))
        if seen:
            counts[role] = dict(seen)
    return FileModels(counts=counts, source="raw_data" if counts else "unknown")
