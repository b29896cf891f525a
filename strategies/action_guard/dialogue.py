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
from tauguard.dialogue.statement import mentions_value

__all__ = ["Confirmation", "confirmation_or_why", "find_confirmation", "mentions_value", "reason_stated", "user_turn_matching"]


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
