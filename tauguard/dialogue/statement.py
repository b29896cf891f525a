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
from dataclasses import dataclass, field
from typing import Any

from tauguard.strategy_api.conversation import ToolCallView
from tauguard.dialogue.text import fold
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
    return re.sub(r"\s+", " ", fold(text))


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
    # payment method id -> what the user knows it by: source, brand, last four digits, amount
    method_info: dict[str, dict[str, Any]] = field(default_factory=dict)


def facts_of(view: DialogueView) -> Facts:
    """Entity records, item descriptions and payment methods from the view's successful results."""
    records: dict[str, dict[str, Any]] = {}
    items: dict[str, dict[str, Any]] = {}
    methods: set[str] = set()
    info: dict[str, dict[str, Any]] = {}
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
                    ids.add(entity_id(record[key]))
            for key in ("reservations", "orders"):
                if isinstance(record.get(key), list):
                    ids.update(entity_id(v) for v in record[key] if isinstance(v, str))
            pm = record.get("payment_methods")
            if isinstance(pm, dict):
                methods.update(str(k) for k in pm)
                info.update({str(k): v for k, v in pm.items() if isinstance(v, dict)})
            elif isinstance(pm, list):
                methods.update(str(p.get("id")) for p in pm if isinstance(p, dict) and p.get("id"))
                info.update({str(p["id"]): p for p in pm if isinstance(p, dict) and p.get("id")})
        if isinstance(result.data, dict) and isinstance(result.data.get("variants"), dict):
            name = result.data.get("name")
            for item_id, variant in result.data["variants"].items():
                if isinstance(variant, dict) and isinstance(variant.get("options"), dict):
                    items[str(item_id)] = {"name": name, "options": variant["options"]}
    for _, call in view.calls:
        for key in ("reservation_id", "order_id"):
            if isinstance(call.arguments.get(key), str):
                ids.add(entity_id(call.arguments[key]))
    return Facts(records, items, sorted(methods), frozenset(ids), info)


def entity_id(value: str) -> str:
    return value.strip().lstrip("#").upper()


def names_action(text: str, call: ToolCallView, rule: Confirmation) -> bool:
    """Whether ``text`` names the kind of action: the tool's name or one of the contract's words."""
    text_n = norm(text)
    words = [call.name.replace("_", " "), *rule.words]
    # the contract's words are prefixes; a final "e" drops before a suffix ("upgrade" -> "upgrading")
    stems = [w.lower()[:-1] if w.lower().endswith("e") and len(w) > 4 else w.lower() for w in words]
    return call.name in text or any(re.search(r"\b" + re.escape(w), text_n) for w in stems)


def mentioned_ids(text: str, known: frozenset[str]) -> list[str]:
    """The known entity ids a text mentions, in the order it mentions them."""
    found = [(m.start(), entity_id(m.group(0))) for m in re.finditer(r"#?\b[A-Za-z0-9]{5,}\b", text)]
    return [i for _, i in sorted(found) if i in known]


def _refers_to(target: str, statement: str, context: list[str], known: frozenset[str]) -> bool:
    """Whether the target id is the one in discussion: the statement names no known id, and
    the last known id said before it (or in the reply) is the target."""
    if mentioned_ids(statement, known):
        return False  # it names ids, and not this one (by-value matching failed)
    said = [i for text in context for i in mentioned_ids(text, known)]
    return bool(said) and said[-1] == entity_id(target)


# A reference to a set of targets listed before: "all 5 downgrades", "both reservations", "each order".
_QUANTIFIED = re.compile(r"\b(?:all(?: of)?(?: the| these| those| your)?(?: (\d+|two|three|four|five|six|seven|eight|nine|ten))?|both|each(?: of)?|every one of)\b"
                         r"(?=\s+(?:\w+\s+){0,3}?(?:reservations?|orders?|bookings?|downgrades?|upgrades?|changes?|cancellations?|of them|them)\b|\s*(?:$|[.,!?]))")
_NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}


