"""`tauguard check`: non-inferiority / regression gates, floors, JUnit, JSON, step summary, exits."""

from __future__ import annotations

import json
import random
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from tauguard.testing.synthetic_runs import TaskSpec, random_tasks, write_run
from typer.testing import CliRunner

from tauguard.cli.main import app
from tauguard.analysis.gate import FloorsConfig, GateInputError, load_floors

runner = CliRunner()
FEW = ["--resamples", "2000"]
REPO = Path(__file__).resolve().parents[1]


def _check(*args: str, env: dict[str, str] | None = None, exact: bool = False):  # noqa: ANN202 - click's Result
    """`check` with few resamples; on intervals (``--statistical``) unless ``exact``: the synthetic
    runs are sim runs that differ only in the strategy, which `check` would otherwise gate exactly."""
    return runner.invoke(app, ["check", *args, *FEW, *([] if exact else ["--statistical"])], env=env)


def _assert_one_line_error(res, *fragments: str) -> None:  # noqa: ANN001
    assert res.exit_code == 2, (res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    for frag in fragments:
        assert frag in lines[0]


def steady_tasks(domains: dict[str, int], trials: int, share: float, seed: int) -> list[TaskSpec]:
    """Tasks whose trials all pass (with probability ``share``) or all fail: per-task rates 0 or 1,
    so an unchanged strategy gives Δ = 0 on every task and a design of >= 54 tasks can pass it at 0.05."""
    rng = random.Random(seed)
    out = []
    for dom, count in domains.items():
        for i in range(count):
            passed = rng.random() < share
            out.append(TaskSpec(dom, str(i), [passed] * trials, policy_violation=i % 4 == 0))
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Baseline of 60 steady tasks over 3 domains, an identical candidate and a much worse one.

    60 tasks: with every difference 0 the adjusted CI is ±2.77 / (tasks + 2), inside the 0.05
    margin from 54 tasks on (50 identical tasks cannot show non-inferiority at 0.05), and the
    design check passes: the baseline's per-task rates are 0 or 1.

    Module-scoped: the record writer fsyncs every line, and the tests only read these runs.
    """
    tmp_path = tmp_path_factory.mktemp("check_runs")
    doms = {"airline": 20, "retail": 20, "telecom": 20}
    return {
        "base": write_run(tmp_path, "base", steady_tasks(doms, 4, 0.7, seed=1)),
        "same": write_run(tmp_path, "same", steady_tasks(doms, 4, 0.7, seed=1), strategy="guard"),
        "bad": write_run(tmp_path, "bad", random_tasks(doms, 4, 0.2, seed=2), strategy="guard"),
        "noisy": write_run(tmp_path, "noisy", random_tasks(doms, 4, 0.7, seed=1)),
        "noisy2": write_run(tmp_path, "noisy2", random_tasks(doms, 4, 0.7, seed=1), strategy="guard"),
    }


def test_identical_run_passes_non_inferiority(runs: dict[str, Path]) -> None:
    res = _check(str(runs["same"]), "--baseline", str(runs["base"]))
    assert res.exit_code == 0, res.stdout
    assert "PASS  non-inferiority pass^4" in res.stdout and "result: PASSED" in res.stdout
    assert res.stdout.startswith("SIMULATION")


def test_much_worse_run_fails_both_modes(runs: dict[str, Path]) -> None:
    res = _check(str(runs["bad"]), "--baseline", str(runs["base"]), "--metric", "pass^1")
    assert res.exit_code == 1
    assert "FAIL  non-inferiority pass^1" in res.stdout
    assert _check(str(runs["bad"]), "--baseline", str(runs["base"]), "--mode", "regression").exit_code == 1


def test_a_design_that_cannot_pass_an_unchanged_strategy_exits_2_naming_one_that_can(tmp_path: Path) -> None:
    # 6 tasks, candidate slightly worse: the CI spans 0 widely. Non-inferiority at 0.05 could not
    # pass even an unchanged strategy (its CI is at least ±0.35 wide): exit 2 with the design that
    # could, never exit 1; regression cannot show "worse" (passes).
    base = write_run(tmp_path, "b", [TaskSpec("retail", str(i), [i % 2 == 0, True]) for i in range(6)])
    cand = write_run(tmp_path, "c", [TaskSpec("retail", str(i), [i % 3 == 0, True]) for i in range(6)])
    ni = _check(str(cand), "--baseline", str(base), "--metric", "pass^1", "--format", "json")
    _assert_one_line_error(ni, "cannot pass an unchanged strategy", "at 6 tasks × 2 trials", "trials would", "passes it at margin ≥ 0.502")
    assert ni.stdout == ""
    reg = _check(str(cand), "--baseline", str(base), "--metric", "pass^1", "--mode", "regression")
    assert reg.exit_code == 0, reg.stdout


def test_noisy_identical_rates_at_60_tasks_cannot_pass_pass4(runs: dict[str, Path]) -> None:
    # Per-trial rate 0.7, pass^4, 60 tasks: an unchanged strategy passes a 0.05 margin rarely
    # (the measurement: at most a few percent), so the design is refused, with advice.
    res = _check(str(runs["noisy2"]), "--baseline", str(runs["noisy"]))
    _assert_one_line_error(res, "at 60 tasks × 4 trials", "probability 0.", "passes it at margin ≥")


def test_margin_moves_the_threshold(tmp_path: Path) -> None:
    base = write_run(tmp_path, "b", [TaskSpec("retail", str(i), [True, True]) for i in range(80)])
    # 8 of 80 tasks lose one trial: Δpass^1 = -0.05, CI low around -0.095.
    cand = write_run(tmp_path, "c", [TaskSpec("retail", str(i), [i >= 8, True]) for i in range(80)], strategy="guard")
    strict = _check(str(cand), "--baseline", str(base), "--metric", "pass^1", "--margin", "0.05")
    loose = _check(str(cand), "--baseline", str(base), "--metric", "pass^1", "--margin", "0.2")
    assert (strict.exit_code, loose.exit_code) == (1, 0), strict.stdout + strict.stderr
    # 30 tasks cannot pass an unchanged strategy at 0.05 (the CI of 30 ties is ±0.087): exit 2, not 1.
    small = write_run(tmp_path, "s", [TaskSpec("retail", str(i), [True, True]) for i in range(30)])
    assert _check(str(small), "--baseline", str(small), "--metric", "pass^1").exit_code == 2


@pytest.mark.parametrize("bad", ["pass^x", "pass^9", "asr@1", "accuracy"])
def test_bad_metric_is_a_one_line_usage_error(runs: dict[str, Path], bad: str) -> None:
    res = _check(str(runs["same"]), "--baseline", str(runs["base"]), "--metric", bad)
    _assert_one_line_error(res, repr(bad), "allowed: pass^1..pass^4, pass@1..pass@4")


def test_usage_errors(runs: dict[str, Path], tmp_path: Path) -> None:
    _assert_one_line_error(_check(str(runs["same"])), "nothing to check")
    _assert_one_line_error(_check(str(runs["same"]), "--baseline", str(tmp_path / "nope")), "not found")
    floors = tmp_path / "f.toml"
    floors.write_text('[[floor]]\nmetric = "pass^1"\nmin = 0.5\n')
    _assert_one_line_error(_check(str(runs["same"]), "--floors", str(floors), "--metric", "pass^1"), "--baseline")
    other = write_run(tmp_path, "other", [TaskSpec("zzz", "0", [True])])
    _assert_one_line_error(_check(str(other), "--baseline", str(runs["base"])), "no task in common")


def _floors(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "floors.toml"
    path.write_text(text)
    return path


def test_floors_without_baseline_per_domain(tmp_path: Path) -> None:
    run = write_run(
        tmp_path,
        "r",
        [
            TaskSpec("airline", "0", [True, True]),
            TaskSpec("retail", "0", [True, False]),
            TaskSpec("retail", "1", [False, False], guard_errors=[True, False]),
        ],
    )
    floors = _floors(
        tmp_path,
        '[[floor]]\nmetric = "pass^1"\nmin = 0.8\nper_domain = true\n\n'
        '[[floor]]\nmetric = "guard_error_rate"\nmax = 0.0\n\n'
        '[[floor]]\nmetric = "pass^1"\nmin = 0.5\n',
    )
    res = _check(str(run), "--floors", str(floors), "--format", "json")
    assert res.exit_code == 1
    data = json.loads(res.stdout)
    assert data["baseline"] is None and data["passed"] is False and data["simulated"] is True
    results = {c["slice"] + " " + c["metric"]: (c["passed"], c["observed"]) for c in data["checks"]}
    assert results == {
        "airline/all pass^1": (True, 1.0),
        "retail/all pass^1": (False, 0.25),
        "all domains/all guard_error_rate": (False, pytest.approx(1 / 6)),
        "all domains/all pass^1": (True, pytest.approx(0.5)),  # (1 + .5 + 0) / 3 = 0.5 meets 0.5
    }


def test_floor_on_a_domain_absent_from_the_run_fails_unless_allowed(tmp_path: Path) -> None:
    run = write_run(tmp_path, "r", [TaskSpec("retail", "0", [True])])
    strict = _floors(tmp_path, '[[floor]]\nmetric = "pass^1"\nmin = 0.5\ndomain = "airline"\n')
    assert _check(str(run), "--floors", str(strict)).exit_code == 1
    lenient = _floors(tmp_path, '[[floor]]\nmetric = "pass^1"\nmin = 0.5\ndomain = "airline"\nallow_missing = true\n')
    assert _check(str(run), "--floors", str(lenient)).exit_code == 0
    # A single-domain run's overall slice is its domain slice.
    own = _floors(tmp_path, '[[floor]]\nmetric = "pass^1"\nmin = 1.0\ndomain = "retail"\n')
    assert _check(str(run), "--floors", str(own)).exit_code == 0


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('[[floor]]\nmetric = "pass^1"\nmin = 0.5\nmax = 0.9\n', "exactly one of min or max"),
        ('[[floor]]\nmetric = "pass^x"\nmin = 0.5\n', "unknown metric 'pass^x'"),
        ('[[floor]]\nmetric = "pass^1"\nminimum = 0.5\n', "minimum"),
        ('[[floor]\nmetric = "pass^1"\n', "invalid TOML"),
        ("schema_version = 1\n", "defines no [[floor]]"),
        ('schema_version = 2\n[[floor]]\nmetric = "pass^1"\nmin = 0.5\n', "schema_version"),
    ],
)
def test_invalid_floors_file_is_a_one_line_error(
    runs: dict[str, Path], tmp_path: Path, text: str, fragment: str
) -> None:
    res = _check(str(runs["same"]), "--floors", str(_floors(tmp_path, text)))
    _assert_one_line_error(res, fragment)


def test_shipped_example_floors_validate() -> None:
    config = load_floors(REPO / "configs" / "ci.toml")
    assert isinstance(config, FloorsConfig)
    metrics = {f.metric for f in config.floors}
    assert {"pass^1", "guard_error_rate"} <= metrics
    assert any(f.per_domain for f in config.floors)
    with pytest.raises(GateInputError):
        load_floors(REPO / "configs" / "does-not-exist.toml")


def test_junit_json_and_github_summary(runs: dict[str, Path], tmp_path: Path) -> None:
    floors = _floors(tmp_path, '[[floor]]\nmetric = "pass^1"\nmin = 0.99\nper_domain = true\n')
    junit = tmp_path / "out" / "junit.xml"
    summary = tmp_path / "summary.md"
    summary.write_text("previous step\n")
    res = _check(
        str(runs["same"]),
        "--baseline",
        str(runs["base"]),
        "--floors",
        str(floors),
        "--junit",
        str(junit),
        "--github-summary",
        "--format",
        "json",
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert res.exit_code == 1  # the 0.99 floors fail, the non-inferiority check passes
    data = json.loads(res.stdout)  # stdout is JSON only
    assert [c["passed"] for c in data["checks"]] == [True, False, False, False]
    assert data["seed"] == 0 and data["comparison"]["metric"] == "pass^4"

    root = ET.parse(junit).getroot()
    assert root.tag == "testsuites" and root.get("tests") == "4" and root.get("failures") == "3"
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert len(cases) == 4
    assert [c.find("failure") is not None for c in cases] == [False, True, True, True]
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["simulated"] == "true"

    text = summary.read_text()
    assert text.startswith("previous step\n")
    assert "### tauguard check" in text and "SIMULATION" in text and "**FAIL**" in text


def test_github_summary_without_env_is_a_note(runs: dict[str, Path]) -> None:
    res = _check(
        str(runs["same"]), "--baseline", str(runs["base"]), "--github-summary", env={"GITHUB_STEP_SUMMARY": ""}
    )
    assert res.exit_code == 0
    assert "GITHUB_STEP_SUMMARY is not set" in res.stderr


def test_non_simulated_runs_have_no_simulation_note(tmp_path: Path) -> None:
    a = write_run(tmp_path, "a", steady_tasks({"retail": 60}, 2, 0.5, seed=1), simulated=False)
    res = _check(str(a), "--baseline", str(a), "--format", "json")
    data = json.loads(res.stdout)
    assert data["simulated"] is False and data["simulation_note"] is None
    assert "SIMULATION" not in _check(str(a), "--baseline", str(a)).stdout


# --------------------------------------------------------------------------- exact gate


def _flipped(tmp_path: Path, name: str, flips: dict[int, list[bool]]) -> Path:
    """The steady 60-task baseline with some tasks' trials replaced."""
    tasks = steady_tasks({"airline": 20, "retail": 20, "telecom": 20}, 4, 0.7, seed=1)
    for i, outcomes in flips.items():
        tasks[i] = TaskSpec(tasks[i].domain, tasks[i].task_id, outcomes, policy_violation=tasks[i].policy_violation)
    return write_run(tmp_path, name, tasks, strategy="guard")


def test_a_sim_run_against_itself_passes_exactly(runs: dict[str, Path]) -> None:
    res = _check(str(runs["base"]), "--baseline", str(runs["base"]), exact=True)
    assert res.exit_code == 0, res.stdout + res.stderr
    assert "gate: exact (outcome by outcome, no interval), because both are deterministic sim runs" in res.stdout
    assert "they do not differ at all" in res.stdout
    assert "240 (task, trial) outcomes 'trial passed (reward 1)': 0 improved, 0 regressed, 240 unchanged" in res.stdout


def test_exact_gate_lists_every_flip_and_fails_beyond_the_allowed_count(runs: dict[str, Path], tmp_path: Path) -> None:
    base_tasks = steady_tasks({"airline": 20, "retail": 20, "telecom": 20}, 4, 0.7, seed=1)
    up = next(i for i, t in enumerate(base_tasks) if not t.outcomes[0])
    down = next(i for i, t in enumerate(base_tasks) if t.outcomes[0])
    cand = _flipped(tmp_path, "cand", {up: [True, False, False, False], down: [True, True, False, False]})
    res = _check(str(cand), "--baseline", str(runs["base"]), "--format", "json", exact=True)
    assert res.exit_code == 1, res.stdout + res.stderr
    data = json.loads(res.stdout)
    assert data["gate"] == "exact" and "differ only in strategy react vs guard" in data["gate_reason"]
    flips = data["flips"]
    assert (flips["improved"], flips["regressed"], flips["unchanged"], flips["compared"]) == (1, 2, 237, 240)
    got = sorted((f["domain"], f["task_id"], f["trial"], f["change"]) for f in flips["flips"])
    want = sorted(
        [(base_tasks[up].domain, base_tasks[up].task_id, 0, "improved")]
        + [(base_tasks[down].domain, base_tasks[down].task_id, t, "regressed") for t in (2, 3)]
    )
    assert got == want
    check = data["checks"][0]
    assert check["kind"] == "exact" and check["observed"] == 2 and check["threshold"] == 0
    # The statistics are not what the exact gate decided on: none are reported as if they were.
    assert data["comparison"] is None and data["margin"] is None and data["mode"] is None
    text = _check(str(cand), "--baseline", str(runs["base"]), exact=True).stdout
    assert text.count("\nregressed ") == 2 and text.count("\nimproved ") == 1
    assert "2 regression(s) > 0 allowed (--max-regressions)" in text
    ok = _check(str(cand), "--baseline", str(runs["base"]), "--max-regressions", "2", exact=True)
    assert ok.exit_code == 0 and "2 regression(s) <= 2 allowed" in ok.stdout
    # --statistical gates the same pair on the interval, and says why.
    stat = _check(str(cand), "--baseline", str(runs["base"]), "--format", "json")
    assert json.loads(stat.stdout)["gate"] == "statistical" and "--statistical" in json.loads(stat.stdout)["gate_reason"]


def test_exact_gate_needs_sim_runs_that_differ_only_in_the_strategy(runs: dict[str, Path], tmp_path: Path) -> None:
    tasks = steady_tasks({"airline": 20, "retail": 20, "telecom": 20}, 4, 0.7, seed=1)
    real_a = write_run(tmp_path, "ra", tasks, simulated=False)
    real_b = write_run(tmp_path, "rb", tasks, simulated=False, strategy="guard")
    data = json.loads(_check(str(real_b), "--baseline", str(real_a), "--format", "json", exact=True).stdout)
    assert data["gate"] == "statistical" and "not the deterministic sim" in data["gate_reason"]
    assert data["comparison"]["metric"] == "pass^4"
    steps = write_run(tmp_path, "steps", tasks, strategy="guard", manifest={"max_steps": 7})
    data = json.loads(_check(str(steps), "--baseline", str(runs["base"]), "--format", "json", exact=True).stdout)
    assert data["gate"] == "statistical" and "differ in max steps" in data["gate_reason"]


def test_exact_gate_outputs_name_the_gate(runs: dict[str, Path], tmp_path: Path) -> None:
    junit = tmp_path / "j.xml"
    res = _check(str(runs["same"]), "--baseline", str(runs["base"]), "--junit", str(junit), "--format", "markdown", exact=True)
    assert res.exit_code == 0
    assert "- gate: exact (outcome by outcome, no interval)" in res.stdout
    props = {p.get("name"): p.get("value") for p in ET.parse(junit).getroot().iter("property")}
    assert props["gate"].startswith("exact: both are deterministic sim runs")


def test_every_output_names_the_statistic_it_computed(runs: dict[str, Path], tmp_path: Path) -> None:
    """Table, JSON, markdown, JUnit and the GitHub summary name the interval that produced the numbers."""
    from tauguard.analysis.compare import load_runs
    from tauguard.analysis.stats import adjusted_mean_ci
    from tauguard.analysis.task_table import run_task_outcomes

    base_run, cand_run = load_runs([runs["base"], runs["bad"]], conversations=False, records=False)
    a = {o.key: o for o in run_task_outcomes(base_run)}
    diffs = [o.value("pass^", 1) - a[o.key].value("pass^", 1) for o in run_task_outcomes(cand_run)]
    ci = adjusted_mean_ci(diffs)
    want = f"95% adjusted Wald CI (Bonett-Price) [{ci.low:+.3f}, {ci.high:+.3f}] over 60 tasks"
    summary, junit = tmp_path / "s.md", tmp_path / "j.xml"
    args = (str(runs["bad"]), "--baseline", str(runs["base"]), "--metric", "pass^1", "--junit", str(junit), "--github-summary")
    table = _check(*args, env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert table.exit_code == 1
    data = json.loads(_check(*args, "--format", "json").stdout)
    markdown = _check(*args, "--format", "markdown").stdout
    assert data["checks"][0]["ci_low"] == pytest.approx(ci.low) and data["checks"][0]["ci_high"] == pytest.approx(ci.high)
    assert data["gate"] == "statistical"
    for text in (table.stdout, markdown, summary.read_text(), junit.read_text(), data["checks"][0]["message"]):
        assert want in text and "bootstrap" not in text
    assert "gate: statistical (adjusted Wald interval of the mean per-task Δ)" in table.stdout
    reg = _check(*args[:5], "--mode", "regression").stdout
    assert "sign-flip permutation p" in reg


def test_exact_gate_on_a_metric_the_runs_do_not_have_is_a_one_line_error(runs: dict[str, Path]) -> None:
    res = _check(str(runs["same"]), "--baseline", str(runs["base"]), "--metric", "asr@1", exact=True)
    _assert_one_line_error(res, "'attack succeeded'", "asr@1 cannot be gated")
    res = _check(str(runs["same"]), "--baseline", str(runs["base"]), "--metric", "pass^9", exact=True)
    _assert_one_line_error(res, "invalid --metric 'pass^9'", "pass^1..pass^4")


def test_check_and_power_ask_the_same_design_question(runs: dict[str, Path]) -> None:
    """`check`'s exit-2 line and `power --margin` come from one function and print the same figures."""
    res = _check(str(runs["noisy2"]), "--baseline", str(runs["noisy"]))
    assert res.exit_code == 2
    plan = runner.invoke(app, ["power", str(runs["noisy"]), "--margin", "0.05", "--k", "4", "--format", "json"])
    assert plan.exit_code == 0, plan.output
    design = json.loads(plan.stdout)["gate_design"]
    assert design["tasks"] == 60 and design["trials"] == 4 and not design["pass_probability"] >= 0.8
    assert f"with probability {design['pass_probability']:.2f} (< 80%)" in res.stderr
    assert f"passes it at margin ≥ {design['smallest_margin']:.3f}" in res.stderr
    hint = res.stderr[res.stderr.index("(tauguard power ") + 1 : res.stderr.index("); not gated")]
    assert hint == f"tauguard power {runs['noisy']} --margin 0.05 --k 4"


def test_the_exact_gate_lists_regressions_on_gold_conflict_tasks_and_counts_them_only_when_asked(tmp_path: Path) -> None:
    # retail 18 is a documented gold conflict (tauguard/domains/gold_conflicts.toml): a guard that refuses
    # its policy-violating gold write loses it by being right. retail 5 is an ordinary task.
    base = write_run(tmp_path, "b", [TaskSpec("retail", t, [True, True]) for t in ("18", "5", "6")])
    right = write_run(tmp_path, "r", [TaskSpec("retail", "18", [False, False]), TaskSpec("retail", "5", [True, True]),
                                       TaskSpec("retail", "6", [True, True])], strategy="guard")
    wrong = write_run(tmp_path, "w", [TaskSpec("retail", "18", [True, True]), TaskSpec("retail", "5", [False, True]),
                                       TaskSpec("retail", "6", [True, True])], strategy="guard")
    res = _check(str(right), "--baseline", str(base), exact=True)
    assert res.exit_code == 0, res.stdout
    assert "2 on gold-conflict tasks not counted" in " ".join(res.stdout.split())
    assert _check(str(right), "--baseline", str(base), "--count-conflicts", exact=True).exit_code == 1
    res = _check(str(wrong), "--baseline", str(base), "--format", "json", exact=True)
    assert res.exit_code == 1, res.stdout
    assert "1 regression(s) > 0 allowed" in res.stdout
