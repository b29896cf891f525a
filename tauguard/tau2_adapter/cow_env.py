"""Copy-on-write τ² environments and a database comparison that skips untouched data.

A simulation touches a handful of the thousands of entries of an airline or retail
database, yet copying the pristine database for it cost 245–344 ms of CPU (most of it the
garbage collector walking the copied objects), and hashing it for the reward another
86–131 ms. Here each simulation gets a *view* of the one pristine database its process
holds:

- every top-level table (``flights``, ``users``, ``reservations``; ``products``, ``users``,
  ``orders``) is a :class:`CowTable`: a shallow ``dict`` of the pristine entries whose
  Python-level accessors (``[key]``, ``get``, ``pop``, ``values()``, ...) hand out a
  private deep copy of an entry the first time code reaches it, and remember the key;
- iterating a table inside a τ² READ tool (the airline flight search, the retail user
  look-ups) yields the stored entries without copying them: those tools only read;
- C-level readers (pydantic's ``model_dump``, ``json``, ``pickle``) see the stored mix of
  untouched pristine entries and private copies, which *is* the simulation's state, so
  τ²'s own ``get_db_hash`` stays correct on these environments.

:func:`db_state` then describes a database by the canonical JSON of the entries it touched
(τ²'s hash is ``sha256(json.dumps(model_dump(), sort_keys=True, default=str))``; two
databases have equal dumps exactly when their key sets and entries are equal, and entries
nobody touched are the same pristine object on both sides), and :func:`same_db` compares
two such states as τ²'s hash equality would. Databases that are not tables of entries
(telecom's lists, ~1 ms to copy and hash) keep the plain copy and τ²'s full hash.
"""

from __future__ import annotations

import hashlib
import json
import pickle
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Iterator

from pydantic import BaseModel, TypeAdapter

from tauguard.tau2_adapter import tau2_names as t2

_ABSENT: Any = object()


class _ReadGate:
    """Whether the toolkit is inside a READ tool (iteration then needs no copies)."""

    __slots__ = ("depth",)

    def __init__(self) -> None:
        self.depth = 0


class PristineTable:
    """One pristine table of a process: its entries, and pickles to copy them from."""

    def __init__(self, name: str, entries: dict[str, Any], adapter: TypeAdapter[Any]) -> None:
        self.name = name
        self.entries = entries
        self._adapter = adapter
        self._blobs: dict[str, bytes] = {}
        self._canonical: dict[str, str] = {}
        self.database: Pristine | None = None  # the database this table belongs to

    def copy_of(self, key: str) -> Any:
        """A private deep copy of the pristine entry ``key`` (unpickling is the cheapest)."""
        blob = self._blobs.get(key)
        if blob is None:
            blob = self._blobs[key] = pickle.dumps(self.entries[key], protocol=pickle.HIGHEST_PROTOCOL)
        return pickle.loads(blob)

    def canonical(self, key: str, value: Any) -> str:
        """The entry's JSON exactly as it appears inside τ²'s database hash string."""
        dumped = self._adapter.dump_python({key: value})[key]
        return json.dumps(dumped, sort_keys=True, default=str)

    def pristine_canonical(self, key: str) -> str | None:
        """Canonical JSON of the pristine entry (None when the key is not in the pristine table)."""
        if key not in self.entries:
            return None
        text = self._canonical.get(key)
        if text is None:
            text = self._canonical[key] = self.canonical(key, self.entries[key])
        return text


