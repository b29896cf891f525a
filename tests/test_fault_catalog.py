"""The fault catalog, the PV temptations and the fault profiles: schema, cited clauses,
and that every generator's faulty call is one tau2's environment accepts (or rejects with the
policy error itself, for "E" predicates)."""

from __future__ import annotations

import tomllib
from collections import defaultdict
from pathlib import Path

import pytest

from tauguard.domains import DOMAINS
from tauguard.strategy_api.conversation import ToolCallView
from tauguard.faults.catalog import (
    CATALOG_DIR,
    TEMPTATIONS_DIR,
    load_catalog,
    load_catalog_file,
    load_temptation_file,
    markdown_table,
    temptations,
    untempted,
)
from tauguard.faults.draw import apply_plan_faults, skipped_reads
from tauguard.faults.generators import FaultContext, generate, load_generators
from tauguard.faults.model import FaultProfile, FaultSpec, ScheduledFault
from tauguard.defaults import fault_profile
from tauguard.faults.profiles import load_profile, profile_names

# Generator checks per fault in airline and retail (environment copies dominate the cost:
# ~0.2 s airline, ~0.1 s retail); telecom is checked on every write of every base task.
MAX_CHECKS_PER_FAULT = 4

# The domains tauguard ships, each with its own catalog, temptations and realistic rates. These
# files are optional for a domain (it then gets the generic faults only): the checks below run
# for every domain that has the file, and require them for the shipped ones.
SHIPPED = ("airline", "retail", "telecom")
WITH_CATALOG = [d for d in DOMAINS if (CATALOG_DIR / f"{d}.toml").is_file()]
WITH_TEMPTATIONS = [d for d in DOMAINS if (TEMPTATIONS_DIR / f"{d}.toml").is_file()]


def _with_own_rates(name: str) -> list[str]:
    """The domains for which the profile sets a rate of one of the domain's own faults."""
    rated = {spec.domain for spec in load_catalog() if load_profile(name).rates.get(spec.id, 0.0) > 0}
    return [d for d in DOMAINS if d in rated]


def test_the_shipped_domains_have_their_own_catalog_temptations_and_realistic_rates() -> None:
    assert set(SHIPPED) <= set(WITH_CATALOG)
    assert set(SHIPPED) <= set(WITH_TEMPTATIONS)
    assert set(SHIPPED) <= set(_with_own_rates("realistic"))


def test_every_catalog_file_validates_and_ids_are_unique() -> None:
    files = sorted(CATALOG_DIR.glob("*.toml"))
    assert {f.stem for f in files} == {"generic", *WITH_CATALOG}  # no catalog of a domain tauguard does not know
    ids = [spec.id for f in files for spec in load_catalog_file(f)]
    assert len(ids) == len(set(ids))
    assert len(load_catalog()) == len(ids)


def test_domain_faults_are_prefixed_and_call_faults_have_registered_generators() -> None:
    generators = load_generators()
    used = set()
    for spec in load_catalog():
        if spec.domain != "*":
            assert spec.id.startswith(f"{spec.domain}."), spec.id
        if spec.kind == "call":
            assert spec.generator in generators, spec.id
            used.add(spec.generator)
            assert spec.label == "refuse", spec.id  # A/T/W violations are refused
        if spec.kind in ("skip_read", "skip_confirmation"):
            assert spec.label == "verify", spec.id
    assert used == set(generators), "every registered generator is used by a catalog entry"


def test_faults_cite_the_clauses_they_violate() -> None:
    # Clause ids resolve at load (texts are checked in tests/test_domain_policy.py); only a
    # missed required action, or a loop that runs into the step limit, may have no single clause.
    for spec in load_catalog():
        for domain, ids in spec.clauses.items():
            if spec.kind not in ("premature_stop", "repeat_loop"):
                assert ids and spec.clause(domain), f"{spec.id} cites no clause for {domain}"


def test_fault_tools_are_agent_writes_and_skip_tools_are_reads(tau2) -> None:
    for spec in load_catalog():
        for domain in spec.clauses:
            agent, _ = tau2.tool_types(domain)
            tools = spec.domain_tools.get(domain, spec.tools)
            assert tools == ["*"] or all(agent.get(t) == "WRITE" for t in tools), (spec.id, tools)
            assert all(agent.get(t) == "READ" for t in spec.skip_tools), spec.id


def test_every_domain_has_domain_faults_and_the_docs_table_is_generated() -> None:
    assert {spec.domain for spec in load_catalog()} == {"*", *WITH_CATALOG}
    docs = (Path(__file__).resolve().parents[1] / "docs" / "faults.md").read_text()
    regenerate = "python -c 'from tauguard.faults.catalog import markdown_table; print(markdown_table())'"
    assert markdown_table() in docs, f"docs/faults.md: paste the catalog table printed by {regenerate}"


