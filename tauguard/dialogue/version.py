"""The compiled judge's exact version: a number and a content hash of its rule modules and cue file.

``compiled/N`` alone once named several rule sets that scored differently on the same cases. The
label every report stores is now ``compiled/N+HASH``: ``HASH`` is the first 8 hex digits of a sha256
over the rule modules (:data:`RULE_FILES`) and the cue file, so any change of the rules changes the
label. ``tauguard/dialogue/data/versions.toml`` records each version's hash; a test fails when the
files' hash is not the one recorded for :data:`COMPILED_VERSION` (change the rules: add a version
with the new hash).

This module imports neither tau2 nor litellm, nor any rule module (it reads their bytes).
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from tauguard.datafiles import load_toml

HERE = Path(__file__).parent
VERSIONS_FILE = HERE / "data" / "versions.toml"
#: The files whose content is the compiled judge's rules (paths relative to tauguard/dialogue).
RULE_FILES: tuple[str, ...] = (
    "amounts.py", "cues.py", "judge.py", "polarity.py", "reasons.py", "rules.py", "statement.py", "text.py", "view.py", "data/cues.toml",
)


class JudgeVersion(BaseModel):
    """One recorded version of the compiled judge."""

    model_config = ConfigDict(extra="forbid")

    number: int = Field(ge=1)
    rules_hash: str = Field(pattern=r"^[0-9a-f]{8}$")
    date: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    note: str = Field(min_length=1)


class VersionFile(BaseModel):
    """Every recorded version, oldest first."""

    model_config = ConfigDict(extra="forbid")

    version: list[JudgeVersion] = Field(min_length=1)


def rules_hash(base: Path = HERE) -> str:
    """The first 8 hex digits of the sha256 over :data:`RULE_FILES` (name and bytes of each, in order)."""
    digest = hashlib.sha256()
    for name in RULE_FILES:
        digest.update(name.encode() + b"\0" + (base / name).read_bytes().replace(b"\r\n", b"\n") + b"\0")
    return digest.hexdigest()[:8]


@lru_cache(maxsize=1)
def versions() -> VersionFile:
    """The recorded versions (validated)."""
    return load_toml(VERSIONS_FILE, VersionFile)


#: The compiled judge's version number: the latest recorded.
COMPILED_VERSION: int = 8


@lru_cache(maxsize=1)
def compiled_label() -> str:
    """``compiled/N+HASH``, the label the compiled judge's findings and reports carry."""
    return f"compiled/{COMPILED_VERSION}+{rules_hash()}"
