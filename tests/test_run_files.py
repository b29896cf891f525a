"""Issue 38's reliability review: the bounded reader of run-folder files (tauguard.runs.run_files)
and the regressions that are not one-line bad inputs (tests/test_bad_inputs.py has those)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tauguard.runs.run_files import (
    RunFileError,
    check_manifest_numbers,
    iter_lines,
    open_run_file,
    read_run_file,
)
from tauguard.runs.store import RunLoadError, load_run
from tauguard.testing.synthetic_runs import TaskSpec, write_run

TASKS = [TaskSpec("airline", "0", [True, False]), TaskSpec("airline", "1", [True, True])]


def _main(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> int:
    from tauguard.cli.main import main

    monkeypatch.setattr(sys, "argv", ["tauguard", *argv])
    with pytest.raises(SystemExit) as exit_:
        main()
    return int(exit_.value.code or 0)


def test_only_regular_files_are_read(tmp_path: Path):
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "zero").symlink_to("/dev/zero")
    (tmp_path / "dir").mkdir()
    for name, what in (("fifo", "a FIFO"), ("zero", "a device"), ("dir", "a folder")):
        with pytest.raises(RunFileError, match=what):
            read_run_file(tmp_path / name, 100)
    assert open_run_file(tmp_path / "absent", 100) is None
    (tmp_path / "ok").write_bytes(b"12345")
    assert read_run_file(tmp_path / "ok", 5) == b"12345"
    with pytest.raises(RunFileError, match="over the limit of 4 bytes"):
        read_run_file(tmp_path / "ok", 4)
    assert issubclass(RunFileError, RunLoadError)  # callers that catch RunLoadError catch it too


def test_lines_are_bounded(tmp_path: Path):
    (tmp_path / "f").write_bytes(b"short\n" + b"x" * 100 + b"\nend")
    fh = open_run_file(tmp_path / "f", 1000)
    assert fh is not None
    lines = iter_lines(fh, "f", 50)
    with fh, pytest.raises(RunFileError, match="line 2 is over the limit of 50 bytes"):
        assert next(lines) == b"short\n"
        next(lines)
    fh = open_run_file(tmp_path / "f", 1000)
    assert fh is not None
    with fh:
        assert list(iter_lines(fh, "f", 200)) == [b"short\n", b"x" * 100 + b"\n", b"end"]


def test_manifest_numbers_are_bounded(tmp_path: Path):
    check_manifest_numbers(1000, {"airline": ["0"] * 100_000}, "R")
    for trials, ids in ((0, {}), (10**12, {}), (1001, {}), (1, {"airline": ["0"] * 100_001})):
        with pytest.raises(RunFileError, match="corrupt manifest in R"):
            check_manifest_numbers(trials, ids, "R")
    run = write_run(tmp_path, "r", TASKS)
    manifest = json.loads((run / "manifest.json").read_text())
    (run / "manifest.json").write_text(json.dumps({**manifest, "trials": 1e12}))
    with pytest.raises(RunFileError, match="trials 1000000000000 is outside"):
        load_run(run)


def test_a_records_file_without_newlines_is_refused_not_read_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import tauguard.runs.run_files as rf

    run = write_run(tmp_path, "r", TASKS)
    for name in ("outcomes-v1.jsonl", "tallies-v1.jsonl"):
        (run / name).unlink(missing_ok=True)
    with open(run / "simulations.jsonl", "ab") as fh:
        fh.write(b"x" * 5000)  # no newline
    monkeypatch.setattr(rf, "MAX_LINE_BYTES", 4096)
    monkeypatch.setattr(rf.iter_lines, "__defaults__", (4096,))
    with pytest.raises(RunFileError, match="over the limit of 4096 bytes"):
        load_run(run, conversations=False)


def test_a_fifo_as_step_summary_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    write_run(tmp_path, "a", TASKS)
    write_run(tmp_path, "b", TASKS)
    os.mkfifo(tmp_path / "summary")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary"))
    code = _main(["check", str(tmp_path / "a"), "--baseline", str(tmp_path / "b"), "--github-summary"], monkeypatch)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1].startswith("error: cannot append to $GITHUB_STEP_SUMMARY") and "FIFO" in err[-1]
    (tmp_path / "summary").unlink()
    (tmp_path / "summary.md").write_text("before\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    _main(["check", str(tmp_path / "a"), "--baseline", str(tmp_path / "b"), "--github-summary"], monkeypatch)
    text = (tmp_path / "summary.md").read_text()
    assert text.startswith("before\n") and len(text) > len("before\n")  # appended


def test_report_output_inside_a_run_folder_leaves_the_run_intact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    run = write_run(tmp_path, "r", TASKS)
    records = (run / "simulations.jsonl").read_bytes()
    assert _main(["report", str(run), "-o", str(run / "simulations.jsonl")], monkeypatch) == 2
    assert (run / "simulations.jsonl").read_bytes() == records
    assert len(load_run(run).records) == 4  # 2 tasks x 2 trials, all still there


def test_an_output_link_is_followed_only_within_its_folder(tmp_path: Path):
    from tauguard.output_file import OutputPathError, write_output

    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "precious.txt").write_text("keep")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "r.html").symlink_to(tmp_path / "elsewhere" / "precious.txt")
    with pytest.raises(OutputPathError, match="the link points outside its own folder"):
        write_output(tmp_path / "out" / "r.html", "new", "-o")
    assert (tmp_path / "elsewhere" / "precious.txt").read_text() == "keep"
    (tmp_path / "out" / "real.html").write_text("old")
    (tmp_path / "out" / "alias.html").symlink_to("real.html")  # same folder: followed
    write_output(tmp_path / "out" / "alias.html", "new", "-o")
    assert (tmp_path / "out" / "real.html").read_text() == "new" and (tmp_path / "out" / "alias.html").is_symlink()


def test_traceback_files_hold_no_secret_from_the_command_line(monkeypatch: pytest.MonkeyPatch):
    from tauguard.cli.internal_error import report_text

    cases = [
        ['--llm-args', '{"api_key": "sk-X", "extra_headers": {"X-Key": "hdr-123"}}'],
        ['--llm-args={"agent": {"api_key": "sk-X"}, "h": {"extra_headers": {"X-Key": "hdr-123"}}}'],
        ['--llm-args', '{"agent": {"extra_headers": {"X-Key": "hdr-123"}}, "api_key": "sk-X", bad'],
    ]
    for args in cases:
        monkeypatch.setattr(sys, "argv", ["tauguard", "dialogue", "eval", *args])
        try:
            raise RuntimeError("the provider echoed sk-X and hdr-123")
        except RuntimeError as exc:
            text = report_text(exc)
        assert "sk-X" not in text and "hdr-123" not in text, text
        assert "the provider echoed <redacted> and <redacted>" in text


def test_internal_error_of_a_refused_llm_args_value_leaves_no_file_with_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    code = _main(["dialogue", "eval", "--backend", "llm", "--guard-llm", "openai/x", "--llm-args", '{"api_key": "sk-X"}'], monkeypatch)
    assert code == 2 and "--llm-args sets 'api_key'" in capsys.readouterr().err
    assert not any("sk-X" in p.read_text() for p in tmp_path.rglob("*") if p.is_file())


def test_uptake_sweep_refuses_a_repeated_value_before_any_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    monkeypatch.chdir(tmp_path)
    code = _main(["run", "--uptake", "0.5,0.5", "--num-tasks", "1", "--out", str(tmp_path / "o")], monkeypatch)
    assert code == 2 and "--uptake lists 0.5 twice" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("argv, value", [
    (["run", "--workers", "abc"], "'abc'"),
    (["run", "-jmany"], "'many'"),
    (["run", "--seed=x"], "'x'"),
    (["run", "-k", "1e9"], "'1e9'"),
])
def test_a_refused_number_names_the_value(argv: list[str], value: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    assert _main(argv, monkeypatch) == 2
    line = capsys.readouterr().err.strip()
    assert line.startswith("error: Invalid value for") and line.endswith(f"(got {value})")


def test_max_cost_below_the_documented_minimum_is_refused(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    assert _main(["run", "--max-cost", "1e-7"], monkeypatch) == 2
    assert "greater than or equal to 0.000001" in capsys.readouterr().err


def test_compare_and_check_strip_terminal_escapes_from_model_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    evil = {"agent_llm": "evil\x1b[31mRED\x1b]0;title\x07"}
    write_run(tmp_path, "a", TASKS, simulated=False, manifest=evil)
    write_run(tmp_path, "b", TASKS, simulated=False, manifest=evil)
    for argv in (["compare", str(tmp_path / "a"), str(tmp_path / "b")], ["check", str(tmp_path / "a"), "--baseline", str(tmp_path / "b")]):
        _main(argv, monkeypatch)
        captured = capsys.readouterr()
        assert "evil" in captured.out + captured.err  # the name is shown ...
        assert "\x1b" not in captured.out + captured.err  # ... without its escapes


def test_import_into_a_folder_it_cannot_write_is_one_line_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    results = tmp_path / "r.json"
    results.write_text(json.dumps({"info": {}, "simulations": [{
        "id": "s0", "task_id": "0", "trial": 0, "termination_reason": "user_stop",
        "reward_info": {"reward": 1.0}, "messages": [{"role": "assistant", "content": "Hello"}],
    }]}))
    (tmp_path / "ro").mkdir()
    real_access = os.access
    # root may write anywhere: a read-only folder is simulated by what os.access answers
    monkeypatch.setattr(os, "access", lambda p, mode: False if Path(p) == tmp_path / "ro" and mode & os.W_OK else real_access(p, mode))
    assert _main(["import", str(results), "--out", str(tmp_path / "ro")], monkeypatch) == 2
    assert "is not writable" in capsys.readouterr().err
    monkeypatch.setattr(os, "access", real_access)
    # the folder passes the check but the write fails (a disk full, permissions changed): one
    # line, and no half-written run is left
    import tauguard.trajectories.importer as importer

    def refuse(*_: object, **__: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(importer, "write_manifest", refuse)
    assert _main(["import", str(results), "--domain", "airline", "--out", str(tmp_path / "out")], monkeypatch) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: cannot write the run") and "Permission denied" in err[-1]
    assert not any((tmp_path / "out").iterdir()) if (tmp_path / "out").exists() else True
