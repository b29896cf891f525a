"""Gate again after doing the reads a VERIFY asks for: the one implementation.

A VERIFY names the reads that would supply its missing facts (``required_reads``). An agent
that complies performs them and proposes the same write again. Offline (the gold sweep,
probe evaluation) the reads run in the task's real environment; arguments the guard leaves
to the agent come from the one sim oracle, :func:`tauguard.sim.oracle.reads_for`, as the
live sim agent's do. Reads never change the environment, so the write's own outcome is
unaffected.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tauguard.tau2_adapter import compat as t2
from tauguard.strategy_api.conversation import Conversation, ConversationEvent, ToolCallView
from tauguard.strategy_api.guard import GuardDecision, GuardSession, Verdict
from tauguard.tau2_adapter.replay import agent_view, call_tool
from tauguard.sim.oracle import dedupe, reads_for

# Each round performs the reads the last decision names that were not yet done for this
# write; a guard that keeps asking for new reads is given up on after this many rounds.
MAX_READ_ROUNDS = 4


def _key(call: ToolCallView) -> str:
    return call.name + repr(sorted(call.arguments.items()))


def gate_after_reads(
    session: GuardSession,
    domain: str,
    env: t2.Environment,
    conversation: Conversation,
    call: ToolCallView,
    decision: GuardDecision,
    id_prefix: str = "guard-read",
    earlier: Sequence[ToolCallView] = (),
) -> tuple[GuardDecision, int]:
    """Perform the reads ``decision`` asks for, feed them to ``session``, gate ``call`` again.

    The reads (calls and results) are appended to ``conversation``; ``earlier``, the calls
    before ``call`` in its agent message, follow them when the call is gated again
    (:meth:`~tauguard.strategy_api.conversation.Conversation.gated_at`). Returns the last
    decision and how many reads were made. Stops when the decision is no VERIFY naming
    reads, when every requested read was already done for this write, or after
    :data:`MAX_READ_ROUNDS` rounds.
    """
    done: set[str] = set()
    for _ in range(MAX_READ_ROUNDS):
        if decision.verdict != Verdict.VERIFY or not decision.required_reads:
            break
        db: Any = env.tools.db
        requested = dedupe([r for q in decision.required_reads for r in reads_for(domain, db, call, q)])
        todo = [r for r in requested if _key(r) not in done]
        if not todo:
            break
        for read in todo:
            done.add(_key(read))
            read = read.model_copy(update={"id": f"{id_prefix}-{len(done)}"})
            conversation.add(ConversationEvent(kind="agent_tool_call", tool_call=read))
            result = call_tool(env, read)
            conversation.add(result)
            session.after_tool(result, agent_view(conversation))
        decision = session.before_write(call, agent_view(conversation).gated_at(earlier))
    return decision, len(done)
