"""Hard negatives (tauguard/dialogue/hard_negatives.py) and the dead-rule check over the labelled cases."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tauguard.datafiles import DataFileError
from tauguard.dialogue import NEUTRAL
from tauguard.dialogue.cases import load_cases
from tauguard.dialogue.evaluate import _Conversations, judge_case_why
from tauguard.dialogue.hard_negatives import HardNegative, evaluate_hard_negatives, load_hard_negatives
from tauguard.dialogue.rules import RULES
from tauguard.dialogue.sealed import sealed_files

SHARED = next((p / "shared" / "trajectories" for p in Path(__file__).resolve().parents if (p / "shared" / "trajectories").is_dir()),
              Path("/nonexistent"))
# Rules about the whole finding, not about a labelled pair (a case always has its pair).
NOT_PAIR_RULES = {"no_pair"}


def test_hard_negatives_validate_and_edit_development_cases_only() -> None:
    hard = load_hard_negatives()
    cases = {c.id: c for c in load_cases()}
    assert hard and len({h.id for h in hard}) == len(hard)
    for h in hard:
        assert h.base in cases and cases[h.base].source.file not in sealed_files(), h.id
        assert cases[h.base].label != h.label or h.rule in RULES  # the edit changes the label, or exercises a rule


def test_an_unknown_rule_or_a_foreign_id_is_a_data_error(tmp_path: Path) -> None:
    good = load_hard_negatives()[0]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good.model_copy(update={"rule": "no_such_rule"}).model_dump_json() + "\n")
    with pytest.raises(DataFileError, match="no_such_rule"):
        load_hard_negatives([bad])
    bad.write_text(HardNegative.model_validate({**good.model_dump(), "id": "other:1:2:0:1~x"}).model_dump_json() + "\n")
    with pytest.raises(DataFileError, match="base case"):
        load_hard_negatives([bad])


@pytest.mark.skipif(not SHARED.is_dir(), reason="needs ../shared/trajectories")
def test_each_hard_negative_is_rejected_by_the_rule_it_is_made_for_and_its_base_is_not() -> None:
    cases = load_cases()
    confusion, results = evaluate_hard_negatives(NEUTRAL, cases, [SHARED])
    assert len(results) == len(load_hard_negatives())
    assert [(r.id, r.fired) for r in results] == [(r.id, r.rule) for r in results]
    assert confusion.fp == 0
    by_id = {c.id: c for c in cases}
    found = _Conversations([SHARED])
    for h in load_hard_negatives():  # the other side: the unedited exchange is confirmed as labelled
        base = by_id[h.base]
        assert judge_case_why(NEUTRAL, base, found.messages(base))[0] == (base.label == "confirmed"), h.base


@pytest.mark.slow
@pytest.mark.skipif(not SHARED.is_dir(), reason="needs ../shared/trajectories")
def test_no_dead_rule_every_rule_fires_on_a_labelled_case_or_a_hard_negative() -> None:
    # counts only: which rule rejects each labelled pair (no error of the sealed split is read)
    cases = load_cases()
    found = _Conversations([SHARED])
    fired: Counter[str] = Counter()
    for case in cases:
        if case.label in ("confirmed", "not_confirmed"):
            confirmed, why = judge_case_why(NEUTRAL, case, found.messages(case))
            if why is not None:
                fired[why.rule] += 1
    fired.update(r.fired for r in evaluate_hard_negatives(NEUTRAL, cases, [SHARED])[1])
    dead = sorted(set(RULES) - NOT_PAIR_RULES - set(fired))
    assert not dead, f"rules that fire on no labelled case: {dead}"
