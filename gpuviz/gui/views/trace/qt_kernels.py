"""The Kernels view: a sortable, filterable table of the kernels of a trace.

Kernel names are data: a cell shows the name with control characters escaped (``\x1b``), its
tooltip shows it literally (never as markup), and filtering, sorting and selecting by name use
the exact name (:data:`NAME_ROLE`). "What if 2× faster?"
(:class:`~gpuviz.gui.views.ops.qt_whatif.QtWhatIf`) predicts the step with the one selected
kernel twice as fast.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from gpuviz.display import terminal_safe, tooltip_html
from gpuviz.gui.qt_text import plain_label
from gpuviz.gui.views.ops.qt_breakdown_table import initial_sort_order, select_only
from gpuviz.gui.views.ops.qt_whatif import QtWhatIf
from gpuviz.trace.model import Kind, Trace

SORT_ROLE = Qt.ItemDataRole.UserRole
NAME_ROLE = Qt.ItemDataRole.UserRole + 1
"""The exact kernel name of a row (the cells show it escaped)."""


@dataclass(frozen=True)
class KernelColumn:
    """One column of the table: its title, the row key it shows, and how."""

    title: str
    key: str
    fmt: str  # "text", "int", "us", "frac" (0..1 shown as %), "pct" (already in %)
    tip: str = ""


COLUMNS = (
    KernelColumn("Kernel", "name", "text"),
    KernelColumn("Count", "count", "int"),
    KernelColumn("Total (µs)", "total_us", "us", "sum of the kernel's durations"),
    KernelColumn("Mean (µs)", "mean_us", "us"),
    KernelColumn("Max (µs)", "max_us", "us"),
    KernelColumn("Share", "share", "frac", "share of all kernel time"),
    KernelColumn("Grid", "grid", "text", "grid dimensions of the launch (the most common one)"),
    KernelColumn("Block", "block", "text", "block dimensions of the launch (the most common one)"),
    KernelColumn("Registers", "registers", "int", "registers per thread (first launch)"),
    KernelColumn(
        "Occupancy",
        "occupancy",
        "pct",
        "estimated achieved occupancy (first launch); unknown where CUPTI computed none "
        "(driver-API launches such as cuBLASLt's nvjet GEMMs)",
    ),
)


def _dims(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, tuple, np.ndarray)):
        return "×".join(str(int(v)) for v in value)
    return str(value)


class QtKernelTableModel(QAbstractTableModel):
    """Rows of ``kernel_table`` for a ``QTableView``.

    Parameters
    ----------
    rows : list of dict
        One dict per kernel with the keys of :data:`COLUMNS` (missing keys show empty).
    """

    def __init__(self, rows: list[dict[str, Any]], parent: Any = None) -> None:
        super().__init__(parent)
        self.rows = rows

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(COLUMNS):
            col = COLUMNS[section]
            if role == Qt.ItemDataRole.DisplayRole:
                return col.title
            if role == Qt.ItemDataRole.ToolTipRole and col.tip:
                return col.tip
            if role == Qt.ItemDataRole.InitialSortOrderRole:
                return initial_sort_order(col.fmt)
        return None

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if not index.isValid():
            return None
        col = COLUMNS[index.column()]
        value = self.rows[index.row()].get(col.key)
        if role == SORT_ROLE:
            if col.fmt == "text":
                return _dims(value) if col.key in ("grid", "block") else str(value or "")
            return float(value) if value is not None else -1.0
        if role == NAME_ROLE:
            return str(self.rows[index.row()].get("name"))
        if role == Qt.ItemDataRole.DisplayRole:
            text = _format(value, col)
            return terminal_safe(text, one_line=True) if col.fmt == "text" else text
        if role == Qt.ItemDataRole.ToolTipRole and col.key == "name":
            return tooltip_html(str(value))
        if role == Qt.ItemDataRole.TextAlignmentRole and col.fmt != "text":
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


OCCUPANCY_UNKNOWN = "unknown"
"""What the Occupancy column shows where CUPTI computed none (never "0 %")."""


def _format(value: Any, col: KernelColumn) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return OCCUPANCY_UNKNOWN if col.key == "occupancy" else ""
    if col.key in ("grid", "block"):
        return _dims(value)
    if col.fmt == "int":
        return f"{int(value):,}" if int(value) >= 0 else ""
    if col.fmt == "us":
        return f"{float(value):,.1f}"
    if col.fmt == "frac":
        return f"{100 * float(value):.1f} %"
    if col.fmt == "pct":
        # Kineto's whole percent: a 0 it wrote is under 1 %, not none.
        return f"{float(value):.0f} %" if float(value) >= 1 else "<1 %"
    return str(value)


class QtKernelsView(QWidget):
    """The kernel table, with a filter box; selecting kernels asks the Timeline to mark them.

    Signals
    -------
    rowsHighlighted(object)
        The slice rows (an int64 array) of the selected kernels.

    Parameters
    ----------
    trace : Trace
    rows : list of dict or None
        Normalized ``kernel_table`` rows (see :func:`kernel_rows`).
    error : str
        Shown when the table could not be computed.
    """

    rowsHighlighted = Signal(object)

    def __init__(
        self,
        trace: Trace,
        rows: list[dict[str, Any]] | None,
        error: str = "",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.trace = trace
        self.model = QtKernelTableModel(rows or [], self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SORT_ROLE)
        # The filter matches the exact names, not the escaped text the cells show.
        self.proxy.setFilterRole(NAME_ROLE)
        self.proxy.setFilterKeyColumn(0)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)

        self.filter_edit = QLineEdit()
        self.filter_edit.setPlaceholderText("Filter kernels by name…")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.textChanged.connect(self._on_filter_changed)
        self.count_label = QLabel()

        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(2, Qt.SortOrder.DescendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().setVisible(False)
        # One line per kernel: C++ template names run to hundreds of characters.
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for i in range(1, len(COLUMNS)):
            header.setSectionResizeMode(i, QHeaderView.ResizeMode.ResizeToContents)
        self.table.selectionModel().selectionChanged.connect(self._on_selection_changed)

        top = QHBoxLayout()
        top.addWidget(self.filter_edit, 1)
        top.addWidget(self.count_label)
        self.whatif = QtWhatIf()
        self.whatif.showRows.connect(self.rowsHighlighted.emit)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.whatif)
        if rows is None:
            msg = plain_label(f"The kernel table could not be computed: {error or 'not available'}")
            msg.setWordWrap(True)
            layout.addWidget(msg)
        elif not rows:
            msg = QLabel("This trace has no kernels.")
            layout.addWidget(msg)
        layout.addWidget(self.table, 1)
        self._update_count()

    def _on_filter_changed(self, text: str) -> None:
        self.proxy.setFilterFixedString(text)
        self._update_count()

    def _update_count(self) -> None:
        shown, total = self.proxy.rowCount(), self.model.rowCount()
        self.count_label.setText(
            f"{shown} of {total} kernels" if shown != total else f"{total} kernels"
        )

    def selected_names(self) -> list[str]:
        """Names of the selected kernels, in table order."""
        rows = sorted(
            {self.proxy.mapToSource(i).row() for i in self.table.selectionModel().selectedRows()}
        )
        return [str(self.model.rows[r].get("name")) for r in rows]

    def select_name(self, name: str) -> bool:
        """Select (only) the row of kernel ``name`` and scroll to it; returns whether it was
        found. A filter that hides it is cleared."""
        r = self._proxy_row_of(name)
        if r < 0 and self.proxy.filterRegularExpression().pattern():
            if not any(str(row.get("name")) == name for row in self.model.rows):
                return False
            self.filter_edit.clear()  # textChanged clears the proxy's filter
            r = self._proxy_row_of(name)
        if r < 0:
            return False
        select_only(self.table, self.proxy.index(r, 0))
        return True

    def _proxy_row_of(self, name: str) -> int:
        for r in range(self.proxy.rowCount()):
            idx = self.proxy.index(r, 0)
            if self.proxy.data(idx, NAME_ROLE) == name:
                return r
        return -1

    def slice_rows(self, names: list[str]) -> np.ndarray:
        """Slice rows of the kernels with these names."""
        s, sym = self.trace.slices, self.trace.symbols
        ids = [i for i in (sym.find(n) for n in names) if i >= 0]
        if not ids:
            return np.empty(0, dtype=np.int64)
        mask = (s.kind == Kind.KERNEL) & np.isin(s.name, ids)
        return np.flatnonzero(mask).astype(np.int64)

    def _on_selection_changed(self, *_: Any) -> None:
        names = self.selected_names()
        self.rowsHighlighted.emit(self.slice_rows(names))
        self.whatif.set_target(self.trace, names[0] if len(names) == 1 else None)


def kernel_rows(table: Any) -> list[dict[str, Any]]:
    """Turn what ``kernel_table`` returns into one dict per kernel with :data:`COLUMNS`' keys.

    Accepts a list of dicts or of dataclasses, an object with ``rows``/``to_rows()``, or a
    table of equal-length columns (attributes or a dict).
    """
    if table is None:
        return []
    if hasattr(table, "to_rows"):
        table = table.to_rows()
    elif hasattr(table, "rows") and not callable(table.rows):
        table = table.rows
    if isinstance(table, dict):
        cols = table
    elif isinstance(table, (list, tuple)):
        out = []
        for r in table:
            if isinstance(r, dict):
                out.append(dict(r))
            elif hasattr(r, "__dataclass_fields__"):
                out.append({k: getattr(r, k) for k in r.__dataclass_fields__})
            else:
                out.append(dict(r._asdict()))
        return [_alias(r) for r in out]
    elif hasattr(table, "__dataclass_fields__"):
        cols = {k: getattr(table, k) for k in table.__dataclass_fields__}
    else:
        raise TypeError(f"unexpected kernel table type {type(table).__name__}")
    n = len(next(iter(cols.values()))) if cols else 0
    lists = {
        k: (v.tolist() if isinstance(v, np.ndarray) else list(v))
        for k, v in cols.items()
        if hasattr(v, "__len__") and not isinstance(v, str) and len(v) == n
    }
    return [_alias({k: lists[k][i] for k in lists}) for i in range(n)]


_ALIASES = {"registers_per_thread": "registers", "occupancy_pct": "occupancy"}


def _alias(row: dict[str, Any]) -> dict[str, Any]:
    # kernel_table speaks ns (KernelStats); the table shows µs.
    for key in ("total", "mean", "min", "max"):
        if f"{key}_ns" in row and f"{key}_us" not in row:
            row[f"{key}_us"] = row[f"{key}_ns"] / 1000.0
    for old, new in _ALIASES.items():
        if old in row and new not in row:
            row[new] = row[old]
    return row
