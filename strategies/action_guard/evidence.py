"""What a conversation establishes, as the compiled checks read it.

Facts about entities (reservations, orders, users, bills, lines, flights) come only from
successful tool results the agent received; the dialogue is kept apart as text turns.
A user's claim never becomes an entity fact.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tauguard.dialogue.statement import walk_dicts
from tauguard.strategy_api.conversation import Conversation, ToolCallView
from tauguard.dialogue.view import DialogueView, view_of

# The key that identifies an entity in tau2's tool results, by priority: a retail order also
# carries ``user_id``, a bill ``customer_id``, an order item ``product_id``.
_ID_KEYS: tuple[tuple[str, str], ...] = (
    ("reservation_id", "reservation"),
    ("order_id", "order"),
    ("bill_id", "bill"),
    ("line_id", "line"),
    ("item_id", "item"),
    ("product_id", "product"),
    ("customer_id", "customer"),
    ("user_id", "user"),
    ("flight_number", "flight"),
)


@dataclass(frozen=True)
class Observation:
    """One successful tool result."""

    position: int  # index in the conversation
    call: ToolCallView
    content: str
    data: Any  # parsed JSON, or None for plain-text results


@dataclass(frozen=True)
class Turn:
    """One text turn."""

    position: int
    role: str  # "user" | "agent"
    text: str


def _parse(content: str) -> Any:
    try:
        return json.loads(content)
    except (ValueError, TypeError):
        return None


def _entity_key(record: dict[str, Any]) -> tuple[str, str] | None:
    for key, kind in _ID_KEYS:
        value = record.get(key)
        if isinstance(value, str) and value:
            return kind, value
    return None


@dataclass
class Evidence:
    """Facts and turns of a conversation prefix (everything before the gated call)."""

    observations: list[Observation] = field(default_factory=list)
    failed_calls: list[ToolCallView] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)
    # (kind, id) -> merged snapshot; later results override earlier fields.
    entities: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    # (flight_number, date) -> status, from get_flight_status and flight searches.
    flight_status: dict[tuple[str, str], str] = field(default_factory=dict)
    # The conversation as the dialogue judge reads it (tauguard.dialogue).
    view: DialogueView = field(default_factory=DialogueView)
    # The calls before the gated one in its agent message: issued, not yet executed
    # (tauguard.strategy_api.conversation.Conversation.gated_at). No entity fact comes from them.
    pending: list[ToolCallView] = field(default_factory=list)

    @classmethod
    def from_conversation(cls, conversation: Conversation) -> Evidence:
        """Collect observations, entity snapshots and text turns, in conversation order."""
        ev = cls(view=view_of(conversation), pending=conversation.pending_calls())
        for pos, event in enumerate(conversation.events):
            if event.kind == "user_message" and event.content:
                ev.turns.append(Turn(pos, "user", event.content))
            elif event.kind == "agent_message" and event.content:
                ev.turns.append(Turn(pos, "agent", event.content))
            elif event.kind == "tool_result" and event.tool_call is not None and event.requestor != "user":
                if event.error:
                    ev.failed_calls.append(event.tool_call)
                    continue
                ev._observe(Observation(pos, event.tool_call, event.content or "", _parse(event.content or "")))
        return ev

    def _observe(self, obs: Observation) -> None:
        self.observations.append(obs)
        call = obs.call
        if call.name == "get_flight_status":
            number, date = call.arguments.get("flight_number"), call.arguments.get("date")
            status = obs.data if isinstance(obs.data, str) else obs.content.strip().strip('"')
            if isinstance(number, str) and isinstance(date, str):
                self.flight_status[(number, date)] = status.lower()
        for record in walk_dicts(obs.data):
            key = _entity_key(record)
            if key is None:
                continue
            self.entities.setdefault(key, {}).update(record)
            if key[0] == "flight" and isinstance(record.get("status"), str):
                # Direct-flight search results carry no date: it is the search argument.
                date = record.get("date") or call.arguments.get("date")
                if isinstance(date, str):
                    self.flight_status[(key[1], date)] = record["status"].lower()

    # --- queries -------------------------------------------------------------------------

    def entity(self, kind: str, entity_id: Any) -> dict[str, Any] | None:
        """The latest snapshot of an entity, or None if no tool result showed it."""
        if not isinstance(entity_id, str):
            return None
        return self.entities.get((kind, entity_id))

    def snapshots(self, kind: str, entity_id: Any) -> list[dict[str, Any]]:
        """Every record of one entity the tool results showed, in order (a reservation before
        and after the agent's own change), where :meth:`entity` merges them into the latest."""
        out = []
        for obs in self.observations:
            for record in walk_dicts(obs.data):
                if _entity_key(record) == (kind, entity_id):
                    out.append(record)
        return out

    def entities_of(self, kind: str) -> list[dict[str, Any]]:
        """All snapshots of one kind."""
        return [v for (k, _), v in self.entities.items() if k == kind]

    def results_of(self, *tools: str) -> list[Observation]:
        """Successful results of the named tools, in order."""
        return [o for o in self.observations if o.call.name in tools]

    def done_or_pending(self, *tools: str) -> list[ToolCallView]:
        """Calls of the named tools that succeeded, then those issued earlier in the gated call's message."""
        return [o.call for o in self.results_of(*tools)] + [c for c in self.pending if c.name in tools]

    def user_texts(self) -> list[str]:
        """The user's text turns."""
        return [t.text for t in self.turns if t.role == "user"]

    def user_said(self, value: str) -> bool:
        """Whether any user turn contains ``value`` (case-insensitive)."""
        needle = value.lower()
        return any(needle in t.lower() for t in self.user_texts())

    def searched_flights(self) -> set[tuple[str, str]]:
        """(flight_number, date) pairs seen in flight search results."""
        pairs: set[tuple[str, str]] = set()
        for obs in self.results_of("search_direct_flight", "search_onestop_flight"):
            for record in walk_dicts(obs.data):
                number = record.get("flight_number")
                date = record.get("date") or obs.call.arguments.get("date")
                if isinstance(number, str) and isinstance(date, str):
                    pairs.add((number, date))
        return pairs
