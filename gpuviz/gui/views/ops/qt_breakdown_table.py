"""A sortable, filterable table of a breakdown's rows (ops, source lines), shared by the
Operators and Source views, and the pieces every breakdown view has: a filter box, a count and
a "Show on Timeline" button.

Keys are data (op names, file paths from the trace): cells show them with control characters
escaped, tooltips literally (never as markup), and the filter matches the exact key
(:data:`KEY_ROLE`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np
from PySide6.QtCore import (
    QAbstractTableModel,
    QEvent,
    QItemSelectionModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QStyledItemDelegate,
    QTableView,
)

from gpuviz.display import terminal_safe, tooltip_html

SORT_ROLE = Qt.ItemDataRole.UserRole
KEY_ROLE = Qt.ItemDataRole.UserRole + 1
"""The exact key of a row (the cells show it escaped)."""
ROW_ROLE = Qt.ItemDataRole.UserRole + 2
"""The row's index in its ``Breakdown.rows``."""


@dataclass(frozen=True)
class Column:
    """One column: its title, the ``BreakdownRow`` attribute it shows, and how."""

    title: str
    attr: str
    fmt: str  # "text", "int", "us" (the attribute is ns), "share" (of the table's device time),
    # "flops", "float" (one decimal); an attribute the row lacks is read from its ``extra``
    tip: str = ""


def initial_sort_order(fmt: str) -> Qt.SortOrder:
    """A column's order on its first click (``Qt.InitialSortOrderRole``): numbers largest
    first (the calls, times and shares worth a look), text A to Z."""
    return Qt.SortOrder.AscendingOrder if fmt == "text" else Qt.SortOrder.DescendingOrder


def format_us(ns: float) -> str:
    """ns as µs with thousands separators (``12,345.6``)."""
    return f"{ns / 1000.0:,.1f}"


def format_flops(flops: int | None) -> str:
    """A FLOP count in G or T (``""`` where unknown)."""
    if flops is None:
        return ""
    if flops >= 1e12:
        return f"{flops / 1e12:,.2f} T"
    if flops >= 1e9:
        return f"{flops / 1e9:,.2f} G"
    return f"{flops / 1e6:,.2f} M"


def shapes_text(row: Any) -> str:
    """An op-shape row's input shapes, as Kineto writes ``Input Dims`` (``[[8, 64], [64]]``)."""
    shapes = getattr(row, "input_shapes", None)
    if shapes is None:
        return ""
    return json.dumps(shapes, separators=(", ", ": "))


class QtBreakdownTableModel(QAbstractTableModel):
    """The rows of a ``Breakdown`` for a ``QTableView``.

    Parameters
    ----------
    columns : tuple of Column
    """

    rowsSet = Signal()
    """New rows (or columns) are shown: the table sizes its columns again."""

    def __init__(self, columns: tuple[Column, ...], parent: Any = None) -> None:
        super().__init__(parent)
        self.columns = columns
        self.rows: list[Any] = []
        self.total_ns = 0

    def set_rows(self, rows: list[Any], total_ns: int) -> None:
        """Show these ``BreakdownRow`` s; ``total_ns`` is the share column's denominator."""
        self.beginResetModel()
        self.rows = list(rows)
        self.total_ns = int(total_ns)
        self.endResetModel()
        self.rowsSet.emit()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.columns)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(self.columns):
            col = self.columns[section]
            if role == Qt.ItemDataRole.DisplayRole:
                # A word a line for numbers: a dozen columns and the names fit 1000 px.
                return col.title if col.fmt == "text" else col.title.replace(" ", "\n")
            if role == Qt.ItemDataRole.ToolTipRole and col.tip:
                return col.tip
            if role == Qt.ItemDataRole.InitialSortOrderRole:
                return initial_sort_order(col.fmt)
        return None

    def value(self, row: int, col: Column) -> Any:
        """The raw value of a cell."""
        r = self.rows[row]
        if col.attr == "input_shapes":
            return shapes_text(r)
        if col.fmt == "share":
            return r.device_total_ns / self.total_ns if self.total_ns else 0.0
        if col.attr.startswith("cpu_") and getattr(r, "extra", {}).get("cpu_note"):
            return None  # a compiled model's module or line: host time unknown, not 0
        if hasattr(r, col.attr):
            return getattr(r, col.attr)
        return getattr(r, "extra", {}).get(col.attr)

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if not index.isValid():
            return None
        col = self.columns[index.column()]
        value = self.value(index.row(), col)
        if role == SORT_ROLE:
            if col.fmt == "text":
                return str(value or "")
            return float(value) if value is not None else -1.0
        if role == KEY_ROLE:
            return str(self.rows[index.row()].key)
        if role == ROW_ROLE:
            return index.row()
        if role == Qt.ItemDataRole.DisplayRole:
            if value is None and col.attr.startswith("cpu_"):
                return "unknown"
            return _format(value, col)
        if role == Qt.ItemDataRole.ToolTipRole and col.fmt == "text" and value:
            return tooltip_html("\n".join([str(value), *compiled_lines(self.rows[index.row()])]))
        if role == Qt.ItemDataRole.TextAlignmentRole and col.fmt != "text":
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


