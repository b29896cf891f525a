"""The classifier gate (per domain) and its per-simulation session.

allow -> ALLOW; verify -> VERIFY naming the reads the evidence lacks when it can (an id
argument no successful read has returned); refuse -> BLOCK citing the retrieved clause id.
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
from tauguard.classifier.state import WITH_POLICY, DecisionState, build_state, missing_reads, render
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

    def retrieve(self, state: DecisionState) -> list[tuple[str, str]]:
        """The top-k clauses (id, text) for the state's request + evidence."""
        return [(cid, clause_text(self.domain, cid)) for cid in self.retriever.rank(state.query())[: self.k]]


def _decision(label: str, state: DecisionState, clauses: list[tuple[str, str]], clause_id: str | None, evidence: dict[str, Any]) -> GuardDecision:
    cited = clause_id or (clauses[0][0] if clauses else None)
    text = dict(clauses).get(cited or "", "") or (clause_text(state.domain, cited) if cited else "")
    if label == "allow":
        return GuardDecision(verdict=Verdict.ALLOW, rule_id=cited, evidence=evidence)
    if label == "refuse":
        return GuardDecision(
            verdict=Verdict.BLOCK,
            rule_id=cited,
            reason=f"the classifier refuses {state.action.name} under the policy: {text}",
            remediation="Do not perform this action; explain the policy to the user or transfer to a human agent.",
            evidence=evidence,
        )
    reads = [ReadRequest(tool=tool, arguments=args, why=why) for tool, args, why in missing_reads(state)]
    what = "; ".join(f"{r.tool}({', '.join(f'{k}={v}' for k, v in (r.arguments or {}).items())})" for r in reads)
    return GuardDecision(
        verdict=Verdict.VERIFY,
        rule_id=cited,
        reason=f"the classifier asks to verify before {state.action.name} (policy: {text})",
        remediation=f"Read first: {what}." if reads else "Obtain the missing facts (read them, or get the user's explicit confirmation) and retry.",
        required_reads=reads,
        evidence=evidence,
    )


class ClassifierSession(GuardSession):
    """Gates each WRITE with the classifier."""

    def __init__(self, context: SessionContext, gate: Gate) -> None:
        self.context = context
        self.gate = gate

    def before_write(self, call: ToolCallView, conversation: Conversation) -> GuardDecision:
        state = build_state(self.context.domain, conversation, call, self.context.tool_types)
        clauses = self.gate.retrieve(state)
        retrieved = [cid for cid, _ in clauses]
        artifact = self.gate.artifact
        if artifact is not None:
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
            return _decision(label, state, clauses, None, evidence)
        from tauguard.classifier.llm import classify_llm

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
        pool_ids = {c.id for c in clause_pool(self.context.domain)}
        clause_id = answer.clause_id if answer.clause_id in pool_ids else None
        evidence = {"backend": "llm", "label": answer.decision, "retrieved": retrieved, "missing": answer.missing, "model_reason": answer.reason}
        decision = _decision(answer.decision, state, clauses, clause_id, evidence)
        return decision.model_copy(update={"usage": result.usage, "raw": result.raw})


__all__ = ["ClassifierSession", "Gate", "GuardUsage"]
