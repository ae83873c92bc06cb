"""Export from the app: the trace, the summary, the kernel table, and pictures of the views.

Each function writes one file and raises ``OSError``/``ValueError`` with a one-line message; the
main window asks for the path and shows the error. The trace itself is written by
:mod:`gpuviz.trace.chrome_export`; this module only chooses the format from the file name.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, QRectF, QSize
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QWidget

from gpuviz.gui.views.trace.qt_kernels import COLUMNS

TRACE_FILTER = "Chrome trace, gzipped (*.json.gz);;Chrome trace (*.json)"
TABLE_FILTER = "CSV (*.csv);;JSON (*.json)"
PLOT_FILTER = "PNG image (*.png);;SVG image (*.svg)"


def write_trace(trace: Any, path: str) -> None:
    """Write ``trace`` as one normalized Chrome-trace file (``.json`` or ``.json.gz``)."""
    from gpuviz.trace import chrome_export

    chrome_export.export_chrome(trace, path)


def write_summary(summary: dict[str, Any], path: str) -> None:
    """Write a ``gpuviz summary --json`` object as JSON, or as CSV (by the file's suffix).

    The CSV is in long form, one figure a line: ``table, rank, device, stream, name, field,
    value``, so it loads into a spreadsheet or a data frame without knowing the nesting.
    """
    p = Path(path)
    if p.suffix.lower() == ".csv":
        with p.open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["table", "rank", "device", "stream", "name", "field", "value"])
            for key in ("events", "warnings", "span_us"):
                w.writerow(["trace", "", "", "", "", key, summary.get(key)])
            for src in summary.get("sources", []):
                w.writerow(["trace", "", "", "", "", "source", src])
            for table in ("devices", "streams", "top_kernels", "memory", "splits"):
                for row in summary.get(table) or []:
                    ident = [
                        _blank(row.get("rank")),
                        _blank(row.get("device")),
                        _blank(row.get("stream")),
                        _blank(row.get("name")),
                    ]
                    for k, v in row.items():
                        if k not in ("rank", "device", "stream", "name"):
                            w.writerow([table, *ident, k, _blank(v)])
            for k, v in (summary.get("overlap") or {}).items():
                w.writerow(["overlap", "", "", "", "", k, v])
    else:
        p.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")


def _blank(v: Any) -> Any:
    return "" if v is None else v


def write_kernel_table(rows: list[dict[str, Any]], path: str) -> None:
    """Write the kernel table (the rows the Kernels view shows) as CSV or JSON, by suffix.

    Durations are in µs; ``share`` is 0 to 1; ``occupancy`` is in %.
    """
    keys = [c.key for c in COLUMNS]
    p = Path(path)
    clean = [{k: r.get(k) for k in keys} for r in rows]
    if p.suffix.lower() == ".csv":
        with p.open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(keys)
            for r in clean:
                w.writerow(
                    [
                        "x".join(map(str, v)) if isinstance(v, list) else _blank(v)
                        for v in r.values()
                    ]
                )
    else:
        p.write_text(json.dumps(clean, indent=1) + "\n", encoding="utf-8")


def write_plot(target: Any, path: str) -> None:
    """Write a pyqtgraph PlotItem or GraphicsScene as PNG or SVG (by the file's suffix)."""
    from pyqtgraph import exporters

    if Path(path).suffix.lower() == ".svg":
        try:
            exporters.SVGExporter(target).export(path)
        except Exception:
            # pyqtgraph's SVG rewriter cannot parse some path data newer Qt writes: let Qt
            # render the same part of the scene into an SVG instead.
            scene = (
                target
                if hasattr(target, "items") and not hasattr(target, "scene")
                else target.scene()
            )
            rect = (
                target.sceneBoundingRect()
                if hasattr(target, "sceneBoundingRect")
                else scene.sceneRect()
            )
            _render_svg(
                path,
                rect.width(),
                rect.height(),
                lambda p: scene.render(p, QRectF(0, 0, rect.width(), rect.height()), rect),
            )
        return
    exp = exporters.ImageExporter(target)
    # pyqtgraph sizes the image from the item; keep it at least screen-sized and even.
    params = exp.parameters()
    w = max(int(params["width"]), 800)
    params["width"] = w
    if not exp.export(path) and not Path(path).exists():
        raise OSError(f"{path}: could not write the image")


def write_widget(widget: QWidget, path: str) -> None:
    """Write what a widget shows (the Timeline, a table) as PNG, or SVG by rendering it."""
    if Path(path).suffix.lower() == ".svg":
        size = widget.size()
        _render_svg(path, size.width(), size.height(), lambda p: widget.render(p, QPoint(0, 0)))
        return
    if not widget.grab().save(path):
        raise OSError(f"{path}: could not write the image")


def _render_svg(path: str, width: float, height: float, draw: Any) -> None:
    """Write an SVG of ``width`` x ``height`` that ``draw(painter)`` paints."""
    from PySide6.QtSvg import QSvgGenerator

    gen = QSvgGenerator()
    gen.setFileName(path)
    gen.setSize(QSize(int(width), int(height)))
    gen.setViewBox(QRectF(0, 0, width, height))
    painter = QPainter(gen)
    try:
        draw(painter)
    finally:
        painter.end()
