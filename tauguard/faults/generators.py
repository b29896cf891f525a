"""Registry of fault generators: functions turning a gold write into a faulty call.

A generator receives the gold call and the environment just before it (read-only use:
generators may look entities up but must not change state) and returns the faulty call,
or None when the fault does not apply to this task. Adding a domain fault is a catalog
entry plus, when no existing generator fits, one registered function here or in a module
imported by :func:`load_generators`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable

from tauguard.conversation import ToolCallView


@dataclass
class FaultContext:
    """What a generator may look at."""

    domain: str
    task: Any  # tau2 Task
    gold_call: ToolCallView
    environment: Any  # tau2 Environment, state just before the gold write
    write_index: int


Generator = Callable[[FaultContext], ToolCallView | None]

GENERATORS: dict[str, Generator] = {}

# Modules that register domain generators on import.
GENERATOR_MODULES: tuple[str, ...] = (
    "tauguard.faults.domain.airline",
    "tauguard.faults.domain.retail",
    "tauguard.faults.domain.telecom",
)


def register_generator(gen_id: str) -> Callable[[Generator], Generator]:
    """Decorator registering a generator under ``gen_id``."""

    def wrap(fn: Generator) -> Generator:
        if gen_id in GENERATORS and GENERATORS[gen_id] is not fn:
            raise ValueError(f"generator '{gen_id}' registered twice")
        GENERATORS[gen_id] = fn
        return fn

    return wrap


def load_generators() -> dict[str, Generator]:
    """All registered generators (imports the modules that register them)."""
    for module in GENERATOR_MODULES:
        importlib.import_module(module)
    return GENERATORS


def generate(gen_id: str, ctx: FaultContext) -> ToolCallView | None:
    """Run generator ``gen_id``; the faulty call keeps the gold call's id."""
    gens = load_generators()
    if gen_id not in gens:
        raise KeyError(f"unknown fault generator '{gen_id}'")
    call = gens[gen_id](ctx)
    # A "fault" that reproduces the gold call is no fault (tau2's gold itself can break a rule).
    if call is None or (call.name, call.arguments) == (ctx.gold_call.name, ctx.gold_call.arguments):
        return None
    return call.model_copy(update={"id": ctx.gold_call.id})
