"""Dialogue evidence: statements of an action, affirmative replies, stated reasons.

Loose about phrasing, because real agents phrase confirmations freely, but strict about
what was confirmed: an agent message states an action when it names the tool (or one of
its words) and mentions every user-visible argument value of the call (the checklist's
``statement.key_args``: ids, flights, items, addresses, refund destinations); a user reply
confirms when its first cue-bearing sentence is affirmative and not negated. A "yes" covers
one write: it is consumed by the first write its statement covered. The sim's fixed phrasing
("I am about to perform NAME with {...}. Do you confirm?" / "Yes, I confirm.") is one
instance of this, not the pattern itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tauguard_strategies.action_guard.schema import StatementSpec, domain_checklists
from tauguard_strategies.action_guard.evidence import Evidence, Turn
from tauguard.conversation import ToolCallView

_AFFIRM = re.compile(
    r"\b(yes|yeah|yep|yup|ya|confirm(?:ed)?|go ahead|proceed|sure|please do|do it|do that|"
    r"that'?s (?:right|correct|fine|good)|correct|absolutely|definitely|sounds good|affirmative|"
    r"let'?s do (?:it|that)|ok(?:ay)?,? (?:go|do|proceed|please)|approved?|agreed?)\b",
    re.IGNORECASE,
)
_NEGATE = re.compile(
    r"\b(no|nope|not|don'?t|do not|doesn'?t|never|wait|hold on|stop|rather not|cancel that|nah)\b",
    re.IGNORECASE,
)
# Idioms that contain a negation word but are not a refusal.
_NOT_NEGATIONS = re.compile(r"\b(no problem|no worries|not a problem)\b", re.IGNORECASE)
_SENTENCE = re.compile(r"[^.!?\n;]+[.!?\n;]*")


def _first_cue_sentence(text: str) -> tuple[bool, bool, bool] | None:
    """(says yes, says no, is a question) of the first sentence carrying a yes/no cue."""
    cleaned = _NOT_NEGATIONS.sub(" ", text)
    for match in _SENTENCE.finditer(cleaned):
        sentence = match.group(0)
        has_yes, has_no = bool(_AFFIRM.search(sentence)), bool(_NEGATE.search(sentence))
        if has_yes or has_no:
            return has_yes, has_no, "?" in sentence
    return None


def is_affirmative(text: str) -> bool:
    """Whether a user reply agrees: its first sentence with a yes/no cue says yes, unnegated, not as a question."""
    cue = _first_cue_sentence(text)
    return cue is not None and cue[0] and not cue[1] and not cue[2]


def is_negative(text: str) -> bool:
    """Whether a user reply refuses (its first cue-bearing sentence is negated)."""
    cue = _first_cue_sentence(text)
    return cue is not None and cue[1]


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower())


def _values_at(value: Any, path: list[str]) -> list[Any]:
    if not path:
        return [value]
    head, rest = path[0], path[1:]
    if head == "*":
        items = value if isinstance(value, list) else []
        return [v for item in items for v in _values_at(item, rest)]
    if isinstance(value, dict) and head in value:
        return _values_at(value[head], rest)
    return []


def key_values(call: ToolCallView, key_args: Iterable[str]) -> list[str]:
    """The call's values under ``key_args`` paths, as strings (empty values skipped)."""
    found: list[str] = []
    for path in key_args:
        for value in _values_at(call.arguments, path.split(".")):
            if isinstance(value, bool) or value is None or value == "":
                continue
            if isinstance(value, (int, float, str)):
                found.append(str(value))
    return found


# A payment method id as tau2 writes it: its kind then a number (credit_card_9659780).
_METHOD_ID = re.compile(r"^([a-z]+(?:_[a-z]+)*)_(\d{4,})$")


def mentions_value(text: str, value: str) -> bool:
    """Whether ``text`` mentions ``value``.

    Ids match without their '#' and with '_' read as a space; numbers match as numbers; a
    payment method id also matches its kind and last four digits ("credit card ending in
    9780"), and a PayPal id its kind alone (the user only sees "PayPal").
    """
    norm = _norm(text)
    try:
        number = float(value)
    except ValueError:
        number = None
    if number is not None and re.fullmatch(r"-?\d+(\.\d+)?", value.strip()):
        for token in re.findall(r"\d+(?:\.\d+)?", norm.replace(",", "")):
            if float(token) == number:
                return True
        return False
    needle = _norm(value).lstrip("#")
    if not needle:
        return False
    if needle in norm or needle.replace("_", " ") in norm.replace("_", " "):
        return True
    method = _METHOD_ID.match(needle)
    if method is None:
        return False
    kind, digits = method.group(1).replace("_", " "), method.group(2)
    spaced = norm.replace("_", " ")
    return kind in spaced and (kind == "paypal" or digits[-4:] in spaced)


def _words(call: ToolCallView, spec: StatementSpec) -> list[str]:
    return [call.name.lower(), call.name.replace("_", " ").lower(), *(w.lower() for w in spec.words)]


