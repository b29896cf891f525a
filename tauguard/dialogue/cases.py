"""Labelled confirmation cases: (agent statement, user reply, write) triples from real conversations.

A *case* asks one question of a recorded conversation: given everything said up to the moment
the agent issued ``write``, does the user's ``reply`` to the agent's ``statement`` explicitly
confirm that write (its user-visible arguments), and is that confirmation still in force when
the write is made? Cases are built from τ² results files of real agents
(:func:`candidates`) and labelled by a person reading the conversation; the labelled files live
in ``tauguard/dialogue/data/*.jsonl`` and are validated by :class:`ConfirmationCase`.

This module imports neither tau2 nor litellm.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tauguard.datafiles import load_jsonl
from tauguard.domains import DomainName

DATA_DIR = Path(__file__).parent / "data"

#: How the statement relates to the write (what makes a case easy or hard).
CaseType = Literal[
    "direct",  # the statement states this one action, the reply answers it
    "summary",  # the statement lists several actions, this write among them
    "reference",  # the statement refers to the target unambiguously without repeating its id
    "different_question",  # the reply answers another question (payment method, a detail, ...)
    "conditional",  # "yes, if ...", "only if ...", a yes with a new requirement
    "changed_after",  # the user (or agent) changed the details after the yes
    "refusal",  # the user declines, hesitates or asks for something else
    "no_request",  # the agent did not ask for confirmation of this action
    "question_back",  # the user answers with a question
    # the agent repeats a write identical to one that already succeeded (a no-op): whether the
    # earlier yes still covers it is a matter of convention, so these are reported apart
    "repeat",
    "other",
]
Label = Literal["confirmed", "not_confirmed", "ambiguous"]


class CallRef(BaseModel):
    """The write the case is about."""

    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, Any]
    message_index: int  # position of the agent message carrying the call in ``messages``
    call_index: int = 0  # position of the call among that message's tool calls
    error: bool = False  # whether the environment answered the call with an error


class TurnRef(BaseModel):
    """One message of the conversation."""

    model_config = ConfigDict(extra="forbid")

    message_index: int
    content: str


class Source(BaseModel):
    """Where a case comes from: the results file and the simulation in it."""

    model_config = ConfigDict(extra="forbid")

    file: str  # file name in ../shared/trajectories
    sim_index: int  # position of the simulation in the file
    simulation_id: str | None = None
    task_id: str | None = None  # as recorded (may be wrong in relabelled files)


class CaseContext(BaseModel):
    """Where the conversation the case is judged on ships (:mod:`tauguard.dialogue.context`)."""

    model_config = ConfigDict(extra="forbid")

    file: str = Field(pattern=r"^context/[A-Za-z0-9_.\-]+\.jsonl\.gz$")  # relative to the cases' data folder
    source_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")  # of ``source.file`` (its bytes as shipped in ../shared)
    first_message: int = Field(default=0, ge=0)  # the messages the case is judged on: first ..
    last_message: int = Field(ge=0)  # .. through the write's message (inclusive)


class ConfirmationCase(BaseModel):
    """One (statement, reply, write) triple with its label."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[A-Za-z0-9_.\-]+:\d+:\d+:\d+:\d+$")  # file-stem:sim:write-msg:call:statement-msg
    domain: DomainName  # one of the domain folders (tauguard.domains.DOMAINS)
    source: Source
    write: CallRef
    statement: TurnRef
    reply: TurnRef
    # Filled by the labeller:
    label: Label | None = None
    case_type: CaseType | None = None
    why: str | None = None  # one line: what in the conversation decides the label
    labeller: str | None = None
    # Set when an adjudication changed the label; the original label and why stay here:
    relabelled_from: Label | None = None
    relabelled_from_why: str | None = None
    relabelled_by: str | None = None  # e.g. "adjudication-2026-12-02"
    # The shipped conversation the case is judged on (its provenance: the source file's sha256):
    context: CaseContext | None = None


def read_simulations(path: Path) -> list[dict[str, Any]]:
    """The simulations of a τ² results file (plain or gzip; a results object or a bare list)."""
    from tauguard.safe_read import inflate_gzip, read_regular_file

    raw = read_regular_file(path)  # a regular file, size-limited (a FIFO would block)
    if raw[:2] == b"\x1f\x8b":
        raw = inflate_gzip(raw, str(path))
    data = json.loads(raw)
    sims = data.get("simulations", []) if isinstance(data, dict) else data
    return [s for s in sims if isinstance(s, dict)]


def _calls(message: dict[str, Any]) -> list[dict[str, Any]]:
    calls = message.get("tool_calls") or []
    return [c for c in calls if isinstance(c, dict)]


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else ""


def _errors(messages: Sequence[dict[str, Any]]) -> dict[str, bool]:
    return {str(m.get("id")): bool(m.get("error")) for m in messages if m.get("role") == "tool"}


def pairs_before(messages: Sequence[dict[str, Any]], end: int) -> list[tuple[int, int]]:
    """(agent text message, the user's next message) index pairs that end before ``end``."""
    found: list[tuple[int, int]] = []
    for i in range(end):
        if messages[i].get("role") != "assistant" or not _text(messages[i]).strip():
            continue
        j = next((k for k in range(i + 1, end) if messages[k].get("role") == "user"), None)
        if j is not None and not any(
            messages[k].get("role") == "assistant" and _text(messages[k]).strip() for k in range(i + 1, j)
        ):
            found.append((i, j))
    return found


def candidates(path: Path, domain: str, write_tools: set[str], window: int = 3) -> Iterator[ConfirmationCase]:
    """Unlabelled cases: for every agent write, the last ``window`` (statement, reply) pairs before it."""
    stem = path.name.split(".json")[0]
    for s_index, sim in enumerate(read_simulations(path)):
        messages = sim.get("messages") or []
        errors = _errors(messages)
        for w, message in enumerate(messages):
            if message.get("role") != "assistant":
                continue
            for c_index, call in enumerate(_calls(message)):
                if call.get("name") not in write_tools:
                    continue
                ref = CallRef(name=str(call["name"]), arguments=dict(call.get("arguments") or {}),
                              message_index=w, call_index=c_index, error=errors.get(str(call.get("id")), False))
                for i, j in pairs_before(messages, w)[-window:]:
                    yield ConfirmationCase(
                        id=f"{stem}:{s_index}:{w}:{c_index}:{i}", domain=domain,
                        source=Source(file=path.name, sim_index=s_index, simulation_id=sim.get("id"),
                                      task_id=None if sim.get("task_id") is None else str(sim.get("task_id"))),
                        write=ref, statement=TurnRef(message_index=i, content=_text(messages[i])),
                        reply=TurnRef(message_index=j, content=_text(messages[j])),
                    )


def load_cases(paths: Sequence[Path] | None = None) -> list[ConfirmationCase]:
    """Every labelled case in ``paths`` (default: ``tauguard/dialogue/data/*.jsonl``), validated."""
    return load_jsonl(sorted(paths) if paths is not None else sorted(DATA_DIR.glob("*.jsonl")), ConfirmationCase)
