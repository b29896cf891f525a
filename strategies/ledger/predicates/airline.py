"""Airline predicates: one per policy clause per WRITE tool (clauses in clauses/airline.toml)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from tauguard import domains
from tauguard_strategies.ledger.ledger import Fact
from tauguard_strategies.ledger.schemas.airline import (
    NOW,
    TODAY,
    PaymentMethod,
    Reservation,
    ReservationFlight,
)
from tauguard_strategies.ledger.predicates.base import Finding, GateContext, NeedFact, predicate
from tauguard.strategy_api.guard import ReadRequest, Verdict

D = "airline"
RES_TOOLS = ("cancel_reservation", "update_reservation_flights", "update_reservation_baggages", "update_reservation_passengers")
POLICY = domains.airline()  # clock, allowances and limits (tauguard/domains/airline/policy.toml)
FLOWN = POLICY.flown_statuses
# Free checked bags per passenger, by membership and cabin (policy "Checked bag allowance").
FREE_BAGS = POLICY.free_bags


# --- shared fact access ---------------------------------------------------------------


def _reservation(ctx: GateContext) -> Reservation:
    rid = str(ctx.arg("reservation_id"))
    res: Reservation = ctx.need("reservations", rid)
    return res


def _identified(ctx: GateContext) -> str | None:
    users: list[str] = ctx.ledger.identified_users
    if users:
        ctx.note("identified_user", users[0])
        return users[0]
    return None


def _method(ctx: GateContext, uid: str, pid: str) -> PaymentMethod | None:
    """The profile's payment method ``pid``; None when the observed profile lacks it."""
    user = ctx.peek("users", uid)
    if user.state == "missing":
        raise NeedFact(user, ctx.hint("users", uid))
    fact = ctx.peek("users", uid, "payment_methods", pid)
    if fact.state == "stale" or (fact.state == "missing" and ctx.ledger.is_stale(f"users/{uid}/payment_methods")):
        raise NeedFact(fact, ctx.hint("users", uid))
    return fact.value if fact.state == "fresh" else None


def _profile_methods(ctx: GateContext, uid: str) -> str:
    user = ctx.ledger.users.get(uid)
    if user is None:
        return "(profile not read)"
    return ", ".join(f"{k} ({m.source})" for k, m in sorted(user.payment_methods.items())) or "(none)"


def _segment_status(ctx: GateContext, seg: ReservationFlight) -> Fact:
    return ctx.peek("flight_dates", seg.flight_number, seg.date, "status")


def _flown(ctx: GateContext, res: Reservation) -> tuple[list[str], list[ReservationFlight]]:
    """(flown segments described, segments whose flown state needs a status read)."""
    flown, unknown = [], []
    for seg in res.flights:
        status = _segment_status(ctx, seg)
        if status.fresh:
            if status.value in FLOWN:
                flown.append(f"{seg.flight_number} on {seg.date} is {status.value}")
        elif seg.date <= TODAY:
            # Departed or departing today: only an observed status tells whether it flew.
            unknown.append(seg)
    ctx.note("policy_today", TODAY)
    return flown, unknown


def _new_flights(ctx: GateContext) -> list[tuple[str, str]]:
    return [(str(f["flight_number"]), str(f["date"])) for f in ctx.arg("flights")]


def _flights_changed(ctx: GateContext, res: Reservation) -> bool:
    return sorted(_new_flights(ctx)) != sorted((s.flight_number, s.date) for s in res.flights)


# --- identity --------------------------------------------------------------------------


@predicate(D, "airline.reservation_owner", *RES_TOOLS)
def reservation_owner(ctx: GateContext) -> Finding | None:
    """The reservation belongs to the identified user."""
    rid = str(ctx.arg("reservation_id"))
    ident = _identified(ctx)
    if ident is not None and ctx.peek("reservations", rid).state == "missing":
        listed = ctx.peek("users", ident, "reservations")
        if listed.fresh and rid not in listed.value:
            # The identified user's own reservation list (get_user_details) settles it
            # without reading the other user's reservation.
            return Finding(
                verdict=Verdict.BLOCK,
                detail=f"reservation {rid} is not among the reservations of the identified user {ident}",
                remediation="act only on the identified user's own reservations; deny the request for another user's reservation",
            )
    res = _reservation(ctx)
    owner = ctx.need("reservations", res.reservation_id, "user_id")
    if ident is None and ctx.user_stated(owner):
        # "The user must provide their user id": the user gave the id the reservation read shows
        # as its owner (the write contract's stated-id way); no profile read is needed.
        return None
    if ident is None:
        return ctx.verify(
            f"no user is identified yet (reservation {res.reservation_id} belongs to {owner})",
            [("users", owner)],
            remediation=f"obtain the user id from the user and read their profile with get_user_details; reservation {res.reservation_id} belongs to {owner}",
        )
    if owner != ident:
        return Finding(
            verdict=Verdict.BLOCK,
            detail=f"reservation {res.reservation_id} belongs to {owner}, not to the identified user {ident}",
            remediation="act only on the identified user's own reservations; deny the request for another user's reservation",
        )
    return None


