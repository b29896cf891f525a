"""Does an agent message state an action? Its kind, and what the contract says it must convey.

The write contract (``tauguard/domains/<domain>/writes.toml``, ``confirmation.words`` and
``confirmation.conveys``) says which words name each action and which argument paths the user
must see. A statement conveys a value

- **by value**: the id, number, name or address as the user reads it ("#W5490111" or
  "W5490111", "3 bags", "basic economy", "Visa ending in 7285");
- **by unambiguous reference**: the target it refers to without its id is the only one of its
  kind in discussion ("your reservation", "the order we just looked at"), or an item is named
  by its product and options ("the blue, size M T-shirt") as a tool result showed them;
- **as unchanged**: a value the target already has, as read (the return flight of a
  reservation whose outbound changes, the cabin when only the flights change) need not be
  repeated: the statement conveys the change.

A summary of several actions conveys each one it lists. This module imports neither tau2
nor litellm.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from tauguard.conversation import ToolCallView
from tauguard.dialogue.polarity import _fold
from tauguard.dialogue.view import DialogueView
from tauguard.domains.contract import Confirmation

# A payment method id as τ² writes it: its kind then a number (credit_card_9659780).
_METHOD_ID = re.compile(r"^([a-z]+(?:_[a-z]+)*)_(\d{4,})$")
_CARD_BRANDS = ("visa", "mastercard", "amex", "american express", "discover", "card")
_ENTITY_ID = re.compile(r"^#?[A-Z0-9]{5,}$")


def values_at(value: Any, path: list[str]) -> list[Any]:
    """The values under an argument path (``flights.*.flight_number``)."""
    if not path:
        return [value]
    head, rest = path[0], path[1:]
    if head == "*":
        items = value if isinstance(value, list) else []
        return [v for item in items for v in values_at(item, rest)]
    if isinstance(value, dict) and head in value:
        return values_at(value[head], rest)
    return []


def walk_dicts(value: Any) -> Iterator[dict[str, Any]]:
    """Every dict in a parsed JSON value, depth first (tool results nest their records)."""
    if isinstance(value, dict):
        yield value
        for child in value.values():
            yield from walk_dicts(child)
    elif isinstance(value, list):
        for child in value:
            yield from walk_dicts(child)


def norm(text: str) -> str:
    """Folded text with runs of whitespace collapsed."""
    return re.sub(r"\s+", " ", _fold(text))


def mentions_number(text: str, number: float) -> bool:
    """Whether ``text`` mentions ``number`` (thousands separators and $ allowed)."""
    for token in re.findall(r"\d+(?:\.\d+)?", norm(text).replace(",", "")):
        if float(token) == number:
            return True
    return False


def mentions_value(text: str, value: str, known_methods: Iterable[str] = ()) -> bool:
    """Whether ``text`` mentions ``value`` by value.

    Ids match without their '#' and with '_' read as a space; numbers match as numbers; a
    cabin's underscore reads as a space ("basic economy"; "economy" does not match inside
    it); a payment method id also matches its kind and last four digits ("credit card
    ending in 9780"), or its kind alone when no other known method is of that kind.
    """
    text_n = norm(text)
    if re.fullmatch(r"-?\d+(\.\d+)?", value.strip()):
        return mentions_number(text, float(value))
    needle = norm(value).lstrip("#").replace("_", " ").strip()
    if not needle:
        return False
    if needle == "economy":
        return bool(re.search(r"(?<!basic )\beconomy\b", text_n))
    if re.search(r"(?<![a-z0-9])" + re.escape(needle) + r"(?![a-z0-9])", text_n):
        return True
    method = _METHOD_ID.match(value.strip().lower())
    if method is None:
        return False
    kind, digits = method.group(1).replace("_", " "), method.group(2)
    kinds = [kind] + (list(_CARD_BRANDS) if kind == "credit card" else [])
    if not any(k in text_n for k in kinds):
        return False
    if kind == "paypal" or digits[-4:] in text_n:
        return True
    if re.search(r"(?:ending(?: in)?|last (?:four|4)(?: digits)?|x{2,}|\*+)\s*\d{4}\b", text_n):
        return False  # it names another card's last digits
    same_kind = [m for m in known_methods if m != value and m.startswith(method.group(1) + "_")]
    return not same_kind


@dataclass(frozen=True)
class Facts:
    """What tool results showed, as the statement check needs it."""

    records: dict[str, dict[str, Any]]  # entity id (reservation, order, user) -> latest record
    items: dict[str, dict[str, Any]]  # item id -> {"name": ..., "options": {...}}
    methods: list[str]  # payment method ids seen
    ids: frozenset[str]  # reservation and order ids seen in results (upper case, no '#')


def facts_of(view: DialogueView) -> Facts:
    """Entity records, item descriptions and payment methods from the view's successful results."""
    records: dict[str, dict[str, Any]] = {}
    items: dict[str, dict[str, Any]] = {}
    methods: set[str] = set()
    ids: set[str] = set()
    for result in view.results:
        if result.error:
            continue
        for record in walk_dicts(result.data):
            for key in ("reservation_id", "order_id", "user_id"):
                value = record.get(key)
                if isinstance(value, str) and (key != "user_id" or "payment_methods" in record or len(record) > 3):
                    records.setdefault(value, {}).update(record)
                    break
            item_id = record.get("item_id")
            if isinstance(item_id, str) and isinstance(record.get("options"), dict):
                items[item_id] = {"name": record.get("name"), "options": record["options"]}
            for key in ("reservation_id", "order_id"):
                if isinstance(record.get(key), str):
                    ids.add(_id(record[key]))
            for key in ("reservations", "orders"):
                if isinstance(record.get(key), list):
                    ids.update(_id(v) for v in record[key] if isinstance(v, str))
            pm = record.get("payment_methods")
            if isinstance(pm, dict):
                methods.update(str(k) for k in pm)
            elif isinstance(pm, list):
                methods.update(str(p.get("id")) for p in pm if isinstance(p, dict) and p.get("id"))
        if isinstance(result.data, dict) and isinstance(result.data.get("variants"), dict):
            name = result.data.get("name")
            for item_id, variant in result.data["variants"].items():
                if isinstance(variant, dict) and isinstance(variant.get("options"), dict):
                    items[str(item_id)] = {"name": name, "options": variant["options"]}
    for _, call in view.calls:
        for key in ("reservation_id", "order_id"):
            if isinstance(call.arguments.get(key), str):
                ids.add(_id(call.arguments[key]))
    return Facts(records, items, sorted(methods), frozenset(ids))


def _id(value: str) -> str:
    return value.strip().lstrip("#").upper()


def names_action(text: str, call: ToolCallView, rule: Confirmation) -> bool:
    """Whether ``text`` names the kind of action: the tool's name or one of the contract's words."""
    text_n = norm(text)
    words = [call.name.replace("_", " "), *rule.words]
    # the contract's words are prefixes; a final "e" drops before a suffix ("upgrade" -> "upgrading")
    stems = [w.lower()[:-1] if w.lower().endswith("e") and len(w) > 4 else w.lower() for w in words]
    return call.name in text or any(re.search(r"\b" + re.escape(w), text_n) for w in stems)


def _mentioned_ids(text: str, known: frozenset[str]) -> list[str]:
    """The known entity ids a text mentions, in the order it mentions them."""
    found = [(m.start(), _id(m.group(0))) for m in re.finditer(r"#?\b[A-Za-z0-9]{5,}\b", text)]
    return [i for _, i in sorted(found) if i in known]


def _refers_to(target: str, statement: str, context: list[str], known: frozenset[str]) -> bool:
    """Whether the target id is the one in discussion: the statement names no known id, and
    the last known id said before it (or in the reply) is the target."""
    if _mentioned_ids(statement, known):
        return False  # it names ids, and not this one (by-value matching failed)
    said = [i for text in context for i in _mentioned_ids(text, known)]
    return bool(said) and said[-1] == _id(target)


def _item_described(text: str, item: dict[str, Any]) -> bool:
    options = [str(v) for v in (item.get("options") or {}).values() if isinstance(v, (str, int, float))]
    if not options:
        return False
    text_n = norm(text)
    found = sum(1 for o in options if norm(o) in text_n)
    return found == len(options) or (found >= 2 and found >= len(options) - 1)


def _unchanged(path: str, value: Any, call: ToolCallView, facts: Facts) -> bool:
    """Whether ``value`` is what the write's target already has (so the statement need not say it)."""
    target = call.arguments.get("reservation_id") or call.arguments.get("order_id")
    record = facts.records.get(str(target)) if target is not None else None
    if record is None:
        return False
    head = path.split(".")[0]
    if head == "flights":
        current = [f.get("flight_number") for f in record.get("flights") or [] if isinstance(f, dict)]
        return value in current
    if head == "cabin":
        return record.get("cabin") == value
    if head == "passengers":
        current = [p.get(path.split(".")[-1]) for p in record.get("passengers") or [] if isinstance(p, dict)]
        return value in current
    return False


_OLD_OR_OTHER_STEP = re.compile(r"\b(from|current(?:ly)?|original|old|previous|was|were|instead of|replac\w*|step \d|then)\b", re.IGNORECASE)


def _alternatives(statement: str, call: ToolCallView, facts: Facts) -> bool:
    """Whether ``statement`` names flights that are neither the call's nor already some
    reservation's (a menu, "HAT175 or HAT266?", or another change): it does not state this one."""
    flights = {str(v).upper() for v in values_at(call.arguments, ["flights", "*", "flight_number"])}
    if not flights:
        return False
    # flights some reservation already has may be named as they are (a summary of several)
    current = {str(f.get("flight_number")).upper() for r in facts.records.values()
               for f in r.get("flights") or [] if isinstance(f, dict)}
    ignore = facts.ids | {_id(str(v)) for v in call.arguments.values() if isinstance(v, str)}
    for line in statement.splitlines():
        # a reservation id can look like a flight number (BOH180): only other flights count
        others = {m.upper() for m in re.findall(r"\b[A-Za-z]{3}\d{3}\b", line)} - ignore - flights - current
        if others and not _OLD_OR_OTHER_STEP.search(line):
            return True  # the line of the itinerary being replaced, or of another step, is no alternative
    return False


_FLIGHT = re.compile(r"\b[A-Za-z]{3}\d{3}\b")
# A line of a list or a table: an option among others, not the one the agent singles out.
_LISTED = re.compile(r"^\s*(?:[-*\u2022|]|\d+[.)]|[A-Za-z][.)]\s|option \w+\s*[:\u2014-])", re.IGNORECASE)


def _singled_out(statement: str, reply: str | None, call: ToolCallView) -> bool:
    """Whether, among the options a statement lists, the call's flights are the ones put to the user.

    Either the agent singles them out in a sentence outside its list or table ("The cheapest
    option is HAT110 + HAT172"), or the user's reply chooses them by value from the options
    listed ("Yes, the Philadelphia option (HAT110 + HAT172)"), naming no other flight.
    """
    flights = {str(v).upper() for v in values_at(call.arguments, ["flights", "*", "flight_number"])}
    if not flights:
        return False
    for line in statement.replace("**", "").splitlines():
        if _LISTED.match(line):
            continue
        for sentence in re.split(r"(?<=[.!?])\s+", line):
            named = {m.upper() for m in _FLIGHT.findall(sentence)}
            if flights <= named and not named - flights:
                return True
    if reply:
        named = {m.upper() for m in _FLIGHT.findall(reply)}
        return flights <= named and not named - flights
    return False


def _renamed(call: ToolCallView, facts: Facts) -> bool:
    """Whether the call changes passengers of a reservation that was read (a name change)."""
    return str(call.arguments.get("reservation_id")) in facts.records


def _unchanged_passenger(passenger: dict[str, Any], call: ToolCallView, facts: Facts) -> bool:
    record = facts.records.get(str(call.arguments.get("reservation_id")))
    current = [(p.get("first_name"), p.get("last_name")) for p in (record or {}).get("passengers") or [] if isinstance(p, dict)]
    return (passenger.get("first_name"), passenger.get("last_name")) in current


def _full_name(text: str, first: str, last: str) -> bool:
    """Whether ``text`` names ``first`` then ``last`` close together (a name, or one record's fields)."""
    pattern = r"\b" + re.escape(norm(first)) + r"\b.{0,30}?\b" + re.escape(norm(last)) + r"\b"
    return re.search(pattern, norm(text)) is not None


def _passenger_conveyed(statement: str, passenger: dict[str, Any], facts: Facts, renamed: bool = False) -> bool:
    """A passenger is conveyed by their first name (a new name in full, when a reservation's
    passenger is renamed), or as the user ("you", "just me")."""
    # the first name identifies a passenger (a shared family name does not)
    name, last = passenger.get("first_name"), passenger.get("last_name")
    if isinstance(name, str) and name and mentions_value(statement, name):
        # a new name is conveyed whole ("Mei Garcia", or a record's first and last name fields),
        # not "Mei" here and "Garcia" of another passenger
        if not renamed or (isinstance(last, str) and _full_name(statement, name, last)):
            return True
    first, last = passenger.get("first_name"), passenger.get("last_name")
    if not re.search(r"\b(you|yourself|your own|just me|myself)\b", norm(statement)):
        return False
    for record in facts.records.values():
        name = record.get("name")
        if isinstance(name, dict) and name.get("first_name") == first and name.get("last_name") == last:
            return True  # the user travels: "you" needs no name
    return False


def missing(statement: str, call: ToolCallView, rule: Confirmation, view: DialogueView,
            context: list[str] | None = None, facts: Facts | None = None, earlier: list[str] | None = None,
            reply: str | None = None) -> list[str]:
    """The ``conveys`` paths whose values ``statement`` does not convey (empty: it states them all).

    ``context``: earlier texts of the conversation, in order, for references ("your reservation");
    ``earlier``: the agent's earlier turns of the same exchange (a summary before a payment
    question), which convey details but not a target the statement itself does not name;
    ``reply``: the user's answer, which may choose one of the options the statement lists.
    """
    facts = facts or facts_of(view)
    context = context or []
    before = "\n".join(earlier or [])
    lacking: list[str] = []
    if _alternatives(statement, call, facts) and not _singled_out(statement, reply, call):
        return ["flights.*.flight_number"]
    if any(p.startswith("passengers.") for p in rule.conveys):
        passengers = [p for p in call.arguments.get("passengers") or [] if isinstance(p, dict)]
        if not all(_unchanged_passenger(p, call, facts) or _passenger_conveyed(statement, p, facts, renamed=_renamed(call, facts))
                   or _passenger_conveyed(before, p, facts, renamed=_renamed(call, facts)) for p in passengers):
            lacking.append("passengers")
    for path in rule.conveys:
        if path.startswith("passengers."):
            continue
        for value in values_at(call.arguments, path.split(".")):
            if value is None or isinstance(value, bool) or value == "":
                continue
            text = str(value)
            if mentions_value(statement, text, facts.methods):
                continue
            if path in ("reservation_id", "order_id"):
                if _refers_to(text, statement, context, facts.ids):
                    continue
                if not _mentioned_ids(statement, facts.ids) and mentions_value(before, text):
                    continue
                lacking.append(path)
                break
            if before and mentions_value(before, text, facts.methods):
                continue
            if path.endswith("item_ids.*") and text in facts.items and (
                _item_described(statement, facts.items[text]) or _item_described(before, facts.items[text])
            ):
                continue
            if _unchanged(path, value, call, facts):
                continue
            if path == "total_baggages" and isinstance(value, int):
                record = facts.records.get(str(call.arguments.get("reservation_id")))
                was = record.get("total_baggages") if record else None
                if isinstance(was, int) and mentions_number(statement + "\n" + before, float(value - was)):
                    continue
            lacking.append(path)
            break
    return lacking


def states(statement: str, call: ToolCallView, rule: Confirmation, view: DialogueView,
           context: list[str] | None = None, facts: Facts | None = None, earlier: list[str] | None = None,
           reply: str | None = None) -> bool:
    """Whether ``statement`` (with ``earlier`` turns of the exchange) conveys what the contract lists for ``call``."""
    return not missing(statement, call, rule, view, context, facts, earlier, reply)
