"""The sites that hold memory at a chosen time: a table by bytes, and the selected site's stack.

Each row is a site (the first frame of the user's own code; see
:mod:`gpuviz.analysis.allocator`), with the colour its bands have in the timeline. Cells are
data, never markup; the stack is plain text.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from gpuviz.analysis.allocator import SiteRow, sites_live_at
from gpuviz.analysis.allocator_timeline import MemoryTimeline
from gpuviz.display import format_bytes, terminal_safe
from gpuviz.gui.qt_text import wrap_label
from gpuviz.gui.views.memory.qt_memory_timeline import NS_PER_MS, colour_of_site, site_colours

COLUMNS = ("bytes", "blocks", "site", "function", "file")
Index = QModelIndex | QPersistentModelIndex


class SitesModel(QAbstractTableModel):
    """Rows of :class:`SiteRow`, most bytes first."""

    def __init__(self, colours: dict[int, QColor], parent: Any = None) -> None:
        super().__init__(parent)
        self.rows: list[SiteRow] = []
        self.colours = colours

    def set_rows(self, rows: list[SiteRow]) -> None:
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return COLUMNS[section]
        if role == Qt.ItemDataRole.InitialSortOrderRole and COLUMNS[section] in ("bytes", "blocks"):
            return Qt.SortOrder.DescendingOrder  # largest first on the first click
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        r = self.rows[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            values = (format_bytes(r.bytes), r.blocks, r.site, r.function, r.filename)
            v = values[col]
            return terminal_safe(v, one_line=True) if isinstance(v, str) else v
        if role == Qt.ItemDataRole.DecorationRole and col == 2:
            return colour_of_site(self.colours, r.frame)
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (0, 1):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.UserRole:
            return r.bytes
        return None


class QtMemorySites(QWidget):
    """Sites live after a chosen entry, and the stack of the selected one."""

    def __init__(self, tl: MemoryTimeline, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tl = tl
        self.title = QLabel()
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        wrap_label(self.title)  # its figures must not widen the window
        self.model = SitesModel(site_colours(tl), self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.stack = QPlainTextEdit()
        self.stack.setReadOnly(True)
        self.stack.setPlaceholderText("select a site to see its stack")
        self.table.selectionModel().selectionChanged.connect(self._on_selection_changed)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.stack)
        split.setSizes([300, 120])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.title)
        lay.addWidget(split, 1)
        self.show_entry(tl.figures.peak_entry)

    def show_entry(self, entry: int) -> None:
        """List the sites live after ``entry`` (``-1``: when the window began)."""
        rows = sites_live_at(self.tl.snap, self.tl.device, entry, top=None)
        self.model.set_rows(rows)
        total = sum(r.bytes for r in rows)
        t = self.tl.time_of(entry) / NS_PER_MS
        what = "at the peak" if entry == self.tl.figures.peak_entry else f"at {t:.3f} ms"
        self.title.setText(
            f"Sites holding memory {what}: {len(rows)} sites, {format_bytes(total)} in "
            f"{sum(r.blocks for r in rows)} allocations (click the timeline to choose a time)"
        )
        self.stack.clear()
        if rows:
            self.table.selectRow(0)

    def _on_selection_changed(self, *args: Any) -> None:
        sel = self.table.selectionModel().selectedRows()
        if not sel:
            self.stack.clear()
            return
        r = self.model.rows[sel[0].row()]
        if r.stack < 0:
            self.stack.setPlainText(f"{r.site}: {r.function}")
            return
        text = self.tl.snap.stack_text(r.stack)
        self.stack.setPlainText(terminal_safe(text))
