"""`tauguard faults`: the catalog listing, its formats and its errors."""

from __future__ import annotations

import json
import subprocess
import sys

from typer.testing import CliRunner

from tauguard.cli.main import app
from tauguard.domains import DOMAINS
from tauguard.faults.catalog import load_catalog

runner = CliRunner()


def test_json_lists_every_fault_of_the_domain_with_its_clause() -> None:
    res = runner.invoke(app, ["faults", "--domain", "retail", "--format", "json"])
    assert res.exit_code == 0, res.stderr
    rows = json.loads(res.stdout)
    expected = {s.id for s in load_catalog() if s.domain in ("retail", "*") and "retail" in s.clauses}
    assert {r["id"] for r in rows} == expected
    assert {r["domain"] for r in rows} == {"retail"}
    auth = next(r for r in rows if r["id"] == "retail.act_before_auth")
    assert auth["class"] == "T" and auth["label"] == "verify"
    assert auth["clause"].startswith("At the beginning of the conversation, you have to authenticate")
    confirm = next(r for r in rows if r["id"] == "skip_confirmation")
    assert confirm["clause"].startswith("Before taking any action that updates the database")


def test_generic_faults_use_the_domain_specific_tools_and_clause() -> None:
    rows = json.loads(runner.invoke(app, ["faults", "--format", "json"]).stdout)
    by = {(r["domain"], r["id"]): r for r in rows}
    assert by[("telecom", "skip_confirmation")]["tools"] == ["refuel_data"]
    # the scope of the generic faults is the write contract's: every airline write needs a yes
    from tauguard.domains.contract import confirmed_tools, targeted_tools
    assert by[("airline", "skip_confirmation")]["tools"] == confirmed_tools("airline") and len(confirmed_tools("airline")) == 6
    assert by[("telecom", "skip_read")]["tools"] == targeted_tools("telecom")
    assert {d for d, _ in by} == set(DOMAINS)  # every domain gets the generic faults (test_domain_list pins the shipped ones)


def test_table_and_markdown_show_ids_classes_and_clauses() -> None:
    table = runner.invoke(app, ["faults", "--domain", "telecom"])
    assert table.exit_code == 0
    assert "telecom.refuel_over_limit" in table.stdout and "The maximum amount of data that can be" in table.stdout
    md = runner.invoke(app, ["faults", "--domain", "airline", "--format", "markdown"])
    assert md.exit_code == 0
    header = md.stdout.splitlines()[0]
    assert header.startswith("| domain") and "| clause" in header
    assert "| airline  | airline.too_many_passengers" in md.stdout


def test_unknown_domain_is_a_one_line_error() -> None:
    res = runner.invoke(app, ["faults", "--domain", "banking"])
    assert res.exit_code == 2
    lines = res.stderr.strip().splitlines()
    assert lines == [f"error: unknown domain 'banking'; allowed: {', '.join(DOMAINS)}"]


def test_help_of_faults_and_probes_imports_neither_tau2_nor_litellm() -> None:
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from tauguard.cli.main import app\n"
        "for args in (['faults', '--help'], ['probes', '--help'], ['probes', 'build', '--help'], ['probes', 'eval', '--help']):\n"
        "    res = CliRunner().invoke(app, args)\n"
        "    assert res.exit_code == 0, res.output\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('tau2', 'litellm')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
