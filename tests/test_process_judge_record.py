"""Which dialogue judge scored a run's process checks: recorded in the manifest, named by compare and
report from there (not the judge installed now), with a warning when two runs were scored differently."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import tauguard
from tauguard.cli.main import app
from tauguard.dialogue import neutral_label
from tauguard.process.score import JUDGE_VERSION_KEY, recorded_judges, scored_by_note

runner = CliRunner()


def test_recorded_judges_come_from_the_manifest_versions_and_a_gap_is_unknown() -> None:
    assert recorded_judges({JUDGE_VERSION_KEY: "compiled/6"}) == ["compiled/6"]
    # a resume under another judge: both scored part of the run
    assert recorded_judges({JUDGE_VERSION_KEY: "compiled/6"}, [{JUDGE_VERSION_KEY: "compiled/4"}]) == ["compiled/4", "compiled/6"]
    # a manifest (or an earlier session) from before the judge was recorded: not known
    assert recorded_judges({"tauguard": "0.1.0"}) is None
    assert recorded_judges({JUDGE_VERSION_KEY: "compiled/6"}, [{"tauguard": "0.1.0"}]) is None


def test_the_note_names_the_recorded_judge_and_warns_when_runs_differ() -> None:
    same = scored_by_note([("a", ["compiled/6"]), ("b", ["compiled/6"])])
    assert "compiled/6" in same and not same.startswith("warning")
    differ = scored_by_note([("a", ["compiled/4"]), ("b", ["compiled/6"])])
    assert differ.startswith("warning: ") and "a: compiled/4" in differ and "b: compiled/6" in differ
    unknown = scored_by_note([("a", None), ("b", ["compiled/6"])])
    assert "a: not recorded" in unknown and not unknown.startswith("warning")


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("runs")
    made = [tauguard.run({"domains": ["retail"], "num_tasks": 2, "trials": 1, "workers": 1, "out": str(out), "name": name})
            for name in ("base", "other")]
    assert all(m.status == "completed" for m in made)
    return made[0].run_dir, made[1].run_dir


def _set_judge(run_dir: Path, judge: str | None) -> None:
    path = run_dir / "manifest.json"
    manifest = json.loads(path.read_text())
    if judge is None:
        manifest["versions"].pop(JUDGE_VERSION_KEY, None)
    else:
        manifest["versions"][JUDGE_VERSION_KEY] = judge
    path.write_text(json.dumps(manifest))


def _rubric_line(base: Path, other: Path) -> str:
    res = runner.invoke(app, ["compare", str(base), str(other), "--resamples", "200"])
    assert res.exit_code == 0, res.output
    return next(line for line in res.stdout.splitlines() if line.startswith("process rubric: "))


def test_a_run_records_its_judge_and_compare_names_it_from_the_manifest(two_runs: tuple[Path, Path]) -> None:
    base, other = two_runs
    assert json.loads((base / "manifest.json").read_text())["versions"][JUDGE_VERSION_KEY] == neutral_label()
    _set_judge(other, neutral_label())
    assert _rubric_line(base, other) == f"process rubric: explicit confirmations scored by the neutral dialogue judge {neutral_label()} (tauguard.dialogue, never a guard's code)"
    # scored by an older judge: compare says so instead of naming the judge installed now
    _set_judge(other, "compiled/0")
    line = _rubric_line(base, other)
    assert line.startswith("process rubric: warning: ") and "candidate other: compiled/0" in line and f"baseline base: {neutral_label()}" in line
    _set_judge(other, None)
    assert "candidate other: not recorded" in _rubric_line(base, other)


def test_report_names_the_judge_each_run_recorded(two_runs: tuple[Path, Path]) -> None:
    from tauguard.report.collect import build_report
    from tauguard.runs.store import load_run

    base, other = two_runs
    _set_judge(other, "compiled/0")
    data = build_report([load_run(base), load_run(other)])
    assert data.process_judge.startswith("warning: ") and "other: compiled/0" in data.process_judge
    _set_judge(other, neutral_label())
    assert build_report([load_run(base), load_run(other)]).process_judge.endswith(f"judge {neutral_label()} (tauguard.dialogue, never a guard's code)")
