"""The Source view: the lines of Python that launched the GPU work, ranked by device time; a
click shows the code around the line.

It shows :func:`gpuviz.analysis.breakdown.breakdown`'s ``line`` table (each kernel counted at
the innermost line of the model's or user's code: self time ranks the lines). The file is read
as text where it exists on this machine (it is never run nor imported) and shown as plain text,
the line highlighted, each line's device self time in the margin. Where the function defined
at the line is not the one the trace recorded (another version of the file), it says so and
highlights nothing (:mod:`gpuviz.gui.views.ops.source_match`).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontDatabase, QTextCursor, QTextFormat
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from gpuviz.display import terminal_safe
from gpuviz.gui.qt_text import set_plain
from gpuviz.gui.views.ops.breakdown_model import (
    NO_STACKS,
    Breakdowns,
    SourceExcerpt,
    source_excerpt,
    split_location,
)
from gpuviz.gui.views.ops.qt_breakdown_table import (
    ROW_ROLE,
    Column,
    QtBreakdownTableModel,
    SelectedKernels,
    format_us,
    make_table,
    message_widget,
    shown_keys,
)

COLUMNS = (
    Column("Line", "key", "text", "file:line, as the Python stack recorded it"),
    Column("Function", "function", "text", "the function the Python stack recorded at the line"),
    Column("Device self (µs)", "device_self_ns", "us", "kernels whose innermost line this is"),
    Column("Device total (µs)", "device_total_ns", "us", "with the lines it called"),
    Column("Forward (µs)", "forward_device_ns", "us"),
    Column("Backward (µs)", "backward_device_ns", "us", "backward of the ops this line ran"),
    Column(
        "Other (µs)",
        "other_device_ns",
        "us",
        "outside every module's forward and backward: optimizer step, loss, copies",
    ),
    Column("Calls", "calls", "int"),
    Column("CPU total (µs)", "cpu_total_ns", "us"),
)
SELF_COLUMN = 2
"""Device self time: the first sort."""
HIGHLIGHT = QColor("#ffe9a8")
CONTEXT_LINES = 12
TIME_HEAD = "µs"


def line_times(rows: list[Any], path: str) -> dict[int, int]:
    """Line number -> device self time (ns) of the rows of file ``path`` that have some."""
    out: dict[int, int] = {}
    for r in rows:
        p, n = split_location(r.key)
        if p == path and n > 0 and r.device_self_ns > 0:
            out[n] = out.get(n, 0) + int(r.device_self_ns)
    return out


class QtSourceView(SelectedKernels, QWidget):
    """The source lines table and the code of the selected line.

    Signals
    -------
    showKernels(object)
        The slice rows (int64 array) of the selected line's kernels.

    Parameters
    ----------
    breakdowns : Breakdowns or None
        None while they are being computed (:meth:`set_breakdowns` fills the view later).
    roots : tuple of str
        Folders to look for recorded files under (see :func:`find_source`).
    """

    showKernels = Signal(object)

    def __init__(
        self,
        breakdowns: Breakdowns | None = None,
        roots: tuple[str, ...] = (),
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.breakdowns: Breakdowns | None = None
        # Folders a recorded path is looked for under (the trace's, and those the user adds).
        self.roots = tuple(roots)
        self.excerpt: SourceExcerpt | None = None
        self._line_times: dict[int, int] = {}
        self.model = QtBreakdownTableModel(COLUMNS, self)
        self.table, self.proxy = make_table(self.model, SELF_COLUMN)
        self.table.selectionModel().selectionChanged.connect(self._on_selection_changed)
        self.table.doubleClicked.connect(lambda *_: self.show_selected_on_timeline())
        self.filter_edit = QLineEdit()
        self.filter_edit.setPlaceholderText("Filter lines by file…")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.textChanged.connect(self.proxy.setFilterFixedString)
        self.show_button = QPushButton("Show on Timeline")
        self.show_button.setEnabled(False)
        self.show_button.clicked.connect(self.show_selected_on_timeline)
        self.folder_button = QPushButton("Source folder…")
        self.folder_button.setToolTip(
            "look for the recorded files in a folder of this machine (your checkout)"
        )
        self.folder_button.clicked.connect(self._on_pick_folder)
        self.file_label = QLabel()
        self.file_label.setTextFormat(Qt.TextFormat.PlainText)
        self.code = QPlainTextEdit()
        self.code.setReadOnly(True)
        self.code.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.code.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))

        top = QHBoxLayout()
        top.addWidget(self.filter_edit, 1)
        top.addWidget(self.folder_button)
        top.addWidget(self.show_button)
        code_box = QWidget()
        code_layout = QVBoxLayout(code_box)
        code_layout.setContentsMargins(0, 0, 0, 0)
        code_layout.addWidget(self.file_label)
        code_layout.addWidget(self.code, 1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(code_box)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        body = QWidget()
        body_layout = QVBoxLayout(body)
        body_layout.setContentsMargins(0, 0, 0, 0)
        body_layout.addLayout(top)
        body_layout.addWidget(split, 1)
        self.message = message_widget("Attributing kernels to source lines…")
        self.stack = QStackedWidget()
        self.stack.addWidget(self.message)
        self.stack.addWidget(body)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.stack)
        self._show_excerpt(None)
        if breakdowns is not None:
            self.set_breakdowns(breakdowns)

    def set_breakdowns(self, breakdowns: Breakdowns | None) -> None:
        """Show the line table of ``breakdowns`` (or say why there is none)."""
        self.breakdowns = breakdowns
        bd = breakdowns
        if bd is None:
            return
        if bd.line is None:
            err = bd.errors.get("line", "")
            set_plain(
                self.message, f"The source lines could not be computed: {err}" if err else NO_STACKS
            )
            self.stack.setCurrentIndex(0)
            return
        att = bd.attribution
        total = int(att.gpu_dur_ns.sum()) if att is not None else 0
        self.model.set_rows(bd.line.rows, total)
        self.table.sortByColumn(SELF_COLUMN, Qt.SortOrder.DescendingOrder)
        self.stack.setCurrentIndex(1)
        if self.proxy.rowCount():
            self.table.selectRow(0)

    # -- state ----------------------------------------------------------------------------------
    def shown_keys(self) -> list[str]:
        """The keys of the rows shown, top to bottom."""
        return shown_keys(self.proxy)

    def select_key(self, key: str) -> bool:
        """Select the row of ``file:line`` ``key``."""
        for r in range(self.proxy.rowCount()):
            idx = self.proxy.index(r, 0)
            if self.model.rows[int(idx.data(ROW_ROLE))].key == key:
                self.table.selectRow(r)
                self.table.scrollTo(idx)
                return True
        return False

    def table_by(self) -> str:
        return "line"

    def code_text(self) -> str:
        """What the code pane shows."""
        return self.code.toPlainText()

    def highlighted_line(self) -> int:
        """The file's line number highlighted in the code pane, 0 for none."""
        sel = self.code.extraSelections()
        if not sel or self.excerpt is None or not self.excerpt.lines:
            return 0
        return self.excerpt.first + sel[0].cursor.blockNumber()

    def _on_selection_changed(self, *_: Any) -> None:
        i = self.selected_index()
        self.show_button.setEnabled(i >= 0 and self.model.rows[i].device_self_ns > 0)
        if i < 0 or self.breakdowns is None or self.breakdowns.line is None:
            self._show_excerpt(None)
            return
        row = self.breakdowns.line.rows[i]
        path, line = split_location(row.key)
        func = str(row.extra.get("function") or "")
        self._line_times = line_times(self.breakdowns.line.rows, path)
        self._show_excerpt(source_excerpt(path, line, CONTEXT_LINES, self.roots, func))

    def add_root(self, folder: str) -> None:
        """Look for recorded files under ``folder`` too, and show the selected line again."""
        if folder and folder not in self.roots:
            self.roots = (folder, *self.roots)
        self._on_selection_changed()

    def _on_pick_folder(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        folder = QFileDialog.getExistingDirectory(self, "Folder of the recorded source files")
        if folder:
            self.add_root(folder)

    def _show_excerpt(self, ex: SourceExcerpt | None) -> None:
        self.excerpt = ex
        self.code.setExtraSelections([])
        if ex is None:
            set_plain(self.file_label, "Select a line to see its code.")
            self.code.setPlainText("")
            return
        if ex.error:
            set_plain(self.file_label, f"{ex.path}, line {ex.line}: {ex.error}")
            self.code.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)  # a sentence
            self.code.setPlainText(
                "The code is shown where the file exists on this machine: at the path the "
                "trace recorded, relative to the folder gpuviz was started in, to the trace's "
                "folder or to this Python's sys.path (installed packages), or under a folder "
                'chosen with "Source folder…".'
            )
            return
        self.code.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)  # code keeps its lines
        width = len(str(ex.first + len(ex.lines)))
        times = self._line_times
        # Each line's device self time (its kernels), as the table's "Device self" column.
        tw = max([len(TIME_HEAD), *(len(format_us(t)) for t in times.values())])
        text = "\n".join(
            f"{format_us(times[n]) if n in times else '':>{tw}} │ {n:>{width}}  "
            f"{terminal_safe(code)}"
            for n, code in enumerate(ex.lines, ex.first)
        )
        self.code.setPlainText(text)
        if ex.mismatch:
            # The line holds other code than was recorded: highlighting it would mislead.
            set_plain(self.file_label, f"{ex.path}, line {ex.line}: {ex.mismatch}")
            self.file_label.setStyleSheet("color: #a40000;")
            return
        self.file_label.setStyleSheet("")
        set_plain(
            self.file_label, f"{ex.path}, line {ex.line} ({TIME_HEAD}: device self time per line)"
        )
        block = self.code.document().findBlockByNumber(ex.line - ex.first)
        sel = QTextEdit.ExtraSelection()
        sel.format.setBackground(HIGHLIGHT)
        sel.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
        sel.format.setFontWeight(QFont.Weight.Bold)
        sel.cursor = QTextCursor(block)
        self.code.setExtraSelections([sel])
        self.code.setTextCursor(QTextCursor(block))
        self.code.centerCursor()
