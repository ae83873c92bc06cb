"""CUPTI after a trace: Kineto's teardown asked for, then completed before gpuviz goes on.

Left attached (Kineto's default), CUPTI keeps a cost on every CUDA launch after the profiler
stops (see :func:`release_cupti_after_tracing`), so gpuviz asks Kineto to detach it
(``TEARDOWN_CUPTI=1``). Kineto does that lazily: stopping a trace starts a thread that waits
for the exit callback of the process's *next* CUDA runtime call and finalizes CUPTI there. A
process that makes no such call hangs at exit. On an H200 (torch 2.11, CUDA 13, 2026-11-29) a
plain ``torch.profiler`` script that recorded a matrix product, stopped and ended never
exited, nor did ``gpuviz profile`` of a script that never used CUDA. With the teardown off,
or with ``cudaRuntimeGetVersion`` called after the stop (a driver call, ``cuDriverGetVersion``,
was not enough), the plain script exited.

So :func:`teardown_completed` wraps every call that may stop a trace: the app's
:class:`~gpuviz.engine.profiling.ProfilerSession` steps and stop and, under ``gpuviz profile``,
the autograd profiler's ``__exit__``, where every torch profiler's trace ends (gpuviz's and the
script's own). Where the stop started a thread, it makes that next runtime call itself
(``cudaRuntimeGetVersion``: it starts no CUDA context and costs microseconds), until one of
the new threads has ended. On that H200 the first call after the stop finalized CUPTI in
about 2 ms, and the thread was gone in 2-4 ms. A teardown that is still pending then is
retried at exit.

Windows back to back (``--repeat``) stop one trace and start the next in one call; there
:func:`teardown_skipped` keeps CUPTI attached (no finalize and re-attach between them, and no
finalize inside the next window: kineto#1554's race), and the last window tears down.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import functools
import os
import sys
import time
from collections.abc import Callable, Iterator

TEARDOWN_ENV = "TEARDOWN_CUPTI"

WAIT_S = 1.0
"""How long one stop's teardown is given to complete (it took 2-4 ms on an H200)."""

_POLL_S = 0.001
_TASKS = "/proc/self/task"

_pending: set[str] = set()
"""Threads a stop started whose end was not seen: a teardown that may still wait."""
_poke_fn: Callable[[], object] | None = None
_exit_hook = False


def release_cupti_after_tracing() -> None:
    """Ask Kineto to detach CUPTI when a trace ends, unless the user chose otherwise.

    Left attached (Kineto's default), CUPTI keeps a cost on every launch after the profiler
    stops: on an H100 a small GPT's step took 14.5 ms before one profiled window and 21.4 ms
    after it in plain torch (``scripts/gpu/profiler_after.py``), and ``gpuviz profile``'s
    steps after its window ran 27% slower than bare. A window of CPU activity alone leaves a
    cost too: on an H200 (2026-11-29, ``benchmarks/window_aftermath.py``, each process its own
    control, 6 processes an arm) the small GPT's steps after a CPU-only window were 1.28x
    [1.15, 1.51] those of processes without a window, after a CPU and CUDA window left
    attached 1.43x [1.27, 1.57]; with the teardown 1.08x [0.98, 1.15] and, CPU-only (4
    processes), 1.04x [0.84, 1.15] (the processes' own spread is about 10%). Kineto reads
    ``TEARDOWN_CUPTI=1`` when a trace stops and then finalizes CUPTI (re-attaching lazily for
    a next window); :func:`teardown_completed` sees that it does. A value the user set is
    kept: ``TEARDOWN_CUPTI=0`` keeps CUPTI attached (``torch.compile`` with CUDA graphs sets
    that itself, because older CUDA versions crashed on re-attach after graphs).
    """
    os.environ.setdefault(TEARDOWN_ENV, "1")


def _threads() -> set[str]:
    try:
        return set(os.listdir(_TASKS))
    except OSError:  # not Linux: no /proc
        return set()


