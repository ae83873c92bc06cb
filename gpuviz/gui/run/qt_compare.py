"""Comparisons: one run's strategies (time and speedup), and any two runs side by side.

- :class:`QtStrategyComparison`: for workloads with several strategies (``loops``, ``streams``),
  a bar chart of each strategy's median time on a log axis, labelled with its speedup over the
  baseline, and a table of every strategy, the skipped and failed ones with their reason.
- :class:`QtRunComparison`: two traces, their timelines stacked and aligned on their start
  (each trace's zero is its first event), panning or zooming one moves the other; below them,
  tabs: the figure deltas (from :func:`gpuviz.analysis.summary.summarize`, plus the runs'
  strategy times), the step breakdowns and findings side by side (the advisor's), and the
  kernel and op diff (count and total time per name, new and gone names, like HTA's TraceDiff).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from gpuviz.display import html_safe, terminal_safe, title_safe, tooltip_html
from gpuviz.gui.qt_text import plain_label, set_rich
from gpuviz.gui.run.compare_figures import (
    FigureRow,
    FindingPair,
    StrategyRow,
    figure_rows,
    finding_pairs,
    step_part_rows,
    strategy_rows,
)
from gpuviz.gui.views.qt_plot_style import IDLE_COLOR, color, make_plot_widget

ALIGN_REACH = 1.2
"""How far past its own end a compared timeline is shown, at most (its own limit is 1.25)."""


def fmt_ms(v: float | None) -> str:
    """A duration given in ms, in a readable unit (negative ones keep their sign)."""
    if v is None or not math.isfinite(v):
        return "–"
    if v < 0:
        return "-" + fmt_ms(-v)
    if v >= 1000:
        return f"{v / 1000:.3g} s"
    if v >= 1:
        return f"{v:.3g} ms"
    if v >= 1e-3:
        return f"{v * 1000:.3g} µs"
    if v == 0:
        return "0"
    return f"{v * 1e6:.3g} ns"


def fmt_value(v: float | None, unit: str) -> str:
    """A figure with its unit (bytes scaled to KiB/MiB/GiB, µs to ms/s)."""
    if v is None:
        return "–"
    if unit == "B":
        for name, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
            if abs(v) >= size:
                return f"{v / size:.2f} {name}"
        return f"{v:.0f} B"
    if unit == "µs":
        return fmt_ms(v / 1000)
    if unit == "%":
        return f"{v:.1f}%"
    if unit == "ms":
        return fmt_ms(v)
    if float(v).is_integer():
        return f"{int(v):,}"
    return f"{v:.3g}"


def fmt_speedup(v: float | None) -> str:
    """``1,175×``, ``27.4×``, ``1.00×``."""
    if v is None or not math.isfinite(v):
        return ""
    if v >= 100:
        return f"{v:,.0f}×"
    if v >= 10:
        return f"{v:.1f}×"
    return f"{v:.2f}×"


def _item(text: str, align_right: bool = False) -> QTableWidgetItem:
    # A cell is plain text; a name in it (a strategy, a figure) is shown on one line, escaped.
    it = QTableWidgetItem(terminal_safe(text, one_line=True))
    it.setFlags(it.flags() & ~Qt.ItemFlag.ItemIsEditable)
    if align_right:
        it.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return it


class QtStrategyComparison(QWidget):
    """Each strategy's time and its speedup over the baseline, as a chart and a table."""

    COLUMNS = ("strategy", "status", "time", "speedup", "launches", "note")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[StrategyRow] = []
        self.baseline: str | None = None
        self.plot = make_plot_widget("Strategies: median time (log) and speedup")
        item = self.plot.getPlotItem()
        item.hideAxis("left")
        item.setLabel("bottom", "median time per step")
        self.bars = pg.BarGraphItem(x0=[], y=[], height=0.6, width=[])
        item.addItem(self.bars)
        self._texts: list[pg.TextItem] = []
        self.table = QTableWidget(0, len(self.COLUMNS))
        self.table.setHorizontalHeaderLabels([c.capitalize() for c in self.COLUMNS])
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.note = QLabel()
        self.note.setWordWrap(True)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.plot)
        split.addWidget(self.table)
        split.setSizes([500, 500])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.note)
        layout.addWidget(split, 1)

    def set_result(self, result: dict[str, Any]) -> None:
        """Show the strategies of a run's result (``Finished.result``)."""
        self.rows = strategy_rows(result)
        self.baseline = result.get("baseline")
        self._update_table()
        self._update_chart()
        skipped = [r for r in self.rows if r.status != "ok"]
        text = f"<b>{_html(result.get('workload', ''))}</b> on {_html(result.get('device', ''))}"
        if self.baseline:
            text += f": speedups over <b>{_html(self.baseline)}</b>"
        if skipped:
            text += f" · {len(skipped)} not run ({_html(', '.join(r.name for r in skipped))})"
        set_rich(self.note, text)

    def strategy_names(self) -> list[str]:
        """The strategies listed, in run order (skipped and failed ones included)."""
        items = [self.table.item(i, 0) for i in range(self.table.rowCount())]
        return [it.text() for it in items if it is not None]

    def _update_table(self) -> None:
        self.table.setRowCount(len(self.rows))
        for i, r in enumerate(self.rows):
            speed = fmt_speedup(r.speedup)
            time_text = "" if r.time_ms is None else f"{fmt_ms(r.time_ms)} ({r.time_kind})"
            cells = [
                r.name,
                r.status,
                time_text,
                speed,
                "" if r.launches is None else str(r.launches),
                r.note,
            ]
            for j, text in enumerate(cells):
                it = _item(text, align_right=j in (2, 3, 4))
                if j == 0:
                    it.setToolTip(tooltip_html(r.title))
                if j == 5 and text:
                    it.setToolTip(tooltip_html(text))
                if r.status != "ok":
                    it.setForeground(Qt.GlobalColor.darkGray)
                self.table.setItem(i, j, it)
        # Launch counts come from CUDA traces only: no empty column on the CPU.
        self.table.setColumnHidden(4, all(r.launches is None for r in self.rows))

    def _update_chart(self) -> None:
        item = self.plot.getPlotItem()
        for t in self._texts:
            item.removeItem(t)
        self._texts.clear()
        timed = [r.time_ms for r in self.rows if r.time_ms and r.time_ms > 0]
        n = len(self.rows)
        if not n:
            self.bars.setOpts(x0=[], y=[], width=[])
            return
        lo = math.floor(math.log10(min(timed))) if timed else -1
        hi = math.ceil(math.log10(max(timed))) if timed else 1
        hi = max(hi, lo + 1)
        y = np.arange(n, dtype=np.float64)[::-1]  # the first strategy at the top
        widths = []
        brushes = []
        for i, r in enumerate(self.rows):
            ok = r.time_ms is not None and r.time_ms > 0
            widths.append(math.log10(r.time_ms) - lo if ok else 0.0)  # type: ignore[arg-type]
            brushes.append(color(i) if ok else pg.mkBrush(IDLE_COLOR))
        self.bars.setOpts(
            x0=np.full(n, float(lo)), y=y, height=0.6, width=np.asarray(widths), brushes=brushes
        )
        for i, r in enumerate(self.rows):
            if r.time_ms is not None and r.time_ms > 0:
                text = f"{r.name}  {fmt_ms(r.time_ms)}"
                if r.speedup is not None:
                    text += f"  ·  {fmt_speedup(r.speedup)}"
                x = lo + widths[i]
            else:
                text = f"{r.name}: {r.status}" + (f" ({r.note[:40]})" if r.note else "")
                x = float(lo)
            t = pg.TextItem(terminal_safe(text, one_line=True), color="#222", anchor=(0, 0.5))
            t.setPos(x, float(y[i]))
            item.addItem(t)
            self._texts.append(t)
        ax = item.getAxis("bottom")
        ax.setTicks([[(float(k), fmt_ms(10.0**k)) for k in range(lo, hi + 1)]])
        # Room on the right for the labels of the longest bars.
        item.setXRange(lo, hi + 0.35 * (hi - lo) + 0.5, padding=0)
        item.setYRange(-0.6, n - 0.4, padding=0)


