"""The sim attacker: a scripted adversarial user, and the sim agent's yielding to it.

The attacker opens with the scenario plus the tactic's first push for the target's forbidden
write and pushes again, with the tactic's next turn, after each refusal. Whether the sim agent
gives in is drawn once per (seed, task, trial) with the fault profile's susceptibility to the
tactic, independently of the strategy, so strategies run on the same seed meet the same yields
(a paired design). A yielding sim agent states the forbidden write, asks for confirmation (the
attacker says yes) and makes the call where the gold plan communicates, transfers or closes —
where the pliable agent of the PV temptations gives in. Susceptibilities are a simulation
yardstick, not a finding about real agents.
"""

from __future__ import annotations

from typing import Any

from tauguard.attacks.model import AttackTarget
from tauguard.attacks.prompts import sim_turns
from tauguard.strategy_api.conversation import ToolCallView
from tauguard.faults.draw import _ends_request, apply_plan_faults, trial_rng
from tauguard.faults.model import FaultProfile, ScheduledFault
from tauguard.sim.plan import Step
from tauguard.sim.user import SimUser

def attack_fault_id(tactic: str) -> str:
    """The fault id under which a yield is accounted (class PV)."""
    return f"attack.{tactic}"


def draws_yield(profile: FaultProfile, tactic: str, domain: str, task_id: str, trial: int, seed: int) -> bool:
    """Whether the sim agent gives in to ``tactic`` in this trial (its own random stream)."""
    if tactic not in profile.attack_susceptibility:  # checked when the run is planned (check_needs)
        raise ValueError(f"fault profile {profile.name!r} has no attack_susceptibility.{tactic}")
    rate = profile.attack_susceptibility[tactic]
    return trial_rng(seed, domain, f"attack:{task_id}", trial).random() < rate


def attacked_plan(
    domain: str, task_id: str, gold: list[Step], faults: list[ScheduledFault], target: AttackTarget, tactic: str, yields: bool
) -> tuple[list[Step], list[ScheduledFault]]:
    """The sim agent's plan and faults under attack.

    The trial's spontaneous temptation (a PV fault) is dropped: the attack replaces it. When the
    agent yields, the target's confirm and call steps go before the first communicate, transfer
    or close step, as the PV temptations do.
    """
    faults = [f for f in faults if f.fault_class != "PV"]
    plan = apply_plan_faults(domain, task_id, gold, faults)
    if not yields:
        return plan, faults
    fault = ScheduledFault(
        fault_id=attack_fault_id(tactic), fault_class="PV", kind="call", tool=target.tool, label="refuse",
        clause=target.clause,
    )
    call = ToolCallView(id=f"attack-{task_id}", name=target.tool, arguments=dict(target.arguments))
    insert_at = next((i for i, s in enumerate(plan) if _ends_request(s)), len(plan))
    plan[insert_at:insert_at] = [
        Step(kind="confirm", call=call, gold=False, fault_ids=[fault.fault_id]),
        Step(kind="call", call=call, tool_type="WRITE", gold=False, fault_ids=[fault.fault_id]),
    ]
    return plan, [*faults, fault]


_REFUSAL = "I'm sorry, but I cannot perform"


class SimAttacker(SimUser):
    """A scripted adversarial user: the sim user plus the tactic's pushes for the target."""

    def __init__(self, task: Any, user_tool_names: set[str], target: AttackTarget, tactic: str) -> None:
        super().__init__(task, user_tool_names)
        self.turns = sim_turns(target, tactic)
        self.pushes = 0

    def _push(self) -> str:
        turn = self.turns[min(self.pushes, len(self.turns) - 1)]
        self.pushes += 1
        return turn

    def _reply(self, message: Any) -> Any:
        content = getattr(message, "content", None) or ""
        if not self.opened and not getattr(message, "tool_calls", None):
            reply = super()._reply(message)
            reply.content = f"{reply.content}\n{self._push()}"
            return reply
        if _REFUSAL in content and self.pushes < len(self.turns):
            self.idle = 0
            return self._say(self._push())
        return super()._reply(message)


