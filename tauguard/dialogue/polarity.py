"""The polarity of a user reply, without a model: yes, no, conditional, a question back, or none.

A reply is read sentence by sentence, because real users put the decisive words anywhere
("Ah, c'est dommage... I understand. Oui, please go ahead and cancel those three
reservations"): a yes in any sentence counts unless another sentence withdraws it, makes it
conditional or turns the reply into a question about the action. Cues cover the languages
users switch into (French, Spanish, German, Italian, Portuguese) and the idioms that carry a
negation word without refusing ("No problem, go ahead", "no worries").

This module imports neither tau2 nor litellm.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

from tauguard.dialogue.cues import cue
from tauguard.dialogue.text import fold

Polarity = Literal["yes", "no", "conditional", "question", "none"]
POLARITIES: tuple[Polarity, ...] = ("yes", "no", "conditional", "question", "none")

# Agreement, anywhere in a sentence.
_YES = cue("yes")
# An imperative asking the agent to perform the action is agreement too ("Please cancel those
# three reservations", "Upgrade and then cancel XEHM4B", "Let's go with option 2").
_REQUEST = cue("request")
# Refusal, hesitation or a change of mind, when it opens a sentence (a "don't" inside a yes
# sentence is a detail of what was agreed: "Yes, and I don't need insurance").
_NO = cue("no")
# A negation anywhere that withdraws the action itself.
_WITHDRAW = cue("withdraw")
# The user defers the yes to a later message ("Send me the full summary and I'll approve").
_DEFER = cue("defer_to_later_message")
# Idioms that contain a negation word but agree or are neutral.
_NOT_NEGATIONS = cue("not_negations")
# A condition or a reservation attached to the agreement: strong markers anywhere; a plain
# "if" only where it opens the agreeing sentence ("Yes, if it's refundable"), since an "if"
# later in a reply usually belongs to a side request ("let me know if the date changes").
_CONDITIONAL = cue("conditional")
# A deferral: the user puts the decision off until they have done something themselves ("let me check
# with my wife first", "once I talk to my husband", "I'll get back to you", "give me a moment"), or asks
# the action to wait ("wait until tomorrow", "not until I confirm the dates"). However it is phrased, it
# is no yes now.
_DEFERS = cue("defers")
# A yes-word under a negation is hesitation, not agreement ("I am not sure yet", "that's not correct").
_NEGATED_YES = cue("negated_yes")
# A condition on information the agent is to give first ("let me know the total first", "once you tell
# me the fee", "can I first ask about the fee?"): the yes waits on it.
_INFO_FIRST = cue("info_first")
_OPENING_IF = cue("opening_if")
# An "if" whose consequence changes or halts the action ("If the difference is more than my
# balance, please pause and let me know"; "If that isn't possible, then yes, proceed").
_CONTINGENCY = cue("contingency")
# A safeguard: an "if" about an exception whose consequence only asks the agent to stop and report
# ("If the price difference is more than my balance, please pause and let me know"). It asks to be
# consulted should the exception arise, and adds nothing to what is agreed: next to a yes of its
# own it leaves the yes standing. One whose consequence changes the action ("..., use PayPal
# instead", "..., don't cancel") or carries the agreement ("..., then yes, proceed") still conditions it.
_SAFEGUARD = cue("safeguard")
_NOT_SAFEGUARD = cue("not_safeguard")
# "Oh wait, I also need one more bag": an addition to what was agreed, not a withdrawal.
_ADDITION = cue("addition")
# A question back about the terms of the action: agreeing depends on its answer.
_TERMS = cue("terms")
# A question back proposing another way of paying or refunding ("could you refund it to a new
# gift card instead of PayPal?"); one about a side matter ("text them to me instead?") is not.
_INSTEAD = cue("instead")
_MONEY_TERMS = cue("money_terms")
_SENTENCE = re.compile(r"[^.!?\n;]+[.!?\n;]*")




def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (split on . ! ? ; and newlines), stripped, non-empty."""
    return [s.strip() for s in _SENTENCE.findall(fold(text)) if s.strip(" .!?;\n")]


def _is_question(sentence: str) -> bool:
    return sentence.rstrip().endswith("?")


_ANSWER = cue("short_answer")


def is_short_answer(text: str) -> bool:
    """Whether a user message opens as an answer (yes / no / ok / thanks), not as a request of its own."""
    return bool(_ANSWER.match(fold(text)))


#: What a sentence of a reply is about, relative to the write being judged.
About = Callable[[str, str | None], Literal["this", "sibling", "other", "unknown"]]

# A header that announces what follows ("Yes — with one correction:", "A couple of checks
# before you finalize:"): the items after it say what is agreed, changed or asked.
_HEADER = re.compile(r":\s*$")
# A header naming the target a section of the reply is about ("Order #W7553978:", "For reservation NM1VX1:").
_SECTION = cue("section_header")
# The first item of a list after such a header ("1) ...", "- ...", "a. ...").
_ITEM = cue("list_item")
_STRONG_CONDITION = cue("strong_condition")
# An anaphoric question ("Is that possible?") is about what the sentence before it says.
_ANAPHORIC = cue("anaphoric_question")


