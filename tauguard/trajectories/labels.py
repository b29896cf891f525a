"""Gold fingerprints: what a simulation was scored against, and what a task's gold is.

τ² stores, in each simulation's ``reward_info``, the gold it was scored against: one action
check per gold action and one communicate check per ``communicate_info`` item (or a note
that there was none). That is a fingerprint of the task (and task version) the simulation
really ran on, whatever its label says (seen in the wild: a leaderboard file whose
``task_id`` labels are a permutation of the real tasks). :mod:`.placement` uses it.
"""

from __future__ import annotations

import json
from typing import Any

from tauguard.tau2_adapter import compat as t2

# (assistant/user actions as (requestor, name, canonical arguments), communicate info items);
# None for a part the recorded reward info does not reveal.
Fingerprint = tuple[tuple[tuple[str, str, str], ...] | None, tuple[str, ...] | None]

_NO_ACTIONS = "No actions to evaluate"
_NO_COMMUNICATE = "No communicate_info to evaluate"


def _actions(actions: list[dict[str, Any]]) -> tuple[tuple[str, str, str], ...]:
    return tuple(
        sorted((a.get("requestor") or "assistant", a.get("name", ""), json.dumps(a.get("arguments") or {}, sort_keys=True)) for a in actions)
    )


def recorded_fingerprint(sim: dict[str, Any]) -> Fingerprint:
    """The gold a simulation was scored against, as far as its reward info tells."""
    info = sim.get("reward_info") or {}
    notes = info.get("info") or {}
    actions: tuple[tuple[str, str, str], ...] | None = None
    if info.get("action_checks"):
        actions = _actions([c.get("action") or {} for c in info["action_checks"]])
    elif ((notes.get("action") or {}).get("note") or "") == _NO_ACTIONS:
        actions = ()
    communicate: tuple[str, ...] | None = None
    if info.get("communicate_checks"):
        communicate = tuple(sorted(str(c.get("info")) for c in info["communicate_checks"]))
    elif ((notes.get("communicate") or {}).get("note") or "") == _NO_COMMUNICATE:
        communicate = ()
    return actions, communicate


def task_fingerprint(task: t2.Task) -> Fingerprint:
    """A 26.3 task's gold actions and communicate info."""
    criteria = task.evaluation_criteria
    actions = [a.model_dump(mode="json") for a in (criteria.actions or [])] if criteria else []
    return _actions(actions), tuple(sorted(criteria.communicate_info or [])) if criteria else ()


def matches(recorded: Fingerprint, task: Fingerprint) -> bool:
    """Whether a task's gold agrees with every part the recorded fingerprint reveals."""
    return all(r is None or r == t for r, t in zip(recorded, task, strict=True))
