"""Reading τ² results files (``tau2 run`` output), plain or gzip-compressed.

Two layouts are read:

- ``{"info", "tasks", "simulations"}`` where each simulation names its ``task_id`` and
  ``trial`` (τ² ≥ 0.2, the leaderboard submissions);
- the variant without them: simulations that carry no ``trial`` (trials are then numbered
  per task in file order) and/or no ``task_id`` but an embedded ``task`` object, or a bare
  list of simulations with no ``info`` (the domain must then be given).

Nothing here imports tau2: the file is only normalised (task ids as strings, trials as
ints), hashed for provenance and stripped of provider ``raw_data`` blobs.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field


class ResultsFileError(ValueError):
    """The file is not a readable τ² results file; one line for the user."""


class ResultsFile(BaseModel):
    """A τ² results file, normalised."""

    path: str
    sha256: str
    layout: str  # "task_id+trial" or "inferred" (trial and/or task id derived)
    domain: str
    info: dict[str, Any] = Field(default_factory=dict)
    tasks: dict[str, dict[str, Any]] = Field(default_factory=dict)  # task id -> τ² task JSON
    simulations: list[dict[str, Any]] = Field(default_factory=list)  # with task_id and trial set
    timestamp: str | None = None

    @property
    def agent_info(self) -> dict[str, Any]:
        """``info.agent_info`` (empty when the file has no info)."""
        return dict(self.info.get("agent_info") or {})

    @property
    def user_info(self) -> dict[str, Any]:
        """``info.user_info`` (empty when the file has no info)."""
        return dict(self.info.get("user_info") or {})

    @property
    def tau2_version(self) -> str | None:
        """τ²'s version if the file records one (leaderboard files record only a git commit)."""
        for key in ("tau2_version", "version"):
            if self.info.get(key):
                return str(self.info[key])
        return None


def _read_json(path: Path) -> tuple[Any, str]:
    from tauguard.safe_read import InputFileError, inflate_gzip, read_regular_file

    try:  # regular files only, within size and gzip-ratio limits (issue 26)
        raw = read_regular_file(path)
        digest = hashlib.sha256(raw).hexdigest()
        if raw[:2] == b"\x1f\x8b":
            raw = inflate_gzip(raw, str(path))
    except FileNotFoundError:
        raise ResultsFileError(f"cannot read {path}: No such file or directory") from None
    except InputFileError as exc:
        raise ResultsFileError(str(exc)) from None
    try:
        return json.loads(raw), digest
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ResultsFileError(f"{path}: not JSON ({exc})") from None


def _strip_raw(message: dict[str, Any]) -> dict[str, Any]:
    # Provider responses repeat the content and may carry provider-specific fields; they are
    # not part of the conversation and bloat the run, so they are dropped.
    out = {k: v for k, v in message.items() if k != "raw_data"}
    if isinstance(out.get("tool_messages"), list):
        out["tool_messages"] = [_strip_raw(m) for m in out["tool_messages"]]
    return out


def _task_id_of(sim: dict[str, Any], index: int, path: Path) -> str:
    if sim.get("task_id") is not None:
        return str(sim["task_id"])
    task = sim.get("task")
    if isinstance(task, dict) and task.get("id") is not None:
        return str(task["id"])
    raise ResultsFileError(f"{path}: simulation {index} names no task (no task_id, no task.id)")


def read_results(path: str | Path, domain: str | None = None) -> ResultsFile:
    """Read and normalise a τ² results file.

    ``domain`` is required only when the file does not record one
    (``info.environment_info.domain_name``); when both are present they must agree.
    Raises :class:`ResultsFileError` with a one-line reason.
    """
    path = Path(path)
    data, digest = _read_json(path)
    if isinstance(data, list):
        info: dict[str, Any] = {}
        raw_tasks: list[Any] = []
        sims = data
        timestamp = None
    elif isinstance(data, dict) and isinstance(data.get("simulations"), list):
        info = data.get("info") or {}
        raw_tasks = data.get("tasks") or []
        sims = data["simulations"]
        timestamp = data.get("timestamp")
    else:
        raise ResultsFileError(f"{path}: not a τ² results file (expected an object with 'simulations')")
    if not isinstance(info, dict):
        raise ResultsFileError(f"{path}: 'info' is not an object")
    recorded = (info.get("environment_info") or {}).get("domain_name")
    if recorded and domain and recorded != domain:
        raise ResultsFileError(f"{path}: the file's domain is '{recorded}', not '{domain}'")
    resolved = recorded or domain
    if not resolved:
        raise ResultsFileError(f"{path}: the file records no domain; pass --domain")
    tasks: dict[str, dict[str, Any]] = {}
    for task in raw_tasks:
        if isinstance(task, dict) and task.get("id") is not None:
            tasks[str(task["id"])] = task
    normalised: list[dict[str, Any]] = []
    inferred = False
    per_task: dict[str, int] = defaultdict(int)
    seen: set[tuple[str, int]] = set()
    for index, sim in enumerate(sims):
        if not isinstance(sim, dict) or not isinstance(sim.get("messages"), list):
            raise ResultsFileError(f"{path}: simulation {index} has no message list")
        task_id = _task_id_of(sim, index, path)
        if sim.get("task_id") is None:
            inferred = True
            embedded = sim.get("task")
            if isinstance(embedded, dict):
                tasks.setdefault(task_id, embedded)
        if sim.get("trial") is None:
            inferred = True
            trial = per_task[task_id]
        else:
            try:
                trial = int(sim["trial"])
            except (TypeError, ValueError):
                raise ResultsFileError(f"{path}: simulation {index} has a non-integer trial {sim['trial']!r}") from None
        per_task[task_id] = max(per_task[task_id], trial + 1)
        if (task_id, trial) in seen:
            raise ResultsFileError(f"{path}: task {task_id} trial {trial} appears twice")
        seen.add((task_id, trial))
        out = {k: v for k, v in sim.items() if k != "task"}
        out["task_id"] = task_id
        out["trial"] = trial
        out["messages"] = [_strip_raw(m) if isinstance(m, dict) else m for m in sim["messages"]]
        normalised.append(out)
    if not normalised:
        raise ResultsFileError(f"{path}: the file holds no simulation")
    return ResultsFile(
        path=str(path),
        sha256=digest,
        layout="inferred" if inferred else "task_id+trial",
        domain=resolved,
        info=info,
        tasks=tasks,
        simulations=normalised,
        timestamp=timestamp,
    )
