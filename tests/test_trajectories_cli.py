"""`tauguard import`, `show` and `audit` on an imported run, as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import tauguard

DATA = Path(__file__).resolve().parent / "data" / "trajectories"
CLAUDE = DATA / "airline_claude_subset.json.gz"


@pytest.mark.slow
def test_import_show_audit(tmp_path):
    missing = tauguard("import", str(tmp_path / "nope.json"), "--out", str(tmp_path))
    assert missing.returncode == 2 and missing.stderr.strip().startswith("error: cannot read")
    assert len(missing.stderr.strip().splitlines()) == 1 and list(tmp_path.iterdir()) == []

    done = tauguard("import", str(CLAUDE), "--out", str(tmp_path), "--name", "opus", "--format", "json")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)["import"]
    assert payload["imported"] == 3 and abs(payload["mean_recorded_reward"] - 2 / 3) < 1e-9

    shown = tauguard("show", str(tmp_path / "opus"))
    assert shown.returncode == 0 and "IMPORTED" in shown.stdout and "SIMULATION" not in shown.stdout
    assert "0.667" in shown.stdout

    bad = tauguard("audit", str(tmp_path / "opus"), "-s", "no-such-guard")
    assert bad.returncode == 2 and "unknown strategy 'no-such-guard'" in bad.stderr
    audit = tauguard("audit", str(tmp_path / "opus"), "-s", "refuse-writes", "--task", "18", "--writes")
    assert audit.returncode == 0, audit.stderr
    assert "IMPORTED" in audit.stdout and "refuse_writes.all" in audit.stdout
    # task 18: one message with five gold-matching flight changes, then an off-gold bag change
    assert "held writes (6)" in audit.stdout and audit.stdout.count("off_gold_failed  BLOCK") == 1
