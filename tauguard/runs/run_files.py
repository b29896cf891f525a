"""Bounded reads of the files inside a run folder: the one way `show`, `compare`, `check`,
`report`, `export`, `power`, `audit` and `run --resume` open them.

A run folder is user data: it may have been copied, edited or tampered with, so every file in
it is checked before a byte is read:

- **type**: only a regular file is read. It is opened non-blocking and ``fstat``-ed, so a FIFO
  (which would block forever), a device (``/dev/zero`` never ends) or a symlink to either is
  refused with one line;
- **size**: a file read whole (manifest, outcome index, tallies, lock) has a size limit; the
  records file is streamed and has a (much larger) size limit too;
- **line length**: a record line is read with a bound, so a file with no newline cannot be
  pulled into memory whole;
- **counts**: the manifest's numbers (trials, task ids) are within the ranges a run can have
  (:func:`check_manifest_numbers`), so ``"trials": 1e12`` cannot make `--resume` plan 10^12 units.

The limits are documented in docs/bounds.md. Imports neither tau2 nor litellm.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from tauguard.errors import TauguardInputError
from tauguard.safe_read import file_kind

# Files read whole. The manifest is a few KB; the outcome index and tallies take ~70 and ~200
# bytes per record line.
MAX_MANIFEST_BYTES = 16 * 2**20
MAX_INDEX_BYTES = 2 * 2**30
MAX_LOCK_BYTES = 4096
# The records file is streamed one line at a time; a line holds one compressed conversation
# (tens of KB; the largest shared τ² conversation is well under 1 MB).
MAX_RECORDS_BYTES = 64 * 2**30
MAX_LINE_BYTES = 64 * 2**20
# Manifest counts (the same ranges as the flags, docs/bounds.md).
MAX_TRIALS = 1000
MAX_TASKS_PER_DOMAIN = 100_000
MAX_DOMAINS = 16


class RunLoadError(TauguardInputError):
    """A run directory is missing, unreadable or corrupt (re-exported by tauguard.runs.store)."""


class RunFileError(RunLoadError):
    """A file inside a run folder cannot be read safely; one line for the user."""




def open_run_file(path: str | Path, max_bytes: int) -> BinaryIO | None:
    """``path`` opened for binary reading, or None when it does not exist.

    :class:`RunFileError` when it is not a regular file (checked on the open descriptor, so a
    symlink is judged by what it points to) or is larger than ``max_bytes``.
    """
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (FileNotFoundError, NotADirectoryError):
        return None
    except IsADirectoryError:
        raise RunFileError(f"cannot read {path}: is a folder; a run folder holds regular files only") from None
    except OSError as exc:
        raise RunFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise RunFileError(f"cannot read {path}: is {file_kind(info.st_mode)}; a run folder holds regular files only")
        if info.st_size > max_bytes:
            raise RunFileError(f"cannot read {path}: {info.st_size} bytes is over the limit of {max_bytes} bytes")
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def read_run_file(path: str | Path, max_bytes: int) -> bytes | None:
    """The bytes of a regular file of at most ``max_bytes`` inside a run folder (None when absent)."""
    fh = open_run_file(path, max_bytes)
    if fh is None:
        return None
    with fh:
        try:
            data = fh.read(max_bytes + 1)
        except OSError as exc:
            raise RunFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > max_bytes:  # the file grew while it was read
        raise RunFileError(f"cannot read {path}: over the limit of {max_bytes} bytes")
    return data


def iter_lines(fh: BinaryIO, path: str | Path, max_line: int = MAX_LINE_BYTES) -> Iterator[bytes]:
    """The lines of an open run file (newline kept), each at most ``max_line`` bytes, else
    :class:`RunFileError` naming the line."""
    number = 0
    while True:
        try:
            raw = fh.readline(max_line + 1)
        except OSError as exc:
            raise RunFileError(f"cannot read {path}: {exc.strerror or exc}") from None
        if not raw:
            return
        number += 1
        if len(raw) > max_line:
            raise RunFileError(f"cannot read {path}: line {number} is over the limit of {max_line} bytes")
        yield raw


def check_regular_or_absent(path: str | Path, verb: str = "use") -> None:
    """:class:`RunFileError` when ``path`` exists and is not a regular file (a run file about to
    be written or appended to: a FIFO would block the writer, a device swallow the records)."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        raise RunFileError(f"cannot {verb} {path}: {exc.strerror or exc}") from None
    check_mode(mode, path, verb)


def check_mode(mode: int, path: str | Path, verb: str = "read") -> None:
    """:class:`RunFileError` unless ``mode`` (an ``st_mode``) is a regular file's."""
    if not stat.S_ISREG(mode):
        raise RunFileError(f"cannot {verb} {path}: is {file_kind(mode)}; a run folder holds regular files only")


def check_manifest_numbers(trials: int, task_ids: dict[str, list[str]], where: str) -> None:
    """:class:`RunFileError` when a manifest's counts are outside what a run can have."""
    if not 1 <= trials <= MAX_TRIALS:
        raise RunFileError(f"corrupt manifest in {where}: trials {trials} is outside [1, {MAX_TRIALS}]")
    if len(task_ids) > MAX_DOMAINS:
        raise RunFileError(f"corrupt manifest in {where}: {len(task_ids)} domains (at most {MAX_DOMAINS})")
    for domain, ids in task_ids.items():
        if len(ids) > MAX_TASKS_PER_DOMAIN:
            raise RunFileError(
                f"corrupt manifest in {where}: {len(ids)} task ids in {domain} (at most {MAX_TASKS_PER_DOMAIN})"
            )


__all__ = [
    "MAX_INDEX_BYTES",
    "MAX_LINE_BYTES",
    "MAX_LOCK_BYTES",
    "MAX_MANIFEST_BYTES",
    "MAX_RECORDS_BYTES",
    "RunFileError",
    "RunLoadError",
    "check_manifest_numbers",
    "check_mode",
    "check_regular_or_absent",
    "iter_lines",
    "open_run_file",
    "read_run_file",
]