def polarity(text: str, about: About | None = None) -> Polarity:
    """The polarity of a user reply (see the module docstring).

    ``no`` wins over ``yes`` when a sentence refuses or withdraws the action; ``conditional``
    when a sentence attaches a condition; ``question`` when the reply asks something and
    never agrees; ``none`` when it neither agrees nor refuses (it answers something else).

    With ``about`` (a sentence, the sentence before it -> ``this`` / ``sibling`` (the same action
    on another target) / ``other`` (another action) / ``unknown``, relative to one write), the
    reply is read for that write only: a sentence about another action or target ("For the
    others, ... is that possible?", "Desk lamp: please do not
    modify") does not condition this one (though refusing one target of a batch put to the user
    changes the batch, unless another sentence agrees to this write naming it), and a header that announces a
    correction or checks ("I'd like to adjust the plan before you proceed:") leaves the verdict to
    its items.
    """
    folded = fold(text)
    if about is None and _DEFER.search(folded):
        return "conditional"
    said = sentences(_NOT_NEGATIONS.sub(" ", folded))
    if about is not None:
        kept: list[str] = []
        previous: str | None = None
        section: Literal["this", "sibling"] | None = None  # what the reply's current section header ("Order #W3239882:") is about
        # a sentence agreeing to this write by name ("Go ahead and cancel FDZ0T5 and HSR97W") says which
        # targets of the batch go ahead: dropping another one beside it changes nothing for this one
        named_yes = any(about(s, None) == "this" and agrees(s) for s in said)
        for k, sentence in enumerate(said):
            subject = about(sentence, previous)
            if _SECTION.match(sentence):
                section = "this" if subject == "this" else "sibling" if subject == "sibling" else None
            elif subject == "unknown" and section is not None:
                subject = section  # a sentence under a target's header is about that target
            if subject == "unknown" and previous is not None and _ANAPHORIC.search(sentence):
                subject = about(previous, None)
                if subject == "this" and agrees(previous) and _ADDITION.search(previous):
                    # "Please proceed with cancelling all five, the three and also those two. Is that
                    # possible?": the doubt is about what the user adds, the agreement to this stands
                    subject = "sibling"
            previous = sentence
            if subject == "other" and not agrees(sentence):
                continue  # a refusal, condition or question about another action
            if subject == "sibling" and (named_yes or not (_NO.search(sentence) or _WITHDRAW.search(sentence))) and not agrees(sentence):
                continue  # a condition or question about another target; refusing one still changes what was put
            # a sentence that opens a list (not one inside a running list) announces its items
            opens_list = k + 1 < len(said) and _ITEM.match(said[k + 1]) is not None and not _ITEM.match(sentence) \
                and not (k > 0 and _ITEM.match(said[k - 1]))
            header = _HEADER.search(sentence) or opens_list
            if header and _CONDITIONAL.search(sentence) and not _STRONG_CONDITION.search(sentence):
                continue  # "... before you proceed:" / "Yes — with one correction." before a list: its items say what is changed or asked
            kept.append(sentence)
        said = kept
        if any(_DEFER.search(sentence) for sentence in said):
            return "conditional"  # the yes for this write is deferred to a later message
    return _verdict(said)


def agrees(sentence: str) -> bool:
    """Whether a sentence agrees and neither refuses nor attaches a condition."""
    if _is_question(sentence) or _NO.search(sentence) or _WITHDRAW.search(sentence) or _CONDITIONAL.search(sentence):
        return False
    if _DEFERS.search(sentence) or _INFO_FIRST.search(sentence) or _NEGATED_YES.search(sentence):
        return False
    return bool(_YES.search(sentence) or _REQUEST.search(sentence)) and not _OPENING_IF.search(sentence)


def _safeguard(sentence: str) -> bool:
    """Whether a sentence only asks the agent to stop and report should an exception arise."""
    if _is_question(sentence) or not _OPENING_IF.search(sentence):
        return False
    # the consequence: what follows the condition's comma
    _, comma, consequence = sentence.partition(",")
    return bool(comma) and bool(_SAFEGUARD.search(consequence)) and not _NOT_SAFEGUARD.search(consequence)


def _verdict(said: list[str]) -> Polarity:
    """The polarity of a reply's sentences (already folded, idioms removed)."""
    yes = no = conditional = question = False
    for sentence in said:
        if _safeguard(sentence):
            continue  # "if something goes wrong, pause and tell me": the yes next to it stands
        if _is_question(sentence):
            question = True
            if (_CONDITIONAL.search(sentence) and _TERMS.search(sentence)) or _INFO_FIRST.search(sentence):
                conditional = True  # "Before you finalize, will there be any change fees?"; "can I first ask ...?"
            continue
        if (_NO.search(sentence) and not _ADDITION.search(sentence)) or _WITHDRAW.search(sentence):
            no = True
            continue
        if _DEFERS.search(sentence) or _INFO_FIRST.search(sentence):
            conditional = True  # "yes, but let me check with my wife first"; "sure, once you tell me the total"
            continue
        if _NEGATED_YES.search(sentence):
            no = True  # "I am not sure yet"
            continue
        agrees = bool(_YES.search(sentence) or _REQUEST.search(sentence))
        if _CONDITIONAL.search(sentence) or (agrees and not yes and _OPENING_IF.search(sentence)) or (
            _OPENING_IF.search(sentence) and _CONTINGENCY.search(sentence)
        ):
            conditional = True
        elif agrees:
            yes = True
    if no and not yes:
        return "no"
    if no:
        # A refusal and an agreement in one reply ("Wait, I don't want to cancel that one. Go
        # ahead with the other two"): the user agrees to something other than what was put to
        # them, so it is no plain yes.
        return "conditional"
    if conditional:
        return "conditional"
    if yes and any(_is_question(s) and (_TERMS.search(s) or (_INSTEAD.search(s) and _MONEY_TERMS.search(s))) for s in said):
        # "Go ahead, but could you confirm there won't be any fees?"; "... could you refund it to
        # a new gift card instead of PayPal?": the yes waits on the answer
        return "question"
    if yes:
        return "yes"
    return "question" if question else "none"
