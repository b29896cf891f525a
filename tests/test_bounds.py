"""The documented ranges (tauguard/bounds.py, docs/bounds.md) and the bounded reads (tauguard/safe_read.py)."""

from __future__ import annotations

import gzip
import math
import os
import zlib
from pathlib import Path

import pytest

from tauguard.bounds import BOUNDS, Bound, markdown_table
from tauguard.safe_read import InputFileError, inflate_gzip, read_regular_file

DOCS = Path(__file__).resolve().parent.parent / "docs" / "bounds.md"


def test_the_docs_hold_the_generated_table():
    assert markdown_table() in DOCS.read_text(encoding="utf-8")


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, 0, 1001])
def test_a_bound_refuses_nan_infinity_and_values_outside_it(value: float):
    with pytest.raises(ValueError, match=r"-k must .*\[1, 1000\]"):
        Bound(1, 1000, "").check(value, "-k")


def test_a_bound_accepts_its_ends():
    for b in BOUNDS.values():
        b.check(b.low, "x")
        b.check(b.high, "x")


def test_a_fifo_and_a_device_are_refused_without_blocking(tmp_path: Path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(InputFileError, match="FIFO"):
        read_regular_file(fifo)  # opened non-blocking: returns at once, no writer needed
    with pytest.raises(InputFileError, match="device"):
        read_regular_file("/dev/zero")
    with pytest.raises(FileNotFoundError):
        read_regular_file(tmp_path / "missing")


def test_a_file_over_the_size_limit_is_refused(tmp_path: Path):
    big = tmp_path / "big"
    big.write_bytes(b"x" * 2048)
    assert read_regular_file(big, max_bytes=2048) == b"x" * 2048
    with pytest.raises(InputFileError, match="over the limit of 1024 bytes"):
        read_regular_file(big, max_bytes=1024)


def test_gzip_inflates_within_the_limits_members_included():
    text = b'{"simulations": []}' * 100
    assert inflate_gzip(gzip.compress(text) + gzip.compress(text), "f") == text * 2


def test_a_gzip_bomb_stops_at_the_ratio_limit():
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    bomb = b"".join(packer.compress(bytes(2**20)) for _ in range(64)) + packer.flush()
    with pytest.raises(InputFileError, match="gzip bomb"):
        inflate_gzip(bomb, "bomb.gz", max_ratio=100)
    with pytest.raises(InputFileError, match="inflates past 4096 bytes"):
        inflate_gzip(gzip.compress(bytes(10_000)), "f", max_bytes=4096, max_ratio=10**6)


def test_truncated_gzip_is_corrupt():
    with pytest.raises(InputFileError, match="corrupt gzip data"):
        inflate_gzip(gzip.compress(b"abc" * 1000)[:30], "f")
