"""Telecom: read tool -> ledger paths, write tool -> touched paths, path -> read hint."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from tauguard_strategies.ledger.schemas.telecom import (
    Bill,
    Customer,
    DataUsage,
    Device,
    Line,
    Plan,
    TelecomLedger,
)
from tauguard_strategies.ledger.readmap.base import DomainMap, store
from tauguard.strategy_api.conversation import ToolCallView
from tauguard.strategy_api.guard import ReadRequest


def _customer(led: TelecomLedger, data: Any, identified: bool = True) -> str:
    customer = Customer.model_validate(data)
    if identified and customer.customer_id not in led.identified_customers:
        led.identified_customers.append(customer.customer_id)
    return store(led, "customers", customer.customer_id, customer)


def _lookup(led: TelecomLedger, call: ToolCallView, data: Any) -> list[str]:
    return [_customer(led, data)]


def _by_name(led: TelecomLedger, call: ToolCallView, data: Any) -> list[str]:
    # Several matches leave the identity open: they are stored but nobody is identified.
    matches = list(data)
    return [_customer(led, item, identified=len(matches) == 1) for item in matches]


_BY_PREFIX: dict[str, tuple[str, type[BaseModel], str]] = {"L": ("lines", Line, "line_id"), "D": ("devices", Device, "device_id"), "B": ("bills", Bill, "bill_id"), "P": ("plans", Plan, "plan_id")}


def _details(led: TelecomLedger, call: ToolCallView, data: Any) -> list[str]:
    ident = str(call.arguments.get("id", ""))
    if ident.startswith("C"):
        return [_customer(led, data)]
    collection, model, key = _BY_PREFIX[ident[:1]]
    entity = model.model_validate(data)
    return [store(led, collection, getattr(entity, key), entity)]


def _bills(led: TelecomLedger, call: ToolCallView, data: Any) -> list[str]:
    return [store(led, "bills", bill.bill_id, bill) for bill in (Bill.model_validate(item) for item in data)]


def _usage(led: TelecomLedger, call: ToolCallView, data: Any) -> list[str]:
    usage = DataUsage.model_validate(data)
    return [store(led, "usage", usage.line_id, usage)]


def _touch_line(led: TelecomLedger, call: ToolCallView) -> list[str]:
    return [f"lines/{call.arguments.get('line_id')}"]


def _touch_refuel(led: TelecomLedger, call: ToolCallView) -> list[str]:
    cid, lid = call.arguments.get("customer_id"), call.arguments.get("line_id")
    # The charge lands on the customer's draft bill (created if none exists).
    paths = [f"lines/{lid}", f"usage/{lid}", f"customers/{cid}/bill_ids"]
    paths += [f"bills/{b.bill_id}" for b in led.bills.values() if b.customer_id == cid and b.status == "Draft"]
    return paths


def _hint(parts: tuple[str, ...]) -> ReadRequest | None:
    head = parts[0]
    if head == "customers" and len(parts) > 1:
        return ReadRequest(tool="get_customer_by_id", arguments={"customer_id": parts[1]}, why="identify the customer and observe their lines and bills")
    if head == "identified_customers":
        return ReadRequest(tool="get_customer_by_phone", why="identify the customer by phone number, customer id, or full name with date of birth")
    if head in ("lines", "bills", "plans", "devices") and len(parts) > 1:
        return ReadRequest(tool="get_details_by_id", arguments={"id": parts[1]}, why=f"observe {head[:-1]} {parts[1]}")
    if head == "usage" and len(parts) > 1:
        return ReadRequest(tool="get_data_usage", why=f"observe the data usage of line {parts[1]}")
    return None


MAP = DomainMap(
    reads={
        "get_customer_by_phone": _lookup,
        "get_customer_by_id": _lookup,
        "get_customer_by_name": _by_name,
        "get_details_by_id": _details,
        "get_bills_for_customer": _bills,
        "get_data_usage": _usage,
    },
    touches={
        "suspend_line": _touch_line,
        "resume_line": _touch_line,
        "enable_roaming": _touch_line,
        "disable_roaming": _touch_line,
        "refuel_data": _touch_refuel,
        "send_payment_request": lambda led, call: [f"bills/{call.arguments.get('bill_id')}"],
    },
    hint=_hint,
)
