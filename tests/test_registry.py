"""The generic registry, the strategy registry (entry points, hidden test strategies, hooks
from the class) and typed strategy options, down to the CLI's one-line errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tauguard.cli.main import app
from tauguard.strategy_api.conversation import Conversation, ConversationEvent, ToolCallView
from tauguard.strategy_api.guard import GuardDecision, GuardSession, SessionContext, Strategy, Verdict
from tauguard.strategy_api.registry import (
    DuplicateNameError,
    Registry,
    RegistryLoadError,
    StrategyOptionsError,
    UnknownNameError,
    UnknownStrategyError,
    available,
    create_strategy,
    describe,
    validated_options,
)

runner = CliRunner()
CONTEXT = SessionContext(domain="airline", task_id="0", policy="", tool_types={})


def _one_line_error(res, *fragments: str) -> None:
    assert res.exit_code == 2, (res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


# --------------------------------------------------------------------------- Registry[T]


def test_registry_rejects_a_second_different_registration_but_not_the_same_one():
    reg: Registry[object] = Registry("widget", check=callable, expected="a callable")
    reg.add("a", len)
    reg.add("a", len)  # the very same object again (a re-imported module) is harmless
    with pytest.raises(DuplicateNameError, match="widget 'a' is registered twice"):
        reg.add("a", abs)

    @reg.register("b")
    def b() -> None: ...

    assert reg.get("b") is b and list(reg) == ["a", "b"] and "b" in reg and "z" not in reg


def test_registry_checks_type_lazily_and_suggests_close_names():
    reg: Registry[type] = Registry("strategy-like", check=lambda o: isinstance(o, type), expected="a class")
    reg.add("decision", target="tauguard.strategy_api.guard:GuardDecision")
    reg.add("broken", target="tauguard.strategy_api.guard:GUARD_ERROR_RULE")  # a string, not a class
    reg.add("missing", target="tauguard.no_such_module:X")
    assert "tauguard.strategy_api.guard" in sys.modules and reg.get("decision") is GuardDecision
    with pytest.raises(RegistryLoadError, match="not a class"):
        reg.get("broken")
    with pytest.raises(RegistryLoadError, match="cannot be loaded: ModuleNotFoundError"):
        reg.get("missing")
    with pytest.raises(UnknownNameError) as err:
        reg.get("decisoin")
    assert str(err.value) == "unknown strategy-like 'decisoin' (did you mean 'decision'?); allowed: broken, decision, missing"
    with pytest.raises(RegistryLoadError, match="a class"):
        reg.add("direct", "not a class")  # type: ignore[arg-type]


def test_predicates_checks_and_generators_share_the_registry():
    from tauguard.faults.generators import fault_generators
    from tauguard_strategies.action_guard.checks import CHECKS, check
    from tauguard_strategies.ledger.predicates import for_tool, predicates

    assert all(isinstance(r, Registry) for r in (fault_generators, CHECKS, predicates))
    assert "airline.cancel_ineligible" in fault_generators and len(CHECKS) > 20
    assert {p.rule_id for p in for_tool("telecom", "refuel_data")} >= {"telecom.refuel_max"}
    some_check = next(iter(CHECKS))
    with pytest.raises(DuplicateNameError):
        check(some_check)(lambda ctx: None)
    with pytest.raises(UnknownNameError, match="did you mean 'airline.cancel_ineligible'"):
        fault_generators.get("airline.cancel_inelegible")


# --------------------------------------------------------------------------- strategies


def test_builtins_come_from_tauguards_own_entry_points_with_class_metadata():
    infos = available()
    assert {"react", "refuse-writes", "ledger", "action-guard"} <= set(infos) and "block-tool" not in infos
    assert all(infos[n].origin == "built-in" and infos[n].target for n in ("react", "ledger"))
    assert describe(infos["react"]) == "No guard: the inner agent acts alone (baseline)."
    ledger = create_strategy("ledger")
    assert type(ledger).hooks() == ("before_write", "after_tool", "render_context")
    assert type(create_strategy("react")).hooks() == () and create_strategy("react").new_session(CONTEXT) is None
    # The test-only strategy is hidden from the listing but usable by name.
    assert available(include_hidden=True)["block-tool"].origin == "built-in"
    assert create_strategy("block-tool", {"tool": "book_reservation"}).options.tool == "book_reservation"


def test_hooks_are_the_session_methods_a_strategy_overrides():
    class Observer(GuardSession):
        def after_tool(self, result: ConversationEvent, conversation: Conversation) -> None: ...

    class ObserverStrategy(Strategy):
        """Observes tool results."""

        session_class = Observer

    assert ObserverStrategy.hooks() == ("after_tool",) and ObserverStrategy.summary() == "Observes tool results."


def test_unknown_strategy_suggests_and_lists_only_visible_names():
    with pytest.raises(UnknownStrategyError) as err:
        create_strategy("ledgr")
    text = str(err.value)
    assert text.startswith("unknown strategy 'ledgr' (did you mean 'ledger'?); allowed: ") and "react" in text
    assert "block-tool" not in text


def test_refuse_writes_blocks_any_write():
    session = create_strategy("refuse-writes").new_session(CONTEXT)
    d = session.before_write(ToolCallView(name="cancel_pending_order"), Conversation())
    assert d.verdict == Verdict.BLOCK and "NOT executed" in d.as_tool_error()


PLUGIN = '''
from pydantic import BaseModel, ConfigDict
from tauguard.strategy_api.guard import Strategy

class PluginOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    level: int = 2

class PluginStrategy(Strategy):
    """A third-party guard from an entry point."""
    options_model = PluginOptions
'''


def _fake_distribution(tmp_path: Path, name: str, entry_points: str) -> None:
    dist = tmp_path / f"{name.replace('-', '_')}-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(entry_points)


def test_third_party_strategy_through_entry_point(tmp_path: Path, monkeypatch):
    (tmp_path / "my_plugin_mod.py").write_text(PLUGIN)
    _fake_distribution(tmp_path, "my-plugin", "[tauguard.strategies]\nmy-plugin = my_plugin_mod:PluginStrategy\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    infos = available()
    assert "my-plugin" in infos
    assert infos["my-plugin"].origin == "entry point (my-plugin)"
    assert describe(infos["my-plugin"]) == "A third-party guard from an entry point."
    strategy = create_strategy("my-plugin", {"level": "3"})
    assert type(strategy).__name__ == "PluginStrategy" and strategy.options.level == 3
    sys.modules.pop("my_plugin_mod", None)


def test_a_plugin_cannot_take_a_builtin_name(tmp_path: Path, monkeypatch):
    _fake_distribution(tmp_path, "evil", "[tauguard.strategies]\nledger = evil_mod:Ledger\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(DuplicateNameError, match="strategy 'ledger' is registered twice"):
        available()


def test_guard_decision_error_text_carries_reason_and_remediation():
    d = GuardDecision(verdict=Verdict.VERIFY, reason="not read", remediation="read it", rule_id="r.1")
    text = d.as_tool_error()
    assert text.startswith("GUARD VERIFY [r.1]") and "not read" in text and "read it" in text
    assert Strategy().new_session(SessionContext(domain="a", task_id="b", policy="", tool_types={})) is None


# --------------------------------------------------------------------------- typed options


@pytest.mark.parametrize(
    ("name", "options", "fragments"),
    [
        ("ledger", {"rendr": False}, ["strategy 'ledger' has no option 'rendr'", "allowed: render (bool, default true)"]),
        ("ledger", {"render": "maybe"}, ["invalid value 'maybe' for option 'render'", "allowed: render (bool"]),
        ("action-guard", {"on_mising": "allow"}, ["no option 'on_mising'", "on_missing (\"verify\" | \"allow\", default \"verify\")"]),
        ("action-guard", {"max_blocks_per_tool": 0}, ["option 'max_blocks_per_tool'", "greater than or equal to 1"]),
        ("block-tool", {"tool": ""}, ["option 'tool'", "allowed: tool (str"]),
        ("react", {"render": False}, ["strategy 'react' has no option 'render'; strategy 'react' takes no options"]),
    ],
)
def test_bad_options_are_one_line_errors_naming_the_allowed_keys(name, options, fragments):
    with pytest.raises(StrategyOptionsError) as err:
        create_strategy(name, options)
    assert "\n" not in str(err.value)
    for fragment in fragments:
        assert fragment in str(err.value)


def test_options_are_validated_once_and_arrive_through_the_constructor():
    assert validated_options("ledger", {"render": "false"}) == {"render": False}
    guard = create_strategy("action-guard", {"skip_items": "a.*, b"})
    assert guard.options.skip_items == ["a.*", "b"] and "options" not in SessionContext.model_fields
    assert validated_options("action-guard", {})["on_missing"] == "verify"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["run", "--strategy", "ledger", "--strategy-option", "rendr=false"], "has no option 'rendr'; allowed: render"),
        (["run", "--strategy", "ledger", "--strategy-option", "render=maybe"], "invalid value 'maybe' for option 'render'"),
        (["run", "--strategy", "action-guard", "--strategy-option", "on_mising=allow"], "no option 'on_mising'"),
        (["run", "--strategy", "ledgr"], "did you mean 'ledger'?"),
        (["run", "--strategy", "block-tool", "--strategy-option", "tool=refuel_data"], "not a WRITE tool of airline"),
        (["probes", "eval", "--strategy", "ledger", "--probes", "none.jsonl", "--strategy-option", "rendr=0"], "no option 'rendr'"),
    ],
)
def test_cli_rejects_bad_strategy_options_with_one_line_and_writes_nothing(args, fragment, tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "runs"
    res = runner.invoke(app, [*args, *(["--out", str(out)] if args[0] == "run" else [])])
    _one_line_error(res, fragment)
    assert list(tmp_path.iterdir()) == []


def test_strategies_json_lists_options_with_types_and_defaults():
    res = runner.invoke(app, ["strategies", "--format", "json"])
    assert res.exit_code == 0
    rows = {row["name"]: row for row in json.loads(res.stdout)}
    assert "block-tool" not in rows
    assert rows["ledger"]["options"][0] | {"description": ""} == {
        "name": "render", "type": "bool", "default": True, "required": False, "description": "",
    }
    assert rows["ledger"]["hooks"] == ["before_write", "after_tool", "render_context"]
    guard = {o["name"]: o for o in rows["action-guard"]["options"]}
    assert guard["max_blocks_per_tool"]["type"] == "int" and guard["max_blocks_per_tool"]["default"] == 5
    assert rows["react"]["options"] == [] and rows["react"]["hooks"] == []
    hidden = json.loads(runner.invoke(app, ["strategies", "--all", "--format", "json"]).stdout)
    assert "block-tool" in {row["name"] for row in hidden}


def test_the_manifest_stores_the_validated_options():
    from tauguard.config import RunConfig
    from tauguard.execution.manifest import new_manifest

    config = RunConfig(strategy="action-guard", strategy_options={"skip_items": "x.*", "max_blocks_per_tool": "3"})
    manifest = new_manifest("r", config, {"airline": ["0"]}, {"name": "none"})
    assert manifest.strategy_options["skip_items"] == ["x.*"] and manifest.strategy_options["max_blocks_per_tool"] == 3
    assert manifest.strategy_options["on_missing"] == "verify"  # defaults are recorded too
    assert manifest.config["strategy_options"] == manifest.strategy_options