class CowTable(dict[Any, Any]):
    """A simulation's view of a pristine table; entries are copied when first reached."""

    __slots__ = ("origin", "touched", "_gate")

    def __init__(self, origin: PristineTable, gate: _ReadGate) -> None:
        dict.__init__(self, origin.entries)
        self.origin = origin
        self.touched: set[str] = set()  # keys whose stored value is private, set, or deleted
        self._gate = gate

    def _own(self, key: Any) -> Any:
        value = dict.__getitem__(self, key)
        if key not in self.touched:
            value = self.origin.copy_of(key)
            dict.__setitem__(self, key, value)
            self.touched.add(key)
        return value

    def _owned_keys(self) -> list[Any]:
        return list(dict.__iter__(self))

    def __getitem__(self, key: Any) -> Any:
        return self._own(key)

    def get(self, key: Any, default: Any = None) -> Any:
        return self._own(key) if dict.__contains__(self, key) else default

    def __setitem__(self, key: Any, value: Any) -> None:
        dict.__setitem__(self, key, value)
        self.touched.add(key)

    def __delitem__(self, key: Any) -> None:
        dict.__delitem__(self, key)
        self.touched.add(key)

    def pop(self, key: Any, *default: Any) -> Any:
        if not dict.__contains__(self, key):
            if default:
                return default[0]
            raise KeyError(key)
        value = self._own(key)
        dict.__delitem__(self, key)
        return value

    def popitem(self) -> tuple[Any, Any]:
        key = next(reversed(dict.keys(self)))
        return key, self.pop(key)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        if dict.__contains__(self, key):
            return self._own(key)
        self[key] = default
        return default

    def update(self, *args: Any, **kwargs: Any) -> None:
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def clear(self) -> None:
        self.touched.update(dict.__iter__(self))
        dict.clear(self)

    def __iter__(self) -> Iterator[Any]:
        # Overridden so that dict(table) / {**table} go through __getitem__ (copies), never
        # the C fast path that would hand out pristine entries.
        return iter(self._owned_keys())

    def _reading(self) -> bool:
        return self._gate.depth > 0

    def values(self) -> Any:
        if self._reading():
            return dict.values(self)
        return [self._own(k) for k in self._owned_keys()]

    def items(self) -> Any:
        if self._reading():
            return dict.items(self)
        return [(k, self._own(k)) for k in self._owned_keys()]

    def copy(self) -> dict[Any, Any]:
        return {k: self._own(k) for k in self._owned_keys()}

    def __reduce_ex__(self, protocol: Any) -> Any:
        # Pickles and deep copies become a plain dict snapshot of the simulation's state.
        return (dict, (), None, None, iter(dict.items(self)))

    def __or__(self, other: Any) -> dict[Any, Any]:
        return {**self.copy(), **other}

    def __ior__(self, other: Any) -> "CowTable":
        self.update(other)
        return self


@dataclass(eq=False)
class Pristine:
    """The pristine database of one toolkit (agent or user side) of a domain, per process."""

    db: BaseModel
    tables: dict[str, PristineTable]

    def __post_init__(self) -> None:
        for table in self.tables.values():
            table.database = self

    def view(self, gate: _ReadGate) -> BaseModel:
        """A new database whose tables are copy-on-write views of this one."""
        fields = {name: CowTable(table, gate) for name, table in self.tables.items()}
        return type(self.db).model_construct(set(fields), **fields)


def _tabular(db: BaseModel) -> dict[str, PristineTable] | None:
    """The database's tables when every field is a dict of entries, else None."""
    tables: dict[str, PristineTable] = {}
    for name, info in type(db).model_fields.items():
        value = getattr(db, name)
        # A field without an annotation gives no type to validate a table's entries against.
        if type(value) is not dict or info.annotation is None:
            return None
        tables[name] = PristineTable(name, value, TypeAdapter(info.annotation))
    return tables or None


@lru_cache(maxsize=None)
def _pristine(domain: str) -> tuple[Pristine | None, dict[str, bytes]]:
    """(copy-on-write pristine agent database or None, pickled databases for the others)."""
    env = t2.env_module(domain).get_environment()
    dbs: dict[str, BaseModel] = {"db": env.tools.db}
    if env.user_tools is not None:
        dbs["user_db"] = env.user_tools.db
    tables = _tabular(env.tools.db) if env.user_tools is None else None
    cow = Pristine(env.tools.db, tables) if tables is not None else None
    blobs = {
        name: pickle.dumps(db, protocol=pickle.HIGHEST_PROTOCOL)
        for name, db in dbs.items()
        if not (name == "db" and cow is not None)
    }
    return cow, blobs


_READ_TOOLS: dict[str, frozenset[str]] = {}


