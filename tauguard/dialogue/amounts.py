"""Amounts said in a conversation: what an agent stated and a user agreed to pay, refund or receive.

A write moves amounts (a certificate's ``amount``, a refuel's ``gb_amount``, the shares of a payment
split over several methods in ``payment_methods``). What the user agreed to is what the reply says
when it names an amount for the write (an agreeing reply that puts another figure on it agrees to
that figure), else what the statement says. Amounts are read by clause and attached to the payment
method kind named in the same clause ("$500 certificate, $198 gift card, $44 Mastercard").

:func:`agreed_amounts` is the public reading (other checks, e.g. a guard comparing a charge with what
was agreed, may call it); :func:`amount_mismatch` is the judge's rule ``amount_mismatch``.

This module imports neither tau2 nor litellm.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from tauguard.dialogue.cues import cue
from tauguard.dialogue.text import fold
from tauguard.strategy_api.conversation import ToolCallView

Unit = Literal["usd", "gb"]

# A clause: amounts and the method they are paid with stand in one ("$100 on the gift card and the rest on Visa").
_CLAUSE = re.compile(r"[,;\n]|\s(?:and|then|plus|\+)\s|\u2014|(?<=[.!?])\s")
_USD = re.compile(r"\$\s?(\d[\d,]*(?:\.\d+)?)|\b(\d[\d,]*(?:\.\d+)?)\s?(?:usd|dollars?)\b")
_GB = re.compile(r"\b(\d+(?:\.\d+)?)\s?(?:gb|gigabytes?)\b")
_KINDS = {"credit_card": r"(?<!gift )\bcard\b|credit|visa|mastercard|master card|amex|american express|discover",
          "gift_card": r"gift ?card", "certificate": r"certificate|voucher", "paypal": r"paypal"}
# A figure that is a balance, a price, a fare or a total is a fact about the method or the trip, not a
# share agreed: said so just before it ("a balance of $129", "the gift card with $203", "total $371") or
# just after it ("$719 total", "$203 left"), or in a clause that pays "the rest" (its figure is no share).
_NOT_A_SHARE = cue("not_a_share_before")
_NOT_A_SHARE_AFTER = cue("not_a_share_after")
_THE_REST = cue("the_rest")


@dataclass(frozen=True)
class StatedAmount:
    """One amount said in a text: its value, unit, the payment method kind nearest to it in its clause
    (if any), and whether it reads as a share paid (not a balance, price, fare or total)."""

    value: float
    unit: Unit
    kind: str | None
    share: bool
    clause: str


def stated_amounts(text: str) -> list[StatedAmount]:
    """Every amount in ``text`` (dollars and gigabytes), clause by clause, with the method kind nearest to it."""
    found: list[StatedAmount] = []
    for clause in _CLAUSE.split(fold(text)):
        kinds = [(m.start(), m.end(), k) for k, words in _KINDS.items() for m in re.finditer(words, clause)]
        previous_end = 0
        for m in _USD.finditer(clause):
            near = min(kinds, key=lambda k: min(abs(k[0] - m.end()), abs(m.start() - k[1])), default=None)
            # the words next to the figure say what it is ("balance of $129", "a total of $371", "$719 total")
            before = clause[max(previous_end, m.start() - 25): m.start()]
            share = not (_NOT_A_SHARE.search(before) or _NOT_A_SHARE_AFTER.search(clause[m.end():]) or _THE_REST.search(clause))
            found.append(StatedAmount(float((m.group(1) or m.group(2)).replace(",", "")), "usd", near[2] if near else None,
                                      share, clause.strip()))
            previous_end = m.end()
        for m in _GB.finditer(clause):
            found.append(StatedAmount(float(m.group(1)), "gb", None, True, clause.strip()))
    return found


def agreed_amounts(statement: str, reply: str | None = None) -> list[StatedAmount]:
    """What the user agreed to: the amounts of the reply when it names any, else the statement's."""
    said = stated_amounts(reply) if reply else []
    return said or stated_amounts(statement)


def _method_kind(method_id: str) -> str:
    return re.sub(r"_\d+$", "", method_id)


def amount_mismatch(reply: str, call: ToolCallView) -> str | None:
    """Why the amounts the reply agrees to differ from what ``call`` moves (None: they do not differ).

    Compared: a certificate's ``amount`` with the dollar figures the reply puts on a certificate; a
    refuel's ``gb_amount`` with the reply's gigabytes; each share of a split payment with the dollar
    figure the reply puts on that method's kind (a balance, price or fare is no share). A reply that
    names no such figure agrees to what the statement said (the statement check compares those).
    """
    said = stated_amounts(reply)
    if not said:
        return None
    args = call.arguments
    gb = args.get("gb_amount")
    if isinstance(gb, (int, float)) and not isinstance(gb, bool):
        figures = [a.value for a in said if a.unit == "gb"]
        if figures and float(gb) not in figures:
            return f"the reply agrees to {_show(figures[0], 'gb')}, the write moves {_show(float(gb), 'gb')}"
    amount = args.get("amount")
    if isinstance(amount, (int, float)) and not isinstance(amount, bool) and "payment_methods" not in args:
        figures = [a.value for a in said if a.unit == "usd" and a.kind == "certificate" and a.share]
        if figures and float(amount) not in figures:
            return f"the reply agrees to {_show(figures[0], 'usd')}, the write moves {_show(float(amount), 'usd')}"
    shares: dict[str, list[float]] = {}
    for method in args.get("payment_methods") or []:
        if isinstance(method, dict) and isinstance(method.get("amount"), (int, float)) and isinstance(method.get("payment_id"), str):
            shares.setdefault(_method_kind(method["payment_id"]), []).append(abs(float(method["amount"])))
    if len(args.get("payment_methods") or []) >= 2:
        for a in said:
            if a.unit == "usd" and a.kind in shares and a.value not in shares[a.kind] and a.share:
                kind = a.kind.replace("_", " ")
                return f"the reply puts {_show(a.value, 'usd')} on the {kind}, the write {', '.join(_show(v, 'usd') for v in shares[a.kind])}"
    return None


def _show(value: float, unit: Unit) -> str:
    number = f"{value:,.2f}".removesuffix(".00")
    return f"${number}" if unit == "usd" else f"{number} GB"
