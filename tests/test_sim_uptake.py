"""The sim agent's reaction to guard feedback: remediation with uptake, stubbornness without."""

from __future__ import annotations

from tauguard.tau2_adapter import compat as t2
from tauguard.agents.guarded import GuardedAgent
from tauguard.strategy_api.conversation import Conversation, ToolCallView
from tauguard.tau2_adapter.evaluation import CachedEvaluator
from tauguard.faults.draw import apply_plan_faults, draw_trial_faults
from tauguard.faults.model import FaultProfile
from tauguard.strategy_api.guard import GuardDecision, GuardSession, Verdict
from tauguard.sim import texts
from tauguard.sim.agent import SimAgent
from tauguard.sim.clean_plan import sim_plan
from tauguard.sim.plan import targets
from tauguard.sim.user import SimUser


class ReadThenConfirmGate(GuardSession):
    """VERIFY a write unless its target was read and the user said yes since the last write."""

    def before_write(self, call: ToolCallView, conversation: Conversation) -> GuardDecision:
        read_ids: set[str] = set()
        for e in conversation.tool_results():
            if not e.error and e.tool_call is not None:
                read_ids |= targets(e.tool_call)
        if not targets(call) & read_ids:
            return GuardDecision(verdict=Verdict.VERIFY, reason="target not read", rule_id="t.read")
        last_user = [e.content for e in conversation.messages() if e.kind == "user_message"][-1:]
        if last_user != [texts.USER_YES]:
            return GuardDecision(verdict=Verdict.VERIFY, reason="no explicit yes", rule_id="t.confirm")
        return GuardDecision.allow()


def _run(task_id: str, profile: FaultProfile, session: GuardSession | None):
    domain = "retail"
    task = next(t for t in t2.load_tasks(domain, "base") if t.id == task_id)
    env = t2.make_environment(domain)
    gold = sim_plan(domain, task)
    faults = draw_trial_faults(profile, domain, task.id, 0, 1, gold)
    plan = apply_plan_faults(domain, task.id, gold, faults)
    agent_types, user_types = t2.tool_types(domain)
    inner = SimAgent(domain, task, gold, plan, faults, env, profile.uptake, 1, 0)
    agent = GuardedAgent(inner, session, agent_types, max_retries=2)
    sim = t2.orchestrator_class()(domain=domain, agent=agent, user=SimUser(task, set(user_types)), environment=env,
                                  task=task, max_steps=200, max_errors=10, seed=0).run()
    reward = CachedEvaluator().evaluate(sim, task, domain, live_env=env).reward
    return reward, inner.injected_faults(), agent.events


def test_guard_catches_skipped_steps_and_the_sim_remediates():
    for fault in ("skip_read", "skip_confirmation"):
        profile = FaultProfile(name=fault, uptake=1.0, rates={fault: 1.0})
        reward, faults, events = _run("5", profile, ReadThenConfirmGate())
        assert reward == 1.0, fault  # the missing step was done, then the write went through
        first = next(f for f in faults if f.fault_id == fault)
        assert first.applied and first.intercepted, fault
        assert first.reached is False, fault  # detected and prevented: the write ran after the remediation
        verdicts = [e.verdict for e in events if e.hook == "before_write"]
        assert Verdict.VERIFY in verdicts and verdicts[-1] == Verdict.ALLOW
        held = next(e for e in events if e.hook == "before_write" and e.verdict == Verdict.VERIFY)
        assert held.fault_id == fault


def test_without_a_guard_the_fault_passes_unnoticed_and_is_recorded():
    profile = FaultProfile(name="skip", uptake=1.0, rates={"skip_confirmation": 1.0})
    reward, faults, events = _run("5", profile, None)
    # tau2 scores the end state: a skipped confirmation does not change the DB
    assert reward == 1.0 and events == []
    rec = next(f for f in faults if f.fault_id == "skip_confirmation")
    assert rec.applied and rec.intercepted is False
    assert rec.reached is True  # neither detected nor prevented


class HoldOnce(GuardSession):
    """VERIFY the first write, then allow everything: a guard that detects but does not prevent."""

    def __init__(self) -> None:
        self.held = False

    def before_write(self, call: ToolCallView, conversation: Conversation) -> GuardDecision:
        if self.held:
            return GuardDecision.allow()
        self.held = True
        return GuardDecision(verdict=Verdict.VERIFY, reason="once", rule_id="t.once")


def test_a_held_call_the_agent_repeats_until_it_runs_is_detected_not_prevented():
    profile = FaultProfile(name="stubborn", uptake=0.0, rates={"skip_confirmation": 1.0})
    _, faults, events = _run("5", profile, HoldOnce())
    rec = next(f for f in faults if f.fault_id == "skip_confirmation")
    assert rec.applied and rec.intercepted is True and rec.reached is True
    assert [e.verdict for e in events if e.hook == "before_write"][:2] == [Verdict.VERIFY, Verdict.ALLOW]


def test_without_uptake_the_sim_repeats_and_the_wrapper_gives_up():
    profile = FaultProfile(name="stubborn", uptake=0.0, rates={"skip_read": 1.0})
    reward, faults, events = _run("5", profile, ReadThenConfirmGate())
    assert reward == 0.0
    assert [e.hook for e in events].count("retry_exhausted") >= 1


def _ledger(task_id: str) -> GuardSession | None:
    from tauguard.strategy_api.registry import create_strategy
    from tauguard.tau2_adapter.replay import session_context

    return create_strategy("ledger", {}).new_session(session_context("retail", task_id))


def _revision_turns(task_id: str, profile: FaultProfile) -> tuple[float, list[str]]:
    """Run a retail task under the ledger; the sim user's replies to revision proposals."""
    task = next(t for t in t2.load_tasks("retail", "base") if t.id == task_id)
    env = t2.make_environment("retail")
    gold = sim_plan("retail", task)
    faults = draw_trial_faults(profile, "retail", task.id, 0, 1, gold)
    plan = apply_plan_faults("retail", task.id, gold, faults)
    agent_types, user_types = t2.tool_types("retail")
    inner = SimAgent("retail", task, gold, plan, faults, env, profile.uptake, 1, 0)
    agent = GuardedAgent(inner, _ledger(task.id), agent_types, max_retries=2)
    sim = t2.orchestrator_class()(domain="retail", agent=agent, user=SimUser(task, set(user_types)), environment=env,
                                  task=task, max_steps=200, max_errors=10, seed=0).run()
    reward = CachedEvaluator().evaluate(sim, task, "retail", live_env=env).reward
    texts_ = [m.content or "" for m in sim.messages]
    replies = [texts_[i + 1] for i, t in enumerate(texts_[:-1]) if texts.REVISION_PREFIX in t]
    return reward, replies


def test_a_revise_is_proposed_to_the_user_who_declines_what_they_did_not_ask_for():
    # Retail task 12: the user wants the refund on PayPal (not the original method); the
    # ledger's REVISE proposes the original card, the user says no, nothing is refunded.
    reward, replies = _revision_turns("12", FaultProfile(name="none", uptake=1.0, rates={}))
    assert replies == [texts.USER_NO]
    assert reward == 1.0


def test_a_revise_back_to_what_the_user_wants_is_accepted_then_executed():
    # Task 11's gold refund goes to the original card; the fault refunds elsewhere, the
    # ledger proposes the original card, the user agrees, the corrected return executes.
    reward, replies = _revision_turns("11", FaultProfile(name="refund", uptake=1.0, rates={"retail.refund_method": 1.0}))
    assert replies and set(replies) == {texts.USER_YES}  # both of the task's returns were faulted
    assert reward == 1.0
