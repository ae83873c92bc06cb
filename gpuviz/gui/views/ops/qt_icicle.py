"""An icicle chart of the module tree: each module as wide as its device time, its sub-modules
below it.

Painted with ``QPainter`` from :func:`~gpuviz.gui.views.ops.breakdown_model.icicle_cells` (a few
hundred modules at most); names go through ``drawText``, which never reads markup.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from gpuviz.display import terminal_safe, tooltip_html
from gpuviz.gui.views.ops.breakdown_model import IcicleCell, TreeNode, icicle_cells, tree_total_ns

ROW_PX = 24
# Tableau 10: one hue per top-level node, lighter for each level below it.
HUES = ("#4c78a8", "#f58518", "#54a24b", "#b279a2", "#e45756", "#72b7b2", "#eeca3b", "#9d755d")
OUTSIDE = "#9a9a9a"


class QtIcicle(QWidget):
    """The icicle of a module tree.

    Signals
    -------
    nodeClicked(object)
        The :class:`TreeNode` of the clicked cell.
    """

    nodeClicked = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.cells: list[IcicleCell] = []
        self.total_ns = 0
        self.selected: TreeNode | None = None
        self._colour: dict[int, QColor] = {}
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def set_tree(self, roots: list[TreeNode]) -> None:
        """Draw this tree."""
        self.total_ns = tree_total_ns(roots)
        self.cells = icicle_cells(roots)
        self._colour = {}
        for i, root in enumerate(roots):
            base = QColor(OUTSIDE if root.kind == "group" else HUES[i % len(HUES)])
            self._paint_colours(root, base, 0)
        depth = max((c.depth for c in self.cells), default=0) + 1
        self.setFixedHeight(ROW_PX * depth + 4)
        self.update()

    def _paint_colours(self, node: TreeNode, base: QColor, level: int) -> None:
        self._colour[id(node)] = base.lighter(100 + 14 * level)
        for c in node.children:
            self._paint_colours(c, base, level + 1)

    def _rect(self, cell: IcicleCell) -> QRectF:
        w = float(self.width() - 2)
        return QRectF(1 + cell.x0 * w, 2 + cell.depth * ROW_PX, (cell.x1 - cell.x0) * w, ROW_PX - 2)

    def cell_at(self, x: float, y: float) -> IcicleCell | None:
        """The cell under a point, or None."""
        for c in self.cells:
            if self._rect(c).contains(x, y):
                return c
        return None

    def paintEvent(self, event: Any) -> None:
        p = QPainter(self)
        p.fillRect(self.rect(), self.palette().base())
        fm = QFontMetrics(self.font())
        for c in self.cells:
            r = self._rect(c)
            if r.width() < 1:
                continue
            p.fillRect(r, self._colour.get(id(c.node), QColor(OUTSIDE)))
            if c.node is self.selected:
                p.setPen(QPen(QColor("#000000"), 2))
                p.drawRect(r.adjusted(1, 1, -1, -1))
            p.setPen(QPen(QColor("#ffffff"), 1))
            p.drawLine(r.topRight(), r.bottomRight())
            if r.width() > 24:
                share = c.node.device_ns / self.total_ns if self.total_ns else 0.0
                text = fm.elidedText(
                    f"{terminal_safe(c.node.label, one_line=True)}  {share:.0%}",
                    Qt.TextElideMode.ElideRight,
                    int(r.width() - 6),
                )
                p.setPen(QColor("#111111"))
                p.drawText(r.adjusted(3, 0, -3, 0), Qt.AlignmentFlag.AlignVCenter, text)
        p.end()

    def mousePressEvent(self, event: Any) -> None:
        c = self.cell_at(event.position().x(), event.position().y())
        if c is not None:
            self.selected = c.node
            self.update()
            self.nodeClicked.emit(c.node)

    def mouseMoveEvent(self, event: Any) -> None:
        c = self.cell_at(event.position().x(), event.position().y())
        if c is None:
            self.setToolTip("")
            return
        n = c.node
        share = n.device_ns / self.total_ns if self.total_ns else 0.0
        self.setToolTip(
            tooltip_html(
                f"{n.label}\ndevice {n.device_ns / 1e6:.3f} ms ({share:.1%}): "
                f"forward {n.forward_ns / 1e6:.3f} ms, backward {n.backward_ns / 1e6:.3f} ms"
            )
        )
