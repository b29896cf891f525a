"""Retail predicates: one per policy clause per WRITE tool (clauses in clauses/retail.toml)."""

from __future__ import annotations

from collections import Counter

from tauguard import domains
from tauguard_strategies.ledger.ledger import Fact
from tauguard_strategies.ledger.schemas.retail import Order, PaymentMethod, Product
from tauguard_strategies.ledger.predicates.base import Finding, GateContext, NeedFact, payment_source, predicate
from tauguard.strategy_api.guard import Verdict

D = "retail"
ORDER_TOOLS = (
    "cancel_pending_order", "modify_pending_order_address", "modify_pending_order_items",
    "modify_pending_order_payment", "return_delivered_order_items", "exchange_delivered_order_items",
)
ALL_TOOLS = ORDER_TOOLS + ("modify_user_address",)
CANCEL_REASONS = domains.retail().cancel_reasons


# --- shared fact access ---------------------------------------------------------------


def _authenticated(ctx: GateContext) -> str:
    users: list[str] = ctx.ledger.authenticated
    if not users:
        raise NeedFact(Fact(path="authenticated", state="missing"), ctx.hint("authenticated"))
    ctx.note("authenticated_user", users[0])
    return users[0]


def _order(ctx: GateContext) -> Order:
    order: Order = ctx.need("orders", str(ctx.arg("order_id")))
    return order


def _status(ctx: GateContext, order: Order) -> str:
    status: str = ctx.need("orders", order.order_id, "status")
    return status


def _original_method(ctx: GateContext, order: Order) -> str | None:
    history = ctx.need("orders", order.order_id, "payment_history")
    ctx.note(f"orders/{order.order_id}/payment_methods", [p.payment_method_id for p in history])
    return history[0].payment_method_id if history else None


def _method(ctx: GateContext, uid: str, pid: str) -> PaymentMethod | None:
    """The user's profile method ``pid``; None when the observed profile lacks it."""
    user = ctx.peek("users", uid)
    if user.state == "missing":
        raise NeedFact(user, ctx.hint("users", uid))
    fact = ctx.peek("users", uid, "payment_methods", pid)
    if fact.state == "stale":
        raise NeedFact(fact, ctx.hint("users", uid))
    if fact.state == "fresh":
        ctx.note(f"users/{uid}/payment_methods/{pid}/source", fact.value.source)
        method: PaymentMethod = fact.value  # the ledger stores the profile's method model at this path
        return method
    return None


def _gift_cards(ctx: GateContext, uid: str) -> list[str]:
    user = ctx.ledger.users.get(uid)
    return sorted(k for k, m in user.payment_methods.items() if m.source == "gift_card") if user else []


def _history_has(ctx: GateContext, tool: str, order_id: str) -> bool:
    return any(w.tool == tool and w.arguments.get("order_id") == order_id for w in ctx.ledger.history)


def _block_status(order: Order, status: str, wanted: str, action: str) -> Finding:
    return Finding(verdict=Verdict.BLOCK, detail=f"order {order.order_id} is '{status}', not '{wanted}'",
                   remediation=f"only a '{wanted}' order can be {action}; tell the user")


# --- identity --------------------------------------------------------------------------


@predicate(D, "retail.authenticate", *ALL_TOOLS)
def authenticate(ctx: GateContext) -> Finding | None:
    """The user was located by email or name + zip before acting."""
    _authenticated(ctx)
    return None


@predicate(D, "retail.one_user", *ALL_TOOLS)
def one_user(ctx: GateContext) -> Finding | None:
    """The order (or user) acted on belongs to the authenticated user."""
    uid = _authenticated(ctx)
    if ctx.call.name == "modify_user_address":
        target = str(ctx.arg("user_id"))
        what = f"user_id {target}"
    else:
        order_id = str(ctx.arg("order_id"))
        listed = ctx.peek("users", uid, "orders")
        if listed.fresh and order_id not in listed.value and ctx.peek("orders", order_id).state == "missing":
            # The authenticated user's own order list (from get_user_details) settles it
            # without reading the other user's order.
            return Finding(verdict=Verdict.BLOCK, detail=f"order {order_id} is not among the orders of the authenticated user {uid}",
                           remediation="help only the authenticated user; deny requests about another user's account or orders")
        order = _order(ctx)
        target = ctx.need("orders", order.order_id, "user_id")
        what = f"order {order.order_id} belongs to {target}"
    if target != uid:
        return Finding(verdict=Verdict.BLOCK, detail=f"{what}, not the authenticated user {uid}",
                       remediation="help only the authenticated user; deny requests about another user's account or orders")
    return None


