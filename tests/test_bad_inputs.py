"""The bad-input battery of issue 11 (table: docs/bad_inputs.md).

Every case runs in-process through the console entry point (`tauguard.cli.main.main`, the
same code path as the `tauguard` command) and must give exactly one `error:` line on stderr,
exit code 2, no traceback, and write nothing.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tauguard.testing.synthetic_runs import TaskSpec, write_run

GOOD_PROBE = (
    '{"domain": "airline", "task_id": "0", "call": {"name": "cancel_reservation", '
    '"arguments": {"reservation_id": "X"}}, "label": "refuse"}'
)
BAD_TOOL_PROBE = GOOD_PROBE.replace("cancel_reservation", "launch_rocket")

# (id, arguments with {t} = the scratch folder, fragment of the error line)
CASES: list[tuple[str, list[str], str]] = [
    # run: flags and config values
    ("run-unknown-strategy", ["run", "--strategy", "nope"], "unknown strategy 'nope'"),
    ("run-unknown-domain", ["run", "--domain", "bank"], "unknown domain 'bank'; allowed: airline, retail, telecom"),
    ("run-empty-domain", ["run", "--domain", ""], "at least one domain is required"),
    ("run-domain-twice", ["run", "--domain", "airline,airline"], "a domain is listed twice"),
    ("run-k-zero", ["run", "-k", "0"], "-k/--trials must be at least 1"),
    ("run-k-not-int", ["run", "-k", "abc"], "Invalid value for '-k' / '--trials'"),
    ("run-workers-zero", ["run", "--workers", "0"], "invalid value for 'workers' (0)"),
    ("run-max-steps-zero", ["run", "--max-steps", "0"], "invalid value for 'max_steps' (0)"),
    ("run-num-tasks-zero", ["run", "--num-tasks", "0"], "invalid value for 'num_tasks' (0)"),
    ("run-seed-not-int", ["run", "--seed", "x"], "Invalid value for '--seed'"),
    ("run-bad-format", ["run", "--format", "xml"], "unknown --format 'xml'; allowed: table, json, markdown"),
    ("run-unknown-flag", ["run", "--stratgy", "react"], "No such option: --stratgy"),
    ("run-config-missing", ["run", "--config", "{t}/missing.toml"], "config file not found"),
    ("run-config-not-toml", ["run", "--config", "{t}/bad.toml"], "bad.toml: invalid TOML"),
    ("run-config-not-utf8", ["run", "--config", "{t}/latin1.toml"], "latin1.toml: invalid TOML"),
    ("run-config-unknown-key", ["run", "--config", "{t}/typo.toml"], "unknown config key 'stratgy'"),
    ("run-config-unknown-role", ["run", "--config", "{t}/agnet.toml"], "unknown role 'agnet'; allowed: agent, user, guard"),
    ("run-config-api-key", ["run", "--config", "{t}/apikey.toml"], "API keys come only from the environment"),
    ("run-llm-args-not-json", ["run", "--llm-args", "{bad"], "--llm-args is not valid JSON"),
    ("run-llm-args-not-object", ["run", "--llm-args", "[1]"], "--llm-args must be a JSON object, got list"),
    ("run-llm-args-api-key", ["run", "--llm-args", '{"agent": {"api_key": "sk-1"}}'], "API keys come only from the environment"),
    ("run-llm-args-header", ["run", "--llm-args", '{"user": {"extra_headers": {"Authorization": "Bearer x"}}}'], "sets 'extra_headers.Authorization'"),
    ("run-llm-args-role", ["run", "--llm-args", '{"agnet": {}}'], "unknown role 'agnet'"),
    ("run-llm-args-not-table", ["run", "--llm-args", '{"agent": 5}'], "llm_args['agent'] must be a table/object"),
    ("run-name-dotdot", ["run", "--name", "../../x"], "a run name is one folder name"),
    ("run-name-slash", ["run", "--name", "a/b"], "a run name is one folder name"),
    ("run-name-hidden", ["run", "--name", ".hidden"], "a run name is one folder name"),
    ("run-name-300", ["run", "--name", "n" * 300], "at most 128 characters, got 300"),
    ("run-out-is-file", ["run", "--out", "{t}/afile"], "is a file, not a folder"),
    ("run-out-under-file", ["run", "--out", "{t}/afile/sub"], "is a file, not a folder"),
    ("run-name-exists", ["run", "--out", "{t}", "--name", "good"], "already exists; pick another --name"),
    ("run-option-syntax", ["run", "--strategy-option", "novalue"], "--strategy-option expects KEY=VALUE"),
    ("run-address-no-cluster", ["run", "--address", "tcp://head:8786"], "--address names a Ray or Dask cluster"),
    ("run-address-credentials", ["run", "--backend", "dask", "--address", "tcp://me:pw@head:8786"], "must not contain credentials"),
    ("run-backend", ["run", "--backend", "spark"], "unknown --backend 'spark'; allowed:"),
    ("run-faults-unknown", ["run", "--faults", "nosuch"], "unknown fault profile 'nosuch'"),
    ("run-faults-missing", ["run", "--faults", "{t}/missing.toml"], "fault profile file not found"),
    ("run-faults-rate-7", ["run", "--faults", "{t}/rate7.toml"], "must be within [0, 1], got 7.0"),
    ("run-option-value", ["run", "--strategy", "action-guard", "--strategy-option", "backend=bogus"], "invalid value 'bogus' for option 'backend'"),
    ("run-option-bool", ["run", "--strategy", "ledger", "--strategy-option", "render=maybe"], "for option 'render' of strategy 'ledger'"),
    ("run-option-unknown", ["run", "--strategy", "ledger", "--strategy-option", "rendr=false"], "strategy 'ledger' has no option 'rendr'"),
    ("run-block-tool", ["run", "--strategy", "block-tool", "--strategy-option", "tool=nosuchtool"], "is not a WRITE tool of airline"),
    ("run-split", ["run", "--split", "holdout"], "unknown split 'holdout'"),
    ("run-task-id", ["run", "--task-ids", "9999"], "unknown task id(s) 9999"),
    ("run-task-ids-two-domains", ["run", "--domain", "airline,retail", "--task-ids", "1"], "--task-ids needs a single --domain"),
    ("run-agent-provider", ["run", "--agent-llm", "nosuchprovider/xyz"], "unknown provider in the agent model 'nosuchprovider/xyz'"),
    ("run-user-provider", ["run", "--user-llm", "nosuchprovider/xyz"], "unknown provider in the user model"),
    ("run-guard-provider", ["run", "--guard-llm", "nosuchprovider/xyz"], "unknown provider in the guard model"),
    ("run-no-credentials", ["run", "--agent-llm", "gpt-4.1"], "set OPENAI_API_KEY in the environment"),
    # run --resume
    ("resume-missing", ["run", "--resume", "{t}/nope"], "run directory not found"),
    ("resume-not-a-run", ["run", "--resume", "{t}/emptydir"], "not a tauguard run (no manifest.json)"),
    ("resume-corrupt", ["run", "--resume", "{t}/corrupt"], "corrupt manifest"),
    ("resume-with-flag", ["run", "--resume", "{t}/good", "--strategy", "ledger"], "drop --strategy"),
    ("resume-with-config", ["run", "--resume", "{t}/good", "--config", "{t}/typo.toml"], "drop --config"),
    ("resume-workers-zero", ["run", "--resume", "{t}/good", "--workers", "0"], "--workers must be in [1, 1024], got 0"),
    # show
    ("show-missing", ["show", "{t}/nope"], "run directory not found"),
    ("show-corrupt", ["show", "{t}/corrupt"], "corrupt manifest"),
    ("show-unreadable-records", ["show", "{t}/unreadable"], "cannot read"),
    ("show-format", ["show", "{t}/good", "--format", "xml"], "'xml' is not one of"),
    # compare
    ("compare-one-run", ["compare", "{t}/good"], "compare needs at least two runs"),
    ("compare-missing", ["compare", "{t}/good", "{t}/nope"], "run directory not found"),
    ("compare-format", ["compare", "{t}/good", "{t}/good2", "--format", "xml"], "'xml' is not one of"),
    ("compare-primary-k", ["compare", "{t}/good", "{t}/good2", "--primary-k", "0"], "--primary-k"),
    ("compare-unreadable", ["compare", "{t}/good", "{t}/unreadable"], "cannot read"),
    # check
    ("check-nothing", ["check", "{t}/good"], "nothing to check"),
    ("check-floors-not-utf8", ["check", "{t}/good", "--floors", "{t}/latin1.toml"], "invalid TOML"),
    ("check-floors-missing", ["check", "{t}/good", "--floors", "{t}/missing.toml"], "floors file not found"),
    ("check-junit-under-file", ["check", "{t}/good", "--baseline", "{t}/good2", "--junit", "{t}/afile/x.xml"], "is a file, not a folder"),
    ("check-metric-alone", ["check", "{t}/good", "--floors", "{t}/floors.toml", "--metric", "pass^1"], "--metric applies to the baseline"),
    ("check-margin", ["check", "{t}/good", "--baseline", "{t}/good2", "--margin", "-1"], "--margin"),
    # probes
    ("probes-eval-strategy", ["probes", "eval", "--strategy", "nope", "--probes", "{t}/good.jsonl"], "unknown strategy 'nope'"),
    ("probes-eval-option", ["probes", "eval", "--strategy", "action-guard", "--strategy-option", "backend=bogus", "--probes", "{t}/good.jsonl"], "'bogus'"),
    ("probes-eval-not-utf8", ["probes", "eval", "--strategy", "react", "--probes", "{t}/latin1.jsonl"], "is not UTF-8"),
    ("probes-eval-missing", ["probes", "eval", "--strategy", "react", "--probes", "{t}/missing.jsonl"], "cannot read probe file"),
    ("probes-eval-tool", ["probes", "eval", "--strategy", "react", "--probes", "{t}/badtool.jsonl"], "airline has no agent tool 'launch_rocket'"),
    ("probes-build-domain", ["probes", "build", "--domain", "bank", "-o", "{t}/p.jsonl"], "unknown domain 'bank'"),
    ("probes-build-split", ["probes", "build", "--domain", "airline", "--split", "nope", "-o", "{t}/p.jsonl"], "unknown split 'nope'"),
    ("probes-build-under-file", ["probes", "build", "--domain", "airline", "-o", "{t}/afile/p.jsonl"], "is a file, not a folder"),
    # faults, strategies, the command itself
    ("faults-domain", ["faults", "--domain", "bank"], "unknown domain 'bank'"),
    ("strategies-format", ["strategies", "--format", "xml"], "'xml' is not one of"),
    ("unknown-command", ["nosuchcommand"], "No such command 'nosuchcommand'"),
]


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")}


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    t = tmp_path_factory.mktemp("bad")
    tasks = [TaskSpec("airline", "0", [True, False]), TaskSpec("airline", "1", [True, True])]
    write_run(t, "good", tasks)
    write_run(t, "good2", tasks)
    write_run(t, "unreadable", tasks)
    (t / "unreadable" / "simulations.jsonl").unlink()
    (t / "unreadable" / "simulations.jsonl").mkdir()  # cannot be read as a file (even by root)
    (t / "corrupt").mkdir()
    (t / "corrupt" / "manifest.json").write_text("{not json")
    (t / "emptydir").mkdir()
    (t / "afile").write_text("a regular file\n")
    (t / "bad.toml").write_text("this is = = not toml")
    (t / "latin1.toml").write_bytes('name = "caf\u00e9"\n'.encode("latin-1"))
    (t / "latin1.jsonl").write_bytes('{"domain": "caf\u00e9"}\n'.encode("latin-1"))
    (t / "typo.toml").write_text('stratgy = "react"\n')
    (t / "agnet.toml").write_text("[llm_args.agnet]\ntemperature = 0\n")
    (t / "apikey.toml").write_text('[llm_args.agent]\napi_key = "sk-in-a-file"\n')
    (t / "rate7.toml").write_text('name = "seven"\n[rates]\nskip_read = 7.0\n')
    (t / "floors.toml").write_text('schema_version = 1\n[[floor]]\nmetric = "pass^1"\nmin = 0.1\n')
    (t / "good.jsonl").write_text(GOOD_PROBE + "\n")
    (t / "badtool.jsonl").write_text(BAD_TOOL_PROBE + "\n")
    return t


def test_the_battery_has_at_least_60_inputs_and_the_docs_list_them():
    assert len(CASES) >= 60 and len({c[0] for c in CASES}) == len(CASES)
    table = (Path(__file__).resolve().parent.parent / "docs" / "bad_inputs.md").read_text(encoding="utf-8")
    assert [c[0] for c in CASES if f"`{c[0]}`" not in table] == []


@pytest.mark.parametrize("args, fragment", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_one_error_line_exit_2_nothing_written(
    args: list[str], fragment: str, scratch: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
):
    from tauguard.cli.main import main

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(scratch)  # a default --out (runs/) would land here
    argv = [a.replace("{t}", str(scratch)) for a in args]
    monkeypatch.setattr(sys, "argv", ["tauguard", *argv])
    before = _snapshot(scratch)
    with pytest.raises(SystemExit) as exit_:
        main()
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert exit_.value.code == 2, err
    assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], err
    assert "Traceback" not in out + err
    assert _snapshot(scratch) == before  # nothing written


def test_compare_a_run_with_itself_says_so(scratch: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    from tauguard.cli.main import main

    monkeypatch.setattr(sys, "argv", ["tauguard", "compare", str(scratch / "good"), str(scratch / "good")])
    with pytest.raises(SystemExit) as exit_:
        main()
    assert exit_.value.code == 0
    assert "is the same run as" in capsys.readouterr().err


def test_show_a_run_without_evaluated_trials(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    from tauguard.cli.main import main

    write_run(tmp_path, "errors", [TaskSpec("airline", "0", ["error"])])
    monkeypatch.setattr(sys, "argv", ["tauguard", "show", str(tmp_path / "errors")])
    with pytest.raises(SystemExit):
        main()
    out = capsys.readouterr().out
    assert "no evaluated trial yet" in out and "1..0" not in out


assert os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP") == "True"  # conftest keeps litellm offline
