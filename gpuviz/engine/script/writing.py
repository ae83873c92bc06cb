"""What a ``gpuviz profile`` session writes: its event stream and the traces of its windows.

:class:`EventSink` sends the events to the ``--events`` file and the app's pipe; a sink that
breaks mid-run is dropped with one line, and the script goes on. An ``--events`` place that
cannot be written is refused before the script starts (:func:`open_sink`).

:class:`TraceFiles` writes each window's trace with the fast writer of
:mod:`gpuviz.engine.profiling` and keeps what was written, how long it took, and what failed,
with the real cause (a read-only place says so): the end-of-run report reads them, and only
says "no profiled step" where there was none.
"""

from __future__ import annotations

import contextlib
import io
import os
import threading
import time
from pathlib import Path
from typing import Any

from gpuviz.engine.events import (
    Cancelled,
    Event,
    EventWriter,
    Failed,
    Finished,
    MemorySample,
    Progress,
    StepTimed,
    TraceReady,
    encode_event,
)
from gpuviz.engine.script.report import say

FLUSH_S = 0.1
"""The longest a step's or a memory sample's event waits in the sink's buffers (see
:class:`EventSink`)."""

_STREAMING = frozenset({StepTimed, Progress, MemorySample})


class EventSink:
    """Where events go: the ``--events`` file and/or the app's pipe (``--events-fd``); thread-safe.

    A sink that breaks (a full disk, the app gone) is dropped with one line; the script goes on.

    Of the ``Progress`` events only the latest is kept, and written out with the buffer. The
    events of each step (``StepTimed``) and the memory samples are written
    out at most every :data:`FLUSH_S` (by the first event past it: the sampler's come at 10 Hz
    or more), not one system call each: flushing them one by one took most of gpuviz's time
    at a step boundary (``benchmarks/step_cost.py``: 39 µs a step with an events file, 7 µs
    without). Every other event is written out at once, with what waits before it;
    :meth:`flush` writes it all out (before a fork, so that the child's copy of the buffers
    is empty; at :meth:`close`).

    Parameters
    ----------
    events_path : str, optional
        The ``--events`` file. A folder, or a place that cannot be written, raises
        :class:`~gpuviz.errors.BadInputError`.
    events_fd : int, optional
        The app's pipe.
    """

    def __init__(self, events_path: str | None = None, events_fd: int | None = None) -> None:
        from gpuviz.engine.writable import open_event_writer

        self._lock = threading.Lock()
        self._writer: EventWriter | None = open_event_writer(events_path) if events_path else None
        self._pipe: io.TextIOWrapper | None = None
        if events_fd is not None:
            self._pipe = os.fdopen(events_fd, "w", encoding="utf-8")
        self._flushed = time.monotonic()
        self._latest: tuple[int, int] | None = None  # the latest progress, not yet written
        self.events: list[Event] = []  # the terminal and trace events, for the caller

    @property
    def streaming(self) -> bool:
        """Whether step and sample events go anywhere (an events file or the app's pipe)."""
        return self._writer is not None or self._pipe is not None

    def progress(self, step: int, total: int) -> None:
        """``Progress(step, total)``, made only when it is written out (with the buffer).

        The step boundary calls this once a step: building and locking for an event that
        is dropped unless :data:`FLUSH_S` has passed cost more than the rest of the sink.
        """
        if self._writer is None and self._pipe is None:
            return
        self._latest = (step, total)  # one store: the sampler thread's flush may read it
        if time.monotonic() - self._flushed >= FLUSH_S:
            with self._lock:
                self._flush_locked()

    def emit(self, event: Event) -> None:
        """Send one event to every sink."""
        kind = type(event)
        if isinstance(event, Progress):
            # Only the latest counts: it is written out with the buffer, not once a step
            # (half of the sink's cost at a step boundary went to these lines).
            self.progress(event.step, event.total)
            return
        streaming = kind in _STREAMING
        with self._lock:
            if isinstance(event, (TraceReady, Finished, Failed, Cancelled)):
                self.events.append(event)
            if not streaming:
                self._write_progress_locked()  # what came before it goes out before it
            self._write_locked(event)
            if not streaming or time.monotonic() - self._flushed >= FLUSH_S:
                self._flush_locked()

    def _write_locked(self, event: Event) -> None:
        if self._writer is not None:
            try:
                self._writer.write(event, flush=False)
            except (OSError, ValueError) as exc:
                self._writer_failed(exc)
        if self._pipe is not None:
            try:
                self._pipe.write(encode_event(event) + "\n")
            except (OSError, ValueError):
                self._pipe = None  # the reader is gone

    def flush(self) -> None:
        """Write out every buffered event (gives up after a second if the sink stays busy:
        it runs before a fork, which may come from a signal handler inside :meth:`emit`)."""
        if self._lock.acquire(timeout=1.0):
            try:
                self._flush_locked()
            finally:
                self._lock.release()

    def _flush_locked(self) -> None:
        self._flushed = time.monotonic()
        self._write_progress_locked()
        if self._writer is not None:
            try:
                self._writer.flush()
            except (OSError, ValueError) as exc:
                self._writer_failed(exc)
        if self._pipe is not None:
            try:
                self._pipe.flush()
            except (OSError, ValueError):
                self._pipe = None

    def _write_progress_locked(self) -> None:
        latest, self._latest = self._latest, None
        if latest is not None:
            self._write_locked(Progress(*latest))

    def _writer_failed(self, exc: BaseException) -> None:
        say(f"could not write the events file: {exc}")
        self._writer = None

    def detach(self) -> list[Any]:
        """Forget the file and the pipe without closing or flushing them (a forked child's
        copies: the parent writes them); returns them, for the caller to keep alive."""
        out = [self._writer, self._pipe]
        self._writer = self._pipe = None
        return out

    def close(self) -> None:
        """Close the sinks (idempotent)."""
        with self._lock:
            self._flush_locked()
            if self._writer is not None:
                with contextlib.suppress(OSError, ValueError):
                    self._writer.close()
                self._writer = None
            if self._pipe is not None:
                with contextlib.suppress(OSError, ValueError):
                    self._pipe.close()
                self._pipe = None