def _in_listed_set(target: str, texts: list[str], context: list[str], known: frozenset[str]) -> bool:
    """Whether one of ``texts`` refers to a set of targets ("all 5 reservations", "both") that the
    agent listed in the conversation before, the target among them (as many as the number says)."""
    for text in texts:
        match = _QUANTIFIED.search(norm(text))
        if match is None:
            continue
        word = match.group(1)
        count = 2 if match.group(0).startswith("both") else (int(word) if word and word.isdigit() else _NUMBERS.get(word or "", 0))
        for listing in reversed(context):
            ids = set(mentioned_ids(listing, known))
            if entity_id(target) in ids:
                return len(ids) >= max(count, 2)
    return False


def _item_described(text: str, item: dict[str, Any]) -> bool:
    options = [str(v) for v in (item.get("options") or {}).values() if isinstance(v, (str, int, float))]
    if not options:
        return False
    text_n = norm(text)
    found = sum(1 for o in options if norm(o) in text_n)
    return found == len(options) or (found >= 2 and found >= len(options) - 1)


def _other_item_chosen(reply: str | None, call: ToolCallView, facts: Facts) -> bool:
    """Whether the reply names by id a known item the call does not use ("use item 3778566150"):
    the user chose that one, so a description that fits the call's item does not convey it."""
    if not reply:
        return False
    used = {str(v) for key in ("item_ids", "new_item_ids") for v in call.arguments.get(key) or []}
    return any(i not in used and re.search(r"(?<!\d)" + re.escape(i) + r"(?!\d)", reply) for i in facts.items)


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
        same: bool = record.get("cabin") == value  # JSON values: == is a bool
        return same
    if head == "passengers":
        current = [p.get(path.split(".")[-1]) for p in record.get("passengers") or [] if isinstance(p, dict)]
        return value in current
    return False


_OLD_OR_OTHER_STEP = re.compile(r"\b(from|current(?:ly)?|original|old|previous|was|were|instead of|replac\w*|step \d|then)\b", re.IGNORECASE)
# A contrastive reference to the option not put forward ("if you'd like the other flight option (HAT218 +
# HAT039) instead, let me know"): the agent singles out the one it states by setting the rest apart.
_THE_OTHER_OPTION = re.compile(r"\bthe other (?:\w+ )?(?:option|itinerary|alternative|choice)\b", re.IGNORECASE)


def _alternatives(statement: str, call: ToolCallView, facts: Facts) -> bool:
    """Whether ``statement`` names flights that are neither the call's nor already some
    reservation's (a menu, "HAT175 or HAT266?", or another change): it does not state this one."""
    flights = {str(v).upper() for v in values_at(call.arguments, ["flights", "*", "flight_number"])}
    if not flights:
        return False
    # flights some reservation already has may be named as they are (a summary of several)
    current = {str(f.get("flight_number")).upper() for r in facts.records.values()
               for f in r.get("flights") or [] if isinstance(f, dict)}
    ignore = facts.ids | {entity_id(str(v)) for v in call.arguments.values() if isinstance(v, str)}
    target = facts.records.get(str(call.arguments.get("reservation_id")))
    kept = target is not None and flights <= {str(f.get("flight_number")).upper() for f in target.get("flights") or [] if isinstance(f, dict)}
    for line in _own_step(statement, flights, kept):
        # a reservation id can look like a flight number (BOH180): only other flights count
        others = {m.upper() for m in re.findall(r"\b[A-Za-z]{3}\d{3}\b", line)} - ignore - flights - current
        if others and not _OLD_OR_OTHER_STEP.search(line) and not _THE_OTHER_OPTION.search(line):
            return True  # the line of the itinerary being replaced, or of another step, is no alternative
    return False


_FLIGHT = re.compile(r"\b[A-Za-z]{3}\d{3}\b")
_STEP = re.compile(r"^\W*step \d+\b", re.IGNORECASE)


