"""The real-write labels and the confirmation cases agree on every write (tauguard.benchmark.label_consistency)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tauguard.benchmark.label_consistency import accepted, contradictions
from tauguard.benchmark.real_writes import load_labels
from tauguard.datafiles import DataFileError
from tauguard.dialogue.cases import load_cases


def test_no_contradiction_remains_but_the_accepted_ones() -> None:
    found = {(c.write_id, c.kind) for c in contradictions()}
    kept = {(a.write_id, a.kind) for a in accepted()}
    assert found - kept == set()  # a new contradiction: adjudicate it (or accept it with a reason)
    assert kept - found == set()  # an accepted one that no longer occurs: drop it from the file


def test_both_directions_are_found() -> None:
    writes = {w.id: w for w in load_labels()}
    cases = load_cases()
    bags = writes["airline_adaptive-agent_cascata_tau3tasks:22:30:0"]  # complies, both cases not_confirmed
    assert [c.kind for c in contradictions([bags], cases)] == ["complies_unconfirmed"]
    # a write violating only explicit_confirmation while one of its cases is confirmed
    upgrade = writes["airline_gpt-oss-120b_user-gpt-oss-120b:37:17:0"]
    assert upgrade.label == "violates" and upgrade.clauses == ["airline.explicit_confirmation"]
    mine = [c for c in cases if c.id.startswith(upgrade.id + ":")]
    unconfirmed = [c.model_copy(update={"label": "not_confirmed"}) for c in mine]
    flipped = [c.model_copy(update={"label": "confirmed"}) for c in mine]
    assert contradictions([upgrade], unconfirmed) == []
    assert [c.kind for c in contradictions([upgrade], flipped)] == ["violates_confirmed"]
    # repeats are judged by their own convention; writes without cases are not checked
    assert contradictions([bags], [c.model_copy(update={"case_type": "repeat"}) for c in cases]) == []


def test_relabelled_records_keep_their_provenance() -> None:
    records = [*load_labels(), *load_cases()]
    relabelled = [r for r in records if r.relabelled_from is not None or r.relabelled_by is not None]
    assert relabelled
    for r in relabelled:
        assert r.relabelled_from is not None and r.relabelled_from != r.label, r.id
        assert r.relabelled_by and r.relabelled_from_why and r.why != r.relabelled_from_why, r.id


def test_a_bad_accepted_file_is_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "accepted.toml"
    path.write_text('[[accepted]]\nwrite_id = "x:1:2:0"\nkind = "maybe"\nreason = "r"\n')
    with pytest.raises(DataFileError, match="kind"):
        accepted(path)
