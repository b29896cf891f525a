"""The documented gold/policy conflicts: valid data, verbatim clauses, the right gold writes,
and the README table generated from them."""

from __future__ import annotations

from pathlib import Path

from tauguard.domains.gold_conflicts import conflict_at, gold_conflicts, markdown_table

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


def test_identical_exchanges_match_the_db(tau2) -> None:
    # retail 18, 91, 107: the gold exchange names the same item as old and new, of a delivered
    # order of the task's user that holds it (so the exchange is no different option)
    env = tau2.make_environment("retail")
    db = env.tools.db
    found = [c for c in gold_conflicts() if c.tool == "exchange_delivered_order_items"]
    assert {c.task_id for c in found} == {"18", "91", "107"}
    for c in found:
        task = next(t for t in tau2.load_tasks("retail", "base") if t.id == c.task_id)
        write = [a for a in task.evaluation_criteria.actions if tau2.is_agent_write("retail", a)][c.write_index]
        old, new = write.arguments["item_ids"], write.arguments["new_item_ids"]
        order = db.orders[write.arguments["order_id"]]
        assert old == new and order.status == "delivered", c.key
        assert set(old) <= {i.item_id for i in order.items}, c.key
        assert old[0] in c.facts, c.key


def test_each_conflict_names_its_clause_and_the_gold_arguments_it_matches(tau2) -> None:
    from tauguard import domains
    from tauguard.domains.gold_conflicts import conflict_tasks, is_conflict_call

    for c in gold_conflicts():
        assert c.clause in domains.clause(c.clause_id).text, c.key
        task = next(t for t in tau2.load_tasks(c.domain, "base") if t.id == c.task_id)
        write = [a for a in task.evaluation_criteria.actions if tau2.is_agent_write(c.domain, a)][c.write_index]
        assert c.match and all(write.arguments[key] == value for key, value in c.match.items()), c.key
        assert is_conflict_call(c, write.name, write.arguments)
        assert not is_conflict_call(c, write.name, {**write.arguments, next(iter(c.match)): "other"})
    assert ("airline", "7") in conflict_tasks() and ("airline", "8") not in conflict_tasks()
