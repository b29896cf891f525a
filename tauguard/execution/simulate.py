"""Runs one (task, trial) unit in a worker process and returns a plain record dict.

Heavy per-process state (tau2 imports, pristine databases, gold hashes, tasks, strategy
objects) is cached at module level, so each worker pays for it once.
"""

from __future__ import annotations

import gc
import threading
import time
import traceback
from functools import lru_cache
from typing import Any

from tauguard.tau2_adapter import compat as t2
from tauguard.config import SIM
from tauguard.strategy_api.guard import Strategy
from tauguard.process import score_record
from tauguard.runs.records import InjectedFault, TrialRecord, is_success
from tauguard.usage_ledger import RoleUsage
from tauguard.execution.unit import UnitSpec
from tauguard.secrets import scrub

_EVALUATOR: Any = None
_WARM: set[str] = set()
_WARM_LOCK = threading.Lock()


@lru_cache(maxsize=None)
def _task(domain: str, split: str, task_id: str) -> t2.Task:
    for task in t2.load_tasks(domain, split):
        if task.id == task_id:
            return task
    raise KeyError(f"task {task_id} not in {domain}/{split}")


@lru_cache(maxsize=None)
def _strategy(name: str, options_json: str) -> Strategy:
    import json

    from tauguard.strategy_api.registry import create_strategy

    return create_strategy(name, json.loads(options_json))


def _evaluator() -> Any:
    global _EVALUATOR
    if _EVALUATOR is None:
        from tauguard.tau2_adapter.evaluation import CachedEvaluator

        _EVALUATOR = CachedEvaluator()
    return _EVALUATOR


def warm_up(domain: str) -> None:
    """Pay a worker's one-off costs for ``domain`` now, then keep the garbage collector off them.

    The heavy imports, the pristine database and the task list live for the whole process;
    ``gc.freeze()`` moves them out of the collector's generations, so the full collections a
    simulation's garbage triggers no longer walk them (181 ms of a 444 ms airline trial).
    """
    if domain in _WARM:
        return
    with _WARM_LOCK:  # simulation threads start together: one of them warms, the others wait
        if domain in _WARM:
            return
        t2.orchestrator_class()
        t2.load_tasks(domain, "base")
        t2.tool_types(domain)
        t2.agent_tools(domain)
        t2.user_tools(domain)
        from tauguard.tau2_adapter.cow_env import warm

        warm(domain)
        gc.collect()
        gc.freeze()
        _WARM.add(domain)


def prepare(specs: list[UnitSpec]) -> None:
    """Warm this process for ``specs`` before simulations start (their domains, tasks, and
    for real LLMs litellm's import), so concurrent threads do not each pay for it at once."""
    for spec in specs:
        warm_up(spec.domain)
        _task(spec.domain, spec.split, spec.task_id)
    if any(s.agent_llm != SIM or s.user_llm != SIM or s.guard_llm is not None for s in specs):
        import litellm  # noqa: F401 - its import is most of a real-LLM worker's start-up
    gc.collect()
    gc.freeze()


def _provider_discipline(spec: UnitSpec) -> None:
    """Shared rate limits and retries for this process's real-LLM completions."""
    from tauguard.provider import RateLimit, install

    from tauguard.secrets import remember_config_secrets

    remember_config_secrets(spec.llm_args)  # header values and URL userinfo: scrubbed like keys
    limits = {m: RateLimit(v[0], v[1] if len(v) > 1 else None) for m, v in spec.rate_limits.items()}
    install(limits, spec.max_retries, share=max(1, spec.rate_share), cache=spec.cache, no_key=spec.no_key)


def _idle(event: Any) -> bool:
    """A hook that did nothing (an observe-only ``after_tool``): not worth a record line."""
    return (
        event.hook == "after_tool" and event.verdict is None and not event.guidance and not event.evidence
        and not event.rule_id and not event.usage.llm_calls and event.raw is None
    )


