"""The sealed split (tauguard/dialogue/sealed.py, data/sealed.toml) and the split / by-source figures."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from cli_helpers import tauguard
from tauguard.dialogue import NEUTRAL
from tauguard.dialogue.cases import ConfirmationCase, load_cases
from tauguard.dialogue.evaluate import evaluate
from tauguard.dialogue.sealed import changed_sources, file_sha256, in_split, sealed_files, sealed_split

SHARED = Path(__file__).resolve().parents[2] / "shared" / "trajectories"
CANCEL = {"order_id": "#W3361211", "reason": "no longer needed"}
SEALED = "airline_claude-opus-4-6_user-gpt-4.1.json.gz"


def _case(file: str, sim: int, label: str, reply: str) -> ConfirmationCase:
    return ConfirmationCase.model_validate({
        "id": f"{file.split('.json')[0]}:{sim}:2:0:0", "domain": "retail",
        "source": {"file": file, "sim_index": sim},
        "write": {"name": "cancel_pending_order", "arguments": CANCEL, "message_index": 2},
        "statement": {"message_index": 0, "content": "I will cancel order #W3361211 (no longer needed). Shall I proceed?"},
        "reply": {"message_index": 1, "content": reply},
        "label": label, "case_type": "direct", "why": "test", "labeller": "test",
    })


def test_the_sealed_split_names_at_least_two_files_of_different_agents_that_have_cases() -> None:
    split = sealed_split()
    assert len(split.sealed) >= 2 and len({s.agent for s in split.sealed}) == len(split.sealed)
    with_cases = {c.source.file for c in load_cases()}
    assert sealed_files() <= with_cases  # every sealed file has labelled cases
    assert with_cases - sealed_files()  # and development files remain


@pytest.mark.skipif(not SHARED.is_dir(), reason="needs ../shared/trajectories")
def test_the_sealed_hashes_are_those_of_the_shared_files() -> None:
    for source in sealed_split().sealed:
        assert file_sha256(SHARED / source.file) == source.sha256, source.file
    assert changed_sources([SHARED]) == []


def test_splits_select_the_sealed_files_or_the_others() -> None:
    assert in_split(SEALED, "sealed") and not in_split(SEALED, "development") and in_split(SEALED, "all")
    assert in_split("retail_x.json.gz", "development") and not in_split("retail_x.json.gz", "sealed")


def test_evaluate_scores_each_source_and_split_apart() -> None:
    cases = [_case(SEALED, 0, "confirmed", "Yes, go ahead."), _case("dev_file.json.gz", 0, "confirmed", "Yes, go ahead."),
             _case("dev_file.json.gz", 1, "not_confirmed", "Yes, go ahead.")]
    result = evaluate(NEUTRAL, cases)
    assert set(result.by_source) == {"airline_claude-opus-4-6_user-gpt-4.1", "dev_file"}
    assert (result.by_source["dev_file"].tp, result.by_source["dev_file"].fp) == (1, 1)
    assert result.by_split["sealed"].tp == 1 and result.by_split["development"].fp == 1
    assert result.writes_by_source["dev_file"].tp + result.writes_by_source["dev_file"].fp == 2
    dev = evaluate(NEUTRAL, cases, split="development")
    assert dev.cases == 2 and set(dev.by_source) == {"dev_file"} and dev.split == "development"
    sealed = evaluate(NEUTRAL, cases, split="sealed")
    assert sealed.cases == 1 and sealed.overall.tp == 1
    assert [e.sealed for e in evaluate(NEUTRAL, [*cases, _case(SEALED, 1, "not_confirmed", "Yes.")]).errors] == [False, True]


def _cli_fixture(tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / "trajectories"
    folder.mkdir()
    lines = []
    for file in (SEALED, "retail_dev.json.gz"):
        msgs = [{"role": "assistant", "content": "I will cancel order #W3361211 (no longer needed). Shall I proceed?"},
                {"role": "user", "content": "Yes, go ahead."},
                {"role": "assistant", "content": None, "tool_calls": [{"id": "w", "name": "cancel_pending_order", "arguments": CANCEL}]}]
        (folder / file).write_bytes(gzip.compress(json.dumps({"simulations": [{"id": "s", "messages": msgs}]}).encode()))
        lines.append(_case(file, 0, "not_confirmed", "Yes, go ahead.").model_dump_json())  # a wrong label: an error each
    cases = tmp_path / "cases.jsonl"
    cases.write_text("\n".join(lines) + "\n")
    return cases, folder


def test_cli_reports_by_source_and_withholds_the_sealed_errors(tmp_path: Path) -> None:
    cases, folder = _cli_fixture(tmp_path)
    base = ("dialogue", "eval", "--cases", str(cases), "--trajectories", str(folder), "--format", "markdown")
    proc = tauguard(*base, "--by-source", "--errors")
    assert proc.returncode == 0, proc.stderr
    assert "| source: retail_dev | 0.000 |" in proc.stdout and "| split: sealed |" in proc.stdout
    assert "wrong: retail_dev:0" in proc.stdout and "wrong: airline_claude" not in proc.stdout
    assert "1 errors on sealed files withheld" in proc.stderr
    assert "differs from the sealed file" in proc.stderr  # the fixture is not the sealed file
    dev = tauguard(*base, "--exclude-sealed")
    assert "| development (sealed excluded) | 0.000 | n/a | 0 | 1 | 0 | 0 |" in dev.stdout
    sealed = tauguard(*base, "--sealed", "--errors")
    assert "| sealed only |" in sealed.stdout and "wrong: airline_claude" in sealed.stdout
    both = tauguard(*base, "--sealed", "--exclude-sealed")
    assert both.returncode == 2 and both.stderr.startswith("error:")
