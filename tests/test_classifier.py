"""The classifier gate's library parts without tau2: decision state, clause pool, retrievers,
metrics, artifact, and the live session's verdict mapping."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import f1_score

from tauguard.classifier import clauses as cl
from tauguard.classifier.dataset import LabelledState, ProbeSet, ProbeSetError, check_disjoint, check_usable
from tauguard.classifier.metrics import paired_delta, score
from tauguard.classifier.model import ArtifactError, inputs, load_artifact, train_artifact
from tauguard.classifier.retrieval import RetrieverError, make_retriever
from tauguard.classifier.scope import clause_scope, contract_reads, in_scope
from tauguard.classifier.state import build_state, read_map, render
from tauguard.domains import DOMAINS
from tauguard.strategy_api.conversation import Conversation, ToolCallView
from tauguard.strategy_api.guard import SessionContext, Verdict
from tauguard.probes.model import Probe
from tauguard_strategies.classifier import ClassifierOptions
from tauguard_strategies.classifier.session import ClassifierSession, Gate
from tauguard_strategies.action_guard.builder import ConversationBuilder

TYPES = {"get_reservation_details": "READ", "get_user_details": "READ", "search_direct_flight": "READ", "cancel_reservation": "WRITE"}
RESERVATION = {"reservation_id": "XEHM4B", "user_id": "daiki_1", "cabin": "basic_economy", "insurance": "no", "flights": [{"status": "landed"}]}


def conversation(*, read: bool = True, confirm: bool = True) -> Conversation:
    b = ConversationBuilder().user("Please cancel XEHM4B. My user id is daiki_1.")
    b.tool("get_user_details", {"user_id": "nobody"}, "Error: user not found", error=True)
    b.tool("search_direct_flight", {"origin": "LAS"}, [{"flight_number": "HAT1", "price": 5}])
    if read:
        b.tool("get_reservation_details", {"reservation_id": "XEHM4B"}, RESERVATION)
    if confirm:
        b.confirm("cancel_reservation", {"reservation_id": "XEHM4B"})
    return b.build()


CALL = ToolCallView(name="cancel_reservation", arguments={"reservation_id": "XEHM4B"})


def test_state_uses_only_successful_reads_and_the_first_user_turn() -> None:
    state = build_state("airline", conversation(), CALL, TYPES)
    assert state.request.startswith("Please cancel XEHM4B")
    assert state.latest_user_turn != state.request  # the confirmation
    assert state.reads == ["search_direct_flight", "get_reservation_details"]  # the failed read is no evidence
    facts = {(f.key, f.value) for f in state.evidence}
    assert ("cabin", "basic_economy") in facts and ("flights.status", "landed") in facts
    assert not any(f.source == "search_direct_flight" for f in state.evidence)  # catalogue browsing
    assert state.action_class == "WRITE"
    assert "cabin: basic_economy" in state.query() and "Please cancel" in state.query()


def test_representations_differ_only_as_the_paper_defines() -> None:
    state = build_state("airline", conversation(), CALL, TYPES)
    raw, masked = render(state, "raw"), render(state, "masked")
    assert "basic_economy" in raw and "basic_economy" not in masked
    assert "<get_reservation_details:result>" in masked and "<get_user_details:error>" in masked
    assert render(state, "raw+policy", "POLICY TEXT") == raw + "\nPOLICY: POLICY TEXT"
    structured = render(state, "structured", "Basic economy flights cannot be modified.")
    for field in ("REQUEST:", "EVIDENCE", "POLICY: Basic economy", "ACTION: write cancel_reservation"):
        assert field in structured
    assert len(structured) < len(raw) + 200
    with pytest.raises(ValueError):
        render(state, "bogus")  # type: ignore[arg-type]


def test_contract_reads_name_the_target_read_of_an_unobserved_id() -> None:
    assert contract_reads(build_state("airline", conversation(), CALL, TYPES)) == []
    missing = contract_reads(build_state("airline", conversation(read=False), CALL, TYPES))
    assert [(r.tool, r.arguments, r.clause) for r in missing] == [
        ("get_reservation_details", {"reservation_id": "XEHM4B"}, "airline.reservation_owner")
    ]
    # user_id is an entity but no target of a cancellation: the contract derives no read of it
    call = ToolCallView(name="cancel_reservation", arguments={"reservation_id": "XEHM4B", "user_id": "someone_else"})
    assert [r.tool for r in contract_reads(build_state("airline", conversation(read=False), call, TYPES))] == ["get_reservation_details"]


@pytest.mark.parametrize("domain", ["airline", "retail"])
def test_clause_scope_is_the_packs_tool_scope_and_the_contracts_clauses(domain: str) -> None:
    from tauguard.domains.contract import contract

    pool = cl.clause_pool(domain)
    for rule in contract(domain).write:
        scope = clause_scope(domain, rule.tool)
        assert rule.clause_ids() <= scope
        assert {c.id for c in pool if rule.tool in c.tools} <= scope
        assert all(rule.tool in c.tools or c.id in rule.clause_ids() for c in pool if c.id in scope)
    ranking = [c.id for c in pool]
    assert "airline.payment_limits" not in in_scope("airline", "cancel_reservation", ranking) if domain == "airline" else True


def test_read_map_is_the_contracts_entities() -> None:
    data = read_map()
    assert set(data) == set(DOMAINS)
    assert data["airline"]["reservation_id"].model_dump() == {"tool": "get_reservation_details", "argument": "reservation_id"}
    assert data["telecom"]["bill_id"].model_dump() == {"tool": "get_details_by_id", "argument": "id"}


def test_clause_pool_and_gold_ids() -> None:
    pool = cl.clause_pool("airline")
    ids = [c.id for c in pool]
    assert len(ids) == len(set(ids)) and all(i.startswith("airline.") for i in ids)
    # probe clauses quote the policy with its list dashes
    assert cl.gold_clause_ids("airline", "- Basic economy flights cannot be modified.", "update_reservation_flights") == [
        "airline.basic_economy_no_change"
    ]
    governing = cl.gold_clause_ids("airline", "", "cancel_reservation")
    assert len(governing) == 1 and "cancel_reservation" in cl.clause_pool("airline")[ids.index(governing[0])].tools
    assert cl.gold_clause_ids("airline", "Nothing like any policy sentence at all.", "cancel_reservation") == []
    wrong = cl.mismatched_clause("airline", ["airline.basic_economy_no_change"], "p1", 0)
    assert wrong != "airline.basic_economy_no_change" and wrong == cl.mismatched_clause("airline", ["airline.basic_economy_no_change"], "p1", 0)
    with pytest.raises(cl.ClausePoolError):
        cl.clause_pool("nowhere")


@pytest.mark.parametrize("name", ["bm25", "tfidf"])
def test_offline_retrievers_rank_the_whole_pool(name: str) -> None:
    pool = cl.clause_pool("airline")
    retriever = make_retriever(name, pool)
    ranking = retriever.rank("the user wants to add checked bags: free bag allowance for a gold member in economy")
    assert sorted(ranking) == sorted(c.id for c in pool)
    assert ranking.index("airline.bag_allowance") < 3
    assert ranking == retriever.rank("the user wants to add checked bags: free bag allowance for a gold member in economy")


def test_encoder_retriever_needs_a_local_model(tmp_path: Path) -> None:
    with pytest.raises(RetrieverError, match="encoder=PATH"):
        make_retriever("encoder", cl.clause_pool("airline"))
    with pytest.raises(RetrieverError, match="not a directory"):
        make_retriever("encoder", cl.clause_pool("airline"), str(tmp_path / "absent"))
    with pytest.raises(RetrieverError, match="allowed: bm25, tfidf, minilm, encoder"):
        make_retriever("dense", cl.clause_pool("airline"))


def test_metrics_match_scikit_learn_and_bootstrap_is_task_clustered() -> None:
    gold = ["allow", "allow", "verify", "refuse", "refuse", "verify", "allow", "refuse"]
    pred = ["allow", "refuse", "verify", "refuse", "verify", "verify", "allow", "refuse"]
    tasks = ["1", "1", "2", "2", "3", "3", "4", "4"]
    s = score(gold, pred, tasks, n_resamples=300, seed=1)
    assert s.macro_f1.estimate == pytest.approx(f1_score(gold, pred, average="macro"))
    assert s.macro_f1.low <= s.macro_f1.estimate <= s.macro_f1.high
    assert s.confusion["allow"]["refuse"] == 1 and s.per_class["refuse"].support == 3 and s.tasks == 4
    assert score(gold, pred, tasks, n_resamples=300, seed=1) == s  # deterministic for a seed
    same = paired_delta("a", pred, "b", pred, gold, tasks, n_resamples=200, seed=0)
    assert (same.delta.estimate, same.delta.low, same.delta.high) == (0, 0, 0)
    better = paired_delta("a", ["refuse"] * 8, "b", gold, gold, tasks, n_resamples=200, seed=0)
    assert better.delta.estimate > 0 and better.p_le_zero == 0.0
    assert score(gold, ["refuse"] * 8, tasks, n_resamples=10).collapsed


def _example(i: int, label: str, task: str) -> LabelledState:
    # A separable toy set: refuse states read a basic-economy reservation, verify states read nothing.
    read = label != "verify"
    result = dict(RESERVATION, cabin="basic_economy" if label == "refuse" else "business", reservation_id=f"R{i}")
    b = ConversationBuilder().user(f"Cancel R{i} please.")
    if read:
        b.tool("get_reservation_details", {"reservation_id": f"R{i}"}, result)
    call = ToolCallView(name="cancel_reservation", arguments={"reservation_id": f"R{i}"})
    gold = [] if label == "allow" else ["airline.cancel_requires_basis"]
    return LabelledState(
        probe_id=f"airline/{task}/p{i}", task_id=task, label=label, gold_ids=gold or ["airline.reservation_owner"],
        state=build_state("airline", b.build(), call, TYPES),
    )


def toy_set(offset: int = 0) -> ProbeSet:
    labels = ["allow", "verify", "refuse"] * 6
    examples = [_example(i + offset, lab, str((i + offset) // 3)) for i, lab in enumerate(labels)]
    return ProbeSet(path=f"toy{offset}.jsonl", domain="airline", sha256="x" * 64, examples=examples, unmatched_clauses=0)


def test_artifact_round_trip_metadata_and_determinism(tmp_path: Path) -> None:
    train, test = toy_set(), toy_set(100)
    artifact = train_artifact(train, "structured", retriever="tfidf", seed=3)
    texts = inputs(test.examples, "structured", "gold", artifact.retriever(), 3)
    path = tmp_path / "a.json.gz"
    artifact.save(path)
    loaded = load_artifact(path, domain="airline", representation="structured")
    meta = loaded.meta
    assert (meta.domain, meta.representation, meta.retriever, meta.seed, meta.train_policy) == ("airline", "structured", "tfidf", 3, "gold")
    assert meta.probe_ids == train.ids and meta.probe_set_sha256 == "x" * 64
    assert {"scikit-learn", "numpy", "rank-bm25"} <= set(meta.libraries) and meta.python
    assert loaded.predict(texts) == artifact.predict(texts) == [e.label for e in test.examples]
    again = train_artifact(train, "structured", retriever="tfidf", seed=3)
    assert np.array_equal(again.pipeline.named_steps["logreg"].coef_, artifact.pipeline.named_steps["logreg"].coef_)


def test_artifact_errors_are_one_line(tmp_path: Path) -> None:
    path = tmp_path / "a.json.gz"
    train_artifact(toy_set(), "masked", retriever="bm25").save(path)
    cases = [
        (lambda: load_artifact(tmp_path / "none.json.gz"), "does not exist"),
        (lambda: load_artifact(path, domain="retail"), "trained for domain 'airline', not 'retail'"),
        (lambda: load_artifact(path, representation="structured"), "representation 'masked', not 'structured'"),
    ]
    (tmp_path / "junk.json.gz").write_text("not a pickle")
    cases.append((lambda: load_artifact(tmp_path / "junk.json.gz"), "not a tauguard classifier artifact"))
    for load, message in cases:
        with pytest.raises(ArtifactError, match=message) as info:
            load()
        assert "\n" not in str(info.value)
    # one artifact per domain through the strategy option's {domain} placeholder
    (tmp_path / "clf-airline.json.gz").write_bytes(path.read_bytes())
    options = ClassifierOptions(artifact=str(tmp_path / "clf-{domain}.json.gz"))
    assert Gate.build("airline", options, use_llm=False).artifact is not None
    with pytest.raises(ArtifactError, match="clf-retail.json.gz' does not exist"):
        Gate.build("retail", options, use_llm=False)


def test_split_and_probe_file_checks() -> None:
    train = toy_set()
    with pytest.raises(ProbeSetError, match="were in the training set"):
        check_disjoint(train.ids, train)
    check_disjoint(train.ids, toy_set(100))
    probe = Probe(domain="airline", task_id="1", call=CALL, label="refuse")
    with pytest.raises(ProbeSetError, match="no probe has a clause"):
        check_usable(Path("p.jsonl"), [probe])
    other = probe.model_copy(update={"domain": "retail", "id": "x", "clause": "text"})
    with pytest.raises(ProbeSetError, match="several domains"):
        check_usable(Path("p.jsonl"), [probe.model_copy(update={"clause": "text"}), other])


class _FixedPipeline:
    """A stand-in classifier answering one label."""

    def __init__(self, label: str) -> None:
        self.classes_ = np.array(["allow", "refuse", "verify"])
        self.label = label

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        return np.array([[float(c == self.label) for c in self.classes_]] * len(texts))


def _session(label: str) -> ClassifierSession:
    artifact = train_artifact(toy_set(), "structured", retriever="bm25")
    artifact.pipeline = _FixedPipeline(label)
    gate = Gate("airline", artifact.retriever(), 1, artifact)
    return ClassifierSession(SessionContext(domain="airline", task_id="1", policy="", tool_types=TYPES), gate)


def test_session_maps_labels_to_verdicts() -> None:
    allow = _session("allow").before_write(CALL, conversation())
    assert allow.verdict == Verdict.ALLOW and allow.evidence["backend"] == "sklearn"
    block = _session("refuse").before_write(CALL, conversation())
    assert block.verdict == Verdict.BLOCK
    assert block.rule_id == block.evidence["cited"] and block.rule_id in clause_scope("airline", "cancel_reservation")
    assert cl.clause_text("airline", block.rule_id)[:20] in block.reason
    verify = _session("verify").before_write(CALL, conversation(read=False))
    assert verify.verdict == Verdict.VERIFY
    assert [(r.tool, r.arguments) for r in verify.required_reads] == [("get_reservation_details", {"reservation_id": "XEHM4B"})]
    assert "get_reservation_details" in verify.remediation


class _FixedRetriever:
    """Ranks a chosen clause first, the rest of the pool in pool order."""

    name = "fixed"

    def __init__(self, first: str) -> None:
        self.first = first

    def rank(self, query: str) -> list[str]:
        return [self.first] + [c.id for c in cl.clause_pool("airline") if c.id != self.first]


def _scoped_session(label: str, first: str = "airline.payment_limits") -> ClassifierSession:
    session = _session(label)
    session.gate.retriever = _FixedRetriever(first)
    return session


def test_decisions_cite_only_clauses_in_the_gated_tools_scope() -> None:
    """Issue 22: a cancellation was held citing the booking's payment limits (sim airline task 42)."""
    scope = clause_scope("airline", "cancel_reservation")
    assert "airline.payment_limits" not in scope
    block = _scoped_session("refuse").before_write(CALL, conversation())
    assert block.verdict == Verdict.BLOCK and block.rule_id in scope
    assert block.evidence["retrieved"] == ["airline.payment_limits"]  # the model still sees what it was trained on
    assert block.rule_id == block.evidence["cited"] == in_scope("airline", "cancel_reservation", _FixedRetriever("airline.payment_limits").rank(""))[0]
    assert cl.clause_text("airline", block.rule_id)[:20] in block.reason
    allow = _scoped_session("allow").before_write(CALL, conversation())
    assert allow.verdict == Verdict.ALLOW and allow.rule_id in scope


