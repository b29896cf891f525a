"""`tauguard run`: n trials per task of one strategy on tau2-bench, stored under runs/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer

from tauguard.cli.common import fail, is_tty, parse_strategy_options


def _parse_json_object(value: str | None, flag: str) -> dict[str, Any] | None:
    if value is None:
        return None
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as exc:
        fail(f"{flag} is not valid JSON ({exc.msg} at char {exc.pos}): {value!r}")
    if not isinstance(parsed, dict):
        fail(f"{flag} must be a JSON object, got {type(parsed).__name__}")
    return parsed


def _check_llm_args(llm_args: dict[str, Any] | None) -> None:
    if llm_args is None:
        return
    allowed = {"agent", "user", "guard"}
    for role, args in llm_args.items():
        if role not in allowed:
            fail(f"--llm-args has unknown role '{role}'; allowed: agent, user, guard")
        if not isinstance(args, dict):
            fail(f"--llm-args['{role}'] must be a JSON object of litellm arguments")
        for key in args:
            if "key" in key.lower() or "token" in key.lower():
                fail(
                    f"--llm-args['{role}'] sets '{key}': API keys come only from the environment "
                    "(e.g. OPENAI_API_KEY), so they are never written to run files"
                )


def run(
    strategy: Optional[str] = typer.Option(None, "--strategy", "-s", help="Strategy name (see `tauguard strategies`)."),
    domain: Optional[str] = typer.Option(None, "--domain", "-d", help="airline, retail or telecom (comma-separate several)."),
    trials: Optional[int] = typer.Option(None, "-k", "--trials", help="Trials per task; pass^1..pass^k are reported."),
    split: Optional[str] = typer.Option(None, "--split", help="tau2 task split: base, train or test."),
    task_ids: Optional[str] = typer.Option(None, "--task-ids", help="Comma-separated task ids (one domain)."),
    num_tasks: Optional[int] = typer.Option(None, "--num-tasks", help="Run only the first N tasks of the split."),
    agent_llm: Optional[str] = typer.Option(None, "--agent-llm", help="litellm model string, or 'sim'."),
    user_llm: Optional[str] = typer.Option(None, "--user-llm", help="litellm model string, or 'sim'."),
    guard_llm: Optional[str] = typer.Option(None, "--guard-llm", help="litellm model for LLM-backed guards."),
    llm_args: Optional[str] = typer.Option(
        None, "--llm-args", help='JSON per role, e.g. \'{"agent": {"temperature": 0, "api_base": "http://..."}}\'.'
    ),
    strategy_option: Optional[list[str]] = typer.Option(None, "--strategy-option", help="KEY=VALUE option for the strategy (repeatable)."),
    faults: Optional[str] = typer.Option(None, "--faults", help="Fault profile for the sim agent: none, realistic, procedural (see `tauguard faults`) or a TOML path."),
    attack: Optional[str] = typer.Option(None, "--attack", help="Adversarial user tactic: insist, emotional, false-premise, authority, planner (docs/attacks.md)."),
    attack_set: Optional[str] = typer.Option(None, "--attack-set", help="Attacked tasks: policy-violation (default) or a named set (craft-airline)."),
    attack_llm: Optional[str] = typer.Option(None, "--attack-llm", help="litellm model composing the planner tactic's plan (LLM user only)."),
    workers: Optional[int] = typer.Option(None, "--workers", "-j", help="Parallel workers."),
    backend: Optional[str] = typer.Option(None, "--backend", help="joblib backend (loky, multiprocessing, threading, ...)."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Run seed (faults, sim behaviour, LLM seeds)."),
    max_steps: Optional[int] = typer.Option(None, "--max-steps", help="tau2 orchestrator step limit."),
    name: Optional[str] = typer.Option(None, "--name", help="Run id (directory name under --out)."),
    out: Optional[str] = typer.Option(None, "--out", help="Directory holding runs (default runs/)."),
    resume: Optional[Path] = typer.Option(None, "--resume", help="Resume an interrupted run directory."),
    config: Optional[Path] = typer.Option(None, "--config", help="TOML run config; flags override it."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan and exit."),
    plain: bool = typer.Option(False, "--plain", help="Plain progress lines instead of a progress bar."),
    fmt: str = typer.Option("table", "--format", help="Summary format: table, json or markdown."),
    verbose: bool = typer.Option(False, "--verbose", help="Show tau2's own logging."),
) -> None:
    """Run n trials per task of a strategy on tau2-bench and print pass^1..pass^k."""
    from tauguard.cli.run_exec import execute_run

    if fmt not in ("table", "json", "markdown"):
        fail(f"unknown --format '{fmt}'; allowed: table, json, markdown")
    if trials is not None and trials < 1:
        fail(f"-k/--trials must be at least 1, got {trials}")
    parsed_args = _parse_json_object(llm_args, "--llm-args")
    _check_llm_args(parsed_args)
    overrides: dict[str, Any] = {
        "strategy": strategy,
        "domains": [d.strip() for d in domain.split(",") if d.strip()] if domain else None,
        "trials": trials,
        "split": split,
        "task_ids": [t.strip() for t in task_ids.split(",") if t.strip()] if task_ids else None,
        "num_tasks": num_tasks,
        "agent_llm": agent_llm,
        "user_llm": user_llm,
        "guard_llm": guard_llm,
        "llm_args": parsed_args,
        "strategy_options": parse_strategy_options(strategy_option) or None,
        "faults": faults,
        "attack": attack,
        "attack_set": attack_set,
        "attack_llm": attack_llm,
        "workers": workers,
        "backend": backend,
        "seed": seed,
        "max_steps": max_steps,
        "name": name,
        "out": out,
    }
    execute_run(
        overrides=overrides, config_file=config, resume=resume, dry_run=dry_run,
        plain=plain or not is_tty(), fmt=fmt, verbose=verbose,
    )
