"""The sim user: opens with the scenario, confirms when asked, performs device actions
when instructed, and ends with tau2's stop token.

It is written against the sim agent's phrasing but answers any agent: questions asking
for confirmation get a yes, a call the agent proposes instead of the one it stated is judged
by :func:`scenario_accepts`, a message naming one of the user's own (device) tools gets that
action (with the arguments the message gives as JSON, else none), a closing question or a transfer ends the conversation, anything else gets a
short ack.

The user knows what a real user simulator knows: the task's scenario (reason for call, known
info, task instructions) and the conversation. It never reads the task's gold actions, the
sim's plan or the database (``tests/test_sim_user.py`` poisons all three).

Proposal rule (a guard's revision the agent proposes, "Instead, I can perform T with {...}"):
the user compares the proposal with the last call of the same tool the agent stated in the
conversation (else the last call it stated). It says **no** when the proposal replaces a value
the scenario states (the value occurs in the scenario text as a word; an identifier such as
``gift_card_123`` also by its kind, "gift card") with one the scenario does not state; it says
**yes** otherwise: a user defends what it was told to ask for and defers to the agent on values
it was never told (identifiers, prices it cannot check).
"""

from __future__ import annotations

import json
import re
from typing import Any

from tauguard.tau2_adapter import compat as t2
from tauguard.dialogue import asks_go_ahead
from tauguard.sim import texts

_CLOSE = re.compile(r"anything else", re.IGNORECASE)
_TRANSFER = re.compile(r"transferred to a human agent", re.IGNORECASE)
# A call the agent states in the conversation: "perform NAME with {...}" (confirmation,
# proposal or device-action request).
_STATED_CALL = re.compile(r"perform (\w+) with (\{.*?\})(?=\.\s|\.$|$)", re.DOTALL)
# An identifier with a kind and a number (gift_card_7219, credit_card_3124723, paypal_949).
_KIND_ID = re.compile(r"^([a-z]+(?:_[a-z]+)*)_\d+$")
# Numbers this small say nothing about which value the scenario means (counts, flags).
MIN_STATED_NUMBER = 10


def scenario_text(task: t2.Task) -> str:
    """Everything the user's scenario says (reason for call, known info, task instructions)."""
    instr = task.user_scenario.instructions
    if isinstance(instr, str):
        return instr
    return "\n".join(str(p) for p in (instr.reason_for_call, instr.known_info, instr.task_instructions) if p)


def _word_in(word: str, text: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text, re.IGNORECASE) is not None


def stated(value: Any, scenario: str) -> bool:
    """Whether the scenario states ``value`` (see the module's proposal rule)."""
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, (int, float)):
        return abs(value) >= MIN_STATED_NUMBER and _word_in(f"{value:g}", scenario)
    text = str(value).strip()
    if len(text) < 2:
        return False
    if _word_in(text, scenario) or _word_in(text.lstrip("#"), scenario):
        return True
    kind = _KIND_ID.match(text)
    if kind is None:
        return False
    words = kind.group(1).split("_")
    if _word_in(" ".join(words), scenario):
        return True
    # a kind of two words or more also by its initials, in capitals ("GC" for a gift card)
    initials = "".join(w[0] for w in words).upper()
    return len(words) >= 2 and re.search(rf"(?<!\w){initials}(?!\w)", scenario) is not None


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> dict[tuple[Any, ...], Any]:
    if isinstance(value, dict):
        return {p: v for k, item in value.items() for p, v in _leaves(item, (*path, k)).items()}
    if isinstance(value, list):
        return {p: v for i, item in enumerate(value) for p, v in _leaves(item, (*path, i)).items()}
    return {path: value}


def scenario_accepts(scenario: str, stated_before: dict[str, Any] | None, proposed: dict[str, Any]) -> bool:
    """The proposal rule: no iff a value the scenario states is replaced by one it does not."""
    if stated_before is None:
        return True
    before, after = _leaves(stated_before), _leaves(proposed)
    for path, old in before.items():
        new = after.get(path)
        if new != old and stated(old, scenario) and not stated(new, scenario):
            return False
    return True


def stated_calls(text: str) -> list[tuple[str, dict[str, Any]]]:
    """The calls an agent message states ("perform NAME with {...}"), in order."""
    out: list[tuple[str, dict[str, Any]]] = []
    for match in _STATED_CALL.finditer(text):
        try:
            arguments = json.loads(match.group(2))
        except json.JSONDecodeError:
            continue
        if isinstance(arguments, dict):
            out.append((match.group(1), arguments))
    return out


_JSON_ARGS = re.compile(r"with (\{.*\})", re.DOTALL)
# Turns without progress after which the sim user ends the conversation (a stuck agent).
MAX_IDLE_TURNS = 8


class SimUser:
    """A scripted user for one task."""

    def __init__(self, task: t2.Task, user_tool_names: set[str]) -> None:
        # Only the scenario is kept: the task's gold is never read.
        self.scenario = task.user_scenario
        self.scenario_text = scenario_text(task)
        self.user_tool_names = user_tool_names
        self.stated: list[tuple[str, dict[str, Any]]] = []  # calls the agent stated, in order
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
            return self._say(self._opening())
        if _TRANSFER.search(content):
            return self._say(t2.TRANSFER)
        proposed = texts.revision_proposal(content)
        if proposed is not None:
            self.idle = 0
            wanted = self._wanted(*proposed)
            self.stated.extend(stated_calls(content))
            return self._say(texts.USER_YES if wanted else texts.USER_NO)
        if texts.CLARIFY_PREFIX in content:
            self.idle = 0
            return self._say(self._details())
        action = self._requested_action(content)
        if action is not None:
            self.idle = 0
            return self._perform(action, content)
        self.stated.extend(stated_calls(content))
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
        """Whether the user accepts a call the agent proposes instead of the one it stated
        (the module's proposal rule: scenario and conversation only)."""
        before = next((a for n, a in reversed(self.stated) if n == name), None)
        if before is None and self.stated:
            before = self.stated[-1][1]
        return scenario_accepts(self.scenario_text, before, arguments)

    def _opening(self) -> str:
        instr = self.scenario.instructions
        if isinstance(instr, str):
            return instr
        return texts.opening(instr.reason_for_call, instr.known_info)

    def _details(self) -> str:
        instr = self.scenario.instructions
        if isinstance(instr, str):
            return instr
        return texts.scenario_details(instr.reason_for_call, instr.task_instructions)

    def _requested_action(self, content: str) -> str | None:
        """The user's own tool an agent message names (the first one, by word): the user does it."""
        found = [(m.start(), n) for n in self.user_tool_names for m in [re.search(rf"\b{re.escape(n)}\b", content)] if m]
        return min(found)[1] if found else None

    def _perform(self, name: str, content: str) -> Any:
        arguments: dict[str, Any] = {}
        match = _JSON_ARGS.search(content)
        if match:
            try:
                parsed = json.loads(match.group(1))
            except json.JSONDecodeError:
                parsed = {}
            arguments = parsed if isinstance(parsed, dict) else {}
        self.call_counter += 1
        self._last_action = name
        call = t2.ToolCall(id=f"user-{name}-{self.call_counter}", name=name, arguments=arguments, requestor="user")
        return t2.UserMessage(role="user", tool_calls=[call], cost=0.0)

    _last_action: str = ""
