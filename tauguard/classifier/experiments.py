"""The paper's measurements on a train / test pair of probe sets.

- :func:`evaluate`: an artifact under one policy input (gold / retrieved / mismatched / none);
- :func:`table1`: the Table 1 analogue -- train on gold structured states, then at test time
  change only the policy line (§4 "Retrieved-policy classifier intervention");
- :func:`representation_ablation`: raw / masked / structured / raw+policy, each trained and
  tested with the gold clause (§3 and Appendix B);
- :func:`recall_table`: exact-match recall@1/5/10 of each retriever against the gold clause,
  per decision class (§4 "Exact-match retrieval performance", Appendix C Table 10);
- :func:`injection_sweep`: the gold clause for a fraction p of states, retrieved top-1
  otherwise, and the structured - raw gap per p (§4 "Gold-policy injection diagnostic").

Every function is deterministic for a seed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from tauguard.classifier.clauses import clause_pool
from tauguard.classifier.dataset import LabelledState, ProbeSet, check_disjoint
from tauguard.classifier.metrics import LABELS, PairedDelta, Scores, paired_delta, score
from tauguard.classifier.model import Artifact, PolicyInput, inputs, policy_for, train_artifact
from tauguard.classifier.retrieval import Retriever, make_retriever
from tauguard.classifier.state import REPRESENTATIONS

INJECTION_GRID = (0.0, 0.25, 0.5, 0.75, 1.0)
RECALL_KS = (1, 5, 10)


class ConditionResult(BaseModel):
    """Scores of one condition (and its predictions, for pairing)."""

    condition: str
    scores: Scores
    predictions: list[str]


def _gold(test: ProbeSet) -> tuple[list[str], list[str]]:
    return [e.label for e in test.examples], [e.task_id for e in test.examples]


def predict(artifact: Artifact, test: ProbeSet, condition: PolicyInput, *, inject_p: float | None = None, retriever: Retriever | None = None) -> list[str]:
    """The artifact's labels for the test states under a policy input."""
    texts = inputs(test.examples, artifact.meta.representation, condition, retriever or artifact.retriever(), artifact.meta.seed, inject_p=inject_p)
    return artifact.predict(texts)


def evaluate(artifact: Artifact, test: ProbeSet, condition: PolicyInput, *, n_resamples: int, seed: int) -> ConditionResult:
    """Score an artifact on a test set (after checking the two are disjoint and match)."""
    check_disjoint(artifact.meta.probe_ids, test)
    preds = predict(artifact, test, condition)
    gold, tasks = _gold(test)
    return ConditionResult(condition=condition, scores=score(gold, preds, tasks, n_resamples=n_resamples, seed=seed), predictions=preds)


class ComparisonTable(BaseModel):
    """Conditions scored on the same probes, and paired deltas between some of them."""

    title: str
    rows: list[ConditionResult]
    deltas: list[PairedDelta]


def _pair(rows: dict[str, ConditionResult], a: str, b: str, test: ProbeSet, n_resamples: int, seed: int) -> PairedDelta:
    gold, tasks = _gold(test)
    return paired_delta(a, rows[a].predictions, b, rows[b].predictions, gold, tasks, n_resamples=n_resamples, seed=seed)


def table1(train: ProbeSet, test: ProbeSet, *, retriever: str, encoder: str | None, seed: int, n_resamples: int) -> ComparisonTable:
    """Policy input gold / retrieved top-1 / mismatched / none for one structured classifier."""
    artifact = train_artifact(train, "structured", retriever=retriever, encoder=encoder, seed=seed)
    check_disjoint(artifact.meta.probe_ids, test)
    gold, tasks = _gold(test)
    rows = {}
    for condition in ("gold", "retrieved", "mismatched", "none"):
        preds = predict(artifact, test, condition)
        rows[condition] = ConditionResult(condition=condition, scores=score(gold, preds, tasks, n_resamples=n_resamples, seed=seed), predictions=preds)
    # Beyond the paper's table: the classifier trained on the clause it is deployed with.
    matched = train_artifact(train, "structured", retriever=retriever, encoder=encoder, seed=seed, train_policy="retrieved")
    preds = predict(matched, test, "retrieved")
    rows[MATCHED] = ConditionResult(condition=MATCHED, scores=score(gold, preds, tasks, n_resamples=n_resamples, seed=seed), predictions=preds)
    pairs = (("gold", "retrieved"), ("mismatched", "retrieved"), ("none", "retrieved"), ("retrieved", MATCHED), ("none", MATCHED))
    deltas = [_pair(rows, a, b, test, n_resamples, seed) for a, b in pairs]
    return ComparisonTable(title=f"policy input (structured, trained on gold; retriever {retriever})", rows=list(rows.values()), deltas=deltas)


MATCHED = "retrieved, trained on retrieved"


def representation_ablation(train: ProbeSet, test: ProbeSet, *, retriever: str, encoder: str | None, seed: int, n_resamples: int) -> ComparisonTable:
    """Each representation trained and tested with the gold clause; deltas against raw."""
    gold, tasks = _gold(test)
    rows: dict[str, ConditionResult] = {}
    for rep in REPRESENTATIONS:
        artifact = train_artifact(train, rep, retriever=retriever, encoder=encoder, seed=seed)
        check_disjoint(artifact.meta.probe_ids, test)
        preds = predict(artifact, test, "gold")
        rows[rep] = ConditionResult(condition=rep, scores=score(gold, preds, tasks, n_resamples=n_resamples, seed=seed), predictions=preds)
    deltas = [_pair(rows, "raw", rep, test, n_resamples, seed) for rep in REPRESENTATIONS if rep != "raw"]
    deltas.append(_pair(rows, "raw+policy", "structured", test, n_resamples, seed))
    return ComparisonTable(title="representation (gold clause in train and test)", rows=list(rows.values()), deltas=deltas)


