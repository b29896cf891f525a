"""Importing τ² results files, re-scoring and auditing them (small subsets of the shared
leaderboard files, tests/data/trajectories; see build_fixtures.py there)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data" / "trajectories"
CLAUDE = DATA / "airline_claude_subset.json.gz"
GPTOSS = DATA / "airline_gptoss_subset.json.gz"
RETAIL = DATA / "retail_mislabelled_subset.json.gz"
FAKE_KEY = "sk-fixture-NOT-A-REAL-KEY-0123456789"


def _load(path: Path) -> dict:
    return json.loads(gzip.decompress(path.read_bytes()))


def _write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The three fixtures imported once (retail relabelled)."""
    from tauguard.trajectories.importer import import_results
    from tauguard.trajectories.load import read_results

    out = tmp_path_factory.mktemp("runs")
    return {
        "claude": import_results(read_results(CLAUDE), out, name="claude"),
        "gptoss": import_results(read_results(GPTOSS), out, name="gptoss"),
        "retail": import_results(read_results(RETAIL), out, name="retail", relabel=True),
    }


def test_read_layout_without_task_id_and_trial(tmp_path):
    from tauguard.runs.store import load_run
    from tauguard.trajectories.importer import import_results
    from tauguard.trajectories.load import ResultsFileError, read_results

    data = _load(CLAUDE)
    tasks = {t["id"]: t for t in data["tasks"]}
    sims = []
    for sim in data["simulations"]:
        sim = dict(sim)
        task_id = sim.pop("task_id")
        sim.pop("trial")
        sim["task"] = tasks[task_id]
        sims.extend([sim, dict(sim)])  # two trials of each task, numbered in file order
    bare = _write(tmp_path / "bare.json", sims)
    results = read_results(bare)
    assert results.layout == "inferred" and results.domain is None
    assert set(results.tasks) == {"17", "18", "46"}
    assert all("raw_data" not in m for s in results.simulations for m in s["messages"])
    with pytest.raises(ResultsFileError, match="not 'retail'"):
        read_results(CLAUDE, domain="retail")
    # A bare list records no domain: it is inferred from the gold τ² recorded.
    result = import_results(results, tmp_path / "runs", name="bare")
    assert result.domain == "airline" and result.domain_source == "content"
    run = load_run(result.run_dir)
    assert sorted(r.key[1:] for r in run.records) == [(t, k) for t in ("17", "18", "46") for k in (0, 1)]
    assert result.trials == {2: 3}
    data["simulations"].append(dict(data["simulations"][0]))
    with pytest.raises(ResultsFileError, match="appears twice"):
        read_results(_write(tmp_path / "dup.json", data))


def test_import_manifest_records_and_metrics(runs):
    from tauguard.analysis.summary import summarize_run
    from tauguard.runs.store import load_run, load_run_frame

    result = runs["claude"]
    assert (result.imported, result.excluded_simulations, result.label_conflicts) == (3, 0, 0)
    run = load_run(result.run_dir)
    m = run.manifest
    assert m.source == "imported" and not m.simulated and m.strategy == "imported"
    assert (m.agent_llm, m.user_llm, m.seed, m.domains) == ("claude-opus-4-6", "gpt-4.1", 300, ["airline"])
    assert sorted(m.task_ids["airline"]) == ["17", "18", "46"]
    import hashlib

    assert m.provenance["sha256"] == hashlib.sha256(CLAUDE.read_bytes()).hexdigest()
    assert m.provenance["tau2_git_commit"] == "unknown" and m.note.startswith("IMPORTED")
    rewards = {r.task_id: r.reward for r in run.records}
    assert rewards == {"17": 1.0, "18": 0.0, "46": 1.0}
    assert all(r.usage["agent"].cost and r.usage["agent"].prompt_tokens for r in run.records)
    pass1 = summarize_run(run).slices[0].pass_hat[0].value
    assert pass1 == pytest.approx(2 / 3) == pytest.approx(result.mean_recorded_reward)
    frame = load_run_frame(result.run_dir)
    assert len(frame) == 3 and frame["success"].sum() == 2 and not frame["simulated"].any()
    text = "".join(p.read_text() for p in Path(result.run_dir).iterdir())
    assert FAKE_KEY not in text  # the file's llm_args carry a key: redacted


