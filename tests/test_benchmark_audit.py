"""False holds and catches against the labelled real-write benchmark: default vs after reads."""

from __future__ import annotations

from tauguard.benchmark.audit import LabelledDecision, pool, summarize


def _d(id_: str, label: str, held: bool, after: bool | None, passed: bool = True) -> LabelledDecision:
    return LabelledDecision(id=id_, label=label, passed=passed, verdict="VERIFY" if held else "ALLOW",
                            held=held, held_after_reads=after)


def test_an_unfollowed_verify_is_a_hold_and_after_reads_is_counted_apart() -> None:
    decisions = [
        _d("c1", "complies", held=True, after=False),  # a VERIFY cleared by one read
        _d("c2", "complies", held=False, after=False),
        _d("v1", "violates", held=True, after=True),  # held for the violation itself
        _d("v2", "violates", held=True, after=False),  # held only until the read is made
    ]
    audit = summarize("g", decisions, follow_reads=True)
    assert (audit.false_holds.held, audit.false_holds.writes) == (1, 2)
    assert audit.false_holds_after_reads is not None and audit.false_holds_after_reads.held == 0
    assert audit.caught == ["v1", "v2"] and audit.caught_after_reads == ["v1"]
    assert audit.catches_after_reads is not None and audit.catches_after_reads.held == 1
    # pooled over runs, the after-reads figures survive; without follow_reads there are none
    assert pool([audit, audit])[0].false_holds_after_reads is not None
    assert summarize("g", decisions).false_holds_after_reads is None