def compiled_lines(row: Any) -> list[str]:
    """What a row of compiled code fuses and where it came from (issue 49): the hover text
    that opens a compiled region's kernel to its fused ops, FX nodes and modules."""
    x = getattr(row, "extra", {}) or {}
    source = x.get("attribution_source")
    if not source:
        return []
    out = [f"compiled code (attribution: {source})"]
    if x.get("compiled_in"):
        out.append(f"compiled in: {x['compiled_in']}; host time unknown")
    for label, key in (
        ("fused ops", "fused_ops"),
        ("FX nodes", "fused_nodes"),
        ("modules", "modules"),
    ):
        if x.get(key):
            out.append(f"{label}: {', '.join(str(v) for v in x[key])}")
    return out


def _format(value: Any, col: Column) -> str:
    if value is None:
        return ""
    if col.fmt == "text":
        return terminal_safe(str(value), one_line=True)
    if col.fmt == "int":
        return f"{int(value):,}"
    if col.fmt == "us":
        return format_us(float(value))
    if col.fmt == "share":
        return f"{100 * float(value):.1f} %"
    if col.fmt == "flops":
        return format_flops(value)
    if col.fmt == "float":
        return f"{float(value):,.1f}"
    return str(value)


def make_table(model: QtBreakdownTableModel, sort_column: int) -> tuple[QTableView, Any]:
    """A sortable table over ``model`` with a proxy filtering on the exact key (column 0)."""
    proxy = QSortFilterProxyModel(model)
    proxy.setSourceModel(model)
    proxy.setSortRole(SORT_ROLE)
    proxy.setFilterRole(KEY_ROLE)
    proxy.setFilterKeyColumn(0)
    proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
    table = QTableView()
    table.setModel(proxy)
    table.setSortingEnabled(True)
    table.sortByColumn(sort_column, Qt.SortOrder.DescendingOrder)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setAlternatingRowColors(True)
    table.verticalHeader().setVisible(False)
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 8)
    table.setWordWrap(False)
    table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
    fitter = ColumnFitter(table)
    table.column_fitter = fitter  # type: ignore[attr-defined]
    model.rowsSet.connect(fitter.fit)
    return table, proxy


MIN_TEXT_WIDTH = 100
"""A text column is never squeezed below this (its tooltip has the whole text)."""
MAX_MEASURED_ROWS = 500
"""Rows measured (the first shown, largest first): a cell of each of 5000 rows cost 0.3 s."""


class ElideRightDelegate(QStyledItemDelegate):
    """Cells cut at their end ("[[8, 128, 256], [8, 1…"): for input shapes, whose first
    dimensions tell the rows apart, unlike names (cut in the middle, keeping both ends)."""

    def initStyleOption(self, option: Any, index: Any) -> None:
        super().initStyleOption(option, index)
        option.textElideMode = Qt.TextElideMode.ElideRight


