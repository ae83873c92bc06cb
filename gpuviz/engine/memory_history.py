"""Recording the CUDA caching allocator's history and writing it as a snapshot.

``gpuviz run … --memory-snapshot`` and ``gpuviz profile … --memory-snapshot`` use
:class:`MemoryHistory`: :meth:`~MemoryHistory.start` before the profiled steps,
:meth:`~MemoryHistory.finish` after them (or on failure), and the snapshot lands beside the
trace as ``NAME.memory.pickle`` (:func:`snapshot_path_for`).

The file is what ``torch.cuda.memory._dump_snapshot`` writes (a pickle of plain dicts, lists,
strings and numbers), so PyTorch's memory_viz opens it too; gpuviz reads it back with an
unpickler that refuses every global (``gpuviz.trace.allocator_snapshot``).

Out of memory: PyTorch calls out-of-memory observers when an allocation fails, *before* it
raises ``torch.OutOfMemoryError``. The observer here writes the snapshot right then, so it holds
the allocator's state at the failure (every block that was live, the ``oom`` trace entry), and it
is on disk before the run reports the error. :meth:`~MemoryHistory.finish` then keeps that file
instead of overwriting it with the state after the stack unwound.

Observers cannot be detached in PyTorch, so one module-level observer is attached once per
process and writes the snapshot of whichever :class:`MemoryHistory` is recording.

torch is imported only inside the methods: importing this module is cheap.
"""

from __future__ import annotations

import os
import pickle
import threading
from pathlib import Path
from typing import Any

from gpuviz.trace.allocator_snapshot import SNAPSHOT_SUFFIX, snapshot_path_for

__all__ = [
    "SNAPSHOT_SUFFIX",
    "MemoryHistory",
    "add_snapshot_result",
    "snapshot_path_for",
    "start_memory_history",
]

DEFAULT_MAX_ENTRIES = 100_000
"""PyTorch's trace is a ring buffer: a long run keeps only its last ``max_entries`` events."""


_lock = threading.Lock()
_active: MemoryHistory | None = None
_observer_attached = False


def _on_out_of_memory(device: int, alloc: int, device_alloc: int, device_free: int) -> None:
    """PyTorch's OOM observer: write the active recording's snapshot before the error is raised."""
    del device, alloc, device_alloc, device_free  # the snapshot's ``oom`` entry carries them
    history = _active
    if history is None:
        return
    try:
        history.oom_path = history.dump()
    except Exception as exc:  # an observer must never raise into the allocator
        history.error = f"could not write the snapshot at out of memory: {exc}"


class MemoryHistory:
    """Record the CUDA caching allocator's history and write it as a snapshot file.

    Parameters
    ----------
    path
        Where the snapshot goes, usually ``snapshot_path_for(trace_path)``.
    max_entries
        Size of PyTorch's trace ring buffer (``--snapshot-entries``). A run with more allocator
        events keeps only the last ``max_entries``; gpuviz's figures account for what was live
        before that window.
    stacks
        ``"python"`` (default: Python frames only, cheap) or ``"all"`` (adds C++ frames, slower
        to record and much larger files).

    Notes
    -----
    Use from the thread that runs the workload::

        history = MemoryHistory(snapshot_path_for(trace), max_entries)
        reason = history.start()          # "needs CUDA" on a CPU build: the run goes on
        try:
            ...profiled steps...
        finally:
            written = history.finish()    # dump (unless written at OOM), then stop

    ``oom_path`` is set when the snapshot was written by the out-of-memory observer.
    """

    def __init__(self, path: Path, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        self.path = Path(path)
        self.max_entries = max(1, int(max_entries))
        self.stacks = "python"
        self.recording = False
        self.oom_path: Path | None = None
        self.written: Path | None = None
        self.error: str | None = None

    def start(self) -> str | None:
        """Start recording allocator history.

        Returns
        -------
        str or None
            None when recording; otherwise why not (``"needs CUDA"`` without a CUDA device),
            and the caller goes on without a snapshot.
        """
        global _active, _observer_attached
        try:
            import torch
        except ImportError:
            return "needs CUDA (torch is not installed)"
        if not torch.cuda.is_available():
            return "needs CUDA"
        try:
            torch.cuda.memory._record_memory_history(
                enabled="all",
                context="all",
                stacks=self.stacks,
                max_entries=self.max_entries,
            )
        except (AttributeError, RuntimeError, TypeError) as exc:
            return f"this torch cannot record allocator history: {exc}"
        with _lock:
            _active = self
            if not _observer_attached:
                attach = getattr(torch._C, "_cuda_attach_out_of_memory_observer", None)
                if attach is not None:
                    attach(_on_out_of_memory)
                    _observer_attached = True
        self.recording = True
        self.oom_path = None
        return None

    def dump(self) -> Path | None:
        """Write the snapshot to ``path`` now (also called from the out-of-memory observer).

        The file appears atomically (written under a temporary name, then renamed).

        Returns
        -------
        Path or None
            The path written, or None when nothing is being recorded.
        """
        if not self.recording:
            return None
        import torch

        snapshot: Any = torch.cuda.memory._snapshot()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "wb") as f:
            pickle.dump(snapshot, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, self.path)
        self.written = self.path
        return self.path

    def on_error(self, exc: BaseException) -> Path | None:
        """Write the snapshot for a failed run before the failure is reported.

        The OOM observer normally wrote it already (at the failing allocation); this covers
        torch builds without observers and out-of-memory errors raised by other code.
        """
        if self.oom_path is not None or not self.recording:
            return self.oom_path
        if type(exc).__name__ == "OutOfMemoryError" or (
            isinstance(exc, RuntimeError) and "out of memory" in str(exc)
        ):
            self.oom_path = self.dump()
            return self.oom_path
        return None

    def stop(self) -> None:
        """Stop recording (idempotent). PyTorch drops its history here: dump first."""
        global _active
        with _lock:
            if _active is self:
                _active = None
        if not self.recording:
            return
        self.recording = False
        try:
            import torch

            torch.cuda.memory._record_memory_history(enabled=None)
        except Exception:  # stopping must not mask the run's own outcome
            pass

    def finish(self) -> Path | None:
        """Dump (unless the snapshot was written at out of memory), then stop.

        Returns
        -------
        Path or None
            The snapshot file, or None when nothing was recorded.
        """
        try:
            if self.oom_path is None and self.recording:
                self.dump()
        finally:
            self.stop()
        return self.written


def start_memory_history(
    trace_path: Path | str | None, max_entries: int = DEFAULT_MAX_ENTRIES
) -> tuple[MemoryHistory | None, str | None]:
    """Start recording for the trace at ``trace_path``: ``(history, None)``, or
    ``(None, why not)`` (``"needs CUDA"``: the run goes on without a snapshot)."""
    if trace_path is None:
        return None, "needs a trace to sit beside (the run records none)"
    history = MemoryHistory(snapshot_path_for(trace_path), max_entries)
    reason = history.start()
    return (None, reason) if reason else (history, None)


def add_snapshot_result(
    result: dict[str, Any], history: MemoryHistory | None, note: str | None
) -> None:
    """Put the snapshot's path (or why there is none) into a run's result dict."""
    if history is not None:
        written = history.finish()
        result["memory_snapshot"] = None if written is None else str(written)
        if history.error:
            result.setdefault("warnings", []).append(f"--memory-snapshot: {history.error}")
    elif note:
        result["memory_snapshot"] = None
        result.setdefault("warnings", []).append(f"--memory-snapshot: {note}")
