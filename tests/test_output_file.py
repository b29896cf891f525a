"""`-o` and every other file a command writes: regular files only, replaced atomically;
devices, FIFOs and directories refused with one line; a symlink is followed to its target,
which must be a regular file or not exist yet (issue 26)."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tauguard.cli.main import app
from tauguard.output_file import OutputPathError, atomic_output, output_target, write_output

FLAG = "-o/--output"


def test_a_regular_file_is_replaced_atomically_and_keeps_its_mode(tmp_path: Path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    target.chmod(0o600)
    assert write_output(target, "new", FLAG) == 3
    assert target.read_text() == "new" and stat.S_IMODE(target.stat().st_mode) == 0o600
    with pytest.raises(RuntimeError), atomic_output(target, FLAG) as tmp:
        tmp.write_text("half")
        raise RuntimeError("the command failed mid-write")
    assert target.read_text() == "new" and [p.name for p in tmp_path.iterdir()] == ["out.txt"]  # no temp file left


def test_missing_folders_are_created(tmp_path: Path):
    write_output(tmp_path / "a" / "b" / "out.txt", "x", FLAG)
    assert (tmp_path / "a" / "b" / "out.txt").read_text() == "x"


def test_symlinks_are_followed_to_a_regular_file_or_a_new_one(tmp_path: Path):
    real = tmp_path / "real.html"
    real.write_text("old")
    link = tmp_path / "link.html"
    link.symlink_to(real)
    write_output(link, "new", FLAG)
    assert link.is_symlink() and real.read_text() == "new"
    dangling = tmp_path / "dangling.html"
    dangling.symlink_to(tmp_path / "created.html")
    write_output(dangling, "made", FLAG)
    assert dangling.is_symlink() and (tmp_path / "created.html").read_text() == "made"


def _fifo(tmp_path: Path) -> Path:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    return fifo


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        (lambda t: Path("/dev/null"), "is a character device, not a regular file"),
        (_fifo, "is a FIFO (named pipe), not a regular file"),
        (lambda t: t, "is a directory; give a file name"),
        (lambda t: (t / "f").write_text("") or t / "f" / "out.txt", "is a file, not a folder"),
    ],
)
def test_anything_but_a_regular_file_is_refused_and_left_as_it_was(tmp_path: Path, make, fragment):
    path = make(tmp_path)
    before = os.lstat(path).st_mode if os.path.lexists(path) else None
    with pytest.raises(OutputPathError, match=re.escape(fragment)):
        write_output(path, "x", FLAG)
    if before is not None:
        assert os.lstat(path).st_mode == before  # the node is untouched (a rename would replace it)


def test_a_symlink_to_a_device_is_refused_like_the_device(tmp_path: Path):
    link = tmp_path / "null"
    link.symlink_to("/dev/null")
    with pytest.raises(OutputPathError, match=r"\(a symlink to /dev/null\): is a character device"):
        output_target(link, FLAG)
    assert Path("/dev/null").is_char_device()


@pytest.mark.parametrize(
    "command",
    [
        ["report", "{run}", "-o", "{out}"],
        ["audit", "{run}", "-s", "ledger", "-o", "{out}"],
        ["probes", "build", "--domain", "airline", "-o", "{out}"],
        ["classifier", "train", "-p", "{t}/none.jsonl", "-o", "{out}"],
        ["check", "{run}", "--floors", "{t}/none.toml", "--junit", "{out}"],
    ],
)
def test_every_command_refuses_a_fifo_before_any_work(tmp_path: Path, command: list[str]):
    fifo = _fifo(tmp_path)
    args = [a.format(run=tmp_path / "no-run", out=fifo, t=tmp_path) for a in command]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "is a FIFO" in lines[0], res.output
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
