from pathlib import Path

import pytest

from tauguard.config import ConfigError, resolve_config
from tauguard.domains import DOMAINS
from tauguard.secrets import redact


def test_defaults_come_from_default_toml():
    cfg = resolve_config(None, {})
    assert cfg.strategy == "react"
    assert cfg.domains == ["airline"]
    assert cfg.agent_llm == "sim" and cfg.simulated
    assert cfg.llm_args["agent"]["temperature"] == 0.0


def test_file_overrides_defaults_and_flags_override_file(tmp_path: Path):
    f = tmp_path / "c.toml"
    f.write_text('strategy = "refuse-writes"\ndomain = "retail"\ntrials = 3\n[llm_args.agent]\ntemperature = 0.5\n')
    cfg = resolve_config(f, {"trials": 5, "domains": None})
    assert cfg.strategy == "refuse-writes"
    assert cfg.domains == ["retail"]
    assert cfg.trials == 5  # flag wins
    assert cfg.llm_args["agent"]["temperature"] == 0.5
    assert cfg.llm_args["user"]["temperature"] == 0.0  # nested merge keeps defaults


@pytest.mark.parametrize(
    "overrides, fragment",
    [
        ({"domains": ["bank"]}, f"unknown domain 'bank'; allowed: {', '.join(DOMAINS)}"),
        ({"trials": 0}, "trials"),
        ({"workers": 0}, "workers"),
    ],
)
def test_bad_values_give_one_line_errors(overrides, fragment):
    with pytest.raises(ConfigError) as err:
        resolve_config(None, overrides)
    assert fragment in str(err.value)
    assert "\n" not in str(err.value)


def test_unknown_key_and_unreadable_file(tmp_path: Path):
    f = tmp_path / "c.toml"
    f.write_text("stratgy = 'react'\n")
    with pytest.raises(ConfigError, match="unknown config key 'stratgy'"):
        resolve_config(f, {})
    bad = tmp_path / "bad.toml"
    bad.write_text("this is = = not toml")
    with pytest.raises(ConfigError, match="invalid TOML"):
        resolve_config(bad, {})
    with pytest.raises(ConfigError, match="config file not found"):
        resolve_config(tmp_path / "missing.toml", {})


def test_redaction_touches_only_credential_keys():
    red = redact({"agent": {"api_key": "sk-live-123", "api_base": "http://x", "max_tokens": 512, "auth_token": "t"}})
    assert red == {"agent": {"api_key": "<redacted>", "api_base": "http://x", "max_tokens": 512, "auth_token": "<redacted>"}}
    assert redact({"nested": [{"Authorization": "Bearer t"}]}) == {"nested": [{"Authorization": "<redacted>"}]}


@pytest.mark.parametrize(
    "toml, fragment",
    [
        ('[llm_args.agnet]\ntemperature = 0\n', "llm_args has unknown role 'agnet'; allowed: agent, user, guard"),
        ('[llm_args.agent]\napi_key = "sk-from-file"\n', "sets 'api_key': API keys come only from the environment"),
        ('[llm_args.user.extra_headers]\nAuthorization = "Bearer sk-x"\n', "sets 'extra_headers.Authorization'"),
        ('[llm_args.guard]\nclient_secret = "s3cr3t-value"\n', "sets 'client_secret'"),
        ('name = "../../x"\n', "a run name is one folder name"),
        ('name = "a/b"\n', "a run name is one folder name"),
        (f'name = "{"n" * 300}"\n', "at most 128 characters, got 300"),
        ('domains = []\n', "at least one domain is required"),
    ],
)
def test_config_files_are_checked_like_flags(tmp_path: Path, toml: str, fragment: str):
    f = tmp_path / "c.toml"
    f.write_text(toml)
    with pytest.raises(ConfigError) as err:
        resolve_config(f, {})
    message = str(err.value)
    assert fragment in message and "\n" not in message
    assert "sk-from-file" not in message and "s3cr3t" not in message  # never echo a credential


def test_max_tokens_is_an_ordinary_argument():
    cfg = resolve_config(None, {"llm_args": {"agent": {"max_tokens": 512}}})
    assert cfg.llm_args["agent"]["max_tokens"] == 512
    assert cfg.redacted()["llm_args"]["agent"]["max_tokens"] == 512
