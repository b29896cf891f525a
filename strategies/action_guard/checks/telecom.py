"""Telecom checks: customer identity, line ownership, bills, contract, refuel and roaming."""

from __future__ import annotations

import re
from typing import Any

from tauguard import domains
from tauguard_strategies.action_guard.checks.base import (
    CheckContext,
    CheckResult,
    check,
    met,
    missing,
    read,
    violated,
)
from tauguard_strategies.action_guard.dialogue import (
    find_confirmation,
    mentions_value,
    user_turn_matching,
)

_TRAVEL = re.compile(
    r"\b(abroad|overseas|travel\w*|trip|vacation|holiday|international\w*|roaming|outside (?:of )?(?:the |my )?(?:home|country|us|usa|united states|network))\b",
    re.IGNORECASE,
)
_NUMBER_WORDS = {"one": 1.0, "two": 2.0, "half": 0.5}


def _customer(ctx: CheckContext) -> tuple[str, dict[str, Any] | None]:
    cid = ctx.arg("customer_id")
    return cid, ctx.evidence.entity("customer", cid)


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


# Reads that identify a customer (the policy: "by phone number, customer id, or name + date of birth").
_LOOKUPS = ("get_customer_by_phone", "get_customer_by_id", "get_customer_by_name")


def _identified_customers(ctx: CheckContext) -> list[str]:
    """Customers a lookup identified, in order (a name search identifies only a unique match)."""
    found: list[str] = []
    for obs in ctx.evidence.results_of(*_LOOKUPS, "get_details_by_id"):
        if obs.call.name == "get_details_by_id" and not str(obs.call.arguments.get("id", "")).startswith("C"):
            continue
        records = obs.data if isinstance(obs.data, list) else [obs.data]
        ids = [r["customer_id"] for r in records if isinstance(r, dict) and isinstance(r.get("customer_id"), str)]
        if len(ids) == 1 and ids[0] not in found:
            found.append(ids[0])
    return found


@check("telecom.customer_identified")
def customer_identified(ctx: CheckContext) -> CheckResult:
    """A customer lookup returned the call's customer; acting for another customer than the
    one identified is a violation (one customer per conversation), not missing evidence."""
    cid = ctx.arg("customer_id")
    identified = _identified_customers(ctx)
    if cid in identified:
        return met(f"customer {cid} was looked up")
    if identified:
        return violated(f"customer {cid} is not the identified customer {identified[0]}", identified=identified)
    return missing(
        f"customer {cid} was not identified by a lookup (phone number, customer id, or name + date of birth)",
        read("get_customer_by_id", customer_id=cid),
    )


@check("telecom.line_of_customer")
def line_of_customer(ctx: CheckContext) -> CheckResult:
    """The line is one of the customer's lines (from the customer's tool result)."""
    cid, customer = _customer(ctx)
    lid = ctx.arg("line_id")
    if customer is None:
        return missing(f"customer {cid} was not looked up, so line {lid} cannot be matched to them", read("get_customer_by_id", customer_id=cid))
    if lid in (customer.get("line_ids") or []):
        return met(f"line {lid} belongs to {cid}")
    return violated(f"line {lid} is not a line of customer {cid}")


@check("telecom.line_phone_from_user")
def line_phone_from_user(ctx: CheckContext) -> CheckResult:
    """The line's phone number (from a tool result) is the number the user gave."""
    lid = ctx.arg("line_id")
    line = ctx.evidence.entity("line", lid)
    if line is None:
        return missing(f"line {lid} was not read", read("get_details_by_id", id=lid))
    phone = _digits(str(line.get("phone_number", "")))
    if phone and any(phone in _digits(t) for t in ctx.evidence.user_texts()):
        return met(f"line {lid} has the user's number {line.get('phone_number')}")
    return missing(f"line {lid} ({line.get('phone_number')}) is not the phone number the user gave; confirm the line")


def _bills_of(ctx: CheckContext, cid: str) -> list[dict[str, Any]]:
    return [b for b in ctx.evidence.entities_of("bill") if b.get("customer_id") == cid]


@check("telecom.bill_overdue")
def bill_overdue(ctx: CheckContext) -> CheckResult:
    """The bill belongs to the customer and its latest observed status is ``params.status``."""
    cid, bid = ctx.arg("customer_id"), ctx.arg("bill_id")
    bill = ctx.evidence.entity("bill", bid)
    if bill is None:
        return missing(f"bill {bid} status was not checked", read("get_details_by_id", id=bid))
    if bill.get("customer_id") != cid:
        return violated(f"bill {bid} belongs to {bill.get('customer_id')}, not {cid}")
    wanted = ctx.params.get("status", "Overdue")
    if str(bill.get("status", "")).lower() != wanted.lower():
        return violated(f"bill {bid} is {bill.get('status')}, not {wanted}", status=bill.get("status"))
    return met(f"bill {bid} is {bill.get('status')}")


