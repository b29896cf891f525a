"""Resume keeps the run's own config; only --workers/--backend may change.

Kills at every stage (start-up window, SIGTERM, SIGKILL of the main process, a concurrent
--resume) are in tests/test_run_integrity.py; the 20-kill battery is bench/kill_battery.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import tauguard
from tauguard.runs.records import Manifest


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_resume_rejects_changed_config_and_reruns_nothing(tmp_path: Path, capsys, monkeypatch):
    from tauguard.cli.main import main

    tauguard.run({"domains": ["telecom"], "num_tasks": 2, "out": str(tmp_path), "name": "r1", "workers": 1})
    monkeypatch.setattr(sys, "argv", ["tauguard", "run", "--resume", str(tmp_path / "r1"), "--strategy", "refuse-writes"])
    with pytest.raises(SystemExit) as exit_:
        main()
    assert exit_.value.code == 2 and "drop --strategy" in capsys.readouterr().err
    monkeypatch.setattr(sys, "argv", ["tauguard", "run", "--resume", str(tmp_path / "r1"), "--workers", "1"])
    with pytest.raises(SystemExit) as exit_:
        main()
    assert exit_.value.code == 0
    assert len(_lines(tmp_path / "r1" / "simulations.jsonl")) == 2  # nothing re-run


def test_resume_never_sends_a_redacted_placeholder(tmp_path: Path):
    """A manifest written by an older version (every key containing 'token' redacted) resumes
    without the placeholder: the argument is dropped, keys come from the environment."""
    tauguard.run({"domains": ["telecom"], "num_tasks": 1, "out": str(tmp_path), "name": "old", "workers": 1})
    path = tmp_path / "old" / "manifest.json"
    data = json.loads(path.read_text())
    data["config"]["llm_args"]["agent"].update(max_tokens="<redacted>", api_key="<redacted>")
    path.write_text(json.dumps(data))
    from tauguard.execution.lifecycle import plan_resume

    plan = plan_resume(tmp_path / "old")
    assert plan.config.llm_args["agent"] == {"temperature": 0.0}
    assert Manifest.model_validate(data).run_id == "old"


def test_the_library_resume_takes_every_override_the_cli_resume_takes() -> None:
    import inspect

    import tauguard
    from tauguard.execution.lifecycle import plan_resume

    overrides = set(inspect.signature(plan_resume).parameters) - {"run_dir"}
    assert "no_key" in overrides
    assert overrides <= set(inspect.signature(tauguard.resume).parameters)