@predicate(D, "airline.booking_user", "book_reservation")
def booking_user(ctx: GateContext) -> Finding | None:
    """A booking is made for the identified user."""
    uid = str(ctx.arg("user_id"))
    ident = _identified(ctx)
    if ident is None and ctx.user_stated(uid):
        return None  # the user gave the id the booking is for (the contract's stated-id way)
    if ident is None:
        return ctx.verify(f"no user is identified yet (booking for {uid})", [("users", uid)],
                          remediation="obtain the user id from the user and read their profile with get_user_details")
    if uid != ident:
        return Finding(verdict=Verdict.BLOCK, detail=f"the booking is for {uid}, not for the identified user {ident}",
                       remediation=f"book only for the identified user {ident}")
    return None


# --- cancel ----------------------------------------------------------------------------


@predicate(D, "airline.cancel_not_flown", "cancel_reservation")
def cancel_not_flown(ctx: GateContext) -> Finding | None:
    """No segment of the reservation has been flown."""
    res = _reservation(ctx)
    flown, unknown = _flown(ctx, res)
    if flown:
        return Finding(verdict=Verdict.BLOCK, detail="; ".join(flown),
                       remediation="do not cancel; a partly flown reservation needs a human agent (transfer_to_human_agents)")
    if unknown:
        return ctx.verify(
            "whether these segments have been flown is not observed: " + ", ".join(f"{s.flight_number} on {s.date}" for s in unknown),
            [("flight_dates", s.flight_number, s.date) for s in unknown],
        )
    return None


@predicate(D, "airline.cancel_requires_basis", "cancel_reservation")
def cancel_requires_basis(ctx: GateContext) -> Finding | None:
    """Booked within 24 h, airline-cancelled flight, business cabin, or travel insurance
    (the covered reason is not observable: clause airline.cancel_basis_insurance)."""
    res = _reservation(ctx)
    rid = res.reservation_id
    created = ctx.need("reservations", rid, "created_at")
    cabin = ctx.need("reservations", rid, "cabin")
    insurance = ctx.need("reservations", rid, "insurance")
    ctx.note("policy_now", NOW)
    if datetime.fromisoformat(created) >= datetime.fromisoformat(NOW) - timedelta(hours=POLICY.cancel_window_hours):
        return None
    if cabin == "business":
        return None
    if insurance == "yes":
        # The ledger sees the insurance but not the reason (dialogue): the decision says so.
        ctx.note("insurance_basis", "insured; whether the stated reason is covered (health or weather) is not observable: airline.cancel_basis_insurance")
        return None
    unknown = []
    for seg in res.flights:
        status = _segment_status(ctx, seg)
        if status.fresh and status.value == "cancelled":
            return None
        if not status.fresh:
            unknown.append(seg)
    facts = f"booked {created} (more than {POLICY.cancel_window_hours} h before {NOW}), cabin {cabin}, insurance {insurance}"
    if unknown:
        return ctx.verify(
            f"no cancellation basis observed so far ({facts}); the status of "
            + ", ".join(f"{s.flight_number} on {s.date}" for s in unknown)
            + " is not observed (a flight cancelled by the airline would be a basis)",
            [("flight_dates", s.flight_number, s.date) for s in unknown],
        )
    return Finding(
        verdict=Verdict.BLOCK,
        detail=f"no cancellation basis: {facts}, and no flight of the reservation is cancelled by the airline",
        remediation="none: the reservation cannot be cancelled under the policy; tell the user so",
    )


# --- change flights ------------------------------------------------------------------------


