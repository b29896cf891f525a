"""Decision states of real agents' writes, labelled from the real-write benchmark.

Every write of ``tauguard/benchmark/real_writes`` becomes one classifier example
(:class:`~tauguard.classifier.dataset.LabelledState`): the state is built from the recorded
conversation *before* the agent message carrying the write, with the tool results the agent
actually saw (no replay), and the label comes from the benchmark's human reading:

- ``violates`` -> ``refuse``, its gold clause the first (violated) clause id;
- ``ambiguous`` -> ``verify`` (the benchmark marks writes whose decisive fact was never observed);
- ``complies`` -> ``verify`` when a read the write contract requires (target or prior read) or
  the explicit confirmation it requires (asked of the neutral dialogue judge) is missing at the
  checkpoint, else ``allow``.

The task cluster of a state (for task-disjoint splits and task-cluster bootstraps) is the
task of the simulation's recorded gold actions (``reward_info.action_checks``: action ids are
``<task>_<n>``), because a relabelled archive's own ``task_id`` can be wrong (the shared retail
file: 111 of 114); simulations without recorded gold actions fall back to the recorded task id.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from tauguard.benchmark.real_writes import LabelledWrite, load_labels
from tauguard.classifier.clauses import clause_pool
from tauguard.classifier.dataset import LabelledState, ProbeSet
from tauguard.classifier.state import DecisionState, build_state
from tauguard.strategy_api.conversation import Conversation, ConversationEvent, ToolCallView
from tauguard.dialogue.cases import read_simulations
from tauguard.domains.contract import contract
from tauguard.errors import TauguardInputError

TRAJECTORIES = Path("/work/shared/trajectories")


class RealStatesError(TauguardInputError):
    """The recorded conversation a benchmark write points at cannot be found."""


def trajectories_dir() -> Path:
    """Where the shared real τ² results files are (``TAUGUARD_TRAJECTORIES`` overrides)."""
    import os

    return Path(os.environ.get("TAUGUARD_TRAJECTORIES", str(TRAJECTORIES)))


@cache
def tool_types(domain: str) -> dict[str, str]:
    """τ²'s READ / WRITE / GENERIC type of each agent tool (the live gate's own mapping)."""
    from tauguard.tau2_adapter import compat as t2

    return t2.tool_types(domain)[0]


def _failed(message: dict[str, Any]) -> bool:
    # Archives write the flag as a bool or as the strings "True" / "False".
    flag = message.get("error")
    return flag not in (None, False, "False", "false", "", 0)


def conversation_before(messages: Sequence[dict[str, Any]], end: int) -> Conversation:
    """The agent-visible conversation of ``messages[:end]`` (recorded tool results kept)."""
    calls: dict[str, ToolCallView] = {}
    conv = Conversation()
    for message in messages[:end]:
        role = message.get("role")
        content = message.get("content")
        text = content if isinstance(content, str) else (json.dumps(content) if content is not None else None)
        if role in ("assistant", "user"):
            if text:
                conv.add(ConversationEvent(kind="agent_message" if role == "assistant" else "user_message", content=text))
            for call in message.get("tool_calls") or []:
                view = ToolCallView(id=str(call.get("id", "")), name=str(call.get("name")), arguments=dict(call.get("arguments") or {}),
                                    requestor="assistant" if role == "assistant" else "user")
                calls[view.id] = view
                if role == "assistant":  # the agent's view: no user-side tool calls
                    conv.add(ConversationEvent(kind="agent_tool_call", tool_call=view))
        elif role == "tool":
            answered = calls.get(str(message.get("id", "")))
            if answered is not None and answered.requestor == "assistant":
                conv.add(ConversationEvent(kind="tool_result", tool_call=answered, content=text, error=_failed(message)))
    return conv


@cache
def _simulations(path: str) -> list[dict[str, Any]]:
    return read_simulations(Path(path))


def task_cluster(sim: dict[str, Any], recorded: str | None) -> str:
    """The task a simulation ran on, from its recorded gold action ids, else its task id."""
    checks = (sim.get("reward_info") or {}).get("action_checks") or []
    for check in checks:
        action_id = str(((check or {}).get("action") or {}).get("action_id") or "")
        if "_" in action_id:
            return action_id.rsplit("_", 1)[0]
    return recorded if recorded is not None else f"sim:{sim.get('id')}"


def missing_requirements(domain: str, conv: Conversation, call: ToolCallView, state: DecisionState) -> list[str]:
    """What the write contract requires before ``call`` and the checkpoint lacks:
    ``read:<tool>`` for each target / prior read not made successfully, ``confirmation``
    when the write needs the user's explicit yes and none is in the conversation."""
    rule = contract(domain).rule(call.name)
    if rule is None:
        return []
    made = set(state.reads)
    missing = [f"read:{t.read}" for t in rule.targets if call.arguments.get(t.argument) and t.read not in made]
    missing += [f"read:{p.tool}" for p in rule.prior if p.tool not in made]
    if rule.confirmation is not None and not _confirmed(domain, conv, call):
        missing.append("confirmation")
    return list(dict.fromkeys(missing))


