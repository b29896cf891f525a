"""Calibration of a dialogue judge on labelled real exchanges (:mod:`tauguard.dialogue.cases`).

For each case the judge reads the conversation up to the write (the one shipped with the case,
:mod:`tauguard.dialogue.context`; else from the τ² results file the case names, when it is found)
and answers: does this (statement, reply) pair explicitly
confirm this write, in force when the write is made? The positive class is ``confirmed``;
``ambiguous`` cases are left out and counted; ``repeat`` cases (a write identical to one that
already succeeded) are scored apart from the headline. A case whose conversation file is not found
is judged on its own statement, reply and write (counted as ``without_conversation``).

Besides the pairs, the same cases are scored per write (``writes``): a write is confirmed when
any of its labelled pairs is, and predicted confirmed when the judge pairs it with any of them.
That is the decision a guard and the process rubric take (was this write confirmed at all?),
restricted to the pairs that were labelled; repeats and ambiguous cases are left out as above.

Every figure is also given per source file (``by_source``, ``writes_by_source``) and per split
(``by_split``: the development files and the sealed ones, :mod:`.sealed`); ``split`` restricts the
whole evaluation to one of them (the development figures leave the sealed files out).

This module imports neither tau2 nor litellm.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from tauguard.strategy_api.conversation import ToolCallView
from tauguard.dialogue.cases import ConfirmationCase, read_simulations
from tauguard.dialogue.context import PackagedContexts
from tauguard.dialogue.judge import DialogueJudge
from tauguard.dialogue.rules import Rejection, rejection
from tauguard.dialogue.sealed import Split, in_split, sealed_files
from tauguard.dialogue.view import conversation_of_messages, view_of


class Confusion(BaseModel):
    """Counts of one slice (all cases, or one case type)."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    def add(self, predicted: bool, actual: bool) -> None:
        """Count one judged case."""
        if predicted and actual:
            self.tp += 1
        elif predicted:
            self.fp += 1
        elif actual:
            self.fn += 1
        else:
            self.tn += 1

    @property
    def precision(self) -> float | None:
        """tp / (tp + fp); None with no positive prediction."""
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        """tp / (tp + fn); None with no positive case."""
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None


class CaseResult(BaseModel):
    """One judged case."""

    id: str
    case_type: str
    label: str
    predicted: bool
    source: str = ""  # the τ² results file the case is read from
    rule: str = ""  # a miss: the rule that rejected the pair; a false positive: "taken"
    detail: str = ""  # what decided it (the rejection's detail)
    sealed: bool = False  # a case of the sealed split (its error is not read while designing rules)


class Evaluation(BaseModel):
    """A judge's scores on a set of labelled cases."""

    judge: str
    cases: int
    ambiguous: int = 0
    without_conversation: int = 0
    packaged_conversation: int = 0  # judged on the conversation shipped with the case
    overall: Confusion = Field(default_factory=Confusion)  # every case but the repeats
    writes: Confusion = Field(default_factory=Confusion)  # per write: any labelled pair (repeats left out)
    repeats: Confusion = Field(default_factory=Confusion)  # writes identical to an earlier successful one
    by_case_type: dict[str, Confusion] = Field(default_factory=dict)
    by_labeller: dict[str, Confusion] = Field(default_factory=dict)  # repeats left out
    split: Split = "all"  # which cases were scored (all, the development files, the sealed files)
    by_source: dict[str, Confusion] = Field(default_factory=dict)  # per pair, per source file (repeats left out)
    writes_by_source: dict[str, Confusion] = Field(default_factory=dict)  # per write, per source file
    by_split: dict[str, Confusion] = Field(default_factory=dict)  # per pair: development / sealed
    writes_by_split: dict[str, Confusion] = Field(default_factory=dict)  # per write: development / sealed
    errors: list[CaseResult] = Field(default_factory=list)  # the cases it got wrong
    plumbing_only: bool = False  # the LLM backend run against a stand-in server: scores mean nothing


class Conversations:
    """The conversations the cases are judged on: shipped with the case, else from the results
    files the cases name (read once each)."""

    def __init__(self, directories: Sequence[Path]) -> None:
        self.directories = list(directories)
        self.files: dict[str, list[dict[str, Any]] | None] = {}
        self.packaged = PackagedContexts()

    def messages(self, case: ConfirmationCase) -> list[dict[str, Any]] | None:
        """The case's messages (at least through its write): the shipped ones, else its source's."""
        shipped = self.packaged.messages(case)
        return shipped if shipped is not None else self._from_source(case)

    def shipped(self, case: ConfirmationCase) -> bool:
        """Whether the case's conversation ships with it (and is the one its provenance names)."""
        return self.packaged.messages(case) is not None

    def _from_source(self, case: ConfirmationCase) -> list[dict[str, Any]] | None:
        name = case.source.file
        if name not in self.files:
            path = next((d / name for d in self.directories if (d / name).exists()), None)
            self.files[name] = read_simulations(path) if path is not None else None
        sims = self.files[name]
        if sims is None or case.source.sim_index >= len(sims):
            return None
        messages = sims[case.source.sim_index].get("messages") or []
        return messages if len(messages) > case.write.message_index else None


_Conversations = Conversations  # the name the tests used


