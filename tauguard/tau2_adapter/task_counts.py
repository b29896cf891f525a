"""How many tasks a τ² domain's split has, read from τ²'s shipped ``split_tasks.json`` without
importing τ² (which takes seconds): `check` and `power` use it to say when a plan needs more
tasks than a domain has. :func:`tauguard.tau2_adapter.compat.task_splits` is the same file read
through τ²'s own loader.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path


def split_task_count(domain: str, split: str) -> int | None:
    """The number of task ids in the domain's split; None when τ² or the file is not there."""
    spec = importlib.util.find_spec("tau2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "tau2" / "domains" / domain / "split_tasks.json"
    try:
        ids = json.loads(path.read_text(encoding="utf-8")).get(split)
    except (OSError, ValueError, AttributeError):
        return None
    return len(ids) if isinstance(ids, list) else None
