"""SIGTERM and Ctrl-C stop a real-LLM run with `--workers 1` promptly: no simulation in flight
makes another completion, and the process does not wait for them to finish (issue 26).

The loopback provider answers each completion after 0.2 s with a conversation that never
ends on its own (the agent keeps reading, the user keeps talking): before, every simulation in
flight went on calling it until its step limit."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_helpers import REPO
from tauguard.testing.llm_server import ScriptedLLMServer

IN_FLIGHT = 3


def _endless(body: dict) -> dict:
    if body.get("tools"):
        return {"tool_calls": [{"name": "get_user_details", "arguments": {"user_id": "emma_kim_9957"}}], "delay_s": 0.2}
    return {"content": "Please look me up again.", "delay_s": 0.2}


def _wait_for(cond, timeout: float) -> None:
    deadline = time.monotonic() + timeout  # a hang guard only: no timing is asserted
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_calling_the_provider(tmp_path: Path, signum: int):
    with ScriptedLLMServer(_endless) as server:
        args = json.dumps({"agent": {"api_base": server.api_base}, "user": {"api_base": server.api_base}})
        proc = subprocess.Popen(
            [sys.executable, "-m", "tauguard", "run", "--domain", "airline", "--task-ids", "0,1,2,3,4,5", "-k", "2",
             "--workers", "1", "-c", str(IN_FLIGHT), "--agent-llm", "openai/a", "--user-llm", "openai/u",
             "--llm-args", args, "--max-steps", "200", "--out", str(tmp_path), "--name", "slow"],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
            env=dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", CI="true", OPENAI_API_KEY="sk-test-not-a-real-key"),
        )
        _wait_for(lambda: len(server.requests) >= 4 * IN_FLIGHT, timeout=240)
        proc.send_signal(signum)
        at_signal = len(server.requests)
        _, stderr = proc.communicate(timeout=120)
        time.sleep(1.0)  # anything still calling would show up here
        after = len(server.requests) - at_signal
    print(f"completions after the signal: {after}")
    assert proc.returncode == 3, stderr[-2000:]
    how = "SIGTERM" if signum == signal.SIGTERM else "Ctrl-C (SIGINT)"
    assert f"error: run incomplete: interrupted by {how} at 0 of 12 units" in stderr
    # at most one completion per simulation was already on its way when the signal came
    assert after <= IN_FLIGHT, f"{after} completions after the signal"
    manifest = json.loads((tmp_path / "slow" / "manifest.json").read_text())
    assert manifest["status"] == "interrupted"