# --- status ----------------------------------------------------------------------------


@predicate(D, "retail.cancel_pending", "cancel_pending_order")
def cancel_pending(ctx: GateContext) -> Finding | None:
    """Only a pending order is cancelled."""
    order = _order(ctx)
    status = _status(ctx, order)
    return None if status == "pending" else _block_status(order, status, "pending", "cancelled")


@predicate(D, "retail.cancel_reason", "cancel_pending_order")
def cancel_reason(ctx: GateContext) -> Finding | None:
    """The reason is 'no longer needed' or 'ordered by mistake'."""
    reason = ctx.arg("reason")
    if reason not in CANCEL_REASONS:
        return Finding(verdict=Verdict.BLOCK, detail=f"reason {reason!r} is not an accepted cancellation reason",
                       remediation=f"the reason must be exactly {' or '.join(repr(r) for r in CANCEL_REASONS)} as the user states it; other reasons are not accepted")
    return None


@predicate(D, "retail.modify_pending", "modify_pending_order_address", "modify_pending_order_payment", "modify_pending_order_items")
def modify_pending(ctx: GateContext) -> Finding | None:
    """Only a pending order (items not yet modified) is modified: address, payment or items."""
    order = _order(ctx)
    status = _status(ctx, order)
    return None if status == "pending" else _block_status(order, status, "pending", "modified")


@predicate(D, "retail.modify_items_once", "modify_pending_order_items", "modify_pending_order_address",
           "modify_pending_order_payment", "cancel_pending_order")
def modify_items_once(ctx: GateContext) -> Finding | None:
    """After an item modification the order is neither modified again nor cancelled.

    "The agent will not be able to modify or cancel the order anymore": the session's write
    history, so the rule holds whether or not the order was read again after the change.
    """
    oid = str(ctx.arg("order_id"))
    if _history_has(ctx, "modify_pending_order_items", oid):
        return Finding(verdict=Verdict.BLOCK, detail=f"the items of order {oid} were already modified in this conversation",
                       remediation="after an item modification the order can no longer be modified or cancelled; tell the user")
    return None


@predicate(D, "retail.once_per_order", "exchange_delivered_order_items")
def exchange_once(ctx: GateContext) -> Finding | None:
    """An order is exchanged at most once."""
    oid = str(ctx.arg("order_id"))
    if _history_has(ctx, "exchange_delivered_order_items", oid):
        return Finding(verdict=Verdict.BLOCK, detail=f"order {oid} was already exchanged in this conversation",
                       remediation="an exchange can be requested only once per order")
    return None


@predicate(D, "retail.return_delivered", "return_delivered_order_items")
def return_delivered(ctx: GateContext) -> Finding | None:
    """Only a delivered order is returned."""
    order = _order(ctx)
    status = _status(ctx, order)
    return None if status == "delivered" else _block_status(order, status, "delivered", "returned")


@predicate(D, "retail.exchange_delivered", "exchange_delivered_order_items")
def exchange_delivered(ctx: GateContext) -> Finding | None:
    """Only a delivered order is exchanged."""
    order = _order(ctx)
    status = _status(ctx, order)
    return None if status == "delivered" else _block_status(order, status, "delivered", "exchanged")


# --- items -----------------------------------------------------------------------------------


def _missing_items(order: Order, item_ids: list[str]) -> list[str]:
    have = Counter(i.item_id for i in order.items)
    want = Counter(item_ids)
    return sorted(i for i, n in want.items() if n > have[i])


def _products(ctx: GateContext, order: Order, item_ids: list[str]) -> dict[str, Product] | Finding:
    pids = sorted({i.product_id for i in order.items if i.item_id in item_ids})
    unread = [p for p in pids if ctx.peek("products", p).state != "fresh"]
    if unread:
        return ctx.verify("the product(s) of the items are not observed: " + ", ".join(unread),
                          [("products", p) for p in unread])
    return {p: ctx.ledger.products[p] for p in pids}