def test_tasks_missing_or_different_are_excluded_with_reasons(tmp_path):
    from tauguard.trajectories.importer import ImportRunError, import_results
    from tauguard.trajectories.load import read_results

    data = _load(CLAUDE)
    task17 = next(t for t in data["tasks"] if t["id"] == "17")
    task17["evaluation_criteria"]["actions"][-1]["arguments"]["total_baggages"] = 99
    ghost = json.loads(json.dumps(next(s for s in data["simulations"] if s["task_id"] == "46")))
    ghost["task_id"] = "9999"
    data["simulations"].append(ghost)
    result = import_results(read_results(_write(tmp_path / "f.json", data)), tmp_path / "runs", name="x")
    assert result.imported == 2  # 18 and 46
    assert result.excluded_tasks["17"].startswith("differs from τ² 26.3 in actions (a different task version")
    # The ghost's content is task 46's conversation: a label conflict, not a task of its own.
    assert "label conflict" in result.excluded_simulation_reasons["9999/0"]
    with pytest.raises(ImportRunError, match="already exists"):
        import_results(read_results(_write(tmp_path / "f.json", data)), tmp_path / "runs", name="x")


def test_label_conflicts_excluded_or_relabelled(runs, tmp_path):
    from tauguard.runs.store import load_run
    from tauguard.trajectories.importer import ImportRunError, import_results
    from tauguard.trajectories.load import read_results

    with pytest.raises(ImportRunError, match=r"2 label conflict\(s\) \(try --relabel\)"):
        import_results(read_results(RETAIL), tmp_path, name="nolabel")
    assert not (tmp_path / "nolabel").exists()
    result = runs["retail"]
    assert result.label_conflicts == 2 and result.relabelled == {"0/0": "89 (gold)", "1/0": "81 (gold)"}
    run = load_run(result.run_dir)
    assert sorted(r.task_id for r in run.records) == ["81", "89"]
    assert {r.simulation["source_task_id"] for r in run.records} == {"0", "1"}


def test_rescore_agrees_and_reports_replay_differences(runs):
    from tauguard.runs.store import load_run
    from tauguard.trajectories.rescore import rescore_run

    for key in ("retail",):
        report = rescore_run(load_run(runs[key].run_dir))
        assert report.agree == report.simulations and report.differ == 0 and report.unfaithful == 0
    report = rescore_run(load_run(runs["gptoss"].run_dir))
    assert report.agree == 2 and report.benign_mismatch_sims == 1
    task8 = next(r for r in report.results if r.task_id == "8")
    assert task8.benign_mismatches == 1 and "pydantic version" in task8.explanation


def test_audit_classes_holds_and_rescue(runs):
    from tauguard.runs.store import load_run
    from tauguard.trajectories.audit import audit_run

    report = audit_run(load_run(runs["claude"].run_dir), ["react", "refuse-writes", "ledger"], follow_reads=True)
    assert (report.simulations, report.passed, report.failed) == (3, 2, 1)
    assert report.class_counts == {"gold_passed": 3, "gold_failed": 5, "off_gold_failed": 1, "off_gold_passed": 0}
    assert report.replay.tool_calls > 0 and report.replay.mismatches == 0
    react, refuse, ledger = report.strategies
    assert react.false_block_proxy == 0.0 and react.catch_proxy == 0.0 and react.rescued == 0
    assert refuse.false_block_proxy == 1.0 and refuse.catch_proxy == 1.0
    assert (refuse.rescued, refuse.failed_with_off_gold) == (1, 1)
    assert refuse.per_rule == {"refuse_writes.all": {"gold_passed": 3, "gold_failed": 5, "off_gold_failed": 1}}
    # task 17 (a real claude-opus-4-6 conversation): passengers then bags of one reservation,
    # no re-read in between. The first write returned the updated reservation, so the ledger
    # knows it and lets the second write go (it used to hold it as stale: a false hold on real
    # behaviour). What it still holds is task 18's removal of checked bags.
    held = [(w.task_id, w.tool, w.rule_id, w.write_class) for w in ledger.held_writes]
    assert held == [("18", "update_reservation_baggages", "airline.no_bag_removal", "off_gold_failed")]
    assert not ledger.over_blocking and ledger.by_class["gold_passed"].held == 0
    assert ledger.held_writes[0].verdict == "BLOCK" and ledger.held_writes[0].verdict_after_reads is None  # a BLOCK has no reads to follow
    # spread over two processes: the same decisions in the same order
    parallel = audit_run(load_run(runs["claude"].run_dir), ["refuse-writes"], workers=2)
    assert parallel.strategies[0].held_writes == refuse.held_writes and parallel.replay.tool_calls == report.replay.tool_calls


