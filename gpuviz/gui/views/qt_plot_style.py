"""Shared look of the views' pyqtgraph plots: colours, a light background, legends outside the\ndata, byte units."""

from __future__ import annotations

import weakref

import pyqtgraph as pg
from PySide6.QtCore import QSizeF, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QSizePolicy

# Tableau-like palette: distinct on white and for the common kinds of colour blindness.
PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#59a14f",
    "#e15759",
    "#76b7b2",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
)
IDLE_COLOR = "#d0d0d0"


def color(i: int) -> QColor:
    """The i-th colour of the palette (cycling)."""
    return QColor(PALETTE[i % len(PALETTE)])


def make_plot_widget(title: str = "") -> pg.PlotWidget:
    """A PlotWidget with a white background, dark axes and no context-menu clutter."""
    # No view box menu made (setMenuEnabled(False) below would drop it): 2-3 ms a plot.
    w = pg.PlotWidget(background="w", enableMenu=False)
    style_plot_item(w.getPlotItem(), title)
    return w


def style_plot_item(item: pg.PlotItem, title: str = "") -> pg.PlotItem:
    """Give a PlotItem inside a GraphicsLayoutWidget the same look as :func:`make_plot_widget`."""
    if title:
        item.setTitle(title, color="#222", size="11pt")
    for name in ("left", "bottom"):
        ax = item.getAxis(name)
        ax.setPen(pg.mkPen("#444"))
        ax.setTextPen(pg.mkPen("#222"))
    item.setMenuEnabled(False)
    return item


class _LegendRow(pg.LegendItem):
    """A legend in its plot's layout, as many entries a line as the plot's width holds."""

    def __init__(self, plot: pg.PlotItem, columns: int) -> None:
        super().__init__(labelTextColor="#222", colCount=columns)
        # Not a reference: a cycle of Qt wrappers is freed by Python's cycle collector, which may
        # run in any thread, and PySide 6.11 then crashes deleting the C++ side in the main one.
        self._plot = weakref.ref(plot)
        self._most_columns = max(1, columns)
        self._placed = (0, 0)  # (entries a line, entries) as last laid out
        plot.geometryChanged.connect(self._update_columns)

    def updateSize(self) -> None:
        # pyqtgraph moves a floating legend to (0, 0) at its new size; this one lays its
        # entries out for the plot's width, and asks the plot's layout for the room.
        self._update_columns()

    def sizeHint(self, which: Qt.SizeHint, constraint: QSizeF = QSizeF()) -> QSizeF:  # noqa: B008
        hint = super().sizeHint(which, constraint)
        if which == Qt.SizeHint.MinimumSize:
            # Its width must not set the plot's: it takes fewer entries a line instead.
            return QSizeF(0, hint.height())
        return hint

    def columns_for(self, room: float) -> int:
        """The most entries a line (up to the ``columns`` asked for) that fit ``room`` px."""
        spacing = self.layout.horizontalSpacing()
        preferred = Qt.SizeHint.PreferredSize
        widths = [
            s.effectiveSizeHint(preferred).width()
            + label.effectiveSizeHint(preferred).width()
            + 2 * spacing
            for s, label in self.items
        ]
        for k in range(min(self._most_columns, len(widths)), 1, -1):
            if sum(max(widths[j::k]) for j in range(k)) <= room:
                return k
        return 1

    def _update_columns(self) -> None:
        plot = self._plot()
        if plot is None:
            return
        k = self.columns_for(plot.width() - LEGEND_MARGIN_PX)
        if (k, len(self.items)) != self._placed:
            self._placed = (k, len(self.items))
            self.columnCount = k
            for i in range(self.layout.count() - 1, -1, -1):
                self.layout.removeAt(i)
            for i, (sample, label) in enumerate(self.items):
                row, col = divmod(i, k)
                self.layout.addItem(sample, row, 2 * col, Qt.AlignmentFlag.AlignVCenter)
                self.layout.addItem(label, row, 2 * col + 1)
        self.updateGeometry()


LEGEND_ROW = 4
"""The row of a PlotItem's layout under its bottom axis (0 title, 1 top axis, 2 view, 3 axis)."""
LEGEND_MARGIN_PX = 8


def legend_below(plot: pg.PlotItem, columns: int) -> pg.LegendItem:
    """Give ``plot`` a legend under its x axis, outside the data; returns it (``plot.legend``).

    ``PlotItem.addLegend`` floats the legend over the view box, where it covers whatever is
    drawn under it (on the Insights chart, the last step's bar) and is cut at the plot's edge
    when the plot is short. This one takes a row of the plot's own layout, up to ``columns``
    entries a line (fewer when the plot is narrow), so the view box is only what is left:
    nothing drawn is ever under it. Items added with a ``name`` join it, as with
    ``addLegend``.
    """
    legend = _LegendRow(plot, columns)
    # The plot owns it: a layout alone leaves it owned by its Python wrapper, which the garbage
    # collector then deletes under a scene that still draws it (a segfault, tests later).
    legend.setParentItem(plot)
    legend.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
    plot.layout.addItem(legend, LEGEND_ROW, 0, 1, 3)  # under the axes and the view
    plot.layout.setAlignment(legend, Qt.AlignmentFlag.AlignHCenter)
    plot.legend = legend
    return legend


def byte_unit(max_bytes: float) -> tuple[str, float]:
    """A unit name and its size for an axis whose values reach ``max_bytes``."""
    if max_bytes >= 2 * (1 << 30):
        return "GiB", float(1 << 30)
    if max_bytes >= 2 * (1 << 20):
        return "MiB", float(1 << 20)
    if max_bytes >= 2 * (1 << 10):
        return "KiB", float(1 << 10)
    return "B", 1.0
