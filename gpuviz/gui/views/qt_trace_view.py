"""One open trace: its Insights, Timeline, Splits, Memory, Kernels, Operators, Modules, Source,
Roofline, Summary and Ranks views, as one tab."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QTabWidget, QVBoxLayout, QWidget

from gpuviz.gui.qt_load_worker import QtTraceWorker, TraceAnalyses
from gpuviz.gui.qt_threads import start_owned
from gpuviz.gui.view_names import VIEWS
from gpuviz.gui.views.insights.qt_insights import QtInsightsView
from gpuviz.gui.views.memory.qt_memory import QtMemoryView
from gpuviz.gui.views.ops.breakdown_model import Breakdowns, compute_breakdowns, kernel_details
from gpuviz.gui.views.ops.qt_modules import QtModulesView
from gpuviz.gui.views.ops.qt_operators import QtOperatorsView
from gpuviz.gui.views.ops.qt_source import QtSourceView
from gpuviz.gui.views.ranks.qt_ranks import QtRanksView
from gpuviz.gui.views.ranks.qt_splits import QtSplitsView
from gpuviz.gui.views.trace.qt_kernels import QtKernelsView, kernel_rows
from gpuviz.gui.views.trace.qt_summary import QtSummaryView
from gpuviz.gui.views.trace.qt_timeline_slot import make_timeline
from gpuviz.gui.views.view_availability import unavailable_views
from gpuviz.trace.model import GPU_ACTIVITY_KINDS, Kind

"""The views of a trace, in tab order (the names of ``gpuviz open --view``)."""

# When the timeline shows most of the trace, a jump to a moment zooms to this share of it.
JUMP_ZOOM_SHARE = 0.05
# "Show on Timeline" shows the first kernel with this many times its length on each side.
KERNEL_PAD_FACTOR = 4
BREAKDOWN_VIEWS = ("operators", "modules", "source")


def reduced_target(reduced: Any, target: Any) -> Any:
    """A Ranks view's target of a folder opened from its reductions, on the clock of its
    rank's own trace (``ReducedRanks.offset_ns``); None where it is the whole rank (t1 0)."""
    import dataclasses

    if target.t1_ns <= target.t0_ns:
        return None
    off = reduced.offset_ns.get(target.rank, 0)
    return dataclasses.replace(target, t0_ns=target.t0_ns - off, t1_ns=target.t1_ns - off)


def trace_end_ns(trace: Any) -> int:
    """The end of the last slice (ns from the trace zero), at least 1."""
    ends = [trace.slices_end_ns] if len(trace.slices) else []
    if len(trace.memory):
        ends.append(int(trace.memory.ts_ns.max()))
    return max([1, *ends])


