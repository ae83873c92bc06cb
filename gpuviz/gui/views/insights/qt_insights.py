"""The Insights view: where each step's time went, and the advisor's findings, ranked by saving.

Top: a stacked bar per step (like TensorBoard's Overview): the GPU's exclusive parts (compute,
communication, copies, sets, idle) for one GPU or the mean of all, and beside it the CPU's time
inside PyTorch ops and outside any op. Bottom: the findings, largest saving first; the selected
one's numbers, fix and evidence. Clicking a finding (or one of its evidence lines) outlines its
evidence on the Timeline and zooms there; double-clicking, or "Show in Timeline", also switches
to it. "Export Markdown…" writes the findings as a report to paste into a bug. "Critical path"
draws the median step's critical path by category (:mod:`.qt_path_bar`).

Signals
-------
evidenceActivated(object, bool)
    A list of :class:`~gpuviz.analysis.advisor.findings.Evidence`, and whether to show the
    Timeline now.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gpuviz.analysis.advisor.findings import fmt_ms, fmt_pct, saving_phrase
from gpuviz.analysis.steps import PARTS
from gpuviz.display import html_safe, terminal_safe, tooltip_html
from gpuviz.gui.qt_text import set_plain
from gpuviz.gui.views.insights.insights_model import (
    StepBars,
    StepMfu,
    evidence_text,
    gpu_choices,
    serving_status,
    step_bars,
    step_mfu,
)
from gpuviz.gui.views.insights.qt_path_bar import QtPathBar
from gpuviz.gui.views.qt_plot_style import IDLE_COLOR, legend_below, style_plot_item
from gpuviz.gui.views.qt_staged import StagedBuild

PART_COLORS = {
    "compute": "#4e79a7",
    "comm": "#e15759",
    "copy": "#59a14f",
    "set": "#b07aa1",
    "idle": IDLE_COLOR,
}
CPU_COLORS = {"cpu_ops": "#f28e2b", "cpu_other": "#ffd8a8"}
SEVERITY_COLORS = {"critical": "#c62828", "warning": "#e65100", "info": "#1565c0"}
MAX_TICK_LABELS = 24
BAR_WIDTH = 0.7
BAR_HEADROOM = 1.06
MFU_MIN_WIDTH = 760
"""Below this width the MFU chart gives its column back to the time charts (their legends would
wrap past the view); the status line still gives the mean MFU."""


def _code_html(text: str) -> str:
    """Advisor prose with its backtick spans as code (names inside are escaped as data)."""
    parts = html_safe(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


class QtInsightsView(StagedBuild, QWidget):
    """Step breakdown chart and findings of one trace.

    Parameters
    ----------
    advice : Advice or None
        From :func:`gpuviz.analysis.advisor.advise`; None when it could not be computed.
    title : str
        The trace's title (the Markdown report's heading).
    error : str
        Shown when ``advice`` is None.

    The status line and the findings are there when the constructor returns; the charts
    follow in the next event-loop turns (see :class:`~gpuviz.gui.views.qt_staged.StagedBuild`):
    ``gpu_plot``, ``cpu_plot``, ``mfu_plot``, ``bars`` and ``mfu`` finish them when read.
    """

    evidenceActivated = Signal(object, bool)

    def __init__(
        self, advice: Any, title: str = "", error: str = "", parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.advice = advice
        self.title = title
        self._bars: StepBars | None = None
        self._mfu: StepMfu | None = None
        self.hardware: Any = None  # figures under the Peaks dialog's peaks; None: the advisor's
        # step_mfu of a GPU key under self.hardware, computed once: the status, the chart's
        # placement and the chart each asked for it (thousands of steps for 64 ranks).
        self._mfu_memo: dict[Any, StepMfu | None] = {}
        self._plots: list[Any] = []  # GPU, CPU and MFU charts, as the staged steps make them
        self._charted = False  # _update_chart has drawn them
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.gpu_box = QComboBox()
        self.gpu_box.currentIndexChanged.connect(self._on_gpu_changed)
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground("w")
        self._has_mfu, self._mfu_placed = False, False  # _place_mfu (resizes come early)

        self.tree = QTreeWidget()
        self.tree.setColumnCount(4)
        self.tree.setHeaderLabels(["Severity", "Finding", "Could save / step", "Share"])
        self.tree.setRootIsDecorated(False)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.tree.header()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.tree.currentItemChanged.connect(self._on_finding_changed)
        self.tree.itemClicked.connect(self._on_finding_clicked)
        self.tree.itemDoubleClicked.connect(self._on_finding_double_clicked)
        self.details = QTextBrowser()
        self.details.setOpenLinks(False)
        self.evidence = QListWidget()
        self.evidence.itemClicked.connect(self._on_evidence_clicked)
        self.evidence.itemDoubleClicked.connect(self._on_evidence_double_clicked)
        self.show_button = QPushButton("Show in Timeline")
        self.show_button.clicked.connect(self._on_show_clicked)
        self.export_button = QPushButton("Export Markdown…")
        self.export_button.clicked.connect(self._on_export_clicked)

        top = QWidget()
        tl = QVBoxLayout(top)
        tl.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(self.status, 1)
        row.addWidget(QLabel("Chart:"))
        row.addWidget(self.gpu_box)
        tl.addLayout(row)
        tl.addWidget(self.graphics, 1)
        context = getattr(advice, "context", None)
        self.path_bar = QtPathBar(context.trace if context is not None else None)
        tl.addWidget(self.path_bar)
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addWidget(self.details, 3)
        rl.addWidget(QLabel("Evidence (click: outline on the Timeline; double-click: go there)"))
        rl.addWidget(self.evidence, 2)
        buttons = QHBoxLayout()
        buttons.addWidget(self.show_button)
        buttons.addStretch(1)
        buttons.addWidget(self.export_button)
        rl.addLayout(buttons)
        bottom = QSplitter(Qt.Orientation.Horizontal)
        bottom.addWidget(self.tree)
        bottom.addWidget(right)
        bottom.setSizes([520, 680])
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(top)
        split.addWidget(bottom)
        # The charts first: at 460 px an even split left them 151 px, and a legend of two
        # lines under the bars (a narrow view, its status line wrapped) lost its second line.
        split.setSizes([440, 360])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(split)

        # The charts in the next turns: a plot a turn, then what they draw (some 10 ms each on
        # a 2-core machine; all in one turn they stalled the GUI thread 70-110 ms).
        self._stage(
            lambda: self._make_time_plot(0),
            lambda: self._make_time_plot(1),
            self._make_mfu_plot,
            self._draw_charts,
        )
        # Not painted until drawn: a paint of the empty plots would size their axes for the
        # default range's labels (an axis grows for its labels and never shrinks back).
        self.graphics.setUpdatesEnabled(False)
        if advice is None:
            set_plain(self.status, f"No insights: {error or 'the advisor did not run'}")
            for w in (self.gpu_box, self.show_button, self.export_button):
                w.setEnabled(False)
            return
        self._update_status()
        self.gpu_box.blockSignals(True)
        for label, key in gpu_choices(advice):
            self.gpu_box.addItem(label, key)
        self.gpu_box.blockSignals(False)
        self.gpu_box.setEnabled(self.gpu_box.count() > 1)
        # No chart where no step has an MFU: no FLOPs counted (no shapes), no GPU work (a
        # CPU-only trace), no peak known; an empty chart said nothing.
        mfu = self._step_mfu(None)
        self._has_mfu = mfu is not None and mfu.mean() is not None and self.gpu_box.count() > 0
        self._update_findings()

    def _make_time_plot(self, col: int) -> None:
        # The GPU chart (column 0) or the CPU chart (column 1); with the MFU chart, one a turn:
        # the first plot of the process costs some 20 ms, the others 5-8 ms each.
        title, entries = (
            ("GPU time per step", len(PARTS))
            if col == 0
            else ("CPU time per step", len(CPU_COLORS))
        )
        # No context menus: made without the view box's (style_plot_item drops them anyway).
        plot = style_plot_item(self.graphics.addPlot(row=0, col=col, enableMenu=False), title)
        self._plots.append(plot)
        # Steps are counted and times are in ms: no SI scale on either axis (a single step's
        # range, -0.6 to 0.6, labelled the step axis "(x0.001)").
        for side in ("bottom", "left"):
            plot.getAxis(side).enableAutoSIPrefix(False)
        plot.setLabel("left", "ms")
        legend_below(plot, entries)  # one line under the steps: it hides no bar
        plot.setMouseEnabled(x=True, y=False)

    def _make_mfu_plot(self) -> None:
        # MFU beside the time breakdown: the share of the GPU's peak each step used. Placed by
        # _place_mfu only: the view is laid out by now, and a plot added to a layout too narrow
        # for it widens the layout for good (the time charts' legends then ran past the view).
        mfu_plot = style_plot_item(pg.PlotItem(enableMenu=False), "MFU per step")
        self._plots.append(mfu_plot)
        layout = self.graphics.ci.layout
        layout.setColumnStretchFactor(0, 3)
        layout.setColumnStretchFactor(1, 1)
        layout.setColumnStretchFactor(2, 0)
        mfu_plot.setLabel("left", "% of peak")
        mfu_plot.setMouseEnabled(x=True, y=False)
        for side in ("bottom", "left"):
            mfu_plot.getAxis(side).enableAutoSIPrefix(False)

    def _draw_charts(self) -> None:
        if self.advice is None:
            self.graphics.setUpdatesEnabled(True)
            return
        if self.gpu_box.count() == 0:  # no GPU work at all: the CPU chart alone
            self.graphics.removeItem(self._plot(0))
            self.graphics.ci.layout.setColumnStretchFactor(0, 0)
        self._place_mfu()
        # A chart a turn (see _chart_steps), painted once all are drawn: a paint of a plot
        # still empty would size its axis for the default range's labels.
        enable = self.graphics.setUpdatesEnabled
        self._stage(*self._chart_steps(), lambda: enable(True))

    # -- the charts (built by the staged steps; reading one finishes them) -------------------------
    def _plot(self, i: int) -> Any:
        assert len(self._plots) == 3, "the staged steps make the plots before any use"
        return self._plots[i]

    @property
    def gpu_plot(self) -> pg.PlotItem:
        """The GPU time chart (its parts stacked per step)."""
        self.finish_build()
        return self._plot(0)

    @property
    def cpu_plot(self) -> pg.PlotItem:
        """The CPU time chart (in ops and outside them, per step)."""
        self.finish_build()
        return self._plot(1)

    @property
    def mfu_plot(self) -> pg.PlotItem:
        """The MFU chart (placed only where there is an MFU and room for it)."""
        self.finish_build()
        return self._plot(2)

    @property
    def bars(self) -> StepBars | None:
        """What the time charts show (None without advice)."""
        self.finish_build()
        return self._bars

    @property
    def mfu(self) -> StepMfu | None:
        """What the MFU chart shows (None without counted FLOPs)."""
        self.finish_build()
        return self._mfu

    def _step_mfu(self, key: Any) -> StepMfu | None:
        if key not in self._mfu_memo:  # cleared when the hardware changes
            self._mfu_memo[key] = step_mfu(self.advice, key, self.hardware)
        return self._mfu_memo[key]

    # -- public API ------------------------------------------------------------------------------
    def findings(self) -> list[Any]:
        """The findings listed, in order (largest saving first)."""
        return list(self.advice.findings) if self.advice is not None else []

    def select_finding(self, index: int) -> None:
        """Select finding ``index`` (as a click would: its evidence goes to the Timeline)."""
        item = self.tree.topLevelItem(index)
        if item is not None:
            self.tree.setCurrentItem(item)
            self._on_finding_clicked(item, 0)

    def current_finding(self) -> Any:
        """The selected finding, or None."""
        item = self.tree.currentItem()
        if item is None or self.advice is None:
            return None
        return self.advice.findings[int(item.data(0, Qt.ItemDataRole.UserRole))]

    def markdown(self) -> str:
        """The findings as a Markdown report."""
        from gpuviz.report.markdown import advice_markdown

        return advice_markdown(self.advice, self.title) if self.advice is not None else ""

    def export_markdown(self, path: str) -> None:
        """Write :meth:`markdown` to ``path``."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.markdown())

    # -- refreshers --------------------------------------------------------------------------------
    def _update_status(self) -> None:
        a = self.advice
        st = a.breakdown.steps
        n = len(a.findings)
        parts = a.mean_step_parts()
        text = (
            f"{len(st)} steps ({', '.join(sorted(set(st.source)))}), mean {fmt_ms(parts['step'])}"
        )
        if len(a.breakdown.devices) == 0:
            text += "; no GPU work in this trace. "
        elif parts["step"]:
            text += f"; GPU idle {fmt_pct(parts['idle'] / parts['step'])} of it. "
        else:
            text += ". "
        text += (
            f"{n} finding{'s' if n != 1 else ''}, largest saving first."
            if n
            else "No findings: nothing costs a noticeable share of the step time."
        )
        mfu = self._step_mfu(None)
        if mfu is not None:  # a floor says >=, an unknown says why: never a bare low figure
            text += "\n" + mfu.text()
        phases = serving_status(a)  # a serving trace: its steps by phase
        if phases:
            text += "\n" + phases
        # What the import warned of (two files claiming one rank) qualifies every figure
        # here; the Summary view lists them all.
        warned = getattr(a, "warning_samples", [])
        if warned:
            more = f" (and {len(warned) - 1} more: see Summary)" if len(warned) > 1 else ""
            text += f"\nImport warning: {warned[0]}{more}"
        set_plain(self.status, text)

    def set_hardware(self, hardware: Any) -> None:
        """Show the MFU of ``hardware`` (the same steps under other peaks; None: the
        advisor's figures). The findings stay the advisor's."""
        self.hardware = hardware
        self._mfu_memo.clear()
        if self.advice is None:
            return
        self._update_status()
        if self._charted:  # else the chart, still to be drawn, draws these
            self._update_chart()

    def _update_chart(self) -> None:
        self.finish_build()  # a chart still being drawn part by part: done first, then redrawn
        for step in self._chart_steps():
            step()

    def _chart_steps(self) -> list[Callable[[], None]]:
        """The charts' drawing, in parts: the GPU chart, the CPU chart, the MFU chart.

        Opening the view runs one part a turn (:meth:`_draw_charts`): all three at once held
        the GUI thread 87-89 ms on a 16-core H200 host as a 64-rank folder of 100k kernels each
        opened (issue 25: at most 50 ms).
        """
        key = self.gpu_box.currentData() if self.gpu_box.count() else None
        self._bars = bars = step_bars(self.advice, key)
        self._charted = True
        sources = ", ".join(sorted(set(self.advice.breakdown.steps.source)))
        zeros = np.zeros(len(bars))
        gpu = [(p, bars.gpu.get(p, zeros), PART_COLORS[p]) for p in PARTS]
        cpu = [
            ("in PyTorch ops", bars.cpu_ops, CPU_COLORS["cpu_ops"]),
            ("outside ops", bars.cpu_other, CPU_COLORS["cpu_other"]),
        ]
        # The CPU chart is a third as wide: it labels fewer steps.
        return [
            lambda: self._draw_bars(self._plot(0), gpu, MAX_TICK_LABELS, sources),
            lambda: self._draw_bars(self._plot(1), cpu, MAX_TICK_LABELS // 4, sources),
            lambda: self._update_mfu(key, sources),
        ]

    def _draw_bars(
        self, plot: Any, parts: list[tuple[str, Any, str]], most: int, sources: str
    ) -> None:
        """One time chart: its bars stacked per step, steps named on its axis (rank:number for
        several ranks, at most ``most`` of them), its ranges fitted."""
        bars = self._bars
        plot.clear()
        if plot.legend is not None:
            plot.legend.clear()
        top = _stack_bars(plot, parts)
        every = max(1, int(np.ceil(len(bars) / max(most, 1))))
        ticks = [(float(i), bars.ticks[i]) for i in range(0, len(bars), every)]
        plot.getAxis("bottom").setTicks([ticks])
        plot.setLabel("bottom", f"step ({sources})")
        plot.setXRange(-0.6, max(len(bars) - 0.4, 0.6), padding=0)
        # The legend is below the axis: the tallest bar needs only a margin above it.
        peak = float(top.max()) if len(top) else 0.0
        plot.setYRange(0, peak * BAR_HEADROOM if peak > 0 else 1, padding=0)

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        self._place_mfu()

    def _place_mfu(self) -> None:
        """The MFU chart in the third column where there is an MFU and room for it."""
        if len(self._plots) < 3:  # resized before the plots are made: _draw_charts places it
            return
        show = self._has_mfu and self.width() >= MFU_MIN_WIDTH
        if show == self._mfu_placed:
            return
        self._mfu_placed = show
        if show:
            self.graphics.addItem(self._plot(2), row=0, col=2)
        else:
            self.graphics.removeItem(self._plot(2))
        self.graphics.ci.layout.setColumnStretchFactor(2, 1 if show else 0)

    def _update_mfu(self, key: Any, sources: str) -> None:
        self._mfu = mfu = self._step_mfu(key)
        plot = self._plot(2)
        plot.clear()
        if mfu is None:
            return
        n = len(mfu.percent)
        heights = np.nan_to_num(mfu.percent)
        bars = pg.BarGraphItem(
            x=np.arange(n, dtype=np.float64), height=heights, width=BAR_WIDTH,
            brush=QColor("#76b7b2"), pen=pg.mkPen(None),
        )  # fmt: skip
        plot.addItem(bars)
        mean = mfu.mean()
        title = "MFU per step" + (f" (mean {mean:.1f}%)" if mean is not None else ": no peak")
        plot.setTitle(title, color="#222")
        plot.setToolTip(tooltip_html(mfu.peak))
        ticks = self._bars.ticks if self._bars is not None else []
        every = max(1, int(np.ceil(n / max(MAX_TICK_LABELS // 4, 1))))
        plot.getAxis("bottom").setTicks(
            [[(float(i), ticks[i]) for i in range(0, min(n, len(ticks)), every)]]
        )
        plot.setLabel("bottom", f"step ({sources})")
        plot.setXRange(-0.6, max(n - 0.4, 0.6), padding=0)
        top = float(heights.max()) if n else 0.0
        plot.setYRange(0, max(top * 1.3, 10.0), padding=0)

    def _update_findings(self) -> None:
        self.tree.clear()
        for i, f in enumerate(self.advice.findings):
            item = QTreeWidgetItem(
                [
                    f.severity,
                    terminal_safe(f"{f.kind}: {f.title}", one_line=True),
                    fmt_ms(f.saving_per_step_ns),
                    fmt_pct(min(f.share, 1.0)),
                ]
            )
            item.setData(0, Qt.ItemDataRole.UserRole, i)
            item.setForeground(0, QColor(SEVERITY_COLORS.get(f.severity, "#222")))
            item.setToolTip(1, tooltip_html(f.detail))
            for col in (2, 3):
                item.setTextAlignment(
                    col, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                )
            self.tree.addTopLevelItem(item)
        has = bool(self.advice.findings)
        self.show_button.setEnabled(has)
        if has:
            self.tree.setCurrentItem(self.tree.topLevelItem(0))
        else:
            self.details.setHtml(
                "<p>No findings: nothing in this trace costs a noticeable share of the step "
                "time. The chart shows where each step's time went.</p>"
            )

    def _update_details(self, f: Any) -> None:
        color = SEVERITY_COLORS.get(f.severity, "#222")
        self.details.setHtml(
            f"<h3 style='margin:2px'><span style='color:{color}'>{html_safe(f.severity)}</span> "
            f"· {html_safe(f.title)}</h3>"
            f"<p><b>Could save {html_safe(saving_phrase(f.saving_ns, f.share, f.step_ns))}</b>. "
            f"<span style='color:#555'>{html_safe(f.saving_how)}</span></p>"
            f"<p>{_code_html(f.detail)}</p>"
            f"<p><b>Fix:</b> {_code_html(f.fix)}</p>"
            f"<p style='color:#777'>kind: <code>{html_safe(f.kind)}</code></p>"
        )
        self.evidence.clear()
        for i, e in enumerate(f.evidence):
            item = QListWidgetItem(terminal_safe(evidence_text(e), one_line=True))
            item.setData(Qt.ItemDataRole.UserRole, i)
            self.evidence.addItem(item)

    # -- handlers ----------------------------------------------------------------------------------
    def _on_gpu_changed(self, _index: int) -> None:
        if self.advice is not None and self._charted:  # else the chart to come draws its key
            self._update_chart()

    def _on_finding_changed(self, current: Any, _previous: Any) -> None:
        f = self.current_finding() if current is not None else None
        if f is not None:
            self._update_details(f)

    def _on_finding_clicked(self, _item: Any, _column: int) -> None:
        f = self.current_finding()
        if f is not None and f.evidence:
            self.evidenceActivated.emit(list(f.evidence), False)

    def _on_finding_double_clicked(self, _item: Any, _column: int) -> None:
        f = self.current_finding()
        if f is not None and f.evidence:
            self.evidenceActivated.emit(list(f.evidence), True)

    def _evidence_of(self, item: Any) -> list[Any]:
        f = self.current_finding()
        if f is None or item is None:
            return []
        return [f.evidence[int(item.data(Qt.ItemDataRole.UserRole))]]

    def _on_evidence_clicked(self, item: Any) -> None:
        ev = self._evidence_of(item)
        if ev:
            self.evidenceActivated.emit(ev, False)

    def _on_evidence_double_clicked(self, item: Any) -> None:
        ev = self._evidence_of(item)
        if ev:
            self.evidenceActivated.emit(ev, True)

    def _on_show_clicked(self) -> None:
        ev = self._evidence_of(self.evidence.currentItem())
        f = self.current_finding()
        if not ev and f is not None:
            ev = list(f.evidence)
        if ev:
            self.evidenceActivated.emit(ev, True)

    def _on_export_clicked(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, "Export findings", f"{self.title or 'gpuviz'}-advice.md", "Markdown (*.md)"
        )
        if path:
            self.export_markdown(path)


def _stack_bars(plot: Any, parts: list[tuple[str, Any, str]]) -> np.ndarray:
    """One bar per step, its parts (label, heights, colour) stacked bottom up, in the legend;
    returns the bars' tops."""
    x = np.arange(len(parts[0][1]), dtype=np.float64)
    bottom = np.zeros(len(x))
    for label, h, colour in parts:
        item = pg.BarGraphItem(
            x=x, height=h, y0=bottom.copy(), width=BAR_WIDTH, brush=QColor(colour),
            pen=pg.mkPen(None),
        )  # fmt: skip
        plot.addItem(item)
        plot.legend.addItem(item, label)
        bottom += h
    return bottom