class RecallRow(BaseModel):
    """Exact-match recall@k of one retriever for one decision class (or all)."""

    retriever: str
    label: str
    n: int  # states whose gold clause is in the pool
    recall: dict[int, float]
    median_rank: float | None


def gold_rank(ranking: list[str], gold_ids: list[str]) -> int:
    """1-based rank of the best-ranked gold id (a probe may quote several clauses)."""
    return min(ranking.index(g) for g in gold_ids) + 1


def recall_table(test: ProbeSet, retrievers: list[str], encoder: str | None) -> list[RecallRow]:
    """recall@1/5/10 per retriever, per decision class and overall (states with a pool gold)."""
    import numpy as np

    pool = clause_pool(test.domain)
    rows = []
    for name in retrievers:
        ret = make_retriever(name, pool, encoder)
        ranks = [(e.label, gold_rank(ret.rank(e.state.query()), e.gold_ids)) for e in test.examples if e.gold_ids]
        for label in (*LABELS, "all"):
            mine = [r for lab, r in ranks if label in ("all", lab)]
            rows.append(
                RecallRow(
                    retriever=name,
                    label=label,
                    n=len(mine),
                    recall={k: (sum(r <= k for r in mine) / len(mine)) if mine else 0.0 for k in RECALL_KS},
                    median_rank=float(np.median(mine)) if mine else None,
                )
            )
    return rows


class InjectionRow(BaseModel):
    """One p of the gold-injection sweep."""

    p: float
    structured: Scores
    gap: PairedDelta  # structured - raw


def injection_sweep(
    train: ProbeSet, test: ProbeSet, *, retriever: str, encoder: str | None, seed: int, n_resamples: int, grid: tuple[float, ...] = INJECTION_GRID
) -> tuple[Scores, list[InjectionRow]]:
    """The raw classifier's scores and, per p, the structured classifier's and the gap."""
    gold, tasks = _gold(test)
    raw = train_artifact(train, "raw", retriever=retriever, encoder=encoder, seed=seed)
    structured = train_artifact(train, "structured", retriever=retriever, encoder=encoder, seed=seed)
    check_disjoint(raw.meta.probe_ids, test)
    raw_preds = predict(raw, test, "none")
    rows = []
    for p in grid:
        preds = predict(structured, test, "gold", inject_p=p)
        rows.append(
            InjectionRow(
                p=p,
                structured=score(gold, preds, tasks, n_resamples=n_resamples, seed=seed),
                gap=paired_delta("raw", raw_preds, f"structured@p={p}", preds, gold, tasks, n_resamples=n_resamples, seed=seed),
            )
        )
    return score(gold, raw_preds, tasks, n_resamples=n_resamples, seed=seed), rows


def retrieved_clause(artifact: Artifact, example: Any) -> str | None:
    """The retrieved top-1 clause id an artifact's deployment gives an example."""
    return policy_for(example, "retrieved", artifact.retriever(), artifact.meta.seed)[1]


# The paper's leak check (§3 "not a leaked label"; Appendix B): does the clause alone give the
# label away? Each baseline sees only the named field of the state.
LEAK_BASELINES: dict[str, Callable[[LabelledState, str | None], str]] = {
    "clause id only": lambda ex, cid: cid or "(none)",
    "tool + clause id": lambda ex, cid: f"{ex.state.action.name} {cid or '(none)'}",
}


class LeakCheck(BaseModel):
    """The structured model on the gold clause against baselines that see only the clause id."""

    table: ComparisonTable
    leaks: bool  # a baseline is not detectably worse than the model (paired CI reaches 0)
    verdict: str


def leak_check(train: ProbeSet, test: ProbeSet, *, retriever: str, encoder: str | None, seed: int, n_resamples: int) -> LeakCheck:
    """Gold-clause structured classifier vs clause-id-only baselines (same logistic head)."""
    from tauguard.classifier.model import fit

    gold, tasks = _gold(test)
    artifact = train_artifact(train, "structured", retriever=retriever, encoder=encoder, seed=seed)
    check_disjoint(artifact.meta.probe_ids, test)
    rows: dict[str, ConditionResult] = {}
    preds = predict(artifact, test, "gold")
    rows["structured, gold clause"] = ConditionResult(condition="structured, gold clause", scores=score(gold, preds, tasks, n_resamples=n_resamples, seed=seed), predictions=preds)
    for name, view in LEAK_BASELINES.items():
        texts_train = [view(e, e.gold_ids[0] if e.gold_ids else None) for e in train.examples]
        texts_test = [view(e, e.gold_ids[0] if e.gold_ids else None) for e in test.examples]
        model = fit(texts_train, [e.label for e in train.examples], seed)
        p = [str(x) for x in model.predict(texts_test)]
        rows[name] = ConditionResult(condition=name, scores=score(gold, p, tasks, n_resamples=n_resamples, seed=seed), predictions=p)
    deltas = [_pair(rows, name, "structured, gold clause", test, n_resamples, seed) for name in LEAK_BASELINES]
    leaking = [d.a for d in deltas if d.delta.low <= 0]
    verdict = (
        f"the gold-clause condition leaks: {', '.join(leaking)} is not detectably worse than the model"
        if leaking else "no leak detected: the model beats every clause-id-only baseline (paired CI above 0)"
    )
    table = ComparisonTable(title="leak check (gold clause; baselines see only the clause id)", rows=list(rows.values()), deltas=deltas)
    return LeakCheck(table=table, leaks=bool(leaking), verdict=verdict)