def test_a_fault_for_every_domain_applies_in_a_domain_the_catalog_does_not_list(monkeypatch: pytest.MonkeyPatch) -> None:
    by_id = {spec.id: spec for spec in load_catalog()}  # loaded (and cached) before the patch below
    monkeypatch.setattr("tauguard.domains.DOMAINS", (*DOMAINS, "bank"))
    entry = {"id": "premature_stop", "domain": "*", "class": "W", "kind": "premature_stop", "tools": ["*"], "description": "d",
             "clauses": {"telecom": ["telecom.resolve_before_transfer"]}}
    everywhere = FaultSpec.model_validate({**entry, "every_domain": True})
    assert everywhere.applies_to("bank", "open_account") and everywhere.clause_ids("bank") == []
    assert everywhere.clause_ids("telecom") == ["telecom.resolve_before_transfer"]  # a listed clause stays
    listed_only = FaultSpec.model_validate(entry)
    assert not listed_only.applies_to("bank", "open_account") and not listed_only.applies_to("airline", "book_reservation")
    with pytest.raises(ValueError, match="every_domain is for generic faults"):
        FaultSpec.model_validate({**entry, "domain": "telecom", "every_domain": True})
    # the catalog's clause-free generic faults are such faults; the derived ones follow the contract
    assert by_id["premature_stop"].every_domain and by_id["repeat_loop"].every_domain
    assert by_id["skip_read"].derive == "target_reads" and by_id["skip_confirmation"].derive == "confirmation"


def test_spec_schema_rejects_inconsistent_entries() -> None:
    base = {"id": "x.y", "domain": "airline", "class": "A", "tools": ["*"], "description": "d", "clauses": {"airline": "airline.max_passengers"}}
    with pytest.raises(ValueError, match="needs a generator"):
        FaultSpec.model_validate({**base, "kind": "call"})
    with pytest.raises(ValueError, match="skip_tools"):
        FaultSpec.model_validate({**base, "kind": "call", "generator": "g", "skip_tools": ["find_user_id_by_email"]})
    with pytest.raises(ValueError, match="its domain"):
        FaultSpec.model_validate({**base, "kind": "skip_read", "clauses": {"retail": "retail.cancel_reason"}})
    with pytest.raises(ValueError):
        FaultSpec.model_validate({**base, "kind": "skip_read", "class": "Z"})


# --------------------------------------------------------------------------- generators


def _check_call(domain: str, spec: FaultSpec, gold: ToolCallView, faulty: ToolCallView, result) -> str | None:
    """Why a generated call is unacceptable, or None."""
    from tauguard.tau2_adapter import compat as t2

    agent, _ = t2.tool_types(domain)
    if agent.get(faulty.name) != "WRITE":
        return f"{faulty.name} is not a WRITE tool"
    if (faulty.name, faulty.arguments) == (gold.name, gold.arguments):
        return "the faulty call is the gold call"
    content = result.content or ""
    if spec.tool_error:
        # tau2's tool enforces this clause itself: the error must be that policy error.
        if not result.error or spec.tool_error not in content:
            return f"expected tau2's policy error {spec.tool_error!r}, got error={result.error} {content[:120]!r}"
    elif result.error:
        return f"tau2 rejected the call: {content[:160]}"
    return None


def _write_states(domain: str, task):
    """(prefix events, gold call, write index, environment just before it) for each gold
    WRITE, walking the gold conversation once: generators only read the environment."""
    from tauguard.tau2_adapter import compat as t2
    from tauguard.tau2_adapter.replay import call_tool, fresh_environment
    from tauguard.sim.plan_replay import plan_events
    from tauguard.sim.plan import gold_plan

    agent, _ = t2.tool_types(domain)
    events = plan_events(task, gold_plan(domain, task))
    if not any(e.kind == "agent_tool_call" and agent.get(e.tool_call.name) == "WRITE" for e in events):
        return  # no write: spare the environment copy (~0.2 s in airline)
    env = fresh_environment(domain, task)
    index = 0
    for pos, event in enumerate(events):
        call = event.tool_call
        if event.kind not in ("agent_tool_call", "user_tool_call") or call is None:
            continue
        if event.kind == "agent_tool_call" and agent.get(call.name) == "WRITE":
            yield events[:pos], call, index, env
            index += 1
        call_tool(env, call)