def _own_step(statement: str, flights: set[str], kept: bool = False) -> list[str]:
    """The lines of ``statement`` that can offer alternatives to this write's flights.

    A plan in steps ("Step 1 - upgrade the cabin (same flights HAT202, HAT232)", "Step 2 - change
    to HAT041") is a sequence, not a menu: when one step names all of the write's flights, the
    other steps' flights belong to other writes; when the write keeps its reservation's flights
    (``kept``: a cabin change) and no step names them, the steps that name flights are the others.
    Without steps, every line counts.
    """
    lines = statement.replace("**", "").splitlines()
    steps: list[list[str]] = [[]]
    for line in lines:
        if _STEP.match(line):
            steps.append([])
        steps[-1].append(line)
    if len(steps) < 3:  # fewer than two steps: no plan in steps
        return lines
    named = [{m.upper() for line in s for m in _FLIGHT.findall(line)} for s in steps[1:]]
    own = [s for s, n in zip(steps[1:], named) if flights <= n]
    if not own and kept:
        return steps[0] + [line for s, n in zip(steps[1:], named) if not n for line in s]
    return steps[0] + [line for s in own for line in s] if len(own) == 1 else lines
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


def payment_ids(call: ToolCallView) -> list[str]:
    """The payment method ids a write charges or refunds (``payment_id``, ``payment_method_id``, ``payment_methods``)."""
    found = [str(call.arguments[k]) for k in ("payment_id", "payment_method_id") if isinstance(call.arguments.get(k), str)]
    return found + [str(v) for v in values_at(call.arguments, ["payment_methods", "*", "payment_id"]) if isinstance(v, str)]


# How users hear each kind of payment method (a bare "card" is a credit card, "gift card" is not).
_KIND_WORDS = {"credit_card": r"(?<!gift )\bcard\b|credit|visa|mastercard|master card|amex|american express|discover",
               "gift_card": r"gift ?card", "certificate": r"certificate|voucher", "paypal": r"paypal"}


def _kinds(text: str) -> set[str]:
    """The kinds of payment method a text names (credit card, gift card, certificate, PayPal)."""
    text_n = norm(text).replace("_", " ")
    return {kind for kind, words in _KIND_WORDS.items() if re.search(words, text_n)}


def method_kind(method: str, facts: Facts) -> str:
    return str(facts.method_info.get(method, {}).get("source") or re.sub(r"_\d+$", "", method))


def _payment_contradicted(statement: str, call: ToolCallView, facts: Facts, earlier: list[str], reply: str | None) -> bool:
    """Whether the statement gives this write another kind of payment than the call's.

    Compared by kind (a card, a gift card, a certificate, PayPal), which is what a user hears
    even where "the gift card" or "Visa" leaves the exact method open. When the statement lists
    several targets, its last line naming only this write's target and a payment says how it is
    paid ("NM1VX1: gift_card_5094406 ($274) + Visa ($210)"); the call must pay with those kinds,
    unless the agreeing reply names the call's. Otherwise every kind the call uses must have been
    named, if any kind was: in the statement or the reply when the statement names a payment
    (what the user agrees to is the statement's payment: a certificate alone, not a certificate
    and a card), else in the exchange before it.
    """
    said = [*earlier, *([reply] if reply else [])]
    used = {method_kind(m, facts) for m in payment_ids(call)}
    if not used:
        return False
    target = call.arguments.get("reservation_id") or call.arguments.get("order_id")
    lines = statement.splitlines()
    listed = {i for line in lines for i in mentioned_ids(line, facts.ids)}
    if isinstance(target, str) and len(listed) >= 2:
        # read by sentence: a line may go on to another order ("(No items are slated for return
        # from your PayPal order.)"), and that sentence says nothing of how this one is paid
        units = [u for line in lines for u in _SENTENCE_END.split(line)]
        own = [u for u in units if mentions_value(u, target) and set(mentioned_ids(u, facts.ids)) <= {entity_id(target)}
               and _kinds(u)]
        if own and _kinds(own[-1]) != used and not (said and used <= _kinds(said[-1])):
            return True
    own_block = _booking_block(statement, call)
    if own_block is not None and _kinds(_paying_lines(own_block)) != used and not (said and used <= _kinds(said[-1])):
        return True
    stated = _kinds(statement)
    if stated:
        return not used <= stated | (_kinds(reply) if reply else set())
    named = set().union(*(_kinds(t) for t in said))
    return bool(named) and not used <= named


