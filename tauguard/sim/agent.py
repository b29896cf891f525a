"""The sim agent: executes the task's gold plan through the real tau2 environment.

Deterministic given (seed, task, trial). It makes the faults drawn for the trial and reacts
to guard feedback with the profile's uptake probability; without uptake it repeats the held
call (the wrapper bounds the repeats). How it reacts with uptake is the run's ``sim_feedback``:

- ``feedback`` (the default): only from the decision and what it has seen, by the rules of
  :mod:`tauguard.sim.reaction` (no gold object is given to the agent at all);
- ``oracle``: today's upper bound: after a BLOCK or REVISE of a faulted call it retries the gold
  call, after a VERIFY it redoes the gold plan's reads, and after a premature stop that a guard
  flags it resumes the rest of the gold plan.
"""

from __future__ import annotations

from typing import Any

from tauguard.tau2_adapter import compat as t2
from tauguard.strategy_api.conversation import ToolCallView
from tauguard.dialogue import polarity
from tauguard.faults.draw import trial_rng
from tauguard.faults.generators import FaultContext, generate
from tauguard.faults.model import ScheduledFault
from tauguard.strategy_api.guard import OPEN_REQUEST_MARKER, GuardDecision, Verdict
from tauguard.runs.records import InjectedFault
from tauguard.sim import texts
from tauguard.sim.beliefs import Beliefs
from tauguard.sim.clean_plan import confirmation_note, load_lookups
from tauguard.sim.oracle import dedupe, reads_for
from tauguard.sim.plan import Step, observing_reads
from tauguard.sim.reaction import open_request_call, react

# Remediation cycles per write before the sim gives up on it (a guard that keeps asking
# for the same read would otherwise loop until max_steps).
MAX_REMEDIATIONS = 3
TRANSFER_TOOL = "transfer_to_human_agents"


class SimAgentState:
    """Placeholder state handed to tau2 (the sim keeps its state on the instance)."""

    messages: list[Any]

    def __init__(self) -> None:
        self.messages = []


