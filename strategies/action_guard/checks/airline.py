"""Airline checks. Clock, allowance tables and limits come from the airline policy pack."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
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
from tauguard.strategy_api.guard import ReadRequest
from tauguard_strategies.action_guard.dialogue import (
    reason_stated,
    user_turn_matching,
)

_COMPENSATION = re.compile(
    r"\b(compensat\w*|voucher|certificate|refund\w*|reimburs\w*|make (?:it|this|that) up|gesture|credit|"
    r"money back|something (?:for|in return)|what can you (?:do|offer))",
    re.IGNORECASE,
)
POLICY = domains.airline()


def _reservation(ctx: CheckContext) -> tuple[str, dict[str, Any] | None]:
    rid = ctx.arg("reservation_id")
    return rid, ctx.evidence.entity("reservation", rid)


def _missing_reservation(rid: str) -> CheckResult:
    return missing(f"reservation {rid} was not read", read("get_reservation_details", reservation_id=rid))


def _pairs(flights: Any) -> list[tuple[str, str]]:
    return [(f.get("flight_number", ""), f.get("date", "")) for f in flights or [] if isinstance(f, dict)]


def _flown(ctx: CheckContext, reservation: dict[str, Any]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(segments already flown, past segments whose status no tool result showed).

    A segment is flown when a tool result shows it flying or landed. One dated before today
    is flown unless a result shows the airline cancelled it (an airline cancellation is a
    ground for cancelling, not a flown segment); one dated today or earlier without a
    status needs a read.
    """
    today = POLICY.today
    done, unknown = [], []
    for number, date in _pairs(reservation.get("flights")):
        status = ctx.evidence.flight_status.get((number, date))
        if status in POLICY.flown_statuses:
            done.append((number, date))
        elif date <= today and status is None:
            unknown.append((number, date))
        elif date < today and status != "cancelled":
            done.append((number, date))
    return done, unknown


def _flown_unknown(rid: str, unknown: list[tuple[str, str]]) -> CheckResult:
    return missing(
        f"reservation {rid} has past segments whose status was not checked (flown, or cancelled by the airline?): {unknown}",
        *(read("get_flight_status", flight_number=n, date=d) for n, d in unknown),
    )


@check("airline.user_id_from_user")
def user_id_from_user(ctx: CheckContext) -> CheckResult:
    """The user id in the call was given by the user (params: ``arg``)."""
    uid = ctx.arg(ctx.params.get("arg", "user_id"))
    if isinstance(uid, str) and ctx.evidence.user_said(uid):
        return met(f"the user gave user id {uid}")
    return missing(f"the user has not given the user id {uid}; ask for it")


@check("airline.reservation_owner")
def reservation_owner(ctx: CheckContext) -> CheckResult:
    """The reservation belongs to the user id the user gave (from the reservation's tool result)."""
    rid, res = _reservation(ctx)
    if res is None:
        return _missing_reservation(rid)
    owner = res.get("user_id")
    if isinstance(owner, str) and ctx.evidence.user_said(owner):
        return met(f"reservation {rid} belongs to {owner}, the id the user gave", owner=owner)
    identified = [u["user_id"] for u in ctx.evidence.entities_of("user") if isinstance(u.get("user_id"), str) and ctx.evidence.user_said(u["user_id"])]
    if identified:
        return violated(f"reservation {rid} belongs to {owner}, not to the identified user {', '.join(identified)}", owner=owner, identified=identified)
    return missing(f"the user has not given their user id (reservation {rid} belongs to {owner})", owner=owner)


@check("airline.not_flown")
def not_flown(ctx: CheckContext) -> CheckResult:
    """No segment of the reservation has been flown (params: ``now``)."""
    rid, res = _reservation(ctx)
    if res is None:
        return _missing_reservation(rid)
    done, unknown = _flown(ctx, res)
    if done:
        return violated(f"reservation {rid} has segments already flown: {done}", flown=done)
    if unknown:
        return _flown_unknown(rid, unknown)
    return met()