# The end of a sentence inside a line: a full stop (or ! ?), a closing bracket or quote maybe, then space.
_SENTENCE_END = re.compile(r"(?<=[.!?])[)\]\"']?\s+(?=[(\[A-Z])")


def _booking_block(statement: str, call: ToolCallView) -> str | None:
    """The paragraph of a plan of several bookings that is this booking's: its first line names
    every passenger of the call ("Booking 2 — Raj ($871):"); its lines say how this booking is paid.
    None when the statement is not such a plan (fewer than two paragraphs that name a payment)."""
    names = [str(p.get("first_name")) for p in call.arguments.get("passengers") or [] if isinstance(p, dict) and p.get("first_name")]
    if not names:
        return None
    blocks = [b.strip() for b in re.split(r"\n\s*\n", statement.replace("**", "")) if b.strip()]
    if sum(1 for b in blocks if _kinds(b)) < 2:
        return None
    own = [b for b in blocks if _kinds(b) and all(mentions_value(b.splitlines()[0], n) for n in names)]
    return own[-1] if own else None


def _paying_lines(block: str) -> str:
    """The lines of a payment breakdown that pay something: "Mastercard: $0" names a method left unused."""
    return "\n".join(line for line in block.splitlines()
                     if not re.search(r"\$\s*0(?:\.0+)?(?![\d.,])[^$]*$", line.replace("*", "")))


def _split_unstated(call: ToolCallView, texts: list[str], reply: str | None, facts: Facts) -> bool:
    """Whether the call splits its payment over several methods and some share is not said.

    A split ("$500 certificate, $198 gift card, $44 Mastercard") is what the user agrees to:
    the same methods with other shares are another payment. The last share may go unsaid when
    the user's reply orders every method of the call, by value, as the call uses them ("use
    gift_card_7359776 first, then gift_card_7773485 for the rest"): the last one takes the rest.
    """
    shares = payment_shares(call)
    if len(shares) < 2:
        return False
    said = "\n".join(texts)
    # a negative share is a refund to that method, said as a positive sum ("a $15 refund to your card")
    unsaid = [k for k, a in enumerate(shares) if a is None or not mentions_number(said, abs(a))]
    if not unsaid:
        return False
    return unsaid != [len(shares) - 1] or not _ordered_by_user(reply or "", payment_ids(call), facts)


def _ordered_by_user(reply: str, methods: list[str], facts: Facts) -> bool:
    """Whether ``reply`` names each payment method by value, in the order given."""
    at = [first_mention(reply, m, facts) for m in methods]
    return all(a is not None for a in at) and at == sorted(at)  # type: ignore[type-var]


def first_mention(text: str, method: str, facts: Facts) -> int | None:
    """Where ``text`` first names ``method`` by value (its id, or its last four digits), if it does."""
    info = facts.method_info.get(method, {})
    needles = [method, *([str(info["last_four"])] if info.get("last_four") else [])]
    found = [m.start() for n in needles for m in re.finditer(r"(?<![A-Za-z0-9])" + re.escape(n) + r"(?![A-Za-z0-9])", text)]
    return min(found) if found else None


def payment_shares(call: ToolCallView) -> list[float | None]:
    """The amounts a write charges each of its ``payment_methods`` (None where not a number)."""
    shares = [m.get("amount") for m in call.arguments.get("payment_methods") or [] if isinstance(m, dict)]
    return [float(a) if isinstance(a, (int, float)) and not isinstance(a, bool) else None for a in shares]


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


