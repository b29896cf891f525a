"""Retail: read tool -> ledger paths, write tool -> touched paths, path -> read hint."""

from __future__ import annotations

from typing import Any

from tauguard_strategies.ledger.schemas.retail import Order, Product, RetailLedger, User
from tauguard_strategies.ledger.readmap.base import DomainMap, store
from tauguard.strategy_api.conversation import ToolCallView
from tauguard.strategy_api.guard import ReadRequest


def _located(led: RetailLedger, call: ToolCallView, data: Any) -> list[str]:
    # find_user_id_by_* returns the bare user id: the authentication fact of the policy.
    if not isinstance(data, str):
        raise TypeError("not a user id")
    if not data or " " in data:
        raise ValueError("not a user id")
    if data not in led.authenticated:
        led.authenticated.append(data)
    return ["authenticated"]


def _user(led: RetailLedger, call: ToolCallView, data: Any) -> list[str]:
    user = User.model_validate(data)
    return [store(led, "users", user.user_id, user)]


def _order(led: RetailLedger, call: ToolCallView, data: Any) -> list[str]:
    order = Order.model_validate(data)
    return [store(led, "orders", order.order_id, order)]


def _product(led: RetailLedger, call: ToolCallView, data: Any) -> list[str]:
    product = Product.model_validate(data)
    return [store(led, "products", product.product_id, product)]


def _product_types(led: RetailLedger, call: ToolCallView, data: Any) -> list[str]:
    if not isinstance(data, dict):
        raise ValueError("product index is not a mapping")
    led.product_index = {str(k): str(v) for k, v in data.items()}
    return ["product_index"]


def _owner(led: RetailLedger, order_id: str) -> str | None:
    order = led.orders.get(order_id)
    return order.user_id if order is not None else None


def _touch_order(led: RetailLedger, call: ToolCallView) -> list[str]:
    oid = str(call.arguments.get("order_id"))
    paths = [f"orders/{oid}"]
    owner = _owner(led, oid)
    if owner is None:
        return paths
    methods = {str(call.arguments["payment_method_id"])} if call.arguments.get("payment_method_id") else set()
    if call.name in ("cancel_pending_order", "modify_pending_order_payment"):
        # Refunds to gift cards change their balance immediately.
        methods |= {p.payment_method_id for p in led.orders[oid].payment_history}
    paths += [f"users/{owner}/payment_methods/{m}/balance" for m in sorted(methods)]
    return paths


def _hint(parts: tuple[str, ...]) -> ReadRequest | None:
    head = parts[0]
    if head == "authenticated":
        return ReadRequest(tool="find_user_id_by_email", why="authenticate the user with the email they give (or find_user_id_by_name_zip with name + zip)")
    if head == "users" and len(parts) > 1:
        return ReadRequest(tool="get_user_details", arguments={"user_id": parts[1]}, why="observe the user's profile and payment methods")
    if head == "orders" and len(parts) > 1:
        return ReadRequest(tool="get_order_details", arguments={"order_id": parts[1]}, why="observe the order's status, items and payment history")
    if head == "products" and len(parts) > 1:
        return ReadRequest(tool="get_product_details", arguments={"product_id": parts[1]}, why="observe the product's variants and availability")
    return None


MAP = DomainMap(
    reads={
        "find_user_id_by_email": _located,
        "find_user_id_by_name_zip": _located,
        "get_user_details": _user,
        "get_order_details": _order,
        "get_product_details": _product,
        "list_all_product_types": _product_types,
    },
    touches={
        "cancel_pending_order": _touch_order,
        "modify_pending_order_address": _touch_order,
        "modify_pending_order_items": _touch_order,
        "modify_pending_order_payment": _touch_order,
        "return_delivered_order_items": _touch_order,
        "exchange_delivered_order_items": _touch_order,
        "modify_user_address": lambda led, call: [f"users/{call.arguments.get('user_id')}/address"],
    },
    hint=_hint,
    returns={**dict.fromkeys((
        "cancel_pending_order", "modify_pending_order_address", "modify_pending_order_items", "modify_pending_order_payment",
        "return_delivered_order_items", "exchange_delivered_order_items",
    ), "get_order_details"), "modify_user_address": "get_user_details"},
)
