"""Files a command writes (``report -o``, ``audit -o``, ``probes build -o``, ``classifier
train -o``, ``check --junit``): regular files only, replaced atomically.

The rule, one for every command:

- the path is a regular file (replaced) or does not exist yet (created, with any missing
  parent folders);
- a directory, a device (``/dev/null``), a FIFO or a socket is refused with one line: the
  write would destroy the node (a rename replaces it) or block on a reader;
- a symlink is followed only within its own folder: what is written is its target, which must
  itself be a regular file or not exist yet (the link stays a link); a link to anything else is
  refused like that thing, and a link whose target lies in another folder is refused (a link
  must never make a command silently replace a file elsewhere: write to the target itself);
- a path inside a run folder (a folder holding ``manifest.json``) is refused: a run folder
  holds the run's own files only, and replacing one (``report RUN -o RUN/simulations.jsonl``)
  would destroy the run.

The content is written to a temporary file in the target's folder, fsynced and renamed over
the target, so a reader never sees half a file and a failed write leaves the old one. An
existing file keeps its permission bits.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path
from typing import Iterator

from tauguard.errors import TauguardInputError


# The file that makes a folder a run folder (tauguard.runs.records.MANIFEST; not imported here so
# this module stays free of pydantic models).
RUN_MANIFEST = "manifest.json"


class OutputPathError(TauguardInputError):
    """An output path that is not (and cannot become) a regular file; one line for the user."""


_KINDS = (
    (stat.S_ISDIR, "a directory; give a file name"),
    (stat.S_ISCHR, "a character device, not a regular file"),
    (stat.S_ISBLK, "a block device, not a regular file"),
    (stat.S_ISFIFO, "a FIFO (named pipe), not a regular file"),
    (stat.S_ISSOCK, "a socket, not a regular file"),
)


def output_target(path: str | os.PathLike[str], flag: str) -> Path:
    """The regular file that writing ``path`` replaces or creates (a symlink's target);
    :class:`OutputPathError` when it is anything else or sits under a file."""
    given = Path(path)
    target = Path(os.path.realpath(given)) if given.is_symlink() else given
    shown = f"{flag} {given}" + (f" (a symlink to {target})" if target != given else "")
    try:
        mode = os.stat(target).st_mode
    except (FileNotFoundError, NotADirectoryError):  # absent (a parent that is a file is named below)
        mode = None
    except OSError as exc:
        raise OutputPathError(f"{shown}: cannot be written ({exc.strerror})") from None
    if mode is not None:
        for is_kind, what in _KINDS:
            if is_kind(mode):
                raise OutputPathError(f"{shown}: is {what}")
        if not stat.S_ISREG(mode):
            raise OutputPathError(f"{shown}: is not a regular file")
    for part in target.parents:
        if part.exists():
            if not part.is_dir():
                raise OutputPathError(f"{shown}: {part} is a file, not a folder")
            break
    if target != given and os.path.realpath(given.parent) != os.path.realpath(target.parent):
        raise OutputPathError(
            f"{shown}: the link points outside its own folder; give the target path itself "
            f"(a link never makes tauguard replace a file elsewhere)"
        )
    folder = Path(os.path.realpath(target.parent))
    if (folder / RUN_MANIFEST).exists():
        raise OutputPathError(
            f"{shown}: {folder} is a run folder (it holds {RUN_MANIFEST}); a run folder holds the run's "
            f"own files only: write elsewhere"
        )
    return target


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike[str], flag: str) -> Iterator[Path]:
    """Yield a temporary path to write the whole output to; on success it replaces the
    target (see the module's rule), on failure it is removed and the target is untouched."""
    target = output_target(path, flag)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise OutputPathError(f"{flag} {path}: cannot be written ({exc.strerror})") from None
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        try:
            mode = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        output_target(path, flag)  # still a regular file (or absent) right before the rename
        os.replace(tmp, target)
    except OSError as exc:
        raise OutputPathError(f"{flag} {path}: cannot be written ({exc.strerror or exc})") from None
    finally:
        tmp.unlink(missing_ok=True)


def write_output(path: str | os.PathLike[str], content: str | bytes, flag: str) -> int:
    """Write ``content`` to ``path`` atomically (text as UTF-8); returns the bytes written."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    with atomic_output(path, flag) as tmp:
        tmp.write_bytes(data)
    return len(data)


__all__ = ["OutputPathError", "atomic_output", "output_target", "write_output"]
