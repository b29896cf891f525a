"""Airline ledger schema: users, reservations, flight routes and flight status by date.

Field names follow the JSON that tau2's airline read tools return, so a read return
validates straight into these models; only fields the policy talks about are kept.
"""

from __future__ import annotations

from pydantic import Field

from tauguard import domains
from tauguard_strategies.ledger.ledger import Entity, LedgerBase

# The airline policy's clock (tauguard/domains/airline/policy.toml).
NOW = domains.airline().now_iso
TODAY = domains.airline().today


class PaymentMethod(Entity):
    id: str
    source: str  # credit_card | gift_card | certificate
    amount: float | None = None  # balance of gift cards and certificates
    brand: str | None = None
    last_four: str | None = None


class Name(Entity):
    first_name: str
    last_name: str


class Passenger(Entity):
    first_name: str
    last_name: str
    dob: str


class User(Entity):
    user_id: str
    name: Name | None = None
    email: str | None = None
    membership: str  # regular | silver | gold
    payment_methods: dict[str, PaymentMethod] = Field(default_factory=dict)
    saved_passengers: list[Passenger] = Field(default_factory=list)
    reservations: list[str] = Field(default_factory=list)


class ReservationFlight(Entity):
    flight_number: str
    origin: str
    destination: str
    date: str
    price: float | None = None


class Payment(Entity):
    payment_id: str
    amount: float


class Reservation(Entity):
    reservation_id: str
    user_id: str
    origin: str
    destination: str
    flight_type: str  # one_way | round_trip
    cabin: str  # basic_economy | economy | business
    flights: list[ReservationFlight] = Field(default_factory=list)
    passengers: list[Passenger] = Field(default_factory=list)
    payment_history: list[Payment] = Field(default_factory=list)
    created_at: str
    total_baggages: int
    nonfree_baggages: int
    insurance: str  # yes | no
    status: str | None = None  # "cancelled" or null


class FlightRoute(Entity):
    """Static facts of a flight number (from search results or reservation segments)."""

    flight_number: str
    origin: str
    destination: str
    scheduled_departure_time_est: str | None = None
    scheduled_arrival_time_est: str | None = None


class FlightDate(Entity):
    """A flight's status on one date (get_flight_status or a search result)."""

    status: str  # available | on time | delayed | flying | landed | cancelled
    available_seats: dict[str, int] | None = None
    prices: dict[str, float] | None = None


class AirlineLedger(LedgerBase):
    """Canonical paths: ``users/{user_id}``, ``reservations/{reservation_id}``,
    ``flights/{flight_number}``, ``flight_dates/{flight_number}/{date}``,
    ``identified_users`` (users whose profile was read, in order)."""

    users: dict[str, User] = Field(default_factory=dict)
    reservations: dict[str, Reservation] = Field(default_factory=dict)
    flights: dict[str, FlightRoute] = Field(default_factory=dict)
    flight_dates: dict[str, dict[str, FlightDate]] = Field(default_factory=dict)
    identified_users: list[str] = Field(default_factory=list)


# The ledger type of this domain (found by name: schemas/__init__.py loads schemas/<domain>.py).
LEDGER = AirlineLedger
