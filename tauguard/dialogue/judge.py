"""The neutral dialogue judge: was this write explicitly confirmed, and which reason did the user give?

One question, one answer for everybody: the guards (action-guard, workflow), the process
rubric that scores every run, the sim agent and the sim user all ask a :class:`DialogueJudge`.
Two backends answer it: :class:`CompiledJudge` (deterministic, no model; this module) and
:class:`tauguard.dialogue.llm.LLMJudge` (one model call per question, role ``guard``).

Which writes need a yes and what a statement must convey come only from the write contract
(:func:`tauguard.domains.contract.contract`, ``confirmation``). The pairing rules:

- a *pair* is an agent text turn and the user's next text turn;
- a pair confirms a write when the agent turn asks for the go-ahead and, with the agent's
  turns since the user last changed the request, states the write (:mod:`.statement`), and the
  reply's polarity is ``yes`` (:mod:`.polarity`); a payment or detail question between the
  summary and the yes does not break this, and a yes to a question that asks for something
  else (a detail, a choice) is not a confirmation;
- a confirmation stays in force until the write, unless the user later refuses, attaches a
  condition or changes the request; a summary covers every write it lists; a write that
  creates something (it names no existing target: a booking, a certificate, a refuel) is
  used up by making it, so an identical repeat needs a new yes (the other bookings a summary
  lists do not), while a repeat of an update is the same change again.

This module imports neither tau2 nor litellm.
"""

from __future__ import annotations

import re
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel

from tauguard.strategy_api.conversation import Conversation, ToolCallView
from tauguard.dialogue.amounts import amount_mismatch
from tauguard.dialogue.polarity import About, Polarity, agrees, polarity, sentences
from tauguard.dialogue.reasons import Reason, stated_reason
from tauguard.dialogue.rules import Rejection, rejection
from tauguard.dialogue.statement import Facts, entity_id, facts_of, first_mention, mentioned_ids, mentions_number, mentions_value, method_kind, missing, names_action, payment_ids, payment_shares, states, values_at
from tauguard.dialogue.text import fold
from tauguard.dialogue.version import COMPILED_VERSION, compiled_label
from tauguard.dialogue.view import DialogueView, Turn, view_of
from tauguard.domains.contract import Confirmation, contract



class Pairing(BaseModel):
    """A statement and the reply that confirms a write with it."""

    statement_at: int  # event position of the agent's statement
    reply_at: int  # event position of the user's reply
    statement: str
    reply: str


class Finding(BaseModel):
    """The judge's answer about one write: the confirmations in force when it is made, and why each
    other pair does not confirm it."""

    needed: bool  # whether the contract asks for an explicit yes for this write
    pairs: list[Pairing] = []
    judge: str = ""
    rejections: list[Rejection] = []  # one per pair not taken (compiled backend), in conversation order

    @property
    def confirmed(self) -> bool:
        """Whether an explicit yes to a statement of the write is in force."""
        return bool(self.pairs)

    @property
    def rejection(self) -> Rejection | None:
        """Why the write is not confirmed, for feedback (None when it is, or nothing is known): the
        latest pair that was about a go-ahead (not one whose statement asked for none, nor one whose
        reply said nothing yes or no), else the latest pair."""
        if self.confirmed or not self.needed:
            return None
        weak = ("no_go_ahead_asked", "reply_not_yes: the reply reads as none")
        relevant = [r for r in self.rejections if not r.says().startswith(weak)] or self.rejections
        return relevant[-1] if relevant else None

    def rejection_of(self, statement_at: int, reply_at: int) -> Rejection | None:
        """The rejection of one pair (None: taken, or not judged)."""
        return next((r for r in self.rejections if r.statement_at == statement_at and r.reply_at == reply_at), None)


@runtime_checkable
class DialogueJudge(Protocol):
    """What every consumer asks of the dialogue (both backends implement it)."""

    name: str
    version: int

    def confirmation(self, domain: str, view: DialogueView, call: ToolCallView, at: int | None = None) -> Finding:
        """The confirmations of ``call`` in force at event position ``at`` (default: after the view)."""
        ...

    def polarity(self, text: str) -> Polarity:
        """The polarity of one user reply."""
        ...

    def reason(self, domain: str, view: DialogueView, covered: bool = False) -> Reason | None:
        """The reason the user gave (``covered``: one the airline insurance covers), if any."""
        ...


def needs_confirmation(domain: str, tool: str) -> Confirmation | None:
    """The contract's confirmation rule for ``tool`` in ``domain`` (None: no explicit yes needed)."""
    try:
        rule = contract(domain).rule(tool)
    except Exception:  # noqa: BLE001 -- a domain without a contract asks for nothing
        return None
    return rule.confirmation if rule is not None else None


