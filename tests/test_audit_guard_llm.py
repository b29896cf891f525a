"""`tauguard audit --guard-llm MODEL --api-base URL`: each guard's LLM backend on a small
imported real run (a slice of a shared real file, tests/data), through the loopback server.

The scripted answers make the verdicts plumbing: the test checks that the labelled-benchmark
table, the tokens and the cost reach the output, that the output says it is plumbing, and
that the key from the environment is written nowhere."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli_helpers import tauguard
from tauguard.cli.main import app
from tauguard.testing.llm_server import ScriptedLLMServer

DATA = Path(__file__).resolve().parent / "data"
CLAUDE = DATA / "trajectories" / "airline_claude_subset.json.gz"  # 3 simulations, 9 labelled writes
LABELS = DATA / "real_writes_fixture.jsonl"
KEY = "sk-test-audit-guard-llm-not-a-real-key"
TOKENS = {"action-guard": (1000, 20), "workflow": (700, 10), "classifier": (900, 15)}


def _backend(body: dict[str, Any]) -> str:
    system = body["messages"][0]["content"]
    if system.startswith("You are a policy-compliance verifier"):
        return "action-guard"
    if system.startswith("You are the workflow verifier"):
        return "workflow"
    assert system.startswith("You are a pre-action policy gate"), system[:80]
    return "classifier"


def _responder(body: dict[str, Any]) -> dict[str, Any]:
    """The verifier passes every write, the classifier refuses every one, the workflow
    verifier finds no request (so its dialogue nodes stay unmet)."""
    backend = _backend(body)
    answer = {
        "action-guard": {"verdict": "pass", "unmet": [], "remediation": ""},
        "workflow": {"requests": [], "guidance": ""},
        "classifier": {"decision": "refuse", "clause_id": None, "reason": "scripted"},
    }[backend]
    prompt, completion = TOKENS[backend]
    return {"content": json.dumps(answer), "usage": {"prompt_tokens": prompt, "completion_tokens": completion}}


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tauguard.trajectories.importer import import_results
    from tauguard.trajectories.load import read_results

    root = tmp_path_factory.mktemp("runs")
    import_results(read_results(CLAUDE, domain="airline"), root, name="claude")
    return root / "claude"


def _row(text: str, title: str, strategy: str) -> list[str]:
    """The cells of ``strategy``'s row in the table following the line starting with ``title``."""
    block = text.split("\n" + title, 1)[1]
    line = next(line for line in block.splitlines() if line.startswith(strategy + " "))
    return re.split(r"\s{2,}", line.strip())


@pytest.mark.slow
def test_each_guards_llm_backend_audits_a_real_run_through_the_loopback_server(imported: Path, tmp_path: Path) -> None:
    out = tmp_path / "audit.json"
    with ScriptedLLMServer(_responder) as server:
        proc = tauguard(
            "audit", str(imported), "--strategy", "action-guard", "--strategy", "workflow", "--strategy", "classifier",
            "--guard-llm", "openai/scripted-guard", "--api-base", server.api_base, "--labels", str(LABELS), "-o", str(out),
            env={"OPENAI_API_KEY": KEY},
        )
        requests = list(server.requests)
        headers = list(server.request_headers)
    assert proc.returncode == 0, proc.stderr[-2000:]
    calls = {name: sum(_backend(r) == name for r in requests) for name in TOKENS}
    # one verifier / classifier call per write; the workflow verifier fires at user turns
    assert calls["action-guard"] == calls["classifier"] == 9 and calls["workflow"] >= 1
    assert all(r["model"] == "scripted-guard" and r["temperature"] == 0 for r in requests)

    # the same labelled-benchmark table as the compiled audit, labelled as plumbing
    text = proc.stdout
    # the banner heads the report, after the import's own lines (what it left out, if anything)
    head = text.split("false holds", 1)[0]
    assert "LOOPBACK SERVER: PLUMBING, NOT A MEASUREMENT OF ANY MODEL" in head
    assert "Wilson 95 % intervals (loopback server: plumbing, not a measurement of any model)" in text
    bench = "against the labelled real-write benchmark"
    assert _row(text, bench, "action-guard")[1:5] == [
        "0/8 = 0.000 [0.000, 0.324]", "0/3 = 0.000 [0.000, 0.561]", "0/5 = 0.000 [0.000, 0.434]", "0/1 = 0.000 [0.000, 0.793]"]
    assert _row(text, bench, "classifier")[1:5] == [
        "8/8 = 1.000 [0.676, 1.000]", "3/3 = 1.000 [0.439, 1.000]", "5/5 = 1.000 [0.566, 1.000]", "1/1 = 1.000 [0.207, 1.000]"]
    assert _row(text, bench, "workflow")[1] == "8/8 = 1.000 [0.676, 1.000]"

    # tokens and cost: in total and per write, as the server counted them
    report = json.loads(out.read_text())
    assert report["guard_llm"] == "openai/scripted-guard" and report["scripted_answers"] == len(requests)
    for s in report["strategies"]:
        prompt, completion = TOKENS[s["strategy"]]
        n = calls[s["strategy"]]
        assert s["guard_usage"] == {"llm_calls": n, "prompt_tokens": n * prompt, "completion_tokens": n * completion, "cost": 0.0}
        assert s["guard_usage_per_write"]["prompt_tokens"] == pytest.approx(n * prompt / 9)
        assert sum(s["labels"]["false_holds_by_rule"].values()) == s["labels"]["false_holds"]["held"]  # the by-cause table
        usage_row = _row(text, "guard LLM usage", s["strategy"])
        assert usage_row[1:4] == [str(n), str(n * prompt), str(n * completion)]
    held = {s["strategy"]: [w["usage"]["prompt_tokens"] for w in s["held_writes"]] for s in report["strategies"]}
    assert held["classifier"] == [900] * 9  # each write's decision carries its own call

    # the key came from the environment, went to the server, and is written nowhere
    assert all(KEY in {k.lower(): v for k, v in h.items()}.get("authorization", "") for h in headers)
    for written in (proc.stdout, proc.stderr, out.read_text(), *(f.read_text() for f in imported.iterdir() if f.is_file())):
        assert KEY not in written