def _alone(case: ConfirmationCase) -> list[dict[str, Any]]:
    """A three-message conversation: the statement, the reply, the write."""
    call = {"id": "w", "name": case.write.name, "arguments": case.write.arguments}
    return [
        {"role": "assistant", "content": case.statement.content},
        {"role": "user", "content": case.reply.content},
        {"role": "assistant", "content": None, "tool_calls": [call]},
    ]


def judge_case(judge: DialogueJudge, case: ConfirmationCase, messages: list[dict[str, Any]] | None) -> bool:
    """Whether ``judge`` finds that the case's pair confirms its write."""
    return judge_case_why(judge, case, messages)[0]


def judge_case_why(judge: DialogueJudge, case: ConfirmationCase,
                   messages: list[dict[str, Any]] | None) -> tuple[bool, Rejection | None]:
    """Whether ``judge`` finds that the case's pair confirms its write and, when not, why (the pair's
    :class:`~tauguard.dialogue.rules.Rejection`; None when the backend gives no reason)."""
    if messages is None:
        messages, s_idx, r_idx, w_idx, c_idx = _alone(case), 0, 1, 2, 0
    else:
        s_idx, r_idx = case.statement.message_index, case.reply.message_index
        w_idx, c_idx = case.write.message_index, case.write.call_index
    conv, where = conversation_of_messages(messages[: w_idx + 1])
    at = where.get((w_idx, c_idx))
    statement_at, reply_at = where.get((s_idx, -1)), where.get((r_idx, -1))
    if at is None or statement_at is None or reply_at is None:
        return False, rejection("no_pair", "the case's statement, reply or write is not in its conversation")
    call = conv.events[at].tool_call or ToolCallView(name=case.write.name, arguments=case.write.arguments)
    finding = judge.confirmation(case.domain, view_of(conv), call, at)
    if any(p.statement_at == statement_at and p.reply_at == reply_at for p in finding.pairs):
        return True, None
    return False, finding.rejection_of(statement_at, reply_at)


def source_of(case: ConfirmationCase) -> str:
    """The source file a case is read from, without its extensions (``airline_..._user-gpt-4.1``)."""
    return case.source.file.split(".json")[0]


def split_of(case: ConfirmationCase) -> str:
    """``sealed`` or ``development``: the split of the case's source file."""
    return "sealed" if case.source.file in sealed_files() else "development"


def evaluate(judge: DialogueJudge, cases: Sequence[ConfirmationCase], trajectories: Sequence[Path] = (),
             plumbing_only: bool = False, split: Split = "all") -> Evaluation:
    """Score ``judge`` on labelled ``cases`` (conversations read from the ``trajectories`` folders),
    restricted to ``split`` (all, the development files or the sealed ones)."""
    found = Conversations(trajectories)
    cases = [c for c in cases if in_split(c.source.file, split)]
    label = getattr(judge, "label", f"{judge.name}/{judge.version}")
    result = Evaluation(judge=label, cases=len(cases), plumbing_only=plumbing_only, split=split)
    per_write: dict[tuple[str, int, int, int], tuple[bool, bool]] = {}
    for case in cases:
        if case.label not in ("confirmed", "not_confirmed"):
            result.ambiguous += 1
            continue
        messages = found.messages(case)
        if messages is None:
            result.without_conversation += 1
        result.packaged_conversation += found.shipped(case)
        predicted, why = judge_case_why(judge, case, messages)
        actual = case.label == "confirmed"
        kind = case.case_type or "other"
        if kind == "repeat":
            # whether an earlier yes covers a no-op repeat is a convention: kept out of the headline
            result.repeats.add(predicted, actual)
        else:
            result.overall.add(predicted, actual)
            key = (case.source.file, case.source.sim_index, case.write.message_index, case.write.call_index)
            was = per_write.get(key, (False, False))
            per_write[key] = (was[0] or predicted, was[1] or actual)
            result.by_labeller.setdefault(case.labeller or "unknown", Confusion()).add(predicted, actual)
            result.by_source.setdefault(source_of(case), Confusion()).add(predicted, actual)
            result.by_split.setdefault(split_of(case), Confusion()).add(predicted, actual)
        result.by_case_type.setdefault(kind, Confusion()).add(predicted, actual)
        if predicted != actual:
            result.errors.append(CaseResult(id=case.id, case_type=kind, label=case.label, predicted=predicted,
                                            source=source_of(case), sealed=split_of(case) == "sealed",
                                            rule="taken" if predicted else (why.rule if why else "unknown"),
                                            detail=why.detail if why else ""))
    sealed = {f.split(".json")[0] for f in sealed_files()}
    for (file, *_), (predicted, actual) in per_write.items():
        result.writes.add(predicted, actual)
        stem = file.split(".json")[0]
        result.writes_by_source.setdefault(stem, Confusion()).add(predicted, actual)
        result.writes_by_split.setdefault("sealed" if stem in sealed else "development", Confusion()).add(predicted, actual)
    result.by_case_type = dict(sorted(result.by_case_type.items()))
    result.by_labeller = dict(sorted(result.by_labeller.items()))
    result.by_source = dict(sorted(result.by_source.items()))
    result.writes_by_source = dict(sorted(result.writes_by_source.items()))
    result.by_split = dict(sorted(result.by_split.items()))
    result.writes_by_split = dict(sorted(result.writes_by_split.items()))
    return result