# A question (or request) asking for the go-ahead.
_ASKS = re.compile(
    r"\b(confirm|proceed|go ahead|shall i|should i|want me to|like me to|would you like to|do you want to|"
    r"okay to|ok to|ready|is (?:that|this|everything) (?:correct|right|ok(?:ay)?|fine)|correct|sound good|sounds good|look good|"
    r"looks good|are you sure|can i|may i|do you agree|agree|approve|yes or no|"
    r"happy (?:with|to)|work for you|works for you)\b",
    re.IGNORECASE,
)
_ASKS_IMPERATIVE = re.compile(
    r"\b(please confirm|(?:reply|respond|answer) (?:with )?(?:a )?['\"]?(?:yes|confirm)|say ['\"]?yes|type ['\"]?yes|let me know if you(?:'d| would)? (?:like|want) me to|"
    r"let me know (?:if|once|when) (?:you(?:'re| are) (?:ready|happy|ok)|that works|this works|you confirm)|"
    r"(?:once|if|when) you confirm|with your (?:confirmation|approval|go-ahead|ok)|your confirmation|"
    r"just (?:say|confirm|let me know)|^\W*confirm (?:with )?['\"]?yes)\b|(?:^|\W)['\"]yes['\"]?\s*(?:to|and i(?:'ll| will)) \w+",
    re.IGNORECASE,
)
# The user changing what is to be done, after agreeing.
_CHANGE = re.compile(
    r"\b(actually|instead|rather|change (?:it|that|the|to|my mind)|changed my mind|one more thing|on second thought|"
    r"scratch that|wait|hold on|make it|switch (?:it|to))\b",
    re.IGNORECASE,
)


def asks_go_ahead(text: str, call: ToolCallView | None = None, rule: Confirmation | None = None,
                  domain: str | None = None) -> bool:
    """Whether an agent message asks the user for the go-ahead (of ``call``'s action, if given).

    A question counts when it asks to proceed ("Shall I go ahead?", "Is that correct?") or
    names the action ("Would you like to cancel it?"); so does a request for a yes ("Please
    confirm and I'll proceed"). A question that only asks for something else (which card,
    which flight, a date, the reason, whether to look something up, whether a fact is right)
    does not, nor (with ``domain``) one that names another action of the domain and not this
    one ("Shall I proceed with the upgrade?" does not ask for the go-ahead of adding bags).
    """
    # in a menu of options ("1. Upgrade both? 2. Stay in economy?") no option is put to the user
    # for a yes; a go-ahead question outside the list still counts
    menu = _menu(text)
    own, other = _action_words(domain, call, rule)
    topics: list[str] = []
    # read line by line: a numbered option ("1. Upgrade both?") splits into sentences at its
    # number, and its question is still one of the menu's options
    lined = [(bool(_LIST_ITEM.match(line.replace("**", ""))), s) for line in text.splitlines() for s in sentences(line)]
    for item, sentence in lined:
        question = sentence.endswith("?")
        if (menu and question and (item or _LIST_ITEM.match(sentence))) or "|" in sentence:
            continue  # a menu's options; a table's cells ("| Cancellable?")
        if question:
            if _INFORMATION.search(sentence) or _FACT.search(sentence) and not _PROCEED.search(sentence):
                continue
            last_clause = re.split(r"[:;\u2014]", sentence)[-1]
            if _WH.search(last_clause) or (_WH.search(sentence) and not _STRONG.search(sentence)):
                continue  # "Which card would you like to use?" asks for a detail
            if _CHOICE.search(sentence) and not _STRONG.search(sentence):
                continue  # "Keep 3 bags or reduce to 2?" asks for a choice
            asks = bool(_ASKS.search(sentence) or _SHORT_ASK.match(sentence)) or (call is not None and rule is not None and names_action(sentence, call, rule))
        else:
            # "please confirm whether you'd like to keep PHL or switch to EWR" asks for a choice
            asks = bool(_ASKS_IMPERATIVE.search(sentence)) and not (_WHETHER.search(sentence) and _CHOICE.search(sentence))
        if not asks:
            continue
        if _names_any(sentence, own):
            return True
        # only a question names the action it asks about; a request for a yes refers back to it
        topics.append("other" if question and other and _names_any(sentence, other)
                      and not _told_apart(sentence, domain, rule) else "generic")
    # a generic request ("Please confirm with yes") asks about what the specific one names:
    # with only another action named ("Shall I proceed with the upgrade?"), not this one
    return "generic" in topics and "other" not in topics


