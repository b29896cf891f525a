"""`tauguard faults validate`: cross-fit forecasts of held-out tasks beside the trivial forecast."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REAL = Path("/work/shared/trajectories/airline_claude-opus-4-6_user-gpt-4.1.json.gz")


def _cli(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    from tauguard.cli.main import main

    monkeypatch.setattr(sys, "argv", ["tauguard", *args])
    with pytest.raises(SystemExit) as exit_:
        main()
    out, err = capsys.readouterr()
    return int(exit_.value.code or 0), out, err


def test_a_folder_that_is_no_run_is_a_usage_error(tmp_path, monkeypatch, capsys):
    code, _, err = _cli(monkeypatch, capsys, "faults", "validate", str(tmp_path))
    assert code == 2 and "not a run directory" in err
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "x").write_text("mine")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "manifest.json").write_text("{}")
    code, _, err = _cli(monkeypatch, capsys, "faults", "validate", str(tmp_path / "run"), "--out", str(tmp_path / "kept"))
    assert code == 2 and "not empty" in err and (tmp_path / "kept" / "x").read_text() == "mine"


@pytest.mark.slow
@pytest.mark.skipif(not REAL.exists(), reason="needs ../shared/trajectories")
def test_validate_forecasts_each_held_out_half_beside_the_trivial_forecast(tmp_path, monkeypatch, capsys):
    assert _cli(monkeypatch, capsys, "import", str(REAL), "--name", "real", "--out", str(tmp_path))[0] == 0
    code, out, _ = _cli(monkeypatch, capsys, "faults", "validate", str(tmp_path / "real"), "--partitions", "1", "-k", "1",
                        "--no-in-sample", "--format", "json", "--out", str(tmp_path / "work"))
    assert code == 0
    result = json.loads(out)
    folds = result["folds"]
    assert len(folds) == 2 and {f["fitted_tasks"] + f["held_out_tasks"] for f in folds} == {50}
    # the two folds swap halves: each one's trivial forecast is the other's real pass^1
    assert folds[0]["real_fitted"] == pytest.approx(folds[1]["real_held_out"])
    for f in folds:
        assert f["sim_error"] == pytest.approx(abs(f["sim_held_out"] - f["real_held_out"]))
        assert f["trivial_error"] == pytest.approx(abs(f["real_fitted"] - f["real_held_out"]))
    assert result["sim_mae"] == pytest.approx(sum(f["sim_error"] for f in folds) / 2)
    assert result["sim_mae_ci"][0] <= result["sim_mae"] <= result["sim_mae_ci"][1]
    assert sorted(p.name for p in (tmp_path / "work").glob("*.toml")) == ["p0f0.toml", "p0f1.toml"]
    code, text, _ = _cli(monkeypatch, capsys, "faults", "validate", str(tmp_path / "real"), "--partitions", "1", "-k", "1",
                         "--no-in-sample")
    assert code == 0 and "SIMULATION" in text and "trivial (fitted half's real pass^1)" in text
