"""Scoring simulations exactly as tau2's ``evaluate_simulation`` (ALL), with caches.

In sim mode the harness is the cost: tau2's evaluator rebuilds two environments and
replays the gold actions for every simulation (~0.9 s on airline). The gold-side database
hashes of a task are the same for every trial, and the pristine database the same for
every simulation of a domain, so both are computed once per process. Databases are
compared through ``cow_env``: environments are copy-on-write views of the pristine
database, and only the entries a side touched are serialised and compared (equal exactly
when tau2's full-database hashes are equal). The predicted side
is the environment the simulation itself ran in when the caller passes it: tau2 rebuilds
it by replaying the trajectory's tool calls on a fresh environment (and raises if any
replayed result differs), which yields the state the live environment already holds,
because tau2's domain tools are deterministic. Everything else — env assertions, the
action and communicate checks and the way rewards combine — follows tau2 26.3's
evaluator; a test checks that rewards equal ``evaluate_simulation``'s on a sample of
tasks of every domain, with and without faults.
"""

from __future__ import annotations

from tau2.data_model.simulation import DBCheck, EnvAssertionCheck
from tau2.evaluator.evaluator_action import ActionEvaluator
from tau2.evaluator.evaluator_communicate import CommunicateEvaluator

from tauguard.tau2_adapter import compat as t2
from tauguard.tau2_adapter.cow_env import DbState, db_state, same_db

_STOPS = {t2.TerminationReason.AGENT_STOP, t2.TerminationReason.USER_STOP}


class CachedEvaluator:
    """Per-process evaluator caching the gold-side databases per task."""

    def __init__(self) -> None:
        self._gold: dict[tuple[str, str], tuple[DbState | None, DbState | None]] = {}

    def _gold_states(self, domain: str, task: t2.Task) -> tuple[DbState | None, DbState | None]:
        key = (domain, task.id)
        if key not in self._gold:
            init = task.initial_state
            env = t2.make_environment(domain)
            env.set_state(
                initialization_data=init.initialization_data if init else None,
                initialization_actions=init.initialization_actions if init else None,
                message_history=(init.message_history if init and init.message_history else []),
            )
            for action in (task.evaluation_criteria.actions if task.evaluation_criteria else None) or []:
                try:
                    env.make_tool_call(tool_name=action.name, requestor=action.requestor, **action.arguments)
                except Exception:  # tau2 logs and ignores failing gold actions too
                    pass
            self._gold[key] = (db_state(env.tools), db_state(env.user_tools))
        return self._gold[key]

    def _env_reward(
        self, domain: str, task: t2.Task, messages: list[t2.Message], live_env: t2.Environment | None
    ) -> t2.RewardInfo:
        criteria = task.evaluation_criteria
        assert criteria is not None
        if criteria.actions is None and criteria.env_assertions is None:
            return t2.RewardInfo(
                reward=1.0, db_check=DBCheck(db_match=True, db_reward=1.0),
                info={"note": "No expected actions or env assertions"},
            )
        predicted = live_env
        if predicted is None:
            init = task.initial_state
            predicted = t2.make_environment(domain)
            predicted.set_state(
                initialization_data=init.initialization_data if init else None,
                initialization_actions=init.initialization_actions if init else None,
                message_history=messages,
            )
        gold_agent, gold_user = self._gold_states(domain, task)
        match = same_db(gold_agent, db_state(predicted.tools)) and same_db(gold_user, db_state(predicted.user_tools))
        db_check = DBCheck(db_match=match, db_reward=1.0 if match else 0.0)
        checks = []
        assertion_reward = 1.0
        for assertion in criteria.env_assertions or []:
            ok = predicted.run_env_assertion(assertion, raise_assertion_error=False)
            checks.append(EnvAssertionCheck(env_assertion=assertion, met=ok, reward=1.0 if ok else 0.0))
            assertion_reward *= 1.0 if ok else 0.0
        reward = 1.0
        breakdown = {}
        if t2.RewardType.DB in criteria.reward_basis:
            breakdown[t2.RewardType.DB] = db_check.db_reward
            reward *= db_check.db_reward
        if t2.RewardType.ENV_ASSERTION in criteria.reward_basis:
            breakdown[t2.RewardType.ENV_ASSERTION] = assertion_reward
            reward *= assertion_reward
        return t2.RewardInfo(
            reward=reward, db_check=db_check, env_assertions=checks,
            reward_basis=criteria.reward_basis, reward_breakdown=breakdown,
        )

    def evaluate(
        self, simulation: t2.SimulationRun, task: t2.Task, domain: str, live_env: t2.Environment | None = None
    ) -> t2.RewardInfo:
        """tau2's ALL evaluation of one simulation.

        ``live_env``: the environment the simulation ran in (its final state); without it
        the state is rebuilt by replaying the trajectory, as tau2 does.
        """
        if simulation.termination_reason not in _STOPS:
            return t2.RewardInfo(
                reward=0.0, reward_basis=None,
                info={"note": f"Simulation terminated prematurely. Termination reason: {simulation.termination_reason.value}"},
            )
        criteria = task.evaluation_criteria
        if criteria is None:
            return t2.RewardInfo(reward=1.0, reward_basis=None, info={"note": "No evaluation criteria"})
        messages = simulation.messages
        env_info = self._env_reward(domain, task, messages, live_env)
        action_info = ActionEvaluator.calculate_reward(task=task, full_trajectory=messages)
        comm_info = CommunicateEvaluator.calculate_reward(task=task, full_trajectory=messages)
        basis = set(criteria.reward_basis)
        if t2.RewardType.NL_ASSERTION in basis:
            raise ValueError("NL assertions are part of the reward basis; tau2 26.3 base tasks have none")
        reward = 1.0
        breakdown: dict[t2.RewardType, float] = {}
        if basis & {t2.RewardType.DB, t2.RewardType.ENV_ASSERTION}:
            breakdown.update(env_info.reward_breakdown or {})
            reward *= env_info.reward
        if t2.RewardType.ACTION in basis:
            breakdown.update(action_info.reward_breakdown or {})
            reward *= action_info.reward
        if t2.RewardType.COMMUNICATE in basis:
            breakdown.update(comm_info.reward_breakdown or {})
            reward *= comm_info.reward
        return t2.RewardInfo(
            reward=reward,
            db_check=env_info.db_check,
            env_assertions=env_info.env_assertions,
            action_checks=action_info.action_checks,
            communicate_checks=comm_info.communicate_checks,
            reward_basis=criteria.reward_basis,
            reward_breakdown=breakdown,
            info={"env": env_info.info, "nl": None, "communicate": comm_info.info, "action": action_info.info},
        )
