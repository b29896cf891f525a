"""Blind adjudication of the confirmation cases: two more labels per case, and the rule that applies them.

Every non-repeat case of ``tauguard/dialogue/data`` was labelled again by two labellers who
saw only the conversation, the case's statement, reply and write, and the written rule set
(``tauguard/dialogue/data/README.md``): not the original label, its case type or why, nor any
judge's verdict. Their labels live in ``tauguard/dialogue/data/adjudication/*.jsonl``
(schema :class:`BlindLabel`).

The rule (:func:`overturned`) is symmetric and applied to every case, never to a chosen
subset: a label changes only when both blind labels agree with each other, are not
``ambiguous``, and differ from it; it then becomes theirs (majority of three). Choosing which
cases to re-read by a judge's errors would only ever move labels towards the judge.

This module imports neither tau2 nor litellm.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from tauguard.datafiles import DataFileError, load_jsonl
from tauguard.dialogue.cases import ConfirmationCase, Label

ADJUDICATION_DIR = Path(__file__).parent / "data" / "adjudication"
#: ``relabelled_by`` of the cases this adjudication changed.
BLIND_ADJUDICATION = "adjudication-2026-12-06-blind"


class BlindLabel(BaseModel):
    """One blind labeller's label of one case."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[A-Za-z0-9_.\-]+:\d+:\d+:\d+:\d+$")  # the case's id
    label: Label
    why: str = Field(min_length=1)  # one line: what in the conversation decided it
    labeller: str = Field(min_length=1)


def load_blind_labels(paths: Sequence[Path] | None = None) -> list[BlindLabel]:
    """Every blind label in ``paths`` (default: the packaged adjudication files), validated."""
    return load_jsonl(sorted(paths) if paths is not None else sorted(ADJUDICATION_DIR.glob("*.jsonl")), BlindLabel)


def blind_pairs(labels: Sequence[BlindLabel]) -> dict[str, tuple[BlindLabel, BlindLabel]]:
    """The two blind labels of each case, by case id; DataFileError unless each case has two labellers."""
    by_case: dict[str, list[BlindLabel]] = defaultdict(list)
    for label in labels:
        by_case[label.id].append(label)
    pairs: dict[str, tuple[BlindLabel, BlindLabel]] = {}
    for case_id, mine in by_case.items():
        if len(mine) != 2 or mine[0].labeller == mine[1].labeller:
            raise DataFileError(f"{case_id}: needs exactly two blind labels by two labellers, has "
                                f"{', '.join(m.labeller for m in mine)}")
        pairs[case_id] = (mine[0], mine[1])
    return pairs


def overturned(case: ConfirmationCase, pair: tuple[BlindLabel, BlindLabel]) -> Label | None:
    """The label two agreeing blind labellers give instead of the case's original one, else None.

    ``case.label`` must be the original label (``relabelled_from`` when an adjudication
    already changed it).
    """
    original = case.relabelled_from if case.relabelled_by == BLIND_ADJUDICATION else case.label
    first, second = pair
    if first.label == second.label != original and first.label != "ambiguous":
        return first.label
    return None
