"""A strategy's per-domain modules are found by name: a new domain's file needs no registration.

The ledger's schemas, read maps and predicates are required for the ledger (one error naming the
domain and the missing files); action-guard's extra checks are optional.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from tauguard.domains import DOMAINS
from tauguard_strategies import domain_modules
from tauguard_strategies.ledger.strategy import LedgerRulesMissing, LedgerStrategy, check_rules

SHIPPED = {"airline", "retail", "telecom"}


def test_the_shipped_domains_rules_are_found_by_name() -> None:
    from tauguard_strategies.ledger.predicates import all_predicates
    from tauguard_strategies.ledger.readmap import domain_map
    from tauguard_strategies.ledger.schemas import LEDGER_TYPES

    assert SHIPPED <= set(LEDGER_TYPES) <= set(DOMAINS)
    for domain in SHIPPED:
        assert LEDGER_TYPES[domain].__module__ == f"tauguard_strategies.ledger.schemas.{domain}"
        assert domain_map(domain).reads, domain
        assert any(p.domain == domain for p in all_predicates()), domain
        check_rules(domain)  # nothing missing


def test_a_new_domains_module_is_loaded_without_registration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "probe_rules"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("LOADED: list[str] = []\n")
    (pkg / "bank.py").write_text(textwrap.dedent("""
        from probe_rules import LOADED
        LOADED.append("bank")
    """))
    (pkg / "stray.py").write_text("raise AssertionError('not a domain: must not be imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(domain_modules, "DOMAINS", ("airline", "bank"))
    try:
        found = domain_modules.load_domain_modules("probe_rules")
        assert list(found) == ["bank"]  # airline has no module there; stray is no domain
        assert sys.modules["probe_rules"].LOADED == ["bank"]
        assert domain_modules.missing_module("probe_rules", "airline") == "probe_rules/airline.py"
        assert domain_modules.missing_module("probe_rules", "bank") is None
    finally:
        for name in [m for m in sys.modules if m == "probe_rules" or m.startswith("probe_rules.")]:
            del sys.modules[name]


def test_an_error_inside_a_domains_module_is_not_taken_for_a_missing_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "broken_rules"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "bank.py").write_text("import no_such_module_anywhere\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(domain_modules, "DOMAINS", ("bank",))
    try:
        with pytest.raises(ModuleNotFoundError, match="no_such_module_anywhere"):
            domain_modules.load_domain_modules("broken_rules")
    finally:
        for name in [m for m in sys.modules if m == "broken_rules" or m.startswith("broken_rules.")]:
            del sys.modules[name]


def test_the_ledger_on_a_domain_without_its_rules_is_one_line_naming_the_domain_and_files() -> None:
    with pytest.raises(LedgerRulesMissing) as exc:
        LedgerStrategy().check_domains(["airline", "bank"])
    assert str(exc.value) == (
        "strategy ledger: domain 'bank' has no ledger rules: missing strategies/ledger/clauses/bank.toml, "
        "strategies/ledger/schemas/bank.py, strategies/ledger/readmap/bank.py, strategies/ledger/predicates/bank.py"
    )


def test_the_action_guard_on_a_domain_without_any_checklist_is_one_line() -> None:
    from tauguard_strategies.action_guard.strategy import ActionGuardStrategy, ChecklistsMissing

    ActionGuardStrategy().check_domains(list(SHIPPED))  # each has its checklists
    with pytest.raises(ChecklistsMissing) as exc:
        ActionGuardStrategy().check_domains(["airline", "bank"])
    assert str(exc.value) == (
        "strategy action-guard: domain 'bank' has no checklists (strategies/action_guard/checklists/bank/<tool>.toml)"
    )


def test_a_read_map_lookup_names_the_file_it_needs() -> None:
    from tauguard_strategies.ledger.readmap import domain_map

    with pytest.raises(ValueError, match=r"no read map for domain 'bank' \(strategies/ledger/readmap/bank.py with a MAP\)"):
        domain_map("bank")


def test_action_guard_checks_of_a_domain_are_optional() -> None:
    from tauguard_strategies.action_guard.checks import CHECKS

    # a domain without checks/<domain>.py: the common checks only (nothing is required)
    assert domain_modules.missing_module("tauguard_strategies.action_guard.checks", "bank") is not None
    assert {"dialogue.explicit_confirmation", "tool.entity_read"} <= set(CHECKS)
    # the shipped domains' own modules were found by name and registered their checks
    for domain in SHIPPED:
        assert any(name.startswith(f"{domain}.") for name in CHECKS), domain
