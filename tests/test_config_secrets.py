"""Header values and URL userinfo in `llm_args` are secrets (issue 26): redacted in the
manifest, scrubbed from records, error lines and the response cache, and never sent on as the
redaction marker by a resume. The loopback provider echoes every header it receives."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tauguard.cli.main import app
from tauguard.secrets import REDACTED, config_secrets, drop_redacted, redact
from tauguard.runs.store import load_run
from tauguard.testing.llm_server import ScriptedLLMServer

KEY = "sk-test-env-key-31415926"
APIM = "apim-subscription-secret-8888"
COOKIE = "session=cookie-secret-9999"
PASSWORD = "pw-userinfo-secret-7777"
SECRETS = [KEY, APIM, COOKIE, PASSWORD]


def test_redaction_covers_every_header_value_and_userinfo():
    config = {"agent": {"api_base": f"http://me:{PASSWORD}@127.0.0.1:1/v1", "temperature": 0,
                        "extra_headers": {"Ocp-Apim-Subscription-Key": APIM, "Cookie": COOKIE, "X-Trace": 7}}}
    stored = redact(config)
    assert stored["agent"]["api_base"] == f"http://{REDACTED}@127.0.0.1:1/v1"
    assert stored["agent"]["extra_headers"] == dict.fromkeys(("Ocp-Apim-Subscription-Key", "Cookie", "X-Trace"), REDACTED)
    assert stored["agent"]["temperature"] == 0
    assert {APIM, COOKIE, PASSWORD, f"me:{PASSWORD}"} <= set(config_secrets(config))
    sent = drop_redacted(stored)  # what a resume sends: no marker anywhere
    assert REDACTED not in json.dumps(sent)
    assert sent["agent"] == {"api_base": "http://127.0.0.1:1/v1", "temperature": 0, "extra_headers": {}}


def _all_text(folder: Path) -> str:
    """Every byte under ``folder`` (run files, the cache's SQLite database), as text."""
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in folder.rglob("*") if p.is_file())


def test_a_provider_echoing_every_header_leaves_no_secret_and_resume_sends_no_marker(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    # First session: the first agent call is answered (and cached), the other fails; the resume
    # is answered.
    phase = {"answered": 0, "resumed": False}

    def echo(body: dict) -> dict:
        if not body.get("tools"):  # the user simulator: one opening turn, then stop
            turns = sum(1 for m in body["messages"] if m["role"] == "user")
            return {"content": "Hi, I am Emma Kim." if turns <= 1 else "###STOP###"}
        phase["answered"] += 1
        return {"echo_headers": True, "status": 200 if phase["answered"] == 1 or phase["resumed"] else 400}

    with ScriptedLLMServer(echo) as server:
        base = server.api_base
        userinfo_base = base.replace("http://", f"http://me:{PASSWORD}@")
        args = json.dumps({
            "agent": {"api_base": userinfo_base, "extra_headers": {"Ocp-Apim-Subscription-Key": APIM, "Cookie": COOKIE}},
            "user": {"api_base": base},
        })
        cache = tmp_path / "cache"
        first = CliRunner().invoke(app, [
            "run", "--domain", "airline", "--task-ids", "0", "-k", "2", "--workers", "1", "--agent-llm", "openai/echo",
            "--user-llm", "openai/echo-user", "--llm-args", args, "--cache", str(cache), "--max-steps", "6",
            "--out", str(tmp_path), "--name", "echo", "--plain",
        ])
        sent_first = list(server.request_headers)
        phase["resumed"] = True
        server.request_headers.clear()
        second = CliRunner().invoke(app, ["run", "--resume", str(tmp_path / "echo"), "--plain"])
        sent_second = list(server.request_headers)

    # the first session's agent calls carried the real header values (they are used, not dropped)
    sent_first = [{k.lower(): v for k, v in h.items()} for h in sent_first]
    sent_second = [{k.lower(): v for k, v in h.items()} for h in sent_second]
    assert any(h.get("ocp-apim-subscription-key") == APIM and h.get("cookie") == COOKIE for h in sent_first)
    # every unit failed with the provider echoing the headers: exit 3, and the error line is scrubbed
    assert first.exit_code == 3, first.output
    assert "error: run incomplete: 1 of 2 units ended in an infrastructure error" in first.output
    assert second.exit_code == 0, second.output
    # a resume reads no secret from the run files: it sends neither the marker nor the secrets
    assert sent_second and all(REDACTED not in json.dumps(h) for h in sent_second)
    assert all("ocp-apim-subscription-key" not in h and "cookie" not in h for h in sent_second)
    manifest = json.loads((tmp_path / "echo" / "manifest.json").read_text())
    assert manifest["llm_args"]["agent"]["extra_headers"] == {"Ocp-Apim-Subscription-Key": REDACTED, "Cookie": REDACTED}
    assert manifest["llm_args"]["agent"]["api_base"].startswith(f"http://{REDACTED}@127.0.0.1:")
    records = load_run(tmp_path / "echo").records
    assert len(records) == 2 and all(r.error is None and "with headers" in json.dumps(r.simulation) for r in records)
    assert "with headers" in _all_text(cache)  # the echoes are recorded and cached...
    texts = [first.output, second.output, _all_text(tmp_path / "echo"), _all_text(cache), json.dumps([r.simulation for r in records])]
    for secret in SECRETS:
        for text in texts:
            assert secret not in text  # ...scrubbed


def test_a_resume_error_never_echoes_an_address_password(tmp_path: Path):
    made = CliRunner().invoke(app, ["run", "--num-tasks", "1", "--workers", "1", "--out", str(tmp_path), "--name", "r", "--plain"])
    assert made.exit_code == 0, made.output
    res = CliRunner().invoke(app, ["run", "--resume", str(tmp_path / "r"), "--backend", "dask",
                                   "--address", f"tcp://admin:{PASSWORD}@10.0.0.1:8786"])
    assert res.exit_code == 2
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and PASSWORD not in res.output

