"""Shared look of the views' pyqtgraph plots: colours, a light background, byte units."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtGui import QColor

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
    w = pg.PlotWidget(background="w")
    item = w.getPlotItem()
    if title:
        item.setTitle(title, color="#222", size="11pt")
    for name in ("left", "bottom"):
        ax = item.getAxis(name)
        ax.setPen(pg.mkPen("#444"))
        ax.setTextPen(pg.mkPen("#222"))
    item.setMenuEnabled(False)
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


def byte_unit(max_bytes: float) -> tuple[str, float]:
    """A unit name and its size for an axis whose values reach ``max_bytes``."""
    if max_bytes >= 2 * (1 << 30):
        return "GiB", float(1 << 30)
    if max_bytes >= 2 * (1 << 20):
        return "MiB", float(1 << 20)
    if max_bytes >= 2 * (1 << 10):
        return "KiB", float(1 << 10)
    return "B", 1.0
