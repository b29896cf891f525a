"""The shared guard vocabulary: one finding type, one read type, one way to combine them."""

from __future__ import annotations

from tauguard.strategy_api.guard import (
    FINDINGS_KEY,
    REQUIRED_READS_KEY,
    ReadRequest,
    RuleFinding,
    Verdict,
    combine,
)

ORDER = ReadRequest(tool="get_order_details", arguments={"order_id": "#W1"}, why="observe the order")
USER = ReadRequest(tool="find_user_id_by_email", why="authenticate")


def test_no_held_finding_allows_with_the_given_reason() -> None:
    d = combine([RuleFinding(rule_id="a", verdict=Verdict.ALLOW, detail="fine")], allow_reason="all hold", evidence={"checked": ["a"]})
    assert d.verdict == Verdict.ALLOW and d.reason == "all hold" and d.rule_id is None
    assert d.evidence == {"checked": ["a"], FINDINGS_KEY: []}
    assert combine([]).verdict == Verdict.ALLOW


def test_most_severe_finding_decides_and_ties_keep_the_first() -> None:
    findings = [
        RuleFinding(rule_id="v", verdict=Verdict.VERIFY, detail="unread", required_reads=[ORDER]),
        RuleFinding(rule_id="r1", verdict=Verdict.REVISE, detail="wrong card", revised_arguments={"pm": "paypal"}),
        RuleFinding(rule_id="r2", verdict=Verdict.REVISE, detail="wrong item", revised_arguments={"item": "2"}),
    ]
    d = combine(findings)
    assert (d.verdict, d.rule_id, d.revised_arguments) == (Verdict.REVISE, "r1", {"pm": "paypal"})
    assert d.required_reads == []  # reads are asked for only on VERIFY
    assert REQUIRED_READS_KEY not in d.evidence
    assert d.reason == "[r1] wrong card; [r2] wrong item; [v] unread"
    assert [f["rule_id"] for f in d.evidence[FINDINGS_KEY]] == ["v", "r1", "r2"]  # as given
    blocked = combine([*findings, RuleFinding(rule_id="b", verdict=Verdict.BLOCK, detail="not permitted")])
    assert (blocked.verdict, blocked.rule_id, blocked.revised_arguments) == (Verdict.BLOCK, "b", None)


def test_reads_are_merged_once_and_remediations_joined() -> None:
    same_read_other_why = ORDER.model_copy(update={"why": "its items"})
    findings = [
        RuleFinding(rule_id="x", verdict=Verdict.VERIFY, detail="order unread",
                    remediation=f"read first: {ORDER.describe()}", required_reads=[ORDER]),
        RuleFinding(rule_id="y", verdict=Verdict.VERIFY, detail="items unread",
                    remediation=f"read first: {ORDER.describe()}", required_reads=[same_read_other_why]),
        RuleFinding(rule_id="z", verdict=Verdict.VERIFY, detail="user unknown", remediation="ask for the email",
                    required_reads=[USER]),
    ]
    d = combine(findings)
    assert d.verdict == Verdict.VERIFY and d.rule_id == "x"
    assert d.required_reads == [ORDER, USER]
    assert d.evidence[REQUIRED_READS_KEY] == [ORDER.model_dump(), USER.model_dump()]
    # Each remediation once, then the reads no remediation names.
    assert d.remediation == (
        "read first: get_order_details(order_id='#W1'); ask for the email; read first: find_user_id_by_email(...)"
    )


def test_read_request_describes_itself() -> None:
    assert ORDER.describe() == "get_order_details(order_id='#W1')"
    assert USER.describe() == "find_user_id_by_email(...)"
    assert ORDER.key() == ORDER.model_copy(update={"why": "other"}).key() != USER.key()