class QtTraceView(QWidget):
    """The views of one trace, switched by tabs.

    Signals
    -------
    viewChanged(str)
        The shown view's name (one of :data:`VIEWS`).
    breakdownsReady(object)
        The :class:`~gpuviz.gui.views.ops.breakdown_model.Breakdowns` of the trace, computed.
    peaksRequested()
        The Roofline view's "Peaks…" button.
    rankOpenRequested(str, object)
        A rank folder opened from its reductions: the user opened a rank (its file, and the
        :class:`~gpuviz.gui.views.ranks.rank_figures.Target` to show on its own clock, or
        None); the window opens it in a tab of its own.

    Parameters
    ----------
    analyses : TraceAnalyses
        The trace and its computed figures.
    title : str
        The tab title.
    source : str
        The file or folder it was opened from ("" for a trace made in the app).
    peaks : PeakOverride, optional
        The user's peaks (the Peaks dialog's) for the Roofline, the MFU and the Operators'
        roofline columns; None: the device's.
    """

    viewChanged = Signal(str)
    breakdownsReady = Signal(object)
    peaksRequested = Signal()
    rankOpenRequested = Signal(str, object)

    def __init__(
        self,
        analyses: TraceAnalyses,
        title: str,
        source: str = "",
        parent: QWidget | None = None,
        peaks: Any = None,
    ) -> None:
        super().__init__(parent)
        self.peaks = peaks
        self._hw: tuple[Any, str] | None = None  # the roofline figures, once computed
        self.analyses = analyses
        self.trace = analyses.trace
        self.title = title
        self.source = source
        self.end_ns = trace_end_ns(self.trace)
        try:
            rows = kernel_rows(analyses.kernels) if analyses.kernels is not None else None
        except TypeError as exc:
            rows = None
            analyses.errors["kernels"] = str(exc)
        self.kernel_rows = rows
        self.summary = analyses.summary.to_json() if analyses.summary is not None else None
        # The attribution behind Operators, Modules, Source and the Timeline's kernel details:
        # computed once, in a worker, the first time one of them needs it.
        self.breakdowns: Breakdowns | None = None
        self._breakdown_worker: QtTraceWorker | None = None
        self._stopped = False  # set by stop_workers: the window is closing

        # Each view is built the first time it is shown (or asked for): a pyqtgraph plot costs
        # tens of ms to create, and building all five at once would stall the GUI thread.
        self._widgets: dict[str, QWidget] = {}
        self._page_layouts: dict[str, QVBoxLayout] = {}
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        for name in VIEWS:
            page = QWidget()
            page_layout = QVBoxLayout(page)
            page_layout.setContentsMargins(0, 0, 0, 0)
            self._page_layouts[name] = page_layout
            self.tabs.addTab(page, name.capitalize())
        # Tabs with nothing for this trace: disabled, the reason in their tooltip.
        self.unavailable = unavailable_views(analyses)
        for name, why in self.unavailable.items():
            i = VIEWS.index(name)
            self.tabs.setTabEnabled(i, False)
            self.tabs.setTabToolTip(i, why)
        if self.unavailable.get(VIEWS[0]):
            self.tabs.setCurrentIndex(VIEWS.index(self.first_view(VIEWS[0])))
        self.tabs.currentChanged.connect(self._on_tab_changed)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)

    # -- the views, built on demand -------------------------------------------------------------
    def view(self, name: str) -> QWidget:
        """The widget of view ``name`` (one of :data:`VIEWS`), built now if it was not yet."""
        w = self._widgets.get(name)
        if w is None:
            w = self._build_view(name)
            self._widgets[name] = w
            self._page_layouts[name].addWidget(w)
        return w

    def built_views(self) -> list[str]:
        """The names of the views built so far."""
        return [n for n in VIEWS if n in self._widgets]

    def _build_view(self, name: str) -> Any:
        a, err = self.analyses, self.analyses.errors
        if name == "insights":
            insights = QtInsightsView(getattr(a, "advice", None), self.title, err.get("advice", ""))
            insights.evidenceActivated.connect(self._on_evidence_activated)
            insights.path_bar.showRows.connect(self.show_kernels)
            if self.peaks is not None:
                insights.set_hardware(self.hardware_figures()[0])
            return insights
        if name == "timeline":
            timeline = make_timeline(self.trace)
            timeline.sliceClicked.connect(self._on_slice_clicked)
            set_details = getattr(timeline, "set_details_provider", None)
            if set_details is not None:
                set_details(self._kernel_details)
            return timeline
        if name == "splits":
            return QtSplitsView(a.splits, err.get("splits", ""))
        if name == "memory":
            memory = QtMemoryView(
                a.memory,
                self.end_ns,
                err.get("memory", ""),
                snapshots=a.snapshots,
                snapshot_error=err.get("snapshot", ""),
                snapshot_ranks=a.snapshot_ranks,
                snapshot_table=a.snapshot_table,
            )
            memory.timeClicked.connect(self._on_memory_time_clicked)
            return memory
        if name == "kernels":
            kernels = QtKernelsView(self.trace, self.kernel_rows, err.get("kernels", ""))
            kernels.rowsHighlighted.connect(self._on_kernel_rows_highlighted)
            return kernels
        if name in BREAKDOWN_VIEWS:
            return self._build_breakdown_view(name)
        if name == "summary":
            samples = getattr(a.summary, "warning_samples", None) or []
            return QtSummaryView(self.summary, err.get("summary", ""), samples)
        if name == "ranks":
            reduced = a.reduced
            n = len(reduced.sources) if reduced is not None else len(self.trace.ranks)
            ranks = QtRanksView(a.ranks, n, err.get("ranks", ""), reduced=reduced)
            ranks.jumpRequested.connect(self._on_rank_jump)
            return ranks
        if name == "roofline":
            from gpuviz.gui.views.ops.qt_roofline import QtRooflineView

            hw, error = self.hardware_figures()
            serving, why = self._serving_of(hw)
            roofline = QtRooflineView(hw, error, serving=serving, serving_error=why)
            roofline.rowsActivated.connect(self._on_rows_activated)
            roofline.peaksRequested.connect(self.peaksRequested)
            return roofline
        raise ValueError(f"unknown view {name!r}; expected one of {', '.join(VIEWS)}")

    def hardware_figures(self) -> tuple[Any, str]:
        """The roofline figures and, where they could not be computed, why: the advisor's
        (its low_mfu rule computed them in the background) under the device's peaks, else
        computed now (once) for the advisor's steps."""
        if self._hw is None:
            self._hw = self._compute_hardware()
        return self._hw

    def _compute_hardware(self) -> tuple[Any, str]:
        from gpuviz.gui.views.insights.insights_model import hardware_of

        advice = getattr(self.analyses, "advice", None)
        hw = hardware_of(advice)
        if hw is not None and self.peaks is None:
            return hw, ""
        try:
            from gpuviz.analysis.hardware import hardware

            ctx = getattr(advice, "context", None)
            steps = getattr(ctx, "steps", None)  # the Insights bars' steps, one MFU per bar
            return hardware(self.trace, self.peaks, steps=steps), ""
        except Exception as exc:  # the view says so; the other views still work
            return None, f"{type(exc).__name__}: {exc}"

    def _serving_of(self, hw: Any) -> tuple[Any, str]:
        """A serving trace's phases under the peaks of ``hw`` (the advisor's, where ``hw`` is
        its figures), for the Roofline (None for a training trace), and why they failed."""
        ctx = getattr(getattr(self.analyses, "advice", None), "context", None)
        if hw is None:
            return None, ""
        try:
            if ctx is not None and hw is getattr(ctx, "hardware", None):
                return ctx.serving, ""
            from gpuviz.analysis.serving_markers import serving_markers

            if not serving_markers(self.trace):
                return None, ""
            from gpuviz.analysis.serving_phases import serving_report
            from gpuviz.analysis.steps import find_steps

            steps = getattr(ctx, "steps", None)
            steps = find_steps(self.trace) if steps is None else steps
            return serving_report(self.trace, steps, hw), ""
        except Exception as exc:  # the roofline stands without its phases, and says why
            return None, f"{type(exc).__name__}: {exc}"

    def _ready_hardware(self) -> Any:
        """The roofline figures where they are at hand (computed, or the advisor's), else None:
        the Operators and Modules views do not compute them by themselves."""
        from gpuviz.gui.views.insights.insights_model import hardware_of

        if self._hw is not None or self.peaks is not None:
            return self.hardware_figures()[0]
        return hardware_of(getattr(self.analyses, "advice", None))

    def set_peaks(self, peaks: Any) -> None:
        """Use these peaks (a :class:`~gpuviz.analysis.peaks.PeakOverride`; None: the
        device's) in the Roofline, the Insights MFU and the Operators' and Modules' columns,
        now."""
        self.peaks = peaks
        self._hw = None
        if not any(n in self._widgets for n in ("roofline", "insights", "operators", "modules")):
            return  # computed when one of them is first shown
        hw, error = self.hardware_figures()
        if "roofline" in self._widgets:
            self.roofline_view.set_hardware(hw, error, *self._serving_of(hw))
        if "insights" in self._widgets:
            self.insights_view.set_hardware(hw if peaks is not None else None)
        if "operators" in self._widgets:
            self.operators_view.set_hardware(hw)
        if "modules" in self._widgets:
            self.modules_view.set_hardware(hw)

    @property
    def roofline_view(self) -> Any:
        """The Roofline view (``QtRooflineView``)."""
        return self.view("roofline")

    @property
    def timeline(self) -> Any:
        """The Timeline (``QtTimeline``, or a stand-in with its API)."""
        return self.view("timeline")

    @property
    def insights_view(self) -> QtInsightsView:
        """The Insights view."""
        return self.view("insights")  # type: ignore[return-value]

    @property
    def splits_view(self) -> QtSplitsView:
        """The Splits view."""
        return self.view("splits")  # type: ignore[return-value]

    @property
    def memory_view(self) -> QtMemoryView:
        """The Memory view."""
        return self.view("memory")  # type: ignore[return-value]

    @property
    def kernels_view(self) -> QtKernelsView:
        """The Kernels view."""
        return self.view("kernels")  # type: ignore[return-value]

    @property
    def operators_view(self) -> QtOperatorsView:
        """The Operators view."""
        return self.view("operators")  # type: ignore[return-value]

    @property
    def modules_view(self) -> QtModulesView:
        """The Modules view."""
        return self.view("modules")  # type: ignore[return-value]

    @property
    def source_view(self) -> QtSourceView:
        """The Source view."""
        return self.view("source")  # type: ignore[return-value]

    @property
    def summary_view(self) -> QtSummaryView:
        """The Summary view."""
        return self.view("summary")  # type: ignore[return-value]

    @property
    def ranks_view(self) -> QtRanksView:
        """The Ranks view."""
        return self.view("ranks")  # type: ignore[return-value]

    def first_view(self, wanted: str) -> str:
        """``wanted`` where this trace has something for it, else Insights, else the first
        view that has something (Memory for an allocator snapshot)."""
        for name in (wanted, "insights", *VIEWS):
            if name not in self.unavailable:
                return name
        return wanted

    def set_view(self, name: str) -> None:
        """Show view ``name`` (one of :data:`VIEWS`; a disabled one too, when asked for by
        name: its page says why it is empty)."""
        self.view(name)
        self.tabs.setCurrentIndex(VIEWS.index(name))

    def showEvent(self, event: Any) -> None:
        self.view(self.current_view())
        super().showEvent(event)

    def current_view(self) -> str:
        """The name of the view shown."""
        return VIEWS[self.tabs.currentIndex()]

    def _on_tab_changed(self, index: int) -> None:
        self.view(VIEWS[index])
        self.viewChanged.emit(VIEWS[index])

    def show_time(self, t_ns: int) -> None:
        """Center the Timeline on ``t_ns``, keeping its zoom (or zooming in from the whole trace)."""
        t0, t1 = self.timeline.view_range()
        width = max(int(t1) - int(t0), 1)
        if width >= self.end_ns * 0.5:
            width = max(int(self.end_ns * JUMP_ZOOM_SHARE), 1000)
        start = int(t_ns) - width // 2
        self.timeline.set_view_range(start, start + width)

    def stop_workers(self) -> None:
        """Stop any thread a view runs (the Timeline's pyramid builder, the attribution) and
        wait for it."""
        self._stopped = True  # nothing starts again in a closing window
        if self._breakdown_worker is not None:
            self._breakdown_worker.cancel()
            self._breakdown_worker.wait()
        timeline = self._widgets.get("timeline")
        stop = getattr(timeline, "stop_worker", None)
        if stop is not None:
            stop()

    def _on_memory_time_clicked(self, t_ns: int) -> None:
        self.show_time(int(t_ns))
        self.set_view("timeline")

    def show_evidence(self, evidence: list[Any], show_timeline: bool = False) -> None:
        """Outline a finding's evidence on the Timeline, select its span and zoom there."""
        from gpuviz.analysis.advisor.locate import evidence_rows, evidence_span

        span = evidence_span(evidence)
        if span is None:
            return
        timeline = self.timeline
        timeline.highlight_rows(evidence_rows(self.trace, evidence))
        t0, t1 = span
        pad = max((t1 - t0) // 10, 1000)
        timeline.select_range(t0, max(t1, t0 + 1))
        timeline.set_view_range(t0 - pad, t1 + pad)
        if show_timeline:
            self.set_view("timeline")

    def show_rows(self, rows: np.ndarray, show_timeline: bool = False) -> None:
        """Outline slice ``rows`` on the Timeline, select their span and zoom there (as
        :meth:`show_evidence` does for a finding)."""
        rows = np.asarray(rows, dtype=np.int64)
        if len(rows) == 0:
            return
        s = self.trace.slices
        t0 = int(s.start_ns[rows].min())
        t1 = int((s.start_ns[rows] + s.dur_ns[rows]).max())
        timeline = self.timeline
        timeline.highlight_rows(rows)
        pad = max((t1 - t0) // 10, 1000)
        timeline.select_range(t0, max(t1, t0 + 1))
        timeline.set_view_range(t0 - pad, t1 + pad)
        if show_timeline:
            self.set_view("timeline")

    def _on_rows_activated(self, rows: np.ndarray, show_timeline: bool) -> None:
        self.show_rows(rows, show_timeline)

    def _on_evidence_activated(self, evidence: list[Any], show_timeline: bool) -> None:
        self.show_evidence(evidence, show_timeline)

    def _on_rank_jump(self, target: Any) -> None:
        reduced = self.analyses.reduced
        if reduced is not None:
            # No events here: the rank opens alone (from its cache entry), on its own clock.
            if target.rank in reduced.sources:
                self.rankOpenRequested.emit(
                    reduced.sources[target.rank], reduced_target(reduced, target)
                )
            return
        self.show_rank_target(target)

    def show_rank_target(self, target: Any) -> None:
        """Show a Ranks view's :class:`~gpuviz.gui.views.ranks.rank_figures.Target` on the
        Timeline: its range, its rank expanded, its slice selected."""
        # A cell or collective of the Ranks view: that range on the Timeline, rank expanded.
        self.set_view("timeline")  # first: shown, the Timeline has its size to scroll in
        timeline = self.timeline
        show = getattr(timeline, "show_rank_range", None)
        if show is not None:
            show(target.rank, target.t0_ns, target.t1_ns, target.slice_row)
        else:  # the stand-in Timeline
            timeline.set_view_range(target.t0_ns, target.t1_ns)
            timeline.select_range(target.t0_ns, target.t1_ns)

    def _on_kernel_rows_highlighted(self, rows: np.ndarray) -> None:
        self.timeline.highlight_rows(rows)

    def _on_slice_clicked(self, row: int) -> None:
        # A kernel clicked on the timeline selects its row in the Kernels table (built now if
        # it was not yet, so the selection is there when the user switches to it); the
        # table's selection then highlights the kernel's slices, as a click in the table does.
        s = self.trace.slices
        row = int(row)
        if not 0 <= row < len(s) or int(s.kind[row]) != Kind.KERNEL:
            return
        if self.kernel_rows is None:
            return
        self.kernels_view.select_name(self.trace.name_of(row))

    # -- Operators, Modules, Source -------------------------------------------------------------
    def _build_breakdown_view(self, name: str) -> QWidget:
        view: Any
        if name == "operators":
            view = QtOperatorsView(self.breakdowns)
            view.set_hardware(self._ready_hardware())
        elif name == "modules":
            view = QtModulesView(self.breakdowns)
            view.set_hardware(self._ready_hardware())
        else:
            roots = (os.path.dirname(os.path.abspath(self.source)),) if self.source else ()
            view = QtSourceView(self.breakdowns, roots)
        view.showKernels.connect(self.show_kernels)
        self.request_breakdowns()
        return view

    def request_breakdowns(self) -> None:
        """Start computing the attribution's tables, unless they are there or on their way."""
        if self.breakdowns is not None or self._breakdown_worker is not None or self._stopped:
            return
        trace = self.trace
        worker = QtTraceWorker(lambda _p, _c: compute_breakdowns(trace), self.title)
        worker.succeeded.connect(self._on_breakdowns)
        worker.failed.connect(self._on_breakdowns_failed)
        self._breakdown_worker = worker
        start_owned(worker)

    def wait_breakdowns(self, timeout_s: float = 60.0) -> bool:
        """Wait until the tables are computed and shown (for screenshots and tests)."""
        from PySide6.QtWidgets import QApplication

        worker = self._breakdown_worker
        if worker is not None:
            worker.wait(int(timeout_s * 1000))
            QApplication.processEvents()  # delivers the worker's queued result
        return self.breakdowns is not None

    def closeEvent(self, event: Any) -> None:
        # A QThread must not outlive its parent: a closed tab waits for its attribution.
        if self._breakdown_worker is not None:
            self._breakdown_worker.wait()
        super().closeEvent(event)

    def _on_breakdowns(self, bd: Breakdowns) -> None:
        self.breakdowns = bd
        for name in BREAKDOWN_VIEWS:
            w = self._widgets.get(name)
            if w is not None:
                w.set_breakdowns(bd)  # type: ignore[attr-defined]
        refresh = getattr(self._widgets.get("timeline"), "refresh_details", None)
        if refresh is not None:
            refresh()
        self.breakdownsReady.emit(bd)

    def _on_breakdowns_failed(self, message: str) -> None:
        bd = Breakdowns(self.trace)
        bd.errors = {k: message for k in ("op", "op-shape", "module", "line")}
        self._on_breakdowns(bd)

    def show_kernels(self, rows: np.ndarray) -> None:
        """Outline these kernels (slice rows) on the Timeline and zoom to the first of them."""
        rows = np.asarray(rows, dtype=np.int64)
        timeline = self.timeline
        timeline.highlight_rows(rows)
        self.set_view("timeline")  # first: shown, the Timeline has its size to scroll in
        if not len(rows):
            return
        s = self.trace.slices
        first = int(rows[np.argmin(s.start_ns[rows])])
        t0 = int(s.start_ns[first])
        t1 = t0 + max(int(s.dur_ns[first]), 1)
        pad = max((t1 - t0) * KERNEL_PAD_FACTOR, 2000)
        show = getattr(timeline, "show_rank_range", None)
        if show is not None:
            rank = int(self.trace.tracks.rank[int(s.track[first])])
            show(rank, t0, t1, first)
            timeline.set_view_range(t0 - pad, t1 + pad)
        else:  # the stand-in Timeline
            timeline.set_view_range(t0 - pad, t1 + pad)
            timeline.select_range(t0, t1)

    def _kernel_details(self, row: int) -> str:
        # The Timeline's details of a clicked kernel: its op, module and line (rich text).
        if self.breakdowns is None:
            s = self.trace.slices
            if 0 <= row < len(s) and int(s.kind[row]) in GPU_ACTIVITY_KINDS:
                self.request_breakdowns()
                return "<span style='color:#777'>finding its op, module and line…</span>"
            return ""
        return kernel_details(self.breakdowns, row)
