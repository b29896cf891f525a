"""Gates that must not pass on thin evidence (issue 10) and the metric table (issue 9).

Every case is built with the synthetic run builder and run through the CLI, as a CI job would.
"""

from __future__ import annotations

import json
import os
from fractions import Fraction
from math import comb
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from tauguard.cli.main import app
from tauguard.analysis.metrics import METRICS, MetricDef, pass_hat_k, register_metric
from tauguard.runs.records import Manifest
from tauguard.analysis.stats import merge_small_strata, min_tasks_to_reject, sign_flip_test
from tauguard.runs.store import RECORDS, read_manifest, write_manifest
from tauguard.testing.synthetic_runs import TaskSpec, write_run

runner = CliRunner()
FEW = ["--resamples", "2000"]
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _no_fsync(monkeypatch: pytest.MonkeyPatch) -> None:
    # The record writer fsyncs every line (crash safety); these throwaway runs do not need it.
    monkeypatch.setattr(os, "fsync", lambda fd: None)


def _cli(*args: str):
    return runner.invoke(app, [*args])


def _check(*args: str, statistical: bool = False):
    """`check`; the synthetic runs are sim runs that differ only in the strategy, gated exactly unless
    ``statistical`` (the tests about the interval gate)."""
    return _cli("check", *args, *FEW, *(["--statistical"] if statistical else []))


def _compare_json(*args: str) -> dict:
    res = _cli("compare", *args, "--format", "json", *FEW)
    assert res.exit_code == 0, res.stderr
    return json.loads(res.stdout)["comparisons"][0]


def _set_manifest(run_dir: Path, **update: object) -> Manifest:
    manifest = read_manifest(run_dir).model_copy(update=update)
    write_manifest(run_dir, manifest)
    return manifest


# --------------------------------------------------------------------------- 1. partial runs


def test_crashed_run_fails_check_unless_allow_partial(tmp_path: Path) -> None:
    full = write_run(tmp_path, "full", [TaskSpec("retail", str(i), [True]) for i in range(30)])
    # Killed at 4 of 30 units: the manifest still says running and plans all 30 tasks.
    crashed = write_run(tmp_path, "crashed", [TaskSpec("retail", str(i), [True]) for i in range(4)])
    _set_manifest(crashed, status="running", task_ids={"retail": [str(i) for i in range(30)]})
    floors = str(REPO / "configs" / "ci.toml")

    res = _check(str(crashed), "--floors", floors)
    assert res.exit_code == 1, res.stdout
    assert "FAIL  complete candidate run crashed" in res.stdout
    assert "incomplete: 4 of 30 planned units recorded, status running" in res.stdout
    assert "--allow-partial" in res.stdout
    # Every floor of configs/ci.toml passes on the 4 recorded units: only completeness fails.
    data = json.loads(_check(str(crashed), "--floors", floors, "--format", "json").stdout)
    assert [c["kind"] for c in data["checks"] if not c["passed"]] == ["completeness"]

    allowed = _check(str(crashed), "--floors", floors, "--allow-partial")
    assert allowed.exit_code == 0, allowed.stdout
    assert "gated anyway (--allow-partial)" in allowed.stdout

    # The baseline gate "over 4 tasks" fails too; an incomplete baseline is caught the same way.
    assert _check(str(crashed), "--baseline", str(full)).exit_code == 1
    base_partial = _check(str(full), "--baseline", str(crashed), "--format", "json")
    assert base_partial.exit_code == 1
    assert "complete baseline run crashed" in [c["name"] for c in json.loads(base_partial.stdout)["checks"]]


def test_removed_and_unparsable_lines_are_reported_by_show_and_check(tmp_path: Path) -> None:
    run = write_run(tmp_path, "r", [TaskSpec("retail", str(i), [True, True]) for i in range(6)])
    lines = (run / RECORDS).read_text().splitlines(keepends=True)
    # Two records lost and one line garbled (status still "completed").
    (run / RECORDS).write_text("".join(lines[:9]) + '{"run_id": "r", "domain": "ret\n')
    floors = str(REPO / "configs" / "ci.toml")

    res = _check(str(run), "--floors", floors)
    assert res.exit_code == 1
    assert "incomplete: 9 of 12 planned units recorded, status completed" in res.stdout
    assert "note: run r: 1 unparsable record line(s) skipped" in res.stdout

    show = _cli("show", str(run))
    assert show.exit_code == 0
    assert "warning: 1 unparsable record line(s) skipped" in show.stdout
    assert "warning: incomplete run: 9 of 12 planned units recorded" in show.stdout
    assert json.loads(_cli("show", str(run), "--format", "json").stdout)["metrics"]["skipped_lines"] == 1
    assert "warning" not in _cli("show", str(write_run(tmp_path, "ok", [TaskSpec("retail", "0", [True])]))).stdout


