"""What the sim agent has seen in its conversation, and the rule by which a read changes its mind.

Feedback-only uptake (``--sim-feedback feedback``, the default) lets the sim agent react to a
guard with nothing but the decision and these observations: its own calls and the results
they returned. Nothing here knows the task's gold plan.

Belief-update rule (VERIFY). An argument of the agent's held call changes only when

1. its value was *derived from an earlier read*: it occurs in the result of a read made before
   the guard's decision, at some position P of that result (the first such read and position), and
2. a read the agent made *for the decision* (same tool and arguments as that earlier read)
   returned a different value at P.

The argument then takes the fresh value. Every other argument stays as the agent had it: a
value the agent got from the user, or one it got wrong without reading it, is not corrected by
reading again (a real agent told "verify" has no reason to doubt it).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field

from tauguard.strategy_api.conversation import ToolCallView

Path = tuple[str | int, ...]


class Observation(BaseModel):
    """One call the agent made and what it returned (parsed JSON, or the raw text)."""

    call: ToolCallView
    result: Any = None
    error: bool = False


def leaves(value: Any, path: Path = ()) -> list[tuple[Path, Any]]:
    """Every scalar inside ``value`` with its position (dict keys and list indices)."""
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in leaves(v, (*path, str(k)))]
    if isinstance(value, list):
        return [leaf for i, v in enumerate(value) for leaf in leaves(v, (*path, i))]
    return [(path, value)]


def at(value: Any, path: Path) -> tuple[bool, Any]:
    """(found, the value at ``path``) inside ``value``."""
    for step in path:
        if isinstance(step, int) and isinstance(value, list) and 0 <= step < len(value):
            value = value[step]
        elif isinstance(step, str) and isinstance(value, dict) and step in value:
            value = value[step]
        else:
            return False, None
    return True, value


def _replaced(value: Any, path: Path, new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {k: (_replaced(v, rest, new) if k == head else v) for k, v in value.items()}
    return [(_replaced(v, rest, new) if i == head else v) for i, v in enumerate(value)]


class Beliefs(BaseModel):
    """The agent's observations, in the order it made them."""

    seen: list[Observation] = Field(default_factory=list)

    def observe(self, call: ToolCallView, content: str, error: bool = False) -> None:
        """Record a tool result the agent received."""
        try:
            result: Any = json.loads(content)
        except (TypeError, ValueError):
            result = content
        self.seen.append(Observation(call=call, result=result, error=error))

    def values(self, key: str) -> list[Any]:
        """Distinct scalars the agent has seen under ``key`` (in results or its own calls' arguments), first seen first."""
        out: list[Any] = []
        for obs in self.seen:
            if obs.error:
                continue
            for source in (obs.call.arguments, obs.result):
                for path, value in leaves(source):
                    named = [p for p in path if isinstance(p, str)]
                    if named and named[-1] == key and value not in out and value is not None:
                        out.append(value)
        return out

    def origin(self, value: Any, before: int) -> tuple[int, Path] | None:
        """The first read (index < ``before``) whose result holds ``value``, and where."""
        for i, obs in enumerate(self.seen[:before]):
            if obs.error:
                continue
            for path, seen_value in leaves(obs.result):
                if seen_value == value and path:
                    return i, path
        return None

    def revise(self, call: ToolCallView, since: int) -> ToolCallView:
        """The held call after the reads made from observation ``since`` on (the rule above)."""
        arguments = call.arguments
        for arg_path, value in leaves(call.arguments):
            if not arg_path or isinstance(value, bool) or value is None:
                continue
            found = self.origin(value, since)
            if found is None:
                continue
            index, path = found
            earlier = self.seen[index].call
            for fresh in self.seen[since:]:
                if fresh.error or (fresh.call.name, fresh.call.arguments) != (earlier.name, earlier.arguments):
                    continue
                present, new = at(fresh.result, path)
                if present and new != value:
                    arguments = _replaced(arguments, arg_path, new)
        return call if arguments == call.arguments else call.model_copy(update={"arguments": arguments})
