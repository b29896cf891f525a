"""A domain with only a policy pack and a write contract works end to end (issue 21).

τ²'s ``mock`` domain (tau2.domains.mock) is not shipped: its pack and contract are a fixture in
tests/data/domains/mock/, added through TAUGUARD_DOMAIN_DIRS. Nothing else is written for it: no
strategy rules, no fault catalog, temptations, attack targets, realistic rates or coverage reasons.
A run of the sim passes its tasks, and everything the domain lacks is said in one line (or, for
coverage, as "not checked" with the reason).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from cli_helpers import REPO, tauguard

FIXTURE_DIRS = str(REPO / "tests" / "data" / "domains")
WITH_MOCK = {"TAUGUARD_DOMAIN_DIRS": FIXTURE_DIRS}


def test_the_mock_domain_is_not_built_in() -> None:
    res = tauguard("run", "--domain", "mock", "--dry-run", env={"TAUGUARD_DOMAIN_DIRS": None})
    assert res.returncode == 2 and "unknown domain 'mock'" in res.stderr


def test_a_run_of_the_sim_on_a_domain_with_only_a_pack_and_a_contract(tmp_path: Path) -> None:
    res = tauguard("run", "--domain", "mock", "--strategy", "react", "-k", "1", "--task-ids", "create_task_1,update_task_1",
                   "--out", str(tmp_path), "--name", "mock", "--plain", env=WITH_MOCK)
    assert res.returncode == 0, res.stderr
    from tauguard.runs.store import load_run

    run = load_run(tmp_path / "mock")
    assert run.manifest.status == "completed" and run.manifest.domains == ["mock"]
    by_task = {r.task_id: r for r in run.records}
    assert set(by_task) == {"create_task_1", "update_task_1"}
    assert all(r.reward == 1.0 for r in by_task.values())
    # the process rubric is the contract's: the sim identified the user (get_users) before create_task
    created = by_task["create_task_1"].process
    assert created is not None and created.applicable == 1 and created.failures == []
    # a strategy whose own rules the domain lacks says so in one line, before any work
    ledger = tauguard("run", "--domain", "mock", "--strategy", "ledger", "--out", str(tmp_path), "--name", "l", env=WITH_MOCK)
    assert ledger.returncode == 2 and ledger.stderr.strip().splitlines() == [
        "error: strategy ledger: domain 'mock' has no ledger rules: missing strategies/ledger/clauses/mock.toml, "
        "strategies/ledger/schemas/mock.py, strategies/ledger/readmap/mock.py, strategies/ledger/predicates/mock.py"
    ]
    for strategy, line in (
        ("action-guard", "strategy action-guard: domain 'mock' has no checklists (strategies/action_guard/checklists/mock/<tool>.toml)"),
        ("workflow", "no workflow graph for domain 'mock'; available: airline, retail, telecom"),
    ):
        res = tauguard("run", "--domain", "mock", "--strategy", strategy, "--out", str(tmp_path), "--name", strategy, env=WITH_MOCK)
        assert res.returncode == 2 and res.stderr.strip().splitlines() == [f"error: {line}"], res.stderr


CHECKS = textwrap.dedent("""
    import json
    from typer.testing import CliRunner
    from tauguard.cli.main import app
    from tauguard.domains import DOMAINS, load
    from tauguard.domains.contract import contract
    from tauguard.tau2_adapter import compat as t2

    runner = CliRunner()
    agent, _ = t2.tool_types("mock")
    policy = t2.policy_text("mock")
    faults = runner.invoke(app, ["faults", "--domain", "mock", "--format", "json"])
    attacks = runner.invoke(app, ["attacks", "--domain", "mock"])
    coverage = runner.invoke(app, ["coverage", "--domain", "mock", "--format", "json"])
    print(json.dumps({
        "domains": list(DOMAINS),
        "writes": sorted(contract("mock").tools),
        "tau2_writes": sorted(t for t, kind in agent.items() if kind == "WRITE"),
        "not_verbatim": [c.id for c in load("mock").clause if c.text not in policy],
        "faults": [faults.exit_code, sorted(r["id"] for r in json.loads(faults.stdout))],
        "attacks": [attacks.exit_code, attacks.stderr.strip().splitlines()],
        "coverage": [coverage.exit_code, sorted({c["status"] + ": " + c["reason"] for r in json.loads(coverage.stdout)["rows"]
                                                 for c in r["cells"].values()})],
    }))
""")


def test_what_the_domain_lacks_is_said_not_required() -> None:
    res = subprocess.run([sys.executable, "-c", CHECKS], capture_output=True, text=True, cwd=REPO, timeout=300,
                         env={**_env(), **WITH_MOCK})
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout.strip().splitlines()[-1])
    assert {"airline", "mock", "retail", "telecom"} <= set(got["domains"])
    assert got["writes"] == got["tau2_writes"] == ["create_task", "update_task_status"]
    assert got["not_verbatim"] == []
    # the generic faults that apply in every domain; the contract gives no target reads or yes to derive more
    assert got["faults"] == [0, ["premature_stop", "repeat_loop"]]
    assert got["attacks"] == [2, ["error: domain 'mock' has no attack targets (tauguard/attacks/targets/mock.toml); "
                                  "domains with targets: airline, retail, telecom"]]
    assert got["coverage"] == [0, [f"gap: {g} has no rules for mock" for g in ("action-guard", "ledger", "workflow")]]


def _env() -> dict[str, str]:
    import os

    return dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True")