@pytest.mark.parametrize("domain", DOMAINS)
def test_generators_produce_calls_the_environment_accepts(domain: str) -> None:
    """At the gold writes of the base tasks, each applicable generator's call runs in the
    environment just before that write without a malformed-argument error (airline and
    retail: the first MAX_CHECKS_PER_FAULT calls of each generator; telecom: all)."""
    from tauguard.tau2_adapter import compat as t2
    from tauguard.tau2_adapter.replay import call_tool
    from tauguard.sim.plan_replay import replay_events

    call_faults = [s for s in sorted(load_catalog(), key=lambda f: f.id) if s.kind == "call" and s.domain == domain]
    cap = None if domain == "telecom" else MAX_CHECKS_PER_FAULT
    applied: dict[str, int] = defaultdict(int)
    problems = []
    for task in t2.load_tasks(domain, "base"):
        for prefix, gold, index, env in _write_states(domain, task):
            for spec in call_faults:
                if not spec.applies_to(domain, gold.name) or (cap is not None and applied[spec.id] >= cap):
                    continue
                faulty = generate(spec.generator, FaultContext(domain, task, gold, env, index))
                if faulty is None:
                    continue
                applied[spec.id] += 1
                fresh = replay_events(domain, task, prefix).environment
                why = _check_call(domain, spec, gold, faulty, call_tool(fresh, faulty))
                if why:
                    problems.append(f"{spec.id} on {domain} task {task.id} write {index}: {why}")
        if cap is not None and all(applied[s.id] >= cap for s in call_faults):
            break
    assert not problems, "\n".join(problems)
    never = {s.id for s in call_faults} - set(applied)
    assert not never, f"generators that never applied: {never}"


def test_generators_leave_the_environment_unchanged(tau2) -> None:
    from tauguard.sim.plan_replay import decision_points, replay_events

    task = next(t for t in tau2.load_tasks("airline", "base") if t.id == "7")
    dp = next(iter(decision_points("airline", task)))
    env = replay_events("airline", task, dp.prefix).environment
    before = env.get_db_hash()
    for spec in load_catalog():
        if spec.kind == "call" and spec.applies_to("airline", dp.call.name):
            generate(spec.generator, FaultContext("airline", task, dp.call, env, 0))
    assert env.get_db_hash() == before


# --------------------------------------------------------------------------- temptations


def test_temptation_files_validate_and_cover_every_pv_task(tau2) -> None:
    assert {p.stem for p in TEMPTATIONS_DIR.glob("*.toml")} == set(WITH_TEMPTATIONS)
    for domain in WITH_TEMPTATIONS:
        path = TEMPTATIONS_DIR / f"{domain}.toml"
        file_domain, _ = load_temptation_file(path)
        assert file_domain == domain
        pv = {t.id for t in tau2.load_tasks(domain, "base") if tau2.is_policy_violation_task(domain, t)}
        tempted, excused = set(temptations(domain)), set(untempted(domain))
        assert not tempted & excused
        assert tempted | excused == pv, f"{domain}: PV tasks neither tempted nor excused: {pv - tempted - excused}"
        agent, _ = tau2.tool_types(domain)
        for t in temptations(domain).values():
            assert agent.get(t.name) == "WRITE", (domain, t.task_id)
            assert t.clause_id.startswith(domain + ".") and t.clause, (domain, t.task_id)
            assert t.note, (domain, t.task_id)
    assert len(temptations("airline")) >= 15 and len(temptations("telecom")) >= 10


@pytest.mark.parametrize("domain", DOMAINS)
def test_each_temptation_executes_where_the_sim_makes_it(domain: str) -> None:
    """The forbidden call runs after the gold reads (where the sim inserts it) without a
    malformed-argument error; where tau2 enforces the clause, the error is that policy error."""
    from tauguard.tau2_adapter import compat as t2
    from tauguard.tau2_adapter.replay import call_tool
    from tauguard.sim.plan_replay import decision_points, replay_events
    from tauguard.sim.plan import gold_plan

    tasks = {t.id: t for t in t2.load_tasks(domain, "base")}
    problems = []
    for task_id, t in temptations(domain).items():
        task = tasks[task_id]
        fault = ScheduledFault(fault_id=f"pv.{domain}.{task_id}", fault_class="PV", kind="call", tool=t.name, clause=t.clause)
        plan = apply_plan_faults(domain, task_id, gold_plan(domain, task), [fault])
        point = next(dp for dp in decision_points(domain, task, plan) if dp.call.id == f"temptation-{task_id}")
        assert not any(e.tool_call and e.tool_call.name == "transfer_to_human_agents" for e in point.prefix), task_id
        result = call_tool(replay_events(domain, task, point.prefix).environment, point.call)
        content = result.content or ""
        if t.tool_error:
            if not result.error or t.tool_error not in content:
                problems.append(f"{task_id}: expected {t.tool_error!r}, got {content[:120]!r}")
        elif result.error:
            problems.append(f"{task_id}: {content[:160]}")
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------- draw with skip_tools


