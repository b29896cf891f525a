"""Copy-on-write environments: same states and same hash equality as tau2's full copies."""

from __future__ import annotations

import copy
import itertools
import pickle

import pytest

from tauguard.tau2_adapter import compat as t2
from tauguard.tau2_adapter.cow_env import CowTable, _pristine, db_state, same_db


def _replay_gold(domain: str, task: t2.Task) -> t2.Environment:
    env = t2.make_environment(domain)
    for action in task.evaluation_criteria.actions or []:
        try:
            env.make_tool_call(tool_name=action.name, requestor=action.requestor, **action.arguments)
        except Exception:  # failing gold actions are ignored, as tau2 does
            pass
    return env


@pytest.mark.parametrize("domain", ["airline", "retail"])
def test_touched_entry_comparison_matches_tau2_hashes(domain):
    cow, _ = _pristine(domain)
    before = cow.db.get_hash()
    tasks = [t for t in t2.load_tasks(domain, "base") if not t2.is_policy_violation_task(domain, t)][:4]
    tasks += [t for t in t2.load_tasks(domain, "base") if t2.is_policy_violation_task(domain, t)][:1]
    envs = [_replay_gold(domain, t) for t in tasks] + [t2.make_environment(domain), _replay_gold(domain, tasks[0])]
    states = [db_state(e.tools) for e in envs]
    hashes = [e.get_db_hash() for e in envs]  # tau2's own hash over the copy-on-write tables
    for state, digest in zip(states, hashes):
        assert state.origin is cow and state.full_hash() == digest
    outcomes = set()
    for (a, ha), (b, hb) in itertools.combinations(zip(states, hashes), 2):
        assert same_db(a, b) == (ha == hb)
        outcomes.add(ha == hb)
    assert outcomes == {True, False}
    assert sum(len(keys) for keys in states[0].changed.values()) < 20  # only touched entries
    assert cow.db.get_hash() == before, "a simulation changed the pristine database"


def test_cow_table_never_hands_out_pristine_entries():
    cow, _ = _pristine("airline")
    env = t2.make_environment("airline")
    table = env.tools.db.users
    assert isinstance(table, CowTable)
    key = next(iter(dict.keys(table)))
    pristine = cow.tables["users"].entries[key]
    assert table[key] is not pristine and table[key] == pristine
    assert key in table.touched
    other = list(dict.keys(table))[1]
    assert dict(table)[other] is not pristine and other in table.touched  # dict() goes through __getitem__
    snapshot = pickle.loads(pickle.dumps(table))
    assert type(snapshot) is dict and snapshot.keys() == table.keys()
    assert type(copy.deepcopy(env.tools.db).users) is dict
    removed = list(dict.keys(table))[2]
    table.pop(removed)
    state = db_state(env.tools)
    assert state.changed["users"][removed] is None and state.full_hash() == env.get_db_hash()
    # inside a READ tool, iteration needs no copies (the flight search walks every flight)
    env.make_tool_call("search_direct_flight", origin="JFK", destination="SFO", date="2024-05-16")
    assert not env.tools.db.flights.touched
