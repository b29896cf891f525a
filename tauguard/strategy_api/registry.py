"""One registry type for everything tauguard looks up by name.

:class:`Registry` maps names to objects (strategy classes, ledger predicates, action-guard
checks, fault generators). An entry is registered by a decorator, directly, as a lazy
``"module:attr"`` target, or by a Python entry point of the registry's group. Whatever the
path, the same rules hold: a name is registered once (a second, different registration is an
error), a loaded object must pass the registry's type check, and an unknown name is a
one-line error with "did you mean" suggestions and the allowed names.

Strategies are the registry :data:`strategies`, fed only by the entry-point group
``tauguard.strategies``; tauguard declares its built-in strategies in that group of its own
``pyproject.toml``, so built-ins and third-party strategies share one path::

    [project.entry-points."tauguard.strategies"]
    my-guard = "my_pkg.guard:MyGuardStrategy"

A strategy's name is its registered name; its description (docstring's first line), hooks
(the :class:`~tauguard.strategy_api.guard.GuardSession` methods its session class overrides) and options
(its ``options_model``) come from the class.
"""

from __future__ import annotations

import difflib
import importlib
import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Generic, Literal, TypeVar, get_args, get_origin

from pydantic import BaseModel, ValidationError

from tauguard.errors import TauguardInputError
from tauguard.strategy_api.guard import Strategy

T = TypeVar("T")

BUILT_IN = "built-in"
OWN_DISTRIBUTION = "tauguard"  # entry points of this distribution are the built-ins


class UnknownNameError(TauguardInputError):
    """A name no registry entry has; the message suggests close names and lists the allowed ones."""


class DuplicateNameError(TauguardInputError):
    """Two different registrations under one name."""


class RegistryLoadError(TauguardInputError):
    """A registered target cannot be imported, or is not what the registry holds."""


@dataclass(frozen=True)
class Entry:
    """One registration: where it comes from and, for lazy ones, its ``module:attr`` target."""

    name: str
    origin: str  # "built-in", or "entry point (<distribution>)"
    target: str | None = None  # lazy "module:attr"; None when the object was registered directly


def load_target(target: str) -> Any:
    """The object a ``"module:attr"`` (or ``"module:attr.sub"``) target names."""
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"'{target}' is not a 'module:attr' target")
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