class QtRunComparison(QWidget):
    """Two traces side by side: timelines aligned on their start, and a figure-delta table.

    Parameters
    ----------
    a, b : QtTraceView-like
        Objects with ``trace``, ``title``, ``end_ns`` and ``analyses`` (its ``summary``).
    result_a, result_b : dict, optional
        The runs' result objects, when the traces come from runs in this session.
    """

    COLUMNS = ("figure", "A", "B", "B − A", "B / A")

    def __init__(
        self,
        a: Any,
        b: Any,
        result_a: dict[str, Any] | None = None,
        result_b: dict[str, Any] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        from gpuviz.gui.views.trace.qt_timeline_slot import make_timeline

        self.setWindowTitle(title_safe(f"Compare: A {a.title} · B {b.title}"))
        self.a, self.b = a, b
        self.end_ns = max(int(a.end_ns), int(b.end_ns), 1)
        self.timelines = [make_timeline(a.trace, self), make_timeline(b.trace, self)]
        # The range each timeline was last set to from here: its own (deferred) echo of that
        # change must not be sent back, or two traces of different lengths, each clamping the
        # range to its own, would pull each other off their start.
        self._set_here: dict[int, tuple[int, int]] = {}
        for tl, other in zip(self.timelines, reversed(self.timelines)):
            tl.viewRangeChanged.connect(lambda t0, t1, s=tl, o=other: self._on_range(s, o, t0, t1))
        self.rows: list[FigureRow] = figure_rows(
            _summary_json(a), _summary_json(b), result_a, result_b
        )
        self.table = _figure_table(self.rows, self.COLUMNS)

        panes = QSplitter(Qt.Orientation.Vertical)
        for tag, view, tl in (("A", a, self.timelines[0]), ("B", b, self.timelines[1])):
            box = QWidget()
            v = QVBoxLayout(box)
            v.setContentsMargins(0, 0, 0, 0)
            lab = QLabel()
            set_rich(
                lab,
                f"<b>{tag}</b>: {_html(view.title)}  "
                f"<span style='color:#666'>{_html(view.source)}</span>",
            )
            v.addWidget(lab)
            v.addWidget(tl, 1)
            panes.addWidget(box)
        self.details = QTabWidget()
        self.details.addTab(self.table, "Figures")
        self.details.addTab(self._build_steps_and_findings(), "Steps and findings")
        self.details.addTab(self._build_diff(), "Kernels and ops")
        panes.addWidget(self.details)
        panes.setSizes([300, 300, 260])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(panes)
        self.resize(1400, 900)
        # Both start at their first event, on one time scale where the timelines allow it: a
        # timeline keeps its view within about 1.25x its own length, so a much shorter trace
        # shows all of itself instead.
        for tl, view in zip(self.timelines, (a, b)):
            tl.set_view_range(0, initial_end_ns(self.end_ns, int(view.end_ns)))
            self._set_here[id(tl)] = tuple(int(v) for v in tl.view_range())  # type: ignore[assignment]

    def figure_names(self) -> list[str]:
        """The figures in the delta table, in order."""
        return [r.name for r in self.rows]

    def _build_steps_and_findings(self) -> QWidget:
        advice_a, advice_b = _advice(self.a), _advice(self.b)
        self.step_rows = step_part_rows(advice_a, advice_b)
        steps = _figure_table(self.step_rows, ("mean per step", "A", "B", "B − A", "B / A"))
        self.finding_rows: list[FindingPair] = finding_pairs(advice_a, advice_b)
        self.findings_table = QTableWidget(len(self.finding_rows), 3)
        self.findings_table.setHorizontalHeaderLabels(["finding", "A", "B"])
        self.findings_table.verticalHeader().setVisible(False)
        header = self.findings_table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        for i, pair in enumerate(self.finding_rows):
            self.findings_table.setItem(i, 0, _item(pair.kind))
            for j, f in ((1, pair.a), (2, pair.b)):
                text = (
                    "–"
                    if f is None
                    else f"{f.severity}: could save {fmt_ms(f.saving_per_step_ns / 1e6)} a step"
                )
                it = _item(text)
                if f is not None:
                    it.setToolTip(tooltip_html(f.title))
                self.findings_table.setItem(i, j, it)
        box = QSplitter(Qt.Orientation.Horizontal)
        box.addWidget(steps)
        box.addWidget(self.findings_table)
        if advice_a is None or advice_b is None:
            missing = " and ".join(t for t, a in (("A", advice_a), ("B", advice_b)) if a is None)
            note = plain_label(f"No advisor results for {missing}.")
            wrap = QWidget()
            v = QVBoxLayout(wrap)
            v.setContentsMargins(0, 0, 0, 0)
            v.addWidget(note)
            v.addWidget(box, 1)
            return wrap
        return box

    def _build_diff(self) -> QWidget:
        from gpuviz.analysis.diff import trace_diff

        self.diff = trace_diff(self.a.trace, self.b.trace)
        cols = ("what", "status", "count A", "count B", "total A", "total B", "B − A", "name")
        table = QTableWidget(len(self.diff), len(cols))
        table.setHorizontalHeaderLabels(list(cols))
        table.verticalHeader().setVisible(False)
        header = table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        for i, d in enumerate(self.diff):
            delta = fmt_ms(d.delta_ns / 1e6)
            cells = [
                d.what,
                d.status,
                str(d.count_a),
                str(d.count_b),
                fmt_ms(d.total_a_ns / 1e6),
                fmt_ms(d.total_b_ns / 1e6),
                ("+" + delta) if d.delta_ns > 0 else delta,
                d.name,  # a cell holds data, never markup
            ]
            for j, text in enumerate(cells):
                it = _item(text, align_right=2 <= j <= 6)
                if j == 7:
                    it.setToolTip(tooltip_html(d.name))
                table.setItem(i, j, it)
        self.diff_table = table
        return table

    def _on_range(self, source: Any, other: Any, t0: int, t1: int) -> None:
        if self._set_here.get(id(source)) == (int(t0), int(t1)):
            return  # the echo of a range set from here
        self._set_here.pop(id(source), None)
        if tuple(other.view_range()) != (int(t0), int(t1)):
            other.set_view_range(int(t0), int(t1))
            self._set_here[id(other)] = tuple(int(v) for v in other.view_range())  # type: ignore[assignment]

    def closeEvent(self, event: Any) -> None:
        # The timelines' level-of-detail threads must stop before their widgets go.
        for tl in self.timelines:
            stop = getattr(tl, "stop_worker", None)
            if stop is not None:
                stop()
        super().closeEvent(event)


def _advice(view: Any) -> Any:
    return getattr(getattr(view, "analyses", None), "advice", None)


def _figure_table(rows: list[FigureRow], headers: tuple[str, ...]) -> QTableWidget:
    """A read-only table of figures in A and B, their difference and ratio."""
    table = QTableWidget(len(rows), len(headers))
    table.setHorizontalHeaderLabels(list(headers))
    table.verticalHeader().setVisible(False)
    header = table.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    for i, r in enumerate(rows):
        ratio = "" if r.ratio is None else f"{r.ratio:.3g}×"
        delta = "" if r.delta is None else fmt_value(r.delta, r.unit)
        if r.delta is not None and r.delta > 0:
            delta = "+" + delta
        cells = [r.name, fmt_value(r.a, r.unit), fmt_value(r.b, r.unit), delta, ratio]
        for j, text in enumerate(cells):
            table.setItem(i, j, _item(text, align_right=j > 0))
    return table


def _html(value: Any) -> str:
    return html_safe(str(value), one_line=True)


def initial_end_ns(longest_ns: int, own_ns: int) -> int:
    """The end of a compared timeline's first view: the longer trace's end, within reach."""
    return int(min(longest_ns, own_ns * ALIGN_REACH))


def _summary_json(view: Any) -> dict[str, Any] | None:
    summary = getattr(getattr(view, "analyses", None), "summary", None)
    return None if summary is None else summary.to_json()


__all__ = ["QtRunComparison", "QtStrategyComparison", "fmt_ms", "fmt_value"]
