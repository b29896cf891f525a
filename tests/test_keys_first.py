"""A missing provider key is found before any work, for `api_base` servers too; `--no-key`
(config `no_key`) says a server needs none (issue 26)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tauguard import plan
from tauguard.cli.main import app
from tauguard.provider import NO_KEY
from tauguard.testing.llm_server import ScriptedLLMServer
from test_llm_path import _responder

REAL_KEY = "sk-test-must-not-reach-a-keyless-server"


def _args(base: str) -> list[str]:
    llm_args = json.dumps({"agent": {"api_base": base}, "user": {"api_base": base}})
    return ["run", "--task-ids", "0", "--workers", "1", "--agent-llm", "openai/m", "--user-llm", "openai/m",
            "--llm-args", llm_args, "--plain"]


def test_a_local_server_without_its_key_is_refused_before_any_request(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with ScriptedLLMServer(_responder) as server:
        res = CliRunner().invoke(app, [*_args(server.api_base), "--out", str(tmp_path / "runs")])
        assert server.requests == []
    assert res.exit_code == 2
    assert res.output.strip().splitlines() == [
        "error: no credentials for the agent model 'openai/m' at its api_base: set OPENAI_API_KEY in the environment, "
        "or pass --no-key (config no_key = true) if the server needs no key"
    ]
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("env_key", [None, REAL_KEY])
def test_no_key_runs_against_a_keyless_server_and_never_sends_the_providers_key(tmp_path: Path, monkeypatch, env_key):
    if env_key is None:
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    else:
        monkeypatch.setenv("OPENAI_API_KEY", env_key)
    with ScriptedLLMServer(_responder) as server:
        res = CliRunner().invoke(app, [*_args(server.api_base), "--no-key", "--out", str(tmp_path), "--name", "nokey"])
        auth = {h.get("Authorization") or h.get("authorization") for h in server.request_headers}
    assert res.exit_code == 0, res.output
    assert auth == {f"Bearer {NO_KEY}"}
    assert json.loads((tmp_path / "nokey" / "manifest.json").read_text())["config"]["no_key"] is True


def test_providers_that_need_no_key_pass_without_no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    args = {"api_base": "http://127.0.0.1:9/v1"}
    planned = plan({"task_ids": ["0"], "agent_llm": "hosted_vllm/m", "user_llm": "sim", "llm_args": {"agent": args}})
    assert planned.config.no_key is False