@check("airline.cabin_change_not_flown")
def cabin_change_not_flown(ctx: CheckContext) -> CheckResult:
    """A cabin change only when no segment has been flown (params: ``now``)."""
    rid, res = _reservation(ctx)
    if res is None:
        return _missing_reservation(rid)
    if ctx.arg("cabin") == res.get("cabin"):
        return met("no cabin change")
    done, unknown = _flown(ctx, res)
    if done:
        return violated(f"cabin change on reservation {rid} with segments already flown: {done}", flown=done)
    if unknown:
        return _flown_unknown(rid, unknown)
    return met()


@check("airline.cancel_reason_stated")
def cancel_reason_stated(ctx: CheckContext) -> CheckResult:
    """The user stated a reason for the cancellation."""
    turn = reason_stated(ctx.evidence, ctx.judge, ctx.domain)
    if turn is None:
        return missing("the user has not stated a reason for the cancellation; ask for it")
    return met(reason=turn.text)


@check("airline.cancel_basis")
def cancel_basis(ctx: CheckContext) -> CheckResult:
    """One cancellation condition holds (the policy clock and window).

    Booked within the window, business cabin, an airline-cancelled flight (seen in a tool
    result), or insurance with a covered (health/weather) reason the user stated.
    """
    rid, res = _reservation(ctx)
    if res is None:
        return _missing_reservation(rid)
    now = datetime.fromisoformat(POLICY.now_iso)
    window = timedelta(hours=float(POLICY.cancel_window_hours))
    created = res.get("created_at")
    if res.get("cabin") == "business":
        return met("business cabin")
    if isinstance(created, str) and now - datetime.fromisoformat(created) <= window:
        return met(f"booked at {created}, within {window}")
    pairs = _pairs(res.get("flights"))
    statuses = {p: ctx.evidence.flight_status.get(p) for p in pairs}
    if any(s == "cancelled" for s in statuses.values()):
        return met("a flight was cancelled by the airline")
    insured = res.get("insurance") == "yes"
    if insured:
        turn = reason_stated(ctx.evidence, ctx.judge, ctx.domain, covered=True)
        if turn is not None:
            return met("insured, covered reason stated", reason=turn.text)
    unknown = [p for p, s in statuses.items() if s is None]
    if unknown:
        return missing(
            f"reservation {rid} ({res.get('cabin')}, booked {created}, insurance {res.get('insurance')}) "
            f"qualifies only if the airline cancelled a flight{' or the reason is covered by insurance' if insured else ''}; "
            "check the flight status",
            *(read("get_flight_status", flight_number=n, date=d) for n, d in unknown),
        )
    uncovered = ""
    if insured:
        stated = reason_stated(ctx.evidence, ctx.judge, ctx.domain)
        if stated is None:
            return missing(f"reservation {rid} is insured but no health or weather reason was stated; ask the reason")
        # A stated reason insurance does not cover (health or weather) is no basis: refuse
        # instead of asking for the reason again.
        uncovered = f", and the stated reason ({stated.text.strip()!r}) is not covered by the insurance (health or weather only)"
    return violated(
        f"reservation {rid} is {res.get('cabin')}, booked {created}, insurance {res.get('insurance')}{uncovered}, "
        f"and no flight was cancelled by the airline: no cancellation condition holds",
        statuses={f"{n}@{d}": s for (n, d), s in statuses.items()},
    )


@check("airline.basic_economy_flights_unchanged")
def basic_economy_flights_unchanged(ctx: CheckContext) -> CheckResult:
    """A basic economy reservation keeps its flights (a cabin change alone is allowed)."""
    rid, res = _reservation(ctx)
    if res is None:
        return _missing_reservation(rid)
    if res.get("cabin") != "basic_economy":
        return met()
    if set(_pairs(ctx.arg("flights"))) != set(_pairs(res.get("flights"))):
        return violated(f"reservation {rid} is basic economy: its flights cannot be changed")
    return met("flights unchanged")


