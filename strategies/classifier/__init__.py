"""`classifier` strategy: a learned pre-action gate over a structured decision state (issue 14).

After ``shared/papers/classifier-gate_when-retrieval-metrics-mislead.md``. Before each WRITE the
session builds the decision state from the agent-visible conversation, retrieves the
applicable clause from the domain's clause table and classifies the call allow / verify /
refuse with a trained scikit-learn artifact (``tauguard classifier train``) or, with
``--guard-llm``, an LLM answering in JSON. Library code: :mod:`tauguard.classifier`.
"""

from __future__ import annotations

from tauguard_strategies.classifier.session import ClassifierSession
from tauguard_strategies.classifier.strategy import ClassifierOptions, ClassifierStrategy

__all__ = ["ClassifierOptions", "ClassifierSession", "ClassifierStrategy"]
