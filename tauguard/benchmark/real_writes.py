"""The labelled real-write benchmark: every agent WRITE of real τ² conversations, judged against the policy.

Each line of ``tauguard/benchmark/real_writes/*.jsonl`` is one agent call of a WRITE tool in a
recorded conversation of a real LLM agent (``../shared/trajectories``), labelled by a person
reading the conversation and the domain policy: ``complies``, ``violates`` or ``ambiguous``, with
the clause ids (``tauguard/domains/<domain>/policy.toml``) and facts that decide it. Guards are
audited against these labels (false holds = held complying writes; catches = held violating
writes). Labels are made independently of any guard's verdict.

This module imports neither tau2 nor litellm.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tauguard.datafiles import load_jsonl
from tauguard.domains import DomainName
from tauguard.dialogue.cases import CallRef, Source, read_simulations

DATA_DIR = Path(__file__).parent / "real_writes"
WriteLabel = Literal["complies", "violates", "ambiguous"]


class LabelledWrite(BaseModel):
    """One agent WRITE of a real conversation and its policy label."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[A-Za-z0-9_.\-]+:\d+:\d+:\d+$")  # file-stem:sim:message:call
    domain: DomainName  # one of the domain folders (tauguard.domains.DOMAINS)
    source: Source
    write: CallRef
    reward: float | None = None  # the simulation's recorded reward (1.0 = passed)
    # Filled by the labeller:
    label: WriteLabel | None = None
    clauses: list[str] = Field(default_factory=list)  # clause ids that decide the label (violated ones first)
    facts: list[str] = Field(default_factory=list)  # what the conversation's tool results and dialogue show
    why: str | None = None  # one line
    labeller: str | None = None
    # Set when an adjudication changed the label; the original label, clauses and why stay here:
    relabelled_from: WriteLabel | None = None
    relabelled_from_clauses: list[str] | None = None
    relabelled_from_why: str | None = None
    relabelled_by: str | None = None  # e.g. "adjudication-2026-12-02"


def _reward(sim: dict[str, Any]) -> float | None:
    info = sim.get("reward_info") or {}
    value = info.get("reward") if isinstance(info, dict) else None
    return float(value) if isinstance(value, (int, float)) else None


def unlabelled_writes(path: Path, domain: str, write_tools: set[str]) -> Iterator[LabelledWrite]:
    """Every agent WRITE call of a τ² results file, unlabelled."""
    stem = path.name.split(".json")[0]
    for s_index, sim in enumerate(read_simulations(path)):
        messages = sim.get("messages") or []
        errors = {str(m.get("id")): bool(m.get("error")) for m in messages if m.get("role") == "tool"}
        for w, message in enumerate(messages):
            if message.get("role") != "assistant":
                continue
            for c_index, call in enumerate(message.get("tool_calls") or []):
                if not isinstance(call, dict) or call.get("name") not in write_tools:
                    continue
                yield LabelledWrite(
                    id=f"{stem}:{s_index}:{w}:{c_index}", domain=domain,
                    source=Source(file=path.name, sim_index=s_index, simulation_id=sim.get("id"),
                                  task_id=None if sim.get("task_id") is None else str(sim.get("task_id"))),
                    write=CallRef(name=str(call["name"]), arguments=dict(call.get("arguments") or {}), message_index=w,
                                  call_index=c_index, error=errors.get(str(call.get("id")), False)),
                    reward=_reward(sim),
                )


def load_labels(paths: Sequence[Path] | None = None) -> list[LabelledWrite]:
    """Every labelled write in ``paths`` (default: the packaged files), validated."""
    return load_jsonl(sorted(paths) if paths is not None else sorted(DATA_DIR.glob("*.jsonl")), LabelledWrite)
