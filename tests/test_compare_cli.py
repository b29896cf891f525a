"""`tauguard compare`: alignment, statistics wiring, formats, errors, and no tau2/litellm import."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tauguard.testing.synthetic_runs import TaskSpec, random_tasks, write_run
from typer.testing import CliRunner

from tauguard.cli.main import app
from tauguard.analysis.compare import compare_runs
from tauguard.runs.store import load_run

runner = CliRunner()
FEW = ["--resamples", "2000"]  # keeps the suite fast; the statistics are tested in test_stats


def _invoke(*args: str):  # noqa: ANN202 - click's Result
    return runner.invoke(app, list(args))


def _json(*args: str) -> dict:
    res = _invoke("compare", *args, "--format", "json", *FEW)
    assert res.exit_code == 0, res.stderr
    return json.loads(res.stdout)


@pytest.fixture()
def hand_runs(tmp_path: Path) -> tuple[Path, Path]:
    """Baseline and candidate over 2 domains with hand-chosen outcomes.

    Task "x" exists only in the baseline, "y" only in the candidate; retail/2 has 2 evaluated
    trials in the candidate (one infra error, one missing) so it drops out of k >= 3.
    """
    base = [
        TaskSpec("airline", "0", [True, True, True, True]),
        TaskSpec("airline", "1", [False, False, False, False]),
        TaskSpec("retail", "0", [True, True, False, True], policy_violation=True),
        TaskSpec("retail", "1", [True, True, True, True]),
        TaskSpec("retail", "2", [False, True, False, False]),
        TaskSpec("retail", "x", [True, True, True, True]),
    ]
    cand = [
        TaskSpec("airline", "0", [True, True, True, True]),
        TaskSpec("airline", "1", [True, True, True, True]),
        TaskSpec("retail", "0", [True, True, True, True], policy_violation=True),
        TaskSpec("retail", "1", [True, False, True, True]),
        TaskSpec("retail", "2", [True, "error", True]),
        TaskSpec("retail", "y", [False, False, False, False]),
    ]
    return write_run(tmp_path, "base", base), write_run(tmp_path, "cand", cand, strategy="guard")


def test_json_values_on_hand_runs(hand_runs: tuple[Path, Path]) -> None:
    a, b = hand_runs
    data = _json(str(a), str(b))
    assert data["simulated"] is True and data["seed"] == 0 and data["n_resamples"] == 2000
    (comp,) = data["comparisons"]
    assert comp["common_tasks"] == 5
    assert comp["dropped"] == {"only_in_baseline": 1, "only_in_candidate": 1, "no_evaluated_trials": 0}
    # Default primary k (issue 10): the largest k every common task supports. retail/2 has n = 2
    # in the candidate, so 2 (was 4, the largest k *some* task supports).
    assert comp["ks"] == [1, 2, 3, 4] and comp["primary_k"] == 2
    assert any("primary pass^2: the largest k every one of the 5 task(s)" in note for note in comp["notes"])
    by_k = {r["k"]: r for r in comp["results"]}
    # k=1 over the 5 common tasks: baseline (1 + 0 + .75 + 1 + .25)/5, candidate (1 + 1 + 1 + .75 + 1)/5.
    assert by_k[1]["baseline"] == pytest.approx(3 / 5)
    assert by_k[1]["candidate"] == pytest.approx(4.75 / 5)
    assert by_k[1]["delta"] == pytest.approx(1.75 / 5)
    assert by_k[1]["tasks"] == 5 and by_k[1]["dropped_n_lt_k"] == 0
    assert (by_k[1]["improved"], by_k[1]["regressed"], by_k[1]["unchanged"]) == (3, 1, 1)
    # retail/2 has n = 2 in the candidate: excluded from k = 3, 4 and said so.
    assert by_k[4]["tasks"] == 4 and by_k[4]["dropped_n_lt_k"] == 1
    assert by_k[4]["baseline"] == pytest.approx(2 / 4) and by_k[4]["candidate"] == pytest.approx(3 / 4)
    assert any("k=4: 1 task(s)" in note for note in comp["notes"])
    assert any("only in the baseline" in note for note in comp["notes"])
    for r in comp["results"]:
        assert r["mde"] > 0 and r["se"] > 0
        assert r["ci_low"] <= r["delta"] <= r["ci_high"]
        for key in ("baseline", "candidate", "delta", "ci_low", "ci_high", "p_permutation", "p_holm"):
            assert isinstance(r[key], float)
    # Primary k is the declared test (unadjusted); the others are Holm-adjusted among themselves
    # and their verdicts exploratory.
    assert by_k[2]["primary"] and by_k[2]["p_holm"] == by_k[2]["p_permutation"]
    assert not by_k[2]["exploratory"]
    for k in (1, 3, 4):
        assert by_k[k]["p_holm"] >= by_k[k]["p_permutation"] and by_k[k]["exploratory"]
    # McNemar on "all trials passed" over the tasks with the same n in both runs: retail/2
    # (n = 4 vs 2) is left out, leaving the same 4 tasks as before:
    # airline/1 only candidate (c), retail/0 only candidate (c), retail/1 only baseline (b).
    mc = comp["mcnemar"]
    assert (mc["b"], mc["c"], mc["tasks"], mc["left_out_unequal_n"]) == (1, 2, 4, 1)
    assert {d["domain"]: (d["b"], d["c"]) for d in mc["per_domain"]} == {"airline": (0, 1), "retail": (1, 1)}
    assert mc["p_exact"] == 1.0 and mc["p_midp"] == pytest.approx(1 - 3 / 8)
    assert "tasks" not in comp  # per-task rows only with --tasks


def test_primary_k_option_and_tasks_listing(hand_runs: tuple[Path, Path]) -> None:
    a, b = hand_runs
    data = _json(str(a), str(b), "--primary-k", "2", "--tasks")
    comp = data["comparisons"][0]
    assert comp["primary_k"] == 2
    assert [r["k"] for r in comp["results"] if r["primary"]] == [2]
    rows = {(t["domain"], t["task_id"]): t for t in comp["tasks"]}
    assert len(rows) == 5
    assert rows[("airline", "1")]["change"] == "improved" and rows[("airline", "1")]["delta"] == 1.0
    assert rows[("retail", "1")]["change"] == "regressed"
    assert rows[("retail", "1")]["delta"] == pytest.approx(0.5 - 1.0)  # pass^2 of 3/4 = 3/6


def test_clear_difference_is_better_and_no_difference_is_never_equivalent(tmp_path: Path) -> None:
    worse = write_run(tmp_path, "w", random_tasks({"retail": 40}, 2, 0.2, seed=1))
    good = write_run(tmp_path, "g", random_tasks({"retail": 40}, 2, 0.95, seed=2))
    same = write_run(tmp_path, "s", random_tasks({"retail": 40}, 2, 0.2, seed=1))
    data = _json(str(worse), str(good), str(same))
    better, identical = data["comparisons"]
    assert {r["verdict"] for r in better["results"]} == {"better"}
    assert all(r["ci_low"] > 0 for r in better["results"])
    assert {r["verdict"] for r in identical["results"]} == {"no detectable difference"}
    assert all(r["delta"] == 0 and r["p_permutation"] == 1.0 for r in identical["results"])
    # Identical outcomes never give a zero-width CI: 40 ties still leave about ±0.06 open.
    assert all(r["ci_low"] < -0.05 and r["ci_high"] > 0.05 for r in identical["results"])
    reversed_ = _json(str(good), str(worse))
    assert {r["verdict"] for r in reversed_["comparisons"][0]["results"]} == {"worse"}
    for fmt in ("table", "markdown", "csv", "json"):
        res = _invoke("compare", str(worse), str(good), str(same), "--format", fmt, *FEW)
        assert res.exit_code == 0
        assert "equivalent" not in res.stdout.lower()


def test_table_markdown_csv_outputs(hand_runs: tuple[Path, Path]) -> None:
    a, b = hand_runs
    table = _invoke("compare", str(a), str(b), "--tasks", *FEW)
    assert table.exit_code == 0
    assert table.stdout.startswith("SIMULATION")
    assert "McNemar" in table.stdout and "b=1" in table.stdout and "c=2" in table.stdout
    assert "2*" in table.stdout and "per-task pass^2" in table.stdout  # default primary k = 2 (see above)
    assert "(exploratory)" in table.stdout and "1 left out (different n in the two runs)" in table.stdout
    md = _invoke("compare", str(a), str(b), "--format", "markdown", *FEW)
    assert md.stdout.startswith("> **SIMULATION") and "| k " in md.stdout
    out = _invoke("compare", str(a), str(b), "--format", "csv", *FEW)
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert [r["k"] for r in rows] == ["1", "2", "3", "4"]
    assert {r["simulated"] for r in rows} == {"True"}
    assert {"ci_low", "ci_high", "p_permutation", "p_holm", "mcnemar_b", "mcnemar_p_midp"} <= set(rows[0])
    task_rows = list(
        csv.DictReader(io.StringIO(_invoke("compare", str(a), str(b), "--format", "csv", "--tasks", *FEW).stdout))
    )
    assert len(task_rows) == 5 and "change" in task_rows[0]


def test_real_llm_runs_carry_no_simulation_note(tmp_path: Path) -> None:
    a = write_run(tmp_path, "a", random_tasks({"retail": 10}, 2, 0.5, seed=1), simulated=False)
    b = write_run(tmp_path, "b", random_tasks({"retail": 10}, 2, 0.5, seed=2), simulated=False)
    data = _json(str(a), str(b))
    assert data["simulated"] is False and data["simulation_note"] is None
    assert "SIMULATION" not in _invoke("compare", str(a), str(b), *FEW).stdout
    c = write_run(tmp_path, "c", random_tasks({"retail": 10}, 2, 0.5, seed=3), simulated=True)
    assert _json(str(a), str(c))["simulated"] is True


def test_attack_success_rate_in_compare(tmp_path: Path) -> None:
    # ASR@k is compared paired, like pass^k (issue 9), replacing the unpaired table.
    a = write_run(tmp_path, "a", [TaskSpec("retail", "0", [False, True], attacks=[True, False])])
    b = write_run(tmp_path, "b", [TaskSpec("retail", "0", [True, True], attacks=[False, None])])
    comp = _json(str(a), str(b))["comparisons"][0]
    (asr,) = comp["other_metrics"]
    assert asr["metric"] == "asr@" and asr["higher_is_better"] is False
    # Only one known outcome in the candidate: k = 2 cannot be estimated, so ASR has k = 1 only.
    assert asr["ks"] == [1] and asr["primary_k"] == 1
    (r1,) = asr["results"]
    assert r1["baseline"] == 0.5 and r1["candidate"] == 0.0 and r1["delta"] == -0.5
    assert (r1["improved"], r1["regressed"]) == (1, 0)  # ASR went down: an improvement
    assert any("0 (baseline) and 1 (candidate) attacked trial(s) with an unknown outcome" in n for n in comp["notes"])


def test_seed_is_recorded_and_reproducible(hand_runs: tuple[Path, Path]) -> None:
    a, b = hand_runs
    one = _json(str(a), str(b), "--seed", "5")
    two = _json(str(a), str(b), "--seed", "5")
    assert one == two and one["seed"] == 5


def _assert_one_line_error(res, *fragments: str) -> None:  # noqa: ANN001
    assert res.exit_code == 2, (res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    for frag in fragments:
        assert frag in lines[0]
    assert "Traceback" not in res.stderr + res.stdout


def test_errors_exit_2_with_one_line(tmp_path: Path, hand_runs: tuple[Path, Path]) -> None:
    a, _ = hand_runs
    other = write_run(tmp_path, "other", [TaskSpec("telecom", "9", [True])])
    _assert_one_line_error(_invoke("compare", str(a), str(other)), "no task in common")
    _assert_one_line_error(_invoke("compare", str(a), str(tmp_path / "missing")), "run directory not found")
    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / "manifest.json").write_text("{not json")
    _assert_one_line_error(_invoke("compare", str(a), str(corrupt)), "corrupt manifest")
    # Common tasks, but every trial of the candidate failed on infrastructure: no common k.
    broken = write_run(tmp_path, "broken", [TaskSpec("airline", "0", ["error", "error"])])
    _assert_one_line_error(_invoke("compare", str(a), str(broken)), "share no k")
    _assert_one_line_error(_invoke("compare", str(a), str(a), "--primary-k", "7"), "primary k 7", "1..4")
    _assert_one_line_error(_invoke("compare", str(a)), "at least two runs")


def test_library_call_matches_cli(hand_runs: tuple[Path, Path]) -> None:
    a, b = hand_runs
    report = compare_runs([load_run(a), load_run(b)], n_resamples=2000, seed=0)
    cli = _json(str(a), str(b))
    assert cli["comparisons"][0]["results"] == [r.model_dump(mode="json") for r in report.comparisons[0].results]


def test_check_and_compare_give_the_same_statistics_for_a_metric(tmp_path: Path) -> None:
    # `check` compares one metric at one k, `compare` every k at once with shared draws: the
    # draws depend only on the seed and the tasks, so both print the same CI and p. 40 tasks
    # with 20+ non-zero differences put the permutation test on its Monte Carlo path.
    from tauguard.analysis.compare import align, compare_metric
    from tauguard.analysis.metrics import MetricSpec
    from tauguard.analysis.task_table import task_outcomes

    domains = {"airline": 15, "retail": 25}
    a = write_run(tmp_path, "a", random_tasks(domains, trials=3, p_pass=0.4, seed=1))
    b = write_run(tmp_path, "b", random_tasks(domains, trials=3, p_pass=0.7, seed=2))
    runs = [load_run(a, conversations=False), load_run(b, conversations=False)]
    report = compare_runs(runs, n_resamples=2000, seed=3).comparisons[0]
    pairs = align(task_outcomes(runs[0].records), task_outcomes(runs[1].records)).pairs
    assert not report.results[0].permutation_exact
    for r in report.results:
        alone = compare_metric(pairs, MetricSpec(kind="pass^", k=r.k), n_resamples=2000, seed=3, primary=r.primary)
        assert (alone.ci_low, alone.ci_high, alone.p_permutation) == (r.ci_low, r.ci_high, r.p_permutation)
        assert (alone.delta, alone.improved, alone.regressed) == (r.delta, r.improved, r.regressed)


def test_subset_and_domain_filters(hand_runs: tuple[Path, Path]) -> None:
    a, b = hand_runs
    pv = _json(str(a), str(b), "--subset", "policy_violation")["comparisons"][0]
    assert pv["common_tasks"] == 1 and pv["subset"] == "policy_violation"
    airline = _json(str(a), str(b), "--domain", "airline")["comparisons"][0]
    assert airline["common_tasks"] == 2 and airline["domains"] == ["airline"]
    assert airline["results"][0]["tasks"] == 2


def test_compare_check_show_report_import_neither_tau2_nor_litellm(hand_runs: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = hand_runs
    floors = tmp_path / "floors.toml"
    floors.write_text('[[floor]]\nmetric = "pass^1"\nmin = 0.1\n')
    script = textwrap.dedent(
        f"""
        import sys
        from typer.testing import CliRunner
        from tauguard.cli.main import app
        runner = CliRunner()
        for args in (
            ["compare", {str(a)!r}, {str(b)!r}, "--resamples", "200"],
            ["check", {str(b)!r}, "--baseline", {str(a)!r}, "--resamples", "200", "--floors", {str(floors)!r}, "--allow-unpaired"],
            ["show", {str(a)!r}],
            ["power", {str(a)!r}, "--delta", "-0.1", "--simulations", "200"],
            ["report", {str(a)!r}, {str(b)!r}, "-o", {str(tmp_path / "report.html")!r}, "--resamples", "200"],
        ):
            res = runner.invoke(app, args)
            if args[0] != "show" or res.exit_code != 2:  # show may not be registered yet
                assert res.exit_code in (0, 1), (args, res.exit_code, res.output)
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("tau2", "litellm", "ray", "dask", "distributed"))
        print("LOADED:" + ",".join(loaded))
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "LOADED:"


