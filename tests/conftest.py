"""Shared fixtures. Tests run offline: litellm never reaches for the network."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# Tests read what a command says, not how it is laid out: whole rows, as before output that is
# not a terminal fitted 120 columns (tauguard.tables). The layout itself is tested with this
# unset (tests/test_tau2_conventions.py, tests/test_cli_conventions.py).
os.environ.setdefault("TAUGUARD_WIDE", "1")

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def tau2():
    """tauguard's tau2 compatibility module (imports tau2's fast parts)."""
    from tauguard.tau2_adapter import compat as tau2compat

    return tau2compat


def make_unit(domain: str, task_id: str, trial: int = 0, **kw):
    """A UnitSpec with sim defaults, for in-process worker tests."""
    from tauguard.execution.unit import UnitSpec

    base = dict(
        run_id="test", domain=domain, split="base", task_id=task_id, trial=trial, seed=7, strategy="react",
        agent_llm="sim", user_llm="sim", max_steps=200, max_errors=10, max_guard_retries=3,
        fault_profile={"name": "none"},
    )
    base.update(kw)
    return UnitSpec(**base)


def judge_confirms_last_pair(body: dict) -> dict:
    """A scripted LLM dialogue judge for the loopback server: the last agent turn and the user's
    reply to it confirm the write (none when the user has not answered it), 50 + 8 tokens."""
    import json
    import re

    prompt = body["messages"][-1]["content"]
    agents = [int(n) for n in re.findall(r"^\[(\d+)\] AGENT:", prompt, re.MULTILINE)]
    users = {int(n) for n in re.findall(r"^\[(\d+)\] USER:", prompt, re.MULTILINE)}
    last = max(agents) if agents else None
    pairs = [{"statement": last, "reply": last + 1}] if last is not None and last + 1 in users else []
    return {"content": json.dumps({"confirmations": pairs}), "usage": {"prompt_tokens": 50, "completion_tokens": 8}}
