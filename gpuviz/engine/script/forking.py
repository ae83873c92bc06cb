"""A script that forks: the child leaves the recording to its parent and ends as Python would.

After ``os.fork()`` the child holds a copy of what ``gpuviz profile`` set up in the parent: the
profiler's state (Kineto's own threads are not copied, only their locks and condition
variables), the step hooks, the memory sampler (its thread is not copied either), the event
sink's file and the app's pipe, and gpuviz's signal handlers. Left armed, the child ran
gpuviz's end of run too: it printed a second report, wrote the parent's trace path under the
same temporary names, and then aborted or hung in Kineto's C++ teardown at ``exit()``
(``~ConfigLoader`` destroys a condition variable whose waiter, the parent's config thread,
does not exist in the child; plain ``python`` with a profiler running hangs there as well).

So, in the child (``os.register_at_fork(after_in_child=...)``), the session is disarmed:
:func:`watch` names the function that does it, which must only drop references and restore
Python state (no call into the profiler, whose threads are gone). When the script's code
ends in the child, :func:`exit_child` ends it as Python's own finalization would, minus the
C++ teardown: the child's non-daemon threads are joined, the ``atexit`` functions run (those
of the profiler's that the parent registered are removed first), stdout and stderr are
flushed, and the process ends with ``os._exit(status)``.

Forked children that never return to gpuviz's code, such as ``multiprocessing``'s fork-start
workers (a DataLoader's), which end with ``os._exit`` themselves, are only disarmed: their
hooks do nothing and their signal handlers are the script's again.

Torch-free.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import threading
from collections.abc import Callable
from typing import Any, NoReturn

_disarm: Callable[[], None] | None = None
_before: Callable[[], None] | None = None
_registered = False
_kept: list[Any] = []
"""Objects of the parent's that the child must never finalize (files, profiler handles)."""


def watch(disarm: Callable[[], None], before: Callable[[], None] | None = None) -> None:
    """Call ``disarm()`` in every child forked from this process until :func:`unwatch`, and
    ``before()`` in this process right before each fork (the event sink writes out its
    buffers, so that the child's copy holds nothing to write twice).

    ``os.register_at_fork`` cannot be undone, so one hook is registered per process and calls
    whatever function is being watched at the time of the fork.
    """
    global _disarm, _before, _registered
    _disarm, _before = disarm, before
    if not _registered and hasattr(os, "register_at_fork"):
        os.register_at_fork(before=_before_fork, after_in_child=_after_in_child)
        _registered = True


def unwatch() -> None:
    """Stop disarming children (the session is over)."""
    global _disarm, _before
    _disarm = _before = None


def _before_fork() -> None:
    before = _before
    if before is not None:
        with contextlib.suppress(Exception):  # never break the script's fork
            before()


def keep(*objects: Any) -> None:
    """Hold ``objects`` until the process ends, so that the child never finalizes them."""
    _kept.extend(objects)


def _after_in_child() -> None:
    global _disarm, _before
    disarm = _disarm
    _disarm = _before = None  # a grandchild is not this session's either
    if disarm is None:
        return
    _unregister_profiler_atexit()
    with contextlib.suppress(Exception):  # never break the script's fork
        disarm()


def _unregister_profiler_atexit() -> None:
    """Drop the profiler's own ``atexit`` functions (they stop collection threads that the
    child does not have)."""
    monitor = sys.modules.get("torch.profiler._cupti_monitor")
    func = getattr(monitor, "_stop_collection_atexit", None)
    if func is not None:
        atexit.unregister(func)


def exit_child(code: int) -> NoReturn:
    """End a forked child with status ``code``, as Python's finalization would, but without
    the C++ teardown of the parent's profiler (see the module docstring)."""
    with contextlib.suppress(BaseException):
        _join_threads()
    with contextlib.suppress(BaseException):
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        with contextlib.suppress(BaseException):
            if stream is not None:
                stream.flush()
    os._exit(code)


def _join_threads() -> None:
    """Wait for the child's own non-daemon threads, as Python does before it exits."""
    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is not None:
        shutdown()
        return
    me = threading.current_thread()
    for t in threading.enumerate():
        if t is not me and not t.daemon and t.is_alive():
            t.join()


__all__ = ["exit_child", "keep", "unwatch", "watch"]
