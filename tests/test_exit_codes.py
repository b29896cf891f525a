"""Exit code 3: a run that ended without a measured outcome for every unit (infrastructure
errors, a --max-cost stop, a lost worker, units lost on a cluster, Ctrl-C or SIGTERM) says why
in one `error:` line with the exact resume command (issue 26).

Every path that can end a run `interrupted` is driven here through the CLI: the budget stop
and lost units used to end `interrupted` with exit 0 and no error line (run_batch returns
normally for them; the CLI printed the summary and exited 0 whatever the status).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tauguard.cli.common import EXIT_INCOMPLETE
from tauguard.cli.main import app
from tauguard.execution import lifecycle, simulate
from tauguard.execution.batch import Progress
from tauguard.runs.records import Manifest
from tauguard.testing.llm_server import ScriptedLLMServer

KEY = {"OPENAI_API_KEY": "sk-test-not-a-real-key"}


def _error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("error:")]


def _llm_run(server: ScriptedLLMServer, out: Path, name: str, *extra: str) -> list[str]:
    args = json.dumps({"agent": {"api_base": server.api_base}, "user": {"api_base": server.api_base}})
    return [
        "run", "--domain", "airline", "--workers", "1", "--agent-llm", "openai/gpt-4o-mini", "--user-llm",
        "openai/gpt-4o-mini", "--llm-args", args, "--out", str(out), "--name", name, "--plain", *extra,
    ]


def test_infrastructure_errors_exit_3_with_the_first_error_and_the_resume_command(tmp_path: Path, monkeypatch):
    for key, value in KEY.items():
        monkeypatch.setenv(key, value)
    with ScriptedLLMServer([{"status": 400, "content": "model not served here"}]) as server:
        res = CliRunner().invoke(app, _llm_run(server, tmp_path, "errs", "--task-ids", "0,1", "-k", "1"))
    assert res.exit_code == EXIT_INCOMPLETE, res.output
    errors = _error_lines(res.output)
    assert len(errors) == 1
    assert errors[0].startswith("error: run incomplete: 2 of 2 units ended in an infrastructure error")
    assert "model not served here" in errors[0]
    assert errors[0].endswith(f"resume with: tauguard run --resume {tmp_path / 'errs'}")
    # exit 3 as incomplete: the manifest says so too (issue 38), with the same reason
    manifest = json.loads((tmp_path / "errs" / "manifest.json").read_text())
    assert manifest["status"] == "incomplete" and manifest["stop_reason"].startswith("2 of 2 units ended in an infrastructure error")


def test_a_budget_stop_exits_3_and_names_a_higher_cap(tmp_path: Path, monkeypatch):
    for key, value in KEY.items():
        monkeypatch.setenv(key, value)
    from test_execution_concurrency import _responder

    def priced(body: dict) -> dict:
        return {k: v for k, v in _responder(body).items() if k != "delay_s"} | {"usage": {"prompt_tokens": 1000, "completion_tokens": 100}}

    with ScriptedLLMServer(priced) as server:
        res = CliRunner().invoke(app, _llm_run(server, tmp_path, "budget", "--task-ids", "0", "-k", "3", "--max-cost", "0.000001", "-c", "1"))
        assert res.exit_code == EXIT_INCOMPLETE, res.output
        errors = _error_lines(res.output)
        assert len(errors) == 1 and errors[0].startswith("error: run incomplete: max cost $0.00 reached")
        command = errors[0].split("resume with: ", 1)[1]
        assert command.startswith(f"tauguard run --resume {tmp_path / 'budget'} --max-cost ")
        # the printed command is exact: running it finishes the run
        again = CliRunner().invoke(app, command.split()[1:])
    assert again.exit_code == 0, again.output
    assert json.loads((tmp_path / "budget" / "manifest.json").read_text())["status"] == "completed"


def test_a_lost_worker_exits_3_with_one_error_line(tmp_path: Path, monkeypatch):
    real = simulate.run_unit
    parent = os.getpid()

    def dies_on_task_3(spec):  # forked workers inherit this patch
        if spec.task_id == "3" and os.getpid() != parent:
            os._exit(7)
        return real(spec)

    monkeypatch.setattr(simulate, "run_unit", dies_on_task_3)
    res = CliRunner().invoke(app, [
        "run", "--domain", "airline", "--num-tasks", "6", "--workers", "2", "--backend", "fork",
        "--out", str(tmp_path), "--name", "lost", "--plain",
    ])
    assert res.exit_code == EXIT_INCOMPLETE, res.output
    errors = _error_lines(res.output)
    assert len(errors) == 1 and "worker process died" in errors[0]
    assert errors[0].endswith(f"resume with: tauguard run --resume {tmp_path / 'lost'}")


def _manifest(status: str, stop_reason: str | None = None, **config) -> Manifest:
    return Manifest(
        run_id="r", created_at="x", updated_at="x", strategy="react", domains=["airline"], split="base",
        task_ids={"airline": ["0", "1"]}, trials=2, agent_llm="sim", user_llm="sim", seed=1, max_steps=10, simulated=True,
        status=status, stop_reason=stop_reason, config=config,
    )


@pytest.mark.parametrize(
    ("status", "stop_reason", "errors", "reason"),
    [
        ("completed", None, 0, None),
        ("completed", None, 1, "1 of 4 units ended in an infrastructure error"),
        ("incomplete", "1 of 4 units ended in an infrastructure error, not a task outcome; resume to re-run them", 0,
         "1 of 4 units ended in an infrastructure error, not a task outcome"),
        ("interrupted", "2 units not recorded (lost with their worker); resume to run them", 0, "2 units not recorded"),
        ("interrupted", "interrupted by SIGTERM at 1 of 4 units", 0, "interrupted by SIGTERM at 1 of 4 units"),
        ("interrupted", None, 0, "the run stopped (interrupted)"),
    ],
)
def test_every_ending_that_is_not_complete_has_a_reason(tmp_path: Path, status, stop_reason, errors, reason):
    progress = Progress(total=4, done=4, errors=errors, first_error="ProviderUnavailable: x" if errors else None)
    found = lifecycle.incomplete(tmp_path, _manifest(status, stop_reason), progress)
    if reason is None:
        assert found is None
    else:
        assert found is not None and found.reason.startswith(reason)
        assert found.resume == f"tauguard run --resume {tmp_path}"


@pytest.mark.parametrize("manifest_too", [False, True])
def test_a_full_disk_mid_run_is_one_error_line_and_exit_3(tmp_path: Path, monkeypatch, manifest_too: bool):
    import errno

    from tauguard.execution import batch
    from tauguard.runs.store import RecordWriter

    real_write = RecordWriter.write
    written: list[int] = []

    def fills_up(self, record):
        if len(written) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        written.append(1)
        real_write(self, record)

    monkeypatch.setattr(RecordWriter, "write", fills_up)
    if manifest_too:  # the disk stays full: the final manifest cannot be written either
        real_manifest = batch.write_manifest

        def manifest_fails_once_full(run_dir, manifest):
            if len(written) == 2:
                raise OSError(errno.ENOSPC, "No space left on device")
            real_manifest(run_dir, manifest)

        monkeypatch.setattr(batch, "write_manifest", manifest_fails_once_full)
    res = CliRunner().invoke(app, ["run", "--num-tasks", "5", "--workers", "1", "--out", str(tmp_path), "--name", "full", "--plain"])
    assert res.exit_code == EXIT_INCOMPLETE, res.output
    assert "Traceback" not in res.output
    errors = _error_lines(res.output)
    assert errors == [f"error: run incomplete: cannot write run folder {tmp_path / 'full'} (No space left on device); "
                      f"what was recorded stays; resume with: tauguard run --resume {tmp_path / 'full'}"]
    status = json.loads((tmp_path / "full" / "manifest.json").read_text())["status"]
    assert status == ("running" if manifest_too else "failed")
    monkeypatch.undo()
    resumed = CliRunner().invoke(app, ["run", "--resume", str(tmp_path / "full"), "--plain"])
    assert resumed.exit_code == 0, resumed.output
    assert json.loads((tmp_path / "full" / "manifest.json").read_text())["status"] == "completed"
