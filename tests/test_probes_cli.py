"""`tauguard probes build|eval`: outputs, formats and one-line user errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tauguard.cli.main import app
from tauguard.probes.model import read_probes

runner = CliRunner()
TASK = "[mobile_data_issue]data_usage_exceeded|user_abroad_roaming_enabled_off[PERSONA:Easy]"  # one gold write: refuel_data


def _one_line_error(res, *fragments: str) -> None:
    assert res.exit_code == 2, (res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    for fragment in fragments:
        assert fragment in lines[0]


@pytest.fixture(scope="module")
def probe_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("probes") / "telecom.jsonl"
    res = runner.invoke(app, ["probes", "build", "--domain", "telecom", "--split", "test", "-o", str(out)])
    assert res.exit_code == 0, res.stderr
    assert "telecom" in res.stdout and f"written to {out}" in res.stdout
    return out


def test_build_writes_jsonl_and_reports_counts(probe_file: Path) -> None:
    probes = read_probes(probe_file)
    assert {p.label for p in probes} == {"allow", "verify", "refuse"}
    res = runner.invoke(
        app, ["probes", "build", "--domain", "telecom", "--split", "train", "--task", TASK, "-o", str(probe_file.with_name("one.jsonl")), "--format", "json"]
    )
    assert res.exit_code == 0, res.stderr
    counts = json.loads(res.stdout)["counts"]
    one = read_probes(probe_file.with_name("one.jsonl"))
    labels = [p.label for p in one]
    assert counts == [
        {"domain": "telecom", **{k: labels.count(k) for k in ("allow", "verify", "refuse")}, "total": len(one)}
    ]
    assert {p.task_id for p in one} == {TASK} and labels.count("allow") == 1
    assert {p.fault_id for p in one} >= {"telecom.refuel_over_limit", "skip_confirmation"}


def test_eval_reports_scores_in_each_format(probe_file: Path) -> None:
    res = runner.invoke(app, ["probes", "eval", "--strategy", "refuse-writes", "--probes", str(probe_file), "--format", "json"])
    assert res.exit_code == 0, res.stderr
    report = json.loads(res.stdout)
    assert report["strategy"] == "refuse-writes" and report["false_block_rate"] == 1.0
    assert report["replay_failures"] == 0 and "not real LLM agents" in report["note"]
    table = runner.invoke(app, ["probes", "eval", "--strategy", "block-tool", "--probes", str(probe_file), "--strategy-option", "tool=refuel_data"])
    assert table.exit_code == 0, table.stderr
    assert "strategy block-tool (tool=refuel_data)" in table.stdout and "macro-F1" in table.stdout
    assert "probes whose prefix did not reproduce: 0" in table.stdout
    md = runner.invoke(app, ["probes", "eval", "--strategy", "react", "--probes", str(probe_file), "--format", "markdown"])
    assert md.exit_code == 0 and md.stdout.startswith("### strategy react")
    assert "- false-block rate (allow probes given verify/refuse): 0.000" in md.stdout


def test_build_errors_are_one_line(tmp_path: Path) -> None:
    out = str(tmp_path / "x.jsonl")
    _one_line_error(runner.invoke(app, ["probes", "build", "--domain", "banking", "-o", out]), "unknown domain 'banking'")
    _one_line_error(runner.invoke(app, ["probes", "build", "--domain", "airline", "--split", "dev", "-o", out]), "unknown split 'dev'", "train")
    _one_line_error(
        runner.invoke(app, ["probes", "build", "--domain", "airline", "--split", "test", "--task", "0", "-o", out]),
        "task ids not in airline/test: 0",
    )
    assert not Path(out).exists()


def test_eval_errors_are_one_line(tmp_path: Path, probe_file: Path) -> None:
    _one_line_error(runner.invoke(app, ["probes", "eval", "--strategy", "nope", "--probes", str(probe_file)]), "unknown strategy 'nope'")
    _one_line_error(runner.invoke(app, ["probes", "eval", "--strategy", "react", "--probes", str(tmp_path / "none.jsonl")]), "cannot read probe file")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    _one_line_error(runner.invoke(app, ["probes", "eval", "--strategy", "react", "--probes", str(bad)]), "bad.jsonl:1: invalid probe")
    unknown = tmp_path / "unknown.jsonl"
    unknown.write_text(json.dumps({"domain": "airline", "task_id": "999", "call": {"name": "cancel_reservation"}, "label": "refuse"}) + "\n")
    _one_line_error(runner.invoke(app, ["probes", "eval", "--strategy", "react", "--probes", str(unknown)]), "unknown airline task '999'")
    _one_line_error(
        runner.invoke(app, ["probes", "eval", "--strategy", "react", "--probes", str(probe_file), "--strategy-option", "novalue"]),
        "KEY=VALUE",
    )


# --- probes sweep ------------------------------------------------------------------------


def test_sweep_lists_held_gold_writes_with_and_without_the_requested_reads() -> None:
    base = ["probes", "sweep", "--strategy", "ledger", "--domain", "airline", "--task-ids", "7,9", "--format", "json"]
    followed = json.loads(runner.invoke(app, base).stdout)
    assert followed["follow_reads"] is True and followed["note"].startswith("SIMULATION")
    counts = followed["counts"][0]
    assert (counts["domain"], counts["tasks"], counts["writes"]) == ("airline", 2, 4)
    assert sum(counts[v] for v in ("ALLOW", "VERIFY", "REVISE", "BLOCK")) == 4
    held = {(d["task_id"], d["write_index"], d["verdict"], d["rule_id"]) for d in followed["decisions"] if d["verdict"] != "ALLOW"}
    # airline 7 and 9: gold writes that contradict the policy once the facts are read
    assert held == {("7", 1, "BLOCK", "airline.cancel_requires_basis"), ("9", 0, "BLOCK", "airline.cancel_not_flown")}
    plain = json.loads(runner.invoke(app, [*base, "--no-follow-reads"]).stdout)
    assert plain["follow_reads"] is False
    # the bare gold plans lack reads: every write but one is a VERIFY; the exception (7/2) is a
    # cancellation whose reservation the gold plan reads, for the user id the user states (the
    # write contract's stated-id identification: no profile read needed)
    verdicts = [d["verdict"] for d in plain["decisions"]]
    assert set(verdicts) == {"VERIFY", "ALLOW"} and verdicts.count("ALLOW") == 1
    assert all(d["reads_done"] == 0 for d in plain["decisions"])
    table = runner.invoke(app, ["probes", "sweep", "-s", "action-guard", "-d", "airline", "--task-ids", "9", "--plain"])
    assert table.exit_code == 0, table.stderr
    assert "SIMULATION" in table.stdout and "BLOCK" in table.stdout and "held gold writes" in table.stdout
    assert "[1/1] airline/9" in table.stderr  # plain progress


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["--strategy", "nope"], ["unknown strategy 'nope'"]),
        (["--strategy", "ledger", "--domain", "air"], ["unknown domain 'air'", "airline"]),
        (["--strategy", "ledger", "--split", "dev", "--domain", "airline"], ["unknown split 'dev'"]),
        (["--strategy", "ledger", "--domain", "airline", "--task-ids", "999"], ["unknown task id(s) 999"]),
        (["--strategy", "ledger", "--task-ids", "1"], ["--task-ids needs a single --domain"]),
    ],
)
def test_sweep_bad_input_is_one_error_line(args: list[str], fragments: list[str]) -> None:
    _one_line_error(runner.invoke(app, ["probes", "sweep", *args]), *fragments)
