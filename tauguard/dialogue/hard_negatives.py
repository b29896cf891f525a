"""Hard negatives: real labelled cases changed by one controlled edit, so each rule has cases on both sides.

A hard negative takes a labelled case of a development file (never a sealed one) and replaces the
text of one message of its conversation (a changed amount in the reply, a condition, a deferral, a
question back, a later refusal), with the label the edited exchange has and the rule of
:data:`tauguard.dialogue.rules.RULES` it is made for. The base case is the other side: the same
exchange unedited, with its own label. The edits live in ``tauguard/dialogue/data/hard_negatives/*.jsonl``
(schema :class:`HardNegative`); ``tauguard dialogue eval`` scores them apart from the headline.

This module imports neither tau2 nor litellm.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tauguard.datafiles import DataFileError, load_jsonl
from tauguard.dialogue.cases import ConfirmationCase, Label, TurnRef
from tauguard.dialogue.evaluate import Confusion, Conversations, judge_case_why
from tauguard.dialogue.judge import DialogueJudge
from tauguard.dialogue.rules import RULES
from tauguard.dialogue.sealed import sealed_files

HARD_NEGATIVES_DIR = Path(__file__).parent / "data" / "hard_negatives"


class Edit(BaseModel):
    """The one message changed: its index in the conversation and its new text."""

    model_config = ConfigDict(extra="forbid")

    message_index: int = Field(ge=0)
    content: str = Field(min_length=1)


class HardNegative(BaseModel):
    """A labelled case changed by one edit."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[A-Za-z0-9_.\-]+:\d+:\d+:\d+:\d+~[a-z0-9\-]+$")  # the base case's id ~ a slug
    base: str  # the labelled case it edits (a development file's)
    edit: Edit
    label: Label
    rule: str  # the rule it is made for (a name of RULES)
    why: str = Field(min_length=1)
    labeller: str = Field(min_length=1)


class HardNegativeResult(BaseModel):
    """One judged hard negative."""

    id: str
    rule: str  # the rule it is made for
    label: str
    predicted: bool
    fired: str  # the rule that rejected the pair ("taken" when the judge confirmed it)


def load_hard_negatives(paths: Sequence[Path] | None = None) -> list[HardNegative]:
    """Every hard negative in ``paths`` (default: the packaged ones), validated (a rule must be known)."""
    found = load_jsonl(sorted(paths) if paths is not None else sorted(HARD_NEGATIVES_DIR.glob("*.jsonl")), HardNegative)
    for hn in found:
        if hn.rule not in RULES:
            raise DataFileError(f"{hn.id}: rule '{hn.rule}' is not one of the judge's rules ({', '.join(RULES)})")
        if not hn.id.startswith(hn.base + "~"):
            raise DataFileError(f"{hn.id}: the id must be the base case's id followed by ~slug")
    return found


def edited(case: ConfirmationCase, messages: list[dict[str, Any]], edit: Edit) -> tuple[ConfirmationCase, list[dict[str, Any]]]:
    """The case and its conversation with one message's text replaced (the statement or reply too, if edited)."""
    changed = [dict(m) for m in messages]
    changed[edit.message_index]["content"] = edit.content
    update: dict[str, Any] = {}
    for field in ("statement", "reply"):
        ref: TurnRef = getattr(case, field)
        if ref.message_index == edit.message_index:
            update[field] = TurnRef(message_index=ref.message_index, content=edit.content)
    return case.model_copy(update=update), changed


def evaluate_hard_negatives(judge: DialogueJudge, cases: Sequence[ConfirmationCase], trajectories: Sequence[Path],
                            hard: Sequence[HardNegative] | None = None) -> tuple[Confusion, list[HardNegativeResult]]:
    """Score ``judge`` on the hard negatives whose base case and conversation are found (others are skipped)."""
    by_id = {c.id: c for c in cases}
    found = Conversations(trajectories)
    confusion = Confusion()
    results: list[HardNegativeResult] = []
    for hn in hard if hard is not None else load_hard_negatives():
        base = by_id.get(hn.base)
        if base is None or base.source.file in sealed_files():
            continue
        messages = found.messages(base)
        if messages is None or hn.edit.message_index >= len(messages) or hn.label not in ("confirmed", "not_confirmed"):
            continue
        case, changed = edited(base, messages, hn.edit)
        predicted, why = judge_case_why(judge, case, changed)
        confusion.add(predicted, hn.label == "confirmed")
        results.append(HardNegativeResult(id=hn.id, rule=hn.rule, label=hn.label, predicted=predicted,
                                          fired="taken" if predicted else (why.rule if why else "unknown")))
    return confusion, results
