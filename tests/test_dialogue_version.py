"""The compiled judge's version label names its exact rules (tauguard/dialogue/version.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

from tauguard.dialogue import NEUTRAL, neutral_label
from tauguard.dialogue.version import COMPILED_VERSION, HERE, RULE_FILES, compiled_label, rules_hash, versions


def test_the_rules_hash_is_the_one_recorded_for_this_version() -> None:
    # fails when a rule module or the cue file changes and no new version records the new hash:
    # add [[version]] number = N+1, rules_hash = "<printed>", set COMPILED_VERSION = N+1
    recorded = {v.number: v.rules_hash for v in versions().version}
    assert recorded.get(COMPILED_VERSION) == rules_hash(), f"rules changed: record version {COMPILED_VERSION + 1} with hash {rules_hash()}"
    assert COMPILED_VERSION == max(recorded)


def test_versions_are_numbered_once_and_never_share_a_hash() -> None:
    numbers = [v.number for v in versions().version]
    hashes = [v.rules_hash for v in versions().version]
    assert numbers == sorted(set(numbers)) and len(set(hashes)) == len(hashes)


def test_the_label_carries_version_and_hash_everywhere() -> None:
    assert compiled_label() == f"compiled/{COMPILED_VERSION}+{rules_hash()}"
    assert NEUTRAL.label == compiled_label() == neutral_label()


def test_any_change_of_a_rule_file_changes_the_hash(tmp_path: Path) -> None:
    for name in RULE_FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(HERE / name, tmp_path / name)
    assert rules_hash(tmp_path) == rules_hash()
    with (tmp_path / "data" / "cues.toml").open("a") as fh:
        fh.write("\n# a change\n")
    assert rules_hash(tmp_path) != rules_hash()