@predicate(D, "airline.basic_economy_no_change", "update_reservation_flights")
def basic_economy_no_change(ctx: GateContext) -> Finding | None:
    """A basic economy reservation keeps its flights (a cabin change alone is allowed)."""
    res = _reservation(ctx)
    cabin = ctx.need("reservations", res.reservation_id, "cabin")
    if cabin == "basic_economy" and _flights_changed(ctx, res):
        return Finding(verdict=Verdict.BLOCK,
                       detail=f"reservation {res.reservation_id} is basic_economy and the call changes its flights",
                       remediation="keep the reservation's flights (a cabin change on the same flights is allowed) or deny the flight change")
    return None


def _observed_legs(ctx: GateContext) -> tuple[list[tuple[str, str]], list[str]]:
    """(origin, destination) of each flight of the call whose route is observed, and the others."""
    legs, unknown = [], []
    for number, _date in _new_flights(ctx):
        route = ctx.peek("flights", number)
        if route.state == "missing":
            unknown.append(number)
            continue
        legs.append((route.value.origin, route.value.destination))
        ctx.note(f"flights/{number}/route", f"{route.value.origin}-{route.value.destination}")
    return legs, unknown


def _itinerary_ok(ftype: str, origin: str, dest: str, legs: list[tuple[str, str]]) -> bool:
    if not legs or legs[0][0] != origin:
        return False
    if ftype == "one_way":
        return legs[-1][1] == dest
    return legs[-1][1] == origin and any(d == dest for _, d in legs[:-1])


@predicate(D, "airline.same_route", "update_reservation_flights")
def same_route(ctx: GateContext) -> Finding | None:
    """Origin, destination and trip type are unchanged."""
    res = _reservation(ctx)
    if not _flights_changed(ctx, res):
        return None
    rid = res.reservation_id
    origin = ctx.need("reservations", rid, "origin")
    dest = ctx.need("reservations", rid, "destination")
    ftype = ctx.need("reservations", rid, "flight_type")
    legs, unknown = _observed_legs(ctx)
    if unknown:
        return ctx.verify("the routes of the new flights are not observed: " + ", ".join(unknown),
                          [("flights", n) for n in unknown],
                          remediation="search the new flights on their dates (search_direct_flight / search_onestop_flight) so their routes are observed")
    if not _itinerary_ok(ftype, origin, dest, legs):
        path = " > ".join(f"{o}-{d}" for o, d in legs)
        return Finding(verdict=Verdict.BLOCK,
                       detail=f"the new itinerary {path} does not keep the reservation's {ftype} trip {origin}-{dest}",
                       remediation=f"choose flights for the same {ftype} trip {origin}-{dest}, or deny the change")
    return None


@predicate(D, "airline.booking_route_asked", "book_reservation")
def booking_route(ctx: GateContext) -> Finding | None:
    """The booked flights make the trip the booking states (origin, destination, trip type)."""
    origin, dest, ftype = str(ctx.arg("origin")), str(ctx.arg("destination")), str(ctx.arg("flight_type"))
    legs, unknown = _observed_legs(ctx)
    if unknown:
        # A route the ledger has not observed cannot contradict the trip; whether the flights
        # were searched at all is not this clause (no VERIFY of its own: real agents book
        # flights they read from a reservation as well as from a search).
        ctx.note("routes_not_observed", unknown)
        return None
    if not _itinerary_ok(ftype, origin, dest, legs):
        path = " > ".join(f"{o}-{d}" for o, d in legs)
        return Finding(verdict=Verdict.BLOCK,
                       detail=f"the flights {path} do not make the {ftype} trip {origin}-{dest} the booking states",
                       remediation=f"choose flights for the {ftype} trip {origin}-{dest}")
    return None


@predicate(D, "airline.cabin_not_flown", "update_reservation_flights")
def cabin_not_flown(ctx: GateContext) -> Finding | None:
    """The cabin is not changed once a segment has been flown."""
    res = _reservation(ctx)
    cabin = ctx.need("reservations", res.reservation_id, "cabin")
    if ctx.arg("cabin") == cabin:
        return None
    flown, unknown = _flown(ctx, res)
    if flown:
        return Finding(verdict=Verdict.BLOCK, detail=f"cabin change {cabin} -> {ctx.arg('cabin')} but " + "; ".join(flown),
                       remediation=f"keep the cabin {cabin}")
    if unknown:
        return ctx.verify("whether these segments have been flown is not observed: " + ", ".join(f"{s.flight_number} on {s.date}" for s in unknown),
                          [("flight_dates", s.flight_number, s.date) for s in unknown])
    return None


