"""Credentials never reach run files, progress lines or `show` (issue 11)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tauguard.secrets import credential_keys, drop_redacted, is_credential_key, scrub

KEY = "sk-test-echoed-4242-abcdef"


@pytest.mark.parametrize("key", ["api_key", "API-KEY", "openai_api_key", "auth_token", "token", "client_secret", "Authorization", "password"])
def test_credential_keys(key: str):
    assert is_credential_key(key)


@pytest.mark.parametrize("key", ["max_tokens", "max_completion_tokens", "temperature", "api_base", "top_logprobs"])
def test_ordinary_keys(key: str):
    assert not is_credential_key(key)


def test_scrub_and_drop(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MY_PROVIDER_TOKEN", "tok-123456789")
    monkeypatch.setenv("AZURE_CLIENT_SECRET_VALUE", 'sec"ret-value')
    text = 'Bearer tok-123456789 and {"e": "sec\\"ret-value"}'
    assert scrub(text) == 'Bearer <redacted> and {"e": "<redacted>"}'
    assert credential_keys({"agent": {"extra_headers": {"Authorization": "x"}}}) == ["agent.extra_headers.Authorization"]
    assert drop_redacted({"agent": {"max_tokens": "<redacted>", "api_key": "k", "temperature": 0}}) == {"agent": {"temperature": 0}}


def test_a_provider_echoing_the_key_leaves_no_trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import tauguard
    from tauguard.cli.main import app
    from tauguard.testing.llm_server import ScriptedLLMServer

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    lines: list[str] = []
    with ScriptedLLMServer([{"status": 401, "echo_auth": True}]) as server:
        result = tauguard.run(
            {"domains": ["airline"], "task_ids": ["0"], "workers": 1, "agent_llm": "openai/echo", "user_llm": "sim",
             "llm_args": {"agent": {"api_base": server.api_base}}, "out": str(tmp_path), "name": "echo"},
            on_record=lambda rec, progress: lines.append(rec.model_dump_json()),
        )
        echoed = list(server.requests)
    assert echoed, "the agent called the server"
    # Every unit ran but ended in an infrastructure error: not "completed" (the CLI exits 3)
    assert result.status == "incomplete" and result.incomplete is not None
    assert tauguard.load_run(tmp_path / "echo").manifest.status == "incomplete"
    record = tauguard.load_run(tmp_path / "echo").records[0]
    assert record.error and "invalid credentials: Bearer <redacted>" in record.error
    shown = CliRunner().invoke(app, ["show", str(tmp_path / "echo")])
    for text in [shown.output, *lines, *(f.read_text() for f in (tmp_path / "echo").iterdir())]:
        assert KEY not in text


# The URL-userinfo rule as one regex (the scrubber's former implementation, quadratic on long
# runs of letters): the linear scan must find exactly what it finds.
_REFERENCE = __import__("re").compile(r"([A-Za-z][A-Za-z0-9+.-]*://)([^/\s@?#]+)@")


def test_userinfo_masking_agrees_with_the_regex_rule_on_fuzzed_text():
    import random

    from tauguard.secrets import mask_userinfo

    rng = random.Random(38)
    alphabet = ["a", "Z", "1", "+", ".", "-", ":", "/", "//", "://", "@", "?", "#", " ", "\n", "é", "x://", "u:p@"]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        expected = _REFERENCE.sub(lambda m: f"{m.group(1)}<redacted>@", text)
        assert mask_userinfo(text) == expected, text


def test_scrub_of_long_adversarial_text_keeps_the_text_and_masks_the_userinfo():
    from tauguard.secrets import config_secrets

    text = "a" * 100_000 + " x@y " + "1a" * 50_000 + "://user:pw@host"
    out = scrub(text)
    assert out.startswith("a" * 100_000 + " x@y ") and out.endswith("://<redacted>@host")
    assert config_secrets({"api_base": "http://" + "x" * 120_000}) == []  # long, no userinfo: nothing, promptly
