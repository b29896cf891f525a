"""Packaged defaults (importlib.resources, never the checkout's folders) and the one TOML loader."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict

import tauguard
import tauguard.defaults as defaults
from tauguard.config import ConfigError, resolve_config
from tauguard.datafiles import DataFileError, load_toml
from tauguard.errors import TauguardInputError
from tauguard.faults.profiles import FaultProfileError, load_profile, profile_names

PACKAGE_DIR = Path(tauguard.__file__).parent


def test_defaults_are_package_resources_not_repository_files():
    resource = defaults.default_config()
    assert Path(str(resource)).is_relative_to(PACKAGE_DIR / "defaults")
    assert not (PACKAGE_DIR.parent / "configs" / "default.toml").exists()  # written once, in the package
    shipped = sorted(r.name.removesuffix(".toml") for r in (files("tauguard.defaults") / "faults").iterdir() if r.name.endswith(".toml"))
    assert profile_names() == shipped and {"none", "realistic", "procedural"} <= set(shipped)
    config = resolve_config(None, {})
    assert all(config.role_args(role)["temperature"] == 0 for role in ("agent", "user", "guard"))


def test_a_missing_packaged_default_is_an_error_not_a_silent_fallback(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(defaults, "_root", lambda: tmp_path)  # an install without its data files
    with pytest.raises(defaults.MissingDefaultError, match="installation is incomplete"):
        resolve_config(None, {})
    with pytest.raises(TauguardInputError, match="no packaged fault profiles"):
        load_profile("none")


def test_profiles_by_name_or_path_and_one_line_errors(tmp_path: Path):
    with pytest.raises(FaultProfileError, match="unknown fault profile 'nope'; allowed: none, procedural, realistic"):
        load_profile("nope")
    bad = tmp_path / "p.toml"
    bad.write_text('name = "p"\nuptake = "often"\n')
    with pytest.raises(FaultProfileError) as err:
        load_profile(str(bad))
    assert str(err.value).startswith(f"fault profile {bad}: uptake: ") and "\n" not in str(err.value)


class _Item(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    weight: float = 1.0


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")
    item: list[_Item]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[item]]\nid = "a"\n[[item]]\nid = "b"\nweight = "heavy"\n', "item #2 weight: Input should be a valid number"),
        ('[[item]]\nid = "a"\ncolour = 1\n', "item #1 colour: unknown key"),
        ("[[item]]\n", "item #1 id: required key is missing"),
        ('items = 1\n[[item]]\nid = "a"\n', "items: unknown key; allowed: item"),
        ("[[item]\n", "invalid TOML"),
    ],
)
def test_load_toml_errors_are_one_line_file_field_message(tmp_path: Path, text: str, message: str):
    path = tmp_path / "data.toml"
    path.write_text(text)
    with pytest.raises(DataFileError) as err:
        load_toml(path, _File)
    assert str(err.value).startswith(f"{path}: ") and message in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(DataFileError, match="file not found"):
        load_toml(tmp_path / "absent.toml", _File)


def test_input_errors_share_one_base_class():
    from tauguard.analysis.gate import GateInputError
    from tauguard.analysis.compare import CompareError
    from tauguard.execution.preflight import PlanError
    from tauguard.probes.model import ProbeFileError
    from tauguard.strategy_api.registry import StrategyOptionsError, UnknownStrategyError
    from tauguard.runs.store import RunLoadError

    for cls in (ConfigError, PlanError, RunLoadError, CompareError, GateInputError, ProbeFileError,
                UnknownStrategyError, StrategyOptionsError, DataFileError, FaultProfileError):  # fmt: skip
        assert issubclass(cls, TauguardInputError) and issubclass(cls, ValueError), cls