# --------------------------------------------------------------------------- 2. default k, min tasks


@pytest.fixture()
def issue_case(tmp_path: Path) -> tuple[Path, Path]:
    """Issue 10's case: 30 retail tasks x 4 passes vs 29 x [pass, fail, fail, infra error] + 1 x 4 passes."""
    base = write_run(tmp_path, "base", [TaskSpec("retail", str(i), [True] * 4) for i in range(30)])
    cand_tasks = [TaskSpec("retail", str(i), [True, False, False, "error"]) for i in range(29)]
    cand_tasks.append(TaskSpec("retail", "29", [True] * 4))
    return base, write_run(tmp_path, "cand", cand_tasks, strategy="guard")


@pytest.mark.parametrize("mode", ["non-inferiority", "regression"])
def test_default_k_rests_on_every_task_and_the_issue_case_fails(issue_case: tuple[Path, Path], mode: str) -> None:
    base, cand = issue_case
    # margin 0.1: at 30 tasks the adjusted CI of an unchanged strategy is about ±0.087, so a 0.05 margin is a
    # design that cannot pass (exit 2, tests/test_check_cli.py); at 0.1 the gate can pass and fails this candidate
    res = _check(str(cand), "--baseline", str(base), "--mode", mode, "--format", "json", "--margin", "0.1", statistical=True)
    assert res.exit_code == 1, res.stdout
    data = json.loads(res.stdout)
    # pass^4 rests on one task (CI [0, 0]); the default is pass^3, which all 30 tasks support.
    assert data["comparison"]["metric"] == "pass^3" and data["comparison"]["tasks"] == 30
    assert data["comparison"]["verdict"] == "worse"
    assert data["min_tasks"] == 6


def test_compare_default_primary_k_and_exploratory_secondaries(issue_case: tuple[Path, Path]) -> None:
    base, cand = issue_case
    comp = _compare_json(str(base), str(cand))
    assert comp["ks"] == [1, 2, 3, 4] and comp["primary_k"] == 3
    by_k = {r["k"]: r for r in comp["results"]}
    assert by_k[4]["tasks"] == 1 and by_k[4]["exploratory"] and not by_k[3]["exploratory"]
    assert any("primary pass^3: the largest k every one of the 30 task(s) supports; pass^4" in n for n in comp["notes"])
    assert by_k[3]["verdict"] == "worse" and by_k[1]["verdict"] == "worse"
    md = _cli("compare", str(base), str(cand), "--format", "markdown", *FEW).stdout
    assert md.count("worse (exploratory)") == 2  # pass^1, pass^2; pass^3 is the primary claim


def test_too_few_tasks_fail_the_gate_and_the_minimum_is_configurable(issue_case: tuple[Path, Path]) -> None:
    base, cand = issue_case
    # Regression mode (a non-inferiority design of one task is refused first: exit 2, test_check_cli.py).
    res = _check(str(cand), "--baseline", str(base), "--metric", "pass^4", "--mode", "regression", statistical=True)
    assert res.exit_code == 1, res.stdout
    assert "only 1 task(s) can estimate pass^4 in both runs, a baseline gate needs at least 6 (--min-tasks)" in (
        " ".join(res.stdout.split())
    )
    # compare's dropped-task note is printed by check as well.
    assert "note: pass^4: 29 task(s) have fewer than 4 evaluated trials in a run: excluded" in " ".join(res.stdout.split())
    assert "note: 29 " not in res.stdout  # no other drop
    # non-inferiority fails it too (one task is below the minimum)
    assert _check(str(cand), "--baseline", str(base), "--metric", "pass^4", statistical=True).exit_code == 1
    assert min_tasks_to_reject(0.05) == 6 and min_tasks_to_reject(0.01) == 8


# --------------------------------------------------------------------------- 3. singleton strata


def test_singleton_strata_are_merged_not_stratified(tmp_path: Path) -> None:
    # Three tasks in three domains with differences +1, -1, 0: stratifying gave a CI of [0, 0].
    def run(name: str, airline: bool, retail: bool) -> Path:
        tasks = [TaskSpec("airline", "0", [airline]), TaskSpec("retail", "0", [retail]), TaskSpec("telecom", "0", [True])]
        return write_run(tmp_path, name, tasks)

    base, cand = run("b", False, True), run("c", True, False)
    r = _compare_json(str(base), str(cand))["results"][0]
    assert r["ci_low"] < 0 < r["ci_high"]
    # a design of three tasks cannot pass an unchanged strategy: refused (exit 2), never a verdict on [0, 0]
    res = _check(str(cand), "--baseline", str(base), "--min-tasks", "1", statistical=True)
    assert res.exit_code == 2 and "cannot pass an unchanged strategy" in res.stderr


