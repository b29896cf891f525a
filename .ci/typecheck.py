"""Type-check tauguard and the built-in strategies with mypy (configured in pyproject.toml).

``strategies/`` installs as ``tauguard_strategies`` (setup.py maps the folder), and its modules
import each other under that name. mypy names a module after its path, so ``mypy strategies``
would call them ``strategies.*`` and find no ``tauguard_strategies``; an editable install's
import hook is invisible to it. This script gives mypy the same mapping setup.py gives
setuptools, explicitly, one (path, module) pair per file: no symlink, no copied tree.

    python .ci/typecheck.py            # the settings of [tool.mypy] (strict)
    python .ci/typecheck.py --count    # print only the error count (for measuring)

Other arguments go to mypy as flags. Exit code 0 when mypy reports no error, 1 otherwise
(``.ci/run`` fails on it).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# import name -> folder, as in setup.py
PACKAGES = {"tauguard": ROOT / "tauguard", "tauguard_strategies": ROOT / "strategies"}


def module_name(package: str, folder: Path, path: Path) -> str:
    """The import name of ``path`` inside ``folder`` installed as ``package``."""
    parts = list(path.relative_to(folder).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([package, *parts])


def sources() -> list[tuple[str, str]]:
    """(path, module) for every Python file of every mapped package."""
    return [
        (str(path), module_name(package, folder, path))
        for package, folder in PACKAGES.items()
        for path in sorted(folder.rglob("*.py"))
    ]


def main(argv: list[str]) -> int:
    """Run mypy over the mapped sources; print its messages (or their count)."""
    from mypy import build
    from mypy.errors import CompileError
    from mypy.main import process_options
    from mypy.modulefinder import BuildSource

    count_only = "--count" in argv
    flags = [a for a in argv if a != "--count"]
    _, options = process_options(["--config-file", str(ROOT / "pyproject.toml"), *flags, str(ROOT / "tauguard")])
    targets = [BuildSource(path, module) for path, module in sources()]
    try:
        messages = build.build(targets, options).errors
    except CompileError as exc:  # a blocking error (syntax, duplicate module): mypy stops there
        messages = exc.messages
    errors = [m for m in messages if ": error:" in m]
    if count_only:
        print(len(errors))
    else:
        print("\n".join(messages))
        print(f"mypy: {len(errors)} errors in {len(targets)} files ({'strict' if options.disallow_untyped_defs else 'basic'})")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