def _same_product(ctx: GateContext) -> Finding | None:
    order = _order(ctx)
    old, new = [str(i) for i in ctx.arg("item_ids")], [str(i) for i in ctx.arg("new_item_ids")]
    ctx.note(f"orders/{order.order_id}/item_ids", [i.item_id for i in order.items])
    if len(old) != len(new):
        return Finding(verdict=Verdict.REVISE, detail=f"{len(old)} items paired with {len(new)} new items",
                       remediation="pair each item with exactly one new item")
    absent = _missing_items(order, old)
    if absent:
        return Finding(verdict=Verdict.REVISE, detail=f"item(s) {', '.join(absent)} are not in order {order.order_id}",
                       remediation="use item ids of the order: " + ", ".join(sorted({i.item_id for i in order.items})))
    products = _products(ctx, order, old)
    if isinstance(products, Finding):
        return products
    by_item = {i.item_id: i.product_id for i in order.items}
    for o, n in zip(old, new, strict=False):
        product = products[by_item[o]]
        variant = product.variants.get(n)
        if n == o:
            problem = f"new item {n} is the same as the old one"
        elif variant is None:
            problem = f"new item {n} is not a variant of {product.name or product.product_id} ({product.product_id})"
        elif not variant.available:
            problem = f"new item {n} of {product.name or product.product_id} is not available"
        else:
            ctx.note(f"products/{product.product_id}/variants/{n}/available", True)
            continue
        choices = sorted(k for k, v in product.variants.items() if v.available and k != o)
        return Finding(verdict=Verdict.REVISE, detail=problem,
                       remediation=f"choose an available variant of the same product: {', '.join(choices) or '(none available)'}")
    return None


@predicate(D, "retail.modify_same_product", "modify_pending_order_items")
def modify_same_product(ctx: GateContext) -> Finding | None:
    """Each item becomes an available, different variant of the same product."""
    return _same_product(ctx)


@predicate(D, "retail.exchange_same_product", "exchange_delivered_order_items")
def exchange_same_product(ctx: GateContext) -> Finding | None:
    """Each item is exchanged for an available, different variant of the same product.

    "an available new item of the same product but of different product option": the item
    itself is not one, although the exchange tool accepts it and tau2's gold plans of retail
    tasks 18, 91 and 107 do it (documented gold/policy conflicts, ``gold_conflicts.toml``).
    """
    return _same_product(ctx)


@predicate(D, "retail.return_items", "return_delivered_order_items")
def return_items(ctx: GateContext) -> Finding | None:
    """Every returned item is in the order."""
    order = _order(ctx)
    absent = _missing_items(order, [str(i) for i in ctx.arg("item_ids")])
    ctx.note(f"orders/{order.order_id}/item_ids", [i.item_id for i in order.items])
    if absent:
        return Finding(verdict=Verdict.REVISE, detail=f"item(s) {', '.join(absent)} are not in order {order.order_id}",
                       remediation="return only items of the order")
    return None


# --- payment ---------------------------------------------------------------------------------


def _price_difference(ctx: GateContext, order: Order) -> float | Finding | None:
    """The observed price difference of the item change (None: the pairing is invalid)."""
    old, new = [str(i) for i in ctx.arg("item_ids")], [str(i) for i in ctx.arg("new_item_ids")]
    products = _products(ctx, order, old)
    if isinstance(products, Finding):
        return products
    price = {i.item_id: i.price for i in order.items}
    by_item = {i.item_id: i.product_id for i in order.items}
    diff = 0.0
    for o, n in zip(old, new, strict=False):
        if o not in by_item or by_item[o] not in products:
            return None
        variant = products[by_item[o]].variants.get(n)
        if variant is None:
            return None  # the same-product predicate reports it
        diff += variant.price - price[o]
    ctx.note("price_difference", round(diff, 2))
    return round(diff, 2)


