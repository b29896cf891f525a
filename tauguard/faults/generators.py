"""Registry of fault generators: functions turning a gold write into a faulty call.

A generator receives the gold call and the environment just before it (read-only use:
generators may look entities up but must not change state) and returns the faulty call,
or None when the fault does not apply to this task. Adding a domain fault is a catalog
entry plus, when no existing generator fits, one function registered with
:func:`register_generator` in a domain module (the registry imports them) or through the
``tauguard.fault_generators`` entry-point group.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from tauguard.strategy_api.conversation import ToolCallView
from tauguard.strategy_api.registry import Registry


@dataclass
class FaultContext:
    """What a generator may look at."""

    domain: str
    task: Any  # tau2 Task
    gold_call: ToolCallView
    environment: Any  # tau2 Environment, state just before the gold write
    write_index: int


Generator = Callable[[FaultContext], ToolCallView | None]

# The built-in domain generators register on import of their modules (autoloaded on the
# first lookup): every module of tauguard/faults/domain/, so a new domain's module needs no
# entry here. Plug-ins may add generators through the entry-point group.
_DOMAIN_MODULES = tuple(
    f"tauguard.faults.domain.{p.stem}" for p in sorted(Path(__file__).with_name("domain").glob("*.py")) if p.stem != "__init__"
)
fault_generators: Registry[Generator] = Registry(
    "fault generator",
    group="tauguard.fault_generators",
    check=callable,
    expected="a callable",
    autoload=_DOMAIN_MODULES,
)


def register_generator(gen_id: str) -> Callable[[Generator], Generator]:
    """Decorator registering a generator under ``gen_id`` (a second one under the same id is an error)."""
    return fault_generators.register(gen_id)


def load_generators() -> Registry[Generator]:
    """The generator registry (a name -> generator lookup)."""
    return fault_generators


def generate(gen_id: str, ctx: FaultContext) -> ToolCallView | None:
    """Run generator ``gen_id``; the faulty call keeps the gold call's id."""
    call = fault_generators.get(gen_id)(ctx)
    # A "fault" that reproduces the gold call is no fault (tau2's gold itself can break a rule).
    if call is None or (call.name, call.arguments) == (ctx.gold_call.name, ctx.gold_call.arguments):
        return None
    return call.model_copy(update={"id": ctx.gold_call.id})
