from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tauguard.guard import GuardDecision, SessionContext, Strategy, Verdict
from tauguard.registry import UnknownStrategyError, available, create_strategy, describe


def test_builtins_are_listed_with_descriptions():
    infos = available()
    for name in ("react", "refuse-writes", "block-tool"):
        assert infos[name].origin == "built-in"
        assert describe(infos[name])
    assert create_strategy("react").new_session(SessionContext(domain="airline", task_id="0", policy="", tool_types={})) is None


def test_unknown_strategy_names_the_allowed_ones():
    with pytest.raises(UnknownStrategyError) as err:
        create_strategy("nope")
    assert "unknown strategy 'nope'" in str(err.value) and "react" in str(err.value)


def test_refuse_writes_blocks_any_write():
    session = create_strategy("refuse-writes").new_session(SessionContext(domain="retail", task_id="1", policy="", tool_types={}))
    from tauguard.conversation import Conversation, ToolCallView

    d = session.before_write(ToolCallView(name="cancel_pending_order"), Conversation())
    assert d.verdict == Verdict.BLOCK and "NOT executed" in d.as_tool_error()


PLUGIN = '''
from tauguard.guard import Strategy

class PluginStrategy(Strategy):
    """A third-party guard from an entry point."""
    name = "my-plugin"
'''


def test_third_party_strategy_through_entry_point(tmp_path: Path, monkeypatch):
    (tmp_path / "my_plugin_mod.py").write_text(PLUGIN)
    dist = tmp_path / "my_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: my-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[tauguard.strategies]\nmy-plugin = my_plugin_mod:PluginStrategy\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    infos = available()
    assert "my-plugin" in infos
    assert infos["my-plugin"].origin.startswith("entry point")
    assert describe(infos["my-plugin"]) == "A third-party guard from an entry point."
    assert type(create_strategy("my-plugin")).__name__ == "PluginStrategy"
    sys.modules.pop("my_plugin_mod", None)


def test_guard_decision_error_text_carries_reason_and_remediation():
    d = GuardDecision(verdict=Verdict.VERIFY, reason="not read", remediation="read it", rule_id="r.1")
    text = d.as_tool_error()
    assert text.startswith("GUARD VERIFY [r.1]") and "not read" in text and "read it" in text
    assert Strategy().new_session(SessionContext(domain="a", task_id="b", policy="", tool_types={})) is None