def _guard_role(from_events: dict[str, float], booked: RoleUsage | None) -> RoleUsage:
    """The guard's usage in a trial: what its events report, or what the ledger booked for the
    role when it booked more calls. Every call through :mod:`tauguard.llm_call` is booked,
    the LLM dialogue judge's included, which no guard event reports; a guard's events may also
    count calls it made outside ``llm_call``, so the larger count is the one kept."""
    events = RoleUsage(
        cost=from_events["cost"], prompt_tokens=int(from_events["prompt_tokens"]),
        completion_tokens=int(from_events["completion_tokens"]), calls=int(from_events["llm_calls"]),
    )
    if booked is None or booked.calls <= events.calls:
        return events
    return booked.model_copy()


def _usage(messages: list[Any], cls: type[Any]) -> RoleUsage:
    usage = RoleUsage()
    costs = []
    for m in messages:
        if not isinstance(m, cls):
            continue
        usage.calls += 1
        costs.append(m.cost)
        u = m.usage or {}
        usage.prompt_tokens += int(u.get("prompt_tokens") or 0)
        usage.completion_tokens += int(u.get("completion_tokens") or 0)
    usage.cost = None if any(c is None for c in costs) else float(sum(costs))
    return usage


def _build_agent(spec: UnitSpec, task: t2.Task, env: t2.Environment, target: Any = None) -> tuple[Any, Any]:
    """The inner agent, and the sim agent (for fault accounting) when it is one."""
    if spec.agent_llm == SIM:
        from tauguard.faults.draw import apply_plan_faults, draw_trial_faults
        from tauguard.faults.model import FaultProfile
        from tauguard.sim.agent import SimAgent
        from tauguard.sim.clean_plan import sim_plan

        profile = FaultProfile.model_validate(spec.fault_profile)
        gold = sim_plan(spec.domain, task, pristine=env if task.initial_state is None else None)
        faults = draw_trial_faults(profile, spec.domain, task.id, spec.trial, spec.seed, gold)
        if target is not None and spec.attack is not None:
            from tauguard.sim.attacker import attacked_plan, draws_yield

            yields = draws_yield(profile, spec.attack["tactic"], spec.domain, task.id, spec.trial, spec.seed)
            plan, faults = attacked_plan(spec.domain, task.id, gold, faults, target, spec.attack["tactic"], yields)
        else:
            yields = None
            plan = apply_plan_faults(spec.domain, task.id, gold, faults)
        # Feedback-only: the agent is given no gold plan (its reaction cannot read one).
        agent = SimAgent(
            spec.domain, task, gold if spec.sim_feedback == "oracle" else None, plan, faults, env,
            1.0 if profile.uptake is None else profile.uptake, spec.seed, spec.trial,
            feedback=spec.sim_feedback, block_transfer=profile.block_transfer or 0.0,
        )
        agent.attack_yielded = yields  # type: ignore[attr-defined]  # for the attacked record
        return agent, agent
    from tauguard.agents.llm import GuardContextLLMAgent

    agent = GuardContextLLMAgent(
        tools=t2.agent_tools(spec.domain), domain_policy=env.get_policy(), llm=spec.agent_llm, llm_args=spec.llm_args.get("agent", {})
    )
    return agent, None


def _build_user(spec: UnitSpec, task: t2.Task, env: t2.Environment, target: Any = None) -> Any:
    _, user_types = t2.tool_types(spec.domain)
    if spec.user_llm == SIM:
        if target is not None and spec.attack is not None:
            from tauguard.sim.attacker import SimAttacker

            return SimAttacker(task, set(user_types), target, spec.attack["tactic"])
        from tauguard.sim.user import SimUser

        return SimUser(task, set(user_types))
    user_tools = t2.user_tools(spec.domain)
    instructions = str(task.user_scenario)
    if target is not None and spec.attack is not None:
        from tauguard.attacks.runtime import llm_user_instructions

        instructions = llm_user_instructions(instructions, spec.domain, target, spec.attack, spec.llm_args.get("user", {}))
    from tauguard.agents.llm_user import LLMUser

    return LLMUser(
        tools=user_tools, instructions=instructions, llm=spec.user_llm, llm_args=spec.llm_args.get("user", {})
    )


_LOGS_SCRUBBED = False


