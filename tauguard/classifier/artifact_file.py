"""The classifier artifact on disk: gzipped JSON holding parameters, never code.

A pickle (joblib) runs code when it is loaded, so an artifact from elsewhere could execute
anything; this format holds only numbers and strings -- the TF-IDF vectorizer's settings,
vocabulary and idf weights, the logistic head's classes, coefficients and intercepts -- and
the training metadata. Loading rebuilds the scikit-learn objects from them. The file also
records the sha256 of its model section; a file whose model does not match it (corrupted or
edited) is refused.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path
from typing import Any

from tauguard.errors import TauguardInputError

MAGIC = "tauguard-classifier"
FORMAT = 2
# Vectorizer settings kept (everything else is scikit-learn's default and not used by training).
_TFIDF_PARAMS = ("ngram_range", "sublinear_tf", "lowercase", "norm", "use_idf", "smooth_idf", "analyzer", "token_pattern")


class ArtifactFileError(TauguardInputError):
    """A file that is not a readable tauguard artifact."""


def _model_section(pipeline: Any) -> dict[str, Any]:
    tfidf = pipeline.named_steps["tfidf"]
    head = pipeline.named_steps["logreg"]
    params = {k: v for k, v in tfidf.get_params().items() if k in _TFIDF_PARAMS}
    params["ngram_range"] = list(params["ngram_range"])
    vocabulary = sorted(tfidf.vocabulary_.items(), key=lambda kv: kv[1])
    return {
        "tfidf": {"params": params, "terms": [t for t, _ in vocabulary], "idf": [float(x) for x in tfidf.idf_]},
        "logreg": {
            "classes": [str(c) for c in head.classes_],
            "coef": [[float(x) for x in row] for row in head.coef_],
            "intercept": [float(x) for x in head.intercept_],
        },
    }


def _digest(model: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(model, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()


def write_artifact(path: Path, meta: dict[str, Any], pipeline: Any) -> None:
    """Write ``meta`` and the fitted TF-IDF + logistic pipeline as gzipped JSON."""
    model = _model_section(pipeline)
    document = {"format": MAGIC, "version": FORMAT, "meta": meta, "model": model, "model_sha256": _digest(model)}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # mtime=0: the same model gives the same bytes.
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as fh:
        fh.write(json.dumps(document, sort_keys=True).encode("utf-8"))


def _pipeline(model: dict[str, Any]) -> Any:
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline

    spec = model["tfidf"]
    params = dict(spec["params"])
    params["ngram_range"] = tuple(params["ngram_range"])
    tfidf = TfidfVectorizer(vocabulary={t: i for i, t in enumerate(spec["terms"])}, **params)
    tfidf.vocabulary_ = dict(tfidf.vocabulary)
    tfidf.idf_ = np.asarray(spec["idf"], dtype=float)
    head = LogisticRegression()
    head.classes_ = np.asarray(model["logreg"]["classes"])
    head.coef_ = np.asarray(model["logreg"]["coef"], dtype=float)
    head.intercept_ = np.asarray(model["logreg"]["intercept"], dtype=float)
    head.n_features_in_ = head.coef_.shape[1]
    return Pipeline([("tfidf", tfidf), ("logreg", head)])


def read_artifact(path: Path) -> tuple[dict[str, Any], Any]:
    """(metadata, rebuilt pipeline) of an artifact file; ArtifactFileError otherwise."""
    try:
        with gzip.open(path, "rb") as fh:
            document = json.loads(fh.read().decode("utf-8"))
    except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError):
        raise ArtifactFileError(
            f"'{path}' is not a tauguard classifier artifact (gzipped JSON expected; pickled joblib artifacts "
            "of earlier versions are refused because loading them can run code: retrain with `tauguard classifier train`)"
        ) from None
    if not isinstance(document, dict) or document.get("format") != MAGIC:
        raise ArtifactFileError(f"'{path}' is not a tauguard classifier artifact (no '{MAGIC}' header)")
    if document.get("version") != FORMAT:
        raise ArtifactFileError(f"'{path}' has artifact format {document.get('version')}; this tauguard reads {FORMAT}")
    model = document.get("model")
    if not isinstance(model, dict) or _digest(model) != document.get("model_sha256"):
        raise ArtifactFileError(f"'{path}': the model does not match its recorded sha256 (corrupted or edited); refusing it")
    try:
        return document["meta"], _pipeline(model)
    except (KeyError, TypeError, ValueError) as exc:
        raise ArtifactFileError(f"'{path}': malformed model section ({type(exc).__name__})") from None