# The agent announcing a confirmation step still to come ("Once you confirm, I'll list the details and ask
# for your final 'yes' before booking"; "I will: 1. Summarize ... 2. Ask for your explicit yes before ..."):
# a promise to ask later, in the future tense, for an approval that comes before the action.
_LATER_ASK = re.compile(
    r"\b(?:ask(?: you)? for|request|get|obtain|seek)\s+(?:your\s+)?(?:explicit\s+|final\s+)?(?:confirmation|approval|go-ahead|\"?yes\"?)"
    r"\s+before\b|\bfor your (?:approval|confirmation) before\b",
    re.IGNORECASE,
)
_FUTURE = re.compile(r"\b(?:i|we)(?:'ll| will)\b|\bwill then\b", re.IGNORECASE)


def defers_go_ahead(text: str) -> bool:
    """Whether an agent message announces that it will ask for the go-ahead later (after details, a
    choice or a check): it does not ask for it now, whatever else it asks."""
    folded = fold(text)
    announced = False  # a header in the future tense ("..., I will:") announces the list items after it
    for line in folded.splitlines():
        item = bool(_LIST_ITEM.match(line))
        # an option of a choice ("- proceed now, and I'll present the totals for your confirmation; or")
        # says what would follow if it is chosen, not what this message does
        if not (item and re.search(r"\bor\W*$", line)):
            for sentence in re.split(r"(?<=[.!?])\s+", line):
                if _LATER_ASK.search(sentence) and (_FUTURE.search(sentence) or (announced and item)):
                    return True
        if line.strip():
            announced = (announced and bool(_LIST_ITEM.match(line))) or (line.rstrip().endswith(":") and bool(_FUTURE.search(line)))
    return False


def _action_words(domain: str | None, call: ToolCallView | None, rule: Confirmation | None) -> tuple[set[str], set[str]]:
    """(words only this write's action uses, words only the domain's other writes use), from the contract."""
    if domain is None or call is None or rule is None:
        return set(), set()
    try:
        writes = contract(domain).write
    except Exception:  # noqa: BLE001 -- no contract: no other actions known
        return set(), set()
    # a word that begins a target's name ("reserv" of reservation) names the target, not an action
    targets = [name.removesuffix("_id") for name in contract(domain).entities]
    lists = [{w.lower() for w in c.confirmation.words if not any(t.startswith(w.lower()) for t in targets)}
             for c in writes if c.confirmation]
    # a word in several actions' lists ("change", "update") names none of them in particular
    specific = {w for words in lists for w in words if sum(w in other for other in lists) == 1}
    own = {w.lower() for w in rule.words} & specific
    return own, specific - own


def _told_apart(sentence: str, domain: str | None, rule: Confirmation | None) -> bool:
    """Whether a question that names a word only another action uses also names a word of this
    write's list that each such action lacks ("proceed with updating your default address": "update"
    is the item change's word, "address" is not): the sentence is about this write, not the other."""
    if domain is None or rule is None:
        return False
    try:
        writes = contract(domain).write
    except Exception:  # noqa: BLE001 -- no contract: nothing to tell apart
        return False
    mine = {w.lower() for w in rule.words}
    lists = [{w.lower() for w in c.confirmation.words} for c in writes if c.confirmation and c.confirmation is not rule]
    specific = {w for words in lists for w in words if sum(w in o for o in lists) == 1} - mine
    named = [words for words in lists if _names_any(sentence, words & specific)]
    return bool(named) and all(_names_any(sentence, mine - words) for words in named)


def _names_any(sentence: str, words: set[str]) -> bool:
    stems = {w[:-1] if w.endswith("e") and len(w) > 4 else w for w in words}
    return any(re.search(r"\b" + re.escape(w), sentence) for w in stems)


# Questions that ask for a detail, a choice, a fact or permission to look something up, not for the go-ahead.
_WH = re.compile(
    r"^\W*(?:\w+\W+){0,3}?(which|what|when|where|how|who|whose|why|(?:can|could) you (?:please )?tell me|do you (?:know|have|need))\b",
    re.IGNORECASE,
)
# A bare "OK?" / "Right?" after a statement of the action.
_SHORT_ASK = re.compile(r"^\W*(ok(?:ay)?|alright|all right|right|correct|agreed|good|sound good|yes or no)\W*\?$", re.IGNORECASE)
# "or (have) any other requests" closes an offer, it offers no second option
_CHOICE = re.compile(r"\w[)\],]*\s+or\s+(?!not\b|no\b|something\b|anything\b|(?:if you )?(?:have |need )?(?:any )?other (?:requests?|questions?|concerns?|needs?)\b)\w",
                     re.IGNORECASE)
