"""Strategy registry: built-in strategies by name, third-party ones by entry point.

Third-party packages register a :class:`tauguard.guard.Strategy` subclass in the entry-point
group ``tauguard.strategies``::

    [project.entry-points."tauguard.strategies"]
    my-guard = "my_pkg.guard:MyGuardStrategy"

Built-ins are listed as import paths so that listing them imports nothing heavy.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from importlib.metadata import entry_points

from tauguard.guard import Strategy

ENTRY_POINT_GROUP = "tauguard.strategies"

# name -> (import path, one-line description). Descriptions are repeated here so that
# `tauguard strategies` need not import every strategy module.
BUILTINS: dict[str, tuple[str, str]] = {
    "react": ("tauguard_strategies.react:ReactStrategy", "No guard: the inner agent acts alone (baseline)."),
    "refuse-writes": (
        "tauguard_strategies.refuse_writes:RefuseWritesStrategy",
        "Blocks every WRITE call: the floor any guard must beat on mutation tasks.",
    ),
    "action-guard": ("tauguard_strategies.action_guard:ActionGuardStrategy", "PolicyGuard/ToolGuard style: per-tool checklist verified before each WRITE (LLM verifier with --guard-llm, else compiled checks)."),
    "ledger": ("tauguard_strategies.ledger:LedgerStrategy", "LedgerAgent: typed ledger of read results + deterministic predicates gating writes (no LLM call)."),
    "block-tool": (
        "tauguard.testing.block_tool:BlockToolStrategy",
        "Test-only: blocks one named tool (option tool=NAME) to prove the hook contract.",
    ),
}


class UnknownStrategyError(ValueError):
    """The strategy name is neither built in nor registered by an entry point."""


@dataclass(frozen=True)
class StrategyInfo:
    """A registry entry."""

    name: str
    target: str
    description: str
    origin: str  # "built-in" or the distribution that registered it


def _load_target(target: str) -> type[Strategy]:
    module_name, _, attr = target.partition(":")
    cls = getattr(importlib.import_module(module_name), attr)
    if not (isinstance(cls, type) and issubclass(cls, Strategy)):
        raise TypeError(f"{target} is not a tauguard.guard.Strategy subclass")
    return cls


def available() -> dict[str, StrategyInfo]:
    """All strategies by name: built-ins first, then entry points (which cannot shadow them)."""
    found = {
        name: StrategyInfo(name, target, desc, "built-in") for name, (target, desc) in BUILTINS.items()
    }
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in found:
            continue
        dist = getattr(ep, "dist", None)
        origin = f"entry point ({dist.name})" if dist is not None else "entry point"
        found[ep.name] = StrategyInfo(ep.name, ep.value, "", origin)
    return found


def get_strategy_class(name: str) -> type[Strategy]:
    """The Strategy class registered under ``name``."""
    infos = available()
    if name not in infos:
        raise UnknownStrategyError(
            f"unknown strategy '{name}'; available: {', '.join(sorted(infos))}"
        )
    return _load_target(infos[name].target)


def describe(info: StrategyInfo) -> str:
    """One-line description; for entry points it comes from the class docstring or attribute."""
    if info.description:
        return info.description
    try:
        cls = _load_target(info.target)
    except Exception as exc:  # a broken plugin must not break the listing
        return f"(failed to load: {exc})"
    doc = (cls.description or (cls.__doc__ or "")).strip().splitlines()
    return doc[0] if doc else ""


def create_strategy(name: str, options: dict | None = None) -> Strategy:
    """Instantiate a strategy by name."""
    return get_strategy_class(name)(options)
