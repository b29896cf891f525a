"""Retail checks: authentication, ownership, order status, once-per-order, reasons, payment."""

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
from tauguard_strategies.action_guard.dialogue import find_confirmation, mentions_value

_AUTH_TOOLS = ("find_user_id_by_email", "find_user_id_by_name_zip")


def authenticated_users(ctx: CheckContext) -> list[str]:
    """User ids located by an authentication lookup (email, or name + zip)."""
    return [o.content.strip().strip('"') for o in ctx.evidence.results_of(*_AUTH_TOOLS) if o.content.strip()]


def _order(ctx: CheckContext) -> tuple[str, dict[str, Any] | None]:
    oid = ctx.arg("order_id")
    return oid, ctx.evidence.entity("order", oid)


def _missing_order(oid: str) -> CheckResult:
    return missing(f"order {oid} was not read", read("get_order_details", order_id=oid))


def _original_payment(order: dict[str, Any]) -> str | None:
    history = order.get("payment_history") or []
    first = history[0] if history and isinstance(history[0], dict) else {}
    return first.get("payment_method_id")


@check("retail.authenticated")
def authenticated(ctx: CheckContext) -> CheckResult:
    """The user was authenticated by locating their user id via email or name + zip."""
    users = authenticated_users(ctx)
    if users:
        return met(f"authenticated as {', '.join(users)}", users=users)
    return missing("the user is not authenticated: locate their user id via email, or name + zip code")


@check("retail.order_owner")
def order_owner(ctx: CheckContext) -> CheckResult:
    """The order belongs to the authenticated user (from the order's tool result)."""
    oid, order = _order(ctx)
    if order is None:
        return _missing_order(oid)
    users = authenticated_users(ctx)
    if not users:
        return missing(f"order {oid} cannot be matched to a user: nobody is authenticated")
    owner = order.get("user_id")
    if owner in users:
        return met(f"order {oid} belongs to {owner}")
    return violated(f"order {oid} belongs to {owner}, not to the authenticated user {', '.join(users)}", owner=owner)


@check("retail.user_is_authenticated")
def user_is_authenticated(ctx: CheckContext) -> CheckResult:
    """The call's user_id is the authenticated user."""
    uid, users = ctx.arg("user_id"), authenticated_users(ctx)
    if not users:
        return missing("the user is not authenticated: locate their user id via email, or name + zip code")
    if uid in users:
        return met()
    return violated(f"user {uid} is not the authenticated user {', '.join(users)}")


@check("retail.order_status")
def order_status(ctx: CheckContext) -> CheckResult:
    """The order's latest observed status equals ``params.status``."""
    oid, order = _order(ctx)
    if order is None:
        return _missing_order(oid)
    wanted, status = ctx.params["status"], order.get("status")
    if status == wanted:
        return met(f"order {oid} is {status}")
    return violated(f"order {oid} is '{status}', not '{wanted}'", status=status)


@check("retail.once_per_order")
def once_per_order(ctx: CheckContext) -> CheckResult:
    """No earlier successful call of ``params.tools`` on the same order."""
    oid = ctx.arg("order_id")
    tools = tuple(ctx.params.get("tools", ()))
    earlier = [o.call.name for o in ctx.evidence.results_of(*tools) if o.call.arguments.get("order_id") == oid]
    if earlier:
        return violated(f"order {oid} was already changed by {earlier[0]} in this conversation")
    return met()


@check("retail.cancel_reason_allowed")
def cancel_reason_allowed(ctx: CheckContext) -> CheckResult:
    """The reason is one of the policy's cancellation reasons."""
    reason, allowed = ctx.arg("reason"), list(domains.retail().cancel_reasons)
    return met() if reason in allowed else violated(f"reason '{reason}' is not one of {allowed}")


@check("retail.cancel_reason_confirmed")
def cancel_reason_confirmed(ctx: CheckContext) -> CheckResult:
    """The user stated the reason (``params.cues[reason]``) or confirmed a statement of it."""
    reason = ctx.arg("reason")
    pattern = (ctx.params.get("cues") or {}).get(reason)
    if pattern and any(re.search(pattern, t, re.IGNORECASE) for t in ctx.evidence.user_texts()):
        return met(f"the user said the order is '{reason}'")
    found = find_confirmation(ctx.evidence, ctx.call, ctx.judge, ctx.domain)
    if found is not None and isinstance(reason, str) and mentions_value(found.statement.text, reason):
        return met(f"the user confirmed the reason '{reason}'", statement=found.statement.text)
    return missing(f"the user has not given or confirmed the reason '{reason}'; ask for it")


@check("retail.payment_differs")
def payment_differs(ctx: CheckContext) -> CheckResult:
    """The new payment method differs from the order's original one."""
    oid, order = _order(ctx)
    if order is None:
        return _missing_order(oid)
    original = _original_payment(order)
    if original is not None and original == ctx.arg("payment_method_id"):
        return violated(f"{original} is already the payment method of order {oid}")
    return met()


@check("retail.refund_destination")
def refund_destination(ctx: CheckContext) -> CheckResult:
    """The refund goes to the original payment method or a gift card (``params.gift_card_prefix``)."""
    oid, order = _order(ctx)
    if order is None:
        return _missing_order(oid)
    pid, original = ctx.arg("payment_method_id"), _original_payment(order)
    if pid == original or (isinstance(pid, str) and pid.startswith(ctx.params.get("gift_card_prefix", "gift_card_"))):
        return met()
    # No revised arguments: which of the allowed destinations to use is the user's choice.
    return violated(f"refund to {pid}: must go to the original method {original} or a gift card", original=original)


