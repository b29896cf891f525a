"""`tauguard report` at full size (4 runs x 278 tasks x 4 trials): under 3 MB, and rendered by headless Chromium.

Chromium is Debian's `chromium` package (`.ci/run` installs it). Without it the browser test is
skipped, except under CI=true, where it fails: CI must exercise the page in a real browser.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tauguard.runs.records import Manifest
from tauguard.report import ReportOptions, build_report, write_report
from tauguard.runs.store import load_run, write_manifest

DOMAINS = {"airline": 50, "retail": 114, "telecom": 114}  # τ²'s base split: 278 tasks
TRIALS = 4
RUNS = [("react", 0.55), ("ledger", 0.70), ("action-guard", 0.62), ("refuse-writes", 0.30)]
MAX_BYTES = 3_000_000


def _conversation(rng: random.Random, task_id: str, trial: int) -> list[dict]:
    """About 20 messages with kilobyte-sized tool results, like a real τ² trial."""
    msgs: list[dict] = [{"role": "assistant", "content": "Hi! How can I help you today?"},
                        {"role": "user", "content": f"I need help with my order for task {task_id}. " * 3}]
    for i in range(8):
        cid = f"{task_id}-{trial}-{i}"
        msgs.append({"role": "assistant", "tool_calls": [{"id": cid, "name": "get_order_details",
                                                           "arguments": {"order_id": f"#W{rng.randrange(10**6)}"},
                                                           "requestor": "assistant"}]})
        payload = {"order_id": cid, "items": [{"name": f"item {j}", "price": rng.random() * 100} for j in range(25)]}
        msgs.append({"role": "tool", "id": cid, "requestor": "assistant", "content": json.dumps(payload)})
    msgs += [{"role": "assistant", "content": "Anything else?"}, {"role": "user", "content": "No. ###STOP###"}]
    return msgs


def _write_run(root: Path, name: str, p_pass: float, seed: int) -> Path:
    """A run written directly as JSON lines (RecordWriter fsyncs each line: too slow for 1,112 records)."""
    rng = random.Random(seed)
    run_dir = root / name
    task_ids = {d: [str(i) for i in range(n)] for d, n in DOMAINS.items()}
    write_manifest(run_dir, Manifest(
        run_id=name, status="completed", created_at="2026-01-01T00:00:00Z", updated_at="2026-01-01T00:00:00Z",
        simulated=True, strategy=name, domains=list(DOMAINS), split="base", task_ids=task_ids, trials=TRIALS,
        agent_llm="sim", user_llm="sim", seed=300, max_steps=200, fault_profile={"name": "realistic"},
        versions={"tauguard": "0.1.0", "tau2": "26.3"}))
    # Ten conversations serialised once and reused: json.dumps of 1,112 conversations per run is slow.
    convs = [json.dumps({"messages": _conversation(rng, str(i), 0)}) for i in range(10)]
    lines = []
    for dom, ids in task_ids.items():
        for tid in ids:
            for trial in range(TRIALS):
                ok = rng.random() < p_pass
                events = [] if name == "react" else [{
                    "hook": "before_write", "step": 18, "verdict": "BLOCK" if not ok else "ALLOW",
                    "rule_id": f"{dom}.rule.{int(tid) % 7}", "reason": 'Policy (policy.md): "A clause." Ledger: x.',
                    "remediation": "do y", "tool_call": {"id": "c", "name": "cancel_pending_order", "arguments": {}}}]
                line = json.dumps({
                    "run_id": name, "domain": dom, "task_id": tid, "trial": trial, "seed": 300, "strategy": name,
                    "simulated": True, "policy_violation_task": int(tid) % 5 == 0, "reward": float(ok), "success": ok,
                    "termination_reason": "user_stop", "guard_events": events,
                    "faults": [{"fault_id": "skip_read", "fault_class": "T", "applied": True,
                                "intercepted": name != "react" and not ok}],
                    "usage": {"agent": {"calls": 10}, "user": {"calls": 3}}, "duration_s": 1.0,
                })
                lines.append(line[:-1] + ', "simulation": ' + convs[(int(tid) + trial) % 10] + "}")
    (run_dir / "simulations.jsonl").write_text("\n".join(lines) + "\n")
    return run_dir


@pytest.fixture(scope="module")
def full_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("full")
    runs = [load_run(_write_run(root, name, p, seed)) for seed, (name, p) in enumerate(RUNS)]
    out = root / "report.html"
    write_report(build_report(runs, ReportOptions(n_resamples=1000)), out)
    return out


@pytest.mark.slow
def test_full_size_report_stays_under_3_mb(full_report: Path) -> None:
    size = full_report.stat().st_size
    assert size < MAX_BYTES, f"{size} bytes"
    html = full_report.read_text(encoding="utf-8")
    assert html.count('<tr class="changed">') + html.count('<tr class="">') == sum(DOMAINS.values())
    assert "listed without trials to keep the page small" in html or "Per-trial views are embedded" in html


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _run_chromium(exe: str, page: Path, tmp: Path, *extra: str) -> subprocess.CompletedProcess:
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp / 'profile'}", "--enable-logging=stderr", "--v=0"]
    return subprocess.run([exe, *flags, *extra, page.as_uri()], check=False, capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_report_renders_in_headless_chromium(full_report: Path, tmp_path: Path) -> None:
    exe = _chromium()
    if exe is None:
        if os.environ.get("CI", "").lower() in ("1", "true"):
            pytest.fail("chromium is not installed; CI must install Debian's chromium package (see .ci/run)")
        pytest.skip("chromium is not installed (apt-get install -y chromium); the browser check needs it")
    dom = _run_chromium(exe, full_report, tmp_path, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    # The page's only script logs nothing: any console line is an error (exception, CSP refusal).
    console = [ln for ln in dom.stderr.splitlines() if ":CONSOLE" in ln]
    assert not console, console
    html = dom.stdout
    assert re.search(r'<html[^>]*data-tg-ready="1"', html), "the page's script did not run to the end"
    plots = int(re.search(r'data-tg-plots="(\d+)"', html).group(1))
    assert plots >= 8  # 6 pass^k panels (all, 3 domains, PV, mutation), forest, faults, verdicts
    assert html.count("<svg") >= plots
    for name, _ in RUNS:
        assert f"{name}</th>" in html or f"{name} <span" in html  # names in the runs table
    assert "baseline" in html and "candidate" in html

    shot = tmp_path / "page.png"
    res = _run_chromium(exe, full_report, tmp_path, f"--screenshot={shot}", "--window-size=1280,2000",
                        "--hide-scrollbars")
    assert res.returncode == 0, res.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000  # a blank page compresses to a few KB
