"""Archives of every shape seen in the wild: unlabelled, newer task versions, bare lists, other
top levels, several trials (small subsets of the shared files, tests/data/trajectories)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data" / "trajectories"
CLAUDE = DATA / "airline_claude_subset.json.gz"
UNLABELLED = DATA / "retail_unlabelled_subset.json.gz"
ADAPTIVE = DATA / "airline_adaptive_subset.json.gz"
CASCATA = DATA / "airline_cascata_subset.json.gz"
TRIALS4 = DATA / "airline_4trials_synthetic.json.gz"
CLAUDE4 = DATA / "airline_claude_4trials_synthetic.json.gz"


def _import(path: Path, out: Path, **options):
    from tauguard.trajectories.importer import import_results
    from tauguard.trajectories.load import read_results

    return import_results(read_results(path), out, name=options.pop("name", path.name.split(".")[0]), **options)


def test_unlabelled_file_is_placed_by_content_and_ambiguity_is_reported(tmp_path):
    from tauguard.runs.store import load_run

    result = _import(UNLABELLED, tmp_path)
    # #0 has task 89's unique gold; #1/#2 share 41/42's gold and the user's turns tell them apart.
    assert result.placements == {"gold": 1, "scenario": 2, "ambiguous": 2}
    run = load_run(result.run_dir)
    placed = {r.simulation["placement"]["source_index"]: r.task_id for r in run.records}
    assert placed == {0: "89", 1: "41", 2: "42"}
    # #3/#4 share 96/97's gold and the scenario points both to 97: reported, excluded, not guessed.
    assert set(result.ambiguous) == {"#3", "#4"}
    assert all("ambiguous placement" in result.excluded_simulation_reasons[k] for k in ("#3", "#4"))
    assert run.manifest.provenance["ambiguous"].keys() == {"#3", "#4"}
    # The original upload has no times and no termination reason: filled, the reason read off
    # the conversation's stop token, so re-scoring replays and agrees with every recorded reward.
    assert result.filled_fields["termination_reason"] == 3
    assert {r.termination_reason for r in run.records} == {"user_stop"}
    from tauguard.trajectories.rescore import rescore_run

    rescored = rescore_run(run)
    assert rescored.agree == 3 and rescored.replay_errors == 0
    accepted = _import(UNLABELLED, tmp_path, name="accepted", accept_ambiguous=True)
    records = load_run(accepted.run_dir).records
    assert accepted.imported == 5 and sorted(r.task_id for r in records) == ["41", "42", "89", "96", "97"]
    assert {r.simulation["placement"]["confidence"] for r in records if r.task_id in ("96", "97")} == {"ambiguous"}


def test_trusted_labels_decide_shared_golds_and_a_contradicted_label_is_not_trusted(tmp_path):
    from tauguard.trajectories.labels import task_fingerprint
    from tauguard.trajectories.placement import TaskText, place_simulations
    from tauguard.tau2_adapter import compat as t2

    tasks = [TaskText(id=t.id, fingerprint=task_fingerprint(t), instructions=str(t.user_scenario.instructions))
             for t in t2.load_tasks("airline", "base")]
    sims = json.loads(gzip.decompress(CLAUDE.read_bytes()))["simulations"]
    placed = {p.label: p for p in place_simulations(sims, tasks)}
    assert placed["17"].confidence == "label" and placed["17"].candidates == ["17", "22"]
    assert placed["18"].confidence == "gold"
    # Swap two labels: the file no longer agrees with its content, so no label is trusted.
    sims[0]["task_id"], sims[1]["task_id"] = sims[1]["task_id"], sims[0]["task_id"]
    swapped = place_simulations(sims, tasks)
    assert all(p.confidence != "label" for p in swapped)
    assert sum(p.relabelled for p in swapped) >= 1


def test_bare_list_of_a_later_task_release(tmp_path):
    from tauguard.analysis.summary import summarize_run
    from tauguard.runs.store import load_run

    result = _import(ADAPTIVE, tmp_path)
    assert result.domain == "airline" and result.domain_source == "content"
    # label 7 was scored against another version of task 7 (it failed): reported, excluded, not a label conflict
    assert result.different_version == {"7/0": "7"} and result.label_conflicts == 0
    assert "scored against a different task version" in result.excluded_simulation_reasons["7/0"]
    run = load_run(result.run_dir)
    assert run.manifest.counts["different_task_version"] == 1
    # pass^1 is the mean over what was imported (the file's mean over all three is 2/3)
    assert summarize_run(run).slices[0].pass_hat[0].value == result.mean_recorded_reward == 1.0
    # models from each message's raw_data, mixed ones with counts
    assert run.manifest.agent_llm == "mixed: claude-opus-4-6 (2), claude-sonnet-4-6 (1)"
    assert run.manifest.provenance["models"]["counts"]["agent"] == {"claude-sonnet-4-6": 1, "claude-opus-4-6": 2}
    assert run.manifest.provenance["models"]["source"] == "raw_data"


def test_own_top_level_domain_and_an_infrastructure_error(tmp_path):
    from tauguard.analysis.summary import summarize_run
    from tauguard.runs.store import load_run

    result = _import(CASCATA, tmp_path)
    assert result.domain_source == "file" and result.different_version == {"2/0": "2"}
    assert result.imported == 2 and result.without_reward == 1
    run = load_run(result.run_dir)
    errored = [r for r in run.records if r.error]
    assert [r.task_id for r in errored] == ["7"] and errored[0].error == "no recorded reward"
    assert summarize_run(run).slices[0].pass_hat[0].value == result.mean_recorded_reward == 1.0
    assert run.manifest.provenance["top_level"]["model"] == "claude-opus-4-6"  # declared; messages say deepseek
    assert run.manifest.agent_llm == "deepseek-chat"


def _other_version(tmp_path: Path) -> Path:
    """The claude subset as if task 17 had another gold in the file and τ² had scored against it."""
    data = json.loads(gzip.decompress(CLAUDE.read_bytes()))
    task = next(t for t in data["tasks"] if t["id"] == "17")
    task["evaluation_criteria"]["actions"][-1]["arguments"]["total_baggages"] = 99
    sim = next(s for s in data["simulations"] if s["task_id"] == "17")
    check = next(c for c in sim["reward_info"]["action_checks"] if c["action"]["name"] == task["evaluation_criteria"]["actions"][-1]["name"])
    check["action"]["arguments"]["total_baggages"] = 99
    path = tmp_path / "versioned.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_other_task_version_excluded_or_scored_with_the_files_definition(tmp_path):
    from tauguard.runs.store import load_run
    from tauguard.trajectories.importer import run_tasks

    path = _other_version(tmp_path)
    default = _import(path, tmp_path / "a", name="x")
    assert default.different_version == {"17/0": "17"} and default.imported == 2
    assert "--tasks-from-file" in default.excluded_simulation_reasons["17/0"]
    own = _import(path, tmp_path / "b", name="x", tasks_from_file=True)
    assert own.imported == 3 and set(own.file_tasks) == {"17"}
    run = load_run(own.run_dir)
    tasks = run_tasks("airline", {"17", "18"}, run.manifest.provenance["task_definitions"])
    assert tasks["17"].evaluation_criteria.actions[-1].arguments["total_baggages"] == 99  # the file's, not 26.3's
    assert tasks["18"].id == "18"
    assert next(r for r in run.records if r.task_id == "17").reward == 1.0  # τ²'s recorded reward


def test_four_trials_give_real_pass_k(tmp_path):
    from tauguard.analysis.compare import compare_runs
    from tauguard.analysis.summary import summarize_run
    from tauguard.runs.store import load_run

    mixed = _import(TRIALS4, tmp_path)
    claude = _import(CLAUDE4, tmp_path)
    assert mixed.trials == {4: 3} and mixed.imported == 12
    run = load_run(mixed.run_dir)
    hats = [h.value for h in summarize_run(run).slices[0].pass_hat]
    # 17 passes in trials 0 and 2 of 4, 18 never, 46 always: pass^1 = 1/2, pass^4 = 1/3
    assert hats[0] == pytest.approx(0.5) and hats[3] == pytest.approx(1 / 3)
    from typer.testing import CliRunner

    from tauguard.cli.main import app

    shown = CliRunner().invoke(app, ["show", mixed.run_dir])
    # with its adjusted Wald CI over tasks (3 tasks: 1, 0, 0 -> [0.000, 0.829])
    assert shown.exit_code == 0 and "pass^4 0.333 [0.000, 0.829]" in shown.output
    assert "CI over tasks (adjusted Wald interval of the mean" in shown.output
    report = compare_runs([load_run(claude.run_dir), run], n_resamples=200)
    pass4 = report.comparisons[0].result(4)
    assert pass4.delta == pytest.approx(-1 / 3) and pass4.ci_low < 0 <= pass4.ci_high


SHARED = next((p / "shared" / "trajectories" for p in Path(__file__).resolve().parents if (p / "shared" / "trajectories").is_dir()), None)


@pytest.mark.skipif(SHARED is None, reason="../shared/trajectories not present")
def test_an_undecided_tie_break_never_demotes_a_decided_placement():
    from tauguard.trajectories.labels import task_fingerprint
    from tauguard.trajectories.placement import TaskText, place_simulations
    from tauguard.tau2_adapter import compat as t2

    assert SHARED is not None
    tasks = [TaskText(id=t.id, fingerprint=task_fingerprint(t), instructions=str(t.user_scenario.instructions))
             for t in t2.load_tasks("retail", "base")]
    sims = json.loads(gzip.decompress((SHARED / "retail_toolorchestra_original-unlabelled.json.gz").read_bytes()))["simulations"]
    placed = place_simulations(sims, tasks)
    # #35: the user's turns echo task 72's instructions (margin 0.25); #79 shares the gold and
    # the scenario does not decide it (margin 0.10), its best guess is 72 too. The decided one
    # keeps 72; the undecided one stays ambiguous, proposed the task left (71).
    assert (placed[35].task_id, placed[35].confidence) == ("72", "scenario")
    assert (placed[79].task_id, placed[79].confidence) == ("71", "ambiguous") and "held by #35" in placed[79].basis
    # #11 and #34 are both decided for 97 (margins 0.31, 0.44) in a file of one simulation per
    # task: a real collision, so neither stands.
    assert placed[11].confidence == placed[34].confidence == "ambiguous"


def test_every_reader_of_an_import_says_what_it_left_out(tmp_path):
    from tauguard.analysis.compare import compare_runs
    from tauguard.analysis.render import render_compare_text
    from tauguard.analysis.summary import summarize
    from tauguard.cli.show import render
    from tauguard.runs.left_out import left_out_of
    from tauguard.runs.store import load_run

    result = _import(UNLABELLED, tmp_path)
    run = load_run(result.run_dir)
    left = left_out_of(run.manifest)
    # 5 simulations in the file, 3 imported, the 2 ambiguous ones left out (both had passed)
    assert left is not None and (left.in_file, left.imported, left.left_out) == (5, 3, 2)
    assert left.by_reason == {"ambiguous placement": 2} and left.left_out_mean_reward == 1.0
    text = render(summarize(run), "table")
    assert "import left out 2 of the file's 5 simulations (2 ambiguous placement)" in text
    assert "over the 3 imported simulations; 2 of the file's 5 left out by the import" in text
    second = load_run(_import(UNLABELLED, tmp_path, name="again").run_dir)
    report = compare_runs([run, second])
    assert set(report.left_out) == {run.manifest.run_id, "again"}
    assert "import left out 2 of the file's 5" in render_compare_text(report)
    from tauguard.trajectories.audit import audit_run
    from tauguard.trajectories.render import render_audit

    audited = audit_run(run, ["react"], {}, labels=[])
    assert audited.left_out == left and "import left out 2 of the file's 5" in render_audit(audited, "table")
    # an import made before the manifest recorded it: the counts and reasons still say it
    old = run.manifest.model_copy(update={"provenance": {k: v for k, v in run.manifest.provenance.items() if k != "left_out"}})
    again = left_out_of(old)
    assert again is not None and again.by_reason == {"ambiguous placement": 2} and again.left_out_mean_reward is None
