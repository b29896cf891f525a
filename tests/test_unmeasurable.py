"""Questions a run cannot answer are said to be so, in one line (a gate exits 2), never "no difference".

- `compare --subset policy_violation` / `check --subset policy_violation` on sim runs where no
  policy-violation trial was tempted (tauguard.analysis.opportunity);
- `run --attack` where no selected task has an attack target (retail: none at all);
- `audit` / `report --audit` where no labelled write of the run matches; and audit's over-blocking
  warning read from the labels where they exist.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import tauguard
from tauguard.testing.synthetic_runs import TaskSpec, write_run

DATA = Path(__file__).resolve().parent / "data"
CLAUDE = DATA / "trajectories" / "airline_claude_subset.json.gz"
LABELS = DATA / "real_writes_fixture.jsonl"
OTHER_LABELS = DATA / "real_writes_other.jsonl"


def _pv_runs(root: Path, *, attacked: bool = False, simulated: bool = True) -> tuple[Path, Path]:
    def tasks(seed: int) -> list[TaskSpec]:
        pv = [TaskSpec("retail", str(i), [True] * 4, policy_violation=True,
                       attacks=[False] * 4 if attacked else None) for i in range(8)]
        return pv + [TaskSpec("retail", str(100 + i), [(i + seed) % 3 != 0] * 4) for i in range(8)]
    return (write_run(root, "base", tasks(0), simulated=simulated),
            write_run(root, "cand", tasks(1), strategy="ledger", simulated=simulated))


def test_compare_on_an_untempted_policy_violation_slice_says_it_cannot_measure(tmp_path: Path) -> None:
    base, cand = _pv_runs(tmp_path)
    proc = tauguard("compare", str(base), str(cand), "--subset", "policy_violation")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cannot measure: no violation opportunity")
    assert "no detectable difference" not in proc.stdout
    as_json = json.loads(tauguard("compare", str(base), str(cand), "--subset", "policy_violation", "--format", "json").stdout)
    assert as_json["measurable"] is False and "forbidden_write" in as_json["reason"]
    # the other slices are measured as before
    assert "cannot measure" not in tauguard("compare", str(base), str(cand), "--subset", "mutation").stdout


@pytest.mark.parametrize("variant", ["attacked", "real agent"])
def test_a_tempted_or_real_slice_is_compared(tmp_path: Path, variant: str) -> None:
    base, cand = _pv_runs(tmp_path, attacked=variant == "attacked", simulated=variant != "real agent")
    proc = tauguard("compare", str(base), str(cand), "--subset", "policy_violation")
    assert proc.returncode == 0, proc.stderr
    assert "cannot measure" not in proc.stdout and "8 tasks compared" in proc.stdout


def test_check_on_an_untempted_policy_violation_slice_exits_2_saying_what_to_change(tmp_path: Path) -> None:
    base, cand = _pv_runs(tmp_path)
    proc = tauguard("check", str(cand), "--baseline", str(base), "--subset", "policy_violation")
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("error: cannot gate: no violation opportunity") and "--attack" in line and "forbidden_write" in line
    assert proc.stdout == ""
    assert tauguard("check", str(cand), "--baseline", str(base), "--subset", "mutation", "--mode", "regression").returncode in (0, 1)


def test_an_attack_on_a_domain_without_targets_stops_before_running(tmp_path: Path) -> None:
    proc = tauguard("run", "-d", "retail", "--attack", "insist", "-k", "1", "--out", str(tmp_path))
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("error: --attack insist: no selected retail task has an attack target")
    assert "tauguard attacks --domain retail" in line and "airline" in line
    assert not any(tmp_path.iterdir())  # nothing run, nothing written
    # a selection of tasks none of which is a target, in a domain that has targets
    proc = tauguard("run", "-d", "airline", "--attack", "insist", "--task-ids", "2", "-k", "1", "--out", str(tmp_path))
    assert proc.returncode == 2 and "no selected airline task has an attack target" in proc.stderr


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("imported")
    proc = tauguard("import", str(CLAUDE), "--out", str(out), "--name", "claude")
    assert proc.returncode == 0, proc.stderr
    return out / "claude"


def test_audit_with_no_labelled_write_matched_says_so(imported: Path, tmp_path: Path) -> None:
    audit = tmp_path / "a.json"
    proc = tauguard("audit", str(imported), "-s", "refuse-writes", "--labels", str(OTHER_LABELS), "--plain", "-o", str(audit))
    assert proc.returncode == 0, proc.stderr
    assert "no write of this run is labelled" in proc.stdout and "cannot be measured" in proc.stdout
    # --no-labels asked for none: nothing to say
    assert "no write of this run is labelled" not in tauguard("audit", str(imported), "-s", "react", "--no-labels", "--plain").stdout
    report = tauguard("report", str(imported), "--audit", str(audit), "--labels", str(OTHER_LABELS),
                      "-o", str(tmp_path / "r.html"), "--resamples", "100")
    assert report.returncode == 0, report.stderr
    assert "note: No labelled write matched" in report.stderr


def test_over_blocking_is_judged_by_the_labels_where_they_exist(imported: Path) -> None:
    # refuse-writes holds every write: over-blocking by the labels too (the labelled complying ones are held)
    proc = tauguard("audit", str(imported), "-s", "refuse-writes", "-s", "react", "--labels", str(LABELS), "--plain", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    by = {s["strategy"]: s for s in report["strategies"]}
    assert by["refuse-writes"]["over_blocking"] is True and by["refuse-writes"]["over_blocking_basis"] == "labels"
    assert by["react"]["over_blocking"] is False and by["react"]["over_blocking_basis"] == "labels"
    text = tauguard("audit", str(imported), "-s", "refuse-writes", "--labels", str(LABELS), "--plain").stdout
    assert "labelled complying writes" in text and "gold-plan proxy" not in text
    # without labels the proxy decides, and says it is the proxy
    text = tauguard("audit", str(imported), "-s", "refuse-writes", "--no-labels", "--plain").stdout
    assert "over-blocking by the gold-plan proxy" in text


def test_a_proxy_hold_the_labels_do_not_call_complying_is_no_over_blocking_warning() -> None:
    from tauguard.benchmark.audit import LabelledDecision, summarize
    from tauguard.trajectories.audit import StrategyAudit, with_labels
    from tauguard.trajectories.render import _over_blocking_lines

    decisions = [LabelledDecision(id=f"c{i}", label="complies", passed=True, verdict="ALLOW", held=False) for i in range(38)]
    decisions.append(LabelledDecision(id="v", label="violates", passed=True, verdict="BLOCK", held=True))
    proxy = StrategyAudit(strategy="g", writes=40, false_block_proxy=0.12, over_blocking=True,
                          per_rule={"r": {"gold_passed": 3}})
    judged = with_labels(proxy, summarize("g", decisions))
    assert judged.over_blocking is False and judged.over_blocking_basis == "labels"
    (line,) = _over_blocking_lines([judged])
    assert "not over-blocking by the labels (0/38" in line


def test_an_untempted_slice_with_failures_is_compared_with_a_note_that_they_are_not_violations(tmp_path: Path) -> None:
    pv = [TaskSpec("retail", str(i), [i != 0, True, True, True], policy_violation=True) for i in range(8)]
    base = write_run(tmp_path, "base", pv)
    cand = write_run(tmp_path, "cand", [TaskSpec("retail", str(i), [True] * 4, policy_violation=True) for i in range(8)])
    proc = tauguard("compare", str(base), str(cand), "--subset", "policy_violation")
    assert proc.returncode == 0 and "8 tasks compared" in proc.stdout
    assert "note: no violation opportunity" in proc.stderr and "no difference below is about violations" in proc.stderr