def _route(ctx: CheckContext, number: str) -> tuple[str, str] | None:
    flight = ctx.evidence.entity("flight", number)
    if flight and isinstance(flight.get("origin"), str) and isinstance(flight.get("destination"), str):
        return flight["origin"], flight["destination"]
    return None


def _route_problem(legs: list[tuple[str, str]], origin: str, destination: str, trip: str) -> str | None:
    if not legs:
        return "no flights"
    if legs[0][0] != origin:
        return f"first flight leaves {legs[0][0]}, not {origin}"
    end = origin if trip == "round_trip" else destination
    if legs[-1][1] != end:
        return f"last flight arrives at {legs[-1][1]}, not {end}"
    if trip == "round_trip" and destination not in {leg[1] for leg in legs}:
        return f"no flight reaches {destination}"
    return None


def _route_unknown(unknown: list[tuple[str, str]]) -> CheckResult:
    # A route no tool result showed cannot be checked, so the rule is not met: a flight
    # search on the flight's date shows it (its arguments are the agent's: the trip's legs).
    return missing(
        f"the route of flights {unknown} was not observed (no flight search or reservation showed them); search them on their dates",
        ReadRequest(tool="search_direct_flight", why="a flight search shows each new flight's origin and destination"),
        ReadRequest(tool="search_onestop_flight", why="a flight search shows each new flight's origin and destination"),
        unknown=unknown,
    )


@check("airline.route_unchanged")
def route_unchanged(ctx: CheckContext) -> CheckResult:
    """New flights keep the reservation's origin, destination and trip type; a leg whose route no result showed is missing."""
    rid, res = _reservation(ctx)
    if res is None:
        return _missing_reservation(rid)
    pairs = _pairs(ctx.arg("flights"))
    legs = [_route(ctx, n) for n, _ in pairs]
    if any(leg is None for leg in legs):
        return _route_unknown([p for p, leg in zip(pairs, legs) if leg is None])
    problem = _route_problem([leg for leg in legs if leg], res.get("origin", ""), res.get("destination", ""), res.get("flight_type", ""))
    if problem:
        return violated(f"reservation {rid} ({res.get('flight_type')} {res.get('origin')}-{res.get('destination')}): {problem}")
    return met()


@check("airline.booking_route")
def booking_route(ctx: CheckContext) -> CheckResult:
    """The booked flights go from origin to destination as the trip type says; an unobserved route is missing."""
    pairs = _pairs(ctx.arg("flights"))
    legs = [_route(ctx, n) for n, _ in pairs]
    if any(leg is None for leg in legs):
        return _route_unknown([p for p, leg in zip(pairs, legs) if leg is None])
    problem = _route_problem([leg for leg in legs if leg], ctx.arg("origin") or "", ctx.arg("destination") or "", ctx.arg("flight_type") or "")
    return violated(problem) if problem else met()


@check("airline.flights_searched")
def flights_searched(ctx: CheckContext) -> CheckResult:
    """Each new flight was observed on its date: found by a flight search, or already in a
    reservation the agent read (a booking "the same as my current reservation")."""
    rid = ctx.arg("reservation_id")
    current: set[tuple[str, str]] = set()
    if rid is not None:
        res = ctx.evidence.entity("reservation", rid)
        if res is None:
            return _missing_reservation(rid)
        current = set(_pairs(res.get("flights")))
    for reservation in ctx.evidence.entities_of("reservation"):
        current |= set(_pairs(reservation.get("flights")))
    searched = ctx.evidence.searched_flights()
    unseen = [p for p in _pairs(ctx.arg("flights")) if p not in current and p not in searched]
    if unseen:
        return missing(
            f"flights {unseen} were not found by a flight search",
            ReadRequest(tool="search_direct_flight", why="a flight search on each new flight's date shows it"),
            ReadRequest(tool="search_onestop_flight", why="a flight search on each new flight's date shows it"),
            unseen=unseen,
        )
    return met()


