"""`tauguard classifier train|eval|ablate` and the live strategy on real (small) probe files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tauguard.cli.main import app
from tauguard.probes.build import build_probes
from tauguard.probes.evaluate import evaluate_probes
from tauguard.probes.model import read_probes, write_probes

runner = CliRunner()


@pytest.fixture(scope="module")
def probes(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    root = tmp_path_factory.mktemp("clf")
    train, test = root / "train.jsonl", root / "test.jsonl"
    write_probes(train, build_probes("airline", "train", task_ids=["27", "38", "9"]))
    write_probes(test, build_probes("airline", "test", task_ids=["2", "8"]))
    return root, train, test


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


def test_train_eval_ablate_and_the_live_gate(probes: tuple[Path, Path, Path]) -> None:
    root, train, test = probes
    artifact = root / "a.json.gz"
    code, out = invoke("classifier", "train", "-p", str(train), "-o", str(artifact), "--test", str(test), "--resamples", "50", "--format", "json")
    assert code == 0, out
    first = json.loads(out)
    assert first["simulation"] is True and first["meta"]["domain"] == "airline"
    assert first["meta"]["probe_ids"] == [p.id for p in read_probes(train)]
    assert sum(first["test"]["confusion"][g][p] for g in first["test"]["confusion"] for p in first["test"]["confusion"][g]) == first["test"]["n"]

    code, out = invoke("classifier", "eval", "-a", str(artifact), "-p", str(test), "--versus", "gold", "--resamples", "50")
    assert code == 0, out
    assert "SIMULATION" in out and "gold - retrieved" in out and "pred refuse" in out

    code, out = invoke("classifier", "ablate", "--train", str(train), "--test", str(test), "--only", "recall,injection", "--resamples", "30", "--format", "markdown")
    assert code == 0, out
    assert "R@10" in out and "| 0.75 |" in out and "structured - raw" in out

    report = evaluate_probes("classifier", read_probes(test), {"artifact": str(artifact)})
    assert report.probes == len(read_probes(test))
    assert all(o.rule_id and o.rule_id.startswith("airline.") for o in report.outcomes if o.predicted == "refuse")


def test_bad_input_is_one_error_line(probes: tuple[Path, Path, Path]) -> None:
    root, train, test = probes
    artifact = root / "a.json.gz"  # trained by the test above
    assert artifact.exists()
    no_clause = root / "noclause.jsonl"
    write_probes(no_clause, [p.model_copy(update={"clause": ""}) for p in read_probes(test)])
    cases = [
        (("classifier", "eval", "-a", str(root / "missing.json.gz"), "-p", str(test)), "does not exist"),
        (("classifier", "eval", "-a", str(artifact), "-p", str(train)), "were in the training set"),
        (("classifier", "eval", "-a", str(artifact), "-p", str(test), "-r", "raw"), "representation 'structured', not 'raw'"),
        (("classifier", "train", "-p", str(no_clause), "-o", str(root / "d.json.gz")), "no probe has a clause"),
        (("classifier", "train", "-p", str(train), "-o", str(root / "e.json.gz"), "-r", "tokens"), "allowed: raw, masked"),
        (("run", "--strategy", "classifier", "--domain", "retail", "--strategy-option", f"artifact={artifact}", "--dry-run"), "not 'retail'"),
    ]
    for args, message in cases:
        code, out = invoke(*args)
        lines = [line for line in out.splitlines() if line.strip()]
        assert code == 2 and len(lines) == 1 and lines[0].startswith("error:") and message in lines[0], (args, out)
    assert not (root / "d.json.gz").exists() and not (root / "e.json.gz").exists()
