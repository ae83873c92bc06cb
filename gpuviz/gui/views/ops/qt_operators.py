"""The Operators view: PyTorch ops (and ``record_function`` ranges) with their host and device
time, grouped by name or by name and input shapes, filtered, and the top 15 by device self time
as bars (self: a wrapper's total would count its children's kernels twice).

It shows :func:`gpuviz.analysis.breakdown.breakdown`'s ``op`` and ``op-shape`` tables; "Show
on Timeline" (or a double click) asks for the kernels of the selected op (:func:`row_kernels`);
"What if 2× faster?" (:class:`~gpuviz.gui.views.ops.qt_whatif.QtWhatIf`) predicts the step
with the selected op twice as fast.
"""

from __future__ import annotations

import re
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from gpuviz.gui.qt_text import set_plain
from gpuviz.gui.views.ops.breakdown_model import Breakdowns
from gpuviz.gui.views.ops.qt_bar_list import QtBarList
from gpuviz.gui.views.ops.qt_breakdown_table import (
    KEY_ROLE,
    ROW_ROLE,
    Column,
    ElideRightDelegate,
    QtBreakdownTableModel,
    SelectedKernels,
    format_us,
    make_table,
    message_widget,
    select_only,
    shown_keys,
)
from gpuviz.gui.views.ops.qt_whatif import QtWhatIf

TOP_BARS = 15
# Step markers hold the whole step: as a bar they would only dwarf the ops.
_STEP = re.compile(r"^(ProfilerStep\*|ProfilerStep#\d+|gpuviz/.+#\d+)$")

_COMMON = (
    Column("Calls", "calls", "int"),
    Column(
        "Device total (µs)", "device_total_ns", "us", "kernels the op and its children launched"
    ),
    Column("Device self (µs)", "device_self_ns", "us", "kernels the op launched itself"),
    Column("Share", "device_total_ns", "share", "device total, as a share of all kernel time"),
    Column("CPU total (µs)", "cpu_total_ns", "us"),
    Column("CPU self (µs)", "cpu_self_ns", "us", "host time minus that of its child ops"),
    Column("FLOPs", "flops", "flops", "from the input shapes (or Kineto's flops)"),
)
COLUMNS = (Column("Operator", "key", "text"), *_COMMON)
SHAPE_COLUMNS = (
    Column("Operator", "key", "text"),
    Column("Input shapes", "input_shapes", "text", "Kineto's Input Dims"),
    *_COMMON,
    Column("TFLOP/s", "tflops", "float", "achieved: FLOPs over the device time of its kernels"),
    Column(
        "FLOP/B", "intensity", "float", "arithmetic intensity: FLOPs over bytes (a lower bound)"
    ),
    Column("Bound", "bound", "text", "compute or memory: its intensity against the ridge point"),
)
ROOFLINE_KEYS = ("flops", "bytes", "tflops", "intensity", "bound", "roof_share", "precision")
"""What :func:`gpuviz.analysis.hardware.annotate_breakdown` adds to an op-shape row."""


