"""A full or read-only disk during a run (issue 26): one `error:` line with the resume command,
no traceback, exit 3 (the run ended incomplete), and the manifest not left `running` when it
can still be written."""

from __future__ import annotations

import errno
import json
import sys
from pathlib import Path

import pytest

from tauguard.runs.store import RecordWriter


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from tauguard.cli.main import main

    argv = ["run", "--num-tasks", "3", "--workers", "1", "--out", str(tmp_path), "--name", "full", "--plain"]
    monkeypatch.setattr(sys, "argv", ["tauguard", *argv])
    with pytest.raises(SystemExit) as exit_:
        main()
    out, err = capsys.readouterr()
    return int(exit_.value.code or 0), out, err


def _full_disk_after(n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    written = {"n": 0}
    original = RecordWriter.write

    def write(self: RecordWriter, record: object) -> None:
        if written["n"] >= n:
            raise OSError(errno.ENOSPC, "No space left on device", str(self.path) if hasattr(self, "path") else None)
        written["n"] += 1
        original(self, record)  # type: ignore[arg-type]

    monkeypatch.setattr(RecordWriter, "write", write)


def test_a_full_disk_is_one_error_line_and_the_manifest_says_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    _full_disk_after(1, monkeypatch)
    code, _, err = _run(tmp_path, monkeypatch, capsys)
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 3 and "Traceback" not in err
    assert len(errors) == 1 and "No space left on device" in errors[0]
    assert f"tauguard run --resume {tmp_path / 'full'}" in errors[0]
    manifest = json.loads((tmp_path / "full" / "manifest.json").read_text())
    assert manifest["status"] == "failed"  # not `running`: the manifest could still be written


def test_when_the_manifest_cannot_be_written_either_the_first_error_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    import tauguard.execution.batch as batch

    _full_disk_after(0, monkeypatch)
    calls = {"n": 0}
    original = batch.write_manifest

    def write_manifest(run_dir: Path, manifest: object) -> None:
        calls["n"] += 1
        if calls["n"] > 1:  # the final write, after the records failed
            raise OSError(errno.EROFS, "Read-only file system", str(run_dir / "manifest.json"))
        original(run_dir, manifest)  # type: ignore[arg-type]

    monkeypatch.setattr(batch, "write_manifest", write_manifest)
    code, _, err = _run(tmp_path, monkeypatch, capsys)
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 3 and "Traceback" not in err
    assert len(errors) == 1 and "No space left on device" in errors[0]
