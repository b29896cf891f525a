"""Dialogue evidence for the action guard's checks: asked of the neutral judge, never judged here.

Whether the user explicitly confirmed a write, and which reason they stated, is decided by
:mod:`tauguard.dialogue` (the one dialogue judge of tauguard; its backend is the strategy's
``dialogue`` option). This module only adapts its answers to the checks' evidence: the
statement and reply of the confirmation in force, the user turn that states a reason.
Requests ("I want compensation", "I am travelling") are matched by the checks' own patterns
with :func:`user_turn_matching`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tauguard_strategies.action_guard.evidence import Evidence, Turn
from tauguard.strategy_api.conversation import ToolCallView
from tauguard.dialogue import DialogueJudge
from tauguard.dialogue.statement import facts_of, mentions_value
from tauguard.dialogue.view import DialogueView

__all__ = ["Confirmation", "confirmation_or_why", "find_confirmation", "mentions_value", "payment_named", "reason_stated",
           "user_turn_matching"]


@dataclass(frozen=True)
class Confirmation:
    """An agent statement of the action and the user's affirmative reply to it."""

    statement: Turn
    reply: Turn


def find_confirmation(evidence: Evidence, call: ToolCallView, judge: DialogueJudge, domain: str,
                      must_mention: re.Pattern[str] | None = None) -> Confirmation | None:
    """The latest confirmation of ``call`` in force, per ``judge``; with ``must_mention``, one whose
    statement also matches it (e.g. a price)."""
    return confirmation_or_why(evidence, call, judge, domain, must_mention)[0]


def confirmation_or_why(evidence: Evidence, call: ToolCallView, judge: DialogueJudge, domain: str,
                        must_mention: re.Pattern[str] | None = None) -> tuple[Confirmation | None, str]:
    """:func:`find_confirmation`, and when there is none, the judge's reason in one line (its
    ``Rejection``: the rule and what was missing; "" when the backend gives none)."""
    finding = judge.confirmation(domain, evidence.view, call)
    pairs = [p for p in finding.pairs if must_mention is None or must_mention.search(p.statement)]
    if not pairs:
        why = finding.rejection
        return None, why.says() if why is not None else ""
    last = pairs[-1]
    return Confirmation(Turn(last.statement_at, "agent", last.statement), Turn(last.reply_at, "user", last.reply)), ""


def reason_stated(evidence: Evidence, judge: DialogueJudge, domain: str, covered: bool = False) -> Turn | None:
    """The user turn stating a reason (``covered``: one the airline insurance covers), per ``judge``."""
    reason = judge.reason(domain, evidence.view, covered=covered)
    return None if reason is None else Turn(reason.position, "user", reason.text)


def user_turn_matching(evidence: Evidence, pattern: re.Pattern[str]) -> Turn | None:
    """The first user turn matching ``pattern`` (a request, not a confirmation)."""
    return next((t for t in evidence.turns if t.role == "user" and pattern.search(t.text)), None)


_PAYMENT_ARGUMENTS = ("payment_id", "payment_method_id")
# "the original payment method", "the same card I used to book"
_ORIGINAL_METHOD = re.compile(r"\b(?:original|same|existing)\s+(?:\w+\s+)?(?:payment|card|method|form of payment)\b", re.IGNORECASE)


def payment_named(call: ToolCallView, view: DialogueView) -> bool:
    """Whether the write's payment method came up in the dialogue before a user turn.

    "The user needs to provide a single gift card or credit card": the user names it, or
    answers an agent turn that named it: by id, by kind (:func:`mentions_value`), by the
    last four digits the profile shows for it ("Visa ending in 7238"), or as "the original
    payment method" when it paid the write's target (its payment history). A method the
    agent picks without ever putting it to the user is not provided by the user. A write
    without a payment argument needs none.
    """
    wanted = [v for k in _PAYMENT_ARGUMENTS if isinstance(v := call.arguments.get(k), str)]
    if not wanted:
        return True
    facts = facts_of(view)
    target = call.arguments.get("reservation_id") or call.arguments.get("order_id")
    history = (facts.records.get(str(target)) or {}).get("payment_history") if target is not None else None
    paid_target = {str(p.get("payment_id") or p.get("payment_method_id")) for p in history or [] if isinstance(p, dict)}
    last_four = {str(m["last_four"]) for r in facts.records.values() for pid, m in (r.get("payment_methods") or {}).items()
                 if pid in wanted and isinstance(m, dict) and m.get("last_four")} if len(wanted) == 1 else set()

    def names(text: str) -> bool:
        if all(mentions_value(text, v, facts.methods) for v in wanted):
            return True
        if any(re.search(r"(?<!\d)" + re.escape(d) + r"(?!\d)", text) for d in last_four):
            return True
        return set(wanted) <= paid_target and bool(_ORIGINAL_METHOD.search(text))

    turns = view.turns
    return any(names(t.text) for i, t in enumerate(turns) if t.role == "user" or any(u.role == "user" for u in turns[i + 1:]))
