"""One error family: user errors are TauguardInputError (one line, exit 2); anything else that
escapes a command is an internal error (one line naming a saved traceback, exit 4)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from tauguard.errors import TauguardInputError

ROOT = Path(__file__).resolve().parents[1]


def _main(args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    from tauguard.cli.main import main

    monkeypatch.setattr(sys, "argv", ["tauguard", *args])
    with pytest.raises(SystemExit) as exit_:
        main()
    out, err = capsys.readouterr()
    return int(exit_.value.code or 0), out, err


def test_user_error_is_one_line_exit_2(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    code, _, err = _main(["compare", str(tmp_path / "missing-a"), str(tmp_path / "missing-b")], capsys, monkeypatch)
    assert code == 2
    assert err.splitlines() == [f"error: run directory not found: {tmp_path / 'missing-a'}"]
    assert not (tmp_path / "state").exists()  # a user error is no bug report


def _boom(*_args, **_kwargs):
    raise RuntimeError("boom: the key sk-test-very-secret-123 leaked into a message")


def test_internal_error_saves_traceback_and_exits_4(capsys, monkeypatch, tmp_path):
    import tauguard.cli.strategies as command

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-very-secret-123")
    monkeypatch.setenv("TAUGUARD_SERVICE_TOKEN", "tok-abcdef-987")
    monkeypatch.setenv("TAUGUARD_PLAIN_SETTING", "visible-value")
    monkeypatch.setattr(command, "strategy_rows", _boom)
    code, out, err = _main(["strategies"], capsys, monkeypatch)
    assert code == 4 and out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("internal error, please report: ")
    assert "Traceback" not in err and "boom" not in err
    report = Path(lines[0].removeprefix("internal error, please report: "))
    assert report.parent == tmp_path / "state" / "tauguard" / "internal-errors"
    text = report.read_text(encoding="utf-8")
    assert "Traceback (most recent call last)" in text and "RuntimeError: boom" in text and "_boom" in text
    assert "command: tauguard strategies" in text
    assert "TAUGUARD_PLAIN_SETTING=visible-value" in text
    assert "sk-test-very-secret-123" not in text and "tok-abcdef-987" not in text
    assert "TAUGUARD_SERVICE_TOKEN=<redacted>" in text
    assert report.stat().st_mode & 0o077 == 0  # readable by its owner only


def test_internal_error_report_falls_back_to_temp_dir(capsys, monkeypatch, tmp_path):
    import tauguard.cli.strategies as command

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker))  # the state folder cannot be made under a file
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR
    monkeypatch.setattr(command, "strategy_rows", _boom)
    code, _, err = _main(["strategies"], capsys, monkeypatch)
    assert code == 4
    report = Path(err.strip().removeprefix("internal error, please report: "))
    assert report.parent == tmp_path / "tmp" / "tauguard-internal-errors" and "RuntimeError: boom" in report.read_text()


def _catches_value_error(handler: ast.ExceptHandler) -> bool:
    caught = handler.type
    names = caught.elts if isinstance(caught, ast.Tuple) else [caught] if caught is not None else []
    return any(isinstance(n, ast.Name) and n.id == "ValueError" for n in names)


def test_cli_never_catches_value_error():
    """A plain ValueError is a bug: the CLI catches only TauguardInputError (and named errors)."""
    sites = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in sorted((ROOT / "tauguard" / "cli").glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ExceptHandler) and _catches_value_error(node)
    ]
    assert sites == []


def test_user_error_classes_are_one_family():
    """Every error class a user can meet derives from TauguardInputError."""
    from tauguard.attacks.catalog import AttackDataError
    from tauguard.datafiles import DataFileError
    from tauguard.domains import UnknownClauseError
    from tauguard.analysis.power import PowerError
    from tauguard.report.collect import ReportError
    from tauguard.report.guards import AuditInputError
    from tauguard.safe_read import InputFileError
    from tauguard.trajectories.export import ExportError
    from tauguard.trajectories.importer import ImportRunError
    from tauguard.trajectories.load import ResultsFileError
    from tauguard_strategies.workflow.graph import GraphError

    for cls in (AttackDataError, DataFileError, UnknownClauseError, PowerError, ReportError, AuditInputError,
                InputFileError, ExportError, ImportRunError, ResultsFileError, GraphError):
        assert issubclass(cls, TauguardInputError), cls


def test_library_input_errors_are_the_family(tmp_path):
    from tauguard.bounds import parse_proportion
    from tauguard.datafiles import load_jsonl
    from tauguard.provider import RateLimit
    from tauguard.benchmark.real_writes import LabelledWrite

    with pytest.raises(TauguardInputError, match="--uptake must be within"):
        parse_proportion("1.5", "--uptake")
    with pytest.raises(TauguardInputError, match="numbers within"):
        parse_proportion("lots", "--uptake")
    assert parse_proportion("0.25", "--uptake") == 0.25
    with pytest.raises(TauguardInputError, match="invalid --rate-limit"):
        RateLimit.parse("gpt=nan")
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\xff\xfe not text\n")
    with pytest.raises(TauguardInputError, match="not UTF-8"):
        load_jsonl([bad], LabelledWrite)
    bad.write_text("{\"x\": 1}\n")
    with pytest.raises(TauguardInputError, match="bad.jsonl:1:"):
        load_jsonl([bad], LabelledWrite)
