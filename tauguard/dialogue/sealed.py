"""The sealed split of the confirmation cases: source files kept out of rule design.

The source files listed in ``tauguard/dialogue/data/sealed.toml`` (each τ² results file with its
sha256) are a test set: their cases are scored and reported beside the headline, and their errors
are not read while rules are designed (``tauguard dialogue eval --errors`` withholds them unless the
sealed split alone is asked for). Every other source file is development data.

This module imports neither tau2 nor litellm.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tauguard.datafiles import load_toml

SEALED_FILE = Path(__file__).parent / "data" / "sealed.toml"

#: Which cases a figure is computed on: every case, the development split, or the sealed one.
Split = Literal["all", "development", "sealed"]
SPLITS: tuple[Split, ...] = ("all", "development", "sealed")


class SealedSource(BaseModel):
    """One sealed τ² results file."""

    model_config = ConfigDict(extra="forbid")

    file: str = Field(min_length=1)  # file name in ../shared/trajectories (the cases' ``source.file``)
    agent: str = Field(min_length=1)  # the agent (and user simulator) that made it
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")  # of the results file as sealed
    sealed_on: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")


class SealedSplit(BaseModel):
    """The sealed source files."""

    model_config = ConfigDict(extra="forbid")

    sealed: list[SealedSource] = Field(min_length=2)


@lru_cache(maxsize=1)
def sealed_split() -> SealedSplit:
    """The packaged sealed split (validated)."""
    return load_toml(SEALED_FILE, SealedSplit)


def sealed_files() -> frozenset[str]:
    """The file names of the sealed sources."""
    return frozenset(s.file for s in sealed_split().sealed)


def in_split(source_file: str, split: Split) -> bool:
    """Whether a case read from ``source_file`` belongs to ``split``."""
    if split == "all":
        return True
    return (source_file in sealed_files()) == (split == "sealed")


def file_sha256(path: Path) -> str:
    """The sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def changed_sources(directories: Sequence[Path]) -> list[str]:
    """The sealed files found in ``directories`` whose bytes differ from the sealed hash (a sealed
    figure on them would not be the sealed set's)."""
    changed: list[str] = []
    for source in sealed_split().sealed:
        path = next((d / source.file for d in directories if (d / source.file).exists()), None)
        if path is not None and file_sha256(path) != source.sha256:
            changed.append(source.file)
    return changed
