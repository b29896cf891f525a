"""The sim user: opens with the scenario, confirms when asked, performs device actions
when instructed, and ends with tau2's stop token.

It is written against the sim agent's phrasing but answers any agent: questions asking
for confirmation get a yes (a call the agent proposes instead of the requested one gets a
yes only if it is one the scenario wants, i.e. a gold action), mentions of a pending user-side action get that action, a
closing question or a transfer ends the conversation, anything else gets a short ack.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tauguard.tau2_adapter import compat as t2
from tauguard.dialogue import asks_go_ahead
from tauguard.sim.plan_replay import opening_message
from tauguard.sim import texts

_CLOSE = re.compile(r"anything else", re.IGNORECASE)
_TRANSFER = re.compile(r"transferred to a human agent", re.IGNORECASE)
def _canonical(arguments: Any) -> str:
    return json.dumps(arguments, sort_keys=True)


_JSON_ARGS = re.compile(r"with (\{.*\})", re.DOTALL)
# Turns without progress after which the sim user ends the conversation (a stuck agent).
MAX_IDLE_TURNS = 8


class SimUser:
    """A scripted user for one task."""

    def __init__(self, task: t2.Task, user_tool_names: set[str]) -> None:
        self.task = task
        actions = (task.evaluation_criteria.actions if task.evaluation_criteria else None) or []
        self.pending = [a for a in actions if a.requestor == "user"]
        self.user_tool_names = user_tool_names
        self.opened = False
        self.idle = 0
        self.call_counter = 0

    # -- tau2 user interface --------------------------------------------------------------

    def get_init_state(self, message_history: list[Any] | None = None) -> Any:
        """A minimal tau2 UserState."""
        return t2.UserState(system_messages=[], messages=list(message_history or []))

    def set_seed(self, seed: int) -> None:
        """The sim user is deterministic; the seed is not needed."""

    def stop(self, message: Any = None, state: Any = None) -> None:
        """Nothing to clean up."""

    @classmethod
    def is_stop(cls, message: Any) -> bool:
        """tau2's stop tokens."""
        content = getattr(message, "content", None) or ""
        return any(tok in content for tok in (t2.STOP, t2.TRANSFER, t2.OUT_OF_SCOPE))

    def generate_next_message(self, message: Any, state: Any) -> tuple[Any, Any]:
        """The user's reply to the agent's message or to its own tool result."""
        reply = self._reply(message)
        if hasattr(state, "messages"):
            state.messages.append(reply)
        return reply, state

    # -- behaviour ------------------------------------------------------------------------

    def _say(self, content: str) -> Any:
        return t2.UserMessage(role="user", content=content, cost=0.0)

    def _reply(self, message: Any) -> Any:
        if isinstance(message, (t2.ToolMessage, t2.MultiToolMessage)):
            results = message.tool_messages if isinstance(message, t2.MultiToolMessage) else [message]
            self.idle = 0
            return self._say(" ".join(texts.user_action_report(self._last_action, r.content or "") for r in results))
        content = getattr(message, "content", None) or ""
        if not self.opened:
            self.opened = True
            return self._say(opening_message(self.task))
        if _TRANSFER.search(content):
            return self._say(t2.TRANSFER)
        proposed = texts.revision_proposal(content)
        if proposed is not None:
            self.idle = 0
            return self._say(texts.USER_YES if self._wanted(*proposed) else texts.USER_NO)
        if texts.CLARIFY_PREFIX in content:
            self.idle = 0
            return self._say(self._details())
        action = self._requested_action(content)
        if action is not None:
            self.idle = 0
            return self._perform(action, content)
        if asks_go_ahead(content):  # the neutral dialogue judge: the agent asks for the go-ahead
            self.idle = 0
            return self._say(texts.USER_YES)
        if _CLOSE.search(content):
            return self._say(texts.USER_STOP)
        self.idle += 1
        if self.idle >= MAX_IDLE_TURNS:
            return self._say(t2.STOP)
        return self._say(texts.USER_ACK)

    def _wanted(self, name: str, arguments: dict[str, Any]) -> bool:
        """Whether a call the agent proposes instead of the requested one is what this user
        wants: one of the scenario's own (gold) agent actions."""
        actions = (self.task.evaluation_criteria.actions if self.task.evaluation_criteria else None) or []
        return any(
            a.requestor != "user" and a.name == name and _canonical(a.arguments) == _canonical(arguments)
            for a in actions
        )

    def _details(self) -> str:
        instr = self.task.user_scenario.instructions
        if isinstance(instr, str):
            return instr
        return texts.scenario_details(instr.reason_for_call, instr.task_instructions)

    def _requested_action(self, content: str) -> Any:
        for action in self.pending:
            if re.search(rf"\b{re.escape(action.name)}\b", content):
                return action
        return None

    def _perform(self, action: Any, content: str) -> Any:
        self.pending.remove(action)
        arguments = dict(action.arguments)
        match = _JSON_ARGS.search(content)
        if match:
            try:
                arguments = json.loads(match.group(1))
            except json.JSONDecodeError:
                pass
        self.call_counter += 1
        self._last_action = action.name
        call = t2.ToolCall(id=f"user-{action.name}-{self.call_counter}", name=action.name, arguments=arguments, requestor="user")
        return t2.UserMessage(role="user", tool_calls=[call], cost=0.0)

    _last_action: str = ""