def _runtime_call() -> Callable[[], object] | None:
    """A CUDA runtime call that starts nothing, or None where there is no CUDA to tear down.

    ``cudaRuntimeGetVersion`` of the runtime library torch loaded; where torch linked it in
    (no ``libcudart.so`` mapped), ``cudaGetDevice`` through torch once CUDA is initialized.
    """
    global _poke_fn
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_available():  # no GPU: CUPTI was never attached
        return None
    if _poke_fn is None:
        paths: set[str] = set()
        with contextlib.suppress(OSError), open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "/libcudart.so" in line}
        for path in sorted(paths):
            with contextlib.suppress(OSError, AttributeError):
                _poke_fn = functools.partial(
                    ctypes.CDLL(path).cudaRuntimeGetVersion, ctypes.byref(ctypes.c_int())
                )
                break
    if _poke_fn is None and torch.cuda.is_initialized():
        return torch.cuda.current_device  # c10's current_device() calls cudaGetDevice
    return _poke_fn


def complete(started: set[str], wait_s: float | None = None) -> bool:
    """Make CUDA runtime calls until one of ``started`` (threads a stop started) has ended.

    Returns True when one has (the teardown is done, or there was none to wait for), False
    when ``wait_s`` ran out or no CUDA runtime is loaded; the threads are then kept for
    :func:`complete_pending` at exit.
    """
    poke = _runtime_call()
    deadline = time.perf_counter() + (WAIT_S if wait_s is None else wait_s)
    while started:
        if poke is not None:
            poke()
        if started - _threads():
            return True
        if poke is None or time.perf_counter() >= deadline:
            _keep_pending(started)
            return False
        time.sleep(_POLL_S)
    return True


def _keep_pending(started: set[str]) -> None:
    global _exit_hook
    _pending.update(started)
    if not _exit_hook:
        atexit.register(complete_pending)
        _exit_hook = True


def complete_pending(wait_s: float | None = None) -> bool:
    """At exit: complete a teardown that :func:`complete` left waiting (see the module).

    Where it still waits and a CUDA runtime is loaded, one line on stderr says why the
    process may not exit, and what avoids it.
    """
    started = set(_pending)
    _pending.clear()
    if not started or complete(started, wait_s):
        return True
    if _runtime_call() is not None:
        sys.stderr.write(
            "gpuviz: CUPTI's teardown after the trace did not complete; if this process does "
            f"not exit, stop it and run again with {TEARDOWN_ENV}=0\n"
        )
        sys.stderr.flush()
    return False


@contextlib.contextmanager
def teardown_skipped() -> Iterator[None]:
    """Around a call that stops a trace and starts the next one (windows back to back).

    Kineto's teardown would finalize CUPTI at the next CUDA call, inside the next window,
    which would then record no GPU activity. ``TEARDOWN_CUPTI`` is read as the trace stops,
    so it is ``0`` for this call only (where it was ``1``); the next window's stop tears down.
    """
    if os.environ.get(TEARDOWN_ENV) != "1":
        yield
        return
    os.environ[TEARDOWN_ENV] = "0"
    try:
        yield
    finally:
        os.environ[TEARDOWN_ENV] = "1"


@contextlib.contextmanager
def teardown_completed() -> Iterator[None]:
    """Around a call that may stop a trace: complete CUPTI's teardown before going on.

    Nothing is done unless ``TEARDOWN_CUPTI=1``; the cost is two listings of the process's
    threads when the call started none.
    """
    if os.environ.get(TEARDOWN_ENV) != "1":
        yield
        return
    before = _threads()
    try:
        yield
    finally:
        started = _threads() - before
        if started:
            complete(started)


__all__ = [
    "TEARDOWN_ENV",
    "complete",
    "complete_pending",
    "release_cupti_after_tracing",
    "teardown_completed",
    "teardown_skipped",
]