def test_audit_counts_a_replay_mismatch(runs, tmp_path):
    from tauguard.runs.store import load_run
    from tauguard.trajectories.audit import audit_run

    run = load_run(runs["claude"].run_dir)
    rec = next(r for r in run.records if r.task_id == "18")
    tool = next(m for m in rec.simulation["messages"] if m["role"] == "tool")
    tool["content"] = '{"tampered": true}'
    report = audit_run(run, ["react"], task_ids=["18"])
    assert report.replay.mismatches == 1 and report.replay.unfaithful_simulations == 1
    assert report.replay.details[0]["task_id"] == "18" and not report.replay.details[0]["benign"]


def test_probes_from_run_replay_and_carry_label_source(runs):
    from tauguard.probes.evaluate import evaluate_probes
    from tauguard.runs.store import load_run
    from tauguard.trajectories.probes import probes_from_run

    probes = probes_from_run(load_run(runs["claude"].run_dir))
    assert len(probes) == 9
    # the fixture's writes are real-write benchmark writes: they carry its labels and clauses
    from tauguard.benchmark.real_writes import load_labels

    labels = {w.id: w.label for w in load_labels()}
    assert len({p.id for p in probes}) == 9
    for p in probes:
        assert p.label_source and p.label_source.startswith("benchmark:") and p.clause
        bench_id = p.label_source.rsplit("(", 1)[1].rstrip(")")
        expected = {"violates": {"refuse"}, "ambiguous": {"verify"}, "complies": {"allow", "verify"}}[str(labels[bench_id])]
        assert p.label in expected
    subset = [p for p in probes if p.task_id == "18"]  # one replay per probe: keep it small
    report = evaluate_probes("refuse-writes", subset)
    assert report.replay_failures == 0 and report.confusion["refuse"]["refuse"] == 1
    assert set(report.by_fault_class) == {p.label_source for p in subset}


def test_compare_and_check_on_imported_runs(runs):
    from tauguard.analysis.gate import UnpairedRunsError, run_gate
    from tauguard.analysis.compare import compare_runs
    from tauguard.runs.store import load_run

    base, cand = load_run(runs["gptoss"].run_dir), load_run(runs["claude"].run_dir)
    report = compare_runs([base, cand], n_resamples=200)
    comparison = report.comparisons[0]
    assert comparison.common_tasks == 1 and not report.simulated  # task 17 in both
    # Two agents' archives differ in user model and tasks: the comparison warns, the gate refuses
    # unless told (issue 24).
    assert {d.field for d in comparison.pairing} == {"user model", "task ids"}
    with pytest.raises(UnpairedRunsError, match="not paired"):
        run_gate(cand, baseline=base, margin=1.0, n_resamples=200, min_tasks=1)
    gate = run_gate(cand, baseline=base, margin=1.0, n_resamples=200, min_tasks=1, allow_unpaired=True)
    assert gate.passed and not gate.simulated


def test_probes_build_from_run_cli(runs, tmp_path):
    from typer.testing import CliRunner

    from tauguard.cli.main import app
    from tauguard.probes.model import read_probes

    runner = CliRunner()
    out = tmp_path / "real.jsonl"
    done = runner.invoke(app, ["probes", "build", "--from-run", runs["retail"].run_dir, "-o", str(out)])
    assert done.exit_code == 0, done.output
    probes = read_probes(out)
    assert len(probes) == 3 and all((p.label_source or "").startswith(("benchmark:", "outcome:")) for p in probes)
    assert f"3 probes (recorded writes of {runs['retail'].run_dir})" in done.output
    both = runner.invoke(app, ["probes", "build", "--from-run", runs["retail"].run_dir, "--domain", "retail", "-o", str(tmp_path / "x.jsonl")])
    assert both.exit_code == 2 and "drop --domain" in both.output and not (tmp_path / "x.jsonl").exists()
    missing = runner.invoke(app, ["probes", "build", "--from-run", str(tmp_path / "nope"), "-o", str(tmp_path / "x.jsonl")])
    assert missing.exit_code == 2 and "run directory not found" in missing.output
