"""Named fault profiles: ``configs/faults/<name>.toml`` validated against the catalog.

A profile is a simulation parameter (the sim agent's mistake mix), never a claim about how
often real agents make mistakes.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import tauguard
from pydantic import ValidationError
from tauguard.faults.catalog import faults_by_id
from tauguard.faults.model import FaultProfile

PROFILES_DIR = Path(tauguard.__file__).parent.parent / "configs" / "faults"


def profile_names() -> list[str]:
    """The names of the profiles shipped in ``configs/faults``."""
    return sorted(p.stem for p in PROFILES_DIR.glob("*.toml"))


def _resolve(name_or_path: str | Path) -> Path:
    text = str(name_or_path)
    if text.endswith(".toml") or "/" in text or "\\" in text:
        path = Path(text)
        if not path.is_file():
            raise ValueError(f"fault profile file not found: {path}")
        return path
    path = PROFILES_DIR / f"{text}.toml"
    if not path.is_file():
        allowed = ", ".join(profile_names()) or "(none found)"
        raise ValueError(f"unknown fault profile '{text}'; allowed: {allowed} (or a path to a .toml file)")
    return path


def load_profile(name_or_path: str | Path) -> FaultProfile:
    """Load a profile by name (``configs/faults/<name>.toml``) or from a TOML file path.

    Raises ValueError for an unknown name, an invalid file, or a rate on an unknown fault id.
    """
    path = _resolve(name_or_path)
    try:
        with open(path, "rb") as fh:
            profile = FaultProfile.model_validate(tomllib.load(fh))
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "profile"
        msg = str(err["msg"]).removeprefix("Value error, ")
        raise ValueError(f"invalid fault profile {path}: {where}: {msg}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"invalid fault profile {path}: {exc}") from exc
    unknown = sorted(set(profile.rates) - set(faults_by_id()))
    if unknown:
        raise ValueError(f"fault profile {path} sets rates for unknown faults: {', '.join(unknown)}")
    return profile
