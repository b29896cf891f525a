"""`tauguard dialogue eval`: both backends on labelled cases, the LLM one through a loopback server."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from cli_helpers import tauguard
from conftest import judge_confirms_last_pair
from tauguard.testing.llm_server import ScriptedLLMServer

CANCEL = {"order_id": "#W3361211", "reason": "no longer needed"}
ORDER = json.dumps({"order_id": "#W3361211", "user_id": "aarav_lee_1982", "status": "pending"})


def _messages(statement: str, reply: str) -> list[dict]:
    return [
        {"role": "assistant", "content": "Hi! How can I help you today?"},
        {"role": "user", "content": "Please cancel my order #W3361211, I no longer need it."},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "r", "name": "get_order_details", "arguments": {"order_id": "#W3361211"}}]},
        {"role": "tool", "id": "r", "content": ORDER},
        {"role": "assistant", "content": statement},
        {"role": "user", "content": reply},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "w", "name": "cancel_pending_order", "arguments": CANCEL}]},
        {"role": "tool", "id": "w", "content": "{}"},
    ]


def _fixture(tmp_path: Path) -> tuple[Path, Path]:
    sims = [
        {"id": "s0", "task_id": "66", "messages": _messages("I will cancel order #W3361211 (no longer needed). Shall I proceed?", "No problem, go ahead.")},
        {"id": "s1", "task_id": "66", "messages": _messages("So the item is no longer needed, right?", "Yes.")},
    ]
    folder = tmp_path / "trajectories"
    folder.mkdir()
    (folder / "retail_fixture.json.gz").write_bytes(gzip.compress(json.dumps({"simulations": sims}).encode()))
    lines = []
    for s_index, label, kind in ((0, "confirmed", "direct"), (1, "not_confirmed", "different_question")):
        msgs = sims[s_index]["messages"]
        lines.append(json.dumps({
            "id": f"retail_fixture:{s_index}:6:0:4", "domain": "retail",
            "source": {"file": "retail_fixture.json.gz", "sim_index": s_index},
            "write": {"name": "cancel_pending_order", "arguments": CANCEL, "message_index": 6},
            "statement": {"message_index": 4, "content": msgs[4]["content"]},
            "reply": {"message_index": 5, "content": msgs[5]["content"]},
            "label": label, "case_type": kind, "why": "test fixture", "labeller": "test",
        }))
    cases = tmp_path / "cases.jsonl"
    cases.write_text("\n".join(lines) + "\n")
    return cases, folder


def test_compiled_backend_scores_labelled_cases(tmp_path: Path) -> None:
    cases, folder = _fixture(tmp_path)
    proc = tauguard("dialogue", "eval", "--cases", str(cases), "--trajectories", str(folder), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    (result,) = json.loads(proc.stdout)
    assert result["judge"].startswith("compiled/")
    assert (result["overall"]["tp"], result["overall"]["fp"], result["overall"]["fn"], result["overall"]["tn"]) == (1, 0, 0, 1)
    assert result["precision"] == 1.0 and result["recall"] == 1.0
    assert set(result["by_case_type"]) == {"direct", "different_question"}
    assert result["without_conversation"] == 0
    assert (result["writes"]["tp"], result["writes"]["tn"]) == (1, 1) and result["writes_recall"] == 1.0


def test_per_write_slice_counts_a_write_once_whichever_labelled_pair_confirms_it(tmp_path: Path) -> None:
    # one write, two labelled pairs: the labels put the yes on the greeting pair, the judge on the
    # statement pair, so the pairs score one false positive and one miss, the write one hit
    cases, folder = _fixture(tmp_path)
    msgs = _messages("I will cancel order #W3361211 (no longer needed). Shall I proceed?", "No problem, go ahead.")
    lines = []
    for s_at, label in ((0, "confirmed"), (4, "not_confirmed")):
        lines.append(json.dumps({
            "id": f"retail_fixture:0:6:0:{s_at}", "domain": "retail",
            "source": {"file": "retail_fixture.json.gz", "sim_index": 0},
            "write": {"name": "cancel_pending_order", "arguments": CANCEL, "message_index": 6},
            "statement": {"message_index": s_at, "content": msgs[s_at]["content"]},
            "reply": {"message_index": s_at + 1, "content": msgs[s_at + 1]["content"]},
            "label": label, "case_type": "direct", "why": "test fixture", "labeller": "test",
        }))
    cases.write_text("\n".join(lines) + "\n")
    proc = tauguard("dialogue", "eval", "--cases", str(cases), "--trajectories", str(folder), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    (result,) = json.loads(proc.stdout)
    assert (result["overall"]["tp"], result["overall"]["fp"], result["overall"]["fn"], result["overall"]["tn"]) == (0, 1, 1, 0)
    assert (result["writes"]["tp"], result["writes"]["fp"], result["writes"]["fn"], result["writes"]["tn"]) == (1, 0, 0, 0)
    table = tauguard("dialogue", "eval", "--cases", str(cases), "--trajectories", str(folder), "--format", "markdown").stdout
    assert "| per write (any labelled pair) | 1.000 | 1.000 | 1 | 0 | 0 | 0 |" in table


@pytest.mark.slow
def test_llm_backend_runs_through_the_loopback_server_and_says_plumbing_only(tmp_path: Path) -> None:
    cases, folder = _fixture(tmp_path)
    with ScriptedLLMServer(judge_confirms_last_pair) as server:
        args = json.dumps({"api_base": server.api_base})
        proc = tauguard(
            "dialogue", "eval", "--cases", str(cases), "--trajectories", str(folder), "--backend", "compiled", "--backend", "llm",
            "--guard-llm", "openai/scripted-judge", "--llm-args", args, "--format", "markdown",
            env={"OPENAI_API_KEY": "sk-test-not-a-real-key"},
        )
        requests = list(server.requests)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "### compiled/" in proc.stdout and "### llm/" in proc.stdout
    llm_part = proc.stdout.split("### llm/")[1]
    assert "plumbing only" in llm_part and "plumbing only" not in proc.stdout.split("### llm/")[0]
    assert len(requests) == 2  # one question per case
    assert "cancel_pending_order" in requests[0]["messages"][-1]["content"]
    # the stand-in answers "the last pair" for both cases: the different question counts as a false positive
    assert "| all (headline) | 0.500 | 1.000 | 1 | 1 | 0 | 0 |" in llm_part


def test_bad_inputs_are_one_line_errors(tmp_path: Path) -> None:
    proc = tauguard("dialogue", "eval", "--cases", str(tmp_path / "missing.jsonl"))
    assert proc.returncode == 2 and proc.stderr.strip().startswith("error: --cases:") and len(proc.stderr.strip().splitlines()) == 1
    proc = tauguard("dialogue", "eval", "--backend", "llm")
    assert proc.returncode == 2 and "--guard-llm" in proc.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n')
    proc = tauguard("dialogue", "eval", "--cases", str(bad))
    assert proc.returncode == 2 and "bad.jsonl:1" in proc.stderr
