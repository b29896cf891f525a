"""Checks shared by all domains: explicit confirmation, the payment the user agreed to, and a
read of the target entity."""

from __future__ import annotations

import re

from tauguard_strategies.action_guard.checks.base import (
    CheckContext,
    CheckResult,
    check,
    met,
    missing,
    read,
    violated,
)
from tauguard_strategies.action_guard.dialogue import confirmation_or_why, find_confirmation, payment_named
from tauguard.dialogue.statement import facts_of

_PRICE = re.compile(r"(\$\s?\d|\d+(?:\.\d+)?\s?(?:usd|dollars?)\b|\b(?:price|cost|costs|charge|charged|fee)\b)", re.IGNORECASE)


@check("dialogue.explicit_confirmation")
def explicit_confirmation(ctx: CheckContext) -> CheckResult:
    """The agent stated this action and the user then replied yes.

    params: ``with_price`` (bool) -- the statement must also mention a price.
    """
    must = _PRICE if ctx.params.get("with_price") else None
    found, why = confirmation_or_why(ctx.evidence, ctx.call, ctx.judge, ctx.domain, must_mention=must)
    if found is None:
        what = "the action details and its price" if must else "the action details"
        because = f" (dialogue judge: {why})" if why else ""
        return missing(f"no explicit user 'yes' after the agent stated {what} of {ctx.call.name}{because}")
    return met(statement=found.statement.text, reply=found.reply.text)


@check("tool.entity_read")
def entity_read(ctx: CheckContext) -> CheckResult:
    """The entity the call targets was seen in a tool result before the call.

    params: ``kind`` (reservation / order / user / bill / line / customer), ``arg`` (the
    call argument holding its id), ``read`` and ``read_arg`` (the read to suggest).
    """
    kind, arg = ctx.params["kind"], ctx.params["arg"]
    entity_id = ctx.arg(arg)
    if ctx.evidence.entity(kind, entity_id) is not None:
        return met(f"{kind} {entity_id} was read")
    suggestion = read(ctx.params["read"], **{ctx.params.get("read_arg", arg): entity_id})
    return missing(f"{kind} {entity_id} was not read before the call", suggestion)


# A line of a payment breakdown that pays nothing ("Mastercard: $0") names a method left unused.
_ZERO_SHARE = re.compile(r"\$\s*0(?:\.0+)?(?![\d.,])")


_CLAUSE = re.compile(r"[;\n()]|(?<=[.!?])\s+|,\s+(?:and\s+)?|\s+and\s+")
# a clause telling what a method holds ("gift_card_1 has $300 left"), not what it pays
_BALANCE = re.compile(r"\b(?:balance|left|available|remains on)\b|\bwith\s+(?:a\s+)?\$", re.IGNORECASE)
_DOLLARS = re.compile(r"\$\s?(\d[\d,]*(?:\.\d+)?)")


def _stated_shares(text: str, method: str, info: dict[str, object]) -> list[float]:
    """The dollar amounts ``text`` gives ``method``: in a clause naming it by its id or its last
    four digits ("$100 on gift_card_6468981", "Mastercard ending 2273: $116"). A method only
    mentioned, without an amount (the order's original card beside the new one), pays nothing."""
    needles = [re.escape(method), *([re.escape(str(info["last_four"]))] if info.get("last_four") else [])]
    out: list[float] = []
    for clause in _CLAUSE.split(text):
        if not _BALANCE.search(clause) and any(re.search(r"(?<![A-Za-z0-9])" + n + r"(?![A-Za-z0-9])", clause) for n in needles):
            out += [float(a.replace(",", "")) for a in _DOLLARS.findall(clause)]
    return out


@check("dialogue.payment_named")
def payment_named_check(ctx: CheckContext) -> CheckResult:
    """The write's payment method was put to the user (named by them, or by the agent before their answer)."""
    if payment_named(ctx.call, ctx.evidence.view):
        return met("the payment method came up in the dialogue")
    return missing(f"the payment method of {ctx.call.name} was never named to or by the user; ask which one to use")


@check("dialogue.agreed_payment")
def agreed_payment(ctx: CheckContext) -> CheckResult:
    """A write paid from a list of methods (a booking) charges every method of the split the
    statement the user agreed to gives a dollar share.

    The statement in force (the one the user's yes answered, per the dialogue judge) is what
    the user agreed to: a split over several of the user's methods ("$100 on the gift card, the
    rest on the Visa") charged in full to one of them is another payment. Whether each share
    of a split call was said is the dialogue judge's (an unsaid share leaves the write
    unconfirmed). Without a confirmation in force the confirmation item judges the write; a
    write with one payment argument (a change, bags: the policy asks for a single method)
    passes.
    """
    listed = [m for m in ctx.arg("payment_methods") or [] if isinstance(m, dict)]
    methods = [str(m.get("payment_id")) for m in listed if m.get("payment_id")]
    if not methods:
        return met("the write charges no list of payment methods")
    found = find_confirmation(ctx.evidence, ctx.call, ctx.judge, ctx.domain)
    if found is None:
        return met("no confirmation in force (the confirmation item judges the write)")
    text = "\n".join(line for line in found.statement.text.splitlines() if not _ZERO_SHARE.search(line))
    facts = facts_of(ctx.evidence.view)
    named = sorted(m for m in {*facts.methods, *methods} if _stated_shares(text, m, facts.method_info.get(m) or {}))
    if len(named) >= 2 and set(methods) < set(named):
        return violated(
            f"the statement the user agreed to splits the payment over {', '.join(named)}; the call charges only {', '.join(methods)}",
            stated=named, charged=methods,
        )
    return met("the payment is the one the user agreed to")
