"""Worker processes that die with the process that started them.

A module of its own, importing only the standard library: a spawned worker runs its initializer
only after importing the initializer's module, and until then it cannot be told to die with its
parent. Importing the ingest (Polars, DuckDB) took seconds on a loaded machine; this takes
milliseconds.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def tie_to_parent(parent: int) -> None:
    """Make a worker die with the ingest that started it, ``kill -9`` included.

    A killed parent cannot shut its pool down, and a worker waiting for its next job waits
    forever: it holds both ends of its job pipe, so it never sees end of file. On Linux the
    kernel sends SIGKILL to the worker when the parent dies (PR_SET_PDEATHSIG); everywhere, a
    thread watches the parent id change (the worker is re-parented) and exits.
    """
    if sys.platform.startswith("linux"):
        try:
            # The running program's own symbols hold libc's; find_library would start ldconfig.
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass  # the watcher below still ends the worker
    # The parent may have died before prctl took effect: then the signal never comes.
    if os.getppid() != parent:
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True, name="watch-parent").start()


def _watch_parent(parent: int, every: float = 1.0) -> None:
    while os.getppid() == parent:
        time.sleep(every)
    os._exit(1)  # no clean-up to do: the parent is gone and nothing of the worker is kept
