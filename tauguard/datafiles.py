"""One loader for TOML data files: ``load_toml(path, Model) -> Model``.

Every problem with a file (missing, not TOML, failing its schema) becomes one
:class:`DataFileError` line ``<file>: <field>: <message>``, e.g.
``checklists/airline/cancel.toml: items #2 kind: Input should be 'A', 'T' or 'D'``.
Files may be paths or package resources (:mod:`importlib.resources` traversables).
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from tauguard.errors import TauguardInputError

M = TypeVar("M", bound=BaseModel)
Source = Path | Traversable | str


class DataFileError(TauguardInputError):
    """A data or config file cannot be read or does not match its schema."""


def read_toml(path: Source) -> dict[str, Any]:
    """The parsed TOML table of ``path``; DataFileError (one line) if unreadable."""
    source = Path(path) if isinstance(path, str) else path
    try:
        if isinstance(source, Path):  # a user's file: regular files only, size-limited
            from tauguard.safe_read import read_regular_file

            return tomllib.loads(read_regular_file(source, max_bytes=16 * 2**20).decode("utf-8"))
        with source.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise DataFileError(f"file not found: {source}") from None
    except IsADirectoryError:
        raise DataFileError(f"{source}: is a directory, not a TOML file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise DataFileError(f"{source}: invalid TOML: {exc}") from None
    except RecursionError:  # tomllib recurses once per nested array or inline table
        raise DataFileError(f"{source}: invalid TOML: nested too deeply") from None
    except OSError as exc:
        raise DataFileError(f"{source}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:  # safe_read.InputFileError: a FIFO, a device, too large
        raise DataFileError(str(exc)) from None


def validation_line(exc: ValidationError, model: type[BaseModel] | None = None) -> str:
    """``<field>: <message>`` of a validation error's first problem (the input is shown).

    List positions count from 1, as a reader of the file would: ``floor #2 metric``.
    """
    err = exc.errors()[0]
    loc = " ".join(f"#{p + 1}" if isinstance(p, int) else str(p) for p in err["loc"]) or "(top level)"
    msg = str(err["msg"]).removeprefix("Value error, ")
    if err["type"] == "extra_forbidden":
        line = f"{loc}: unknown key"
        if model is not None and len(err["loc"]) == 1:
            line += f"; allowed: {', '.join(model.model_fields)}"
        return line
    if err["type"] == "missing":
        return f"{loc}: required key is missing"
    return f"{loc}: {msg} (got {err.get('input')!r})"


def validate(data: Any, model: type[M], source: object) -> M:
    """``model.model_validate(data)`` with a one-line ``<source>: <field>: <message>`` error."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise DataFileError(f"{source}: {validation_line(exc, model)}") from None


def load_toml(path: Source, model: type[M]) -> M:
    """Read the TOML file ``path`` and validate it against ``model``."""
    return validate(read_toml(path), model, path)


__all__ = ["DataFileError", "load_jsonl", "load_toml", "read_toml", "validate", "validation_line"]


def load_jsonl(files: Sequence[Path], model: type[M]) -> list[M]:
    """Every line of the JSON-lines ``files`` validated as ``model``; a bad line, or a file that
    cannot be read as UTF-8 text, is one :class:`DataFileError` naming ``<file>[:<line>]`` and
    the first problem."""
    out: list[M] = []
    for file in files:
        try:
            # regular files only, size-limited: a FIFO would block, /dev/zero never end
            from tauguard.safe_read import read_regular_file

            text = read_regular_file(file).decode("utf-8")
        except FileNotFoundError:
            raise DataFileError(f"cannot read {file}: No such file or directory") from None
        except UnicodeDecodeError as exc:
            raise DataFileError(f"{file}: not UTF-8 text (byte {exc.start})") from None
        except OSError as exc:
            raise DataFileError(f"cannot read {file}: {exc.strerror or exc}") from None
        except TauguardInputError as exc:  # safe_read.InputFileError: a FIFO, a device, too large
            raise DataFileError(exc.first_line()) from None
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    out.append(model.model_validate_json(line))
                except ValueError as exc:  # pydantic's ValidationError (invalid JSON included)
                    raise DataFileError(f"{file.name}:{n}: {str(exc).splitlines()[0]}") from None
    return out
