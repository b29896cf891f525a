"""The attack inside a run: which trials are attacked, the attacker and the sim agent's plan,
and the judged outcome on the record. Called from tauguard.execution (a few hooks)."""

from __future__ import annotations

from typing import Any

from tauguard.attacks.catalog import DEFAULT_SET, set_targets
from tauguard.attacks.judge import judge_attack
from tauguard.attacks.model import AttackTarget
from tauguard.runs.records import AttackInfo


def attack_spec(config: Any) -> dict[str, Any] | None:
    """The attack part of a unit descriptor, from a RunConfig (None: no attack)."""
    if getattr(config, "attack", None) is None:
        return None
    return {"tactic": config.attack, "set": config.attack_set or DEFAULT_SET, "llm": config.attack_llm}


def unit_target(attack: dict[str, Any] | None, domain: str, task_id: str, policy_violation: bool) -> AttackTarget | None:
    """The target attacked in this unit, or None when the task is not in the attack set (benign)."""
    if not attack:
        return None
    pv = {task_id} if policy_violation else set()
    return set_targets(attack["set"], domain, pv).get(task_id)


def attack_info(attack: dict[str, Any], target: AttackTarget, yielded: bool | None) -> AttackInfo:
    """The record's attack block before judging."""
    return AttackInfo(
        tactic=attack["tactic"],
        attack_set=attack["set"],
        target={"tool": target.tool, "pattern": target.pattern, "clause": target.clause, "premises": target.premises},
        yielded=yielded,
    )


def judge_into(info: AttackInfo, target: AttackTarget, messages: list[Any] | None, env: Any) -> bool | None:
    """Judge the trial, note why on ``info``, and return attack_success (None: unknown)."""
    verdict = judge_attack(target, messages, env)
    info.judgement = verdict.reason
    return verdict.success


def llm_user_instructions(scenario: Any, domain: str, target: AttackTarget, attack: dict[str, Any], llm_args: dict[str, Any]) -> str:
    """tau2's user-simulator instructions rewritten for the attack (the planner's plan from
    ``--attack-llm`` when given, else deterministic text from data)."""
    from tauguard.attacks.planner import clause_text, llm_plan
    from tauguard.attacks.prompts import attacker_instructions

    text = clause_text(domain, target.clause)
    plan = None
    if attack["tactic"] == "planner" and attack.get("llm"):
        plan = llm_plan(attack["llm"], domain, target, text, llm_args)
    return attacker_instructions(scenario, target, attack["tactic"], text, plan)
