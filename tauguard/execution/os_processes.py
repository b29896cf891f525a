"""Process hygiene for runs: SIGTERM as an interrupt, workers that die with their parent,
and joblib's shared-memory folders removed after a run (and after killed runs).

Imports neither tau2 nor litellm.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import threading
import time
from pathlib import Path
from typing import Any, Iterator

from tauguard.runs.store import pid_alive

SHM = Path("/dev/shm")
_JOBLIB_PREFIX = "joblib_memmapping_folder_"
_WATCHING = False


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C's KeyboardInterrupt (the run is marked ``interrupted``)."""


def _raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated("SIGTERM")


def _reset_inherited_handlers() -> None:
    # In a forked child (joblib's multiprocessing pool, a multiprocessing Manager, the fork
    # backend): the run's SIGTERM handler belongs to the run's process. A pool worker that
    # inherited it turns the pool's own SIGTERM at shutdown into a KeyboardInterrupt inside a
    # queue lock, survives, and the parent waits for it forever.
    try:
        if signal.getsignal(signal.SIGTERM) is _raise_terminated:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
    except ValueError:  # not the main thread of the child (cannot happen after fork; be safe)
        pass


os.register_at_fork(after_in_child=_reset_inherited_handlers)


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """While inside, SIGTERM raises :class:`Terminated` (a KeyboardInterrupt) in the main
    thread, like Ctrl-C, so a terminated run is marked ``interrupted`` and keeps its resume
    hint. Processes forked meanwhile get SIGTERM's default action back (see above)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def clean_joblib_folders(owner_pid: int | None = None) -> int:
    """Remove joblib's ``/dev/shm`` memmapping folders of ``owner_pid`` (this process by
    default) and of processes that no longer exist; returns how many were removed."""
    owner = os.getpid() if owner_pid is None else owner_pid
    removed = 0
    try:
        entries = list(SHM.glob(_JOBLIB_PREFIX + "*"))
    except OSError:
        return 0
    for path in entries:
        pid_text = path.name[len(_JOBLIB_PREFIX):].split("_", 1)[0]
        if not pid_text.isdigit():
            continue
        pid = int(pid_text)
        if pid == owner or not pid_alive(pid):
            shutil.rmtree(path, ignore_errors=True)
            removed += 1
    return removed


def exit_with_parent(parent_pid: int | None, interval_s: float = 0.5) -> None:
    """In a worker process, exit as soon as ``parent_pid`` (the run's process) is gone.

    Loky workers otherwise outlive a SIGKILLed run by tens of seconds, holding CPU and the
    run's files. A no-op in the run's own process (threading backend, ``--workers 1``) and
    when the worker was not started by the run's process.
    """
    global _WATCHING
    if _WATCHING or parent_pid is None or os.getpid() == parent_pid or os.getppid() != parent_pid:
        return
    _WATCHING = True

    def _watch() -> None:
        while True:
            time.sleep(interval_s)
            if os.getppid() != parent_pid:
                os._exit(1)  # the parent died: nobody will read this worker's results

    threading.Thread(target=_watch, name="tauguard-parent-watch", daemon=True).start()