def _read_tools(domain: str, toolkit: Any) -> frozenset[str]:
    names = _READ_TOOLS.get(domain)
    if names is None:
        read = t2.ToolType.READ
        names = _READ_TOOLS[domain] = frozenset(n for n in toolkit.tools if toolkit.tool_type(n) == read)
    return names


def _gate_reads(toolkit: Any, gate: _ReadGate, read_tools: frozenset[str]) -> None:
    original: Callable[..., Any] = toolkit.use_tool

    def use_tool(tool_name: str, **kwargs: Any) -> Any:
        if tool_name not in read_tools:
            return original(tool_name=tool_name, **kwargs)
        gate.depth += 1
        try:
            return original(tool_name=tool_name, **kwargs)
        finally:
            gate.depth -= 1

    toolkit.use_tool = use_tool


def fresh_environment(domain: str) -> t2.Environment:
    """A pristine environment of ``domain``: copy-on-write where the database allows it."""
    cow, blobs = _pristine(domain)
    kwargs = {name: pickle.loads(blob) for name, blob in blobs.items()}
    gate = _ReadGate()
    if cow is not None:
        kwargs["db"] = cow.view(gate)
    env = t2.env_module(domain).get_environment(**kwargs)
    if cow is not None:
        _gate_reads(env.tools, gate, _read_tools(domain, env.tools))
    return env


def warm(domain: str) -> None:
    """Load the domain's pristine databases now (before ``gc.freeze()``)."""
    fresh_environment(domain)


# --- comparing databases ---------------------------------------------------------------


@dataclass(frozen=True)
class DbState:
    """A database as τ²'s hash sees it, compact enough to cache per task.

    Copy-on-write databases are described by the canonical JSON of the entries they touched
    (``None`` for a deleted or never-present key) relative to ``origin``; other databases
    by τ²'s full hash.
    """

    origin: Pristine | None = None
    changed: dict[str, dict[str, str | None]] = field(default_factory=dict)
    digest: str | None = None

    def value(self, table: str, key: str) -> str | None:
        """Canonical JSON of one entry (None: absent)."""
        entries = self.changed.get(table, {})
        if key in entries:
            return entries[key]
        assert self.origin is not None
        return self.origin.tables[table].pristine_canonical(key)

    def full_hash(self) -> str:
        """τ²'s ``get_db_hash`` value (slow for copy-on-write states: every entry is serialised)."""
        if self.digest is not None or self.origin is None:
            return self.digest or ""
        parts = []
        for name in sorted(self.origin.tables):
            table = self.origin.tables[name]
            keys = set(table.entries) | set(self.changed.get(name, {}))
            body = []
            for key in sorted(keys):
                text = self.value(name, key)
                if text is not None:
                    body.append(f"{json.dumps(key)}: {text}")
            parts.append(f"{json.dumps(name)}: {{{', '.join(body)}}}")
        return hashlib.sha256(f"{{{', '.join(parts)}}}".encode()).hexdigest()


def db_state(toolkit: Any) -> DbState | None:
    """The state of a toolkit's database (None when there is no toolkit)."""
    if toolkit is None:
        return None
    db = toolkit.db
    fields = [getattr(db, name, None) for name in type(db).model_fields]
    values = [v for v in fields if isinstance(v, CowTable)]
    if values and len(values) == len(fields):
        pristine = values[0].origin.database
        if pristine is not None and all(v.origin is pristine.tables.get(v.origin.name) for v in values):
            changed = {
                v.origin.name: {
                    key: (v.origin.canonical(key, dict.__getitem__(v, key)) if dict.__contains__(v, key) else None)
                    for key in v.touched
                }
                for v in values
            }
            return DbState(origin=pristine, changed=changed)
    return DbState(digest=toolkit.get_db_hash())


def same_db(a: DbState | None, b: DbState | None) -> bool:
    """Whether two databases would have equal τ² hashes."""
    if a is None or b is None:
        return a is None and b is None
    if a.origin is not None and a.origin is b.origin:
        tables = set(a.changed) | set(b.changed)
        for name in tables:
            keys = set(a.changed.get(name, {})) | set(b.changed.get(name, {}))
            if any(a.value(name, key) != b.value(name, key) for key in keys):
                return False
        return True
    return a.full_hash() == b.full_hash()
