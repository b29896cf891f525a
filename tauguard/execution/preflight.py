"""Checks of a run's inputs that need more than the config model: the strategy and its
options, the fault profile, model strings, credentials, the backend and the output folder.

Each failure is a :class:`PlanError` with a one-line message, raised before any work starts
and before anything is written.
"""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path
from typing import Any

from tauguard.errors import TauguardInputError
from tauguard.config import FORK, SIM, RunConfig, fork_available
from tauguard.execution.error_line import first_line


class PlanError(TauguardInputError):
    """The run cannot be planned (bad task id, option, model, folder...); one line for the user."""


def check_strategy(config: RunConfig, tasks: dict[str, list[str]] | None = None) -> None:
    """Create the strategy with the run's options (unknown or ill-typed options fail here),
    check them against the run's domains and, once tasks are known, make one session per
    domain: whatever would fail in every worker fails here, before any work."""
    from tauguard.errors import TauguardInputError
    from tauguard.strategy_api.registry import create_strategy

    try:
        strategy = create_strategy(config.strategy, dict(config.strategy_options))
        strategy.check_domains(list(config.domains))
        if tasks:
            from tauguard.tau2_adapter.replay import session_context

            for domain, ids in tasks.items():
                if ids:
                    strategy.new_session(
                        session_context(domain, ids[0], guard_llm=config.guard_llm, guard_llm_args=config.role_args("guard"))
                    )
    except TauguardInputError as exc:
        raise PlanError(first_line(exc)) from None
    except (ValueError, TypeError, KeyError) as exc:
        raise PlanError(f"strategy {config.strategy}: {first_line(exc)}") from None


def check_attack(config: RunConfig) -> None:
    """An attacked run over the default (policy-violation) set needs attack targets in every domain
    of the run: targets are optional per domain, and a domain without them would run unattacked."""
    if config.attack is None:
        return
    from tauguard.attacks.catalog import DEFAULT_SET, AttackDataError, require_targets

    if (config.attack_set or DEFAULT_SET) != DEFAULT_SET:
        return  # a named set attacks its own domain's tasks; the other domains' trials are benign by design
    try:
        for domain in config.domains:
            require_targets(domain)
    except AttackDataError as exc:
        raise PlanError(f"--attack {config.attack}: {first_line(exc)}") from None


def check_attack_targets(config: RunConfig, tasks: dict[str, list[str]]) -> None:
    """An attacked run over the default (policy-violation) set must attack something: a domain
    whose targets file rejects every temptation (retail: tau2's own tools refuse them), or a task
    selection without a target, would run unattacked and report no attack at all."""
    if config.attack is None:
        return
    from tauguard.attacks.catalog import DEFAULT_SET, no_targets, set_targets, target_domains
    from tauguard.tau2_adapter import compat as t2

    if (config.attack_set or DEFAULT_SET) != DEFAULT_SET:
        return
    empty = []
    for domain, ids in tasks.items():
        by_id = {str(task.id): task for task in t2.load_tasks(domain, config.split)}
        pv = {tid for tid in ids if tid in by_id and t2.is_policy_violation_task(domain, by_id[tid])}
        if not set(set_targets(DEFAULT_SET, domain, pv)) & set(ids):
            empty.append(domain)
    if not empty:
        return
    domain = empty[0]
    usable = [d for d in target_domains() if set_targets(DEFAULT_SET, d)]
    none = len(no_targets(domain))
    raise PlanError(
        f"--attack {config.attack}: no selected {domain} task has an attack target ({none} of its policy-violation "
        f"tasks have none; `tauguard attacks --domain {domain}` says why), so no trial would be attacked; "
        f"attack {' or '.join(usable) or 'a domain with targets'}, or select tasks that have a target"
    )


def load_fault_profile(name: str, config: RunConfig | None = None) -> dict[str, Any]:
    """The fault profile as a dict (a one-line error for an unknown or invalid one).

    With ``config``: its ``--uptake`` replaces the profile's, and a sim-agent run must find
    every rate it needs in the profile (:func:`tauguard.faults.profiles.check_needs`).
    """
    from tauguard.faults.profiles import check_needs, load_profile

    try:
        profile = load_profile(name)
        if config is not None and config.uptake is not None:
            sources = {**profile.sources, "uptake": f"--uptake {config.uptake:g} (an assumption, set for this run)"}
            profile = profile.model_copy(update={"uptake": config.uptake, "sources": sources})
        if config is not None and config.agent_llm == SIM:
            check_needs(profile, config.attack, config.sim_feedback)
        return profile.model_dump()
    except ValueError as exc:
        raise PlanError(first_line(exc)) from None


def _roles(config: RunConfig) -> list[tuple[str, str]]:
    roles = [("agent", config.agent_llm), ("user", config.user_llm)]
    if config.guard_llm:
        roles.append(("guard", config.guard_llm))
    return [(r, m) for r, m in roles if m != SIM]


