"""How the sim agent supplies the arguments of a read a guard asked for.

A guard's VERIFY may name a read without arguments when they are the agent's to supply
(an email the user would give, the reservations of a user). A real agent would ask the
user or look them up; the sim looks them up in the task's database, which it may do
because it is a simulation. Unknown reads are skipped (the sim then cannot comply).
"""

from __future__ import annotations

from typing import Any

from tauguard.strategy_api.conversation import ToolCallView
from tauguard.strategy_api.guard import ReadRequest


def _call(name: str, **arguments: Any) -> ToolCallView:
    return ToolCallView(id="", name=name, arguments=arguments)


def _airline(db: Any, write: ToolCallView, tool: str) -> list[ToolCallView]:
    args = write.arguments
    res = db.reservations.get(args.get("reservation_id", ""))
    owner = res.user_id if res is not None else args.get("user_id")
    if tool == "get_user_details" and owner:
        return [_call(tool, user_id=owner)]
    if tool == "get_reservation_details" and owner in db.users:
        return [_call(tool, reservation_id=r) for r in db.users[owner].reservations]
    if tool == "get_flight_status" and res is not None:
        return [_call(tool, flight_number=f.flight_number, date=f.date) for f in res.flights]
    if tool == "get_flight_status" and owner in db.users:
        # A write naming no reservation (a compensation): the facts are the statuses of the
        # flights of the user's reservations.
        return [
            _call(tool, flight_number=f.flight_number, date=f.date)
            for r in db.users[owner].reservations if r in db.reservations for f in db.reservations[r].flights
        ]
    if tool in ("search_direct_flight", "search_onestop_flight"):
        origin = res.origin if res is not None else args.get("origin")
        destination = res.destination if res is not None else args.get("destination")
        if not origin or not destination:
            return []
        flights = [f for f in args.get("flights", []) if isinstance(f, dict)]
        dates = sorted({str(f.get("date")) for f in flights})
        legs = [(origin, destination), (destination, origin)]
        # An agent searches the route it is about to book, even a wrong one: add the legs of
        # the flights named in the call (from the schedule).
        for f in flights:
            known = db.flights.get(str(f.get("flight_number")))
            if known is not None and (known.origin, known.destination) not in legs:
                legs.append((known.origin, known.destination))
        # A new itinerary may be direct or one-stop: search both, as an agent would.
        return [
            _call(name, origin=o, destination=d, date=day)
            for day in dates for o, d in legs for name in ("search_direct_flight", "search_onestop_flight")
        ]
    return []


def _retail(db: Any, write: ToolCallView, tool: str) -> list[ToolCallView]:
    args = write.arguments
    order = db.orders.get(args.get("order_id", ""))
    owner = order.user_id if order is not None else args.get("user_id")
    user = db.users.get(owner) if owner else None
    if user is None:
        return []
    if tool == "find_user_id_by_email":
        return [_call(tool, email=user.email)]
    if tool == "find_user_id_by_name_zip":
        return [_call(tool, first_name=user.name.first_name, last_name=user.name.last_name, zip=user.address.zip)]
    if tool == "get_user_details":
        return [_call(tool, user_id=owner)]
    if tool == "get_order_details":
        return [_call(tool, order_id=o) for o in user.orders]
    if tool == "get_product_details" and order is not None:
        return [_call(tool, product_id=i.product_id) for i in order.items]
    return []


def _telecom(db: Any, write: ToolCallView, tool: str) -> list[ToolCallView]:
    args = write.arguments
    cid = args.get("customer_id")
    customer = next((c for c in db.customers if c.customer_id == cid), None)
    if customer is None and args.get("line_id"):
        customer = next((c for c in db.customers if args["line_id"] in c.line_ids), None)
    if customer is None:
        return []
    if tool in ("get_customer_by_phone", "get_customer_by_id", "get_customer_by_name"):
        return [_call("get_customer_by_id", customer_id=customer.customer_id)]
    if tool == "get_bills_for_customer":
        return [_call(tool, customer_id=customer.customer_id)]
    if tool == "get_data_usage" and args.get("line_id"):
        return [_call(tool, customer_id=customer.customer_id, line_id=args["line_id"])]
    if tool == "get_details_by_id":
        ids = list(customer.line_ids) + list(customer.bill_ids)
        return [_call(tool, id=i) for i in ids]
    return []


_BY_DOMAIN = {"airline": _airline, "retail": _retail, "telecom": _telecom}


def reads_for(domain: str, db: Any, write: ToolCallView, request: ReadRequest) -> list[ToolCallView]:
    """The concrete read calls the sim makes for ``request`` before retrying ``write``."""
    if request.arguments is not None:
        return [_call(request.tool, **request.arguments)]
    lookup = _BY_DOMAIN.get(domain)
    return lookup(db, write, request.tool) if lookup is not None else []


def dedupe(calls: list[ToolCallView]) -> list[ToolCallView]:
    """Calls in order, each (name, arguments) once."""
    seen: set[str] = set()
    out = []
    for call in calls:
        key = call.name + repr(sorted(call.arguments.items()))
        if key not in seen:
            seen.add(key)
            out.append(call)
    return out