def _scrub_logs(logger: Any) -> None:
    # --verbose shows tau2's own log lines; they may quote a provider's error (and its key).
    global _LOGS_SCRUBBED
    if not _LOGS_SCRUBBED:
        logger.configure(patcher=lambda record: record.update(message=scrub(record["message"])))
        _LOGS_SCRUBBED = True


def run_unit(spec: UnitSpec) -> dict[str, Any]:
    """Run one simulation end to end; never raises (errors become the record's ``error``)."""
    from loguru import logger

    if not spec.verbose:
        logger.disable("tau2")
    else:
        _scrub_logs(logger)
    start = time.perf_counter()
    base: dict[str, Any] = dict(
        run_id=spec.run_id, domain=spec.domain, task_id=spec.task_id, trial=spec.trial, seed=spec.seed,
        strategy=spec.strategy, simulated=SIM in (spec.agent_llm, spec.user_llm), policy_violation_task=False,
    )
    try:
        import json

        from tauguard.agents.guarded import GuardedAgent
        from tauguard.usage_ledger import start_unit
        from tauguard.tau2_adapter.replay import session_context

        ledger = start_unit()  # every LLM call of this simulation is booked by role

        warm_up(spec.domain)
        if spec.agent_llm != SIM or spec.user_llm != SIM or spec.guard_llm is not None:
            _provider_discipline(spec)
        task = _task(spec.domain, spec.split, spec.task_id)
        base["policy_violation_task"] = t2.is_policy_violation_task(spec.domain, task)
        env = t2.make_environment(spec.domain)
        agent_types, _ = t2.tool_types(spec.domain)
        strategy = _strategy(spec.strategy, json.dumps(spec.strategy_options, sort_keys=True))
        session = strategy.new_session(
            session_context(spec.domain, task.id, guard_llm=spec.guard_llm, guard_llm_args=spec.llm_args.get("guard", {}))
        )
        from tauguard.attacks.runtime import unit_target

        target = unit_target(spec.attack, spec.domain, task.id, base["policy_violation_task"])
        inner, sim_agent = _build_agent(spec, task, env, target)
        agent = GuardedAgent(inner, session, agent_types, max_retries=spec.max_guard_retries)
        user = _build_user(spec, task, env, target)
        orchestrator = t2.orchestrator_class()(
            domain=spec.domain, agent=agent, user=user, environment=env, task=task,
            max_steps=spec.max_steps, max_errors=spec.max_errors, seed=spec.trial_seed,
        )
        simulation = orchestrator.run()
        simulation.reward_info = _evaluator().evaluate(simulation, task, spec.domain, live_env=env)
        reward = simulation.reward_info.reward
        guard = agent.guard_usage()
        faults: list[InjectedFault] = sim_agent.injected_faults() if sim_agent is not None else []
        dumped = simulation.model_dump(mode="json")
        attack_fields: dict[str, Any] = {}
        if target is not None and spec.attack is not None:
            from tauguard.attacks.runtime import attack_info, judge_into

            info = attack_info(spec.attack, target, getattr(sim_agent, "attack_yielded", None))
            success = judge_into(info, target, dumped.get("messages"), env)
            attack_fields = {"attacked": True, "attack": info, "attack_success": success}
        record = TrialRecord(
            **base,
            **attack_fields,
            reward=reward,
            success=is_success(reward),
            termination_reason=str(simulation.termination_reason.value),
            guard_events=[e for e in agent.events if not _idle(e)],
            faults=faults,
            usage=ledger.merged({
                "agent": _usage(simulation.messages, t2.AssistantMessage),
                "user": _usage(simulation.messages, t2.UserMessage),
                "guard": _guard_role(guard, ledger.roles.get("guard")),
            }),
            duration_s=time.perf_counter() - start,
            simulation=dumped,
        )
        record.process = score_record(record)
    except Exception as exc:  # an infrastructure error, kept apart from task failures
        tb = traceback.format_exc(limit=8)
        # Providers may echo the request's key in their error text: scrub before it leaves.
        error = scrub(f"{type(exc).__name__}: {exc}\n{tb}")
        record = TrialRecord(**base, error=error, duration_s=time.perf_counter() - start)
    return record.model_dump(mode="json")
