"""The cue lexicons as data (tauguard/dialogue/data/cues.toml): schema, and every cue with its examples."""

from __future__ import annotations

from pathlib import Path

import pytest

from tauguard.datafiles import DataFileError, load_toml
from tauguard.dialogue.cues import CUES_FILE, CueFile, cue, cue_file

CUES = cue_file().cue


@pytest.mark.parametrize("entry", CUES, ids=[c.name for c in CUES])
def test_every_cue_matches_its_examples_and_none_of_its_non_examples(entry) -> None:  # noqa: ANN001
    pattern = entry.compiled()
    for text in entry.examples:
        assert pattern.search(text), (entry.name, text)
    for text in entry.non_examples:
        assert not pattern.search(text), (entry.name, text)
    assert entry.doc and "\n" not in entry.doc


def test_every_cue_is_used_by_the_module_it_names() -> None:
    for entry in CUES:
        source = (CUES_FILE.parent.parent / f"{entry.module}.py").read_text(encoding="utf-8")
        assert f'cue("{entry.name}")' in source, entry.name


def test_a_cue_without_an_example_or_with_a_bad_pattern_is_a_data_error(tmp_path: Path) -> None:
    bad = tmp_path / "cues.toml"
    bad.write_text('[[cue]]\nname = "x"\nmodule = "polarity"\ndoc = "d"\npattern = "a"\nexamples = []\n')
    with pytest.raises(DataFileError, match="examples"):
        load_toml(bad, CueFile)
    bad.write_text('[[cue]]\nname = "x"\nmodule = "polarity"\ndoc = "d"\npattern = "(a"\nexamples = ["a"]\n')
    with pytest.raises(DataFileError, match="regular expression"):
        load_toml(bad, CueFile)
    with pytest.raises(KeyError):
        cue("no_such_cue")
