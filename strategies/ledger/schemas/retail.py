"""Retail ledger schema: authenticated user, users, orders (items, payment history), products.

Field names follow the JSON that tau2's retail read tools return.
"""

from __future__ import annotations

from pydantic import Field

from tauguard_strategies.ledger.ledger import Entity, LedgerBase


class PaymentMethod(Entity):
    id: str
    source: str  # credit_card | gift_card | paypal
    balance: float | None = None  # gift cards only
    brand: str | None = None
    last_four: str | None = None


class Address(Entity):
    address1: str
    address2: str = ""
    city: str
    country: str
    state: str
    zip: str


class Name(Entity):
    first_name: str
    last_name: str


class User(Entity):
    user_id: str
    name: Name | None = None
    address: Address | None = None
    email: str | None = None
    payment_methods: dict[str, PaymentMethod] = Field(default_factory=dict)
    orders: list[str] = Field(default_factory=list)


class OrderItem(Entity):
    name: str | None = None
    product_id: str
    item_id: str
    price: float
    options: dict[str, str] = Field(default_factory=dict)


class OrderPayment(Entity):
    transaction_type: str  # payment | refund
    amount: float
    payment_method_id: str


class Order(Entity):
    order_id: str
    user_id: str
    address: Address | None = None
    items: list[OrderItem] = Field(default_factory=list)
    status: str
    payment_history: list[OrderPayment] = Field(default_factory=list)


class Variant(Entity):
    item_id: str
    options: dict[str, str] = Field(default_factory=dict)
    available: bool
    price: float


class Product(Entity):
    name: str | None = None
    product_id: str
    variants: dict[str, Variant] = Field(default_factory=dict)


class RetailLedger(LedgerBase):
    """Canonical paths: ``authenticated`` (user ids located via find_user_id_by_*, in
    order), ``users/{user_id}``, ``orders/{order_id}``, ``products/{product_id}``,
    ``product_index/{name}``."""

    authenticated: list[str] = Field(default_factory=list)
    users: dict[str, User] = Field(default_factory=dict)
    orders: dict[str, Order] = Field(default_factory=dict)
    products: dict[str, Product] = Field(default_factory=dict)
    product_index: dict[str, str] = Field(default_factory=dict)


# The ledger type of this domain (found by name: schemas/__init__.py loads schemas/<domain>.py).
LEDGER = RetailLedger
