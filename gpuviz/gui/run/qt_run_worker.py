"""The QThread bridge from the engine to the GUI: iterate a run's events, emit each as a signal.

Like napari's ``_qt/qthreading.py``: the work is a plain iterable of typed, frozen events (the
engine's Runner, its child-process executor, or a replayed file), and the worker turns each one
into a ``yielded`` signal, which Qt queues to the GUI thread in order. The worker never touches a
widget.

Which executor (:func:`make_source`):

- profiled runs go to the engine's **child-process** executor: ``torch.profiler``'s stop and
  export hold the GIL for seconds on large runs (DESIGN.md), which would freeze the app if the
  profiler ran in its process; a crash of the workload cannot take the app down either.
- quick unprofiled timing runs may use the **in-thread** Runner, in this worker's thread (it
  imports torch into the app's process, once).
- a recorded ``.jsonl`` stream is replayed by :class:`~gpuviz.gui.run.replay.EventReplay`.

The engine is imported in the worker thread, when a run starts, never when the GUI is imported.
"""

from __future__ import annotations

import os
import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QThread, Signal

RUN_NICE = 10
"""The nice value of the run's thread, and so of the child it starts (Linux)."""

CANCEL_GRACE_S = 30.0
"""After Cancel, how long a child may take to finish its step and stop cleanly before a kill."""


def make_source(request: dict[str, Any], executor: str = "child") -> Any:
    """The engine's event source for ``request`` (``RunRequest`` fields as a dict).

    Parameters
    ----------
    request : dict
        ``workload``, ``params`` (typed values, already checked by the form), ``device``,
        ``gpus``, ``steps``, ``out``, ``profile``.
    executor : {"child", "thread"}
        The child-process executor, or the in-thread Runner (imports torch here).

    Returns
    -------
    object
        An iterable of events with a thread-safe ``cancel()``.
    """
    from gpuviz.engine.runner import RunRequest

    req = RunRequest(**request)
    if executor == "thread":
        from gpuviz.engine.runner import Runner

        return Runner(req)
    from gpuviz.engine.child import ChildProcessRunner

    # check=False: the form checked the parameters and the device picker offers only devices
    # that exist; the engine's own check would import torch into the app's process.
    return ChildProcessRunner(req, check=False, forward_stderr=False, cancel_grace_s=CANCEL_GRACE_S)


class QtRunWorker(QThread):
    """Runs one event source in its own thread and emits its events.

    Signals (delivered on the GUI thread, in order)
    -------
    yielded(object)
        Each engine event, as the source yields it.
    errored(str, str)
        The source could not be made or broke outside the engine's own error handling (a
        message and a traceback). The engine reports a failing *workload* as a ``Failed``
        event instead.

    ``finished`` (QThread's) comes after the last of these.

    Parameters
    ----------
    make : callable
        ``make() -> source``, called in the worker thread; a source is an iterable of events
        with a thread-safe ``cancel()``.
    label : str
        What runs, for messages.
    """

    yielded = Signal(object)
    errored = Signal(str, str)

    def __init__(
        self, make: Callable[[], Any], label: str = "", parent: Any = None, nice: int = RUN_NICE
    ) -> None:
        super().__init__(parent)
        self.nice = nice
        self.setObjectName(f"QtRunWorker {label}".strip())
        self._make = make
        self.label = label
        self.source: Any = None
        self._cancel_requested = False

    def cancel(self) -> None:
        """Ask the run to stop at its next step boundary (thread-safe; what was recorded stays)."""
        self._cancel_requested = True
        source = self.source
        if source is not None:
            source.cancel()

    def child_pid(self) -> int | None:
        """The child process's pid while a child-process run is going, else None."""
        proc = getattr(self.source, "proc", None)
        if proc is None or proc.poll() is not None:
            return None
        return int(proc.pid)

    def run(self) -> None:
        _lower_priority(self.nice)
        try:
            source = self._make()
        except Exception as exc:
            self.errored.emit(_one_line(exc), traceback.format_exc())
            return
        self.source = source
        if self._cancel_requested:  # Cancel pressed while the engine was being imported
            source.cancel()
        try:
            for event in source:
                self.yielded.emit(event)
        except Exception as exc:
            self.errored.emit(_one_line(exc), traceback.format_exc())


def _lower_priority(nice: int) -> None:
    """Lower this thread's CPU priority, so that the GUI thread wins the cores.

    On Linux a thread has its own nice value and a child process forked from it inherits it,
    so the workload's child runs at this priority too. Measured on 2 cores, a child at the
    GUI's priority starved the GUI thread for up to 0.4 s while it imported torch and
    exported its trace. Elsewhere ``setpriority(PRIO_PROCESS, 0)`` would lower the whole app,
    so nothing is changed.
    """
    if not nice or not sys.platform.startswith("linux"):
        return
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + nice)
    except (OSError, AttributeError):
        pass


def make_script_source(run: dict[str, Any]) -> Any:
    """The engine's source for a ``profile_script`` run (called in the worker thread)."""
    from gpuviz.engine.script.options import ProfileOptions
    from gpuviz.engine.script.process import ScriptProcess, ScriptRun

    target = str(run["target"])
    options = ProfileOptions(
        script=None if run.get("module") else target,
        module=target if run.get("module") else None,
        args=[str(a) for a in run.get("args", [])],
        out=str(run["out"]),
        **dict(run.get("options", {})),
    )
    return ScriptProcess(
        ScriptRun(
            options,
            python=str(run.get("python") or sys.executable),
            cwd=run.get("cwd") or None,
            env={str(k): str(v) for k, v in dict(run.get("env", {})).items()},
        )
    )


def _one_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    msg = lines[0] if lines else ""
    if type(exc).__name__ in ("BadInputError", "EventDecodeError"):
        return msg
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


__all__ = ["CANCEL_GRACE_S", "QtRunWorker", "make_script_source", "make_source"]