class ColumnFitter(QObject):
    """Sizes a table's columns to their contents, again whenever the table is resized.

    Number columns get their contents' width; the text columns share the rest, each up to its
    longest cell (so the op names are not cut while a shape column stretches past its
    contents), squeezed in proportion where they do not fit, never below
    :data:`MIN_TEXT_WIDTH`. Width left over goes to the number columns, evenly.
    """

    def __init__(self, table: QTableView) -> None:
        super().__init__(table)
        self.table = table
        self._busy = False
        table.horizontalHeader().setStretchLastSection(False)
        table.viewport().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and not self._busy:
            self.fit()
        return False

    def text_columns(self) -> list[int]:
        model = self.table.model()
        source = model.sourceModel() if hasattr(model, "sourceModel") else model
        cols = getattr(source, "columns", ())
        return [i for i, c in enumerate(cols) if c.fmt == "text"]

    def fit(self) -> None:
        """Size the columns now (after new rows or columns)."""
        self._busy = True
        try:
            self._fit()
        finally:
            self._busy = False

    def _fit(self) -> None:
        table, header = self.table, self.table.horizontalHeader()
        model = table.model()
        n = model.columnCount()
        text = [c for c in self.text_columns() if c < n]
        numbers = [c for c in range(n) if c not in text]
        fm = table.fontMetrics()
        pad = 2 * table.style().pixelMetric(table.style().PixelMetric.PM_FocusFrameHMargin) + 12
        rows = min(model.rowCount(), MAX_MEASURED_ROWS)
        for c in range(n):
            header.setSectionResizeMode(c, QHeaderView.ResizeMode.Interactive)
        widths: dict[int, int] = {}
        hfm = header.fontMetrics()
        for c in numbers:
            cells = [str(model.index(r, c).data() or "") for r in range(rows)]
            # The header's longest word (a word a line) and room for the sort arrow.
            title = str(model.headerData(c, Qt.Orientation.Horizontal) or "")
            head = max([hfm.horizontalAdvance(w) for w in title.split()] or [0]) + 26
            widths[c] = max([head, *(fm.horizontalAdvance(t) + pad for t in cells)])
        want: dict[int, int] = {}
        for c in text:
            cells = [str(model.index(r, c).data() or "") for r in range(rows)]
            want[c] = max(
                [header.sectionSizeHint(c), *(fm.horizontalAdvance(t) + pad for t in cells)]
            )
        room = table.viewport().width() - sum(widths.values())
        if text and sum(want.values()) > room:
            # Short text columns whole, then the name (column 0), up to 70 % of what is left,
            # then the others share the rest (a shape list is cut at its end).
            short = [c for c in text if want[c] <= MIN_TEXT_WIDTH]
            rest = room - sum(want[c] for c in short)
            long = [c for c in text if c not in short]
            if 0 in long and len(long) > 1:
                # Names whole up to a third of the table, before shapes (a narrow window then
                # scrolls the last number columns rather than cut every name).
                share = max(int(rest * 0.7), int(table.viewport().width() * 0.33))
                want[0] = max(MIN_TEXT_WIDTH, min(want[0], share))
                rest -= want[0]
                long.remove(0)
            need = sum(want[c] for c in long)
            for c in long:
                want[c] = max(MIN_TEXT_WIDTH, int(want[c] * min(1.0, rest / max(need, 1))))
        left = room - sum(want.values())
        if left > 0 and numbers:
            for c in numbers:
                widths[c] += left // len(numbers)
        widths.update(want)
        for c, w in widths.items():
            header.resizeSection(c, w)


def selected_row(table: QTableView) -> int:
    """The ``Breakdown.rows`` index of the selected row, -1 for none."""
    rows = table.selectionModel().selectedRows()
    if not rows:
        return -1
    return int(rows[0].data(ROW_ROLE))


def select_only(table: QTableView, index: Any) -> None:
    """Select the row of ``index`` (a model index of ``table``) alone, and scroll to it.

    Not ``selectRow``: with extended selection it honours held modifier keys (and adds).
    """
    flags = (
        QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
    )
    table.selectionModel().select(index, flags)
    table.scrollTo(index)


class SelectedKernels:
    """What the table views share about their selection (a mixin for a ``QWidget`` with
    ``table``, ``breakdowns``, ``show_button`` and a ``showKernels`` signal): the selected row
    and its kernels, asked for on the Timeline. ``table_by`` names the breakdown shown."""

    table: QTableView
    breakdowns: Any
    show_button: Any
    showKernels: Any

    def table_by(self) -> str:
        raise NotImplementedError

    def selected_index(self) -> int:
        """The ``Breakdown.rows`` index of the selected row, -1 for none."""
        return selected_row(self.table)

    def selected_kernels(self) -> np.ndarray:
        """The slice rows of the selected row's kernels (:func:`row_kernels`)."""
        from gpuviz.gui.views.ops.breakdown_model import row_kernels

        i = self.selected_index()
        if i < 0 or self.breakdowns is None:
            return np.empty(0, dtype=np.int64)
        return row_kernels(self.breakdowns, self.table_by(), i)

    def show_selected_on_timeline(self) -> None:
        """Ask for the selected row's kernels on the Timeline (none: nothing happens)."""
        if self.show_button.isEnabled():
            self.showKernels.emit(self.selected_kernels())


def shown_keys(proxy: Any) -> list[str]:
    """The keys of the rows shown (filtered, sorted), top to bottom."""
    return [str(proxy.index(r, 0).data(KEY_ROLE)) for r in range(proxy.rowCount())]


def message_widget(text: str) -> QLabel:
    """A centred, wrapped, plain-text note (why a view is empty)."""
    from gpuviz.gui.qt_text import plain_label

    label = plain_label(text)
    label.setWordWrap(True)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setStyleSheet("color: #555; padding: 24px; font-size: 13px;")
    return label
