"""The conversations the labelled confirmation cases are judged on, shipped with the cases.

A case (:class:`tauguard.dialogue.cases.ConfirmationCase`) is judged on its conversation up to
its write. Those conversations come from τ² results files outside the repository
(``../shared/trajectories``); so that a clone reproduces the documented figures, the messages
each case needs ship in ``tauguard/dialogue/data/context/<source stem>.jsonl.gz``: one
:class:`SimulationContext` line per simulation that has a case, holding that simulation's
messages verbatim from the first up to the last write any of its cases is about, with the
source file's name and sha256 and the simulation's position and id (provenance).

Rebuild after adding cases (reads the results files, rewrites the context files and every
case's ``context`` field)::

    python -m tauguard.dialogue.context ../shared/trajectories

This module imports neither tau2 nor litellm.
"""

from __future__ import annotations

import gzip
import hashlib
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tauguard.dialogue.cases import DATA_DIR, CaseContext, ConfirmationCase, load_cases, read_simulations

CONTEXT_DIR = DATA_DIR / "context"
#: No shipped file may come near this (kept well under 2 MiB so the package stays light).
MAX_FILE_BYTES = 1 * 2**20
_SHA256 = r"^[0-9a-f]{64}$"


class SimulationContext(BaseModel):
    """One simulation's messages, from its first up to the last write a case is about."""

    model_config = ConfigDict(extra="forbid")

    source_file: str  # results file name in ../shared/trajectories
    source_sha256: str = Field(pattern=_SHA256)  # of that file as read (compressed bytes)
    sim_index: int = Field(ge=0)  # position of the simulation in the file
    simulation_id: str | None = None
    task_id: str | None = None
    first_message: int = 0  # index in the simulation of messages[0]
    messages: list[dict[str, Any]]  # verbatim from the results file


def context_file(source_file: str) -> str:
    """The context file (relative to the cases' data folder) of a results file."""
    return f"context/{source_file.split('.json')[0]}.jsonl.gz"


def read_context(path: Path) -> list[SimulationContext]:
    """The simulations of one context file, validated."""
    lines = gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()
    return [SimulationContext.model_validate_json(line) for line in lines if line.strip()]


class PackagedContexts:
    """The shipped conversations, read once per file, keyed by (source file, simulation)."""

    def __init__(self, data_dir: Path = DATA_DIR) -> None:
        self.data_dir = data_dir
        self.files: dict[str, dict[int, SimulationContext]] = {}

    def messages(self, case: ConfirmationCase) -> list[dict[str, Any]] | None:
        """The case's conversation from its first message through its write; None if not shipped
        or if the shipped one is not the case's (other source file, hash or simulation)."""
        ref = case.context
        if ref is None:
            return None
        if ref.file not in self.files:
            path = self.data_dir / ref.file
            self.files[ref.file] = {s.sim_index: s for s in read_context(path)} if path.is_file() else {}
        sim = self.files[ref.file].get(case.source.sim_index)
        if sim is None or sim.source_file != case.source.file or sim.source_sha256 != ref.source_sha256:
            return None
        if sim.simulation_id != case.source.simulation_id or sim.first_message != 0:
            return None
        if len(sim.messages) <= ref.last_message or ref.last_message < case.write.message_index:
            return None
        return sim.messages[: ref.last_message + 1]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build(trajectories: Path, data_dir: Path = DATA_DIR) -> dict[str, int]:
    """Write the context files of every packaged case and set each case's ``context``.

    Returns the bytes written per context file.
    """
    case_files = sorted(data_dir.glob("*.jsonl"))
    cases = {path: load_cases([path]) for path in case_files}
    needed: dict[str, dict[int, int]] = defaultdict(dict)
    for file_cases in cases.values():
        for case in file_cases:
            sims = needed[case.source.file]
            sims[case.source.sim_index] = max(sims.get(case.source.sim_index, 0), case.write.message_index)
    (data_dir / "context").mkdir(exist_ok=True)
    digests: dict[str, str] = {}
    written: dict[str, int] = {}
    for source, sims in sorted(needed.items()):
        path = trajectories / source
        digests[source] = _sha256(path)
        simulations = read_simulations(path)
        lines = []
        for index, last in sorted(sims.items()):
            sim = simulations[index]
            lines.append(SimulationContext(
                source_file=source, source_sha256=digests[source], sim_index=index,
                simulation_id=sim.get("id"), task_id=None if sim.get("task_id") is None else str(sim["task_id"]),
                messages=list(sim.get("messages") or [])[: last + 1],
            ).model_dump_json(exclude_none=True))
        # mtime 0: the same cases and sources give the same bytes
        blob = gzip.compress(("\n".join(lines) + "\n").encode("utf-8"), compresslevel=9, mtime=0)
        target = data_dir / context_file(source)
        target.write_bytes(blob)
        written[target.name] = len(blob)
    for path, file_cases in cases.items():
        out = []
        for case in file_cases:
            case.context = CaseContext(file=context_file(case.source.file), source_sha256=digests[case.source.file],
                                       last_message=case.write.message_index)
            out.append(case.model_dump_json(exclude_none=True))
        path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return written


def _main(argv: list[str]) -> int:
    if len(argv) != 1 or not Path(argv[0]).is_dir():
        print("usage: python -m tauguard.dialogue.context TRAJECTORIES_FOLDER (e.g. ../shared/trajectories)",
              file=sys.stderr)
        return 2
    for name, size in build(Path(argv[0])).items():
        print(f"{name}: {size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
