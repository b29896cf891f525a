"""The classifier gate (per domain) and its per-simulation session.

allow -> ALLOW; verify -> VERIFY naming the reads the write contract derives for the write and
the evidence lacks; refuse -> BLOCK citing the best retrieved clause in the gated tool's scope
(:mod:`tauguard.classifier.scope`; with neither ground, the call is allowed -- see ``_decision``).
An LLM backend that fails (transport error, timeout, unparseable answer) holds the call
(VERIFY with rule id ``guard.error.classifier_llm``): fail-closed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tauguard.classifier.clauses import clause_pool, clause_text
from tauguard.errors import TauguardInputError
from tauguard.classifier.model import Artifact, decide, load_artifact
from tauguard.classifier.retrieval import Retriever, make_retriever
from tauguard.classifier.scope import clause_scope, contract_reads, in_scope
from tauguard.classifier.state import WITH_POLICY, DecisionState, build_state, render
from tauguard.strategy_api.conversation import Conversation, ToolCallView
from tauguard.strategy_api.guard import GUARD_ERROR_RULE, GuardDecision, GuardSession, GuardUsage, ReadRequest, SessionContext, Verdict

LLM_ERROR_RULE = f"{GUARD_ERROR_RULE}.classifier_llm"
VERDICTS = {"allow": Verdict.ALLOW, "verify": Verdict.VERIFY, "refuse": Verdict.BLOCK}


def default_artifact(domain: str) -> str:
    """The packaged artifact trained on real agents' states of ``domain``."""
    from tauguard.classifier.operating import DEFAULT_DOMAINS, default_artifact_path

    path = default_artifact_path(domain)
    if not path.is_file():
        raise TauguardInputError(
            f"no default classifier artifact for domain '{domain}' (real-state defaults: {', '.join(DEFAULT_DOMAINS)}); "
            "give --strategy-option artifact=PATH (tauguard classifier train)"
        )
    return str(path)


@dataclass
class Gate:
    """What a session needs to decide: a retriever, and an artifact unless the LLM decides."""

    domain: str
    retriever: Retriever
    k: int
    artifact: Artifact | None = None

    @classmethod
    def build(cls, domain: str, options: Any, *, use_llm: bool) -> "Gate":
        """Load the artifact (checked against the domain and representation) or build the
        LLM backend's retriever. TauguardInputError subclasses on bad options."""
        if use_llm:
            retriever = make_retriever(options.retriever or "bm25", clause_pool(domain), options.encoder)
            return cls(domain, retriever, options.k)
        # "{domain}" in the path picks one artifact per domain (a run over several domains).
        path = options.artifact.replace("{domain}", domain) if options.artifact else default_artifact(domain)
        artifact = load_artifact(Path(path), domain=domain, representation=options.representation)
        return cls(domain, artifact.retriever(options.retriever, options.encoder), options.k, artifact)

    def rank(self, state: DecisionState) -> list[str]:
        """Every pool clause id, best first for the state's request + evidence."""
        return self.retriever.rank(state.query())

    def texts(self, ids: list[str]) -> list[tuple[str, str]]:
        """The first k of ``ids`` with their texts."""
        return [(cid, clause_text(self.domain, cid)) for cid in ids[: self.k]]