class QtOperatorsView(SelectedKernels, QWidget):
    """The op table, a group-by-shape toggle, a filter and the top ops as bars.

    Signals
    -------
    showKernels(object)
        The slice rows (int64 array) of the selected op's kernels: outline them on the Timeline.

    Parameters
    ----------
    breakdowns : Breakdowns or None
        None while they are being computed (:meth:`set_breakdowns` fills the view later).
    """

    showKernels = Signal(object)

    def __init__(self, breakdowns: Breakdowns | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.breakdowns: Breakdowns | None = None
        self.hardware: Any = None
        self.model = QtBreakdownTableModel(COLUMNS, self)
        self.table, self.proxy = make_table(self.model, 2)
        self.table.doubleClicked.connect(lambda *_: self.show_selected_on_timeline())
        self.table.selectionModel().selectionChanged.connect(self._on_selection_changed)
        self._shape_delegate = ElideRightDelegate(self.table)

        self.filter_edit = QLineEdit()
        self.filter_edit.setPlaceholderText("Filter ops by name…")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.textChanged.connect(self._on_filter_changed)
        self.shape_box = QCheckBox("Group by input shape")
        self.shape_box.setToolTip("one row per op and input shapes (recorded with record_shapes)")
        self.shape_box.toggled.connect(self._on_shape_toggled)
        self.count_label = QLabel()
        self.show_button = QPushButton("Show on Timeline")
        self.show_button.setEnabled(False)
        self.show_button.clicked.connect(self.show_selected_on_timeline)
        self.bars = QtBarList(f"Top {TOP_BARS} ops by device self time (kernels they launched)")
        self.bars.barClicked.connect(self._on_bar_clicked)

        top = QHBoxLayout()
        top.addWidget(self.filter_edit, 1)
        top.addWidget(self.shape_box)
        top.addWidget(self.count_label)
        top.addWidget(self.show_button)
        body = QWidget()
        body_layout = QVBoxLayout(body)
        body_layout.setContentsMargins(0, 0, 0, 0)
        body_layout.addLayout(top)
        self.whatif = QtWhatIf()
        self.whatif.showRows.connect(self.showKernels.emit)
        body_layout.addWidget(self.whatif)
        self.split = QSplitter(Qt.Orientation.Vertical)
        self.split.addWidget(self.table)
        self.split.addWidget(self.bars)
        self.split.setStretchFactor(0, 3)
        self.split.setStretchFactor(1, 2)
        body_layout.addWidget(self.split, 1)
        self.message = message_widget("Attributing kernels to ops…")
        self.stack = QStackedWidget()
        self.stack.addWidget(self.message)
        self.stack.addWidget(body)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.stack)
        self._bar_rows: list[int] = []
        if breakdowns is not None:
            self.set_breakdowns(breakdowns)

    # -- state ----------------------------------------------------------------------------------
    def by(self) -> str:
        """The table shown: ``"op"`` or ``"op-shape"``."""
        return "op-shape" if self.shape_box.isChecked() else "op"

    def set_breakdowns(self, breakdowns: Breakdowns | None) -> None:
        """Show the op tables of ``breakdowns`` (or why there are none)."""
        self.breakdowns = breakdowns
        self._annotate()
        self._update_table()

    def set_hardware(self, hardware: Any) -> None:
        """The roofline figures (:class:`~gpuviz.analysis.hardware.Hardware`) behind the
        by-shape table's TFLOP/s, FLOP/B and Bound columns (None: those stay empty)."""
        self.hardware = hardware
        self._annotate()
        if self.breakdowns is not None:
            self._update_table()

    def _annotate(self) -> None:
        table = self.breakdowns.op_shape if self.breakdowns is not None else None
        if table is None:
            return
        if self.hardware is None:
            for row in table.rows:
                for k in ROOFLINE_KEYS:
                    row.extra.pop(k, None)
            return
        from gpuviz.analysis.hardware import annotate_breakdown

        annotate_breakdown(table, self.hardware)

    def _update_table(self) -> None:
        bd = self.breakdowns
        table = bd.table(self.by()) if bd is not None else None
        if table is None:
            err = bd.errors.get(self.by(), "") if bd is not None else ""
            set_plain(self.message, f"The op table could not be computed: {err}" if err else "")
            if bd is not None:
                self.stack.setCurrentIndex(0)
            return
        columns = SHAPE_COLUMNS if self.by() == "op-shape" else COLUMNS
        header = self.table.horizontalHeader()
        sort_col = header.sortIndicatorSection()
        sort_attr = (
            self.model.columns[sort_col].attr if 0 <= sort_col < len(self.model.columns) else ""
        )
        order = header.sortIndicatorOrder()
        self.model.columns = columns
        # The share's denominator: all kernel time of the trace, as in the Kernels view.
        att = bd.attribution if bd is not None else None
        self.model.set_rows(table.rows, int(att.gpu_dur_ns.sum()) if att is not None else 0)
        new_col = next(
            (i for i, c in enumerate(columns) if c.attr == sort_attr and c.fmt != "share"), 2
        )
        self.table.sortByColumn(new_col, order)
        # Input shapes cut at their end, names in the middle (the table's default).
        self.table.setItemDelegateForColumn(
            1, self._shape_delegate if self.by() == "op-shape" else None
        )
        self.stack.setCurrentIndex(1)
        self._update_count()
        self._update_bars()

    def _on_filter_changed(self, text: str) -> None:
        self.proxy.setFilterFixedString(text)
        self._update_count()
        self._update_bars()

    def _on_shape_toggled(self, _: bool) -> None:
        self._update_table()

    def _update_count(self) -> None:
        shown, total = self.proxy.rowCount(), self.model.rowCount()
        what = "op+shape rows" if self.by() == "op-shape" else "ops"
        self.count_label.setText(
            f"{shown} of {total} {what}" if shown != total else f"{total} {what}"
        )

    def _update_bars(self) -> None:
        rows = [int(self.proxy.index(r, 0).data(ROW_ROLE)) for r in range(self.proxy.rowCount())]
        rows = [i for i in rows if not _STEP.match(self.model.rows[i].key)]
        # Self time: a wrapper's total holds its children's kernels, so total bars counted
        # them twice (Optimizer.step beside its _foreach ops, evaluate_function beside mm).
        rows.sort(key=lambda i: -self.model.rows[i].device_self_ns)
        rows = [i for i in rows if self.model.rows[i].device_self_ns > 0][:TOP_BARS]
        self._bar_rows = rows
        items = []
        for i in rows:
            r = self.model.rows[i]
            label = r.key if self.by() == "op" else f"{r.key} {_shape_suffix(r)}"
            items.append((label, float(r.device_self_ns), f"{format_us(r.device_self_ns)} µs"))
        self.bars.set_items(items)

    def shown_keys(self) -> list[str]:
        """The keys of the rows shown, top to bottom."""
        return shown_keys(self.proxy)

    def bar_keys(self) -> list[str]:
        """The keys of the bars, top to bottom."""
        return [self.model.rows[i].key for i in self._bar_rows]

    def select_row(self, index: int) -> bool:
        """Select the row of ``Breakdown.rows[index]`` (clearing a filter that hides it)."""
        for attempt in range(2):
            for r in range(self.proxy.rowCount()):
                idx = self.proxy.index(r, 0)
                if idx.data(ROW_ROLE) == index:
                    select_only(self.table, idx)
                    return True
            if attempt == 0 and self.filter_edit.text():
                self.filter_edit.clear()
        return False

    def select_key(self, key: str) -> bool:
        """Select the first row whose key is ``key``."""
        for r in range(self.proxy.rowCount()):
            idx = self.proxy.index(r, 0)
            if idx.data(KEY_ROLE) == key:
                return self.select_row(int(idx.data(ROW_ROLE)))
        return False

    def table_by(self) -> str:
        return self.by()

    def _on_selection_changed(self, *_: Any) -> None:
        # An op that launched nothing has nothing to show (its button says so).
        i = self.selected_index()
        has = i >= 0 and self.model.rows[i].device_total_ns > 0
        self.show_button.setEnabled(has)
        self.show_button.setToolTip("" if has or i < 0 else "this op launched no GPU work")
        # By name only: an op+shape row's name is every shape's.
        name = self.model.rows[i].key if i >= 0 and self.by() == "op" else None
        self.whatif.set_target(self.breakdowns.trace if self.breakdowns else None, name)

    def _on_bar_clicked(self, i: int) -> None:
        if 0 <= i < len(self._bar_rows):
            self.select_row(self._bar_rows[i])


def _shape_suffix(row: Any) -> str:
    from gpuviz.gui.views.ops.qt_breakdown_table import shapes_text

    text = shapes_text(row)
    return text if len(text) <= 60 else text[:59] + "…"
