"""Placing each simulation of a results file on the task it ran on, from its own content.

A label (``task_id``) in a results file is a claim; the simulation's content is the
evidence. Three kinds of evidence are read, strongest first:

1. **Recorded gold.** τ² writes into ``reward_info`` the gold it scored against (see
   :mod:`.labels`): the 26.3 tasks whose gold matches are the candidates. No candidate means
   the simulation was scored against *another task version* than 26.3's.
2. **Scenario.** Where candidates share a gold (airline 15/16, retail 41/42, 71/72, 83/84,
   96/97), the words that only one candidate's user instructions use are looked for in the
   user's turns (the first turn counted twice: instructions often fix what the user says
   first). The margin between the best and the second candidate is the confidence.
3. **Label.** In a file whose labels agree with the content wherever the content decides
   (a *trusted* file), a label among the candidates breaks a tie the scenario leaves.

A task's initial state is compared where the file carries its definition (an initial state
other than 26.3's is a different task version, see the importer); airline and retail 26.3
tasks have none, so it never separates candidates there.

Nothing is guessed silently: every placement carries its basis and a confidence, and a
placement the evidence does not decide is ``ambiguous``.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Literal

from pydantic import BaseModel, Field

from tauguard.trajectories.labels import Fingerprint, matches, recorded_fingerprint

Confidence = Literal["gold", "label", "scenario", "ambiguous", "different_version", "unplaced"]
# Share of distinctive words (best minus second) below which the scenario does not decide.
MIN_MARGIN = 0.15
# Share of content-decided simulations whose label agrees, above which a file's labels are trusted.
TRUSTED_LABELS = 0.95
_WORD = re.compile(r"[a-z0-9]+")


class TaskText(BaseModel):
    """What placement needs of one task: its gold fingerprint and its user instructions."""

    id: str
    fingerprint: Fingerprint
    instructions: str


class Placement(BaseModel):
    """Where one simulation of a file goes, and why."""

    index: int  # position in the file
    label: str | None  # the file's task_id, if any
    trial: int | None  # the file's trial, if any
    task_id: str | None  # the task it ran on (None: unplaced)
    confidence: Confidence
    candidates: list[str] = Field(default_factory=list)  # tasks whose gold matches the recorded gold
    scores: dict[str, float] = Field(default_factory=dict)  # scenario score per candidate
    basis: str = ""

    @property
    def relabelled(self) -> bool:
        """Placed on another task than its label names."""
        return self.label is not None and self.task_id is not None and self.task_id != self.label


def _words(text: str) -> set[str]:
    # Function words ("at", "first", "same") carry the instructions' phrasing, not what the
    # user talks about; they would decide between near-identical scenarios by style.
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return {w for w in _WORD.findall(text.lower()) if w not in ENGLISH_STOP_WORDS and len(w) > 1}


def _user_turns(sim: dict[str, Any]) -> list[str]:
    return [str(m.get("content") or "") for m in sim.get("messages") or [] if isinstance(m, dict) and m.get("role") == "user"]


def scenario_scores(sim: dict[str, Any], candidates: list[TaskText]) -> dict[str, float]:
    """Per candidate, the share of its distinctive instruction words the user says.

    Distinctive words are those no other candidate's instructions use; a word said in the
    first user turn counts twice (and the denominator with it), so a scenario that fixes what
    the user says first is told from one that does not.
    """
    turns = _user_turns(sim)
    first = _words(turns[0]) if turns else set()
    said = _words(" ".join(turns))
    words = {c.id: _words(c.instructions) for c in candidates}
    scores: dict[str, float] = {}
    for c in candidates:
        others = set().union(*(w for tid, w in words.items() if tid != c.id)) if len(words) > 1 else set()
        own = words[c.id] - others
        if not own:
            scores[c.id] = 0.0
            continue
        hit = len(own & said) + len(own & first)
        scores[c.id] = hit / (2 * len(own))
    return scores


def _margin(scores: dict[str, float]) -> tuple[str | None, float]:
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    if not ranked:
        return None, 0.0
    second = ranked[1][1] if len(ranked) > 1 else 0.0
    return ranked[0][0], ranked[0][1] - second


def place_simulations(simulations: list[dict[str, Any]], tasks: list[TaskText]) -> list[Placement]:
    """Place every simulation (raw, as in the file) on one of ``tasks`` (26.3's of its domain)."""
    by_id = {t.id: t for t in tasks}
    first_pass: list[Placement] = []
    for index, sim in enumerate(simulations):
        label = str(sim["task_id"]) if sim.get("task_id") is not None else None
        trial = int(sim["trial"]) if isinstance(sim.get("trial"), int) else None
        recorded = recorded_fingerprint(sim)
        if recorded == (None, None):
            # No gold recorded (e.g. a stop before evaluation): the scenario over all tasks decides.
            candidates = list(by_id)
        else:
            candidates = [t.id for t in tasks if matches(recorded, t.fingerprint)]
        first_pass.append(Placement(index=index, label=label, trial=trial, task_id=None, confidence="unplaced", candidates=candidates))
    decided = [p for p in first_pass if len(p.candidates) == 1 and p.label is not None]
    agree = sum(p.candidates[0] == p.label for p in decided)
    trusted = bool(decided) and agree / len(decided) >= TRUSTED_LABELS
    for p, sim in zip(first_pass, simulations, strict=True):
        if not _as_exported(p, sim):
            _decide(p, sim, by_id, trusted)
    _collisions(first_pass)
    return first_pass


def _as_exported(p: Placement, sim: dict[str, Any]) -> bool:
    """A simulation `tauguard export` wrote keeps the placement it had, if its gold still allows it."""
    earlier = ((sim.get("tauguard") or {}).get("placement") or {}) if isinstance(sim.get("tauguard"), dict) else {}
    if not earlier or p.label is None or (p.candidates and p.label not in p.candidates):
        return False
    confidence = earlier.get("confidence")
    if confidence not in ("gold", "label", "scenario", "ambiguous"):
        return False
    p.task_id, p.confidence = p.label, confidence
    p.basis = f"as placed when first imported: {earlier.get('basis', '')}"
    return True


def _collisions(placements: list[Placement]) -> None:
    """Two scenario placements on one task and trial: at least one is wrong, so neither stands.

    Only where each (task, trial) can hold one simulation: with trials unknown, a file that
    repeats no label and no content-decided task is read as one trial per task.
    """
    unique = [p.task_id for p in placements if p.confidence in ("gold", "label")]
    labels = [p.label for p in placements if p.label is not None]
    one_each = len(set(unique)) == len(unique) and len(set(labels)) == len(labels)
    seen: dict[tuple[str, int | None], list[Placement]] = {}
    for p in placements:
        if p.confidence in ("scenario", "ambiguous") and p.task_id is not None:
            if p.trial is None and not one_each:
                continue
            seen.setdefault((p.task_id, p.trial), []).append(p)
    for (task_id, _), group in seen.items():
        if len(group) < 2:
            continue
        decided = [p for p in group if p.confidence == "scenario"]
        if len(decided) == 1:
            # The evidence decides one of them; the others' task is only an undecided
            # simulation's tie-break, which yields: it never demotes a decided placement.
            keep = decided[0]
            rest = [p for p in group if p is not keep]
            for p in rest:
                p.basis += f"; task {task_id} is held by #{keep.index}, which the scenario decides"
            _propose_distinct(rest, taken={task_id})
            continue
        for p in group:
            p.confidence = "ambiguous"
            p.basis += f"; {len(group)} simulations point to task {task_id}, which holds one per trial"
        _propose_distinct(group)


def _propose_distinct(group: list[Placement], taken: frozenset[str] | set[str] = frozenset()) -> None:
    """Propose distinct tasks to colliding placements (best total scenario score), none of them
    a task in ``taken``; they stay ambiguous."""
    from scipy.optimize import linear_sum_assignment

    tasks = sorted({c for p in group for c in p.candidates} - set(taken))
    if len(tasks) < len(group):
        return
    cost = [[-(p.scores.get(t, 0.0)) if t in p.candidates else 1e6 for t in tasks] for p in group]
    rows, cols = linear_sum_assignment(cost)
    for r, c in zip(rows, cols, strict=True):
        group[r].task_id = tasks[c]
        group[r].basis += f"; proposed {tasks[c]} so that each candidate holds one"


def _decide(p: Placement, sim: dict[str, Any], by_id: dict[str, TaskText], trusted: bool) -> None:
    if not p.candidates:
        p.confidence = "different_version"
        p.task_id = p.label if p.label in by_id else None
        p.basis = "its recorded gold matches no τ² 26.3 task: scored against a different task version"
        return
    if len(p.candidates) == 1:
        p.task_id, p.confidence = p.candidates[0], "gold"
        p.basis = "recorded gold" + ("" if p.label in (None, p.task_id) else f" (label {p.label} names another task)")
        return
    no_gold = len(p.candidates) == len(by_id)
    if no_gold and not _user_turns(sim):
        # Nothing to place it by (e.g. an infrastructure error before the first turn): its label
        # stands, or it stays unplaced. Such a simulation has no reward, so no metric reads it.
        p.task_id = p.label if p.label in by_id else None
        p.confidence = "label" if p.task_id else "unplaced"
        p.basis = "no recorded gold and no user turn to place it by" + (f": its label {p.label}" if p.task_id else "")
        return
    p.scores = {k: round(v, 3) for k, v in scenario_scores(sim, [by_id[c] for c in p.candidates]).items()}
    best, margin = _margin(p.scores)
    shared = "no recorded gold" if no_gold else f"gold shared by {', '.join(p.candidates)}"
    if trusted and p.label in p.candidates:
        # The label is trusted unless the scenario clearly contradicts it.
        if best != p.label and margin >= MIN_MARGIN:
            p.task_id, p.confidence = p.label, "ambiguous"
            p.basis = f"{shared}; trusted label {p.label} but the scenario favours {best} by {margin:.2f}"
            return
        p.task_id, p.confidence = p.label, "label"
        p.basis = f"{shared}; the file's labels agree with its content elsewhere"
        return
    if best is not None and margin >= MIN_MARGIN and p.scores[best] > 0:
        p.task_id, p.confidence = best, "scenario"
        p.basis = f"{shared}; the user's turns echo {best}'s instructions (margin {margin:.2f})"
        return
    p.task_id, p.confidence = best, "ambiguous"
    p.basis = f"{shared}; the scenario does not decide (margin {margin:.2f} < {MIN_MARGIN})"


def placement_counts(placements: list[Placement]) -> dict[str, int]:
    """How many simulations were placed with each confidence."""
    return dict(Counter(p.confidence for p in placements))
