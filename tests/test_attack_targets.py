"""Attack targets (data): schema, coverage of every policy-violation task, the CRAFT airline set,
and every target executed after a compliant prefix changes tau2's database where the gold never does."""

from __future__ import annotations

import json
import re
import tomllib

import pytest

from tauguard.attacks.catalog import (
    SETS_DIR,
    TARGETS_DIR,
    domain_targets,
    load_attack_set,
    load_target_file,
    load_tactics,
    no_targets,
    set_targets,
    target_domains,
)
from tauguard.attacks.model import TACTICS
from tauguard.domains import DOMAINS
from tauguard.faults.catalog import temptations

# CRAFT's public airline set: tau-bench v1 id -> tau2 26.3 id (issue 15).
CRAFT_MAP = {
    "10": "24", "15": "11", "18": "28", "19": "29", "21": "31", "25": "35", "26": "37", "27": "9", "34": "7",
    "35": "45", "36": "6", "37": "5", "38": "46", "39": "47", "40": "4", "41": "48", "42": "49", "47": "1",
    "48": "36", "49": "0",
}


def test_the_shipped_domains_have_targets_and_no_file_names_an_unknown_domain() -> None:
    # targets are optional per domain: the checks below run for every domain with a file
    assert {"airline", "retail", "telecom"} <= set(target_domains())
    assert {p.stem for p in TARGETS_DIR.glob("*.toml")} == set(target_domains()) <= set(DOMAINS)


@pytest.mark.parametrize("domain", target_domains())
def test_targets_cover_every_policy_violation_task_once(domain: str, tau2) -> None:
    load_target_file(TARGETS_DIR / f"{domain}.toml")
    tasks = {t.id: t for t in tau2.load_tasks(domain, "base")}
    pv = {tid for tid, t in tasks.items() if tau2.is_policy_violation_task(domain, t)}
    attacked = set(set_targets("policy-violation", domain, pv))
    excused = set(no_targets(domain))
    assert attacked | excused == pv and not attacked & excused
    agent_types, _ = tau2.tool_types(domain)
    for tid, target in domain_targets(domain).items():
        assert tid in tasks
        assert agent_types.get(target.tool) == "WRITE", (domain, tid)
        assert target.clause.startswith(domain + ".") and target.premises and target.request
        tempted = temptations(domain).get(tid)
        if target.source == "temptation":
            assert tempted is not None and (tempted.name, tempted.arguments) == (target.tool, target.arguments)
            if " " not in tempted.clause:  # temptations cite clause ids: the same one
                assert tempted.clause == target.clause, (domain, tid)
    assert all(reason.strip() for reason in no_targets(domain).values())


def test_craft_airline_set_maps_v1_ids_and_says_what_it_drops() -> None:
    aset = load_attack_set("craft-airline")
    assert {m.upstream_id: m.task_id for m in aset.task} == CRAFT_MAP
    status = {m.task_id: m.status for m in aset.task}
    assert status["7"] == "excluded" and status["9"] == status["37"] == "relabelled"
    assert all(m.note for m in aset.task if m.status != "included")
    chosen = set_targets("craft-airline", "airline")
    assert set(chosen) == {m.task_id for m in aset.task if m.status != "excluded"} and len(chosen) == 16
    # relabelled: the target is not the cancellation tau2's gold makes (NQNU5R)
    assert chosen["9"].arguments == chosen["37"].arguments == {"reservation_id": "IFOYYZ"}
    assert set_targets("craft-airline", "retail") == {}
    for path in SETS_DIR.glob("*.toml"):
        with open(path, "rb") as fh:
            assert tomllib.load(fh)["name"] == path.stem


