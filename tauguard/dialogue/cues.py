"""The cue lexicons of the compiled dialogue judge, kept as data (``tauguard/dialogue/data/cues.toml``).

Each cue is a named regular expression with a one-line doc, the module that uses it, and examples it
must match and non-examples it must not (every one checked by a test). Modules take their cues with
:func:`cue`; changing the file changes the judge, so its content hash is part of the judge's version
(:mod:`tauguard.dialogue.version`).

This module imports neither tau2 nor litellm.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tauguard.datafiles import load_toml

CUES_FILE = Path(__file__).parent / "data" / "cues.toml"


class Cue(BaseModel):
    """One cue: a pattern matched on folded text, with what it recognises and examples on both sides."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    module: str = Field(min_length=1)  # the module of tauguard.dialogue that uses it
    doc: str = Field(min_length=1)
    pattern: str = Field(min_length=1)
    ignore_case: bool = False
    examples: list[str] = Field(min_length=1)  # texts it must match
    non_examples: list[str] = Field(default_factory=list)  # texts it must not match

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from None
        return value

    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern."""
        return re.compile(self.pattern, re.IGNORECASE if self.ignore_case else 0)


class CueFile(BaseModel):
    """Every cue, by a unique name."""

    model_config = ConfigDict(extra="forbid")

    cue: list[Cue] = Field(min_length=1)

    @field_validator("cue")
    @classmethod
    def _unique(cls, value: list[Cue]) -> list[Cue]:
        names = [c.name for c in value]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"cue names must be unique; repeated: {', '.join(dup)}")
        return value


@lru_cache(maxsize=1)
def cue_file() -> CueFile:
    """The packaged cue file (validated)."""
    return load_toml(CUES_FILE, CueFile)


def cue(name: str) -> re.Pattern[str]:
    """The compiled pattern of the cue ``name`` (KeyError for an unknown name)."""
    for c in cue_file().cue:
        if c.name == name:
            return c.compiled()
    raise KeyError(f"unknown dialogue cue '{name}'")
