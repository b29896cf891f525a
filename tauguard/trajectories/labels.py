"""Checking that each simulation was scored against the task its label names.

τ² stores, in each simulation's ``reward_info``, the gold it was scored against: one action
check per gold action and one communicate check per ``communicate_info`` item (or a note
that there was none). That is a fingerprint of the task the simulation really ran on. A
results file whose labels disagree with it (seen in the wild: a leaderboard file whose
``task_id`` labels are a permutation of the real tasks) would otherwise be scored against
the wrong tasks. A simulation whose fingerprint does not match its label's 26.3 gold is a
*label conflict*; the 26.3 tasks whose gold matches the fingerprint are its candidates.
Several tasks can share a gold (e.g. retail 41 and 42); candidates are then ranked by how
much of the task's user instructions the user's messages echo, and each task is given to
one simulation per trial.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, Field

from tauguard import tau2compat as t2

# (assistant/user actions as (requestor, name, canonical arguments), communicate info items);
# None for a part the recorded reward info does not reveal.
Fingerprint = tuple[tuple[tuple[str, str, str], ...] | None, tuple[str, ...] | None]

_NO_ACTIONS = "No actions to evaluate"
_NO_COMMUNICATE = "No communicate_info to evaluate"
_WORD = re.compile(r"[a-z0-9]+")


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


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _echo(sim: dict[str, Any], task: t2.Task) -> float:
    """Share of the task's instruction words that the user's messages use."""
    said = _words(" ".join(str(m.get("content") or "") for m in sim["messages"] if m.get("role") == "user"))
    wanted = _words(str(task.user_scenario.instructions))
    return len(said & wanted) / len(wanted) if wanted else 0.0


class LabelVerdict(BaseModel):
    """One simulation's label check."""

    task_id: str  # the label in the file
    trial: int
    status: str  # verified | conflict | unverifiable (the reward info names no gold) | unknown_task
    candidates: list[str] = Field(default_factory=list)  # 26.3 tasks whose gold matches (conflicts)
    proposed: str | None = None  # the task the simulation ran on, when it can be told
    basis: str = ""  # how ``proposed`` was chosen


def check_labels(simulations: list[dict[str, Any]], tasks: list[t2.Task]) -> list[LabelVerdict]:
    """Check every simulation's label against 26.3's tasks of its domain."""
    prints = {t.id: task_fingerprint(t) for t in tasks}
    by_id = {t.id: t for t in tasks}
    verdicts: list[LabelVerdict] = []
    for sim in simulations:
        recorded = recorded_fingerprint(sim)
        label = sim["task_id"]
        if label not in prints:
            verdicts.append(LabelVerdict(task_id=label, trial=sim["trial"], status="unknown_task"))
        elif recorded == (None, None):
            verdicts.append(LabelVerdict(task_id=label, trial=sim["trial"], status="unverifiable"))
        elif label in prints and matches(recorded, prints[label]):
            verdicts.append(LabelVerdict(task_id=label, trial=sim["trial"], status="verified", proposed=label, basis="label"))
        else:
            candidates = [tid for tid, fp in prints.items() if matches(recorded, fp)]
            verdicts.append(LabelVerdict(task_id=label, trial=sim["trial"], status="conflict", candidates=candidates))
    # Give each conflicting simulation a task: unique gold matches first, then shared golds
    # by how well the user's messages echo each candidate's instructions; one per trial.
    taken: set[tuple[str, int]] = {(v.proposed, v.trial) for v in verdicts if v.status == "verified" and v.proposed}
    pending = [(v, sim) for v, sim in zip(verdicts, simulations, strict=True) if v.status == "conflict" and v.candidates]
    for verdict, _ in pending:
        if len(verdict.candidates) == 1 and (verdict.candidates[0], verdict.trial) not in taken:
            verdict.proposed, verdict.basis = verdict.candidates[0], "gold"
            taken.add((verdict.proposed, verdict.trial))
    ranked = sorted(
        ((_echo(sim, by_id[c]), v, c) for v, sim in pending if v.proposed is None for c in v.candidates),
        key=lambda item: -item[0],
    )
    for score, verdict, candidate in ranked:
        if verdict.proposed is None and (candidate, verdict.trial) not in taken:
            verdict.proposed, verdict.basis = candidate, f"gold shared by {', '.join(verdict.candidates)}; instructions echo {score:.2f}"
            taken.add((candidate, verdict.trial))
    return verdicts