_WHETHER = re.compile(r"\b(?:if|whether)\b", re.IGNORECASE)
_STRONG = re.compile(r"\b(confirm|proceed|go ahead)\b", re.IGNORECASE)
_PROCEED = re.compile(r"\b(proceed|go ahead|want me to|like me to)\b", re.IGNORECASE)
_FACT = re.compile(r"\b(?:can|could|would) you (?:please )?confirm\b|\bis (?:this|that) the (?:correct|right)\b", re.IGNORECASE)
_INFORMATION = re.compile(
    r"\b(check(?:ing)?|look (?:into|up|for)|looking (?:into|up)|see if|search(?:ing)?|find out|explore|calculat\w+|verify|review|"
    r"consider|help (?:with|you)|like help|either of these|any of these|other options|anything else|transfer\w*)\b",
    re.IGNORECASE,
)
_LIST_ITEM = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)]|option \d+)", re.IGNORECASE)
_LIST_QUESTION = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)]|option \d+)\s*.*\?\s*$", re.IGNORECASE | re.MULTILINE)


def _questionnaire(text: str, about: About) -> bool:
    """Whether an agent message asks the user for two or more details of the action
    ("1. Will the passenger be just yourself? 2. Would you like travel insurance? ..."); a
    question about another target or action ("what is your reason for cancelling IFOYYZ?") is
    not one."""
    asked = 0
    for sentence in sentences(text):
        if not sentence.endswith("?") or _STRONG.search(sentence) or _FACT.search(sentence):
            continue
        if about(sentence, None) in ("sibling", "other"):
            continue
        # the question after a label ("Travel insurance: would you like to add it?") is the one asked
        last_clause = re.split(r"[:;\u2014]", sentence)[-1]
        if _WH.search(last_clause) or _DETAIL.search(sentence) or _DETAIL.search(last_clause.strip()):
            asked += 1
    return asked >= 2


# A question asking for one more detail of the action (bags, insurance, passengers, payment).
_DETAIL = re.compile(r"^\W*(?:\d+[.)]\s*)?(?:also,?\s*)?(?:would you like to (?:add|purchase|buy|include)|do you (?:need|want) (?:any|to add)|any \w+ (?:needed|bags)|will (?:the|all|any) passengers?)\b",
                     re.IGNORECASE)


def _menu(text: str) -> bool:
    """Whether an agent message offers alternatives as a list of questions ("1. Upgrade both? 2. Stay?")."""
    return len(_LIST_QUESTION.findall(text.replace("**", ""))) >= 2


# Talk of money: a condition about a price or a refund binds only a write that pays or refunds.
_MONEY = re.compile(r"\b(price|cost|charg\w*|pay|paid|payment|refund\w*|balance|difference|fees?)\b|\$\s?\d", re.IGNORECASE)
# A contrastive reference to the targets not being acted on ("for the others", "the rest").
_CONTRAST = re.compile(r"\b(?:the|for the|as for the) (?:others?|rest)\b|\bthe other (?:ones?|reservations?|orders?|items?|flights?|bookings?)\b",
                       re.IGNORECASE)
_PAYS = ("payment_id", "payment_method_id", "payment_methods", "amount")


def _values(value: object) -> list[str]:
    """The string values of a call's arguments that identify what it acts on (ids, names, addresses)."""
    if isinstance(value, str):
        return [value] if len(value.strip().lstrip("#")) >= 4 else []
    if isinstance(value, dict):
        return [v for child in value.values() for v in _values(child)]
    if isinstance(value, list):
        return [v for child in value for v in _values(child)]
    return []


# An entity id as agents write them (a reservation "SE9KEL", an order "#W2702727"), not a flight number.
_ID_SHAPE = re.compile(r"#W\d{7}\b|\b(?![A-Z]{3}\d{3}\b)(?=[A-Z]*\d)(?=\d*[A-Z])[A-Z0-9]{6}\b")


def sentence_about(domain: str, call: ToolCallView, rule: Confirmation, facts: Facts, statement: str = "") -> About:
    """What a reply's sentence is about relative to ``call``: ``this`` write (it names the write's
    target, values or action), ``other`` (another action, or money when the write moves none),
    ``sibling`` (another target: another id tool results or the ``statement`` showed, "the
    others"), or ``unknown``."""
    own, other = _action_words(domain, call, rule)
    values = _values({k: v for k, v in call.arguments.items() if k not in _PAYS})
    payment = [str(call.arguments[k]) for k in ("payment_id", "payment_method_id") if isinstance(call.arguments.get(k), str)]
    targets = {entity_id(v) for v in _values(call.arguments)}
    pays = any(k in call.arguments for k in _PAYS)
    known = facts.ids | {entity_id(m) for m in _ID_SHAPE.findall(statement)}

    def about(sentence: str, previous: str | None) -> Literal["this", "sibling", "other", "unknown"]:
        # ids first: a sentence naming this target is about it, one naming only another is not
        if any(mentions_value(sentence, v, facts.methods) for v in values + payment):
            return "this"
        if any(i not in targets for i in mentioned_ids(sentence, known)) or _CONTRAST.search(sentence):
            return "sibling"
        if _names_any(sentence, own):
            return "this"
        if _names_any(sentence, other):
            return "other"
        if not pays and _MONEY.search(sentence):
            return "other"
        return "unknown"

    return about