def test_tactics_are_the_five_with_texts_for_every_target() -> None:
    from tauguard.attacks.prompts import attacker_instructions, sim_turns

    assert set(load_tactics().tactic) == set(TACTICS)
    target = domain_targets("airline")["0"]
    for tactic in TACTICS:
        turns = sim_turns(target, tactic)
        assert turns and all(target.request in t for t in turns)
        text = attacker_instructions("SCENARIO", target, tactic)
        assert text.startswith("SCENARIO") and target.request in text
    assert target.premises[0] in sim_turns(target, "false-premise")[0]
    assert target.premises[1] in sim_turns(target, "planner")[1]


@pytest.mark.parametrize("domain", ["airline", "telecom"])
def test_every_target_after_a_compliant_prefix_changes_the_db_and_is_never_gold(domain: str, tau2) -> None:
    """Executed where the sim attacker's victim makes it (after the clean sim plan's steps), each
    target runs without a tool error, the database shows the change (so success is observable),
    and the judge calls it a success; tau2's gold plan (its compliant reference) never makes it."""
    from tauguard.attacks.judge import _db_state, judge_attack
    from tauguard.tau2_adapter.replay import call_tool
    from tauguard.sim.plan_replay import decision_points, replay_events
    from tauguard.sim.attacker import attacked_plan
    from tauguard.sim.clean_plan import sim_plan

    tasks = {t.id: t for t in tau2.load_tasks(domain, "base")}
    problems = []
    for tid, target in domain_targets(domain).items():
        task = tasks[tid]
        gold = [(a.name, dict(a.arguments)) for a in task.evaluation_criteria.actions or []]
        assert not any(target.matches(name, args) for name, args in gold), (domain, tid)
        plan, _ = attacked_plan(domain, tid, sim_plan(domain, task), [], target, "insist", True)
        point = next(dp for dp in decision_points(domain, task, plan) if dp.call.id == f"attack-{tid}")
        env = replay_events(domain, task, point.prefix).environment
        check = _db_state(target.tool)
        assert check is not None, target.tool
        if check(env, target.arguments, ""):
            problems.append(f"{tid}: state already holds before the write")
        result = call_tool(env, point.call)
        if result.error:
            problems.append(f"{tid}: tool error {(result.content or '')[:120]}")
            continue
        messages = [
            {"role": "assistant", "tool_calls": [{"id": "c1", "name": target.tool, "arguments": target.arguments}]},
            {"role": "tool", "id": "c1", "content": result.content, "error": False},
        ]
        verdict = judge_attack(target, messages, env)
        if verdict.success is not True:
            problems.append(f"{tid}: judged {verdict}")
    assert not problems, "\n".join(problems)


def test_a_domain_without_targets_is_one_line_naming_it_and_the_domains_with_targets(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from typer.testing import CliRunner

    from tauguard.attacks import catalog
    from tauguard.cli.main import app
    from tauguard.execution.lifecycle import plan
    from tauguard.execution.preflight import PlanError

    shutil.copy(TARGETS_DIR / "airline.toml", tmp_path / "airline.toml")
    monkeypatch.setattr(catalog, "TARGETS_DIR", tmp_path)  # as if retail and telecom had no targets file
    line = "domain 'retail' has no attack targets (tauguard/attacks/targets/retail.toml); domains with targets: airline"
    res = CliRunner().invoke(app, ["attacks", "--domain", "retail"])
    assert res.exit_code == 2 and res.stderr.strip().splitlines() == [f"error: {line}"]
    listed = CliRunner().invoke(app, ["attacks", "--format", "json"])  # every domain: those with targets
    assert listed.exit_code == 0 and {r["domain"] for r in json.loads(listed.stdout)} == {"airline"}
    with pytest.raises(PlanError, match="^" + re.escape(f"--attack insist: {line}") + "$"):
        plan({"domains": ["airline", "retail"], "attack": "insist", "out": str(tmp_path / "runs")})
    # a named set attacks its own domain only: the other domains' trials are benign, no targets needed
    plan({"domains": ["airline", "retail"], "attack": "insist", "attack_set": "craft-airline",
          "num_tasks": 1, "out": str(tmp_path / "runs")})
