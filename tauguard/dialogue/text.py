"""Text normalisation shared by every reader of the dialogue: folding case, accents, quotes and emphasis.

This module imports neither tau2 nor litellm.
"""

from __future__ import annotations

import unicodedata


def fold(text: str) -> str:
    """Lowercase, accents stripped, typographic quotes and markdown emphasis normalised."""
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"').replace("\u2011", "-").replace("*", "").replace("_", " ")
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()
