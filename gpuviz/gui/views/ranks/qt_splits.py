"""The Splits view: how DataParallel split each batch over the GPUs, and what each replica cost.

Per step, a stacked bar of the rows each GPU got and a bar of GPU time per replica, from
:func:`gpuviz.analysis.splits.find_splits`. A what-if panel shows the split of any batch on any
number of GPUs (:func:`gpuviz.analysis.split_plan.plan_split`), idle GPUs marked.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from gpuviz.analysis.split_plan import plan_split
from gpuviz.gui.qt_text import set_plain, set_rich
from gpuviz.gui.views.qt_plot_style import IDLE_COLOR, color, legend_below, style_plot_item

MAX_BAR_LABELS = 40  # past this many steps the numbers inside the bars would overlap


def _step_key(row: Any) -> tuple[int, int]:
    return (-1 if row.rank is None else int(row.rank), int(row.step))


class QtSplitsView(QWidget):
    """Per-step DataParallel splits of a trace, and a what-if split planner.

    Parameters
    ----------
    splits : list of SplitRow or None
        From ``find_splits``; empty when the trace has no DataParallel steps.
    error : str
        Shown when the splits could not be computed.
    """

    def __init__(
        self, splits: list[Any] | None, error: str = "", parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.splits = list(splits or [])
        self.steps = sorted({_step_key(r) for r in self.splits})
        self.devices = sorted({int(r.device) for r in self.splits})
        self.rows_bars: dict[int, pg.BarGraphItem] = {}
        self.time_bars: dict[int, pg.BarGraphItem] = {}

        self.status = QLabel()
        self.status.setWordWrap(True)
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground("w")
        self.rows_plot = style_plot_item(
            self.graphics.addPlot(row=0, col=0), "Rows per GPU, each step"
        )
        self.time_plot = style_plot_item(
            self.graphics.addPlot(row=1, col=0), "GPU time per replica, each step"
        )

        left = QVBoxLayout()
        left.addWidget(self.status)
        left.addWidget(self.graphics, 1)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(left, 3)
        layout.addWidget(self._build_what_if(), 1)

        if splits is None:
            self.graphics.hide()
            set_plain(self.status, f"Splits could not be computed: {error or 'not available'}")
        elif not self.splits:
            self.graphics.hide()
            set_rich(
                self.status,
                "<h3>No DataParallel steps</h3><p>This trace has no DataParallel steps: no "
                "<tt>DataParallel.forward</tt> range was recorded. Profile a model wrapped in "
                "<tt>torch.nn.DataParallel</tt> (or run <tt>gpuviz run dataparallel</tt>) to "
                "see how each batch is split over the GPUs. The planner on the right works "
                "without a trace.</p>",
            )
        else:
            self._update_plots()

    # -- the trace's splits ---------------------------------------------------------------
    def _tick_labels(self) -> list[tuple[float, str]]:
        multi_rank = len({k[0] for k in self.steps}) > 1
        return [
            (float(i), f"rank {r} step {s}" if multi_rank else f"step {s}")
            for i, (r, s) in enumerate(self.steps)
        ]

    def _update_plots(self) -> None:
        index = {k: i for i, k in enumerate(self.steps)}
        n_steps, n_dev = len(self.steps), len(self.devices)
        rows = np.zeros((n_dev, n_steps))
        gpu_ms = np.zeros((n_dev, n_steps))
        known = np.zeros((n_dev, n_steps), dtype=bool)
        for r in self.splits:
            d, i = self.devices.index(int(r.device)), index[_step_key(r)]
            gpu_ms[d, i] = r.gpu_ns / 1e6
            if r.rows is not None:
                rows[d, i], known[d, i] = r.rows, True
        x = np.arange(n_steps, dtype=float)
        ticks = [self._tick_labels()]
        bottom = np.zeros(n_steps)
        for d, dev in enumerate(self.devices):
            brush = pg.mkBrush(color(dev))
            bars = pg.BarGraphItem(
                x=x,
                height=rows[d],
                y0=bottom.copy(),
                width=0.6,
                brush=brush,
                pen=pg.mkPen("w", width=1),
                name=f"cuda:{dev}",
            )
            self.rows_plot.addItem(bars)
            self.rows_bars[dev] = bars
            if n_steps <= MAX_BAR_LABELS:
                for i in range(n_steps):
                    if known[d, i] and rows[d, i] > 0:
                        t = pg.TextItem(f"{int(rows[d, i])}", color="w", anchor=(0.5, 0.5))
                        t.setPos(x[i], bottom[i] + rows[d, i] / 2)
                        self.rows_plot.addItem(t)
            bottom += rows[d]
            w = 0.8 / n_dev
            tb = pg.BarGraphItem(
                x=x - 0.4 + w * (d + 0.5),
                height=gpu_ms[d],
                width=w * 0.9,
                brush=brush,
                pen=pg.mkPen("w", width=1),
                name=f"cuda:{dev}",
            )
            self.time_plot.addItem(tb)
            self.time_bars[dev] = tb
            if n_steps <= MAX_BAR_LABELS:
                # Labelled, because a first step's one-off cost dwarfs the others' bars.
                for i in range(n_steps):
                    t = pg.TextItem(_ms_text(gpu_ms[d, i]), color="#222", anchor=(0.5, 1.0))
                    t.setPos(x[i] - 0.4 + w * (d + 0.5), gpu_ms[d, i])
                    self.time_plot.addItem(t)
        for plot, unit in ((self.rows_plot, "rows"), (self.time_plot, "GPU time (ms)")):
            plot.getAxis("bottom").setTicks(ticks)
            plot.setLabel("left", unit, color="#222")
            plot.setXRange(-0.6, n_steps - 0.4, padding=0)
            plot.setMouseEnabled(x=True, y=False)
        self.rows_plot.setYRange(0, max(float(bottom.max()), 1.0) * 1.08, padding=0)
        self.time_plot.setYRange(0, max(float(gpu_ms.max()), 1e-3) * 1.1, padding=0)
        legend = legend_below(self.rows_plot, len(self.rows_bars))  # it hides no bar
        for dev, bars in self.rows_bars.items():
            legend.addItem(bars, f"cuda:{dev}")
        if not known.any():
            set_plain(
                self.status,
                "The trace has no shapes (recorded without record_shapes=True), "
                "so the rows of each replica are unknown; GPU time is shown.",
            )
        else:
            sources = sorted({r.source for r in self.splits})
            set_plain(
                self.status,
                f"{n_steps} DataParallel step{'s' if n_steps != 1 else ''} on "
                f"{n_dev} GPU{'s' if n_dev != 1 else ''} "
                f"(rows read from {', '.join(sources)}). GPU time: the union of "
                "the device's kernels and copies launched inside the step.",
            )

    def rows_per_step(self) -> dict[int, list[float]]:
        """The plotted rows: device -> one bar height per step (what the stacked bars show)."""
        return {
            dev: [float(v) for v in bars.opts["height"]] for dev, bars in self.rows_bars.items()
        }

    def gpu_ms_per_step(self) -> dict[int, list[float]]:
        """The plotted GPU time (ms): device -> one bar height per step."""
        return {
            dev: [float(v) for v in bars.opts["height"]] for dev, bars in self.time_bars.items()
        }

    # -- what if --------------------------------------------------------------------------
    def _build_what_if(self) -> QWidget:
        box = QGroupBox("What if: DataParallel's split")
        self.batch_spin = QSpinBox()
        self.batch_spin.setRange(0, 1_000_000)
        self.gpus_spin = QSpinBox()
        self.gpus_spin.setRange(1, 64)
        # Start from the trace's last (often partial) batch on a node of 8 GPUs or more: the case
        # where Tensor.chunk leaves GPUs idle. Without a trace, the tutorial's 30 rows.
        last = [r for r in self.splits if self.steps and _step_key(r) == self.steps[-1]]
        batch = sum(int(r.rows or 0) for r in last)
        self.batch_spin.setValue(batch if batch > 0 else 30)
        self.gpus_spin.setValue(max(8, len(self.devices)))
        form = QFormLayout()
        form.addRow("Batch size (rows)", self.batch_spin)
        form.addRow("GPUs", self.gpus_spin)
        self.plan_plot = pg.PlotWidget(background="w")
        style_plot_item(self.plan_plot.getPlotItem())
        self.plan_plot.setMouseEnabled(x=False, y=False)
        self.plan_plot.getPlotItem().setLabel("left", "rows", color="#222")
        self.plan_plot.setMinimumHeight(180)
        self.plan_label = QLabel()
        self.plan_label.setWordWrap(True)
        self.plan_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        v = QVBoxLayout(box)
        v.addLayout(form)
        v.addWidget(self.plan_plot, 1)
        v.addWidget(self.plan_label)
        self.batch_spin.valueChanged.connect(self._on_plan_changed)
        self.gpus_spin.valueChanged.connect(self._on_plan_changed)
        self.plan: list[int] = []
        self._update_plan()
        return box

    def _on_plan_changed(self, _value: int) -> None:
        self._update_plan()

    def _update_plan(self) -> None:
        batch, gpus = self.batch_spin.value(), self.gpus_spin.value()
        self.plan = plan_split(batch, gpus)
        item = self.plan_plot.getPlotItem()
        item.clear()
        x = np.arange(gpus, dtype=float)
        h = np.asarray(self.plan, dtype=float)
        brushes = [pg.mkBrush(IDLE_COLOR if r == 0 else color(i)) for i, r in enumerate(self.plan)]
        # An idle GPU gets a thin grey stub so it is visible at all.
        shown = np.where(h > 0, h, max(h.max(), 1.0) * 0.03)
        item.addItem(
            pg.BarGraphItem(x=x, height=shown, width=0.7, brushes=brushes, pen=pg.mkPen("w"))
        )
        for i, r in enumerate(self.plan):
            t = pg.TextItem(
                "idle" if r == 0 else str(r), color="#888" if r == 0 else "#222", anchor=(0.5, 1.0)
            )
            t.setPos(i, shown[i])
            item.addItem(t)
        step = max(1, gpus // 16)
        item.getAxis("bottom").setTicks([[(float(i), str(i)) for i in range(0, gpus, step)]])
        item.setLabel("bottom", "GPU", color="#222")
        item.setXRange(-0.6, gpus - 0.4, padding=0)
        item.setYRange(0, max(h.max(), 1.0) * 1.25, padding=0)
        idle = [i for i, r in enumerate(self.plan) if r == 0]
        chunk = -(-batch // gpus) if batch else 0
        text = (
            f"{batch} rows on {gpus} GPU{'s' if gpus != 1 else ''}: "
            + ", ".join(map(str, self.plan))
            + "."
        )
        if idle:
            text += (
                f"<br><b>{len(idle)} GPU{'s' if len(idle) != 1 else ''} idle</b> "
                f"(cuda:{_ranges(idle)}): <tt>Tensor.chunk</tt> cuts chunks of "
                f"ceil({batch}/{gpus}) = {chunk} rows, so there are fewer chunks than GPUs."
            )
        elif batch and batch % gpus:
            text += (
                f"<br>The last GPU gets fewer rows: chunks are ceil({batch}/{gpus}) = {chunk} rows."
            )
        set_rich(self.plan_label, text)

    def export_target(self) -> Any:
        """The graphics scene that Export → Plot writes."""
        return self.graphics.scene() if self.splits else self.plan_plot.getPlotItem()


def _ms_text(ms: float) -> str:
    """A GPU time given in ms, as a short label."""
    return f"{ms:.2f} ms" if ms >= 1 else f"{ms * 1000:.0f} µs"


def _ranges(ids: list[int]) -> str:
    """``[5, 6, 7]`` -> ``"5-7"``; ``[3, 5]`` -> ``"3, 5"``."""
    out, start, prev = [], ids[0], ids[0]
    for i in [*ids[1:], None]:
        if i is not None and i == prev + 1:
            prev = i
            continue
        out.append(f"{start}" if start == prev else f"{start}-{prev}")
        if i is not None:
            start = prev = i
    return ", ".join(out)