def states_action(text: str, call: ToolCallView, spec: StatementSpec) -> bool:
    """Whether an agent message states ``call``: names it and mentions its key values."""
    norm = _norm(text)
    if not any(re.search(r"\b" + re.escape(w), norm) for w in _words(call, spec)):
        return False
    return all(mentions_value(text, v) for v in key_values(call, spec.key_args))


@dataclass(frozen=True)
class Confirmation:
    """An agent statement of the action and the user's affirmative reply to it."""

    statement: Turn
    reply: Turn


def write_statements(domain: str) -> dict[str, StatementSpec]:
    """How a statement of each WRITE tool of ``domain`` is recognised (from its checklist)."""
    return {tool: checklist.statement for tool, checklist in domain_checklists(domain).items()}


def find_confirmation(
    evidence: Evidence,
    call: ToolCallView,
    spec: StatementSpec,
    must_mention: re.Pattern[str] | None = None,
    writes: Mapping[str, StatementSpec] | None = None,
) -> Confirmation | None:
    """The latest explicit confirmation of ``call`` still in force, if any.

    A statement is pending until the user replies. An affirmative reply confirms it; a
    negative reply withdraws any earlier confirmation; an agent question about something
    else in between breaks the pairing (the "yes" would answer that question instead). A
    confirmation is consumed by the first write that executes successfully after it and
    that its statement covers (``writes``: the statement spec of every WRITE tool; without
    it only the identical call consumes it), so one "yes" never authorises two writes.
    """
    specs = dict(writes or {})
    executed = [
        o for o in evidence.observations
        if o.call.name in specs or (o.call.name == call.name and o.call.arguments == call.arguments)
    ]
    events: list[tuple[int, Turn | ToolCallView]] = [(t.position, t) for t in evidence.turns]
    events += [(o.position, o.call) for o in executed]
    events.sort(key=lambda e: e[0])

    pending: Turn | None = None
    confirmed: Confirmation | None = None
    for _, item in events:
        if isinstance(item, ToolCallView):
            if confirmed is not None and _covers(confirmed.statement.text, item, specs.get(item.name), call):
                confirmed = None
            if pending is not None and _covers(pending.text, item, specs.get(item.name), call):
                pending = None
            continue
        turn = item
        if turn.role == "agent":
            if states_action(turn.text, call, spec) and (must_mention is None or must_mention.search(turn.text)):
                pending = turn
            elif "?" in turn.text:
                pending = None
            continue
        if pending is not None:
            if is_affirmative(turn.text):
                confirmed = Confirmation(pending, turn)
            elif is_negative(turn.text):
                confirmed = None
            pending = None
    return confirmed


def _covers(statement: str, executed: ToolCallView, spec: StatementSpec | None, gated: ToolCallView) -> bool:
    """Whether an executed write used up ``statement`` (it stated that write)."""
    if executed.name == gated.name and executed.arguments == gated.arguments:
        return True
    return spec is not None and states_action(statement, executed, spec)


# --- stated reasons and requests -----------------------------------------------------------

REASON_CUES = re.compile(
    r"\b(because|since|due to|as i|reason|change of plans?|plans? (?:have |has )?changed|changed? (?:my|our) plans?|"
    r"no longer|don'?t need|do not need|don'?t want|can'?t make|cannot make|won'?t be able|unable to|"
    r"sick|ill|unwell|illness|health|medical|injur\w*|hospital|doctor|weather|storm|hurricane|snow|flood|"
    r"emergency|family|work|conflict|mix-?up|mistake|cancel+ed by|airline cancel+ed|flight (?:was|got|has been|is) cancel+ed|"
    r"personal|schedule)\b",
    re.IGNORECASE,
)
COVERED_REASON_CUES = re.compile(
    r"\b(sick|ill|unwell|illness|health|medical|injur\w*|hospital|doctor|surgery|fever|covid|"
    r"weather|storm|hurricane|snow|flood|blizzard)\b",
    re.IGNORECASE,
)
_ASKS_REASON = re.compile(r"\b(reason|why)\b", re.IGNORECASE)


def reason_stated(evidence: Evidence, cues: re.Pattern[str] = REASON_CUES) -> Turn | None:
    """A user turn giving a reason: matching ``cues``, or answering the agent's question about the reason."""
    previous: Turn | None = None
    for turn in evidence.turns:
        if turn.role == "user":
            if cues.search(turn.text):
                return turn
            if cues is REASON_CUES and previous is not None and previous.role == "agent" and _ASKS_REASON.search(previous.text) and "?" in previous.text:
                return turn
        previous = turn
    return None


def user_turn_matching(evidence: Evidence, pattern: re.Pattern[str]) -> Turn | None:
    """The first user turn matching ``pattern``."""
    return next((t for t in evidence.turns if t.role == "user" and pattern.search(t.text)), None)
