"""Named fault profiles: packaged ``tauguard/defaults/faults/<name>.toml`` or a TOML path,
validated against the catalog.

A profile is a simulation parameter (the sim agent's mistake mix), never a claim about how
often real agents make mistakes.
"""

from __future__ import annotations

from importlib.resources.abc import Traversable
from pathlib import Path

from tauguard.datafiles import DataFileError, load_toml
from tauguard.defaults import fault_profile, fault_profile_names
from tauguard.errors import TauguardInputError
from tauguard.faults.catalog import faults_by_id
from tauguard.faults.model import FaultProfile


class FaultProfileError(TauguardInputError):
    """An unknown profile name, an unreadable profile file or a rate on an unknown fault."""


def profile_names() -> list[str]:
    """The names of the packaged profiles (``tauguard/defaults/faults``)."""
    return fault_profile_names()


def _resolve(name_or_path: str | Path | Traversable) -> Path | Traversable:
    if not isinstance(name_or_path, str):
        return name_or_path
    text = name_or_path
    if text.endswith(".toml") or "/" in text or "\\" in text:
        return Path(text)
    resource = fault_profile(text)
    if resource is None:
        allowed = ", ".join(profile_names())
        raise FaultProfileError(f"unknown fault profile '{text}'; allowed: {allowed} (or a path to a .toml file)")
    return resource


def check_needs(profile: FaultProfile, attack: str | None, feedback: str) -> None:
    """Every rate a sim-agent run with this profile needs is set (an error naming the field).

    ``uptake`` and, for feedback-only runs, ``block_transfer`` are needed once a guard can hold
    something (faults can fire, or the run is attacked); ``attack_susceptibility.<tactic>`` is
    needed by ``--attack <tactic>``. None of them defaults silently.
    """
    where = f"fault profile {profile.name!r}"
    if attack is not None and attack not in profile.attack_susceptibility:
        raise FaultProfileError(
            f"{where} has no attack_susceptibility.{attack}, which --attack {attack} needs; "
            f"set it (0..1) under [attack_susceptibility] in the profile"
        )
    if not (profile.active or attack is not None):
        return
    if profile.uptake is None:
        raise FaultProfileError(f"{where} does not set uptake, which this run needs; set uptake (0..1) in the profile or pass --uptake")
    if feedback == "feedback" and profile.block_transfer is None:
        raise FaultProfileError(f"{where} does not set block_transfer, which a feedback-only sim run needs; set block_transfer (0..1) in the profile")


def load_profile(name_or_path: str | Path | Traversable) -> FaultProfile:
    """Load a packaged profile by name or a profile file by path.

    Raises FaultProfileError (a ValueError) for an unknown name, an unreadable or invalid
    file, or a rate on an unknown fault id.
    """
    path = _resolve(name_or_path)
    try:
        profile = load_toml(path, FaultProfile)
    except DataFileError as exc:
        raise FaultProfileError(f"fault profile {exc}") from None
    unknown = sorted(set(profile.rates) - set(faults_by_id()))
    if unknown:
        raise FaultProfileError(f"fault profile {path} sets rates for unknown faults: {', '.join(unknown)}")
    return profile