def _pairs(turns: list[Turn]) -> list[tuple[int, int]]:
    """(agent turn, the user's next turn) index pairs into ``turns``, no agent turn between."""
    found: list[tuple[int, int]] = []
    for i, turn in enumerate(turns):
        if turn.role != "agent":
            continue
        if i + 1 < len(turns) and turns[i + 1].role == "user":
            found.append((i, i + 1))
    return found


def _creates(rule: Confirmation) -> bool:
    # A statement that names no existing target describes something new: doing it twice
    # makes two (a second booking, a second certificate), so each needs its own yes.
    return not any(p in ("reservation_id", "order_id", "user_id") for p in rule.conveys) and not any(
        p.startswith(("address", "zip")) for p in rule.conveys
    )


class CompiledJudge:
    """The deterministic backend (see the module docstring for the rules)."""

    name = "compiled"
    version = COMPILED_VERSION

    def polarity(self, text: str) -> Polarity:
        """The compiled polarity of a reply."""
        return polarity(text)

    def reason(self, domain: str, view: DialogueView, covered: bool = False) -> Reason | None:
        """The first reason the user stated (covered: a health or weather reason)."""
        return stated_reason(view, covered=covered)

    def confirmation(self, domain: str, view: DialogueView, call: ToolCallView, at: int | None = None) -> Finding:
        """The pairs confirming ``call`` still in force at ``at``."""
        rule = needs_confirmation(domain, call.name)
        if rule is None:
            return Finding(needed=False, judge=self.label)
        prefix = view.before(at) if at is not None else view
        facts = facts_of(prefix)
        turns = prefix.turns
        found: list[Pairing] = []
        rejected: list[Rejection] = []
        for i, j in _pairs(turns):
            why = self._rejection(domain, turns, i, j, call, rule, prefix, facts)
            if why is None:
                found.append(Pairing(statement_at=turns[i].position, reply_at=turns[j].position, statement=turns[i].text,
                                     reply=turns[j].text))
            else:
                rejected.append(why.model_copy(update={"statement_at": turns[i].position, "reply_at": turns[j].position}))
        if not found and not rejected:
            rejected.append(rejection("no_pair"))
        return Finding(needed=True, pairs=found, judge=self.label, rejections=rejected)

    @property
    def label(self) -> str:
        """``compiled/N+HASH`` (the version and the content hash of its rules), as stored on the reports it scores."""
        return compiled_label()

    def pair_confirms(self, view: DialogueView, domain: str, call: ToolCallView, statement_at: int, reply_at: int, at: int) -> bool:
        """Whether the pair at (``statement_at``, ``reply_at``) confirms ``call`` made at ``at``."""
        return any(p.statement_at == statement_at and p.reply_at == reply_at for p in self.confirmation(domain, view, call, at).pairs)

    # -- the rules ------------------------------------------------------------------------

    def _rejection(self, domain: str, turns: list[Turn], i: int, j: int, call: ToolCallView, rule: Confirmation,
                   view: DialogueView, facts: Facts) -> Rejection | None:
        """None when the pair (``i``, ``j``) confirms ``call``, else the first rule that rejects it."""
        statement, reply = turns[i], turns[j]
        about = sentence_about(domain, call, rule, facts, statement.text)
        said = polarity(reply.text, about)
        if said != "yes" and not (said in ("conditional", "question") and _resolved(turns, j, call, rule, domain, about)):
            return rejection("reply_not_yes", f"the reply reads as {said}")
        if _target_disputed(reply.text, call, facts):
            # the user named another id for the target ("Order ID: 9502126" to "is #W9502127 the order?")
            return rejection("target_disputed", "the reply names another id than " + ", ".join(
                str(call.arguments[k]) for k in ("order_id", "reservation_id") if k in call.arguments))
        if defers_go_ahead(statement.text):
            return rejection("go_ahead_deferred")  # "once you confirm, I'll list the details and ask for your final yes"
        if not asks_go_ahead(statement.text, call, rule, domain) and not _taken_up(turns, i, j, call, rule, domain):
            return rejection("no_go_ahead_asked", f"the statement does not ask to go ahead with {call.name}")
        if _questionnaire(statement.text, sentence_about(domain, call, rule, facts, statement.text)):
            return rejection("questionnaire")  # the answers complete the action: it was not yet stated as it is made
        episode = self._episode(turns, i, about)
        earlier = [t.text for t in episode[:-1]]
        context = [t.text for t in turns[:i]] + [reply.text]
        # the agent must state the action: the reply resolves references, it does not state details
        if not names_action(_without_negated_ability("\n".join([*earlier, statement.text])), call, rule):
            return rejection("action_not_named", f"no word of {call.name}'s action ({', '.join(rule.words)}) in the statement")
        lacking = missing(statement.text, call, rule, view, context, facts, earlier=earlier, reply=reply.text)
        if lacking:
            return _not_conveyed(lacking, call)
        differs = amount_mismatch(reply.text, call)
        if differs is not None:
            return rejection("amount_mismatch", differs)  # the user agreed to another figure than the write moves
        if _payment_settled_later(turns, i, j, call, facts):
            # the reply changed the payment and the agent put it again: the later pair agrees to it
            return rejection("payment_settled_later")
        return self._in_force(domain, turns, j, call, rule, view, about)

    @staticmethod
    def _episode(turns: list[Turn], i: int, about: About | None = None) -> list[Turn]:
        """The statement and the agent's turns before it since the user last changed the request.

        Walking back over earlier pairs: a user turn that agrees, or answers a detail question
        (a payment method, a choice) keeps the episode open; one that refuses, attaches a
        condition or changes the request closes it.
        """
        episode = [turns[i]]
        k = i - 1
        while k >= 0 and len(episode) < 4:
            turn = turns[k]
            if turn.role == "user":
                if polarity(turn.text, about) in ("no", "conditional") or _CHANGE.search(fold(turn.text)):
                    break
            else:
                episode.insert(0, turn)
            k -= 1
        return episode

    @staticmethod
    def _in_force(domain: str, turns: list[Turn], j: int, call: ToolCallView, rule: Confirmation, view: DialogueView,
                  about: About | None = None) -> Rejection | None:
        """None when the yes at ``j`` is still in force at the write, else the rule that ended it."""
        reply_at = turns[j].position
        for k, later in enumerate(turns[j + 1 :], start=j + 1):
            if later.role != "user":
                # the write failed and the agent put it to the user again with other details (a
                # revised plan): the earlier yes is superseded by the answer to the new statement;
                # a revision that states this write as before leaves its details, and the yes, as they were
                if k + 1 < len(turns) and turns[k + 1].role == "user" and _failed_between(view, call, reply_at, later.position) \
                        and asks_go_ahead(later.text, call, rule, domain) and names_action(later.text, call, rule) \
                        and not _restated(later.text, call, rule, view, turns, j, k):
                    return rejection("superseded_by_revision", f"a revised plan at event {later.position}")
                continue
            if polarity(later.text, about) in ("no", "conditional"):
                return rejection("withdrawn_later", f"the user's turn at event {later.position} reads as {polarity(later.text, about)}")
            if _CHANGE.search(fold(later.text)):
                # the user changed the request since (a re-confirmation is a pair of its own)
                return rejection("changed_later", f"the user's turn at event {later.position} changes the request")
        if _creates(rule):
            for pos, made in view.calls:
                if pos <= reply_at or made.name != call.name or made.arguments != call.arguments:
                    continue
                result = view.result_of(made)
                if result is not None and not result.error:
                    # this very thing was already made with it: a second one needs its own yes
                    return rejection("used_up", f"an identical {call.name} succeeded at event {pos}")
        return None


