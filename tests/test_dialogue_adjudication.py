"""The blind adjudication of the confirmation cases: its data, and its rule applied to every case."""

from __future__ import annotations

from pathlib import Path

import pytest

from tauguard.datafiles import DataFileError
from tauguard.dialogue.adjudication import (
    BLIND_ADJUDICATION,
    BlindLabel,
    blind_pairs,
    load_blind_labels,
    overturned,
)
from tauguard.dialogue.cases import ConfirmationCase, load_cases


def _case(label: str, **extra: object) -> ConfirmationCase:
    return ConfirmationCase.model_validate({
        "id": "f:1:9:0:5", "domain": "airline", "source": {"file": "f.json", "sim_index": 1},
        "write": {"name": "cancel_reservation", "arguments": {}, "message_index": 9},
        "statement": {"message_index": 5, "content": "Cancel ABC123?"}, "reply": {"message_index": 6, "content": "Yes."},
        "label": label, **extra,
    })


def _blind(label: str, who: str) -> BlindLabel:
    return BlindLabel(id="f:1:9:0:5", label=label, why="read it", labeller=who)  # type: ignore[arg-type]


def test_two_agreeing_blind_labels_overturn_and_nothing_less_does() -> None:
    case = _case("not_confirmed")
    assert overturned(case, (_blind("confirmed", "C"), _blind("confirmed", "D"))) == "confirmed"
    assert overturned(case, (_blind("confirmed", "C"), _blind("not_confirmed", "D"))) is None
    assert overturned(case, (_blind("not_confirmed", "C"), _blind("not_confirmed", "D"))) is None
    assert overturned(_case("confirmed"), (_blind("ambiguous", "C"), _blind("ambiguous", "D"))) is None


def test_a_case_already_changed_by_this_adjudication_is_judged_on_its_label_before_it() -> None:
    done = _case("confirmed", relabelled_from="not_confirmed", relabelled_from_why="w", relabelled_by=BLIND_ADJUDICATION)
    assert overturned(done, (_blind("confirmed", "C"), _blind("confirmed", "D"))) == "confirmed"
    earlier = _case("confirmed", relabelled_from="not_confirmed", relabelled_from_why="w", relabelled_by="adjudication-x")
    assert overturned(earlier, (_blind("not_confirmed", "C"), _blind("not_confirmed", "D"))) == "not_confirmed"


def test_every_non_repeat_case_has_two_blind_labels_by_two_labellers() -> None:
    pairs = blind_pairs(load_blind_labels())
    cases = load_cases()
    assert set(pairs) == {c.id for c in cases if c.case_type != "repeat"}
    assert all(a.labeller != b.labeller for a, b in pairs.values())


def test_the_rule_is_applied_to_every_case_and_only_by_the_rule() -> None:
    pairs = blind_pairs(load_blind_labels())
    changed = 0
    for case in load_cases():
        pair = pairs.get(case.id)
        expected = overturned(case, pair) if pair else None
        if expected is None:
            assert case.relabelled_by != BLIND_ADJUDICATION, case.id
        else:
            changed += 1
            assert case.relabelled_by == BLIND_ADJUDICATION and case.label == expected, case.id
            assert case.relabelled_from is not None and case.relabelled_from != case.label, case.id
    assert changed == 29  # the count the data README reports


def test_a_case_with_one_blind_label_is_a_one_line_error() -> None:
    with pytest.raises(DataFileError, match=r"^f:1:9:0:5: needs exactly two blind labels"):
        blind_pairs([_blind("confirmed", "C")])
    with pytest.raises(DataFileError, match="two labellers"):
        blind_pairs([_blind("confirmed", "C"), _blind("confirmed", "C")])


def test_a_bad_blind_label_line_names_the_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "b.jsonl"
    bad.write_text('{"id": "f:1:9:0:5", "label": "yes", "why": "w", "labeller": "C"}\n', encoding="utf-8")
    with pytest.raises(DataFileError, match=r"b\.jsonl:1"):
        load_blind_labels([bad])
