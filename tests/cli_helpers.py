"""Running the `tauguard` CLI in a subprocess, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def tauguard(*args: str, env: dict[str, str | None] | None = None, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run `python -m tauguard ARGS` and capture its output (``env`` values of None unset)."""
    full_env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", CI="true")
    for key, value in (env or {}).items():  # None removes a variable
        if value is None:
            full_env.pop(key, None)
        else:
            full_env[key] = value
    return subprocess.run(
        [sys.executable, "-m", "tauguard", *args], capture_output=True, text=True, env=full_env,
        cwd=cwd or REPO, timeout=timeout,
    )
