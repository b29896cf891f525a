"""Robust parsing of tool-result content.

Tool results reach guards as text: tau2's ``Environment.to_json_str`` output, i.e. JSON for
models, dicts and lists, the bare string for string returns (``"available"``, a user id).
"""

from __future__ import annotations

import json
from typing import Any


def parse_content(content: str | None) -> Any:
    """The JSON value of ``content``, or the stripped text when it is not JSON."""
    if content is None:
        return None
    text = content.strip()
    if text[:1] in "[{\"":
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def is_error_text(content: str | None) -> bool:
    """tau2 reports tool exceptions as ``Error: ...`` content (the error flag is primary)."""
    return bool(content) and content.lstrip().startswith("Error:")  # type: ignore[union-attr]