@check("airline.bags_not_decreased")
def bags_not_decreased(ctx: CheckContext) -> CheckResult:
    """The total number of checked bags does not decrease."""
    rid, res = _reservation(ctx)
    if res is None:
        return _missing_reservation(rid)
    before, after = res.get("total_baggages", 0), ctx.arg("total_baggages")
    if isinstance(after, int) and isinstance(before, int) and after < before:
        return violated(f"total bags would drop from {before} to {after}")
    return met()


def _expected_nonfree(ctx: CheckContext, user_id: str, cabin: str, passengers: int, total: int) -> tuple[int | None, CheckResult | None]:
    user = ctx.evidence.entity("user", user_id)
    if user is None:
        return None, missing(f"membership of {user_id} unknown", read("get_user_details", user_id=user_id))
    table: dict[str, dict[str, int]] = POLICY.free_bags
    free = table.get(str(user.get("membership")), {}).get(cabin)
    if free is None:
        return None, met(f"no allowance rule for membership {user.get('membership')} / cabin {cabin}")
    return max(0, total - free * passengers), None


@check("airline.nonfree_bags")
def nonfree_bags(ctx: CheckContext) -> CheckResult:
    """nonfree_baggages = max(0, total - free allowance x passengers) (the policy's free-bag table)."""
    total, nonfree = ctx.arg("total_baggages"), ctx.arg("nonfree_baggages")
    if not isinstance(total, int) or not isinstance(nonfree, int):
        return met("bag counts not given")
    rid = ctx.arg("reservation_id")
    if rid is not None:
        res = ctx.evidence.entity("reservation", rid)
        if res is None:
            return _missing_reservation(rid)
        user_id, cabin, passengers = res.get("user_id", ""), res.get("cabin", ""), len(res.get("passengers") or [])
    else:
        user_id, cabin, passengers = ctx.arg("user_id") or "", ctx.arg("cabin") or "", len(ctx.arg("passengers") or [])
    expected, problem = _expected_nonfree(ctx, user_id, cabin, passengers, total)
    if problem is not None:
        return problem
    if nonfree != expected:
        revised = {**ctx.call.arguments, "nonfree_baggages": expected}
        return violated(f"{total} bags for {passengers} {cabin} passenger(s): {expected} non-free, not {nonfree}", revised_arguments=revised)
    return met()


@check("airline.passenger_count_unchanged")
def passenger_count_unchanged(ctx: CheckContext) -> CheckResult:
    """The number of passengers stays the same."""
    rid, res = _reservation(ctx)
    if res is None:
        return _missing_reservation(rid)
    before, after = len(res.get("passengers") or []), len(ctx.arg("passengers") or [])
    if before != after:
        return violated(f"passenger count would change from {before} to {after}")
    return met()


@check("airline.max_passengers")
def max_passengers(ctx: CheckContext) -> CheckResult:
    """At most the policy's maximum of passengers."""
    count, limit = len(ctx.arg("passengers") or []), int(POLICY.max_passengers)
    return violated(f"{count} passengers, at most {limit} allowed") if count > limit else met()


@check("airline.payment_method_counts")
def payment_method_counts(ctx: CheckContext) -> CheckResult:
    """Payment method counts per kind within the policy's limits (payment id prefix -> max)."""
    limits: dict[str, int] = {f"{source}_": n for source, n in POLICY.payment_limits.items()}
    ids = [p.get("payment_id", "") for p in ctx.arg("payment_methods") or [] if isinstance(p, dict)]
    over = {kind: n for kind in limits if (n := sum(1 for i in ids if i.startswith(kind))) > limits[kind]}
    return violated(f"too many payment methods of a kind: {over}") if over else met()


