"""The report's guard sections: guard against guard, guard latency and errors, false holds."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tauguard.cli.main import app
from tauguard.strategy_api.conversation import ToolCallView
from tauguard.strategy_api.guard import GUARD_ERROR_RULE, GuardEvent, Verdict
from tauguard.testing.synthetic_runs import random_tasks, write_run

DATA = Path(__file__).resolve().parent / "data"
CLAUDE = DATA / "trajectories" / "airline_claude_subset.json.gz"
LABELS = DATA / "real_writes_fixture.jsonl"
runner = CliRunner()


def _with_guard_events(run_dir: Path, latency: float, error_every: int) -> None:
    """Two decisions per record (latencies ``latency`` and 3x it); every ``error_every``-th record's second is a guard error."""
    path = run_dir / "simulations.jsonl"
    lines = []
    for n, line in enumerate(path.read_text().splitlines()):
        rec = json.loads(line)
        call = ToolCallView(id="w", name="cancel_reservation", arguments={"reservation_id": "ABC123"})
        second_error = n % error_every == 0
        rec["guard_events"] = [
            GuardEvent(hook="before_write", step=2, verdict=Verdict.ALLOW, latency_s=latency, tool_call=call).model_dump(mode="json"),
            GuardEvent(hook="before_write", step=4, verdict=Verdict.VERIFY if second_error else Verdict.BLOCK,
                       rule_id=f"{GUARD_ERROR_RULE}.timeout" if second_error else "airline.cancel.window",
                       latency_s=3 * latency, tool_call=call).model_dump(mode="json"),
            GuardEvent(hook="user_turn", step=1, latency_s=99.0).model_dump(mode="json"),  # not a decision on a write
        ]
        lines.append(json.dumps(rec))
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    paths = []
    for i, (name, p) in enumerate((("base", 0.5), ("ledger-cand", 0.8), ("guard-cand", 0.4))):
        path = write_run(root, name, random_tasks({"airline": 12}, 2, p, seed=3 + i), strategy="react" if i == 0 else name)
        if i:
            _with_guard_events(path, latency=0.01 * i, error_every=4)
        paths.append(path)
    return paths


def test_candidates_are_compared_with_each_other_as_compare_does(runs):
    from tauguard.analysis.compare import compare_runs
    from tauguard.report import ReportOptions, build_report
    from tauguard.runs.store import load_run

    loaded = [load_run(p) for p in runs]
    data = build_report(loaded, ReportOptions(n_resamples=500))
    pairs = [g for g in data.guard_pairs if g.primary]
    assert [(g.a, g.b) for g in pairs] == [("ledger-cand", "guard-cand")]
    direct = compare_runs([loaded[1], loaded[2]], n_resamples=500).comparisons[0]
    primary = direct.result(direct.primary_k)
    assert (pairs[0].delta, pairs[0].ci_low, pairs[0].ci_high) == (primary.delta, primary.ci_low, primary.ci_high)
    # Two runs only: the baseline comparison is the whole story, no pair section.
    assert build_report(loaded[:2], ReportOptions(n_resamples=200)).guard_pairs == []


def test_guard_latency_and_error_rates(runs):
    from tauguard.report import ReportOptions, build_report, render_html
    from tauguard.runs.store import load_run

    data = build_report([load_run(p) for p in runs], ReportOptions(n_resamples=200))
    stats = {g.run_id: g for g in data.guard_stats}
    assert set(stats) == {"ledger-cand", "guard-cand"}  # the baseline records no guard decision
    g = stats["guard-cand"]  # 24 records, two write decisions each; records 0, 4, 8, ... have a guard error
    assert (g.decisions, g.guard_errors, g.guard_error_trials, g.trials) == (48, 6, 6, 24)
    assert g.guard_error_rate == pytest.approx(6 / 48) and g.guard_error_trial_rate == pytest.approx(6 / 24)
    assert g.latency_median_s == pytest.approx(0.04) and g.latency_p95_s == pytest.approx(0.06)
    assert g.latency_mean_s == pytest.approx(0.04) and g.held == 24
    html = render_html(data)
    assert "Guard against guard" in html and "Guard latency and guard errors" in html
    assert "False holds on the real-write benchmark" not in html  # no audit given


