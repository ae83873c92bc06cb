"""Live plots of a run: progress, step times (wall and GPU), memory per device, DataParallel splits.

Events never draw. They land in a :class:`~gpuviz.gui.run.live_buffers.LiveRun`, and a ~30 Hz
``QTimer`` redraws each plot whose buffer version moved since its last redraw (STYLE.md rule 3),
so a burst of events costs one redraw, and a quiet run costs nothing.
"""

from __future__ import annotations

import os
import time

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QSizePolicy,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from gpuviz.display import html_safe
from gpuviz.gui.run.live_buffers import LiveRun
from gpuviz.gui.views.qt_plot_style import byte_unit, color, make_plot_widget

REDRAW_INTERVAL_MS = 33
"""About 30 Hz."""
SPLIT_STEPS_SHOWN = 8
"""The split plot shows this many of the latest DataParallel steps."""
SPLIT_LABELS_MAX = 8
"""Bars get a rows label while there are at most this many."""

_MEMORY_ORDER = ["RSS", "allocated", "reserved", "NVML used"]
_MEMORY_STYLE = {"RSS": "—", "allocated": "—", "reserved": "- -", "NVML used": "···"}
_DASH = Qt.PenStyle.DashLine
_DOT = Qt.PenStyle.DotLine


def _fmt_ms(v: float) -> str:
    if not np.isfinite(v):
        return "–"
    if v >= 100:
        return f"{v:.0f} ms"
    if v >= 1:
        return f"{v:.2f} ms"
    return f"{v * 1000:.1f} µs"


def _set_text(label: QLabel, text: str) -> None:
    # The memory plot redraws ~20 times a second; its legend rarely changes.
    if label.text() != text:
        label.setText(text)