def test_a_verify_names_contract_reads_or_allows() -> None:
    # every read the contract derives for the cancellation was made: nothing to ask for
    allow = _scoped_session("verify").before_write(CALL, conversation())
    assert allow.verdict == Verdict.ALLOW and allow.evidence["label"] == "verify"
    assert "no read the contract derives" in allow.evidence["not_followed"]
    verify = _scoped_session("verify").before_write(CALL, conversation(read=False))
    assert verify.verdict == Verdict.VERIFY and verify.rule_id == "airline.reservation_owner"
    assert [(r.tool, r.arguments) for r in verify.required_reads] == [("get_reservation_details", {"reservation_id": "XEHM4B"})]


def test_help_and_compare_stay_free_of_sklearn() -> None:
    code = "import sys, tauguard.cli.main, tauguard.cli.compare; bad = [m for m in ('sklearn', 'tau2', 'litellm', 'rank_bm25') if m in sys.modules]; print(json.dumps(bad))"
    out = subprocess.run([sys.executable, "-c", "import json; " + code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []



def test_macro_f1_averages_all_three_labels_and_the_bootstrap_defaults_to_5000() -> None:
    # No "verify" in gold or predictions: scikit-learn's default macro drops it (0.83); the
    # paper averages all three labels, so the absent one scores 0.
    gold = ["allow", "allow", "refuse", "refuse", "allow", "refuse"]
    pred = ["allow", "refuse", "refuse", "refuse", "allow", "allow"]
    tasks = ["1", "1", "2", "2", "3", "3"]
    s = score(gold, pred, tasks, n_resamples=200, seed=0)
    reference = f1_score(gold, pred, labels=["allow", "verify", "refuse"], average="macro", zero_division=0)
    assert s.macro_f1.estimate == pytest.approx(reference)
    assert s.macro_f1.estimate < f1_score(gold, pred, average="macro")
    from tauguard.classifier import metrics as clf_metrics
    from tauguard.cli import classifier as clf_cli

    assert clf_metrics.DEFAULT_RESAMPLES == clf_cli.DEFAULT_RESAMPLES == 5000
    import inspect

    assert inspect.signature(clf_metrics.score).parameters["n_resamples"].default == 5000
