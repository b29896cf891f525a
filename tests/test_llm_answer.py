"""The one parser of LLM guards' JSON answers (action-guard, workflow, classifier)."""

import pytest
from pydantic import BaseModel

from tauguard.llm_answer import parse_json_answer


class _Answer(BaseModel):
    decision: str


def test_fenced_and_prose_wrapped_objects_parse() -> None:
    assert parse_json_answer('Sure.\n```json\n{"decision": "allow"}\n```\nDone.', _Answer).decision == "allow"
    assert parse_json_answer('I think {"decision": "refuse"} is right', _Answer).decision == "refuse"


@pytest.mark.parametrize(
    ("text", "message"),
    [(None, "empty verdict"), ("   ", "empty verdict"), ("no object here", "no JSON object in the verdict"),
     ('{"decision": 3}', "malformed verdict"), ('{"decision": "a",}', "malformed verdict")],
)
def test_bad_answers_are_one_line_value_errors(text: str | None, message: str) -> None:
    with pytest.raises(ValueError, match=message) as err:
        parse_json_answer(text, _Answer, "verdict")
    assert "\n" not in str(err.value)
