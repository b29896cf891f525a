"""Shared fixtures. Tests run offline: litellm never reaches for the network."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

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
