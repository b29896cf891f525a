"""Run configuration: packaged defaults (tauguard/defaults/default.toml), overridden by --config, then flags."""

from __future__ import annotations

import multiprocessing
import re
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from tauguard.bounds import BOUNDS as _B
from tauguard.datafiles import DataFileError, read_toml
from tauguard.defaults import default_config
from tauguard.domains import known_domain
from tauguard.errors import TauguardInputError
from tauguard.secrets import credential_keys, redact

SIM = "sim"
# --backend auto resolves here, in the config, to tauguard's fork engine where the platform
# forks and to loky elsewhere (the execution layer reads these; config imports nothing of it).
FORK = "fork"

LLM_ROLES = ("agent", "user", "guard")
# A run id is one path segment: it names a folder directly under `out`.
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+=@-]*$")
MAX_RUN_ID = 128


class ConfigError(TauguardInputError):
    """A configuration value is invalid; the message is one line for the user."""


def _check_headers(role: str, key: str, headers: Any) -> None:
    """HTTP headers are names mapped to one line of text: anything else fails only later, inside
    the provider's client, once per completion (the values are secrets: never quoted here)."""
    if not isinstance(headers, dict):
        raise ValueError(f"llm_args['{role}'].{key} must be a table/object of header names to text values")
    for name, text in headers.items():
        if not isinstance(text, str):
            raise ValueError(f"llm_args['{role}'].{key}['{name}'] must be text, got {type(text).__name__} (its value is not shown)")
        if "\r" in text or "\n" in text:
            raise ValueError(f"llm_args['{role}'].{key}['{name}'] must be one line (its value is not shown)")


