"""Bounded reads of the files a user names (configs, fault profiles, floors, probes, τ² results).

Only regular files are read: a FIFO would block forever and ``/dev/zero`` never ends, so both
are refused before a byte is read (the file is opened non-blocking, then ``fstat``-ed). A file
is read up to a size limit, and gzip data is inflated in chunks up to a size limit and a
compression-ratio limit, so a gzip bomb is refused after at most the limit instead of
exhausting memory. The limits are documented in docs/bounds.md.
"""

from __future__ import annotations

import os
import stat
import zlib
from pathlib import Path
from tauguard.errors import TauguardInputError

# Limits (bytes). τ²'s results files are a few MB (the largest shared one: 3.9 MB inflated,
# ratio 9.9); a run config is a few KB.
MAX_FILE_BYTES = 512 * 2**20
MAX_INFLATED_BYTES = 1024 * 2**20
MAX_GZIP_RATIO = 100
_CHUNK = 2**20


class InputFileError(TauguardInputError):
    """The file cannot be read safely; one line for the user."""


def file_kind(mode: int) -> str:
    """What a file that is not a regular one is, by its ``st_mode`` (for one-line refusals)."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_regular_file(path: str | Path, *, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of ``path``, a regular file of at most ``max_bytes`` (else InputFileError).

    FileNotFoundError propagates, so callers keep their own "not found" message.
    """
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise
    except IsADirectoryError:
        raise InputFileError(f"{path}: is a folder, not a file") from None
    except OSError as exc:
        raise InputFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputFileError(f"{path}: is {file_kind(info.st_mode)}; give a regular file")
        if info.st_size > max_bytes:
            raise InputFileError(f"{path}: {info.st_size} bytes is over the limit of {max_bytes} bytes")
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                break
            total += len(chunk)
            if total > max_bytes:  # the file grew while it was read
                raise InputFileError(f"{path}: over the limit of {max_bytes} bytes")
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise InputFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def inflate_gzip(data: bytes, where: str, *, max_bytes: int = MAX_INFLATED_BYTES, max_ratio: int = MAX_GZIP_RATIO) -> bytes:
    """Inflate gzip ``data`` (concatenated members included) within the size and ratio limits."""
    limit = min(max_bytes, max(_CHUNK, len(data) * max_ratio))
    out: list[bytes] = []
    total = 0
    rest = data
    try:
        while rest:
            inflater = zlib.decompressobj(wbits=31)
            pending = rest
            while not inflater.eof:
                piece = inflater.decompress(pending, _CHUNK)
                if not piece and not inflater.unconsumed_tail:
                    break  # input exhausted before the end of the stream
                total += len(piece)
                if total > limit:
                    raise InputFileError(
                        f"{where}: gzip data inflates past {limit} bytes "
                        f"(limits: {max_bytes} bytes, {max_ratio}x the compressed size); refused as a possible gzip bomb"
                    )
                out.append(piece)
                pending = inflater.unconsumed_tail
            if not inflater.eof:
                raise InputFileError(f"{where}: corrupt gzip data (truncated)")
            rest = inflater.unused_data.lstrip(b"\x00")
    except zlib.error as exc:
        raise InputFileError(f"{where}: corrupt gzip data ({exc})") from None
    return b"".join(out)