class Registry(Generic[T]):
    """Named objects of one kind (see the module docstring).

    ``kind`` names the kind in messages ("strategy"); ``group`` is an entry-point group read
    on every lookup (so plug-ins installed meanwhile are seen); ``check``/``expected`` test a
    loaded object ("a tauguard.strategy_api.guard.Strategy subclass"); ``autoload`` lists modules whose
    import registers entries (decorated functions), imported on the first lookup.
    """

    def __init__(
        self,
        kind: str,
        *,
        group: str | None = None,
        check: Callable[[Any], bool] | None = None,
        expected: str = "",
        autoload: Sequence[str] = (),
    ) -> None:
        self.kind = kind
        self.group = group
        self._check = check
        self._expected = expected
        self._autoload = tuple(autoload)
        self._autoloaded = False
        self._entries: dict[str, Entry] = {}
        self._objects: dict[tuple[str, str | None], T] = {}  # (name, target) -> loaded object
        self._entry_points: list[Entry] | None = None  # last scan of the group

    # ------------------------------------------------------------------ registering

    def add(self, name: str, obj: T | None = None, *, target: str | None = None, origin: str = BUILT_IN) -> None:
        """Register ``obj`` (or the lazy ``target``) under ``name``; a different second one is an error."""
        if (obj is None) == (target is None):
            raise ValueError("give exactly one of obj and target")
        if obj is not None:
            self._validate(name, obj, origin)
        existing = self._entries.get(name)
        if existing is not None:
            same = existing.target == target if target is not None else self._objects.get((name, None)) is obj
            if same:
                return  # re-registering the very same thing (e.g. a re-imported module) is harmless
            raise DuplicateNameError(f"{self.kind} '{name}' is registered twice ({existing.origin} and {origin})")
        self._entries[name] = Entry(name, origin, target)
        if obj is not None:
            self._objects[(name, None)] = obj

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator form of :meth:`add`: ``@registry.register("id")``."""

        def decorate(obj: T) -> T:
            self.add(name, obj)
            return obj

        return decorate

    # ------------------------------------------------------------------ looking up

    def entries(self, refresh: bool = True) -> dict[str, Entry]:
        """Every entry by name, in registration order (then entry points in discovery order).

        ``refresh`` re-scans the entry-point group (listings do; lookups re-scan only on a miss).
        """
        self._load_modules()
        if refresh or self._entry_points is None:
            self._entry_points = self._entry_point_entries()
        found = dict(self._entries)
        for entry in self._entry_points:
            other = found.get(entry.name)
            if other is None:
                found[entry.name] = entry
            elif other.target != entry.target:
                self._entry_points = None  # re-scan next time (the clash may be fixed meanwhile)
                raise DuplicateNameError(
                    f"{self.kind} '{entry.name}' is registered twice ({other.origin}: {other.target or 'in code'}; "
                    f"{entry.origin}: {entry.target})"
                )
        return found

    def names(self) -> list[str]:
        """Every registered name."""
        return list(self.entries())

    def get(self, name: str, *, listed: Sequence[str] | None = None) -> T:
        """The object registered as ``name``; :class:`UnknownNameError` names close and allowed names.

        ``listed`` restricts the names shown as allowed (e.g. without hidden ones).
        """
        entries = self.entries(refresh=False)
        if name not in entries:
            entries = self.entries(refresh=True)  # a plug-in installed since the last scan
        entry = entries.get(name)
        if entry is None:
            raise UnknownNameError(unknown_name_message(self.kind, name, list(entries), listed))
        key = (name, entry.target)
        if key not in self._objects:
            assert entry.target is not None  # direct registrations are stored on add()
            try:
                obj = load_target(entry.target)
            except Exception as exc:  # a broken plug-in: one line, not a traceback
                raise RegistryLoadError(
                    f"{self.kind} '{name}' ({entry.target}, {entry.origin}) cannot be loaded: {type(exc).__name__}: {exc}"
                ) from exc
            self._validate(name, obj, entry.origin)
            self._objects[key] = obj
        return self._objects[key]

    def items(self) -> list[tuple[str, T]]:
        """(name, object) of every entry, loading lazy ones."""
        loaded = self._objects
        return [
            (name, loaded[(name, e.target)] if (name, e.target) in loaded else self.get(name))
            for name, e in self.entries(refresh=False).items()
        ]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self.entries(refresh=False) or name in self.entries())

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.entries())

    def __getitem__(self, name: str) -> T:
        return self.get(name)

    @contextmanager
    def patched(self, name: str, obj: T) -> Iterator[None]:
        """Temporarily serve ``obj`` for the registered ``name`` (for tests)."""
        entry = self.entries()[name]
        key = (name, entry.target)
        saved_entries, saved_objects = dict(self._entries), dict(self._objects)
        self._entries.setdefault(name, entry)
        self._objects[key] = obj
        try:
            yield
        finally:
            self._entries, self._objects = saved_entries, saved_objects

    # ------------------------------------------------------------------ internals

    def _validate(self, name: str, obj: Any, origin: str) -> None:
        if self._check is not None and not self._check(obj):
            raise RegistryLoadError(f"{self.kind} '{name}' ({origin}) is {obj!r}, not {self._expected or 'valid'}")

    def _load_modules(self) -> None:
        if self._autoloaded:
            return
        self._autoloaded = True
        for module in self._autoload:
            importlib.import_module(module)

    def _entry_point_entries(self) -> list[Entry]:
        if self.group is None:
            return []
        out: list[Entry] = []
        for ep in entry_points(group=self.group):
            dist = getattr(ep, "dist", None)
            dist_name = dist.name if dist is not None else None
            origin = BUILT_IN if dist_name == OWN_DISTRIBUTION else f"entry point ({dist_name or 'unknown'})"
            out.append(Entry(ep.name, origin, ep.value))
        return out


def unknown_name_message(kind: str, name: str, names: Sequence[str], listed: Sequence[str] | None = None) -> str:
    """``unknown <kind> 'x'; did you mean 'y'? allowed: a, b, c`` (one line)."""
    close = difflib.get_close_matches(name, list(names), n=3, cutoff=0.6)
    text = f"unknown {kind} '{name}'"
    if close:
        text += " (did you mean " + " or ".join(f"'{c}'" for c in close) + "?)"
    allowed = sorted(listed if listed is not None else names)
    return text + f"; allowed: {', '.join(allowed) or '(none registered)'}"


# ====================================================================== strategies

STRATEGY_GROUP = "tauguard.strategies"
ENTRY_POINT_GROUP = STRATEGY_GROUP  # the name third-party documentation uses


def _is_strategy_class(obj: Any) -> bool:
    return isinstance(obj, type) and issubclass(obj, Strategy)


strategies: Registry[type[Strategy]] = Registry(
    "strategy", group=STRATEGY_GROUP, check=_is_strategy_class, expected="a tauguard.strategy_api.guard.Strategy subclass"
)


class UnknownStrategyError(UnknownNameError):
    """The strategy name is not registered (built-ins are registered too, by entry point)."""


class StrategyOptionsError(TauguardInputError):
    """A strategy option is unknown or ill-typed; the message names the allowed options."""


@dataclass(frozen=True)
class StrategyInfo:
    """A strategy as listed by ``tauguard strategies``."""

    name: str
    target: str | None
    origin: str  # "built-in" or "entry point (<distribution>)"


def _listing(include_hidden: bool) -> list[StrategyInfo]:
    infos = [StrategyInfo(e.name, e.target, e.origin) for e in strategies.entries().values()]
    if include_hidden:
        return infos
    out = []
    for info in infos:
        try:
            hidden = strategies.get(info.name).hidden
        except RegistryLoadError:
            hidden = False  # a broken plug-in stays visible, so its error can be seen
        if not hidden:
            out.append(info)
    return out


def available(include_hidden: bool = False) -> dict[str, StrategyInfo]:
    """Strategies by name; test-only strategies (``hidden = True``) only with ``include_hidden``."""
    return {info.name: info for info in _listing(include_hidden)}


def get_strategy_class(name: str) -> type[Strategy]:
    """The Strategy class registered under ``name`` (UnknownStrategyError if none)."""
    try:
        return strategies.get(name, listed=list(available()) if name not in strategies else None)
    except UnknownNameError as exc:
        hint = ""
        if not any(e.origin == BUILT_IN for e in strategies.entries().values()):
            hint = " (tauguard's own entry points are missing: reinstall tauguard, e.g. pip install -e .)"
        raise UnknownStrategyError(str(exc) + hint) from None


def describe(info: StrategyInfo) -> str:
    """The strategy's one-line description: its class docstring's first line."""
    try:
        cls = strategies.get(info.name)
    except RegistryLoadError as exc:  # a broken plug-in must not break the listing
        return f"(failed to load: {exc})"
    return cls.summary()


def option_fields(model: type[BaseModel]) -> list[dict[str, Any]]:
    """Each option of an options model: name, type, default, description (JSON-friendly)."""
    out = []
    for name, field in model.model_fields.items():
        default = None if field.is_required() else field.get_default(call_default_factory=True)
        out.append(
            {
                "name": name,
                "type": _type_name(field.annotation),
                "default": default.model_dump(mode="json") if isinstance(default, BaseModel) else default,
                "required": field.is_required(),
                "description": field.description or "",
            }
        )
    return out


def _type_name(annotation: Any) -> str:
    if get_origin(annotation) is Literal:
        return " | ".join(json.dumps(a) for a in get_args(annotation))
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def _allowed_options(name: str, model: type[BaseModel]) -> str:
    fields = option_fields(model)
    if not fields:
        return f"strategy '{name}' takes no options"
    shown = ", ".join(f"{f['name']} ({f['type']}, default {json.dumps(f['default'])})" for f in fields)
    return f"allowed: {shown}"


def validate_options(name: str, options: dict[str, Any] | BaseModel | None) -> BaseModel:
    """``options`` validated against strategy ``name``'s options model (one-line errors)."""
    cls = get_strategy_class(name)
    model = cls.options_model
    if isinstance(options, model):
        return options
    raw = options.model_dump() if isinstance(options, BaseModel) else dict(options or {})
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"]) or "(options)"
        if err["type"] == "extra_forbidden":
            problem = f"strategy '{name}' has no option '{key}'"
        else:
            msg = str(err["msg"]).removeprefix("Value error, ")
            problem = f"invalid value {err.get('input')!r} for option '{key}' of strategy '{name}': {msg}"
        raise StrategyOptionsError(f"{problem}; {_allowed_options(name, model)}") from None


def validated_options(name: str, options: dict[str, Any] | None) -> dict[str, Any]:
    """The validated options as a JSON-ready dict (what a manifest stores)."""
    return validate_options(name, options).model_dump(mode="json")


def create_strategy(name: str, options: dict[str, Any] | BaseModel | None = None) -> Strategy:
    """Instantiate strategy ``name`` with validated options.

    Raises UnknownStrategyError or StrategyOptionsError (both TauguardInputError, one line).
    """
    return get_strategy_class(name)(validate_options(name, options))


__all__ = [
    "DuplicateNameError",
    "Entry",
    "Registry",
    "RegistryLoadError",
    "StrategyInfo",
    "StrategyOptionsError",
    "UnknownNameError",
    "UnknownStrategyError",
    "available",
    "create_strategy",
    "describe",
    "get_strategy_class",
    "load_target",
    "option_fields",
    "strategies",
    "validate_options",
    "validated_options",
]