@predicate(D, "retail.price_difference_payment", "modify_pending_order_items", "exchange_delivered_order_items")
def price_difference_payment(ctx: GateContext) -> Finding | None:
    """The user's own method pays the difference; a gift card's balance covers it."""
    order = _order(ctx)
    owner = order.user_id
    pid = str(ctx.arg("payment_method_id"))
    if ctx.peek("users", owner).state == "missing":
        # Without the profile, a method of the order's own payment history is the user's;
        # its kind (and a gift card's balance) only matters when the user must pay.
        paid_with = [p.payment_method_id for p in ctx.need("orders", order.order_id, "payment_history")]
        if pid in paid_with:
            diff = _price_difference(ctx, order)
            if isinstance(diff, Finding) or diff is None or diff <= 0:
                return diff if isinstance(diff, Finding) else None
            # the user pays: only a gift card has a balance to check (its id names its kind)
            if payment_source(pid) in ("credit_card", "paypal"):
                return None
        raise NeedFact(ctx.peek("users", owner), ctx.hint("users", owner))
    method = _method(ctx, owner, pid)
    if method is None:
        return Finding(verdict=Verdict.REVISE, detail=f"payment method {pid} is not in the profile of {owner}",
                       remediation="use one of the user's payment methods: " + ", ".join(sorted(ctx.ledger.users[owner].payment_methods)))
    if method.source != "gift_card":
        return None
    diff = _price_difference(ctx, order)
    if diff is None or isinstance(diff, Finding):
        return diff
    balance = ctx.need("users", owner, "payment_methods", pid, "balance")
    if balance is not None and balance < diff:
        return Finding(verdict=Verdict.REVISE, detail=f"gift card {pid} balance {balance} does not cover the price difference {diff}",
                       remediation="use another payment method of the user")
    return None


@predicate(D, "retail.payment_single_different", "modify_pending_order_payment")
def payment_single_different(ctx: GateContext) -> Finding | None:
    """The new method differs from the original and is the user's."""
    order = _order(ctx)
    pid = str(ctx.arg("payment_method_id"))
    original = _original_method(ctx, order)
    if pid == original:
        return Finding(verdict=Verdict.BLOCK, detail=f"{pid} is already the order's payment method",
                       remediation="the new payment method must differ from the original one")
    if _method(ctx, order.user_id, pid) is None:
        return Finding(verdict=Verdict.REVISE, detail=f"payment method {pid} is not in the profile of {order.user_id}",
                       remediation="use one of the user's payment methods: " + ", ".join(sorted(ctx.ledger.users[order.user_id].payment_methods)))
    return None


@predicate(D, "retail.payment_gift_card_balance", "modify_pending_order_payment")
def payment_gift_card_balance(ctx: GateContext) -> Finding | None:
    """A gift card covers the order total."""
    order = _order(ctx)
    pid = str(ctx.arg("payment_method_id"))
    method = _method(ctx, order.user_id, pid)
    if method is None or method.source != "gift_card":
        return None
    history = ctx.need("orders", order.order_id, "payment_history")
    total = history[0].amount if history else 0.0
    balance = ctx.need("users", order.user_id, "payment_methods", pid, "balance")
    ctx.note("order_total", total)
    if balance is not None and balance < total:
        return Finding(verdict=Verdict.REVISE, detail=f"gift card {pid} balance {balance} is below the order total {total}",
                       remediation="choose a payment method that covers the order total")
    return None


@predicate(D, "retail.refund_destination", "return_delivered_order_items")
def refund_destination(ctx: GateContext) -> Finding | None:
    """The refund goes to the original payment method or an existing gift card."""
    order = _order(ctx)
    pid = str(ctx.arg("payment_method_id"))
    original = _original_method(ctx, order)
    if pid == original:
        return None
    method = _method(ctx, order.user_id, pid)
    if method is not None and method.source == "gift_card":
        return None
    kind = "not in the user's profile" if method is None else f"a {method.source}" + (f" ({method.brand})" if method.brand else "")
    gift_cards = _gift_cards(ctx, order.user_id)
    revised = dict(ctx.call.arguments, payment_method_id=original) if original else None
    return Finding(
        verdict=Verdict.REVISE,
        detail=f"{pid} is {kind} and absent from the order's payment history (original method: {original})",
        remediation=f"refund to the original payment method {original}"
        + (f" or to an existing gift card ({', '.join(gift_cards)})" if gift_cards else ""),
        revised_arguments=revised,
    )