@check("airline.payment_in_profile")
def payment_in_profile(ctx: CheckContext) -> CheckResult:
    """Every payment id is in the user's profile, when the profile was read (params: ``user_from``)."""
    if ctx.params.get("user_from") == "reservation":
        res = ctx.evidence.entity("reservation", ctx.arg("reservation_id"))
        user_id = res.get("user_id") if res else None
    else:
        user_id = ctx.arg("user_id")
    user = ctx.evidence.entity("user", user_id)
    if user is None:
        return met("profile not read (the tool itself rejects unknown payment methods)")
    ids = [ctx.arg("payment_id")] if ctx.arg("payment_id") else [p.get("payment_id") for p in ctx.arg("payment_methods") or [] if isinstance(p, dict)]
    # an entry without a payment id is malformed (the tool's schema rejects it): no method of
    # any profile is named, so there is nothing for this clause to hold
    ids = [i for i in ids if isinstance(i, str)]
    profile = user.get("payment_methods") or {}
    absent = [i for i in ids if i not in profile]
    return violated(f"payment methods not in the profile of {user_id}: {absent}") if absent else met()


@check("airline.payment_not_certificate")
def payment_not_certificate(ctx: CheckContext) -> CheckResult:
    """A change is paid by credit card or gift card, not a travel certificate."""
    pid = ctx.arg("payment_id")
    if isinstance(pid, str) and pid.startswith("certificate_"):
        return violated(f"{pid} is a travel certificate")
    return met()


@check("airline.insurance_offered")
def insurance_offered(ctx: CheckContext) -> CheckResult:
    """Travel insurance came up in the dialogue before booking."""
    if any("insurance" in t.text.lower() for t in ctx.evidence.turns):
        return met()
    return missing("travel insurance was not offered; ask whether the user wants it")


@check("airline.compensation_requested")
def compensation_requested(ctx: CheckContext) -> CheckResult:
    """The user asked for compensation."""
    turn = user_turn_matching(ctx.evidence, _COMPENSATION)
    if turn is None:
        return missing("the user has not asked for compensation; do not offer it proactively")
    return met(request=turn.text)


def _user_reservations(ctx: CheckContext, user_id: str) -> list[dict[str, Any]]:
    return [r for r in ctx.evidence.entities_of("reservation") if r.get("user_id") == user_id]


@check("airline.compensation_eligible")
def compensation_eligible(ctx: CheckContext) -> CheckResult:
    """Silver/gold member, or an insured or business reservation of the user (from tool results)."""
    uid = ctx.arg("user_id")
    user = ctx.evidence.entity("user", uid)
    if user is None:
        return missing(f"the profile of {uid} was not read", read("get_user_details", user_id=uid))
    if user.get("membership") in ("silver", "gold"):
        return met(f"{user.get('membership')} member")
    reservations = _user_reservations(ctx, uid)
    if not reservations:
        return missing(f"no reservation of {uid} was read; confirm the facts first")
    if any(r.get("insurance") == "yes" or r.get("cabin") == "business" for r in reservations):
        return met("insured or business reservation")
    return violated(f"{uid} is a {user.get('membership')} member without insurance or business cabin in the reservations read")


@check("airline.certificate_amount")
def certificate_amount(ctx: CheckContext) -> CheckResult:
    """Amount = per-passenger rate x passengers of a reservation of the user (the policy's per-passenger rates)."""
    uid, amount = ctx.arg("user_id"), ctx.arg("amount")
    reservations = _user_reservations(ctx, uid)
    if not reservations:
        return missing(f"no reservation of {uid} was read; the amount depends on its passengers")
    rates: list[int] = list(POLICY.compensation_per_passenger.values())
    allowed = sorted({rate * len(r.get("passengers") or []) for r in reservations for rate in rates})
    try:
        ok = float(amount) in allowed
    except (TypeError, ValueError):
        ok = False
    return met() if ok else violated(f"amount {amount} is not a per-passenger rate x passengers of a reservation read ({allowed})", allowed=allowed)


