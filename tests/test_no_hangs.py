"""Workers never inherit the run's SIGTERM handler (issue 26).

The run turns SIGTERM into KeyboardInterrupt in its own process. A joblib multiprocessing
worker forked while that handler was installed turned the pool's own SIGTERM at shutdown
into a KeyboardInterrupt inside a queue lock, survived, and the parent waited for it forever
(20-40 pool cycles were enough). Forked children now get SIGTERM's default action back.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest
from joblib import Parallel, delayed

from cli_helpers import REPO
from tauguard.execution.os_processes import sigterm_as_interrupt

CYCLES = 200


def _sigterm_is_default() -> bool:
    return signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


@pytest.mark.slow
def test_two_hundred_pool_cycles_under_the_runs_handler_do_not_hang():
    script = textwrap.dedent(f"""
        from joblib import Parallel, delayed
        from tauguard.execution.os_processes import sigterm_as_interrupt

        def square(i):
            return i * i

        with sigterm_as_interrupt():
            for cycle in range({CYCLES}):
                assert Parallel(n_jobs=2, backend="multiprocessing")(delayed(square)(i) for i in range(4)) == [0, 1, 4, 9]
        print("cycles", {CYCLES})
    """)
    # The timeout only turns a hang into a failure (200 cycles take seconds idle, minutes at load 20+;
    # it stays under pytest-timeout's 600 s so the failure names the hang).
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=540)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == f"cycles {CYCLES}"
    assert "KeyboardInterrupt" not in proc.stderr


@pytest.mark.parametrize("backend", ["multiprocessing", "loky"])
def test_joblib_workers_start_with_the_default_sigterm_action(backend: str):
    with sigterm_as_interrupt():
        assert not _sigterm_is_default()  # the run's own process has the handler
        seen = Parallel(n_jobs=2, backend=backend)(delayed(_sigterm_is_default)() for _ in range(4))
    assert seen == [True] * 4


def test_a_plain_fork_gets_the_default_sigterm_action():
    with sigterm_as_interrupt():
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child reports and leaves at once
            os.write(write, b"1" if _sigterm_is_default() else b"0")
            os._exit(0)
        os.close(write)
        answer = os.read(read, 1)
        os.close(read)
        os.waitpid(pid, 0)
    assert answer == b"1"


def test_joblib_loky_works_in_a_process_that_ran_the_loky_engine():
    # The loky engine's process-wide reusable executor is the one joblib's own
    # Parallel(backend="loky") reuses later in the same process (a notebook, a library user,
    # the test suite). Built with loky's bare factory, it lacked joblib's temporary-folder
    # manager and that later Parallel call raised AttributeError. A fresh interpreter, so no
    # earlier test has set joblib's reuse state.
    script = textwrap.dedent("""
        from joblib import Parallel, delayed
        from tauguard.execution.engines.pool import PoolEngine

        engine = PoolEngine("loky", 2, streaming=False)
        engine.close(cancel=False)
        print(Parallel(n_jobs=2, backend="loky")(delayed(abs)(-i) for i in range(4)))
    """)
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[0, 1, 2, 3]"
