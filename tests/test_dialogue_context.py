"""The conversations shipped with the labelled confirmation cases (:mod:`tauguard.dialogue.context`).

Every context file validates against its schema and stays small; every case points at the
conversation it is judged on, with its provenance; where ``../shared/trajectories`` is beside the
checkout, the shipped messages are the source's, byte for byte; and `dialogue eval` on the
shipped data alone prints the figures docs/dialogue.md documents.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from cli_helpers import REPO, tauguard
from tauguard.dialogue.cases import DATA_DIR, load_cases, read_simulations
from tauguard.dialogue.context import CONTEXT_DIR, MAX_FILE_BYTES, PackagedContexts, context_file, read_context

SHARED = next((p / "shared" / "trajectories" for p in REPO.parents if (p / "shared" / "trajectories").is_dir()), None)


def test_every_context_file_validates_and_is_small() -> None:
    files = sorted(CONTEXT_DIR.glob("*.jsonl.gz"))
    assert files, "no context shipped"
    for path in files:
        sims = read_context(path)  # schema: SimulationContext, extra keys forbidden
        assert sims and path.stat().st_size < MAX_FILE_BYTES < 2 * 2**20
        assert len({s.sim_index for s in sims}) == len(sims)
        assert {context_file(s.source_file) for s in sims} == {f"context/{path.name}"}
        assert len({s.source_sha256 for s in sims}) == 1


def test_every_shipped_data_file_is_well_under_two_mib() -> None:
    for path in DATA_DIR.rglob("*"):
        if path.is_file():
            assert path.stat().st_size < 1.5 * 2**20, path


def test_every_case_carries_the_conversation_it_is_judged_on() -> None:
    shipped = PackagedContexts()
    for case in load_cases():
        assert case.context is not None, case.id
        assert case.context.file == context_file(case.source.file)
        assert case.context.last_message == case.write.message_index
        messages = shipped.messages(case)
        assert messages is not None, case.id
        assert len(messages) == case.write.message_index + 1
        # the case's own turns are the shipped conversation's
        call = messages[case.write.message_index]["tool_calls"][case.write.call_index]
        assert (call["name"], call["arguments"]) == (case.write.name, case.write.arguments)
        for turn in (case.statement, case.reply):
            assert (messages[turn.message_index].get("content") or "") == turn.content


def test_a_context_whose_provenance_differs_is_not_used() -> None:
    case = load_cases()[0]
    assert case.context is not None
    assert PackagedContexts().messages(case.model_copy(update={"context": case.context.model_copy(
        update={"source_sha256": "0" * 64})})) is None
    assert PackagedContexts().messages(case.model_copy(update={"source": case.source.model_copy(
        update={"simulation_id": "another"})})) is None


@pytest.mark.skipif(SHARED is None, reason="../shared/trajectories is not beside the checkout (the shipped data is checked against it there)")
def test_shipped_messages_are_the_source_files_verbatim() -> None:
    assert SHARED is not None
    for path in sorted(CONTEXT_DIR.glob("*.jsonl.gz")):
        sims = read_context(path)
        source = SHARED / sims[0].source_file
        assert hashlib.sha256(source.read_bytes()).hexdigest() == sims[0].source_sha256
        recorded = read_simulations(source)
        for sim in sims:
            assert recorded[sim.sim_index].get("id") == sim.simulation_id
            assert recorded[sim.sim_index]["messages"][: len(sim.messages)] == sim.messages


def _documented() -> tuple[float, float]:
    text = (REPO / "docs" / "dialogue.md").read_text(encoding="utf-8")
    found = re.search(r"on the adjudicated labels: precision (0\.\d{3}), recall (0\.\d{3})", text)
    assert found, "docs/dialogue.md no longer states the headline figures this test reproduces"
    return float(found.group(1)), float(found.group(2))


@pytest.mark.slow
def test_dialogue_eval_reproduces_the_documented_figures_without_shared(tmp_path: Path) -> None:
    empty = tmp_path / "no-trajectories"
    empty.mkdir()
    # ../shared hidden: an empty trajectories folder given, none in the environment, run outside the checkout
    proc = tauguard("dialogue", "eval", "--format", "json", "--trajectories", str(empty),
                    env={"TAUGUARD_TRAJECTORIES": None}, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (result,) = json.loads(proc.stdout)
    assert result["without_conversation"] == 0
    assert result["packaged_conversation"] == result["cases"] - result["ambiguous"]
    assert (round(result["precision"], 3), round(result["recall"], 3)) == _documented()