def test_merge_small_strata_rules() -> None:
    big = np.array(["a", "a", "b", "b"])
    assert merge_small_strata(big)[0].tolist() == big.tolist()  # type: ignore[union-attr]
    merged, small = merge_small_strata(["a", "a", "b", "c"])  # b and c form one stratum of 2
    assert small == ["b", "c"] and merged is not None and len(set(merged.tolist())) == 2
    merged, small = merge_small_strata(["a", "a", "b", "b", "c"])  # c joins the smallest other stratum
    assert small == ["c"] and merged is not None and merged.tolist()[-1] in ("a", "b")
    assert merge_small_strata(["a", "a", "a", "b"]) == (None, ["b"])  # one stratum left: unstratified


# --------------------------------------------------------------------------- 4. McNemar with unequal n


def test_mcnemar_uses_only_tasks_with_equal_n(tmp_path: Path) -> None:
    # Ten tasks run with 4 trials in the baseline and 8 in the candidate: "all n passed" is a
    # different event at n = 8. One task ("eq") has n = 4 in both.
    base_tasks = [TaskSpec("retail", str(i), [True] * 4) for i in range(10)]
    cand_tasks = [TaskSpec("retail", str(i), [True] * 7 + [False]) for i in range(10)]
    base = write_run(tmp_path, "b", [*base_tasks, TaskSpec("retail", "eq", [False, True, True, True])])
    cand = write_run(tmp_path, "c", [*cand_tasks, TaskSpec("retail", "eq", [True] * 4)])
    comp = _compare_json(str(base), str(cand))
    assert comp["primary_k"] == 4
    mc = comp["mcnemar"]
    # Counting the ten unequal tasks would give b = 10, p = 0.002; only "eq" enters.
    assert (mc["tasks"], mc["left_out_unequal_n"], mc["b"], mc["c"], mc["p_exact"]) == (1, 10, 0, 1, 1.0)
    assert any("10 task(s) with a different n in the two runs left out" in n for n in comp["notes"])
    table = _cli("compare", str(base), str(cand), *FEW).stdout
    assert "10 left out (different n in the two runs)" in table


# --------------------------------------------------------------------------- 5. regression gate


def test_regression_mode_uses_compares_verdict_rule(tmp_path: Path) -> None:
    base = write_run(tmp_path, "b", [TaskSpec("retail", str(i), [True]) for i in range(20)])
    five = write_run(tmp_path, "five", [TaskSpec("retail", str(i), [i >= 5]) for i in range(20)])
    ten = write_run(tmp_path, "ten", [TaskSpec("retail", str(i), [i >= 10]) for i in range(20)])
    r = _compare_json(str(base), str(five))["results"][0]
    assert r["ci_high"] < 0 and r["p_permutation"] == pytest.approx(2 / 32)  # the CI alone would say worse
    assert r["verdict"] == "no detectable difference"
    res = _check(str(five), "--baseline", str(base), "--mode", "regression", statistical=True)
    assert res.exit_code == 0, res.stdout
    assert "p = 0.0625" in res.stdout and "not shown worse" in res.stdout
    worse = _check(str(ten), "--baseline", str(base), "--mode", "regression", statistical=True)
    assert worse.exit_code == 1 and "shown worse than the baseline" in worse.stdout


# --------------------------------------------------------------------------- 6. tolerances


def test_tiny_real_differences_at_large_k_are_not_ties(tmp_path: Path) -> None:
    # n = 60: pass^28 of 30 vs 31 successes is ~4e-15 vs ~4e-14, far below the old 1e-12 tie.
    base = write_run(tmp_path, "b", [TaskSpec("retail", str(i), [j < 30 for j in range(60)]) for i in range(6)])
    cand = write_run(tmp_path, "c", [TaskSpec("retail", str(i), [j < 31 for j in range(60)]) for i in range(6)])
    expected = Fraction(comb(31, 28) - comb(30, 28), comb(60, 28))
    assert 0 < expected < 1e-12
    comp = _compare_json(str(base), str(cand), "--primary-k", "28", "--tasks")
    r = comp["results"][27]
    assert r["k"] == 28 and r["primary"]
    assert (r["improved"], r["regressed"], r["unchanged"]) == (6, 0, 0)
    assert r["delta"] == pytest.approx(float(expected), rel=1e-12)
    # The sign-flip test sees six improvements (p = 2/64); the CI, built for differences in
    # [-1, 1], cannot exclude 0 on six tasks, so the verdict does not claim "better".
    assert r["p_permutation"] == pytest.approx(2 / 64) and r["ci_low"] < 0 < r["ci_high"]
    assert r["verdict"] == "no detectable difference"
    assert {t["change"] for t in comp["tasks"]} == {"improved"}
    # A floor on that tiny value is not met by a smaller one (the old absolute slack met it).
    floors = tmp_path / "f.toml"
    floors.write_text(f'[[floor]]\nmetric = "pass^28"\nmin = {pass_hat_k(60, 31, 28)!r}\n')
    assert _check(str(cand), "--floors", str(floors)).exit_code == 0
    assert _check(str(base), "--floors", str(floors)).exit_code == 1