@check("airline.compensation_reason")
def compensation_reason(ctx: CheckContext) -> CheckResult:
    """A read reservation of the user has a flight a tool result shows cancelled or delayed.

    Once every segment of the user's read reservations has an observed status and none is
    cancelled or delayed, the facts contradict the complaint: no reason the policy lists.
    """
    uid = ctx.arg("user_id")
    reservations = _user_reservations(ctx, uid)
    if not reservations:
        user = ctx.evidence.entity("user", uid) or {}
        listed = [r for r in user.get("reservations") or [] if isinstance(r, str)]
        return missing(
            f"no reservation of {uid} was read; read the reservation the user complains about and its flights' status",
            *(read("get_reservation_details", reservation_id=r) for r in listed),
        )
    disrupted, unknown = [], []
    for res in reservations:
        for number, date in _ever_pairs(ctx, res):
            status = ctx.evidence.flight_status.get((number, date))
            if status in ("cancelled", "delayed"):
                disrupted.append(f"{number} on {date} ({res.get('reservation_id')}) is {status}")
            elif status is None:
                unknown.append((number, date))
    if disrupted:
        return met("; ".join(disrupted))
    if unknown:
        return missing(
            f"no cancelled or delayed flight is shown yet in the reservations of {uid} read so far; check the flight status",
            *(read("get_flight_status", flight_number=n, date=d) for n, d in unknown),
        )
    read_ids = ", ".join(str(r.get("reservation_id")) for r in reservations)
    return violated(f"no flight of the reservations of {uid} read ({read_ids}) is cancelled or delayed: nothing to compensate", reservations=read_ids)


def _ever_pairs(ctx: CheckContext, res: dict[str, Any]) -> list[tuple[str, str]]:
    """The reservation's segments now and in every earlier record a tool result showed: a
    delayed flight the agent's own change removed still qualifies the compensation after it."""
    pairs = dict.fromkeys(_pairs(res.get("flights")))
    for record in ctx.evidence.snapshots("reservation", res.get("reservation_id")):
        pairs.update(dict.fromkeys(_pairs(record.get("flights"))))
    return list(pairs)


def _disrupted_with(ctx: CheckContext, uid: str, status: str) -> list[dict[str, Any]]:
    """The user's read reservations with a segment (now or before a change) a tool result shows ``status``."""
    return [
        r for r in _user_reservations(ctx, uid)
        if any(ctx.evidence.flight_status.get(p) == status for p in _ever_pairs(ctx, r))
    ]


@check("airline.delay_compensation_after_change")
def delay_compensation_after_change(ctx: CheckContext) -> CheckResult:
    """A delay certificate comes after the delayed reservation was changed or cancelled.

    "If the user complains about delayed flights in a reservation and wants to change or
    cancel the reservation, the agent can offer a certificate ... after confirming the facts
    and changing or cancelling the reservation": a certificate of the delay amount for a
    delayed reservation needs a successful update_reservation_flights or cancel_reservation of
    it earlier in the conversation, or one earlier in the same agent message. An amount that a cancelled flight also explains is not
    judged here (certificate_amount and compensation_reason are).
    """
    uid = ctx.arg("user_id")
    try:
        amount = float(ctx.arg("amount"))
    except (TypeError, ValueError):
        return met("amount not a number (certificate_amount judges it)")
    rate = POLICY.compensation_per_passenger
    def _fits(res: dict[str, Any], kind: str) -> bool:
        return rate[kind] * len(res.get("passengers") or []) == amount  # type: ignore[index]
    if any(_fits(r, "cancelled") for r in _disrupted_with(ctx, uid, "cancelled")):
        return met("a cancelled flight explains the amount")
    delayed = [r for r in _disrupted_with(ctx, uid, "delayed") if _fits(r, "delayed")]
    if not delayed:
        return met("not a delay certificate of a read reservation")
    # a change or cancellation earlier in the same agent message runs first (the message is
    # executed only if every call in it is allowed)
    acted = {c.arguments.get("reservation_id") for c in ctx.evidence.done_or_pending("update_reservation_flights", "cancel_reservation")}
    if any(r.get("reservation_id") in acted for r in delayed):
        return met("the delayed reservation was changed or cancelled first")
    ids = ", ".join(str(r.get("reservation_id")) for r in delayed)
    return violated(f"a delay certificate for {ids}, but that reservation was neither changed nor cancelled in this conversation", reservations=ids)