def check_provider(role: str, model: str, args: dict[str, Any]) -> None:
    """:class:`PlanError` unless litellm resolves ``model``'s provider offline (no call is made)."""
    import litellm

    try:
        with contextlib.redirect_stdout(io.StringIO()):  # litellm prints a banner on failure
            litellm.get_llm_provider(model, custom_llm_provider=args.get("custom_llm_provider"), api_base=args.get("api_base"))
    except Exception:
        raise PlanError(
            f"unknown provider in the {role} model '{model}'; use provider/model "
            "(e.g. openai/gpt-4.1, anthropic/claude-3-5-sonnet-20240620) or 'sim'"
        ) from None


def check_models(config: RunConfig) -> None:
    """Resolve each model's provider offline (litellm's table) and check its credentials."""
    todo = _roles(config)
    if not todo:
        return
    for role, model in todo:
        check_provider(role, model, config.role_args(role))
    missing = missing_credentials(config)
    if missing:
        role, model, keys = missing[0]
        var = keys[0] if keys else "the provider's API key variable"
        if config.role_args(role).get("api_base") or config.role_args(role).get("base_url"):
            raise PlanError(
                f"no credentials for the {role} model '{model}' at its api_base: set {var} in the environment, "
                "or pass --no-key (config no_key = true) if the server needs no key"
            )
        raise PlanError(
            f"no credentials for the {role} model '{model}': set {var} in the environment, "
            "or run offline with --agent-llm sim --user-llm sim"
        )


def missing_credentials(config: RunConfig) -> list[tuple[str, str, list[str]]]:
    """(role, model, missing env vars) for each non-sim model whose provider key is unset."""
    todo = _roles(config)
    if not todo:
        return []
    import litellm

    missing = []
    for role, model in todo:
        args = config.role_args(role)
        api_base = args.get("api_base") or args.get("base_url")
        if api_base and config.no_key:
            continue  # the user said this server needs no key
        try:
            # With an api_base too: litellm knows which providers (openai/...) need their key
            # for any endpoint and which (hosted_vllm/, ollama/) need none.
            check = litellm.validate_environment(model=model, api_base=api_base)
        except Exception:
            continue
        if not check.get("keys_in_environment", True):
            missing.append((role, model, list(check.get("missing_keys") or [])))
    return missing


def check_backend(backend: str, address: str | None = None) -> None:
    """The backend is one an engine runs (a cluster engine only with its extra installed);
    ``--address`` goes with a cluster engine only."""
    from tauguard.execution.engines import backend_names, is_cluster, missing_extra

    if backend == FORK and fork_available() and address is None:
        return
    allowed = backend_names()
    if backend not in allowed:
        raise PlanError(f"unknown --backend '{backend}'; allowed: {', '.join(allowed)}")
    if is_cluster(backend):
        extra = missing_extra(backend)
        if extra is not None:
            raise PlanError(f"--backend {backend} needs the {extra} extra: pip install 'tauguard[{extra}]'")
    elif address is not None:
        raise PlanError(f"--address names a Ray or Dask cluster; use it with --backend ray or dask, not '{backend}'")


def check_workers(workers: int | None) -> None:
    """A worker count given on resume is within its range (tauguard.bounds)."""
    from tauguard.bounds import BOUNDS

    if workers is not None:
        try:
            BOUNDS["--workers"].check(workers, "--workers")
        except ValueError as exc:
            raise PlanError(str(exc)) from None


def check_out_dir(out: Path) -> None:
    """``out`` is a folder or can become one: no existing part of it is a regular file."""
    path = Path(out)
    for part in [path, *path.parents]:
        if part.exists():
            if not part.is_dir():
                what = "a file" if part.is_file() else "not a folder (a device, a FIFO or a socket)"
                raise PlanError(f"--out {out}: {part} is {what}, not a folder" if part.is_file() else f"--out {out}: {part} is {what}")
            if not os.access(part, os.W_OK | os.X_OK):
                raise PlanError(f"--out {out}: folder {part} is not writable")
            return


def check_resume_bounds(*, concurrency: int | None, max_cost: float | None) -> None:
    """The settings a resume may change are within their documented ranges (tauguard.bounds)."""
    from tauguard.bounds import BOUNDS

    try:
        if concurrency is not None:
            BOUNDS["--concurrency"].check(concurrency, "--concurrency")
        if max_cost is not None:
            BOUNDS["--max-cost"].check(max_cost, "--max-cost")
    except ValueError as exc:
        raise PlanError(str(exc)) from None


def check_cache_dir(cache: str | None) -> None:
    """``--cache DIR`` can hold the response cache: DIR is a writable folder, or every existing
    part of it is a folder and the nearest one is writable (DIR is created at the first
    completion). Found here, not unit by unit; nothing is created."""
    if cache is None:
        return
    path = Path(cache)
    for part in [path, *path.parents]:
        if not part.exists():
            continue
        if not part.is_dir():
            raise PlanError(f"--cache {cache}: {part} is not a folder")
        if not os.access(part, os.W_OK | os.X_OK):
            raise PlanError(f"--cache {cache}: folder {part} is not writable (the cache stores completions there)")
        db = part / "cache.db"
        if part == path and db.exists() and not (db.is_file() and os.access(db, os.R_OK | os.W_OK)):
            raise PlanError(f"--cache {cache}: {db} is not a readable and writable file")
        return
