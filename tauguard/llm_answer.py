"""Parse the JSON object in an LLM guard's answer (:func:`tauguard.llm_call.structured` uses it).

Tolerates code fences and prose around the object; everything else is a ValueError, which
``structured`` returns as an ``unparseable`` failure and the guards turn into a fail-closed
decision. Imports neither tau2 nor litellm.
"""

from __future__ import annotations

import json
import re
from typing import TypeVar

from pydantic import BaseModel, ValidationError

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)

M = TypeVar("M", bound=BaseModel)


def parse_json_answer(text: str | None, model: type[M], what: str = "answer") -> M:
    """The first fenced block's (or the whole text's) outermost ``{...}``, validated as ``model``.

    Raises ValueError naming ``what`` when the answer is empty, holds no JSON object, or the
    object does not fit ``model`` (only the error's first line is kept).
    """
    if not text or not text.strip():
        raise ValueError(f"empty {what}")
    fenced = _FENCE.search(text)
    body = fenced.group(1) if fenced else text
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end <= start:
        raise ValueError(f"no JSON object in the {what}")
    try:
        return model.model_validate(json.loads(body[start : end + 1]))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise ValueError(f"malformed {what}: {str(exc).splitlines()[0]}") from exc