@check("telecom.no_other_awaiting")
def no_other_awaiting(ctx: CheckContext) -> CheckResult:
    """No other bill of the customer is awaiting payment (as far as tool results show)."""
    cid, bid = ctx.arg("customer_id"), ctx.arg("bill_id")
    awaiting = [b["bill_id"] for b in _bills_of(ctx, cid) if b.get("bill_id") != bid and str(b.get("status", "")).lower() == "awaiting payment"]
    return violated(f"bills already awaiting payment: {awaiting}") if awaiting else met()


@check("telecom.overdue_bills_paid")
def overdue_bills_paid(ctx: CheckContext) -> CheckResult:
    """The customer's bills were read and none is still unpaid (``params.unpaid`` statuses)."""
    cid = ctx.arg("customer_id")
    listed = [o for o in ctx.evidence.results_of("get_bills_for_customer") if o.call.arguments.get("customer_id") == cid]
    if not listed:
        return missing(f"the bills of {cid} were not checked", read("get_bills_for_customer", customer_id=cid))
    unpaid_status = {s.lower() for s in ctx.params.get("unpaid", ["Overdue", "Awaiting Payment"])}
    unpaid = [f"{b['bill_id']} ({b.get('status')})" for b in _bills_of(ctx, cid) if str(b.get("status", "")).lower() in unpaid_status]
    if unpaid:
        return violated(f"bills not yet shown as paid by a tool result: {unpaid}; pay them, then re-read the bills", unpaid=unpaid)
    return met()


@check("telecom.contract_not_ended")
def contract_not_ended(ctx: CheckContext) -> CheckResult:
    """The line's contract end date is not in the past (the policy clock)."""
    lid = ctx.arg("line_id")
    line = ctx.evidence.entity("line", lid)
    if line is None:
        return missing(f"line {lid} was not read", read("get_details_by_id", id=lid))
    end = line.get("contract_end_date")
    if isinstance(end, str) and end < domains.telecom().today:
        return violated(f"the contract of line {lid} ended on {end}")
    return met(f"contract ends {end}")


@check("telecom.refuel_max")
def refuel_max(ctx: CheckContext) -> CheckResult:
    """gb_amount at most the policy's refuel maximum."""
    amount, limit = ctx.arg("gb_amount"), float(domains.telecom().max_refuel_gb)
    try:
        over = float(amount) > limit
    except (TypeError, ValueError):
        return met("amount not numeric (the tool rejects it)")
    return violated(f"{amount} GB exceeds the {limit} GB maximum") if over else met()


def _amount_said(text: str, amount: float) -> bool:
    if mentions_value(text, str(amount)):
        return True
    return any(re.search(rf"\b{w}\b", text, re.IGNORECASE) and v == amount for w, v in _NUMBER_WORDS.items())


@check("telecom.refuel_amount_from_user")
def refuel_amount_from_user(ctx: CheckContext) -> CheckResult:
    """The user gave the amount, or confirmed a statement of it."""
    try:
        amount = float(ctx.arg("gb_amount"))
    except (TypeError, ValueError):
        return met("amount not numeric (the tool rejects it)")
    if any(_amount_said(t, amount) for t in ctx.evidence.user_texts()):
        return met("the user gave the amount")
    found = find_confirmation(ctx.evidence, ctx.call, ctx.judge, ctx.domain)
    if found is not None and _amount_said(found.statement.text, amount):
        return met("the user confirmed the amount", statement=found.statement.text)
    return missing("the user has not said how much data to refuel; ask them")


@check("telecom.roaming_checked")
def roaming_checked(ctx: CheckContext) -> CheckResult:
    """The line was read and shows roaming disabled."""
    lid = ctx.arg("line_id")
    line = ctx.evidence.entity("line", lid)
    if line is None:
        return missing(f"the roaming status of line {lid} was not checked", read("get_details_by_id", id=lid))
    if line.get("roaming_enabled") is True:
        return violated(f"line {lid} already has roaming enabled")
    return met()


@check("telecom.user_traveling")
def user_traveling(ctx: CheckContext) -> CheckResult:
    """The user said they are travelling outside their home network."""
    turn = user_turn_matching(ctx.evidence, _TRAVEL)
    if turn is None:
        return missing("the user has not said they are travelling outside their home network")
    return met(said=turn.text)
