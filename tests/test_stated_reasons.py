"""What counts as the user's stated reason for a cancellation (tauguard/dialogue/reasons.py).

The policy asks the agent to obtain "the reason for cancellation (change of plan, airline
cancelled flight, or other reasons)": any motive counts; insurance covers only health and
weather ones. The real conversation behind the first case is checked in tests/test_real_cases.py.
"""

from __future__ import annotations

import pytest

from tauguard.dialogue.reasons import motive, reason_kind


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        # airline_claude-opus-4-6_user-gpt-4.1:45:24:0 (task 23), the user turn before the yes
        ("Thanks for explaining all the details! I'd like to minimize the amount charged to my Mastercard, so I prefer "
         "to cancel and rebook as a new business class reservation.", "replacement"),
        ("I found a cheaper fare elsewhere.", "cost"),
        ("I booked the wrong dates by mistake.", "mistake"),
        ("The conference got postponed.", "change of plan"),
        ("We can't make it anymore.", "change of plan"),
        ("The airline cancelled my connecting flight.", "airline cancelled flight"),
        ("I want to cancel, so I can use the credit for something else.", "stated"),
    ],
)
def test_a_motive_of_any_kind_is_a_reason(text: str, kind: str) -> None:
    assert motive(text) == kind
    assert reason_kind(text) == "other"


@pytest.mark.parametrize(
    "text",
    ["Please cancel it.", "Yes, please go ahead and cancel reservation K1NW8N.", "My user id is mia_li_3668.",
     "What is the total balance on my gift cards?"],
)
def test_a_request_or_a_question_alone_states_no_reason(text: str) -> None:
    assert motive(text) is None and reason_kind(text) is None


def test_a_covered_reason_stays_health_or_weather() -> None:
    assert reason_kind("I'd like to cancel because I came down with the flu.") == "health"
    assert reason_kind("A hurricane is heading for Miami, so I want to cancel.") == "weather"
