"""A run folder holds its own records only: a record of another run id, domain or trial range
is refused on load and on resume with one line; a resume records the versions it runs with
and warns when they changed (issue 26)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import tauguard
from tauguard.cli.main import app
from tauguard.runs.store import RunLoadError, load_run


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs")
    result = tauguard.run({"domains": ["airline"], "num_tasks": 2, "trials": 2, "workers": 1, "out": str(out), "name": "mine"})
    assert result.status == "completed"
    return result.run_dir


def _copy(made: Path, tmp_path: Path) -> Path:
    import shutil

    target = tmp_path / "mine"
    shutil.copytree(made, target)
    (target / ".lock").unlink(missing_ok=True)
    return target


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"run_id": "someone-else"}, "run id 'someone-else', not 'mine'"),
        ({"domain": "retail"}, "domain 'retail', not airline"),
        ({"trial": 7}, "trial 7, outside 0..1"),
    ],
)
def test_a_foreign_record_is_refused_on_load_show_and_resume(made: Path, tmp_path: Path, change: dict, why: str):
    run_dir = _copy(made, tmp_path)
    records = run_dir / "simulations.jsonl"
    first = json.loads(records.read_text().splitlines()[0])
    records.write_text(records.read_text() + json.dumps({**first, **change}) + "\n")
    before = records.read_bytes()
    with pytest.raises(RunLoadError, match=why):
        load_run(run_dir)
    for args in (["show", str(run_dir)], ["run", "--resume", str(run_dir)]):
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 2, res.output
        lines = res.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: run {run_dir} holds a record of another run") and why in lines[0]
    assert records.read_bytes() == before  # the resume wrote nothing


def test_a_resume_with_other_versions_warns_and_records_them(made: Path, tmp_path: Path):
    run_dir = _copy(made, tmp_path)
    records = run_dir / "simulations.jsonl"
    records.write_text("".join(records.read_text().splitlines(keepends=True)[:-1]))  # one unit pending again
    manifest_path = run_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    current = dict(manifest["versions"])
    manifest["versions"]["tauguard"] = "0.0.1"
    manifest_path.write_text(json.dumps(manifest))
    res = CliRunner().invoke(app, ["run", "--resume", str(run_dir), "--plain"])
    assert res.exit_code == 0, res.output
    warning = [line for line in res.output.splitlines() if line.startswith("warning:")]
    assert warning == [f"warning: resuming mine with other versions (tauguard 0.0.1 -> {current['tauguard']}); "
                       "its records will mix them (the manifest keeps the earlier ones)"]
    stored = json.loads(manifest_path.read_text())
    assert stored["versions"] == current and stored["earlier_versions"] == [{**current, "tauguard": "0.0.1"}]
    # the same versions again: no warning, nothing added
    records.write_text("".join(records.read_text().splitlines(keepends=True)[:-1]))
    again = CliRunner().invoke(app, ["run", "--resume", str(run_dir), "--plain"])
    assert again.exit_code == 0 and "warning:" not in again.output
    assert json.loads(manifest_path.read_text())["earlier_versions"] == [{**current, "tauguard": "0.0.1"}]
