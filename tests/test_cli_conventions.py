"""CLI conventions (issue 26): --version and -h, defaults in every --help, one spelling per
concept (old spellings hidden), tables that fit the terminal, an honest ETA, foreign text
made safe for the terminal and for the report's script."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import typer

from tauguard.testing.synthetic_runs import TaskSpec, write_run


def _main(argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from tauguard.cli.main import main

    monkeypatch.setattr(sys, "argv", ["tauguard", *argv])
    with pytest.raises(SystemExit) as exit_:
        main()
    out, err = capsys.readouterr()
    return int(exit_.value.code or 0), out, err


def _commands() -> list[tuple[list[str], object]]:
    from tauguard.cli.main import app

    found: list[tuple[list[str], object]] = []

    def walk(command: object, path: list[str]) -> None:
        subs = getattr(command, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, [*path, name])
        else:
            found.append((path, command))

    walk(typer.main.get_command(app), [])
    return found


def test_version_and_short_help(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    from importlib.metadata import version

    assert _main(["--version"], monkeypatch, capsys)[:2] == (0, f"tauguard {version('tauguard')}\n")
    code, out, _ = _main(["run", "-h"], monkeypatch, capsys)
    assert code == 0 and "--strategy" in out


def test_every_command_has_short_help_no_bool_placeholder_and_shows_its_defaults(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    monkeypatch.setenv("COLUMNS", "200")
    commands = _commands()
    assert len(commands) >= 17
    missing = []
    for path, command in commands:
        code, out, _ = _main([*path, "-h"], monkeypatch, capsys)
        assert code == 0 and "Usage:" in out, path
        assert "<bool>" not in out, path
        for param in command.params:  # type: ignore[attr-defined]
            if getattr(param, "param_type_name", "") != "option" or param.hidden or param.is_flag or param.required:
                continue
            if param.default is None and "default" not in (param.help or "").lower():
                missing.append(f"{' '.join(path)} {param.opts[0]}")
    assert missing == ["probes build --domain"]  # required unless --from-run: said in its help


def test_run_help_defaults_come_from_the_packaged_config(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    monkeypatch.setenv("COLUMNS", "250")
    _, out, _ = _main(["run", "--help"], monkeypatch, capsys)
    for shown in ("[default: react]", "[default: airline]", "[default: 300]", "[default: 200]", "[default: runs]"):
        assert shown in out


def test_old_spellings_are_hidden_aliases():
    by_path = {" ".join(path): command for path, command in _commands()}
    hidden = {
        " ".join(path): sorted(o for p in c.params if getattr(p, "hidden", False) for o in p.opts)  # type: ignore[attr-defined]
        for path, c in _commands()
    }
    assert hidden["audit"] == ["--progress", "--task"]
    assert hidden["probes build"] == ["--task", "--verbose", "-v"]
    assert hidden["probes eval"] == ["--progress"]
    for name in ("run", "audit", "probes build", "probes sweep"):
        assert "--task-ids" in {o for p in by_path[name].params for o in p.opts}, name  # type: ignore[attr-defined]


def test_task_ids_merge_commas_repeats_and_old_spelling():
    from tauguard.cli.common import merge_task_ids

    assert merge_task_ids(None, None) is None
    assert merge_task_ids(["1,2", "3"], ["2", "4"]) == ["1", "2", "3", "4"]
    with pytest.raises(typer.Exit):
        merge_task_ids([" , "])


def test_eta_is_unknown_until_the_rate_is_measured_then_uses_it():
    from tauguard.cli.progress import Eta

    now = [100.0]
    eta = Eta(clock=lambda: now[0])
    assert eta.text(10) == "-"
    for t in (130.0, 132.0):  # 30 s of start-up before the first unit: not part of the rate
        now[0] = t
        eta.observe()
        assert eta.text(10) == "-"
    now[0] = 134.0
    eta.observe()  # 2 intervals of 2 s
    assert eta.seconds_left(10) == pytest.approx(20.0) and eta.text(10) == "20s"
    assert eta.text(0) == "0s"
    now[0] = 254.0
    eta.observe()
    assert eta.seconds_left(100) == pytest.approx(100 * 124 / 3)  # 3 intervals over 124 s, not 154 s
    assert eta.text(100) == "68m53s"


def test_tables_split_to_fit_the_width_and_never_in_wide_or_markdown(monkeypatch: pytest.MonkeyPatch):
    from tauguard import tables

    rows = [{"slice": f"domain/{i}", **{f"pass^{k}": f"0.{k}00" for k in range(1, 30)}} for i in range(3)]
    text = tables.fit_table(rows, width=80)
    assert max(len(line) for line in text.splitlines()) <= 80
    assert text.count("slice") > 1 and all(f"pass^{k}" in text for k in range(1, 30))
    assert max(len(line) for line in tables.fit_table(rows, width=None).splitlines()) > 200
    assert "\n\n" not in tables.fit_table(rows, tablefmt="github", width=80)
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.delenv("TAUGUARD_WIDE", raising=False)  # set for the rest of the suite (conftest)
    tables.set_wide(True)
    try:
        assert tables.terminal_width() is None
    finally:
        tables.set_wide(False)
    assert tables.terminal_width() == 80


def test_show_strips_terminal_escapes_from_foreign_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    run = write_run(tmp_path, "evil", [TaskSpec("airline", "0", [True])])
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["agent_llm"] = "model\x1b]0;owned\x07\x1b[2J\x1b[31m-red"
    (run / "manifest.json").write_text(json.dumps(manifest))
    code, out, _ = _main(["show", str(run)], monkeypatch, capsys)
    assert code == 0 and "\x1b" not in out and "\x07" not in out and "agent=model-red" in out


def test_report_json_cannot_break_out_of_its_script_element():
    from tauguard.report.render import script_json

    value = {"model": "x<!--<script></script>&\u2028"}
    text = script_json(value)
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == value


def test_workflow_ablations_have_no_variant_option_and_run_their_own():
    from tauguard.strategy_api.registry import create_strategy, validated_options

    for name, variant in (("workflow-raw", "raw"), ("workflow-self", "self")):
        assert create_strategy(name, {}).options.variant == variant
        assert "variant" not in validated_options(name, {})
        with pytest.raises(ValueError, match="has no option 'variant'"):
            validated_options(name, {"variant": "graph"})
    assert create_strategy("workflow", {"variant": "raw"}).options.variant == "raw"


def test_fault_summary_counts_detected_and_prevented_apart(tmp_path: Path):
    from tauguard.runs.records import InjectedFault
    from tauguard.runs.store import load_run
    from tauguard.analysis.summary import summarize

    run_dir = write_run(tmp_path, "faults", [TaskSpec("airline", "0", [True, False, True])])
    run = load_run(run_dir)
    marks = [(True, False), (True, True), (False, True)]  # (detected, reached)
    for rec, (held, reached) in zip(run.records, marks):
        rec.faults = [InjectedFault(fault_id="pv", fault_class="PV", applied=True, intercepted=held, reached=reached)]
    row = summarize(run).faults[0]
    assert (row.injected, row.detected, row.prevented) == (3, 2, 1)
    run.records[0].faults[0].reached = None  # a record from before the count
    assert summarize(run).faults[0].prevented is None


def test_a_hostile_model_name_cannot_stop_the_reports_script(tmp_path: Path):
    import re

    from tauguard.report import build_report, render_html
    from tauguard.runs.store import load_run

    tasks = [TaskSpec("airline", str(i), [True, i % 2 == 0]) for i in range(4)]
    paths = [write_run(tmp_path, name, tasks, strategy=name) for name in ("base", "cand")]
    for path in paths:
        manifest = json.loads((path / "manifest.json").read_text())
        manifest["agent_llm"] = manifest["user_llm"] = "m<!--<script></script>"
        (path / "manifest.json").write_text(json.dumps(manifest))
    html = render_html(build_report([load_run(p) for p in paths]))
    bodies = re.findall(r"<script[^>]*>(.*?)</script>", html, re.S)
    assert bodies and all("<!--" not in b and "<script" not in b.lower() for b in bodies)
    assert "m&lt;!--&lt;script&gt;" in html  # the name is shown, escaped, in the page text
