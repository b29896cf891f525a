"""The sim user judges from the scenario and the conversation only; a run with gold, plan and
database poisoned for the user and the agent exercises REVISE with arguments, open-request
guidance and a BLOCK followed by a transfer."""

from __future__ import annotations

from typing import Any

from tauguard.tau2_adapter import compat as t2
from tauguard.agents.guarded import GuardedAgent
from tauguard.faults.draw import apply_plan_faults, draw_trial_faults
from tauguard.faults.model import FaultProfile
from tauguard.strategy_api.conversation import Conversation, ToolCallView
from tauguard.strategy_api.guard import OPEN_REQUEST_MARKER, GuardDecision, GuardSession, Verdict
from tauguard.sim import texts
from tauguard.sim.agent import SimAgent
from tauguard.sim.clean_plan import sim_plan
from tauguard.sim.user import SimUser, scenario_accepts, stated, stated_calls

SCENARIO = "You want your order #W8665881 delivered to Suite 641, paid with your PayPal account. You are 34 years old."


# -- the proposal rule ------------------------------------------------------------------------


def test_a_value_is_stated_by_word_or_by_its_kind():
    assert stated("#W8665881", SCENARIO) and stated("W8665881", SCENARIO)
    assert stated("Suite 641", SCENARIO) and stated("suite 641", SCENARIO)
    assert stated("paypal_7644869", SCENARIO)  # its kind, "paypal"
    assert not stated("credit_card_9513926", SCENARIO)
    assert stated("gift_card_7250692", "refund to credit card; if not possible, refund to GC")  # by its initials
    assert not stated("gift_card_7250692", "a gc of words") and not stated("paypal_1", "P is a letter")
    assert not stated("Suite 64", SCENARIO)  # a word, not a substring
    assert not stated(4, "4 bags") and not stated(True, "True")  # small numbers and flags say nothing
    assert stated(34, SCENARIO) and not stated(35, SCENARIO)


def test_the_user_defends_what_the_scenario_states_and_defers_on_the_rest():
    held = {"order_id": "#W8665881", "address2": "Suite 641", "zip": "78712"}
    assert not scenario_accepts(SCENARIO, held, {**held, "address2": "Suite 100"})
    assert scenario_accepts(SCENARIO, held, {**held, "zip": "78713"})  # never told the zip
    assert scenario_accepts(SCENARIO, {**held, "address2": "Suite 100"}, held)  # back to what it wants
    pay = {"payment_method_id": "paypal_1"}
    assert not scenario_accepts(SCENARIO, pay, {"payment_method_id": "credit_card_2"})
    assert scenario_accepts(SCENARIO, {"payment_method_id": "gift_card_1"}, {"payment_method_id": "credit_card_2"})
    assert scenario_accepts(SCENARIO, None, {"anything": "x"})  # nothing stated before: defers
    nested = {"passengers": [{"first_name": "Suite 641"}]}
    assert not scenario_accepts(SCENARIO, nested, {"passengers": [{"first_name": "Bob"}]})


def test_stated_calls_are_read_from_any_confirmation_or_proposal():
    text = texts.confirm_request("cancel_pending_order", {"order_id": "#W1", "reason": "no longer needed"})
    assert stated_calls(text) == [("cancel_pending_order", {"order_id": "#W1", "reason": "no longer needed"})]
    proposal = texts.revision_request("t", {"a": {"b": [1, 2]}}, "because. x")
    assert stated_calls(proposal) == [("t", {"a": {"b": [1, 2]}})]
    assert stated_calls("I will perform it with {broken") == []


# -- a run with the gold, the plan and the database poisoned ------------------------------------


class _Poison:
    """Stands for gold, plan or database: records every use."""

    def __init__(self, uses: list[str], name: str) -> None:
        self._uses, self._name = uses, name

    def __getattr__(self, attr: str) -> Any:
        self._uses.append(f"{self._name}.{attr}")
        return None

    def __iter__(self) -> Any:
        self._uses.append(f"{self._name}.iter")
        return iter([])

    def __len__(self) -> int:
        self._uses.append(f"{self._name}.len")
        return 0


class _ArmedEnv:
    """The agent's handle on the environment: its database is poisoned once a guard has held a call."""

    def __init__(self, env: Any, uses: list[str]) -> None:
        self._env, self._uses, self.armed = env, uses, False

    @property
    def tools(self) -> Any:
        if not self.armed:
            return self._env.tools
        env = self

        class _Tools:
            def __getattr__(self, attr: str) -> Any:
                if attr == "db":
                    return _Poison(env._uses, "db")
                return getattr(env._env.tools, attr)

        return _Tools()

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._env, attr)


class _Scripted(GuardSession):
    """Holds the first write with ``decision`` (arming the poison), then allows; renders ``context``."""

    def __init__(self, decision: GuardDecision | None, env: _ArmedEnv, context: str | None = None) -> None:
        self.decision, self.env, self.context, self.held = decision, env, context, False

    def before_write(self, call: ToolCallView, conversation: Conversation) -> GuardDecision:
        if self.decision is None or self.held:
            return GuardDecision.allow()
        self.held = self.env.armed = True
        return self.decision

    def render_context(self) -> str | None:
        if self.context is not None:
            self.env.armed = True
        return self.context