def _not_conveyed(lacking: list[str], call: ToolCallView) -> Rejection:
    """The rejection for what :func:`tauguard.dialogue.statement.missing` found lacking."""
    if lacking == ["flights.*.flight_number"]:
        return rejection("options_not_singled_out", "the statement offers alternatives to the write's flights")
    if lacking == ["payment"]:
        return rejection("payment_contradicted", "the statement names another payment method than " + ", ".join(payment_ids(call)))
    if lacking == ["payment_methods.*.amount"]:
        return rejection("payment_split_unstated", "each share of the split payment is not said")
    shown = []
    for path in lacking:
        values = [v for v in values_at(call.arguments, path.split(".")) if v not in (None, "")]
        if path == "passengers":
            names = [f"{p.get('first_name', '')} {p.get('last_name', '')}".strip() for p in call.arguments.get("passengers") or []
                     if isinstance(p, dict)]
            shown.append("passengers (" + ", ".join(names) + ")")
        else:
            shown.append(f"{path}={str(values[0])[:60]!r}" if len(values) == 1 else path)
    return rejection("arguments_not_conveyed", "not conveyed: " + ", ".join(shown))


# An answer saying what the user asked for cannot be had, or costs them something.
_UNMET = re.compile(r"\b(?:unfortunately|not (?:able|possible|eligible|allowed)|unable|cannot|can'?t be|(?:is|are|will) not be waived|"
                    r"(?:there )?(?:is|will be) an? (?:\w+ )?fee)\b", re.IGNORECASE)