@predicate(D, "airline.change_payment", "update_reservation_flights")
def change_payment(ctx: GateContext) -> Finding | None:
    """The payment is one gift card or credit card from the owner's profile."""
    res = _reservation(ctx)
    pid = str(ctx.arg("payment_id"))
    method = _method(ctx, res.user_id, pid)
    if method is None or method.source not in ("gift_card", "credit_card"):
        what = "is not in the profile" if method is None else f"is a {method.source}"
        return Finding(verdict=Verdict.REVISE, detail=f"payment {pid} {what} of {res.user_id}",
                       remediation=f"use one gift card or credit card from the profile: {_profile_methods(ctx, res.user_id)}")
    return None


# --- baggage --------------------------------------------------------------------------------


@predicate(D, "airline.no_bag_removal", "update_reservation_baggages")
def no_bag_removal(ctx: GateContext) -> Finding | None:
    """Checked bags can be added, not removed."""
    res = _reservation(ctx)
    current = ctx.need("reservations", res.reservation_id, "total_baggages")
    if int(ctx.arg("total_baggages")) < current:
        return Finding(verdict=Verdict.BLOCK,
                       detail=f"total_baggages {ctx.arg('total_baggages')} is below the reservation's {current}",
                       remediation=f"bags can only be added: total_baggages must be at least {current}")
    return None


def _allowance(ctx: GateContext, uid: str, cabin: str, passengers: int) -> Finding | None:
    membership = ctx.need("users", uid, "membership")
    free = FREE_BAGS.get(membership, {}).get(cabin)
    if free is None:
        return None
    total, nonfree = int(ctx.arg("total_baggages")), int(ctx.arg("nonfree_baggages"))
    required = max(0, total - free * passengers)
    ctx.note("free_bags", free * passengers)
    # The policy fixes the count: bags beyond the allowance are non-free, the others free
    # (charging for a free bag breaks it as much as not charging for a non-free one).
    if nonfree != required:
        revised = dict(ctx.call.arguments, nonfree_baggages=required)
        return Finding(verdict=Verdict.REVISE,
                       detail=f"{total} bags with {free * passengers} free ({membership}, {cabin}, {passengers} passenger(s)) leaves {required} non-free, not {nonfree}",
                       remediation=f"set nonfree_baggages to {required}", revised_arguments=revised)
    return None


@predicate(D, "airline.bag_allowance", "update_reservation_baggages")
def bag_allowance_update(ctx: GateContext) -> Finding | None:
    """Non-free bags follow the owner's membership and the reservation's cabin."""
    res = _reservation(ctx)
    cabin = ctx.need("reservations", res.reservation_id, "cabin")
    return _allowance(ctx, res.user_id, cabin, len(res.passengers))


@predicate(D, "airline.payment_in_profile", "update_reservation_baggages")
def baggage_payment_in_profile(ctx: GateContext) -> Finding | None:
    """The bag payment method is in the owner's profile."""
    res = _reservation(ctx)
    pid = str(ctx.arg("payment_id"))
    if _method(ctx, res.user_id, pid) is None:
        return Finding(verdict=Verdict.REVISE, detail=f"payment {pid} is not in the profile of {res.user_id}",
                       remediation=f"use a payment method from the profile: {_profile_methods(ctx, res.user_id)}")
    return None


# --- passengers -----------------------------------------------------------------------------


@predicate(D, "airline.passenger_count", "update_reservation_passengers")
def passenger_count(ctx: GateContext) -> Finding | None:
    """The number of passengers is unchanged."""
    res = _reservation(ctx)
    ctx.note(f"reservations/{res.reservation_id}/passenger_count", len(res.passengers))
    if len(ctx.arg("passengers")) != len(res.passengers):
        return Finding(verdict=Verdict.BLOCK,
                       detail=f"{len(ctx.arg('passengers'))} passengers given; the reservation has {len(res.passengers)}",
                       remediation="the number of passengers cannot change; edit the existing passengers only")
    return None


# --- booking --------------------------------------------------------------------------------


@predicate(D, "airline.max_passengers", "book_reservation")
def max_passengers(ctx: GateContext) -> Finding | None:
    """At most five passengers."""
    if len(ctx.arg("passengers")) > 5:
        return Finding(verdict=Verdict.BLOCK, detail=f"{len(ctx.arg('passengers'))} passengers in one reservation",
                       remediation="a reservation can have at most five passengers")
    return None


def _booking_methods(ctx: GateContext) -> list[tuple[str, PaymentMethod | None]]:
    uid = str(ctx.arg("user_id"))
    return [(str(p["payment_id"]), _method(ctx, uid, str(p["payment_id"]))) for p in ctx.arg("payment_methods")]


