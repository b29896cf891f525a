"""Dialogue evidence: the one judge of what the user said (explicit yes, polarity, stated reasons).

Every consumer asks the same judge: the guards (action-guard, workflow; chosen per run by their
``dialogue`` strategy option), the process rubric that scores every trial (always the compiled
judge, so the process metrics never depend on a treatment's own code), the sim agent and the sim
user. Which writes need a yes and what a statement must convey come from the write contract
(``tauguard/domains/<domain>/writes.toml``). Backends:

- ``compiled`` (:class:`CompiledJudge`): deterministic, no model;
- ``llm`` (:class:`tauguard.dialogue.llm.LLMJudge`): one call per question,
  :func:`tauguard.llm_call.structured`, role ``guard``.

Calibration on labelled real exchanges: :mod:`.cases`, :mod:`.evaluate`, ``tauguard dialogue eval``.
Imports neither tau2 nor litellm.
"""

from __future__ import annotations

from typing import Any, Literal

from tauguard.dialogue.judge import (
    CompiledJudge,
    DialogueJudge,
    Finding,
    Pairing,
    asks_go_ahead,
    needs_confirmation,
)
from tauguard.dialogue.polarity import POLARITIES, Polarity, polarity
from tauguard.dialogue.reasons import Reason, reason_kind
from tauguard.dialogue.version import COMPILED_VERSION
from tauguard.dialogue.view import DialogueView, conversation_of_messages, view_of

Backend = Literal["compiled", "llm"]
BACKENDS: tuple[Backend, ...] = ("compiled", "llm")

#: The judge that scores the process-compliance metrics of every run (never a guard's own).
NEUTRAL = CompiledJudge()


def judge(backend: Backend = "compiled", model: str | None = None, llm_args: dict[str, Any] | None = None) -> DialogueJudge:
    """The dialogue judge of ``backend`` (``llm`` needs ``model``, a litellm model string)."""
    if backend == "compiled":
        return NEUTRAL
    if backend == "llm":
        if not model:
            raise ValueError("the llm dialogue judge needs a model (--guard-llm)")
        from tauguard.dialogue.llm import LLMJudge

        return LLMJudge(model, llm_args)
    raise ValueError(f"unknown dialogue judge backend '{backend}'; allowed: {', '.join(BACKENDS)}")


def neutral_label() -> str:
    """``compiled/N+HASH`` of the judge that scores the process metrics (stored on each report)."""
    return NEUTRAL.label


__all__ = [
    "BACKENDS", "COMPILED_VERSION", "NEUTRAL", "POLARITIES", "Backend", "CompiledJudge", "DialogueJudge",
    "DialogueView", "Finding", "Pairing", "Polarity", "Reason", "asks_go_ahead", "conversation_of_messages",
    "judge", "needs_confirmation", "neutral_label", "polarity", "reason_kind", "view_of",
]