def _variant_problem(old: str, new: str, product: dict[str, Any] | None) -> str | None:
    """Why ``new`` cannot replace ``old`` (None when it can): same item, not a variant, unavailable."""
    product = product or {}
    variants = product.get("variants") or {}
    name = product.get("name") or product.get("product_id")
    if new == old:
        return f"new item {new} is the item itself, not a different option"
    if new not in variants:
        return f"new item {new} is not a variant of {name} ({product.get('product_id')})"
    if isinstance(variants[new], dict) and variants[new].get("available") is False:
        return f"new item {new} of {name} is not available"
    return None


@check("retail.same_product_variant")
def same_product_variant(ctx: CheckContext) -> CheckResult:
    """Each item becomes an available variant of the same product with a different option.

    The order's items name their products; each product's variants come from a
    get_product_details result. "each item can be modified/exchanged to an available new item
    of the same product but of different product option": the item itself is no new option.
    """
    oid, order = _order(ctx)
    if order is None:
        return _missing_order(oid)
    old, new = [str(i) for i in ctx.arg("item_ids") or []], [str(i) for i in ctx.arg("new_item_ids") or []]
    if len(old) != len(new):
        return violated(f"{len(old)} items paired with {len(new)} new items")
    by_item = {i.get("item_id"): i.get("product_id") for i in order.get("items") or [] if isinstance(i, dict)}
    absent = [o for o in old if o not in by_item]
    if absent:
        return violated(f"item(s) {', '.join(absent)} are not in order {oid}")
    for o, n in zip(old, new, strict=True):
        product = ctx.evidence.entity("product", by_item[o])
        # the item itself is never a new option; the variants only a product read shows
        problem = _variant_problem(o, n, product) if product is not None or o == n else None
        if problem:
            return violated(problem)
    unread = sorted({str(by_item[o]) for o in old if ctx.evidence.entity("product", by_item[o]) is None})
    return met(f"product(s) {', '.join(unread)} not read (variants not checked)" if unread else "")


@check("retail.items_in_order")
def items_in_order(ctx: CheckContext) -> CheckResult:
    """Every item id of the call is an item of the order (with multiplicity), per the order's tool result."""
    oid, order = _order(ctx)
    if order is None:
        return _missing_order(oid)
    have = [i.get("item_id") for i in order.get("items") or [] if isinstance(i, dict)]
    for item in ctx.arg("item_ids") or []:
        if item not in have:
            return violated(f"item {item} is not (or not that many times) in order {oid}")
        have.remove(item)
    return met()


def _price(order: dict[str, Any], item_id: str) -> float | None:
    return next((float(i["price"]) for i in order.get("items") or [] if isinstance(i, dict) and i.get("item_id") == item_id and "price" in i), None)


def _amount_due(ctx: CheckContext, order: dict[str, Any]) -> tuple[float | None, list[str]]:
    """What the payment method must cover: the price difference of new items, else the order total;
    with the products not read yet."""
    new = [str(i) for i in ctx.arg("new_item_ids") or []]
    if not new:
        return sum(_price(order, str(i.get("item_id"))) or 0.0 for i in order.get("items") or [] if isinstance(i, dict)), []
    by_item = {i.get("item_id"): i.get("product_id") for i in order.get("items") or [] if isinstance(i, dict)}
    diff, unread = 0.0, []
    for old, n in zip([str(i) for i in ctx.arg("item_ids") or []], new, strict=False):
        product = ctx.evidence.entity("product", by_item.get(old))
        variant = ((product or {}).get("variants") or {}).get(n)
        if not isinstance(variant, dict) or "price" not in variant:
            unread.append(str(by_item.get(old)))
            continue
        diff += float(variant["price"]) - (_price(order, old) or 0.0)
    return (None if unread else diff), unread


@check("retail.payment_covers")
def payment_covers(ctx: CheckContext) -> CheckResult:
    """The payment method is the user's; a gift card's balance covers what it pays.

    "The user must provide a payment method to pay or receive refund of the price difference.
    If the user provides a gift card, it must have enough balance to cover the price
    difference" (items), "it must have enough balance to cover the total amount" (payment).
    """
    oid, order = _order(ctx)
    if order is None:
        return _missing_order(oid)
    pid, uid = ctx.arg("payment_method_id"), order.get("user_id")
    user = ctx.evidence.entity("user", uid)
    history = [p.get("payment_method_id") for p in order.get("payment_history") or [] if isinstance(p, dict)]
    methods = (user or {}).get("payment_methods") or {}
    if pid not in methods and pid not in history:
        if user is None:
            return missing(f"the profile of {uid} was not read: is {pid} their payment method?", read("get_user_details", user_id=uid))
        return violated(f"{pid} is not a payment method of {uid}")
    method = methods.get(pid)
    if not isinstance(method, dict) or method.get("source") != "gift_card" or "balance" not in method:
        return met()
    due, unread = _amount_due(ctx, order)
    if due is None:
        return met(f"product(s) {', '.join(unread)} not read (the price difference is not checked)")
    if float(method["balance"]) < due:
        return violated(f"gift card {pid} balance {method['balance']} does not cover {due:.2f}")
    return met()