def test_verdict_needs_the_ci_and_the_permutation_test_to_agree():
    from tauguard.analysis.compare import verdict_from

    # 5 improved, 0 regressed of 114: the bootstrap CI excludes 0, the exact sign-flip p is 2/32
    assert verdict_from(0.009, 0.088, 0.0625, 0.05) == "no detectable difference"
    assert verdict_from(0.009, 0.088, 0.01, 0.05) == "better"
    assert verdict_from(-0.2, -0.01, 0.001, 0.05) == "worse"
    assert verdict_from(-0.01, 0.2, 0.001, 0.05) == "no detectable difference"


def test_compare_shows_the_exact_flip_table_of_deterministic_runs(tmp_path: Path) -> None:
    from tauguard.testing.synthetic_runs import TaskSpec, write_run

    base = write_run(tmp_path, "b", [TaskSpec("retail", str(i), [True, i != 3]) for i in range(8)])
    cand = write_run(tmp_path, "c", [TaskSpec("retail", str(i), [i != 5, True]) for i in range(8)], strategy="guard")
    res = runner.invoke(app, ["compare", str(base), str(cand), "--resamples", "200"])
    assert res.exit_code == 0, res.output
    assert (
        "exact comparison of 16 (task, trial) outcomes 'trial passed (reward 1)': 1 improved, 1 regressed, "
        "14 unchanged, because both are deterministic sim runs" in res.stdout
    )
    assert "\nregressed  retail    5       0 " in res.stdout and "\nimproved   retail    3       1 " in res.stdout
    data = json.loads(runner.invoke(app, ["compare", str(base), str(cand), "--resamples", "200", "--format", "json"]).stdout)
    flips = data["comparisons"][0]["flips"]
    assert [(f["task_id"], f["trial"], f["change"]) for f in flips["flips"]] == [("3", 1, "improved"), ("5", 0, "regressed")]
    real = write_run(tmp_path, "r", [TaskSpec("retail", str(i), [True, True]) for i in range(8)], simulated=False)
    other = runner.invoke(app, ["compare", str(base), str(real), "--resamples", "200"])
    assert "exact comparison: not available, because run r's agent model is openai/gpt-4.1, not the deterministic sim" in other.stdout
