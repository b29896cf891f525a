"""The offline classifier (TF-IDF features + class-balanced logistic regression), the policy
input of each condition, and the artifact (gzipped JSON: parameters, never code) with its
training metadata.

The paper's low-cost diagnostic classifier is a balanced logistic regression over frozen
MiniLM embeddings (§2, "Decision models and evaluation"; Appendix C uses C=1.0 as the
reported head); ours keeps the balanced logistic head over TF-IDF word n-grams so it trains
in seconds with no model download. Training uses the gold clause (the paper trains "on the
benchmark's gold structured states", §4 "Retrieved-policy classifier intervention").
"""

from __future__ import annotations

import platform
import random
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from tauguard.classifier.clauses import clause_pool, clause_text, mismatched_clause
from tauguard.classifier.retrieval import Retriever, make_retriever
from tauguard.classifier.state import REPRESENTATIONS, WITH_POLICY, Representation, render
from tauguard.errors import TauguardInputError

PolicyInput = Literal["gold", "retrieved", "mismatched", "none"]
POLICY_INPUTS: tuple[PolicyInput, ...] = ("gold", "retrieved", "mismatched", "none")
ARTIFACT_FORMAT = 2  # 1 was a joblib pickle: loading it could run code, so it is refused
LIBRARIES = ("scikit-learn", "numpy", "scipy", "rank-bm25", "tauguard")


class ArtifactError(TauguardInputError):
    """An artifact that is missing, unreadable, or trained for something else."""


class TrainingMeta(BaseModel):
    """What an artifact was trained on and with."""

    format: int = ARTIFACT_FORMAT
    domain: str
    representation: Representation
    train_policy: PolicyInput = "gold"
    retriever: str  # the retriever its deployment (and the `retrieved` condition) uses
    encoder: str | None = None
    seed: int
    C: float
    probe_file: str
    probe_set_sha256: str
    probe_ids: list[str]
    labels: dict[str, int]
    # Live operating point: the gate allows when P(allow) >= this (None: the most probable
    # label), chosen on out-of-fold training predictions (tauguard.classifier.operating).
    allow_threshold: float | None = None
    provenance: dict[str, Any] = Field(default_factory=dict)  # where the training states came from
    metrics: dict[str, Any] = Field(default_factory=dict)  # measured when it was trained
    libraries: dict[str, str] = Field(default_factory=dict)
    python: str = ""
    created_at: str = ""


def library_versions() -> dict[str, str]:
    """Versions of the libraries that shape the artifact."""
    out = {}
    for name in LIBRARIES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "absent"
    return out


def policy_for(
    example: Any, condition: PolicyInput, retriever: Retriever | None, seed: int, *, inject_p: float | None = None
) -> tuple[str, str | None]:
    """The policy text and clause id (None for none / unmatched gold) given to one example.

    ``inject_p`` (the paper's gold-injection sweep, §4): the gold clause with probability p
    (a per-probe seeded draw), the retrieved top-1 otherwise; ``condition`` is then ignored.
    """
    domain = example.state.domain
    if inject_p is not None:
        draw = random.Random(f"inject:{seed}:{example.probe_id}").random()
        condition = "gold" if draw < inject_p else "retrieved"
    if condition == "none":
        return "", None
    if condition == "gold":
        if example.gold_ids:
            return clause_text(domain, example.gold_ids[0]), example.gold_ids[0]
        return example.clause, None
    if condition == "mismatched":
        cid = mismatched_clause(domain, example.gold_ids, example.probe_id, seed)
        return clause_text(domain, cid), cid
    if retriever is None:
        raise ValueError("the retrieved condition needs a retriever")
    cid = retriever.rank(example.state.query())[0]
    return clause_text(domain, cid), cid


def inputs(
    examples: list[Any],
    representation: Representation,
    condition: PolicyInput,
    retriever: Retriever | None,
    seed: int,
    *,
    inject_p: float | None = None,
) -> list[str]:
    """The classifier input texts of ``examples``."""
    texts = []
    for ex in examples:
        policy = ""
        if representation in WITH_POLICY:
            policy, _ = policy_for(ex, condition, retriever, seed, inject_p=inject_p)
        texts.append(render(ex.state, representation, policy))
    return texts