def _decision(label: str, state: DecisionState, ranking: list[str], clause_id: str | None, evidence: dict[str, Any]) -> GuardDecision:
    """The verdict of ``label``, citing only clauses in the gated tool's scope.

    ``ranking`` is the retriever's order of the whole pool; ``clause_id`` the clause a backend
    named (None: none, or one outside the scope). The cited clause is that clause, else the best
    ranked one in scope. A refuse with no clause in scope, and a verify with no read the
    contract derives for the write, have no policy ground the agent could act on: they allow,
    and the evidence keeps the backend's label and why it was not followed.
    """
    tool = state.action.name
    cited = clause_id or next(iter(in_scope(state.domain, tool, ranking)), None)
    evidence = {**evidence, "cited": cited}
    if label == "refuse" and cited is not None:
        return GuardDecision(
            verdict=Verdict.BLOCK,
            rule_id=cited,
            reason=f"the classifier refuses {tool} under the policy: {clause_text(state.domain, cited)}",
            remediation="Do not perform this action; explain the policy to the user or transfer to a human agent.",
            evidence=evidence,
        )
    reads = contract_reads(state) if label == "verify" else []
    if label == "verify" and reads:
        rule = reads[0].clause or cited
        requests = [ReadRequest(tool=r.tool, arguments=r.arguments, why=r.why) for r in reads]
        policy = f" (policy: {clause_text(state.domain, rule)})" if rule else ""
        return GuardDecision(
            verdict=Verdict.VERIFY,
            rule_id=rule,
            reason=f"the classifier asks to verify before {tool}{policy}",
            remediation=f"Read first: {'; '.join(r.describe() for r in requests)}.",
            required_reads=requests,
            evidence=evidence,
        )
    if label == "refuse":
        evidence["not_followed"] = f"no clause in the scope of {tool}"
    elif label == "verify":
        evidence["not_followed"] = f"no read the contract derives for {tool} is missing"
    return GuardDecision(verdict=Verdict.ALLOW, rule_id=cited, evidence=evidence)


class ClassifierSession(GuardSession):
    """Gates each WRITE with the classifier."""

    def __init__(self, context: SessionContext, gate: Gate) -> None:
        self.context = context
        self.gate = gate

    def before_write(self, call: ToolCallView, conversation: Conversation) -> GuardDecision:
        state = build_state(self.context.domain, conversation, call, self.context.tool_types)
        ranking = self.gate.rank(state)
        artifact = self.gate.artifact
        if artifact is not None:
            # The artifact was trained on the unscoped top-k (train_policy "retrieved"), so it
            # is given that input; only what the decision cites is restricted to the scope.
            clauses = self.gate.texts(ranking)
            retrieved = [cid for cid, _ in clauses]
            rep = artifact.meta.representation
            policy = "\n".join(text for _, text in clauses) if rep in WITH_POLICY else ""
            text = render(state, rep, policy)
            classes, rows = artifact.probabilities([text])
            probabilities = rows[0]
            label = decide(classes, probabilities, artifact.meta.allow_threshold)
            evidence = {
                "backend": "sklearn",
                "label": label,
                "representation": rep,
                "retrieved": retrieved,
                "probabilities": {c: round(float(p), 4) for c, p in zip(classes, probabilities)},
            }
            return _decision(label, state, ranking, None, evidence)
        from tauguard.classifier.llm import classify_llm

        # A model with no training input to match is shown only clauses it may cite.
        clauses = self.gate.texts(in_scope(self.context.domain, call.name, ranking))
        retrieved = [cid for cid, _ in clauses]
        assert self.context.guard_llm is not None
        result = classify_llm(self.context.guard_llm, self.context.guard_llm_args, state, clauses)
        if result.answer is None:
            return GuardDecision(
                verdict=Verdict.VERIFY,
                rule_id=LLM_ERROR_RULE,
                reason=f"the classifier model failed ({result.failure}); the call is held",
                remediation="Retry the call; if it keeps failing, transfer to a human agent.",
                evidence={"backend": "llm", "failure": result.failure, "retrieved": retrieved},
                usage=result.usage,
                raw=result.raw,
            )
        answer = result.answer
        clause_id = answer.clause_id if answer.clause_id in clause_scope(self.context.domain, call.name) else None
        evidence = {"backend": "llm", "label": answer.decision, "retrieved": retrieved, "missing": answer.missing, "model_reason": answer.reason}
        decision = _decision(answer.decision, state, ranking, clause_id, evidence)
        return decision.model_copy(update={"usage": result.usage, "raw": result.raw})


__all__ = ["ClassifierSession", "Gate", "GuardUsage"]
