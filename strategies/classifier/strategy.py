"""`classifier`: the strategy class and its options."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tauguard.classifier.state import Representation
from tauguard.errors import TauguardInputError
from tauguard.strategy_api.guard import GuardSession, SessionContext, Strategy
from tauguard_strategies.classifier.session import ClassifierSession, Gate


class ClassifierOptions(BaseModel):
    """Options of the classifier strategy (``--strategy-option KEY=VALUE``)."""

    model_config = ConfigDict(extra="forbid")

    artifact: str | None = Field(default=None, description="path of a trained artifact (tauguard classifier train; '{domain}' in it is replaced by each run domain); default: the packaged artifact trained on real agents' states (airline, retail)")
    backend: Literal["auto", "sklearn", "llm"] = Field(default="auto", description="auto: the LLM backend when --guard-llm is set, else the artifact")
    representation: Representation | None = Field(default=None, description="expected representation; an artifact trained on another one is an error")
    retriever: Literal["bm25", "tfidf", "minilm", "encoder"] | None = Field(default=None, description="clause retriever (default: the artifact's, else bm25)")
    encoder: str | None = Field(default=None, description="local sentence-transformers model directory for retriever=encoder (never downloaded)")
    k: int = Field(default=1, ge=1, le=10, description="retrieved clauses put into the policy field (the paper uses the top-1)")


class ClassifierStrategy(Strategy):
    """Learned pre-action gate: structured decision state + retrieved clause -> allow / verify / refuse (scikit-learn artifact, or an LLM with --guard-llm)."""

    options_model = ClassifierOptions
    session_class = ClassifierSession
    options: ClassifierOptions

    def __init__(self, options: object = None) -> None:
        super().__init__(options)  # type: ignore[arg-type]
        self._gates: dict[tuple[str, bool], Gate] = {}

    def _gate(self, domain: str, use_llm: bool) -> Gate:
        key = (domain, use_llm)
        if key not in self._gates:
            self._gates[key] = Gate.build(domain, self.options, use_llm=use_llm)
        return self._gates[key]

    def check_domains(self, domains: list[str]) -> None:
        """Load the artifact (or the retriever) for every domain before any work."""
        if self.options.backend == "llm":
            for domain in domains:
                self._gate(domain, True)
            return
        from tauguard.classifier.operating import default_artifact_path

        for domain in domains:
            # backend auto without an artifact may still use --guard-llm (unknown here) in a
            # domain with no packaged default: that case is decided when the session starts.
            if self.options.artifact or self.options.backend == "sklearn" or default_artifact_path(domain).is_file():
                self._gate(domain, False)

    def new_session(self, context: SessionContext) -> GuardSession:
        use_llm = self.options.backend == "llm" or (self.options.backend == "auto" and bool(context.guard_llm))
        if use_llm and not context.guard_llm:
            raise TauguardInputError("strategy 'classifier' with backend=llm needs --guard-llm MODEL")
        return ClassifierSession(context, self._gate(context.domain, use_llm))
