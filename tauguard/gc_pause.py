"""Pausing Python's cyclic garbage collector while bulk data is built.

Loading a 100x run builds 10^5-10^6 small acyclic objects (index rows, task outcomes, pairs).
Each allocation burst triggers collections that walk the ever larger set of live objects: at
100x this tripled the CPU of loading an outcome index (1.6 s -> 0.5 s for two runs). Nothing
built under the pause is lost: objects stay tracked and a later collection still frees cycles.
Imports nothing of tauguard.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


@contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the cyclic collector for the block (nested blocks are fine), then restore it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def gc_paused_command(command: F) -> F:
    """Run a read-only CLI command (`compare`, `check`, `show`) with the collector paused.

    Pausing inside the library still leaves one collection, when the pause ends, that walks
    everything built under it and still alive (the loaded runs). Around the whole command body
    the body's locals are freed (by reference counting) before the pause ends, so no collection
    ever walks them.
    """

    @functools.wraps(command)
    def call(*args: Any, **kwargs: Any) -> Any:
        with gc_paused():
            return command(*args, **kwargs)

    return call  # type: ignore[return-value]