def make_pipeline(seed: int, C: float = 1.0) -> Any:
    """TF-IDF word uni+bigrams -> class-balanced logistic regression (deterministic)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline

    return Pipeline(
        [
            ("tfidf", TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=1, max_features=50_000)),
            ("logreg", LogisticRegression(class_weight="balanced", C=C, max_iter=5000, random_state=seed)),
        ]
    )


def fit(texts: list[str], labels: list[str], seed: int, C: float = 1.0) -> Any:
    """A fitted pipeline."""
    pipeline = make_pipeline(seed, C)
    pipeline.fit(texts, labels)
    return pipeline


class Artifact:
    """A trained classifier with its metadata; ``retriever()`` builds its deployment retriever."""

    def __init__(self, pipeline: Any, meta: TrainingMeta) -> None:
        self.pipeline = pipeline
        self.meta = meta
        self._retriever: Retriever | None = None

    def retriever(self, name: str | None = None, encoder: str | None = None) -> Retriever:
        """The retriever over the artifact domain's clause pool (cached for the default)."""
        if name is None and encoder is None:
            if self._retriever is None:
                self._retriever = make_retriever(self.meta.retriever, clause_pool(self.meta.domain), self.meta.encoder)
            return self._retriever
        return make_retriever(name or self.meta.retriever, clause_pool(self.meta.domain), encoder or self.meta.encoder)

    def probabilities(self, texts: list[str]) -> tuple[list[str], Any]:
        """The classes and their probabilities for each input text."""
        return [str(c) for c in self.pipeline.classes_], self.pipeline.predict_proba(texts)

    def predict(self, texts: list[str]) -> list[str]:
        """Labels for input texts (at the artifact's operating point when it has one)."""
        classes, probabilities = self.probabilities(texts)
        return [decide(classes, row, self.meta.allow_threshold) for row in probabilities]

    def save(self, path: Path) -> None:
        """Write the artifact (see :mod:`tauguard.classifier.artifact_file`)."""
        from tauguard.classifier.artifact_file import write_artifact
        from tauguard.output_file import atomic_output

        with atomic_output(path, "-o/--output") as tmp:
            write_artifact(tmp, self.meta.model_dump(mode="json"), self.pipeline)


def decide(classes: list[str], probabilities: Any, allow_threshold: float | None) -> str:
    """The label of one probability row: allow when P(allow) reaches the threshold, else the
    most probable other label; without a threshold, the most probable label."""
    best = classes[int(probabilities.argmax())]
    if allow_threshold is None or "allow" not in classes:
        return best
    allow = classes.index("allow")
    if probabilities[allow] >= allow_threshold:
        return "allow"
    others = [(p, c) for c, p in zip(classes, probabilities) if c != "allow"]
    return max(others)[1] if others else best


def train_artifact(
    probe_set: Any,
    representation: Representation,
    *,
    retriever: str = "bm25",
    encoder: str | None = None,
    seed: int = 0,
    C: float = 1.0,
    train_policy: PolicyInput = "gold",
) -> Artifact:
    """Train on a probe set's states with the ``train_policy`` clause (gold by default)."""
    if representation not in REPRESENTATIONS:
        raise ArtifactError(f"unknown representation '{representation}'; allowed: {', '.join(REPRESENTATIONS)}")
    ret = make_retriever(retriever, clause_pool(probe_set.domain), encoder)
    texts = inputs(probe_set.examples, representation, train_policy, ret, seed)
    pipeline = fit(texts, [e.label for e in probe_set.examples], seed, C)
    meta = TrainingMeta(
        domain=probe_set.domain,
        representation=representation,
        train_policy=train_policy,
        retriever=retriever,
        encoder=encoder,
        seed=seed,
        C=C,
        probe_file=probe_set.path,
        probe_set_sha256=probe_set.sha256,
        probe_ids=probe_set.ids,
        labels=probe_set.label_counts(),
        libraries=library_versions(),
        python=platform.python_version(),
        created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )
    artifact = Artifact(pipeline, meta)
    artifact._retriever = ret
    return artifact


def load_artifact(path: Path, *, domain: str | None = None, representation: str | None = None) -> Artifact:
    """Load an artifact; ArtifactError when it is missing, not ours (or a pickle), corrupted,
    or for another domain or representation than asked. Nothing in the file is executed."""
    from tauguard.classifier.artifact_file import ArtifactFileError, read_artifact

    path = Path(path)
    if not path.is_file():
        raise ArtifactError(f"classifier artifact '{path}' does not exist; train one with `tauguard classifier train`")
    try:
        data, pipeline = read_artifact(path)
        meta = TrainingMeta.model_validate(data)
    except ArtifactFileError as exc:
        raise ArtifactError(str(exc)) from None
    except ValidationError as exc:
        raise ArtifactError(f"'{path}' is not a tauguard classifier artifact (metadata: {exc.errors()[0]['msg']})") from None
    if domain is not None and meta.domain != domain:
        raise ArtifactError(f"artifact '{path}' was trained for domain '{meta.domain}', not '{domain}'")
    if representation is not None and meta.representation != representation:
        raise ArtifactError(
            f"artifact '{path}' was trained on representation '{meta.representation}', not '{representation}'"
        )
    return Artifact(pipeline, meta)
