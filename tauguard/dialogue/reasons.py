"""Which reason did the user state for a write, and is it one the airline insurance covers?

The policy's covered reasons are *health* and *weather* (``airline.cancel_basis_insurance``).
The compiled backend reads a user's words as concepts, not as a list of trigger words: each
concept is a set of expression patterns for the ways people say it (a state of the body,
an event, a place or person of care; "not feeling well", "came down with", "under the
weather" is health, not weather), with negation ("I'm not sick, my plans changed" states no
health reason) and idioms resolved before matching. Any reason at all (what the policy asks
the agent to obtain for a cancellation) is a motive, by kind (:data:`_MOTIVES`: the plan
changed, a different booking wanted instead, paying less, an airline disruption, a booking
made by mistake, a personal situation), or a causal frame tying one to the request ("I'd
like to minimize the charge, so I prefer to cancel and rebook"). The LLM backend judges the same
question by meaning (:mod:`tauguard.dialogue.llm`).

This module imports neither tau2 nor litellm.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from tauguard.dialogue.cues import cue
from tauguard.dialogue.text import fold
from tauguard.dialogue.view import DialogueView, Turn

ReasonKind = Literal["health", "weather", "other"]
COVERED: tuple[ReasonKind, ...] = ("health", "weather")


@dataclass(frozen=True)
class Reason:
    """A reason the user stated: the turn, and what kind of reason it is."""

    position: int
    text: str
    kind: ReasonKind


# Idioms whose words would mislead: rewritten to their meaning first.
_IDIOMS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bunder the weather\b"), " unwell "),
    (re.compile(r"\bnot (?:feeling|doing) (?:so |too |very )?(?:well|good|great|ok(?:ay)?|myself|100 ?%)\b"), " unwell "),
    (re.compile(r"\b(?:feel|feeling|felt) (?:sick|ill|awful|terrible|bad|horrible|rough|poorly|unwell)\b"), " unwell "),
    (re.compile(r"\bcame down with|come down with|coming down with|caught (?:a|the)\b"), " illness "),
    (re.compile(r"\bweather(?:ed)? the storm\b"), " "),
)

_HEALTH = cue("health")
_WEATHER = cue("weather")
# Any reason at all (the policy asks the agent to get one for a cancellation: "change of plan,
# airline cancelled flight, or other reasons"). A reason says *why* the user wants the action:
# either a motive (one of the kinds below, however phrased) or a causal or purpose frame that
# ties a motive to the request ("..., so I prefer to cancel", "because ...", "in order to ...").
_MOTIVES: tuple[tuple[str, re.Pattern[str]], ...] = (
    # the plan or the circumstances changed; the trip is no longer wanted or possible
    ("change of plan", re.compile(
        r"\b(change (?:of|in) (?:my |our )?plans?|plans? (?:have |has |just |\w+ )?changed|changed? (?:my|our) (?:plans?|mind)|"
        r"no longer|(?:don'?t|do not) (?:need|want)|(?:won'?t|will not) be (?:able|going|travel\w*)|"
        r"(?:can'?t|cannot|can not) (?:make|go|travel|attend|fly|come)|unable to|not (?:going|travel\w*|flying) anymore|"
        r"decided (?:not to|to stay|against)|(?:trip|event|conference|wedding|meeting|visit) (?:is |was |got |has been )?(?:cancel+ed|called off|postponed|moved))\b")),
    # a different booking is wanted instead: the cancellation makes room for it
    ("replacement", re.compile(
        r"\b(re-?book\w*|book (?:a |an )?(?:new|different|another|separate)|(?:a |the )?(?:new|different|another|separate|cheaper) "
        r"(?:reservations?|bookings?|flights?|trips?|tickets?|round ?trip)|instead)\b")),
    # money: paying less for the trip (a refund alone is what every cancellation gives, no motive)
    ("cost", re.compile(
        r"\b((?:save|saving|minimi[sz]\w*|reduc\w*|lower\w*|cut\w*) (?:\w+ ){0,4}?(?:costs?|charges?|charged|amounts?|price|money|fees?|spend\w*|bill)|"
        r"cheaper|less expensive|better (?:price|deal|fare))\b")),
    # the airline disrupted the trip
    ("airline cancelled flight", re.compile(
        r"\b(cancel+ed by|airline cancel+ed|flight (?:was|got|has been|is|had been) (?:cancel+ed|delayed)|schedule change)\b")),
    # the booking itself was a mistake
    ("mistake", re.compile(
        r"\b(mix-?up|mistake|by accident|accidental\w*|duplicates?|double[- ]?book\w*|booked (?:the )?wrong|wrong (?:date|flight|booking|reservation|destination))\b")),
    # a personal situation
    ("circumstance", re.compile(r"\b(emergency|family|work|conflict|personal|schedule|funeral|passed away)\b")),
)
# A causal or purpose frame: the words around it are the user's reason.
_BECAUSE = cue("because")


def motive(text: str) -> str | None:
    """The kind of motive a user message states for a request ("change of plan", "cost", ...;
    "stated" for a bare causal frame), or None."""
    folded = fold(text)
    for name, pattern in _MOTIVES:
        if pattern.search(folded):
            return name
    return "stated" if _BECAUSE.search(folded) else None


# Negation is read structurally, per clause (split at punctuation and at contrast words: "Nobody is
# sick, I just changed my mind" has two clauses). A concept is negated by a negator just before it
# ("not sick", "no illness", "never ill") or by a negated subject or frame anywhere before it in its
# clause ("nobody is sick", "none of us are ill", "it's not that I'm sick", "not because of my health").
_CLAUSE = cue("reason_clause")
_NEGATED = cue("negated")
_NEGATED_FRAME = cue("negated_frame")
# A clause saying a person is well ("I am healthy", "everyone is fine", "my health is good") states no
# illness; said with a negation ("I'm not healthy", "I don't feel well") it states one. Only words of
# health and feeling turn into an illness when negated ("not fine with the fee" is no illness).
_WELLNESS = cue("wellness")
_ILL_WHEN_NEGATED = cue("ill_when_negated")
_ASKS_REASON = cue("asks_reason")


def _clauses(text: str) -> list[str]:
    """The clauses of a folded text (see :data:`_CLAUSE`)."""
    return [c for c in _CLAUSE.split(text) if c and c.strip()]


def _negated(clause: str, start: int) -> bool:
    """Whether the words of ``clause`` before ``start`` negate what stands there."""
    before = clause[:start]
    return bool(_NEGATED.search(before) or _NEGATED_FRAME.search(before))


def _wellness(clause: str) -> bool | None:
    """True when the clause says a person is well, False when it says one is not (an illness), None when neither."""
    for match in _WELLNESS.finditer(clause):
        said = match.group(0)
        negated = bool(re.search(r"\b(?:not|isn'?t|aren'?t|wasn'?t)\b", said)) or _negated(clause, match.start())
        if not negated:
            return True
        if _ILL_WHEN_NEGATED.search(said):
            return False
    return None


# Weather said to be benign ("the weather is fine", "the forecast looks clear") is no weather reason.
_BENIGN_WEATHER = cue("benign_weather")


def _concept_in(text: str, concept: re.Pattern[str], health: bool = False) -> bool:
    folded = fold(text)
    for pattern, meaning in _IDIOMS:
        folded = pattern.sub(meaning, folded)
    for clause in _clauses(folded):
        well = _wellness(clause) if health else None
        if well is False:
            return True  # "I'm not healthy", "I don't feel well"
        if well is True or (not health and _BENIGN_WEATHER.search(clause) and not _negated(clause, 0)):
            continue  # "I am healthy", "my health is fine", "the weather is fine": nothing covered in this clause
        for match in concept.finditer(clause):
            if not _negated(clause, match.start()):
                return True
    return False


def reason_kind(text: str) -> ReasonKind | None:
    """The kind of reason a user message states, or None when it states none."""
    if _concept_in(text, _HEALTH, health=True):
        return "health"
    if _concept_in(text, _WEATHER):
        return "weather"
    if motive(text) is not None:
        return "other"
    return None


def stated_reason(view: DialogueView, covered: bool = False) -> Reason | None:
    """The first user turn stating a reason (``covered``: a health or weather one).

    A user turn answering the agent's question about the reason counts as a reason even
    when it names none of the concepts ("My plans changed" / "I just can't go anymore").
    """
    previous: Turn | None = None
    for turn in view.turns:
        if turn.role == "user":
            kind = reason_kind(turn.text)
            if covered:
                if kind in COVERED:
                    return Reason(turn.position, turn.text, kind)
            elif kind is not None:
                return Reason(turn.position, turn.text, kind)
            elif previous is not None and previous.role == "agent" and "?" in previous.text and _ASKS_REASON.search(fold(previous.text)):
                return Reason(turn.position, turn.text, "other")
        previous = turn
    return None
