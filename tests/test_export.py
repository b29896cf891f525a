"""`tauguard export`: runs in τ²'s results format, read by τ²'s loader, re-imported as the same run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import tauguard

DATA = Path(__file__).resolve().parent / "data" / "trajectories"


def _outcomes(run_dir: Path) -> list[tuple]:
    from tauguard.runs.store import load_run

    run = load_run(run_dir)
    # The import never keeps providers' raw_data (a sim run stores it as null).
    return sorted(
        (r.task_id, r.trial, r.reward, r.termination_reason,
         json.dumps([{k: v for k, v in m.items() if k != "raw_data"} for m in r.simulation["messages"]], sort_keys=True))
        for r in run.records if r.simulation is not None
    )


def _tau2_load(path: Path):
    from tau2.data_model.simulation import Results

    return Results.load(path)


@pytest.mark.slow
def test_imported_run_round_trips_through_tau2s_format(tmp_path):
    from tauguard.runs.store import load_run

    done = tauguard("import", str(DATA / "airline_4trials_synthetic.json.gz"), "--out", str(tmp_path), "--name", "a")
    assert done.returncode == 0, done.stderr
    out = tmp_path / "a.json"
    exported = tauguard("export", str(tmp_path / "a"), "-o", str(out))
    assert exported.returncode == 0, exported.stderr
    assert "wrote 12 simulations of 3 tasks (airline, recorded run)" in exported.stdout
    results = _tau2_load(out)  # τ²'s own loader
    assert len(results.simulations) == 12 and sorted(t.id for t in results.tasks) == ["17", "18", "46"]
    assert results.info.agent_info.llm == "claude-opus-4-6" and results.info.environment_info.domain_name == "airline"
    again = tauguard("import", str(out), "--out", str(tmp_path), "--name", "b")
    assert again.returncode == 0, again.stderr
    assert _outcomes(tmp_path / "a") == _outcomes(tmp_path / "b")
    a, b = load_run(tmp_path / "a").manifest, load_run(tmp_path / "b").manifest
    assert (a.agent_llm, a.user_llm, a.seed, a.max_steps, a.trials, a.task_ids) == (
        b.agent_llm, b.user_llm, b.seed, b.max_steps, b.trials, b.task_ids
    )
    refused = tauguard("export", str(tmp_path / "a"), "-o", str(out))
    assert refused.returncode == 2 and refused.stderr.strip() == f"error: {out} exists; pass --force to replace it"
    assert _tau2_load(out).simulations  # untouched


@pytest.mark.slow
def test_sim_run_exports_as_simulation_and_reimports_as_one(tmp_path):
    from tauguard.runs.store import load_run

    ran = tauguard("run", "-s", "ledger", "-d", "airline", "-k", "2", "--task-ids", "0,17", "--out", str(tmp_path),
                   "--name", "sim", "--plain", "-j", "1")
    assert ran.returncode == 0, ran.stderr
    out = tmp_path / "sim.json.gz"
    exported = tauguard("export", str(tmp_path / "sim"), "-o", str(out), "--format", "json")
    assert exported.returncode == 0, exported.stderr
    assert json.loads(exported.stdout)["simulated"] is True
    import gzip

    from tau2.data_model.simulation import Results

    Results.model_validate_json(gzip.decompress(out.read_bytes()))
    again = tauguard("import", str(out), "--out", str(tmp_path), "--name", "back")
    assert again.returncode == 0, again.stderr
    back = load_run(tmp_path / "back")
    assert back.manifest.simulated and all(r.simulated for r in back.records)
    assert "SIMULATION" in tauguard("show", str(tmp_path / "back")).stdout
    assert _outcomes(tmp_path / "sim") == _outcomes(tmp_path / "back")


def test_records_tau2_cannot_hold_are_listed(tmp_path):
    done = tauguard("import", str(DATA / "airline_cascata_subset.json.gz"), "--out", str(tmp_path), "--name", "c")
    assert done.returncode == 0, done.stderr
    exported = tauguard("export", str(tmp_path / "c"), "-o", str(tmp_path / "c.json"))
    assert exported.returncode == 0, exported.stderr
    # label 7: an infrastructure error whose termination reason τ² 26.3 does not know
    assert "not written (1)" in exported.stdout and "7/0: τ² rejects it" in exported.stdout
    assert len(_tau2_load(tmp_path / "c.json").simulations) == 1


def test_reimport_keeps_how_each_simulation_was_placed(tmp_path):
    from tauguard.runs.store import load_run
    from tauguard.trajectories.export import export_results
    from tauguard.trajectories.importer import import_results
    from tauguard.trajectories.load import read_results

    first = import_results(read_results(DATA / "retail_unlabelled_subset.json.gz"), tmp_path, name="u", accept_ambiguous=True)
    payload, report = export_results(load_run(first.run_dir))
    assert report.simulations == 5 and not report.skipped
    path = tmp_path / "u.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    assert len(_tau2_load(path).simulations) == 5
    # The two ambiguous placements stay ambiguous: excluded again unless accepted again.
    strict = import_results(read_results(path), tmp_path, name="strict")
    assert strict.imported == 3 and set(strict.ambiguous) == {"96/0", "97/0"}
    again = import_results(read_results(path), tmp_path, name="again", accept_ambiguous=True)
    a, b = (load_run(r.run_dir) for r in (first, again))
    strip = lambda run: sorted(  # noqa: E731
        (r.task_id, r.trial, r.reward, json.dumps({k: v for k, v in r.simulation.items() if k != "placement"}, sort_keys=True))
        for r in run.records
    )
    assert strip(a) == strip(b)  # filled fields and all: the same run