def _confirmed(domain: str, conv: Conversation, call: ToolCallView) -> bool:
    # The neutral dialogue judge (tauguard.dialogue, the one that scores process metrics).
    from tauguard.dialogue import NEUTRAL, view_of

    finding = NEUTRAL.confirmation(domain, view_of(conv), call)
    return finding.confirmed or not finding.needed


def label_of(write: LabelledWrite, missing: list[str]) -> tuple[str, str]:
    """(classifier label, label source) of a benchmark write."""
    if write.label == "violates":
        return "refuse", "benchmark:violates"
    if write.label == "ambiguous":
        return "verify", "benchmark:ambiguous"
    if missing:
        return "verify", "benchmark:complies+missing:" + ",".join(missing)
    return "allow", "benchmark:complies"


def real_state(write: LabelledWrite, directory: Path | None = None) -> tuple[LabelledState, str]:
    """The labelled decision state of one benchmark write, and its label source."""
    path = (directory or trajectories_dir()) / write.source.file
    if not path.is_file():
        raise RealStatesError(f"real trajectory file '{path}' not found (set TAUGUARD_TRAJECTORIES to the folder holding it)")
    sims = _simulations(str(path))
    sim = sims[write.source.sim_index]
    messages = sim.get("messages") or []
    call = ToolCallView(name=write.write.name, arguments=write.write.arguments)
    conv = conversation_before(messages, write.write.message_index)
    state = build_state(write.domain, conv, call, tool_types(write.domain))
    label, source = label_of(write, missing_requirements(write.domain, conv, call, state) if write.label == "complies" else [])
    pool = {c.id for c in clause_pool(write.domain)}
    gold = [c for c in write.clauses if c in pool][:1]
    return LabelledState(
        probe_id=write.id,
        task_id=task_cluster(sim, write.source.task_id),
        label=label,
        fault_class=None,
        gold_ids=gold,
        clause=write.clauses[0] if write.clauses else "",
        state=state,
    ), source


def real_probe_set(domain: str, writes: Sequence[LabelledWrite] | None = None, directory: Path | None = None) -> ProbeSet:
    """Every labelled benchmark write of ``domain`` as a probe set of real decision states."""
    import hashlib

    chosen = [w for w in (writes if writes is not None else load_labels()) if w.domain == domain and w.label is not None]
    if not chosen:
        raise RealStatesError(f"no labelled real write of domain '{domain}' (real writes exist for airline and retail)")
    examples = [real_state(w, directory)[0] for w in chosen]
    digest = hashlib.sha256("\n".join(sorted(w.model_dump_json() for w in chosen)).encode("utf-8")).hexdigest()
    return ProbeSet(path=f"real-write benchmark ({domain})", domain=domain, sha256=digest, examples=examples,
                    unmatched_clauses=sum(1 for e in examples if e.clause and not e.gold_ids), simulated=False)


def task_split(probe_set: ProbeSet, *, test_fraction: float = 0.3, seed: int = 0) -> tuple[ProbeSet, ProbeSet]:
    """A train / test split of whole task clusters (no task in both), as the paper's
    ``task_id``-grouped split (§2 "Task and data"); deterministic for a seed."""
    from sklearn.model_selection import GroupShuffleSplit

    groups = [e.task_id for e in probe_set.examples]
    splitter = GroupShuffleSplit(n_splits=1, test_size=test_fraction, random_state=seed)
    train_idx, test_idx = next(splitter.split(probe_set.examples, groups=groups))

    def part(indices: Any, name: str) -> ProbeSet:
        examples = [probe_set.examples[i] for i in sorted(indices)]
        return probe_set.model_copy(update={"path": f"{probe_set.path} {name} (seed {seed})", "examples": examples})

    return part(train_idx, "train"), part(test_idx, "test")


@cache
def _benchmark_index() -> dict[tuple[str, int, int], LabelledWrite]:
    index: dict[tuple[str, int, int], LabelledWrite] = {}
    for w in load_labels():
        if w.source.simulation_id and w.label is not None:
            index.setdefault((w.source.simulation_id, w.write.message_index, w.write.call_index), w)
    return index


def benchmark_probe_label(domain: str, simulation_id: str | None, message_index: int, call_index: int,
                          conversation: Conversation, call: ToolCallView, tool_types_: dict[str, str]) -> tuple[str, str, str] | None:
    """(label, clause text, label source) of a recorded write that is in the real-write
    benchmark (matched by τ²'s simulation id and the write's position), else None."""
    from tauguard.classifier.clauses import clause_text

    write = _benchmark_index().get((simulation_id or "", message_index, call_index))
    if write is None or write.domain != domain or write.write.name != call.name:
        return None
    missing: list[str] = []
    if write.label == "complies":
        missing = missing_requirements(domain, conversation, call, build_state(domain, conversation, call, tool_types_))
    label, source = label_of(write, missing)
    pool = {c.id for c in clause_pool(domain)}
    cid = next((c for c in write.clauses if c in pool), None)
    return label, clause_text(domain, cid) if cid else "", f"{source} ({write.id})"