class QtLivePlots(QWidget):
    """Progress and live plots of one run, redrawn from its buffers by a ~30 Hz timer.

    Attributes
    ----------
    run : LiveRun or None
        The buffers shown.
    redraws : dict of str to int
        How many times each plot (``steps``, ``memory``, ``splits``, ``progress``) was redrawn.
    redraw_times : dict of str to list of float
        ``time.monotonic()`` of each redraw (the live benchmark measures rates from them).
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.run: LiveRun | None = None
        self._drawn = {"steps": -1, "memory": -1, "splits": -1, "progress": -1}
        self.redraws = {"steps": 0, "memory": 0, "splits": 0, "progress": 0}
        self.redraw_times: dict[str, list[float]] = {k: [] for k in self.redraws}

        self.status = QLabel("No run yet. Pick a workload and press Run.")
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # Its text changes with every step: keep its size from re-laying out the dock.
        self.status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("")  # "%v / %m steps" once a run says how many
        self.progress.setMaximumWidth(260)

        self.step_plot = make_plot_widget("Step times (log scale)")
        item = self.step_plot.getPlotItem()
        item.setLogMode(False, True)
        item.setLabel("bottom", "step")
        item.setLabel("left", "ms")
        # Steps are whole numbers, and times stay in ms: no "x0.001" scaling of either axis.
        item.getAxis("bottom").enableAutoSIPrefix(False)
        item.getAxis("left").enableAutoSIPrefix(False)
        self.step_legend = QLabel()
        self.split_legend = QLabel()
        self._split_shown: dict[tuple[int, str], int] = {}
        self._wall_items: dict[str, pg.PlotDataItem] = {}
        self._gpu_items: dict[str, pg.PlotDataItem] = {}
        # Profiled steps are drawn apart from their strategy's line: the profiler slows them,
        # so joining them to the timed steps would draw a slope that is not there.
        self._profiled_item = pg.ScatterPlotItem(size=11, pen=pg.mkPen("#555", width=1.2))
        self._profiled_gpu_item = pg.ScatterPlotItem(
            size=11, pen=pg.mkPen("#555", width=1.2), symbol="t"
        )
        item.addItem(self._profiled_item)
        item.addItem(self._profiled_gpu_item)

        self.memory_plot = make_plot_widget("Memory per device")
        mitem = self.memory_plot.getPlotItem()
        mitem.setLabel("bottom", "s since start")
        self.memory_legend = QLabel()
        self._memory_items: dict[tuple[str, str], pg.PlotDataItem] = {}
        self._memory_unit = ""

        self.split_plot = make_plot_widget("DataParallel split")
        sitem = self.split_plot.getPlotItem()
        sitem.setLabel("left", "rows")
        sitem.setLabel("bottom", "step")
        self._split_bars = pg.BarGraphItem(x=[], height=[], width=0.6)
        sitem.addItem(self._split_bars)
        self._split_texts: list[pg.TextItem] = []

        top = QHBoxLayout()
        top.addWidget(self.status, 1)
        top.addWidget(self.progress)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        # Legends go under the plots, as text: drawn inside, they hid the points of short plots.
        # The status and legends are rich text built here; the names in them (workload,
        # strategy labels, devices: a replayed file's) are escaped, and Qt never guesses.
        self.status.setTextFormat(Qt.TextFormat.RichText)
        for legend in (self.step_legend, self.memory_legend, self.split_legend):
            legend.setTextFormat(Qt.TextFormat.RichText)
            legend.setWordWrap(True)
            legend.setStyleSheet("color: #222; font-size: 8pt;")
            legend.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        for plot, legend in (
            (self.step_plot, self.step_legend),
            (self.memory_plot, self.memory_legend),
            (self.split_plot, self.split_legend),
        ):
            plot.setMinimumSize(220, 150)
            box = QWidget()
            v = QVBoxLayout(box)
            v.setContentsMargins(0, 0, 0, 0)
            v.setSpacing(2)
            v.addWidget(plot, 1)
            if legend is not None:
                v.addWidget(legend)
            self.splitter.addWidget(box)
            if plot is self.split_plot:
                self._split_box = box
        self._split_box.setVisible(False)  # shown once a DataParallel split comes
        self.setMinimumHeight(240)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.splitter, 1)

        self.timer = QTimer(self)
        self.timer.setInterval(REDRAW_INTERVAL_MS)
        self.timer.timeout.connect(self._on_tick)

    # -- public -----------------------------------------------------------------------------
    def set_run(self, run: LiveRun | None) -> None:
        """Show ``run``'s buffers (clears the plots) and start redrawing them."""
        self.run = run
        self._drawn = dict.fromkeys(self._drawn, -1)
        self._clear()
        if run is not None:
            self.timer.start()  # the first tick draws it; Run itself stays short
        else:
            self.timer.stop()

    def stop(self) -> None:
        """Draw what is there one last time and stop the timer (the run ended)."""
        self._on_tick()
        self.timer.stop()

    def step_points(self) -> int:
        """How many step points (wall times) the step plot shows, profiled ones included."""
        lines = sum(len(it.xData) for it in self._wall_items.values() if it.xData is not None)
        return lines + len(self._profiled_item.data)

    def gpu_points(self) -> int:
        """How many GPU-time points the step plot shows."""
        lines = sum(
            int(np.isfinite(it.yData).sum())
            for it in self._gpu_items.values()
            if it.yData is not None
        )
        return lines + len(self._profiled_gpu_item.data)

    def memory_curves(self) -> dict[tuple[str, str], int]:
        """``(device, what) -> points`` of each memory curve (``what``: rss, allocated...)."""
        return {
            k: (0 if it.xData is None else len(it.xData)) for k, it in self._memory_items.items()
        }

    def splits_shown(self) -> bool:
        """Whether the split bars are part of the plots (once a DataParallel split came)."""
        return not self._split_box.isHidden()

    def split_rows(self) -> dict[str, int]:
        """Device -> rows of the split bars shown (the latest step with splits)."""
        run = self.run
        if run is None or run.latest_split_step() is None:
            return {}
        return {b.device: b.rows for b in run.splits[run.latest_split_step()]}  # type: ignore[index]

    # -- redraw -----------------------------------------------------------------------------
    def _on_tick(self) -> None:
        run = self.run
        if run is None:
            return
        for part, update in (
            ("progress", self._update_progress),
            ("steps", self._update_steps),
            ("memory", self._update_memory),
            ("splits", self._update_splits),
        ):
            v = run.versions[part]
            if v != self._drawn[part]:
                self._drawn[part] = v
                update(run)
                self.redraws[part] += 1
                self.redraw_times[part].append(time.monotonic())

    def _clear(self) -> None:
        for it in [*self._wall_items.values(), *self._gpu_items.values()]:
            self.step_plot.getPlotItem().removeItem(it)
        self._wall_items.clear()
        self._gpu_items.clear()
        self.step_legend.setText("")
        for scatter in (self._profiled_item, self._profiled_gpu_item):
            if scatter.data.size:
                scatter.setData([], [])
        for it in self._memory_items.values():
            self.memory_plot.getPlotItem().removeItem(it)
        self._memory_items.clear()
        self.memory_legend.setText("")
        if not self._split_box.isHidden():
            self._split_bars.setOpts(x=[], height=[])
        for t in self._split_texts:
            self.split_plot.getPlotItem().removeItem(t)
        self._split_texts.clear()
        self._split_shown = {}
        self.split_legend.setText("")
        self._split_box.setVisible(False)
        self.progress.setRange(0, 1)
        self.progress.setValue(0)

    def _update_progress(self, run: LiveRun) -> None:
        total = max(run.total, 1)
        self.progress.setFormat("%v / %m steps" if run.total else "")
        self.progress.setRange(0, total)
        self.progress.setValue(min(run.step, total))
        name = run.workload
        if ".py:" in name:  # a user file: its name, not its whole path
            path, _, func = name.rpartition(":")
            name = f"{os.path.basename(path)}:{func}"
        where = f"{name} on {run.device}" if name else "starting…"
        parts = [f"<b>{html_safe(where, one_line=True)}</b>"]
        if run.total:
            parts.append(f"step {run.step}/{run.total}")
        if run.last_label:
            ls = run.last_step
            t = f"{html_safe(str(run.last_label), one_line=True)}: wall {_fmt_ms(ls['wall_ms'])}"
            if np.isfinite(ls["gpu_ms"]):
                t += f", GPU {_fmt_ms(ls['gpu_ms'])}"
            parts.append(t)
        end = run.terminal
        if end is not None:
            kind = type(end).__name__
            parts.append({"Finished": "done", "Failed": "FAILED", "Cancelled": "cancelled"}[kind])
        self.status.setText(" — ".join(parts))

    def _update_steps(self, run: LiveRun) -> None:
        if not run.steps_timed and not self._wall_items:
            return
        item = self.step_plot.getPlotItem()
        x = run.step_index.view()
        wall = run.wall_ms.view()
        gpu = run.gpu_ms.view()
        lid = run.label_id.view()
        prof = run.profiled.view().astype(bool)
        for k, label in enumerate(run.labels):
            mask = (lid == k) & ~prof
            c = color(k)
            w = self._wall_items.get(label)
            if w is None:
                w = pg.PlotDataItem(
                    pen=pg.mkPen(c, width=1.5),
                    symbol="o",
                    symbolSize=6,
                    symbolBrush=c,
                    symbolPen=None,
                    name=f"{label} (wall)",
                )
                item.addItem(w)
                self._wall_items[label] = w
            w.setData(x[mask].astype(np.float64), wall[mask])
            g = gpu[mask]
            if np.isfinite(g).any():
                gi = self._gpu_items.get(label)
                if gi is None:
                    gi = pg.PlotDataItem(
                        pen=pg.mkPen(c, width=1.5, style=_DASH),
                        symbol="t",
                        symbolSize=7,
                        symbolBrush=c,
                        symbolPen=None,
                        connect="finite",
                        name=f"{label} (GPU)",
                    )
                    item.addItem(gi)
                    self._gpu_items[label] = gi
                gi.setData(x[mask].astype(np.float64), g)
        if prof.any():
            px = x[prof].astype(np.float64)
            brushes = [pg.mkBrush(color(int(k))) for k in lid[prof]]
            # ScatterPlotItem is not told of the log axis: it takes log10 values.
            self._profiled_item.setData(px, np.log10(wall[prof]), brush=brushes)
            pg_ok = np.isfinite(gpu[prof])
            if pg_ok.any():
                gbrushes = [b for b, ok in zip(brushes, pg_ok) if ok]
                self._profiled_gpu_item.setData(
                    px[pg_ok], np.log10(gpu[prof][pg_ok]), brush=gbrushes
                )
        if len(x):
            # Whole steps on x; autorange would zoom a lone point to a thousandth of a step.
            last = float(x.max())
            item.setXRange(-0.5, last + 0.5, padding=0.02)
            major = next((m for m in (1, 2, 5, 10, 20, 50, 100) if last / m <= 12), None)
            if major is not None:
                item.getAxis("bottom").setTickSpacing(major, major)
        _set_text(
            self.step_legend,
            "  ".join(
                f"<span style='color:{color(k).name()}'>●</span>&nbsp;"
                f"{html_safe(str(label), one_line=True)}"
                for k, label in enumerate(run.labels)
            )
            + "<br><span style='color:#555'>— wall"
            + ("&nbsp;&nbsp;- - ▲ GPU" if self._gpu_items else "")
            + ("&nbsp;&nbsp;◉ profiled step (slowed by the profiler)" if prof.any() else "")
            + "</span>",
        )

    def _update_memory(self, run: LiveRun) -> None:
        if not run.memory:
            return  # nothing yet: leave the empty plot as it is (no relayout, no repaint)
        item = self.memory_plot.getPlotItem()
        peak = 0.0
        for cols in run.memory.values():
            for name in ("rss_bytes", "allocated_bytes", "reserved_bytes", "nvml_used_bytes"):
                v = getattr(cols, name).view()
                if len(v) and np.isfinite(v).any():
                    peak = max(peak, float(np.nanmax(v)))
        unit, scale = byte_unit(peak)
        if unit != self._memory_unit:
            item.setLabel("left", unit)
            self._memory_unit = unit
        for i, (device, cols) in enumerate(run.memory.items()):
            cuda = device.startswith("cuda") or cols.has("allocated_bytes")
            wanted = [
                ("allocated", "allocated_bytes", Qt.PenStyle.SolidLine),
                ("reserved", "reserved_bytes", _DASH),
                ("NVML used", "nvml_used_bytes", _DOT),
            ]
            if not cuda or not cols.has("allocated_bytes"):
                wanted.insert(0, ("RSS", "rss_bytes", Qt.PenStyle.SolidLine))
            t = cols.t_s.view()
            for what, field, style in wanted:
                if not cols.has(field):
                    continue
                key = (device, what)
                it = self._memory_items.get(key)
                if it is None:
                    it = pg.PlotDataItem(
                        pen=pg.mkPen(color(i), width=1.6, style=style),
                        connect="finite",
                        name=f"{device} {what}",
                    )
                    item.addItem(it)
                    self._memory_items[key] = it
                # Each curve joins its own readings: an app-read sample that has NVML's figure
                # but not the allocator's leaves no hole in the allocator's curve.
                v = getattr(cols, field).view()
                ok = np.isfinite(v)
                it.setData(t[ok], v[ok] / scale)
        devices = list(run.memory)
        whats = sorted({w for _, w in self._memory_items}, key=_MEMORY_ORDER.index)
        _set_text(
            self.memory_legend,
            "  ".join(
                f"<span style='color:{color(i).name()}'>■</span>&nbsp;{html_safe(str(d), one_line=True)}"
                for i, d in enumerate(devices)
            )
            + "<br><span style='color:#555'>"
            + "&nbsp;&nbsp;".join(f"{_MEMORY_STYLE[w]} {w}" for w in whats)
            + "</span>",
        )

    def _update_splits(self, run: LiveRun) -> None:
        latest = run.latest_split_step()
        if latest is None:
            return
        if self._split_box.isHidden():
            self._split_box.setVisible(True)
            w = max(self.splitter.width(), 900)
            self.splitter.setSizes([int(w * 0.34), int(w * 0.33), int(w * 0.33)])
        # The last few steps side by side, one bar per GPU: a batch's uneven last split
        # (30, 30, 30, 10 rows on 2 GPUs: 15/15 ... 5/5) shows next to the full ones.
        steps = sorted(run.splits)[-SPLIT_STEPS_SHOWN:]
        devices = run.split_devices()
        n = len(devices)
        width = 0.8 / max(n, 1)
        xs, heights, brushes, labels = [], [], [], []
        for j, step in enumerate(steps):
            bars = {b.device: b for b in run.splits[step]}
            for i, d in enumerate(devices):
                b = bars.get(d)
                xs.append(j + (i - (n - 1) / 2) * width)
                heights.append(0 if b is None else b.rows)
                brushes.append(color(i))
                text = "0" if b is None else str(b.rows)
                if b is not None and b.gpu_ms is not None and len(steps) * n <= 4:
                    text += f"\n{_fmt_ms(float(b.gpu_ms))}"
                labels.append(text)
        self._split_shown = {
            (step, d): int(heights[j * n + i])
            for j, step in enumerate(steps)
            for i, d in enumerate(devices)
        }
        self._split_bars.setOpts(
            x=np.asarray(xs),
            height=np.asarray(heights, dtype=np.float64),
            width=width * 0.9,
            brushes=brushes,
        )
        item = self.split_plot.getPlotItem()
        what = f"step {steps[0]}" if len(steps) == 1 else f"steps {steps[0]}–{steps[-1]}"
        item.setTitle(f"DataParallel split · rows per GPU, {what}", color="#222", size="10pt")
        item.getAxis("bottom").setTicks([[(float(j), str(s)) for j, s in enumerate(steps)]])
        for t in self._split_texts:
            item.removeItem(t)
        self._split_texts.clear()
        if len(xs) <= SPLIT_LABELS_MAX:
            for x, h, text in zip(xs, heights, labels):
                ti = pg.TextItem(text, color="#222", anchor=(0.5, 1.0))
                ti.setPos(float(x), float(h))
                item.addItem(ti)
                self._split_texts.append(ti)
        top = max([1.0, *(float(h) for h in heights)])
        item.setYRange(0, top * 1.3)
        item.setXRange(-0.6, len(steps) - 0.4)
        _set_text(
            self.split_legend,
            "  ".join(
                f"<span style='color:{color(i).name()}'>■</span>&nbsp;{html_safe(str(d), one_line=True)}"
                for i, d in enumerate(devices)
            ),
        )

    def split_bars(self) -> dict[tuple[int, str], int]:
        """``(step, device) -> rows`` of every split bar shown."""
        return dict(self._split_shown)

    def update_rates_hz(self, part: str, since: float, until: float) -> float:
        """Redraws of ``part`` per second between two ``time.monotonic()`` readings."""
        n = sum(1 for t in self.redraw_times[part] if since <= t <= until)
        return n / max(until - since, 1e-9)


__all__ = ["REDRAW_INTERVAL_MS", "QtLivePlots"]