def _rename_stated(text: str, passenger: dict[str, Any], call: ToolCallView, facts: Facts) -> bool:
    """Whether ``text`` states a passenger's name change as old value to new value ("change the
    passenger's last name from Lee to Garcia"): the reservation's record has this passenger (same
    date of birth) under another name that differs in one part, the text names that part's old and
    new value in that order, and every passenger of the record with the old value is renamed
    alike, so the old value picks out whom the change is about."""
    record = facts.records.get(str(call.arguments.get("reservation_id"))) or {}
    current = [p for p in record.get("passengers") or [] if isinstance(p, dict)]
    was = [p for p in current if p.get("dob") == passenger.get("dob") and p.get("dob")]
    if len(was) != 1:
        return False
    renamed = [p for p in call.arguments.get("passengers") or [] if isinstance(p, dict)]
    for part in ("first_name", "last_name"):
        other = "last_name" if part == "first_name" else "first_name"
        old, new = was[0].get(part), passenger.get(part)
        if not (isinstance(old, str) and isinstance(new, str)) or old == new or was[0].get(other) != passenger.get(other):
            continue
        stated = re.search(r"\b" + re.escape(norm(old)) + r"\b\W{0,4}(?:to|->|\u2192)\W{0,4}" + re.escape(norm(new)) + r"\b", norm(text))
        alike = all(any(r.get("dob") == p.get("dob") and r.get(part) == new for r in renamed) for p in current if p.get(part) == old)
        return stated is not None and alike
    return False


_ADDRESS_FIELDS = ("address1", "address2", "city", "state", "country", "zip")


def _address_of_named_order(text: str, call: ToolCallView, facts: Facts) -> bool:
    """Whether ``text`` refers to the call's address by the order it is on ("the NYC address from order
    #W3407479", copied without reading it out): an order it names whose shipping address, as a tool
    result showed it, is the call's in every field the call sets. A reference by value, through the record."""
    wanted = {k: str(call.arguments[k]).strip().lower() for k in _ADDRESS_FIELDS if isinstance(call.arguments.get(k), str) and call.arguments[k]}
    if not {"address1", "zip"} <= set(wanted):
        return False
    target = entity_id(str(call.arguments.get("order_id") or ""))
    for order in mentioned_ids(text, facts.ids):
        if order == target:
            continue  # the order being changed: its address is the one being replaced
        record = facts.records.get(order) or facts.records.get("#" + order) or {}
        address = record.get("address")
        if isinstance(address, dict) and all(str(address.get(k, "")).strip().lower() == v for k, v in wanted.items()):
            return True
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
    if _payment_contradicted(statement, call, facts, earlier or [], reply):
        return ["payment"]  # not a path the user must see, but the statement must not say another
    if _split_unstated(call, [statement, reply or ""], reply, facts):
        return ["payment_methods.*.amount"]
    if any(p.startswith("passengers.") for p in rule.conveys):
        passengers = [p for p in call.arguments.get("passengers") or [] if isinstance(p, dict)]
        if not all(_unchanged_passenger(p, call, facts) or _passenger_conveyed(statement, p, facts, renamed=_renamed(call, facts))
                   or _passenger_conveyed(before, p, facts, renamed=_renamed(call, facts))
                   or _rename_stated(statement + "\n" + before, p, call, facts) for p in passengers):
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
            if text in facts.methods and first_mention(statement + "\n" + before, text, facts) is not None:
                continue  # a card named by the last four digits the user's record shows ("Visa ending 7285")
            if path in ("reservation_id", "order_id"):
                if _refers_to(text, statement, context, facts.ids):
                    continue
                if not mentioned_ids(statement, facts.ids) and mentions_value(before, text):
                    continue
                if _in_listed_set(text, [statement, *([reply] if reply else [])], [*(earlier or []), *context[:-1]] if reply else context, facts.ids):
                    continue
                lacking.append(path)
                break
            if before and mentions_value(before, text, facts.methods):
                continue
            if path.endswith("item_ids.*") and text in facts.items and not _other_item_chosen(reply, call, facts) and (
                _item_described(statement, facts.items[text]) or _item_described(before, facts.items[text])
            ):
                continue
            if _unchanged(path, value, call, facts):
                continue
            if path in _ADDRESS_FIELDS and _address_of_named_order(statement + "\n" + before, call, facts):
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