def open_sink(events: str | None, events_fd: int | None) -> EventSink:
    """The session's sink (see :class:`EventSink`)."""
    return EventSink(events, events_fd)


class TraceFiles:
    """The traces a session wrote, and the failures, with their causes.

    Attributes
    ----------
    traces : list of str
        The files written, in order.
    exports : list of dict
        ``{"window", "write_s", "stall_s"?}`` per file written.
    errors : list of str
        ``writing PATH failed: CAUSE``, one per failed window.
    """

    def __init__(self, sink: EventSink) -> None:
        self.sink = sink
        self.traces: list[str] = []
        self.exports: list[dict[str, float]] = []
        self.errors: list[str] = []

    def write(self, results: Any, path: Path, window: int, t0: float | None = None) -> bool:
        """Write one window's profiler results at ``path``; ``TraceReady`` on success.

        ``t0`` (``perf_counter``) is when the stall that ends with this write began, for
        ``stall_s``. A failure is said on one line, with its cause, and kept in
        :attr:`errors`; False then.
        """
        from gpuviz.engine.profiling import write_trace

        try:
            write_s = write_trace(results, path)
        except Exception as exc:
            from gpuviz.engine.writable import reason

            cause = reason(exc) if isinstance(exc, OSError) else str(exc)
            self.errors.append(f"writing {path} failed: {cause}")
            say(f"writing the trace {path} failed: {cause}")
            return False
        export = {"window": float(window), "write_s": write_s}
        if t0 is not None:
            export["stall_s"] = time.perf_counter() - t0
        self.exports.append(export)
        self.traces.append(str(path))
        self.sink.emit(TraceReady(str(path)))
        return True


__all__ = ["EventSink", "TraceFiles", "open_sink"]
