"""Telecom predicates: one per policy clause per WRITE tool (clauses in clauses/telecom.toml)."""

from __future__ import annotations

from tauguard import domains
from tauguard_strategies.ledger.schemas.telecom import TODAY
from tauguard_strategies.ledger.predicates.base import Finding, GateContext, predicate
from tauguard.strategy_api.guard import ReadRequest, Verdict

D = "telecom"
LINE_TOOLS = ("suspend_line", "resume_line", "enable_roaming", "disable_roaming", "refuel_data")
MAX_REFUEL_GB = domains.telecom().max_refuel_gb
BILLS_PAGE = 12  # get_bills_for_customer's default limit


def _customer_id(ctx: GateContext) -> str:
    return str(ctx.arg("customer_id"))


def _bills_of(ctx: GateContext, cid: str) -> list[str]:
    bill_ids: list[str] = ctx.need("customers", cid, "bill_ids")
    return bill_ids


@predicate(D, "telecom.identify_customer", *LINE_TOOLS, "send_payment_request")
def identify_customer(ctx: GateContext) -> Finding | None:
    """The customer acted for was identified by a lookup (and owns the bill)."""
    cid = _customer_id(ctx)
    identified: list[str] = ctx.ledger.identified_customers
    ctx.note("identified_customers", list(identified))
    if cid not in identified:
        if identified:
            return Finding(verdict=Verdict.BLOCK, detail=f"customer {cid} is not the identified customer {identified[0]}",
                           remediation="act only for the identified customer")
        return ctx.verify(f"customer {cid} has not been identified", [("customers", cid)],
                          remediation="identify the customer first (get_customer_by_phone, get_customer_by_id, or get_customer_by_name with date of birth)")
    if ctx.call.name == "send_payment_request":
        bid = str(ctx.arg("bill_id"))
        if bid not in _bills_of(ctx, cid):
            return Finding(verdict=Verdict.BLOCK, detail=f"bill {bid} is not a bill of customer {cid}",
                           remediation="send payment requests only for the customer's own bills")
    return None


@predicate(D, "telecom.line_of_customer", *LINE_TOOLS)
def line_of_customer(ctx: GateContext) -> Finding | None:
    """The line belongs to the customer."""
    cid, lid = _customer_id(ctx), str(ctx.arg("line_id"))
    line_ids = ctx.need("customers", cid, "line_ids")
    if lid not in line_ids:
        return Finding(verdict=Verdict.BLOCK, detail=f"line {lid} is not a line of customer {cid} (lines: {', '.join(line_ids)})",
                       remediation="act only on the customer's own lines")
    return None


def _observed_bills(ctx: GateContext, cid: str, status: str) -> list[str]:
    """Fresh observed bills of ``cid`` with ``status``."""
    return sorted(
        b.bill_id for b in ctx.ledger.bills.values()
        if b.customer_id == cid and b.status == status and ctx.peek("bills", b.bill_id, "status").fresh
    )


@predicate(D, "telecom.bill_overdue", "send_payment_request")
def bill_overdue(ctx: GateContext) -> Finding | None:
    """The bill was observed overdue before the payment request."""
    cid, bid = _customer_id(ctx), str(ctx.arg("bill_id"))
    status = ctx.need("bills", bid, "status")
    if status == "Overdue":
        return None
    overdue = [b for b in _observed_bills(ctx, cid, "Overdue") if b != bid]
    if overdue:
        return Finding(verdict=Verdict.REVISE, detail=f"bill {bid} is '{status}', not overdue; overdue: {', '.join(overdue)}",
                       remediation=f"send the payment request for the overdue bill {overdue[0]}",
                       revised_arguments=dict(ctx.call.arguments, bill_id=overdue[0]) if len(overdue) == 1 else None)
    return Finding(verdict=Verdict.BLOCK, detail=f"bill {bid} is '{status}', not overdue",
                   remediation="payment requests are only for overdue bills")


@predicate(D, "telecom.one_awaiting_payment", "send_payment_request")
def one_awaiting_payment(ctx: GateContext) -> Finding | None:
    """No bill of the customer is already awaiting payment."""
    awaiting = _observed_bills(ctx, _customer_id(ctx), "Awaiting Payment")
    if awaiting:
        return Finding(verdict=Verdict.BLOCK, detail=f"bill(s) {', '.join(awaiting)} already await payment",
                       remediation="wait until the pending payment request is paid (read the bills again) before sending another")
    return None


@predicate(D, "telecom.resume_after_payment", "resume_line")
def resume_after_payment(ctx: GateContext) -> Finding | None:
    """Every bill of the customer is observed, none overdue or awaiting payment."""
    cid = _customer_id(ctx)
    overdue, awaiting, unknown = [], [], []
    bill_ids = _bills_of(ctx, cid)
    for bid in bill_ids:
        status = ctx.peek("bills", bid, "status")
        if not status.fresh:
            unknown.append(bid)
        elif status.value == "Overdue":
            overdue.append(bid)
        elif status.value == "Awaiting Payment":
            awaiting.append(bid)
    if overdue:
        return Finding(verdict=Verdict.BLOCK, detail=f"bill(s) {', '.join(overdue)} are overdue",
                       remediation="the overdue bills must be paid first (send_payment_request, the user pays, then read the bills again)")
    if unknown or awaiting:
        what = f"bill(s) {', '.join(unknown)} not observed since the last change" if unknown else ""
        if awaiting:
            what += ("; " if what else "") + f"payment of bill(s) {', '.join(awaiting)} is pending"
        hint = ReadRequest(tool="get_bills_for_customer", arguments={"customer_id": cid}, why="observe the current status of every bill")
        finding = ctx.verify(what, [], remediation=f"read the bills again after the user pays: {hint.describe()}")
        finding.required_reads = [hint]
        if len(bill_ids) > BILLS_PAGE:
            # get_bills_for_customer returns only the newest bills; older ones by id.
            finding.required_reads += [h for b in unknown if (h := ctx.hint("bills", b)) is not None]
        return finding
    return None


@predicate(D, "telecom.resume_contract", "resume_line")
def resume_contract(ctx: GateContext) -> Finding | None:
    """The line's contract has not ended."""
    lid = str(ctx.arg("line_id"))
    end = ctx.need("lines", lid, "contract_end_date")
    ctx.note("policy_today", TODAY)
    if end is not None and str(end) < TODAY:
        return Finding(verdict=Verdict.BLOCK, detail=f"line {lid}'s contract ended on {end}",
                       remediation="a line whose contract has ended cannot be resumed")
    return None


@predicate(D, "telecom.refuel_max", "refuel_data")
def refuel_max(ctx: GateContext) -> Finding | None:
    """At most 2 GB per refuel."""
    amount = float(ctx.arg("gb_amount"))
    if amount > MAX_REFUEL_GB:
        return Finding(verdict=Verdict.REVISE, detail=f"{amount} GB requested; the maximum is {MAX_REFUEL_GB:g} GB",
                       remediation=f"refuel at most {MAX_REFUEL_GB:g} GB (confirm the price for that amount)",
                       revised_arguments=dict(ctx.call.arguments, gb_amount=MAX_REFUEL_GB))
    return None
