"""Traces and snapshots that a server process has opened, kept for its next questions.

An agent asks several questions about one file: the overview, then its findings, then the
events of one range. Each file is read once per server process (and, for traces, through
:func:`~gpuviz.trace.kineto.load_trace`, whose on-disk cache serves the next process), and
what the analyses made of it (the advice, the summary, the snapshot figures) is kept with it.
A file that changed on disk (size or modification time) is read again. The last
:data:`KEEP` files are kept; older ones are let go, so a long session does not grow without end.

Tools run in worker threads; one lock makes each file load once even when two questions about
it arrive together.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuviz.analysis.advisor import Advice
    from gpuviz.analysis.allocator import SnapshotFigures
    from gpuviz.analysis.breakdown_table import Breakdown
    from gpuviz.analysis.hardware import Hardware
    from gpuviz.analysis.summary import Summary
    from gpuviz.trace.allocator_columns import AllocatorSnapshot
    from gpuviz.trace.model import Trace

KEEP = 8
"""How many files a server keeps open."""


def _signature(path: Path) -> tuple[Any, ...]:
    """What changes when a file (or any trace file of a rank folder) changes."""
    from gpuviz.agents.confine import folder_files

    files = folder_files(path) if path.is_dir() else [path]
    out = []
    for f in files:
        st = f.stat()
        out.append((f.name, st.st_size, st.st_mtime_ns))
    return tuple(out)


class Store:
    """Opened files and their analyses, by resolved path (see the module docstring)."""

    def __init__(self, keep: int = KEEP) -> None:
        self._keep = keep
        self._lock = threading.RLock()
        self._items: OrderedDict[Path, tuple[tuple[Any, ...], dict[str, Any]]] = OrderedDict()
        self.loads = 0
        """How many times a file was read (the tests check that a second question reads none)."""

    def _get(self, path: Path, part: str, make: Callable[[dict[str, Any]], Any]) -> Any:
        with self._lock:
            sig = _signature(path)
            entry = self._items.get(path)
            if entry is None or entry[0] != sig:
                entry = (sig, {})
                self._items[path] = entry
            self._items.move_to_end(path)
            while len(self._items) > self._keep:
                self._items.popitem(last=False)
            parts = entry[1]
            if part not in parts:
                parts[part] = make(parts)
            return parts[part]

    def trace(self, path: Path) -> Trace:
        """The trace of a file or rank folder."""

        def load(_: dict[str, Any]) -> Trace:
            from gpuviz.trace.kineto import load_trace

            self.loads += 1
            return load_trace(path)

        return self._get(path, "trace", load)

    def advice(self, path: Path) -> Advice:
        """The advisor's breakdown and findings of a trace."""

        def make(_: dict[str, Any]) -> Advice:
            from gpuviz.analysis.advisor import advise

            return advise(self.trace(path))

        return self._get(path, "advice", make)

    def summary(self, path: Path) -> Summary:
        """``gpuviz summary``'s figures of a trace."""

        def make(_: dict[str, Any]) -> Summary:
            from gpuviz.analysis.summary import summarize

            return summarize(self.trace(path))

        return self._get(path, "summary", make)

    def snapshot(self, path: Path) -> AllocatorSnapshot:
        """An allocator snapshot, read without loading any class."""

        def load(_: dict[str, Any]) -> AllocatorSnapshot:
            from gpuviz.trace.allocator_snapshot import load_snapshot

            self.loads += 1
            return load_snapshot(path)

        return self._get(path, "snapshot", load)

    def snapshot_figures(self, path: Path) -> SnapshotFigures:
        """``gpuviz memory``'s figures of a snapshot."""

        def make(_: dict[str, Any]) -> SnapshotFigures:
            from gpuviz.analysis.allocator import snapshot_figures

            return snapshot_figures(self.snapshot(path))

        return self._get(path, "figures", make)

    def hardware(self, path: Path) -> Hardware:
        """The roofline figures and step MFU of a trace, by ``gpuviz summary``'s own function
        (:func:`~gpuviz.analysis.hardware.hardware`, the device's listed peaks)."""

        def make(_: dict[str, Any]) -> Hardware:
            from gpuviz.analysis.hardware import hardware

            return hardware(self.trace(path))

        return self._get(path, "hardware", make)

    def breakdown(self, path: Path, by: str) -> Breakdown:
        """``gpuviz breakdown``'s table of a trace, by ``by``, with its roofline columns
        (``op-shape``) or MFU (``step``) as the CLI adds them."""

        def make(_: dict[str, Any]) -> Breakdown:
            from gpuviz.analysis.breakdown import breakdown
            from gpuviz.analysis.hardware import annotate_breakdown

            table = breakdown(self.trace(path), by)
            if by in ("op-shape", "step"):
                annotate_breakdown(table, self.hardware(path))
            return table

        return self._get(path, f"breakdown:{by}", make)