class RunConfig(BaseModel):
    """Everything a run needs, resolved."""

    model_config = ConfigDict(extra="forbid")

    strategy: str = "react"
    strategy_options: dict[str, Any] = Field(default_factory=dict)
    domains: list[str] = Field(default_factory=lambda: ["airline"])
    trials: int = Field(default=1, ge=_B["-k/--trials"].low, le=_B["-k/--trials"].high)
    split: str = "base"
    task_ids: list[str] | None = None
    num_tasks: int | None = Field(default=None, ge=1, le=_B["--num-tasks"].high)
    agent_llm: str = SIM
    user_llm: str = SIM
    guard_llm: str | None = None
    llm_args: dict[str, dict[str, Any]] = Field(default_factory=dict)
    # The `api_base` servers of the roles (a local vLLM, ollama...) need no API key: none is
    # looked up before the run, and a placeholder is sent instead of the provider's key.
    no_key: bool = False
    workers: int = Field(default=2, ge=1, le=_B["--workers"].high)
    # "auto": tauguard's fork backend where the platform forks (Linux), else joblib's loky.
    backend: str = "auto"
    # An existing Ray or Dask cluster for --backend ray/dask (ray://host:10001, host:6379,
    # auto; tcp://host:8786); None: a local cluster of `workers` processes for the run.
    address: str | None = None
    # Simulations in flight (threads when a real LLM is in play); None: per mode, see
    # tauguard.execution.concurrency.default_concurrency.
    concurrency: int | None = Field(default=None, ge=1, le=_B["--concurrency"].high)
    # Per-model rate limits {model: [requests per minute, tokens per minute (optional)]},
    # shared by the run's simulations; retries of failing completions before a unit is
    # recorded as an infrastructure error (see tauguard.provider).
    rate_limits: dict[str, list[float]] = Field(default_factory=dict)
    max_retries: int = Field(default=5, ge=0, le=_B["max_retries (config)"].high)
    # A directory of stored completions (tauguard.response_cache); None: no cache.
    cache: str | None = None
    # No new simulation starts once the run's recorded cost (USD, all roles) reaches this.
    max_cost: float | None = Field(default=None, ge=_B["--max-cost"].low, le=_B["--max-cost"].high, allow_inf_nan=False)
    seed: int = Field(default=300, ge=0, le=_B["--seed (run)"].high)
    max_steps: int = Field(default=200, ge=1, le=_B["--max-steps"].high)
    max_errors: int = Field(default=10, ge=1, le=_B["max_errors (config)"].high)
    max_guard_retries: int = Field(default=3, ge=0, le=_B["max_guard_retries (config)"].high)
    faults: str = "none"
    # How the sim agent reacts to a guard (tauguard.sim.reaction): "feedback" from the decision
    # and the conversation only; "oracle" from the gold plan (an upper bound on a guard's gain).
    sim_feedback: Literal["feedback", "oracle"] = "feedback"
    # Overrides the fault profile's uptake (an assumption; see `tauguard run --uptake`).
    uptake: float | None = Field(default=None, ge=0.0, le=1.0)
    # Adversarial user (tauguard/attacks): a tactic, the attacked task set, an LLM for the planner.
    attack: str | None = None
    attack_set: str | None = None
    attack_llm: str | None = None
    name: str | None = None
    out: str = "runs"

    @field_validator("domains")
    @classmethod
    def _known_domains(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("at least one domain is required")
        for d in value:
            known_domain(d)
        if len(set(value)) != len(value):
            raise ValueError("a domain is listed twice")
        return value

    @field_validator("task_ids")
    @classmethod
    def _some_task_ids(cls, value: list[str] | None) -> list[str] | None:
        # `--task-ids ""` is a mistake, not "the whole split" (leave the option out for that).
        if value is not None and not value:
            raise ValueError("at least one task id is required (leave --task-ids out for the whole split)")
        return value

    @field_validator("rate_limits")
    @classmethod
    def _finite_rate_limits(cls, value: dict[str, list[float]]) -> dict[str, list[float]]:
        limit = _B["--rate-limit RPM / TPM"]
        for model, numbers in value.items():
            if not 1 <= len(numbers) <= 2:
                raise ValueError(f"rate limit of '{model}' is [RPM] or [RPM, TPM], got {len(numbers)} numbers")
            for n in numbers:
                limit.check(float(n), f"the rate limit of '{model}'")
        return value

    @field_validator("attack")
    @classmethod
    def _known_tactic(cls, value: str | None) -> str | None:
        from tauguard.attacks.model import TACTICS

        if value is not None and value not in TACTICS:
            raise ValueError(f"unknown attack tactic '{value}'; allowed: {', '.join(TACTICS)}")
        return value

    @field_validator("attack_set")
    @classmethod
    def _known_attack_set(cls, value: str | None) -> str | None:
        from tauguard.attacks.catalog import attack_set_names

        if value is not None and value not in attack_set_names():
            raise ValueError(f"unknown attack set '{value}'; allowed: {', '.join(attack_set_names())}")
        return value

    @field_validator("llm_args", mode="before")
    @classmethod
    def _check_llm_args(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            raise ValueError("llm_args must map roles (agent, user, guard) to litellm arguments")
        for role, args in value.items():
            if role not in LLM_ROLES:
                raise ValueError(f"llm_args has unknown role '{role}'; allowed: {', '.join(LLM_ROLES)}")
            if not isinstance(args, dict):
                raise ValueError(f"llm_args['{role}'] must be a table/object of litellm arguments")
            secrets = credential_keys(args)
            if secrets:
                raise ValueError(
                    f"llm_args['{role}'] sets '{secrets[0]}': API keys come only from the environment "
                    "(e.g. OPENAI_API_KEY), so they are never written to run files"
                )
            for key, headers in args.items():
                if str(key).lower().replace("-", "_").endswith("headers"):
                    _check_headers(role, str(key), headers)
        return value

    @field_validator("address")
    @classmethod
    def _plain_address(cls, value: str | None) -> str | None:
        if value is None:
            return value
        if not value.strip() or any(c.isspace() for c in value):
            raise ValueError("a cluster address is one word, e.g. ray://host:10001, host:6379, auto or tcp://host:8786")
        if "@" in value.split("://", 1)[-1]:
            # Run files record the address; credentials come from the environment only.
            raise ValueError("a cluster address must not contain credentials (user:password@)")
        return value

    @field_validator("name")
    @classmethod
    def _one_path_segment(cls, value: str | None) -> str | None:
        if value is None:
            return value
        if len(value) > MAX_RUN_ID:
            raise ValueError(f"a run name has at most {MAX_RUN_ID} characters, got {len(value)}")
        if not _RUN_ID.match(value):
            raise ValueError(
                "a run name is one folder name: letters, digits and . _ + = @ -, starting with a letter or digit"
            )
        return value

    @field_validator("cache")
    @classmethod
    def _cache_dir(cls, value: str | None) -> str | None:
        # Absolute, so a resumed run (from any directory) and every worker find the same cache.
        if value is None:
            return value
        if not value.strip():
            raise ValueError("must not be empty")
        path = Path(value).expanduser().absolute()
        if path.exists() and not path.is_dir():
            raise ValueError("must be a directory (it is a file)")
        return str(path)

    @field_validator("strategy", "split", "out", "backend", "agent_llm", "user_llm", "faults")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("backend")
    @classmethod
    def _resolve_auto(cls, value: str) -> str:
        if value != "auto":
            return value
        return FORK if fork_available() else "loky"

    @property
    def simulated(self) -> bool:
        """Whether any role is played by the built-in sim model."""
        return SIM in (self.agent_llm, self.user_llm)

    def role_args(self, role: str) -> dict[str, Any]:
        """litellm keyword arguments of one role (agent, user or guard)."""
        return dict(self.llm_args.get(role, {}))

    def redacted(self) -> dict[str, Any]:
        """The config as a dict with secret-looking values removed (for run files)."""
        redacted: dict[str, Any] = redact(self.model_dump())  # a dict stays a dict
        return redacted


def fork_available() -> bool:
    """Whether this platform can fork worker processes (Linux; macOS can, but its system
    libraries forbid it)."""
    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


def _read_toml(path: Any) -> dict[str, Any]:
    try:
        return read_toml(path)
    except DataFileError as exc:
        raise ConfigError(f"config {exc}") from None


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _normalise(raw: dict[str, Any]) -> dict[str, Any]:
    # Accept the CLI's singular spelling in files too.
    raw = dict(raw)
    if "domain" in raw:
        d = raw.pop("domain")
        raw["domains"] = [d] if isinstance(d, str) else d
    return raw


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"]) or "config"
    msg = err["msg"].removeprefix("Value error, ")
    if err["type"] == "extra_forbidden":
        allowed = ", ".join(RunConfig.model_fields)
        return f"unknown config key '{loc}'; allowed: {allowed}"
    shown = err.get("input")
    if isinstance(shown, (dict, list)) or loc.startswith("llm_args") or loc == "address":
        return f"invalid value for '{loc}': {msg}"  # never echo arguments (they may hold a key)
    if isinstance(shown, str) and len(shown) > 60:
        shown = shown[:57] + "..."
    return f"invalid value for '{loc}' ({shown!r}): {msg}"


def resolve_config(config_file: Path | None, overrides: dict[str, Any]) -> RunConfig:
    """Defaults < config file < command-line overrides (``None`` values are ignored)."""
    raw = _read_toml(default_config())  # packaged; missing is an error, never a silent fallback
    if config_file is not None:
        raw = _merge(raw, _normalise(_read_toml(config_file)))
    raw = _merge(raw, _normalise({k: v for k, v in overrides.items() if v is not None}))
    try:
        return RunConfig.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(_first_error(exc)) from None
