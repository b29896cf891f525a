"""The fixed phrasings of the sim agent and sim user.

Kept in one module because the live sim and the offline replay (probes, gate checks) must
produce exactly the same conversation text.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tauguard.strategy_api.guard import refusal_text

GREETING = "Hi! How can I help you today?"
CONFIRM_QUESTION = "Do you confirm? Please answer yes or no."
USER_YES = "Yes, I confirm."
USER_NO = "No, please don't do that."
USER_ACK = "Okay."
USER_STOP = "No, that's all. Thank you! ###STOP###"
AGENT_CLOSE = "Is there anything else I can help you with?"
# After a transfer_to_human_agents call (the sim user ends the conversation on it).
TRANSFER_NOTICE = "You are being transferred to a human agent. Please hold on."


def render_args(arguments: dict[str, Any]) -> str:
    """Arguments as compact, key-sorted JSON (stable across runs)."""
    return json.dumps(arguments, sort_keys=True, separators=(", ", ": "))


# What a bundled confirmation says of the writes it folds in (bundle_confirmation): no details.
BUNDLED_REST = "I will then also make the other changes we discussed."


def confirm_request(name: str, arguments: dict[str, Any], note: str | None = None) -> str:
    """The agent's statement of a write (with a note such as its price), asking for an explicit yes."""
    middle = f" {note.strip()}" if note else ""
    return f"I am about to perform {name} with {render_args(arguments)}.{middle} {CONFIRM_QUESTION}"


def user_action_request(name: str, arguments: dict[str, Any]) -> str:
    """The agent asking the user to perform a user-side (device) action."""
    if arguments:
        return f"Please perform this action on your device: {name} with {render_args(arguments)}."
    return f"Please perform this action on your device: {name}."


def user_action_report(name: str, result: str) -> str:
    """The user telling the agent what a device action returned."""
    return f"I did {name}. It returned: {result}"


def communicate(infos: list[str]) -> str:
    """The agent stating information the task requires it to communicate."""
    return "Here is the information you need: " + "; ".join(infos) + "."


# The refusal wording belongs to the guard contract (the wrapper says it too); re-exported here
# because the sim agent speaks it.
cannot_do = refusal_text


REVISION_PREFIX = "I cannot do that as requested:"


def revision_request(name: str, arguments: dict[str, Any], reason: str) -> str:
    """The agent proposing a guard's revised call to the user, asking for an explicit yes."""
    why = " ".join(reason.split()).rstrip(".")
    return f"{REVISION_PREFIX} {why}. Instead, I can perform {name} with {render_args(arguments)}. {CONFIRM_QUESTION}"


_PROPOSAL = re.compile(r"Instead, I can perform (\w+) with (\{.*\})\. ", re.DOTALL)


def revision_proposal(text: str) -> tuple[str, dict[str, Any]] | None:
    """The (tool, arguments) a :func:`revision_request` proposes (None if ``text`` is not one)."""
    match = _PROPOSAL.search(text) if REVISION_PREFIX in text else None
    if match is None:
        return None
    try:
        arguments = json.loads(match.group(2))
    except ValueError:
        return None
    return (match.group(1), arguments) if isinstance(arguments, dict) else None


CLARIFY_PREFIX = "Before I can do that, I need to check something with you:"


def clarify(question: str) -> str:
    """The agent asking the user for something a guard found missing from the dialogue."""
    return f"{CLARIFY_PREFIX} {question.strip().rstrip('.')}. Could you tell me?"


def scenario_details(reason_for_call: str, task_instructions: str | None) -> str:
    """The sim user's answer to a clarifying question: what its scenario says."""
    parts = [reason_for_call.strip()]
    if task_instructions:
        parts.append(task_instructions.strip())
    return "\n".join(p for p in parts if p)


def opening(reason_for_call: str, known_info: str | None) -> str:
    """The sim user's first message: the scenario's reason for call and known info."""
    parts = [reason_for_call.strip()]
    if known_info:
        parts.append(known_info.strip())
    return "\n".join(p for p in parts if p)