@predicate(D, "airline.payment_in_profile", "book_reservation")
def booking_payment_in_profile(ctx: GateContext) -> Finding | None:
    """Every payment method is in the booking user's profile."""
    absent = [pid for pid, method in _booking_methods(ctx) if method is None]
    if absent:
        uid = str(ctx.arg("user_id"))
        return Finding(verdict=Verdict.REVISE, detail=f"payment method(s) {', '.join(absent)} not in the profile of {uid}",
                       remediation=f"pay only with methods from the profile: {_profile_methods(ctx, uid)}")
    return None


@predicate(D, "airline.payment_limits", "book_reservation")
def payment_limits(ctx: GateContext) -> Finding | None:
    """At most one certificate, one credit card and three gift cards."""
    limits = POLICY.payment_limits
    counts: dict[str, int] = {}
    for _pid, method in _booking_methods(ctx):
        if method is not None:
            counts[method.source] = counts.get(method.source, 0) + 1
    ctx.note("payment_sources", dict(sorted(counts.items())))
    over = [f"{n} {src}s (max {limits[src]})" for src, n in sorted(counts.items()) if n > limits.get(src, n)]
    if over:
        return Finding(verdict=Verdict.REVISE, detail="too many payment methods of one kind: " + ", ".join(over),
                       remediation="use at most one travel certificate, one credit card and three gift cards")
    return None


@predicate(D, "airline.bag_allowance", "book_reservation")
def bag_allowance_booking(ctx: GateContext) -> Finding | None:
    """Non-free bags follow the booking user's membership and the cabin."""
    return _allowance(ctx, str(ctx.arg("user_id")), str(ctx.arg("cabin")), len(ctx.arg("passengers")))


# --- compensation -----------------------------------------------------------------------


def _disrupted(ctx: GateContext, uid: str) -> tuple[list[tuple[Reservation, str]], list[tuple[str, str]], list[str]]:
    """(read reservations of ``uid`` with an observed cancelled/delayed segment and the
    worst such status, unobserved segments of the user's read reservations, the ids of the
    user's read reservations)."""
    found: list[tuple[Reservation, str]] = []
    unobserved: list[tuple[str, str]] = []
    read_ids: list[str] = []
    for rid in sorted(ctx.ledger.reservations):
        res_fact = ctx.peek("reservations", rid)
        res: Reservation = res_fact.value
        if res.user_id != uid or not res_fact.fresh:
            continue
        read_ids.append(rid)
        statuses = []
        # the segments the agent's own change or cancellation removed count too: they were
        # observed before it (the delayed flight a change replaced)
        earlier = ctx.ledger.before_writes.get(f"reservations/{rid}")
        removed = [seg for seg in (earlier.flights if isinstance(earlier, Reservation) else [])
                   if (seg.flight_number, seg.date) not in {(s.flight_number, s.date) for s in res.flights}]
        for seg in [*res.flights, *removed]:
            status = _segment_status(ctx, seg)
            if status.fresh:
                statuses.append(status.value)
            else:
                unobserved.append((seg.flight_number, seg.date))
        if "cancelled" in statuses:
            found.append((res, "cancelled"))
        elif "delayed" in statuses:
            found.append((res, "delayed"))
    return found, unobserved, read_ids


def _compensation_facts(ctx: GateContext) -> tuple[str, list[tuple[Reservation, str]]] | Finding:
    uid = str(ctx.arg("user_id"))
    found, unobserved, read_ids = _disrupted(ctx, uid)
    if found:
        return uid, found
    if unobserved:
        return ctx.verify(f"no cancelled or delayed flight is observed in the read reservations of {uid}",
                          [("flight_dates", n, d) for n, d in unobserved])
    if read_ids:
        # Every segment of the user's read reservations has an observed status and none is
        # cancelled or delayed: the facts contradict the complaint.
        ctx.note("reservations_read", read_ids)
        return Finding(verdict=Verdict.BLOCK,
                       detail=f"every flight of the read reservations of {uid} ({', '.join(read_ids)}) has an observed status and none is cancelled or delayed",
                       remediation="do not compensate: the facts show no cancelled or delayed flight (if the complaint is about another reservation, read it and its flights' status first)")
    finding = ctx.verify(f"no reservation of {uid} has been read", [],
                         remediation="read the reservation the user complains about (get_reservation_details) and its flights' status (get_flight_status)")
    finding.required_reads = [ReadRequest(tool="get_reservation_details", why="read the reservation the user complains about")]
    return finding


