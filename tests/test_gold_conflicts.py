"""The documented gold/policy conflicts: valid data, verbatim clauses, the right gold writes,
and the README table generated from them."""

from __future__ import annotations

from pathlib import Path

from tauguard.gold_conflicts import conflict_at, gold_conflicts, markdown_table

README = Path(__file__).resolve().parents[1] / "README.md"


def test_each_conflict_names_a_gold_write_and_quotes_the_policy(tau2) -> None:
    conflicts = gold_conflicts()
    assert len({c.key for c in conflicts}) == len(conflicts) > 0
    for c in conflicts:
        assert c.clause in tau2.policy_text(c.domain), c.key
        task = next(t for t in tau2.load_tasks(c.domain, "base") if t.id == c.task_id)
        writes = [a for a in task.evaluation_criteria.actions if tau2.is_agent_write(c.domain, a)]
        assert writes[c.write_index].name == c.tool, c.key
    assert conflict_at("airline", "7", 1) is not None and conflict_at("airline", "7", 0) is None


def test_readme_table_is_the_generated_one() -> None:
    text = README.read_text()
    assert all(line in text for line in markdown_table().splitlines())