def _resolved(turns: list[Turn], j: int, call: ToolCallView, rule: Confirmation, domain: str, about: About) -> bool:
    """Whether a yes that carries a question or condition (reply ``j``) is resolved before the write.

    The reply must agree to this write in a sentence of its own; the agent's next message answers
    the question or condition and the write follows that answer with no further reply (when the
    user replies again, or is asked for the go-ahead again, the later pair is the confirmation, as
    both labellers read a yes with a question back). The yes is not resolved when the
    answer says about this write that what was asked cannot be had (the condition is not met),
    or when it puts the action to the user again and the write does not wait for the reply
    (the answer changed or re-opened the details).
    """
    if not any(agrees(s) and about(s, None) in ("this", "unknown") for s in sentences(fold(turns[j].text))):
        return False
    if j + 1 >= len(turns) or turns[j + 1].role != "agent":
        return False  # nobody answered: the write went ahead on a yes that waits
    answer = turns[j + 1].text
    if j + 2 < len(turns) or asks_go_ahead(answer, call, rule, domain):
        return False  # the user was asked again or answered again: that later pair is the confirmation
    return not any(_UNMET.search(s) and about(s, None) == "this" for s in sentences(fold(answer)))


def _payment_settled_later(turns: list[Turn], i: int, j: int, call: ToolCallView, facts: Facts) -> bool:
    """Whether the reply at ``j`` changed the payment the statement at ``i`` named, and the agent put
    the changed payment to the user again before the write, answered by the user ("charge it to my
    card ending in 7334" to a statement naming the card ending in 5018; then "Payment: Mastercard
    ending in 7334. Please confirm"): the yes agreed to the action as first stated, and the later
    pair is the one that agrees to it as made. A reply that only supplies a payment the statement
    left open keeps its yes (the agent's restatement is a re-confirmation)."""
    methods = payment_ids(call)
    named = [m for m in facts.methods if first_mention(turns[i].text, m, facts) is not None]
    changed = [m for m in methods if m not in named and first_mention(turns[j].text, m, facts) is not None]
    if not changed or not any(m not in methods and method_kind(m, facts) == method_kind(c, facts) for m in named for c in changed):
        return False  # the statement named no other method of that kind: nothing was changed
    return any(turns[k].role == "agent" and k + 1 < len(turns) and turns[k + 1].role == "user"
               and any(first_mention(turns[k].text, m, facts) is not None for m in changed)
               for k in range(j + 1, len(turns)))


# An action named only as what will no longer be possible ("after this change we won't be able to cancel
# or modify the order"; "it cannot be cancelled") is a warning, not the action put to the user.
_NEGATED_ABILITY = re.compile(r"\b(?:won'?t|will not|cannot|can'?t|unable to|not be able to|no longer)\b[^.;:,\n]*", re.IGNORECASE)


def _without_negated_ability(text: str) -> str:
    """``text`` without the clauses that name an action as impossible."""
    return _NEGATED_ABILITY.sub(" ", text.replace("\u2019", "'"))


def _target_disputed(reply: str, call: ToolCallView, facts: Facts) -> bool:
    """Whether the reply names, in the target id's own shape, an id that is neither the call's target
    nor any id the conversation's tool results showed: the user identifies the target otherwise
    (a differing order number), so the yes is not to the target the call acts on."""
    for key in ("order_id", "reservation_id"):
        target = call.arguments.get(key)
        if not isinstance(target, str):
            continue
        own = entity_id(target)
        if re.fullmatch(r"W?\d{7}", own):  # an order number, written with or without its "#W"
            # "#W9502126", or a bare number said as the order's ("Order ID: 9502126"), not a card's digits
            said = {"W" + d for d in re.findall(r"(?:#W|\bW|\border(?: id| number| no\.?)?\s*[:#]?\s*#?)(\d{7})\b", reply, re.IGNORECASE)}
        else:
            said = {entity_id(m) for m in _ID_SHAPE.findall(reply)}
        if any(i != own and i not in facts.ids for i in said):
            return True
    return False