@predicate(D, "airline.compensation_facts", "send_certificate")
def compensation_facts(ctx: GateContext) -> Finding | None:
    """The identified user has a read reservation with an observed cancelled/delayed flight."""
    uid = str(ctx.arg("user_id"))
    ident = _identified(ctx)
    if ident is None:
        return ctx.verify(f"no user is identified yet (certificate for {uid})", [("users", uid)])
    if uid != ident:
        return Finding(verdict=Verdict.BLOCK, detail=f"the certificate is for {uid}, not for the identified user {ident}",
                       remediation="compensate only the identified user")
    facts = _compensation_facts(ctx)
    return facts if isinstance(facts, Finding) else None


@predicate(D, "airline.compensation_eligibility", "send_certificate")
def compensation_eligibility(ctx: GateContext) -> Finding | None:
    """Silver/gold membership, travel insurance or business cabin."""
    uid = str(ctx.arg("user_id"))
    membership = ctx.need("users", uid, "membership")
    if membership in ("silver", "gold"):
        return None
    facts = _compensation_facts(ctx)
    if isinstance(facts, Finding):
        return facts
    _, found = facts
    if any(res.insurance == "yes" or res.cabin == "business" for res, _ in found):
        return None
    described = ", ".join(f"{res.reservation_id} ({res.cabin}, insurance {res.insurance})" for res, _ in found)
    return Finding(verdict=Verdict.BLOCK,
                   detail=f"{uid} is a regular member and the disrupted reservation(s) {described} have no insurance and are not business",
                   remediation="do not compensate")


@predicate(D, "airline.compensation_amount", "send_certificate")
def compensation_amount(ctx: GateContext) -> Finding | None:
    """$100 x passengers for a cancelled flight, $50 x passengers for a delayed one."""
    facts = _compensation_facts(ctx)
    if isinstance(facts, Finding):
        return facts
    _, found = facts
    options: dict[int, str] = {}
    for res, what in found:
        per = POLICY.compensation_per_passenger["cancelled" if what == "cancelled" else "delayed"]
        options.setdefault(per * len(res.passengers), f"{res.reservation_id}: {what}, {len(res.passengers)} passenger(s)")
    ctx.note("allowed_amounts", sorted(options))
    amount: Any = ctx.arg("amount")
    if float(amount) in options:
        return None
    revised = dict(ctx.call.arguments, amount=next(iter(options))) if len(options) == 1 else None
    return Finding(verdict=Verdict.REVISE,
                   detail=f"amount {amount} matches no observed disruption ("
                   + "; ".join(f"${a} for {d}" for a, d in sorted(options.items())) + ")",
                   remediation="use the amount the policy gives: " + ", ".join(f"${a}" for a in sorted(options)),
                   revised_arguments=revised)


@predicate(D, "airline.compensation_delayed", "send_certificate")
def compensation_delayed(ctx: GateContext) -> Finding | None:
    """A delay certificate comes after the delayed reservation was changed or cancelled."""
    facts = _compensation_facts(ctx)
    if isinstance(facts, Finding):
        return None  # compensation_facts reports missing or contradicting facts
    _, found = facts
    amount = float(ctx.arg("amount"))
    per = POLICY.compensation_per_passenger
    cancelled = [res for res, what in found if what == "cancelled" and per["cancelled"] * len(res.passengers) == amount]
    delayed = [res for res, what in found if what == "delayed" and per["delayed"] * len(res.passengers) == amount]
    if cancelled or not delayed:
        return None  # not a delay certificate (compensation_amount judges the amount)
    # a change or cancellation earlier in the same agent message runs first (the message is
    # executed only if every call in it is allowed)
    acts = ("update_reservation_flights", "cancel_reservation")
    acted = {str(w.arguments.get("reservation_id")) for w in ctx.ledger.history if w.tool in acts}
    acted |= {str(c.arguments.get("reservation_id")) for c in ctx.pending if c.name in acts}
    ctx.note("changed_or_cancelled", sorted(acted))
    if any(res.reservation_id in acted for res in delayed):
        return None
    ids = ", ".join(res.reservation_id for res in delayed)
    return Finding(verdict=Verdict.BLOCK,
                   detail=f"a delay certificate for {ids}, but that reservation was neither changed nor cancelled in this conversation",
                   remediation="offer the delay gesture only after changing or cancelling the delayed reservation, as the user asked")
