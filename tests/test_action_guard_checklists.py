"""The action guard's checklists: every file validates and is grounded in tau2's policy."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from tauguard_strategies.action_guard.schema import (
    Checklist,
    checklist_files,
    domain_checklists,
    load_checklist,
)
from tauguard_strategies.action_guard.checks import CHECKS
from tauguard.tau2_adapter import compat as t2

FILES = checklist_files()


def test_there_are_checklist_files_for_every_domain() -> None:
    assert {p.parent.name for p in FILES} == set(t2.DOMAINS)


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_checklist_validates_and_is_grounded(path: Path) -> None:
    # Grounding: every item cites clauses of the domain's policy pack (an unknown id fails the load);
    # the clause texts are checked verbatim in tests/test_domain_policy.py.
    checklist = load_checklist(path)
    agent_types, _ = t2.tool_types(checklist.domain)
    assert agent_types.get(checklist.tool) == "WRITE", f"{checklist.tool} is not an agent WRITE tool"
    assert checklist.items, "a checklist needs at least one item"
    for item in checklist.items:
        assert item.policy and "{" not in item.requirement + item.remediation
        if item.check is not None:
            assert item.check in CHECKS, f"{item.id}: unknown check id {item.check!r}"
    # Each checklist has at least one deterministic check, or the compiled backend is blind to the tool.
    assert any(item.check for item in checklist.items)


@pytest.mark.parametrize("domain", t2.DOMAINS)
def test_every_agent_write_tool_has_a_checklist(domain: str) -> None:
    agent_types, _ = t2.tool_types(domain)
    writes = {name for name, kind in agent_types.items() if kind == "WRITE"}
    assert set(domain_checklists(domain)) == writes


def test_writes_needing_confirmation_have_a_confirmation_item() -> None:
    # Airline and retail policies require an explicit "yes" before every database update.
    for domain in ("airline", "retail"):
        for tool, checklist in domain_checklists(domain).items():
            checks = [i.check for i in checklist.items]
            assert "dialogue.explicit_confirmation" in checks, f"{domain}/{tool}"


def _minimal(**item: object) -> dict:
    base = {"id": "retail.cancel_pending_order.x", "kind": "T", "requirement": "r", "clauses": "retail.cancel_pending"}
    return {"domain": "retail", "tool": "cancel_pending_order", "items": [{**base, **item}]}


def test_schema_rejects_an_a_item_that_only_verifies() -> None:
    with pytest.raises(ValidationError, match="REVISE or BLOCK"):
        Checklist.model_validate(_minimal(kind="A"))


def test_schema_rejects_a_d_item_that_blocks() -> None:
    with pytest.raises(ValidationError, match="only VERIFY"):
        Checklist.model_validate(_minimal(kind="D", on_violation="BLOCK"))


def test_schema_rejects_item_ids_outside_the_tool_scope() -> None:
    with pytest.raises(ValidationError, match="must start with"):
        Checklist.model_validate(_minimal(id="airline.cancel_reservation.x"))


def test_schema_rejects_unknown_fields() -> None:
    with pytest.raises(ValidationError):
        Checklist.model_validate(_minimal(severity="high"))


def test_file_name_must_match_the_declared_tool(tmp_path: Path) -> None:
    folder = tmp_path / "retail"
    folder.mkdir()
    path = folder / "modify_user_address.toml"
    path.write_text('domain = "retail"\ntool = "cancel_pending_order"\n')
    with pytest.raises(ValueError, match="declares"):
        load_checklist(path)