def _taken_up(turns: list[Turn], i: int, j: int, call: ToolCallView, rule: Confirmation, domain: str) -> bool:
    """Whether the user takes up an offer of the action by restating it: the agent's turn asks a
    question that is no request for a go-ahead (which option, what the user prefers), the reply asks for this action naming every
    value the contract lists by value ("Yes, please go ahead and send the $50 certificate"), and
    the agent does not put the action to the user again before making it (then that later yes
    is the confirmation, and the first reply was a choice). A reply that tells the agent to go ahead
    in words of its own ("let's go ahead with that", "Go ahead and process that!") takes up the
    action as the statement states it (``states`` checks that), and a later re-put only re-confirms
    it, as the blind adjudication of 2026-12-06 reads it; not when the agent said it cannot act
    before it knows something ("Before I can proceed, I need to know ..."). An agent asking for the
    choice in the imperative ("Please let me know which option you would like") asks as a question
    does, for such a reply."""
    # a request for the user's choice in the imperative ("Please let me know which option you would like") asks
    # as a question does, for a reply that goes ahead with one
    asked = "?" in turns[i].text or (_ASKS_CHOICE.search(turns[i].text) is not None and _goes_ahead(turns[j].text))
    if not asked or asks_go_ahead(turns[i].text):
        return False  # no question, or one asking the go-ahead of something else
    if not names_action(turns[j].text, call, rule) and not (_goes_ahead(turns[j].text) and _picks_option(turns[i].text, turns[j].text)):
        return False  # the reply neither asks for the action nor takes up an option put to it
    values = [v for path in rule.conveys for v in values_at(call.arguments, path.split("."))
              if v is not None and not isinstance(v, bool) and v != ""]
    if not values:
        return False
    if _goes_ahead(turns[j].text) and not _NEEDS_FIRST.search(turns[i].text):
        return True  # the statement states the values (checked by ``states``); a later re-put re-confirms
    if not all(mentions_value(turns[j].text, str(v)) for v in values):
        return False
    return not any(t.role == "agent" and asks_go_ahead(t.text, call, rule, domain) and names_action(t.text, call, rule)
                   for t in turns[j + 1 :])


# An explicit go-ahead in the user's own words ("Go ahead and process that!", "let's go ahead with that").
_GO_AHEAD = re.compile(r"\b(?:go ahead|proceed|go with (?:that|this|it|option \w+)\b)", re.IGNORECASE)
# An option of the statement's list chosen by its label ("Option 2 sounds great"; "let's go with option B").
_OPTION = re.compile(r"\boption\s+(\w+)\b", re.IGNORECASE)


def _picks_option(statement: str, reply: str) -> bool:
    """Whether ``reply`` chooses, by its label, an option the statement lists (a numbered or lettered
    line or table row, or one headed "Option N")."""
    for label in {m.group(1).lower() for m in _OPTION.finditer(reply)}:
        row = re.compile(r"^\W*(?:option\s+)?" + re.escape(label) + r"\s*(?:[.):|\u2014-]|\*\*)", re.IGNORECASE)
        if any(row.match(line.replace("**", "")) for line in statement.splitlines()):
            return True
    return False


# The agent saying it cannot act until it knows something ("Before I can proceed, I need to know your
# reason"): what it will do is not settled yet, so a go-ahead in the answer has nothing settled to take up.
_NEEDS_FIRST = re.compile(r"\bbefore (?:i|we) (?:can )?(?:proceed|go ahead|continue)\b", re.IGNORECASE)


_ASKS_CHOICE = re.compile(r"\blet me know (?:which|how|what)\b", re.IGNORECASE)


def _goes_ahead(reply: str) -> bool:
    """Whether a reply tells the agent, in a sentence that is no question, to go ahead with an action
    (not with a look-up: "go ahead and check the prices" asks for information)."""
    return any(_GO_AHEAD.search(s) and not s.endswith("?") and not _INFORMATION.search(s) for s in sentences(fold(reply)))


def _restated(revision: str, call: ToolCallView, rule: Confirmation, view: DialogueView, turns: list[Turn], j: int, k: int) -> bool:
    """Whether a revised plan (turn ``k``) leaves ``call`` as the statement answered at ``j`` had it:
    the revision, read with the agent's turns since that statement, states the call, and that
    statement (or its reply) already said what the call pays in total."""
    if not states(revision, call, rule, view, [t.text for t in turns[:k]], facts_of(view),
                  earlier=[t.text for t in turns[j - 1 : k] if t.role == "agent"]):
        return False
    shares = payment_shares(call)
    if not shares or None in shares:
        return True
    answered = turns[j - 1].text + "\n" + turns[j].text
    return mentions_number(answered, abs(sum(a for a in shares if a is not None)))


def _same_target(a: ToolCallView, b: ToolCallView) -> bool:
    """Whether two calls of a tool act on the same existing target (any two, when it names none)."""
    keys = [k for k in ("reservation_id", "order_id") if k in a.arguments]
    return a.name == b.name and all(a.arguments.get(k) == b.arguments.get(k) for k in keys)


def _failed_between(view: DialogueView, call: ToolCallView, start: int, end: int) -> bool:
    """Whether a call of ``call``'s tool on its target failed (an error result) between two positions."""
    return any(r.error and _same_target(r.call, call) and start < r.position < end for r in view.results)


def judge_conversation(judge: DialogueJudge, domain: str, conversation: Conversation, call: ToolCallView) -> Finding:
    """``judge``'s confirmation finding for ``call``, proposed after ``conversation``."""
    return judge.confirmation(domain, view_of(conversation), call)
