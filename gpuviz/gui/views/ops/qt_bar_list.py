"""Horizontal bars with their names: the Operators view's top ops by device time.

Painted with ``QPainter`` (a label, a bar and its value per row): long op names read better
beside their bar than under a plot axis. Names are drawn with ``drawText``, which never reads
markup; control characters are escaped first.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFontMetrics, QPainter
from PySide6.QtWidgets import QSizePolicy, QWidget

from gpuviz.display import terminal_safe, tooltip_html

BAR = QColor("#4c78a8")
BAR_SELECTED = QColor("#f58518")
ROW_PX = 20


class QtBarList(QWidget):
    """Bars for ``(label, value, text)`` items, largest first, scaled to the largest.

    Signals
    -------
    barClicked(int)
        The index of the clicked item.
    """

    barClicked = Signal(int)

    def __init__(self, title: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = title
        self.items: list[tuple[str, float, str]] = []
        self.selected = -1
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def set_items(self, items: list[tuple[str, float, str]]) -> None:
        """Show these bars: label (from the file), value, and the value as text."""
        self.items = list(items)
        self.selected = -1
        self.setFixedHeight(ROW_PX * (len(self.items) + 1) + 8)
        self.update()

    def _layout(self) -> tuple[float, float, float]:
        w = float(self.width())
        label_w = min(max(w * 0.42, 120.0), 520.0)
        value_w = 90.0
        return label_w, max(w - label_w - value_w - 16, 10.0), value_w

    def _row_at(self, y: float) -> int:
        i = int((y - ROW_PX - 4) // ROW_PX)
        return i if 0 <= i < len(self.items) else -1

    def paintEvent(self, event: Any) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        p.fillRect(self.rect(), self.palette().base())
        fm = QFontMetrics(self.font())
        label_w, bar_w, value_w = self._layout()
        font = p.font()
        font.setBold(True)
        p.setFont(font)
        p.setPen(self.palette().text().color())
        p.drawText(
            QRectF(6, 2, self.width() - 12, ROW_PX), Qt.AlignmentFlag.AlignVCenter, self.title
        )
        font.setBold(False)
        p.setFont(font)
        top = max((v for _, v, _ in self.items), default=0.0) or 1.0
        for i, (label, value, text) in enumerate(self.items):
            y = ROW_PX + 4 + i * ROW_PX
            name = fm.elidedText(
                terminal_safe(label, one_line=True), Qt.TextElideMode.ElideMiddle, int(label_w - 10)
            )
            p.setPen(self.palette().text().color())
            p.drawText(
                QRectF(6, y, label_w - 10, ROW_PX),
                Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight,
                name,
            )
            w = max(bar_w * value / top, 1.0)
            p.fillRect(
                QRectF(label_w, y + 3, w, ROW_PX - 6), BAR_SELECTED if i == self.selected else BAR
            )
            p.drawText(
                QRectF(label_w + w + 6, y, value_w + 40, ROW_PX),
                Qt.AlignmentFlag.AlignVCenter,
                text,
            )
        p.end()

    def mousePressEvent(self, event: Any) -> None:
        i = self._row_at(event.position().y())
        if i >= 0:
            self.selected = i
            self.update()
            self.barClicked.emit(i)

    def mouseMoveEvent(self, event: Any) -> None:
        i = self._row_at(event.position().y())
        self.setToolTip(tooltip_html(f"{self.items[i][0]}\n{self.items[i][2]}") if i >= 0 else "")