def _poisoned(domain: str, task_id: str, profile: FaultProfile, decision: GuardDecision | None, context: str | None = None) -> tuple[list[str], Any, SimAgent]:
    from tauguard.tau2_adapter.evaluation import CachedEvaluator

    task = next(t for t in t2.load_tasks(domain, "base") if t.id == task_id)
    env = t2.make_environment(domain)
    gold = sim_plan(domain, task)
    faults = draw_trial_faults(profile, domain, task.id, 0, 1, gold)
    plan = apply_plan_faults(domain, task.id, gold, faults)
    agent_types, user_types = t2.tool_types(domain)
    uses: list[str] = []
    armed = _ArmedEnv(env, uses)
    inner = SimAgent(domain, task, gold, plan, faults, armed, profile.uptake or 0.0, 1, 0,  # type: ignore[arg-type]
                     feedback="feedback", block_transfer=profile.block_transfer or 0.0)
    inner.gold_plan = _Poison(uses, "plan")  # type: ignore[assignment]
    inner.task = task.model_copy(update={"evaluation_criteria": _Poison(uses, "agent.gold")})
    user_task = task.model_copy(update={"evaluation_criteria": _Poison(uses, "user.gold")})
    agent = GuardedAgent(inner, _Scripted(decision, armed, context), agent_types, max_retries=2)
    sim = t2.orchestrator_class()(domain=domain, agent=agent, user=SimUser(user_task, set(user_types)), environment=env,
                                  task=task, max_steps=120, max_errors=10, seed=0).run()
    CachedEvaluator().evaluate(sim, task, domain, live_env=env)
    return uses, sim, inner


def _after(sim: Any, marker: str) -> list[str]:
    contents = [m.content or "" for m in sim.messages]
    return [contents[i + 1] for i, c in enumerate(contents[:-1]) if marker in c]


def _writes(sim: Any, name: str) -> list[dict[str, Any]]:
    return [c.arguments for m in sim.messages if m.role == "assistant" for c in (m.tool_calls or []) if c.name == name]


# Retail task 17: the user wants order #W8665881 delivered to "Suite 641" (stated in the scenario).
NONE = FaultProfile(name="none", uptake=1.0, block_transfer=0.0)


def test_revise_with_arguments_the_user_refuses_a_change_to_what_the_scenario_states():
    gold_write = {"order_id": "#W8665881", "address1": "123 Elm Street", "address2": "Suite 641", "city": "Austin",
                  "state": "TX", "country": "USA", "zip": "78712"}
    revise = GuardDecision(verdict=Verdict.REVISE, reason="check the suite", revised_arguments={**gold_write, "address2": "Suite 100"})
    uses, sim, _ = _poisoned("retail", "17", NONE, revise)
    assert uses == []
    assert _after(sim, texts.REVISION_PREFIX) == [texts.USER_NO]
    assert _writes(sim, "modify_pending_order_address") == []  # the held call never reaches the conversation


def test_revise_with_arguments_the_user_accepts_a_change_it_was_never_told_about():
    revised = {"order_id": "#W8665881", "address1": "123 Elm St", "address2": "Suite 641", "city": "Austin",
               "state": "TX", "country": "USA", "zip": "78712"}
    uses, sim, _ = _poisoned("retail", "17", NONE, GuardDecision(verdict=Verdict.REVISE, reason="normalise", revised_arguments=revised))
    assert uses == []
    assert _after(sim, texts.REVISION_PREFIX) == [texts.USER_YES]
    assert _writes(sim, "modify_pending_order_address")[-1] == revised


def test_block_then_transfer_never_reads_gold_plan_or_database():
    profile = FaultProfile(name="handoff", uptake=1.0, block_transfer=1.0)
    uses, sim, _ = _poisoned("airline", "9", profile, GuardDecision(verdict=Verdict.BLOCK, reason="not allowed"))
    assert uses == []
    assert _writes(sim, "transfer_to_human_agents") and not _writes(sim, "cancel_reservation")
    assert t2.TRANSFER in (sim.messages[-1].content or "")


def test_open_request_guidance_is_resumed_from_what_the_user_said_and_the_agent_read():
    # Airline task 19: the user names no reservation id, the agent read one reservation's details.
    profile = FaultProfile(name="stop", uptake=1.0, block_transfer=0.0, rates={"premature_stop": 1.0})
    uses, sim, agent = _poisoned("airline", "19", profile, None, f"{OPEN_REQUEST_MARKER}: cancel_reservation.")
    assert uses == []
    resumed = _writes(sim, "cancel_reservation")
    assert resumed, "the open request was not taken up"
    seen = agent.beliefs.values("reservation_id")
    assert resumed[0]["reservation_id"] in seen
    # without the guidance the premature stop closes the conversation: nothing is cancelled
    _, closed, _ = _poisoned("airline", "19", profile, None, None)
    assert not _writes(closed, "cancel_reservation")


def test_the_user_reads_no_gold_in_its_source():
    import inspect

    from tauguard.sim import user

    assert "evaluation_criteria" not in inspect.getsource(user)
