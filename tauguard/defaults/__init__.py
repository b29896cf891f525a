"""Packaged defaults: the default run config and the named fault profiles.

They ship inside the package (``tauguard/defaults/default.toml``,
``tauguard/defaults/faults/<name>.toml``) and are read with :mod:`importlib.resources`, so a
wheel install finds them exactly as a checkout does. A missing packaged file is an error
(a broken install), never a silent fallback to built-in values.
"""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable

from tauguard.errors import TauguardInputError

DEFAULT_CONFIG_NAME = "default.toml"
FAULT_PROFILES_DIR = "faults"


class MissingDefaultError(TauguardInputError):
    """A packaged default file is absent: the installation is incomplete."""


def _root() -> Traversable:
    return files(__name__)


def _required(resource: Traversable, what: str) -> Traversable:
    if not resource.is_file():
        raise MissingDefaultError(
            f"the packaged {what} is missing ({resource}): the tauguard installation is incomplete; reinstall it"
        )
    return resource


def default_config() -> Traversable:
    """The packaged default run config (``tauguard/defaults/default.toml``)."""
    return _required(_root() / DEFAULT_CONFIG_NAME, "default run config")


def fault_profile_names() -> list[str]:
    """Names of the packaged fault profiles (``tauguard/defaults/faults/*.toml``)."""
    folder = _root() / FAULT_PROFILES_DIR
    resources = folder.iterdir() if folder.is_dir() else []
    names = sorted(r.name.removesuffix(".toml") for r in resources if r.name.endswith(".toml"))
    if not names:
        raise MissingDefaultError(f"no packaged fault profiles in {folder}: the tauguard installation is incomplete")
    return names


def fault_profile(name: str) -> Traversable | None:
    """The packaged profile ``name``, or None when there is no such profile."""
    resource = _root() / FAULT_PROFILES_DIR / f"{name}.toml"
    return resource if resource.is_file() else None


__all__ = ["MissingDefaultError", "default_config", "fault_profile", "fault_profile_names"]