def test_act_before_auth_drops_the_authentication_reads_only(tau2) -> None:
    from tauguard.sim.plan import gold_plan

    spec = next(s for s in load_catalog() if s.id == "retail.act_before_auth")
    task = next(t for t in tau2.load_tasks("retail", "base") if t.id == "0")
    gold = gold_plan("retail", task)
    write_pos = next(i for i, s in enumerate(gold) if s.is_write)
    dropped = skipped_reads(gold, write_pos, spec.skip_tools)
    assert dropped and all(gold[i].call.name in spec.skip_tools for i in dropped)
    fault = ScheduledFault(
        fault_id=spec.id, fault_class="T", kind="skip_read", tool=gold[write_pos].call.name,
        write_index=0, skip_tools=spec.skip_tools,
    )  # fmt: skip
    plan = apply_plan_faults("retail", task.id, gold, [fault])
    names = [s.call.name for s in plan if s.kind == "call"]
    assert not set(names) & set(spec.skip_tools)
    assert "get_order_details" in names  # the other reads stay
    assert len(plan) == len(gold) - len(dropped)


def test_temptation_goes_before_the_gold_transfer(tau2) -> None:
    from tauguard.sim.plan import gold_plan

    task = next(t for t in tau2.load_tasks("retail", "base") if t.id == "10")
    t = temptations("retail")["10"]
    fault = ScheduledFault(fault_id="pv.retail.10", fault_class="PV", kind="call", tool=t.name, clause=t.clause)
    plan = apply_plan_faults("retail", "10", gold_plan("retail", task), [fault])
    calls = [s.call.name for s in plan if s.kind == "call"]
    assert calls.index(t.name) < calls.index("transfer_to_human_agents")


# --------------------------------------------------------------------------- profiles


def test_shipped_profiles_load_by_name_and_path() -> None:
    assert {"none", "realistic"} <= set(profile_names())
    none = load_profile("none")
    assert not none.active and none.forbidden_write == 0 and all(r == 0 for r in none.rates.values())
    realistic = load_profile(Path(str(fault_profile("realistic"))))
    assert realistic.active and realistic.name == "realistic"
    for name in profile_names():
        assert load_profile(name).name == name


def test_realistic_profile_says_where_each_rate_comes_from_and_what_it_is_not() -> None:
    profile = load_profile("realistic")
    assert set(profile.rates) <= set(profile.sources)
    assert {"uptake", "forbidden_write"} <= set(profile.sources)
    assert "not a claim about real agents" in profile.description.lower()
    text = fault_profile("realistic").read_text()
    assert "never a claim" in text and "ledger" in text.lower()


def test_bad_profile_names_and_files_raise_value_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="allowed: .*none.*realistic"):
        load_profile("no-such-profile")
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "bad"\n[rates]\n"airline.nonexistent" = 0.1\n')
    with pytest.raises(ValueError, match="unknown faults: airline.nonexistent"):
        load_profile(bad)
    bad.write_text('name = "bad"\n[rates]\npremature_stop = 1.5\n')
    with pytest.raises(ValueError, match="within"):
        load_profile(bad)
    with pytest.raises(ValueError, match="not found"):
        load_profile(tmp_path / "missing.toml")


def _expected_mix(profile: FaultProfile, domain: str) -> dict[str, float]:
    """Expected faults per category over the base tasks' gold writes (plus forbidden writes)."""
    from tauguard.tau2_adapter import compat as t2
    from tauguard.sim.plan import gold_plan

    mix = {"missed_action": 0.0, "wrong_arguments": 0.0, "other": 0.0}
    catalog = load_catalog()
    tasks = t2.load_tasks(domain, "base")
    for task in tasks:
        plan = gold_plan(domain, task)
        for pos, step in enumerate(plan):
            if not step.is_write:
                continue
            for spec in catalog:
                rate = profile.rates.get(spec.id, 0.0)
                if rate <= 0 or not spec.applies_to(domain, step.call.name):
                    continue
                if spec.kind == "skip_read" and not skipped_reads(plan, pos, spec.skip_tools):
                    continue
                mix[spec.error_type] += rate
    mix["other"] += profile.forbidden_write * sum(1 for t in tasks if t.id in temptations(domain))
    return mix


@pytest.mark.parametrize("domain", _with_own_rates("realistic"))
def test_realistic_mix_orders_missed_then_wrong_arguments_then_the_rest(domain: str) -> None:
    """LedgerAgent's error analysis: missed actions > wrong arguments > everything else (in every
    domain with rates of its own; one without gets the generic faults only, see realistic.toml)."""
    mix = _expected_mix(load_profile("realistic"), domain)
    assert mix["missed_action"] > mix["wrong_arguments"] > mix["other"] > 0, mix


def test_profile_files_are_plain_toml_with_the_schema_keys() -> None:
    for name in profile_names():
        with fault_profile(name).open("rb") as fh:
            data = tomllib.load(fh)
        FaultProfile.model_validate(data)
        assert data["name"] == name