@pytest.mark.parametrize("decoder", ["msgspec", "pydantic"])
def test_guard_stats_read_back_by_span_are_those_of_the_records(runs, decoder, monkeypatch):
    # A report that loaded outcomes only reads each unit's line back and decodes just the guard
    # events (msgspec, else pydantic): the figures must be those of the fully parsed records.
    from tauguard.report.guards import guard_stats
    from tauguard.runs.store import load_run

    full = guard_stats([load_run(p) for p in runs])
    outcomes_only = [load_run(p, records=False) for p in runs]
    assert all(r.spans is not None and not r.records for r in outcomes_only)
    if decoder == "pydantic":
        monkeypatch.setitem(sys.modules, "msgspec", None)  # as if msgspec were not installed
    assert guard_stats(outcomes_only) == full and len(full) == 2


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    """The claude subset imported and audited by refuse-writes and react (held: all writes / none)."""
    from tauguard.runs.store import load_run
    from tauguard.trajectories.audit import audit_run
    from tauguard.trajectories.importer import import_results
    from tauguard.trajectories.load import read_results

    out = tmp_path_factory.mktemp("audited")
    renamed = out / "another-name.json.gz"  # labels are matched by content, not by the file's name
    renamed.write_bytes(CLAUDE.read_bytes())
    result = import_results(read_results(renamed), out, name="claude")
    report = audit_run(load_run(result.run_dir), ["refuse-writes", "react"])
    path = out / "audit.json"
    path.write_text(report.model_dump_json(), encoding="utf-8")
    return Path(result.run_dir), path


def test_false_holds_against_labelled_writes(audited):
    from tauguard.benchmark.real_writes import load_labels
    from tauguard.report.guards import false_holds, read_audit
    from tauguard.runs.store import load_run

    run_dir, audit_path = audited
    labels = load_labels([LABELS])  # validated by the benchmark's schema
    assert len(labels) == 9 and {w.label for w in labels} == {"complies", "violates"}
    section = false_holds([read_audit(audit_path)], [load_run(run_dir)], labels)
    rows = {r.strategy: r for r in section.rows}
    assert (section.labelled, section.matched, section.note) == (9, 9, None)
    refuse, react = rows["refuse-writes"], rows["react"]
    # task 17 (passed): 3 complying writes; task 18 (failed): 5 complying flight changes, 1 violating bag change
    assert (refuse.false_holds_passed.count, refuse.false_holds_passed.total) == (3, 3)
    assert (refuse.false_holds_failed.count, refuse.false_holds_failed.total) == (5, 5)
    assert (refuse.catches.count, refuse.catches.total) == (1, 1)
    assert refuse.by_rule == {"refuse_writes.all": 8}
    assert (react.false_holds_passed.count, react.catches.count) == (0, 0)
    # Wilson interval of 0/3 at 95 %: [0, 0.5615]
    assert react.false_holds_passed.low == pytest.approx(0.0, abs=1e-9)
    assert react.false_holds_passed.high == pytest.approx(0.5615, abs=1e-3)
    empty = false_holds([read_audit(audit_path)], [load_run(run_dir)], [])
    assert empty.rows == [] and "No labelled write matched" in (empty.note or "") and empty.matched == 0


def test_report_cli_adds_the_false_hold_section(audited, tmp_path):
    run_dir, audit_path = audited
    out = tmp_path / "r.html"
    res = runner.invoke(app, ["report", str(run_dir), "-o", str(out), "--resamples", "200",
                              "--audit", str(audit_path), "--labels", str(LABELS)])
    assert res.exit_code == 0, res.output
    html = out.read_text(encoding="utf-8")
    assert "False holds on the real-write benchmark" in html and "3/3 (1.000" in html
    waiting = runner.invoke(app, ["report", str(run_dir), "-o", str(tmp_path / "w.html"), "--resamples", "200",
                                  "--audit", str(audit_path)])
    assert waiting.exit_code == 0, waiting.output
    # the packaged benchmark labels this file's simulations too: matched by content, as audit matches them
    assert "No labelled write matched" not in (tmp_path / "w.html").read_text(encoding="utf-8")
    other = DATA / "real_writes_other.jsonl"
    none = runner.invoke(app, ["report", str(run_dir), "-o", str(tmp_path / "n.html"), "--resamples", "200",
                               "--audit", str(audit_path), "--labels", str(other)])
    assert none.exit_code == 0, none.output
    assert "note: No labelled write matched" in none.output  # one line, not a silent "0 of 0"
    assert "No labelled write matched" in (tmp_path / "n.html").read_text(encoding="utf-8")
    bad = runner.invoke(app, ["report", str(run_dir), "-o", str(tmp_path / "x.html"), "--audit", str(LABELS)])
    assert bad.exit_code == 2 and "not a readable audit report" in bad.output
    assert not (tmp_path / "x.html").exists()