def test_guard_llm_input_errors_are_one_line_before_any_request(imported: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    cases = [
        (["--api-base", "http://127.0.0.1:9/v1"], "--api-base applies to the --guard-llm model"),
        (["--guard-llm", "openai/m", "--api-base", "ftp://x"], "not an http(s) URL"),
        (["--guard-llm", "openai/m", "--api-base", "http://u:p@127.0.0.1:9/v1"], "--api-base holds credentials"),
        (["--guard-llm", "openai/m", "--api-base", "http://127.0.0.1:9/v1"], "no credentials for the guard model 'openai/m'"),
        (["--guard-llm", "nosuchprovider/m"], "unknown provider in the guard model"),
        (["--cache", "c"], "--cache applies to the --guard-llm model"),
        (["--guard-llm", "openai/m", "--rate-limit", "openai/m=-1"], "invalid --rate-limit 'openai/m=-1'"),
    ]
    for extra, message in cases:
        res = runner.invoke(app, ["audit", str(imported), "--strategy", "action-guard", *extra])
        lines = res.output.strip().splitlines()
        assert res.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], res.output


def test_the_llm_dialogue_judges_calls_are_booked_to_the_write_they_decide(imported: Path) -> None:
    """action-guard's compiled checklist with the LLM dialogue judge: the judge's calls (which
    the decision itself does not report) are each write's usage and the strategy's total."""
    from tauguard.runs.store import load_run
    from tauguard.trajectories.audit import GuardModel, audit_run

    def judge(body: dict[str, Any]) -> dict[str, Any]:
        prompt = body["messages"][-1]["content"]
        answer = {"confirmations": []} if '"confirmations"' in prompt else {"turn": None, "kind": None}
        return {"content": json.dumps(answer), "usage": {"prompt_tokens": 300, "completion_tokens": 4}}

    with ScriptedLLMServer(judge) as server:
        guard = GuardModel("openai/scripted-judge", {"api_base": server.api_base, "api_key": "sk-test"})
        report = audit_run(load_run(imported), ["action-guard"], {"backend": "compiled", "dialogue": "llm"},
                           guard_llm=guard, labels=[])
        n = len(server.requests)
    audit = report.strategies[0]
    assert n > 0 and report.scripted_answers == n
    assert (audit.guard_usage.llm_calls, audit.guard_usage.prompt_tokens, audit.guard_usage.completion_tokens) == (n, 300 * n, 4 * n)
    # the judge finds no confirmation: writes are held for it, each with the judge's calls as its usage
    confirmation = [w for w in audit.held_writes if (w.rule_id or "").endswith(".confirmation")]
    assert confirmation and all(w.usage.llm_calls >= 1 and w.usage.prompt_tokens == 300 * w.usage.llm_calls for w in confirmation)


def test_a_repeated_audit_is_answered_from_the_cache_at_no_cost(imported: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    args = ["audit", str(imported), "-s", "classifier", "--guard-llm", "openai/cached-gate", "--cache", str(tmp_path / "cache"),
            "--no-labels", "--format", "json"]
    with ScriptedLLMServer(_responder) as server:
        first = runner.invoke(app, [*args, "--api-base", server.api_base], env={"OPENAI_API_KEY": KEY})
        asked = len(server.requests)
        second = runner.invoke(app, [*args, "--api-base", server.api_base], env={"OPENAI_API_KEY": KEY})
        assert len(server.requests) == asked == 9  # the second audit asked nothing
    from tauguard.provider import state

    assert state().cache is None  # the process's own discipline again after each audit
    one, two = (json.loads(r.stdout)["strategies"][0] for r in (first, second))
    assert one["guard_usage"]["llm_calls"] == two["guard_usage"]["llm_calls"] == 9
    assert [w["verdict"] for w in one["held_writes"]] == [w["verdict"] for w in two["held_writes"]]
    assert not any(KEY in f.read_bytes().decode("utf-8", "replace") for f in (tmp_path / "cache").rglob("*") if f.is_file())
