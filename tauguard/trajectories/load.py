"""Reading τ² results files (``tau2 run`` output), plain or gzip-compressed.

Two layouts are read:

- ``{"info", "tasks", "simulations"}`` where each simulation names its ``task_id`` and
  ``trial`` (τ² ≥ 0.2, the leaderboard submissions);
- the variants without them: simulations that carry no ``trial`` (numbered per task by the
  importer) and/or no ``task_id`` (an embedded ``task`` object, or nothing: the importer
  places them from their content), a bare list of simulations with no ``info``, or another
  top level holding ``simulations`` (e.g. ``{domain, agent, model, ..., simulations}``).

Nothing here imports tau2: the file is only normalised (task ids as strings, trials as
ints), hashed for provenance and stripped of provider ``raw_data`` blobs.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from tauguard.trajectories.models import FileModels, file_models
from tauguard.errors import TauguardInputError


class ResultsFileError(TauguardInputError):
    """The file is not a readable τ² results file; one line for the user."""


class ResultsFile(BaseModel):
    """A τ² results file, normalised."""

    path: str
    sha256: str
    layout: str  # "task_id+trial" or "inferred" (trial and/or task id derived)
    domain: str | None  # None: the file records none and none was given (inferred on import)
    domain_source: str | None = None  # "file", "option" or (set by the importer) "content"
    info: dict[str, Any] = Field(default_factory=dict)
    top_level: dict[str, Any] = Field(default_factory=dict)  # other scalar fields of a non-τ² top level
    models: FileModels = Field(default_factory=FileModels)
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
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ResultsFileError(f"{path}: not JSON ({exc})") from None
    except RecursionError:
        raise ResultsFileError(f"{path}: not JSON (nested too deeply)") from None
    # A \uD800-\uDFFF escape may be a lone surrogate, which no UTF-8 file (a run's records) can
    # hold: checked here, where it can be named, and only when the text has such an escape.
    if _SURROGATE_ESCAPE.search(raw) is not None:
        try:
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ResultsFileError(
                f"{path}: holds a lone surrogate ({exc.object[exc.start:exc.end]!a}), not valid Unicode text"
            ) from None
    return data, digest


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
# A recorded reward: τ² rewards are within [0, 1]; trials are numbered from 0 (bounds as a run's).
_MAX_TRIAL = 999


def _check_simulation(sim: dict[str, Any], index: int, path: Path) -> None:
    """One line naming the first value of simulation ``index`` no run could hold: a reward that
    is not a number in [0, 1], a trial that is not an integer in [0, 999], a message whose
    content is neither text nor null."""
    reward_info = sim.get("reward_info")
    if reward_info is not None and not isinstance(reward_info, dict):
        raise ResultsFileError(f"{path}: simulation {index} has a reward_info that is not an object")
    reward = (reward_info or {}).get("reward")
    if reward is not None:
        if isinstance(reward, bool) or not isinstance(reward, (int, float)):
            raise ResultsFileError(f"{path}: simulation {index} has a non-numeric reward {reward!r}; allowed: a number in [0, 1] or null")
        if not 0.0 <= reward <= 1.0 + 1e-6:  # τ²'s success tolerance; also refuses NaN
            raise ResultsFileError(f"{path}: simulation {index} has reward {reward!r}, outside [0, 1]")
    trial = sim.get("trial")
    if trial is not None:
        if isinstance(trial, bool) or not isinstance(trial, int):
            raise ResultsFileError(f"{path}: simulation {index} has a non-integer trial {trial!r}")
        if not 0 <= trial <= _MAX_TRIAL:
            raise ResultsFileError(f"{path}: simulation {index} has trial {trial}, outside [0, {_MAX_TRIAL}]")
    for number, message in enumerate(sim.get("messages") or []):
        content = message.get("content") if isinstance(message, dict) else None
        if content is not None and not isinstance(content, str):
            raise ResultsFileError(
                f"{path}: simulation {index} message {number} has content of type {type(content).__name__}; allowed: text or null"
            )


def _strip_raw(message: dict[str, Any]) -> dict[str, Any]:
    # Provider responses repeat the content and may carry provider-specific fields; they are
    # not part of the conversation and bloat the run, so they are dropped.
    out = {k: v for k, v in message.items() if k != "raw_data"}
    if isinstance(out.get("tool_messages"), list):
        out["tool_messages"] = [_strip_raw(m) for m in out["tool_messages"]]
    return out


def _task_id_of(sim: dict[str, Any]) -> str | None:
    if sim.get("task_id") is not None:
        return str(sim["task_id"])
    task = sim.get("task")
    if isinstance(task, dict) and task.get("id") is not None:
        return str(task["id"])
    return None  # placed on its task from its content by the importer


def _top_level(data: Any, path: Path) -> tuple[dict[str, Any], list[Any], list[Any], str | None, dict[str, Any]]:
    """(info, tasks, simulations, timestamp, other top-level fields) of any of the layouts."""
    if isinstance(data, list):
        return {}, [], data, None, {}
    if isinstance(data, dict) and isinstance(data.get("simulations"), list):
        info = data.get("info") or {}
        if not isinstance(info, dict):
            raise ResultsFileError(f"{path}: 'info' is not an object")
        extra = {k: v for k, v in data.items() if k not in ("info", "tasks", "simulations", "timestamp") and not isinstance(v, (list, dict))}
        return info, data.get("tasks") or [], data["simulations"], data.get("timestamp"), extra
    raise ResultsFileError(f"{path}: not a τ² results file (expected an object with 'simulations')")


def read_results(path: str | Path, domain: str | None = None) -> ResultsFile:
    """Read and normalise a τ² results file.

    The domain is the file's (``info.environment_info.domain_name``, else a top-level
    ``domain``) or ``domain``; when both are present they must agree. A file that records
    none and is given none has ``domain`` None: the importer infers it from the content.
    Simulations keep ``task_id`` / ``trial`` None where the file has none (placed and
    numbered by the importer). Raises :class:`ResultsFileError` with a one-line reason.
    """
    path = Path(path)
    data, digest = _read_json(path)
    info, raw_tasks, sims, timestamp, extra = _top_level(data, path)
    recorded = (info.get("environment_info") or {}).get("domain_name") or extra.get("domain")
    if recorded and domain and recorded != domain:
        raise ResultsFileError(f"{path}: the file's domain is '{recorded}', not '{domain}'")
    tasks: dict[str, dict[str, Any]] = {}
    for task in raw_tasks:
        if isinstance(task, dict) and task.get("id") is not None:
            tasks[str(task["id"])] = task
    normalised: list[dict[str, Any]] = []
    inferred = False
    seen: set[tuple[str, int]] = set()
    for index, sim in enumerate(sims):
        if not isinstance(sim, dict) or not isinstance(sim.get("messages"), list):
            raise ResultsFileError(f"{path}: simulation {index} has no message list")
        _check_simulation(sim, index, path)
        task_id = _task_id_of(sim)
        if sim.get("task_id") is None:
            inferred = True
            embedded = sim.get("task")
            if isinstance(embedded, dict) and task_id is not None:
                tasks.setdefault(task_id, embedded)
        trial: int | None = None
        if sim.get("trial") is None:
            inferred = True
        else:
            try:
                trial = int(sim["trial"])
            except (TypeError, ValueError):
                raise ResultsFileError(f"{path}: simulation {index} has a non-integer trial {sim['trial']!r}") from None
        if task_id is not None and trial is not None:
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
        domain=recorded or domain,
        domain_source="file" if recorded else ("option" if domain else None),
        info=info,
        top_level=extra,
        tasks=tasks,
        simulations=normalised,
        timestamp=timestamp,
        models=file_models(info, sims),
    )
