"""Telecom ledger schema: customers, lines, bills, plans, devices and data usage.

Field names follow the JSON that tau2's telecom read tools return. Device-side state the
user reports in words is not a read return and never enters the ledger.
"""

from __future__ import annotations

from pydantic import Field

from tauguard import domains
from tauguard_strategies.ledger.ledger import Entity, LedgerBase

# The telecom policy's clock (tauguard/domains/telecom/policy.toml).
TODAY = domains.telecom().today


class Customer(Entity):
    customer_id: str
    full_name: str | None = None
    date_of_birth: str | None = None
    phone_number: str | None = None
    account_status: str | None = None
    line_ids: list[str] = Field(default_factory=list)
    bill_ids: list[str] = Field(default_factory=list)


class Line(Entity):
    line_id: str
    phone_number: str | None = None
    status: str
    plan_id: str | None = None
    device_id: str | None = None
    data_used_gb: float | None = None
    data_refueling_gb: float | None = None
    roaming_enabled: bool | None = None
    contract_end_date: str | None = None
    suspension_start_date: str | None = None


class LineItem(Entity):
    description: str
    amount: float
    date: str | None = None
    item_type: str | None = None


class Bill(Entity):
    bill_id: str
    customer_id: str
    period_start: str | None = None
    period_end: str | None = None
    issue_date: str | None = None
    total_due: float
    due_date: str | None = None
    line_items: list[LineItem] = Field(default_factory=list)
    status: str  # Draft | Issued | Awaiting Payment | Paid | Overdue | Disputed


class Plan(Entity):
    plan_id: str
    name: str | None = None
    data_limit_gb: float
    price_per_month: float | None = None
    data_refueling_price_per_gb: float | None = None


class Device(Entity):
    device_id: str
    device_type: str | None = None
    model: str | None = None
    is_esim_capable: bool | None = None
    activated: bool | None = None


class DataUsage(Entity):
    line_id: str
    data_used_gb: float
    data_limit_gb: float
    data_refueling_gb: float
    cycle_end_date: str | None = None


class TelecomLedger(LedgerBase):
    """Canonical paths: ``customers/{id}``, ``lines/{id}``, ``bills/{id}``, ``plans/{id}``,
    ``devices/{id}``, ``usage/{line_id}``, ``identified_customers`` (in order)."""

    customers: dict[str, Customer] = Field(default_factory=dict)
    lines: dict[str, Line] = Field(default_factory=dict)
    bills: dict[str, Bill] = Field(default_factory=dict)
    plans: dict[str, Plan] = Field(default_factory=dict)
    devices: dict[str, Device] = Field(default_factory=dict)
    usage: dict[str, DataUsage] = Field(default_factory=dict)
    identified_customers: list[str] = Field(default_factory=list)


# The ledger type of this domain (found by name: schemas/__init__.py loads schemas/<domain>.py).
LEDGER = TelecomLedger