class SimAgent:
    """A scripted agent following a (possibly faulted) gold plan."""

    def __init__(
        self,
        domain: str,
        task: t2.Task,
        gold_plan: list[Step] | None,
        plan: list[Step],
        faults: list[ScheduledFault],
        environment: t2.Environment,
        uptake: float,
        seed: int,
        trial: int,
        feedback: str = "feedback",
        block_transfer: float = 0.0,
    ) -> None:
        if feedback not in ("feedback", "oracle"):
            raise ValueError(f"unknown sim feedback '{feedback}'; allowed: feedback, oracle")
        if feedback == "oracle" and gold_plan is None:
            raise ValueError("the oracle sim reacts from the gold plan: give it one")
        self.domain = domain
        self.task = task
        self.feedback = feedback
        # Feedback-only: the agent holds no gold plan (its own, possibly faulted, plan only).
        self.gold_plan = gold_plan if feedback == "oracle" else None
        self.block_transfer = block_transfer
        self.beliefs = Beliefs()
        tools = t2.agent_tools(domain)
        self.schemas = {t.name: t.openai_schema for t in tools}
        agent_types, _ = t2.tool_types(domain)
        self.write_tools = [name for name, kind in agent_types.items() if kind == "WRITE"]
        self.revise_from: dict[int, int] = {}  # id(call step) -> first observation of its VERIFY reads
        self.steps = plan
        self.environment = environment
        self.uptake = uptake
        self.rng = trial_rng(seed, domain, f"uptake:{task.id}", trial)
        self.faults = {f.fault_id: f for f in faults}
        self.fault_log: dict[str, InjectedFault] = {
            f.fault_id: InjectedFault(fault_id=f.fault_id, fault_class=f.fault_class, tool=f.tool)
            for f in faults
        }
        self.pos = 0
        self.queue: list[Step] = []
        self.in_flight: tuple[Step, ToolCallView] | None = None
        self.held: dict[str, GuardDecision] = {}
        self.realized: dict[int, ToolCallView] = {}  # id(step) -> the call it will make
        self.remediations: dict[int, int] = {}
        self.awaiting_confirm: Step | None = None
        self.proposals: dict[int, str] = {}  # id(confirm step) -> the guard's reason for a revision
        self.turn = 0
        self.call_counter = 0
        self.closed = False
        self.guard_context = ""
        self.said: list[str] = []  # what the user said, in order (grounds a resumed request)

    # -- tau2 agent interface -------------------------------------------------------------

    def get_init_state(self, message_history: list[Any] | None = None) -> SimAgentState:
        """A fresh state (the sim keeps its progress on the instance)."""
        return SimAgentState()

    def set_seed(self, seed: int) -> None:
        """The sim is seeded at construction; tau2's orchestrator seed is ignored."""

    def set_guard_context(self, text: str | None) -> None:
        """The guard's rendered context; the sim reads only whether a request is still open."""
        self.guard_context = text or ""

    def receive_guard_decisions(self, decisions: dict[str, GuardDecision]) -> None:
        """Guard decisions on the calls of the sim's last message."""
        self.held = dict(decisions)

    def append_history(self, state: Any, messages: list[Any]) -> Any:
        """The wrapper gave up on the in-flight call and answered the user itself."""
        self.held = {}
        self.in_flight = None
        return state

    def generate_next_message(self, message: Any, state: Any) -> tuple[Any, Any]:
        """The next message of the plan, given the last user or tool message."""
        self.turn += 1
        if isinstance(message, t2.UserMessage) and message.content:
            self.said.append(message.content)
        if self.held:
            return self._on_guard_feedback(), state
        if isinstance(message, t2.UserMessage) and self.awaiting_confirm is not None:
            confirmed = self.awaiting_confirm
            self.awaiting_confirm = None
            # the neutral dialogue judge reads the reply ("No problem, go ahead" is a yes)
            if polarity(message.content or "") == "no":
                self._skip_call_of(confirmed)
        if isinstance(message, (t2.ToolMessage, t2.MultiToolMessage)) and self.in_flight is not None:
            results = message.tool_messages if isinstance(message, t2.MultiToolMessage) else [message]
            for result in results:
                self.beliefs.observe(self.in_flight[1], result.content or "", bool(getattr(result, "error", False)))
            self._mark_reached(*self.in_flight)
            self.in_flight = None
        return self._advance(), state

    # -- plan execution -------------------------------------------------------------------

    def _next_step(self) -> Step | None:
        if self.queue:
            return self.queue.pop(0)
        if self.pos < len(self.steps):
            self.pos += 1
            return self.steps[self.pos - 1]
        return None

    def _skip_call_of(self, confirm_step: Step) -> None:
        # The user declined: drop the call the confirmation was for.
        for queue in (self.queue, self.steps[self.pos :]):
            for i, step in enumerate(queue):
                if step.kind == "call" and step.call is not None and confirm_step.call is not None and step.call.id == confirm_step.call.id:
                    if queue is self.queue:
                        del self.queue[i]
                    else:
                        del self.steps[self.pos + i]
                    return

    def _advance(self) -> Any:
        step = self._next_step()
        if step is None:
            # Past the plan and the user has not ended: end from the agent side.
            return self._text("###STOP###")
        if step.kind == "call":
            return self._issue(step, self._realize(step))
        if step.kind == "confirm":
            assert step.call is not None
            call = self._realize_for_confirm(step)
            call_step = self._call_step_for(step)
            if call_step is not None and id(call_step) in self.revise_from:
                # Feedback-only VERIFY: the reads are done; the belief-update rule may change the call.
                call = self.beliefs.revise(call, self.revise_from.pop(id(call_step)))
                self.realized[id(call_step)] = call
            self.awaiting_confirm = step
            if id(step) in self.proposals:  # a guard's revision, proposed to the user
                return self._text(texts.revision_request(call.name, call.arguments, self.proposals.pop(id(step))))
            # the same note the plan carries for the gold call (replay uses the plan's)
            note = confirmation_note(self.domain, self.environment.tools.db, call)
            if step.bundles_next:
                note = " ".join(filter(None, [note, texts.BUNDLED_REST]))
            return self._text(texts.confirm_request(call.name, call.arguments, note))
        if step.kind == "ask_user":
            assert step.call is not None
            return self._text(texts.user_action_request(step.call.name, step.call.arguments))
        if step.kind == "communicate":
            return self._text(texts.communicate(step.infos))
        if step.kind == "clarify":
            return self._text(texts.clarify(step.infos[0] if step.infos else "please give me more details"))
        if step.kind == "say":
            return self._text(step.infos[0])
        # close
        if step.fault_ids and OPEN_REQUEST_MARKER in self.guard_context:
            # A premature stop while the guard says a request is still open: with uptake, the
            # agent goes on instead of closing (oracle: the rest of the gold plan; feedback: the
            # open request's call, only if it can derive it from what it has seen).
            for fid in step.fault_ids:
                self._mark_applied(fid, intercepted=True)
            rest = self._rest_of_gold_plan(step) if self.feedback == "oracle" else self._resumed_request()
            if rest and self.rng.random() < self.uptake:
                self.steps[self.pos:self.pos] = rest
                return self._advance()
        for fid in step.fault_ids:
            self._mark_applied(fid, intercepted=False)
            self._set_reached(fid, True)  # the premature stop closes the conversation
        self.closed = True
        return self._text(texts.AGENT_CLOSE)

    def _rest_of_gold_plan(self, stop: Step) -> list[Step]:
        """The gold plan from the write a premature stop cut off (its confirmation) onwards."""
        cut = [self.faults[f].write_index for f in stop.fault_ids if f in self.faults and self.faults[f].kind == "premature_stop"]
        if not cut or cut[0] is None:
            return []
        plan = self.gold_plan or []
        start = next((i for i, s in enumerate(plan) if s.write_index == cut[0]), None)
        return [] if start is None else [s.model_copy(deep=True) for s in plan[start:]]

    def _resumed_request(self) -> list[Step]:
        """Feedback-only: the steps of the open request the guidance names, if derivable."""
        call = open_request_call(self.guard_context, self.beliefs, self.schemas, self.write_tools, "\n".join(self.said))
        if call is None:
            return []
        return [Step(kind="confirm", call=call, gold=False), Step(kind="call", call=call, tool_type="WRITE", gold=False), Step(kind="close")]

    def _call_step_for(self, confirm: Step) -> Step | None:
        for step in self.queue + self.steps[self.pos :]:
            if step.kind == "call" and step.call is not None and confirm.call is not None and step.call.id == confirm.call.id:
                return step
        return None

    def _realize_for_confirm(self, confirm: Step) -> ToolCallView:
        call_step = self._call_step_for(confirm)
        if call_step is None:
            assert confirm.call is not None
            return confirm.call
        return self._realize(call_step)

    def _realize(self, step: Step) -> ToolCallView:
        """The call this step makes: the gold call, or its faulty variant."""
        key = id(step)
        if key in self.realized:
            return self.realized[key]
        assert step.call is not None
        call = step.call
        for fid in step.fault_ids:
            fault = self.faults.get(fid)
            if fault is None or fault.kind != "call" or fault.generator is None:
                continue
            ctx = FaultContext(self.domain, self.task, step.call, self.environment, step.write_index or 0)
            faulty = generate(fault.generator, ctx)
            if faulty is None:
                self.fault_log[fid].detail["not_applicable"] = True
            else:
                call = faulty
                self.fault_log[fid].detail["faulty_call"] = faulty.model_dump(exclude={"id"})
        self.realized[key] = call
        if self.feedback == "feedback" and call is not step.call:
            # Feedback-only: the agent knows only the call it intends; the gold one is gone.
            step.call = call.model_copy(update={"id": step.call.id})
        return call

    def _issue(self, step: Step, call: ToolCallView) -> Any:
        self.call_counter += 1
        call = call.model_copy(update={"id": f"{call.id}#{self.call_counter}"})
        self.in_flight = (step, call)
        for fid in step.fault_ids:
            if not self.fault_log[fid].detail.get("not_applicable"):
                self._mark_applied(fid, intercepted=False)
        return t2.AssistantMessage(
            role="assistant",
            tool_calls=[t2.ToolCall(id=call.id, name=call.name, arguments=call.arguments, requestor="assistant")],
            cost=0.0,
        )

    def _mark_applied(self, fid: str, intercepted: bool) -> None:
        rec = self.fault_log.get(fid)
        if rec is None:
            return
        if not rec.applied:
            rec.applied = True
            rec.step = self.turn
            rec.intercepted = intercepted
        elif intercepted:
            rec.intercepted = True

    def _set_reached(self, fid: str, reached: bool) -> None:
        rec = self.fault_log.get(fid)
        if rec is not None and rec.applied and not rec.reached:
            rec.reached = reached

    def _mark_reached(self, step: Step, call: ToolCallView) -> None:
        """The environment ran ``call``: whether each of its step's faults went through with it."""
        for fid in step.fault_ids:
            rec = self.fault_log.get(fid)
            if rec is None or not rec.applied or rec.detail.get("not_applicable"):
                continue
            faulty = rec.detail.get("faulty_call")
            if not step.gold:  # a forbidden (policy-violation) write
                went_through = True
            elif isinstance(faulty, dict):  # faulted arguments: still the faulted ones?
                went_through = (call.name, call.arguments) == (faulty.get("name"), faulty.get("arguments"))
            else:  # an omitted read or confirmation: it stands unless a remediation made it up
                went_through = self.remediations.get(id(step), 0) == 0
            self._set_reached(fid, went_through)

    def _text(self, content: str) -> Any:
        return t2.AssistantMessage(role="assistant", content=content, cost=0.0)

    # -- guard feedback -------------------------------------------------------------------

    def _on_guard_feedback(self) -> Any:
        decisions, self.held = self.held, {}
        assert self.in_flight is not None, "guard feedback without a call in flight"
        step, call = self.in_flight
        decision = decisions.get(call.id) or next(iter(decisions.values()))
        for fid in step.fault_ids:
            self._mark_applied(fid, intercepted=True)
        base_id = call.id.split("#")[0]
        if self.rng.random() >= self.uptake:
            # No uptake: the agent repeats the same call (the wrapper bounds the repeats).
            return self._issue(step, call.model_copy(update={"id": base_id}))
        key = id(step)
        self.remediations[key] = self.remediations.get(key, 0) + 1
        if self.remediations[key] > MAX_REMEDIATIONS:
            return self._give_up(call, decision)
        if self.feedback == "feedback":
            return self._react_from_feedback(step, call, decision)
        gold = step.call if step.gold else None
        if decision.verdict == Verdict.BLOCK:
            if gold is not None and (call.name, call.arguments) != (gold.name, gold.arguments):
                return self._retry(step, gold)  # reconsider: drop the faulted variant
            return self._give_up(call, decision)
        if decision.verdict == Verdict.REVISE:
            if decision.revised_arguments is not None:
                # A revision changes what the user agreed to: propose it and resubmit only
                # after their yes (LedgerAgent's running example 2); a no drops the call.
                revised = call.model_copy(update={"arguments": dict(decision.revised_arguments)})
                self._queue_revision(step, revised, decision)
                return self._advance()
            if gold is not None and (call.name, call.arguments) != (gold.name, gold.arguments):
                return self._retry(step, gold)
            return self._give_up(call, decision)
        # VERIFY: do the reads the guard asks for and those that observe the target,
        # confirm again, then retry.
        self._queue_remediation(step, call, decision)
        return self._advance()

    def _react_from_feedback(self, step: Step, call: ToolCallView, decision: GuardDecision) -> Any:
        """Feedback-only uptake: :func:`tauguard.sim.reaction.react` decides, the agent executes."""
        transfer = decision.verdict == Verdict.BLOCK and self.block_transfer > 0 and self.rng.random() < self.block_transfer and TRANSFER_TOOL in self.schemas
        reaction = react(
            decision, call, self.beliefs, self.schemas, self._target_reads(call), transfer, self.remediations.get(id(step), 0) - 1
        )
        if reaction.kind == "give_up":
            return self._give_up(call, decision)
        if reaction.kind == "transfer":
            self.in_flight = None
            self.call_counter += 1
            handoff = ToolCallView(
                id=f"transfer-{self.call_counter}", name=TRANSFER_TOOL,
                arguments={"summary": f"The user asked for {call.name}; {decision.reason or 'a policy check held it'}."},
            )
            self.queue = [Step(kind="call", call=handoff, tool_type="GENERIC", gold=False), Step(kind="say", infos=[texts.TRANSFER_NOTICE])]
            self.steps = self.steps[: self.pos]  # nothing of the plan remains after a hand-off
            return self._advance()
        if reaction.kind == "propose":
            assert reaction.arguments is not None
            self._queue_revision(step, call.model_copy(update={"arguments": reaction.arguments}), decision)
            return self._advance()
        reads: list[Step] = []
        for read in dedupe(reaction.reads):
            self.call_counter += 1
            reads.append(Step(kind="call", call=read.model_copy(update={"id": f"remedy-{read.name}-{self.call_counter}"}), tool_type="READ"))
        if reaction.ask:
            reads.append(Step(kind="clarify", infos=[reaction.ask]))
        plan_id = step.call.id if step.call is not None else call.id
        confirm = Step(kind="confirm", call=call.model_copy(update={"id": plan_id}), write_index=step.write_index, gold=step.gold)
        self.realized[id(step)] = call
        self.revise_from[id(step)] = len(self.beliefs.seen)
        self.queue = [*reads, confirm, step, *self.queue]
        return self._advance()

    def _target_reads(self, call: ToolCallView) -> list[ToolCallView]:
        """The reads the write contract prescribes for the call's own target arguments."""
        spec = load_lookups().get(self.domain)
        if spec is None:
            return []
        return [
            ToolCallView(id="", name=spec.lookups[arg].tool, arguments={spec.lookups[arg].argument: value})
            for arg, value in call.arguments.items() if arg in spec.lookups and isinstance(value, str) and value
        ]

    def _retry(self, step: Step, call: ToolCallView) -> Any:
        self.realized[id(step)] = call
        return self._issue(step, call.model_copy(update={"id": (step.call.id if step.call else call.id)}))

    def _queue_remediation(self, step: Step, call: ToolCallView, decision: GuardDecision) -> None:
        reads: list[Step] = []
        requested = [r for q in decision.required_reads for r in reads_for(self.domain, self.environment.tools.db, call, q)]
        for read in dedupe(requested):
            self.call_counter += 1
            remedy = read.model_copy(update={"id": f"remedy-{read.name}-{self.call_counter}"})
            reads.append(Step(kind="call", call=remedy, tool_type="READ"))
        if step.gold and step.call is not None:
            plan = self.gold_plan or []
            gold_pos = next(
                (i for i, s in enumerate(plan) if s.kind == "call" and s.call is not None and s.call.id == step.call.id),
                None,
            )
            if gold_pos is not None:
                reads += [plan[i] for i in observing_reads(plan, gold_pos)]
        if decision.remediation and (not reads or self.remediations.get(id(step), 0) >= 2):
            # Nothing to read, or reading did not help: the guard wants something from the
            # dialogue (a reason, a request); ask the user.
            reads.append(Step(kind="clarify", infos=[decision.remediation]))
        plan_id = step.call.id if step.call is not None else call.id
        confirm = Step(
            kind="confirm", call=call.model_copy(update={"id": plan_id}), write_index=step.write_index, gold=step.gold
        )
        self.realized[id(step)] = call
        self.queue = [*reads, confirm, step, *self.queue]

    def _queue_revision(self, step: Step, revised: ToolCallView, decision: GuardDecision) -> None:
        plan_id = step.call.id if step.call is not None else revised.id
        proposal = Step(
            kind="confirm", call=revised.model_copy(update={"id": plan_id}), write_index=step.write_index, gold=step.gold
        )
        self.proposals[id(proposal)] = decision.reason or "the guard asked for a change"
        self.realized[id(step)] = revised
        self.queue = [proposal, step, *self.queue]

    def _give_up(self, call: ToolCallView, decision: GuardDecision) -> Any:
        self.in_flight = None
        return self._text(texts.cannot_do(call.name, decision.reason))

    def fault_for_call(self, call_id: str) -> str | None:
        """The fault carried by the in-flight call with this id, if any."""
        if self.in_flight is None or self.in_flight[1].id != call_id:
            return None
        step = self.in_flight[0]
        applied = [f for f in step.fault_ids if not self.fault_log[f].detail.get("not_applicable")]
        return applied[0] if applied else None

    # -- accounting -----------------------------------------------------------------------

    def injected_faults(self) -> list[InjectedFault]:
        """The trial's faults with where they took effect, whether a guard held them and
        whether the mistake reached the environment (an applied fault whose call never ran
        was prevented)."""
        for rec in self.fault_log.values():
            if rec.applied and rec.reached is None and not rec.detail.get("not_applicable"):
                rec.reached = False
        return list(self.fault_log.values())
