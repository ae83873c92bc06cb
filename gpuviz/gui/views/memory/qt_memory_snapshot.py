"""The Memory view's snapshot mode: a CUDA allocator snapshot's timeline, segments and sites.

Top: the figures (``gpuviz memory``'s), and a choice of device when the snapshot (or the
tab's snapshots: one per rank) has several. Then the active memory timeline
(:mod:`qt_memory_timeline`); below it, the allocator state per segment
(:mod:`qt_memory_segments`) and the sites at the chosen time (:mod:`qt_memory_sites`). A click
on the timeline chooses the time both follow; they start at the peak (sites) and at the
snapshot (segments).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from gpuviz.analysis.allocator_timeline import MemoryTimeline
from gpuviz.display import format_bytes, terminal_safe
from gpuviz.gui.qt_text import wrap_label
from gpuviz.gui.views.memory.qt_memory_segments import QtMemorySegments
from gpuviz.gui.views.memory.qt_memory_sites import QtMemorySites
from gpuviz.gui.views.memory.qt_memory_timeline import NS_PER_MS, QtMemoryTimeline


def figures_text(tl: MemoryTimeline) -> str:
    """The header: totals, the peak, the OOM."""
    f = tl.figures
    parts = [
        f"{tl.label}: reserved {format_bytes(f.reserved_bytes)} in {f.segments} segments, "
        f"allocated {format_bytes(f.allocated_bytes)}, free {format_bytes(f.free_bytes)} "
        f"(largest free block {format_bytes(f.largest_free_block_bytes)}, fragmentation {f.fragmentation:.2f})",
        f"peak allocated {format_bytes(f.peak_allocated_bytes)} at {tl.time_of(f.peak_entry) / NS_PER_MS:.3f} ms; "
        f"{f.trace_entries} history entries"
        + (
            f"; {format_bytes(f.window_start_live_bytes)} already live when the history began"
            if f.window_start_live_bytes
            else ""
        ),
    ]
    if f.oom is not None:
        parts.append(
            f"OUT OF MEMORY at {tl.time_of(f.oom.entry) / NS_PER_MS:.3f} ms: asked for "
            f"{format_bytes(f.oom.request_bytes)}, CUDA had {format_bytes(f.oom.free_bytes)} free; "
            f"{format_bytes(f.oom.live_bytes)} allocated then"
        )
    if not tl.on_trace_axis:
        parts.append("time from the snapshot's first entry (no trace on the same clock is open)")
    return terminal_safe("\n".join(parts))


class _DevicePanel(QWidget):
    """Timeline, segments and sites of one device."""

    def __init__(self, tl: MemoryTimeline, trace_series: Any = None) -> None:
        super().__init__()
        self.tl = tl
        self.header = QLabel(figures_text(tl))
        self.header.setTextFormat(Qt.TextFormat.PlainText)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        wrap_label(self.header)
        self.timeline = QtMemoryTimeline(tl, trace_series)
        self.segments = QtMemorySegments(tl)
        self.sites = QtMemorySites(tl)
        bottom = QSplitter(Qt.Orientation.Horizontal)
        bottom.addWidget(self.segments)
        bottom.addWidget(self.sites)
        bottom.setSizes([500, 600])
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.timeline)
        split.addWidget(bottom)
        split.setSizes([520, 380])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.header)
        lay.addWidget(split, 1)
        self.timeline.entryChosen.connect(self._on_entry_chosen)

    def _on_entry_chosen(self, entry: int) -> None:
        self.sites.show_entry(entry)
        self.segments.show_entry(entry)


class QtMemorySnapshotView(QWidget):
    """Allocator snapshots of a tab, one device at a time.

    Signals
    -------
    timeClicked(object)
        ns from the trace's zero of a double-click on the timeline (only when the snapshot is
        on the trace's clock).

    Parameters
    ----------
    timelines : list of MemoryTimeline
        One per (snapshot, device).
    trace_series : list, optional
        The trace's :class:`~gpuviz.analysis.memory.MemorySeries` (its ``Total Allocated`` is
        drawn over the timeline of the same device, when the clocks match).
    """

    timeClicked = Signal(object)

    def __init__(
        self,
        timelines: list[MemoryTimeline],
        trace_series: list[Any] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.timelines = timelines
        self.trace_series = trace_series or []
        self.panels: dict[int, _DevicePanel] = {}
        self.picker = QComboBox()
        for tl in timelines:
            self.picker.addItem(terminal_safe(tl.label, one_line=True))
        self.picker.currentIndexChanged.connect(self._on_device_picked)
        self.stack = QStackedWidget()
        for _ in timelines:
            self.stack.addWidget(QWidget())
        top = QHBoxLayout()
        top.addWidget(QLabel("device:"))
        top.addWidget(self.picker)
        top.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        if len(timelines) > 1:
            lay.addLayout(top)
        lay.addWidget(self.stack, 1)
        if timelines:
            self._on_device_picked(0)

    @property
    def panel(self) -> _DevicePanel:
        """The shown device's panel."""
        return self.panels[self.picker.currentIndex()]

    def _series_for(self, tl: MemoryTimeline) -> Any:
        for s in self.trace_series:
            if getattr(s, "device_type", 1) == 1 and s.device == tl.device:
                return s
        return None

    def _on_device_picked(self, index: int) -> None:
        # panels are built when first shown: a pyqtgraph plot costs tens of ms
        if index not in self.panels:
            tl = self.timelines[index]
            panel = _DevicePanel(tl, self._series_for(tl))
            panel.timeline.timeClicked.connect(self._on_time_clicked)
            self.panels[index] = panel
            old = self.stack.widget(index)
            self.stack.insertWidget(index, panel)
            self.stack.removeWidget(old)
        self.stack.setCurrentIndex(index)

    def _on_time_clicked(self, t_ns: Any) -> None:
        if self.panel.tl.on_trace_axis:
            self.timeClicked.emit(int(t_ns))

    def export_target(self) -> Any:
        """The timeline's graphics, for Export → Plot."""
        return self.panel.timeline.plot if self.timelines else None
