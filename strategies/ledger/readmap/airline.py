"""Airline: read tool -> ledger paths, write tool -> touched paths, path -> read hint."""

from __future__ import annotations

from typing import Any

from tauguard_strategies.ledger.schemas.airline import (
    AirlineLedger,
    FlightDate,
    FlightRoute,
    Reservation,
    User,
)
from tauguard_strategies.ledger.readmap.base import DomainMap, store
from tauguard.strategy_api.conversation import ToolCallView
from tauguard.strategy_api.guard import ReadRequest


def _user(led: AirlineLedger, call: ToolCallView, data: Any) -> list[str]:
    user = User.model_validate(data)
    if user.user_id not in led.identified_users:
        led.identified_users.append(user.user_id)
    return [store(led, "users", user.user_id, user)]


def _route(led: AirlineLedger, route: FlightRoute) -> None:
    # Routes are static; a search result carries the schedule a reservation segment lacks.
    known = led.flights.get(route.flight_number)
    if known is None or (known.scheduled_departure_time_est is None and route.scheduled_departure_time_est):
        led.flights[route.flight_number] = route


def _reservation(led: AirlineLedger, call: ToolCallView, data: Any) -> list[str]:
    res = Reservation.model_validate(data)
    for seg in res.flights:
        _route(led, FlightRoute(flight_number=seg.flight_number, origin=seg.origin, destination=seg.destination))
    earlier = led.reservations.get(res.reservation_id)
    if call.name != "get_reservation_details" and earlier is not None:
        # a write's returned record replaces the one the agent read: keep the first such read
        # (a delay the change itself removed still qualifies the compensation after it)
        led.before_writes.setdefault(f"reservations/{res.reservation_id}", earlier)
    return [store(led, "reservations", res.reservation_id, res)]


def _set_date(led: AirlineLedger, number: str, date: str, status: FlightDate) -> str:
    led.flight_dates.setdefault(number, {})[date] = status
    return f"flight_dates/{number}/{date}"


def _flight_status(led: AirlineLedger, call: ToolCallView, data: Any) -> list[str]:
    number, date = str(call.arguments["flight_number"]), str(call.arguments["date"])
    if not isinstance(data, str) or not data:
        raise ValueError("flight status is not a string")
    known = led.flight_dates.get(number, {}).get(date)
    if known is not None and known.status == data:
        return [f"flight_dates/{number}/{date}"]  # keep seats and prices a search observed
    return [_set_date(led, number, date, FlightDate(status=data))]


def _observe_direct(led: AirlineLedger, item: dict[str, Any], date: str) -> str:
    _route(led, FlightRoute.model_validate(item))
    return _set_date(led, str(item["flight_number"]), date, FlightDate.model_validate(item))


def _search_direct(led: AirlineLedger, call: ToolCallView, data: Any) -> list[str]:
    date = str(call.arguments["date"])
    return [_observe_direct(led, item, item.get("date") or date) for item in data]


def _search_onestop(led: AirlineLedger, call: ToolCallView, data: Any) -> list[str]:
    date = str(call.arguments["date"])
    paths = []
    for pair in data:
        for item in pair:
            paths.append(_observe_direct(led, item, item.get("date") or date))
    return paths


def _touch_reservation(led: AirlineLedger, call: ToolCallView) -> list[str]:
    rid = str(call.arguments.get("reservation_id"))
    paths = [f"reservations/{rid}"]
    res = led.reservations.get(rid)
    pid = call.arguments.get("payment_id")
    if res is not None and pid:
        paths.append(f"users/{res.user_id}/payment_methods/{pid}/amount")  # gift-card balance
    return paths


def _touch_booking(led: AirlineLedger, call: ToolCallView) -> list[str]:
    uid = str(call.arguments.get("user_id"))
    paths = [f"users/{uid}/reservations"]
    for pay in call.arguments.get("payment_methods") or []:
        if isinstance(pay, dict) and pay.get("payment_id"):
            pid = str(pay["payment_id"])
            known = led.users.get(uid)
            method = known.payment_methods.get(pid) if known is not None else None
            # A certificate is consumed by the booking, other methods only change balance;
            # an unobserved method is marked whole.
            used_up = method is None or method.source == "certificate"
            paths.append(f"users/{uid}/payment_methods/{pid}" + ("" if used_up else "/amount"))
    for flight in call.arguments.get("flights") or []:
        if isinstance(flight, dict):
            paths.append(f"flight_dates/{flight.get('flight_number')}/{flight.get('date')}/available_seats")
    return paths


def _hint(parts: tuple[str, ...]) -> ReadRequest | None:
    head = parts[0]
    if head == "reservations" and len(parts) > 1:
        return ReadRequest(tool="get_reservation_details", arguments={"reservation_id": parts[1]}, why="observe the reservation")
    if head == "users" and len(parts) > 1:
        return ReadRequest(tool="get_user_details", arguments={"user_id": parts[1]}, why="observe the user's profile")
    if head == "identified_users":
        return ReadRequest(tool="get_user_details", why="read the profile of the user id the user provides")
    if head == "flight_dates" and len(parts) > 2:
        return ReadRequest(tool="get_flight_status", arguments={"flight_number": parts[1], "date": parts[2]}, why="observe the flight's status on that date")
    if head == "flights" and len(parts) > 1:
        return ReadRequest(tool="search_direct_flight", why=f"search the route of {parts[1]} on its date to observe its origin and destination")
    return None


MAP = DomainMap(
    reads={
        "get_user_details": _user,
        "get_reservation_details": _reservation,
        "get_flight_status": _flight_status,
        "search_direct_flight": _search_direct,
        "search_onestop_flight": _search_onestop,
    },
    touches={
        "book_reservation": _touch_booking,
        "cancel_reservation": _touch_reservation,
        "update_reservation_flights": _touch_reservation,
        "update_reservation_baggages": _touch_reservation,
        "update_reservation_passengers": _touch_reservation,
        "send_certificate": lambda led, call: [f"users/{call.arguments.get('user_id')}/payment_methods"],
    },
    hint=_hint,
    returns=dict.fromkeys((
        "book_reservation", "cancel_reservation", "update_reservation_flights", "update_reservation_baggages",
        "update_reservation_passengers",
    ), "get_reservation_details"),
)