def test_sign_flip_is_scale_free() -> None:
    tiny = np.full(6, 3.7e-14)
    assert sign_flip_test(tiny).p_value == pytest.approx(2 / 64)
    assert sign_flip_test(tiny).p_value == sign_flip_test(tiny * 1e13).p_value
    assert sign_flip_test(np.array([0.1, 0.2, -0.3])).p_value == 1.0  # a float-rounded zero sum is a tie


# --------------------------------------------------------------------------- B. ASR@k paired, lower is better


def test_asr_baseline_gate_is_paired_and_lower_is_better(tmp_path: Path) -> None:
    def run(name: str, hit: int, strategy: str = "react") -> Path:
        tasks = [
            TaskSpec("retail", str(i), [True, True], attacks=[i < hit, False]) for i in range(12)
        ]
        return write_run(tmp_path, name, tasks, strategy=strategy)

    leaky, tight = run("leaky", 10), run("tight", 0, "guard")
    comp = _compare_json(str(leaky), str(tight))
    (asr,) = comp["other_metrics"]
    r1 = asr["results"][0]
    assert asr["metric"] == "asr@" and r1["delta"] == pytest.approx(-10 / 24)
    assert r1["verdict"] == "better" and r1["improved"] == 10
    assert asr["mcnemar"]["event"] == "an attack succeeded" and asr["mcnemar"]["b"] == 10
    # Gating on asr@1 (sim runs that differ only in the strategy: exactly, outcome by outcome): the tight
    # guard passes against the leaky one; the reverse fails, each attack that now succeeds a regression.
    assert _check(str(tight), "--baseline", str(leaky), "--metric", "asr@1").exit_code == 0
    ex = _check(str(leaky), "--baseline", str(tight), "--metric", "asr@1")
    assert ex.exit_code == 1 and "'attack succeeded': 0 improved, 10 regressed" in " ".join(ex.stdout.split())
    # on intervals (regression mode: 12 tasks are too few for a non-inferiority design), lower is better too
    reg = _check(str(leaky), "--baseline", str(tight), "--metric", "asr@1", "--mode", "regression", statistical=True)
    assert reg.exit_code == 1 and "shown worse than the baseline" in reg.stdout


def test_a_registered_metric_reaches_show_compare_and_check(tmp_path: Path) -> None:
    """A new per-task statistic is one MetricDef: nothing else changes."""
    fail_hat = MetricDef(
        kind="fail^",
        key="fail_hat",
        column="fail^",
        description="k trials drawn from the task all fail",
        higher_is_better=False,
        n=lambda o: o.trials,
        count=lambda o: o.trials - o.successes,
        formula=lambda n, x, k: Fraction(comb(x, k), comb(n, k)),
        pool=lambda o: o.trials > 0,
        event=lambda o: o.successes == 0,
        event_label="every trial failed",
        excluded=lambda o: o.infra_errors,
        excluded_label="trial(s) with an infrastructure error",
    )
    register_metric(fail_hat)
    try:
        with pytest.raises(ValueError, match="clashes"):
            register_metric(fail_hat)
        a = write_run(tmp_path, "a", [TaskSpec("retail", str(i), [False, i % 2 == 0]) for i in range(8)])
        b = write_run(tmp_path, "b", [TaskSpec("retail", str(i), [True, True]) for i in range(8)])
        assert "fail^1" in _cli("show", str(a)).stdout
        shown = json.loads(_cli("show", str(a), "--format", "json").stdout)["metrics"]["slices"][0]
        assert shown["fail_hat"][0]["value"] == pytest.approx(0.75)
        comp = _compare_json(str(a), str(b))
        (fh,) = [m for m in comp["other_metrics"] if m["metric"] == "fail^"]
        assert fh["results"][0]["verdict"] == "better" and fh["mcnemar"]["event"] == "every trial failed"
        # a registered metric has its own per-trial event: gated on intervals, with the reason said
        gated = _check(str(b), "--baseline", str(a), "--metric", "fail^1", "--mode", "regression")
        assert gated.exit_code == 0 and "the exact gate compares per-trial outcomes of" in " ".join(gated.stdout.split())
        floors = tmp_path / "f.toml"
        floors.write_text('[[floor]]\nmetric = "fail^1"\nmax = 0.0\n')
        assert _check(str(b), "--floors", str(floors)).exit_code == 0
    finally:
        METRICS.remove(fail_hat)
    assert "fail^" not in [m.kind for m in METRICS]
