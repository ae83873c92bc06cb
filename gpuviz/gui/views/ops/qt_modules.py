"""The Modules view: the ``nn.Module`` tree with forward, backward and other device time and share,
and its icicle chart.

It shows :func:`gpuviz.analysis.breakdown.breakdown`'s ``module`` table (backward kernels
counted in the module whose forward made them), with the time outside any module (optimizer,
loss, ``zero_grad``) under one "(outside modules)" node. "Show on Timeline" (or a double click)
asks for the kernels of the selected module and its sub-modules; "What if 2× faster?"
(:class:`~gpuviz.gui.views.ops.qt_whatif.QtWhatIf`) predicts the step with it twice as fast.

Given the roofline figures (:meth:`QtModulesView.set_hardware`), it also shows each module's
FLOPs, achieved TFLOP/s and MFU, as ``gpuviz breakdown --by module`` does
(:func:`gpuviz.analysis.module_flops.annotate_modules`); "—" where they are not known. A click
on a header sorts each node's children by that column (numbers as numbers, largest first on
the first click); unknown figures and the "(outside modules)" group stay at the bottom.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gpuviz.display import terminal_safe, tooltip_html
from gpuviz.gui.qt_text import set_plain
from gpuviz.gui.views.ops.breakdown_model import (
    NO_STACKS,
    Breakdowns,
    TreeNode,
    module_tree,
    node_flops_of,
    row_kernels,
    tree_total_ns,
)
from gpuviz.gui.views.ops.qt_breakdown_table import format_flops, format_us, message_widget
from gpuviz.gui.views.ops.qt_icicle import QtIcicle
from gpuviz.gui.views.ops.qt_whatif import QtWhatIf

NODE_ROLE = Qt.ItemDataRole.UserRole
UNKNOWN = "—"
"""What a FLOPs, TFLOP/s or MFU cell shows where the figure is not known (never a 0)."""
FLOP_KEYS = ("flops", "mfu")
"""What :func:`~gpuviz.analysis.module_flops.annotate_modules` adds to a module row."""


@dataclass(frozen=True)
class ModuleColumn:
    """One column of the tree: its title, the node's value (its sort key; None: not known),
    the text of a value, and the header's tooltip."""

    title: str
    value: Callable[[TreeNode], Any]
    text: Callable[[Any], str]
    tip: str = ""


def _num(fmt: Callable[[Any], str]) -> Callable[[Any], str]:
    return lambda v: UNKNOWN if v is None else fmt(v)


COLUMNS = (
    ModuleColumn("Module", lambda n: n.label.casefold(), str),
    ModuleColumn("Device (µs)", lambda n: n.device_ns, format_us, "forward, backward and other"),
    ModuleColumn("Share", lambda n: n.device_ns, str, "device time, as a share of the tree's"),
    ModuleColumn("Forward (µs)", lambda n: n.forward_ns, format_us),
    ModuleColumn(
        "Backward (µs)", lambda n: n.backward_ns, format_us, "backward kernels of its forward ops"
    ),
    ModuleColumn(
        "Other (µs)",
        lambda n: n.other_ns,
        format_us,
        "outside every module's forward and backward: optimizer step, zero_grad, a loss "
        "computed outside a module, copies",
    ),
    ModuleColumn("Calls", lambda n: n.calls, lambda v: f"{v:,}"),
    ModuleColumn(
        "CPU (µs)",
        lambda n: n.cpu_ns,
        _num(format_us),
        f"host time of its calls; {UNKNOWN} for a compiled model's modules (no frames of theirs)",
    ),
    ModuleColumn(
        "FLOPs",
        lambda n: n.flops,
        _num(format_flops),
        "counted ops (GEMMs, convolutions, attention), forward and backward, sub-modules in; "
        f"{UNKNOWN} where none were counted (no shapes recorded, or only uncounted ops)",
    ),
    ModuleColumn(
        "TFLOP/s",
        lambda n: n.tflops,
        _num(lambda v: f"{v:,.1f}"),
        "achieved: its FLOPs over its device time",
    ),
    ModuleColumn(
        "MFU",
        lambda n: n.mfu,
        _num(lambda v: f"{100 * v:.1f} %"),
        "its FLOPs over its device time at the dense peak of the precision doing most of them",
    ),
)
HEADERS = tuple(c.title for c in COLUMNS)
FLOPS_COLUMN = HEADERS.index("FLOPs")
"""The first of the columns :meth:`QtModulesView.set_hardware` changes (FLOPs, TFLOP/s, MFU)."""
#: The first sort: device time, largest first.
DEFAULT_SORT = (1, Qt.SortOrder.DescendingOrder)


class ModuleItem(QTreeWidgetItem):
    """A tree row that sorts by its node's value in the sort column, not by its text.

    The "(outside modules)" group and unknown values ("—") come last in either order.
    """

    def __lt__(self, other: QTreeWidgetItem) -> bool:
        tree = self.treeWidget()
        col = tree.sortColumn() if tree is not None else 0
        a, b = self.data(0, NODE_ROLE), other.data(0, NODE_ROLE)
        if tree is None or a is None or b is None or not 0 <= col < len(COLUMNS):
            # (super().__lt__ would come back here: PySide dispatches it to this override.)
            return self.text(max(col, 0)) < other.text(max(col, 0))
        # Qt sorts descending by asking other < self: "last" depends on the order.
        descending = tree.header().sortIndicatorOrder() == Qt.SortOrder.DescendingOrder
        a_last, b_last = a.kind == "group", b.kind == "group"
        if not (a_last or b_last):
            va, vb = COLUMNS[col].value(a), COLUMNS[col].value(b)
            a_last, b_last = va is None, vb is None
            if not (a_last or b_last):
                return bool(va < vb)
        if a_last == b_last:
            return False
        return descending if a_last else not descending


class QtModulesView(QWidget):
    """The module tree and its icicle.

    Signals
    -------
    showKernels(object)
        The slice rows (int64 array) of the selected module's kernels.

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
        self.roots: list[TreeNode] = []
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(list(HEADERS))
        head = self.tree.headerItem()
        for i, col in enumerate(COLUMNS):
            if col.tip:
                head.setToolTip(i, col.tip)
            # A first click on a figure's header puts the largest first; on the name, A to Z.
            first = Qt.SortOrder.AscendingOrder if i == 0 else Qt.SortOrder.DescendingOrder
            head.setData(i, Qt.ItemDataRole.InitialSortOrderRole, first)
        self.tree.setAlternatingRowColors(True)
        self.tree.setUniformRowHeights(True)
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for i in range(1, len(HEADERS)):
            header.setSectionResizeMode(i, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.setSortingEnabled(True)
        self.tree.sortByColumn(*DEFAULT_SORT)
        self.tree.itemSelectionChanged.connect(self._on_selection_changed)
        self.tree.itemDoubleClicked.connect(lambda *_: self.show_selected_on_timeline())
        self.icicle = QtIcicle()
        self.icicle.nodeClicked.connect(self._on_icicle_clicked)
        self.show_button = QPushButton("Show on Timeline")
        self.show_button.setEnabled(False)
        self.show_button.clicked.connect(self.show_selected_on_timeline)
        self.total_label = QLabel()

        top = QHBoxLayout()
        top.addWidget(self.total_label, 1)
        top.addWidget(self.show_button)
        body = QWidget()
        body_layout = QVBoxLayout(body)
        body_layout.setContentsMargins(0, 0, 0, 0)
        body_layout.addLayout(top)
        self.whatif = QtWhatIf()
        self.whatif.showRows.connect(self.showKernels.emit)
        body_layout.addWidget(self.whatif)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.tree)
        split.addWidget(self.icicle)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        body_layout.addWidget(split, 1)
        self.message = message_widget("Attributing kernels to modules…")
        self.stack = QStackedWidget()
        self.stack.addWidget(self.message)
        self.stack.addWidget(body)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.stack)
        self._items: dict[int, QTreeWidgetItem] = {}
        if breakdowns is not None:
            self.set_breakdowns(breakdowns)

    def set_breakdowns(self, breakdowns: Breakdowns | None) -> None:
        """Show the module table of ``breakdowns`` (or say why there is none)."""
        self.breakdowns = breakdowns
        bd = breakdowns
        if bd is None:
            return
        self._annotate()
        if bd.module is None:
            err = bd.errors.get("module", "")
            text = f"The module table could not be computed: {err}" if err else NO_STACKS
            if not bd.has_stacks and not err:
                text = NO_STACKS
            set_plain(self.message, text)
            self.stack.setCurrentIndex(0)
            return
        self.roots = module_tree(bd.module)
        total = tree_total_ns(self.roots)
        # Filled unsorted (each insertion would sort again), then sorted once by the column
        # the header shows.
        self.tree.setSortingEnabled(False)
        self.tree.clear()
        self._items = {}
        for node in self.roots:
            self.tree.addTopLevelItem(self._item(node, total))
        self.tree.setSortingEnabled(True)
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            if item.data(0, NODE_ROLE).kind != "group":
                self.tree.expandItem(item)
                for j in range(item.childCount()):
                    self.tree.expandItem(item.child(j))
        self.icicle.set_tree(self.roots)
        modules = sum(1 for r in bd.module.rows if r.kind == "module")
        self.total_label.setText(
            f"{modules} modules · device time {format_us(total)} µs "
            f"(forward {format_us(sum(n.forward_ns for n in self.roots))}, "
            f"backward {format_us(sum(n.backward_ns for n in self.roots))})"
        )
        self.stack.setCurrentIndex(1)

    def set_hardware(self, hardware: Any) -> None:
        """The roofline figures (:class:`~gpuviz.analysis.hardware.Hardware`) behind the FLOPs,
        TFLOP/s and MFU columns (None: those show "—"); the tree keeps its state."""
        self.hardware = hardware
        table = self._annotate()
        if table is not None:
            for node in self.roots:
                node_flops_of(node, table)
            for item in self._items.values():
                self._set_flop_texts(item)
            self.tree.sortByColumn(self.tree.sortColumn(), self.tree.header().sortIndicatorOrder())

    def _annotate(self) -> Any:
        """Add (or, without figures, take away) the module rows' FLOPs and MFU; the module
        table, None where there is none."""
        bd = self.breakdowns
        if bd is None or bd.module is None:
            return None
        if self.hardware is None or bd.attribution is None:
            for row in bd.module.rows:
                for k in FLOP_KEYS:
                    row.extra.pop(k, None)
            return bd.module
        from gpuviz.analysis.module_flops import annotate_modules

        annotate_modules(bd.module, self.hardware, bd.attribution)
        return bd.module

    def _set_flop_texts(self, item: QTreeWidgetItem) -> None:
        node = item.data(0, NODE_ROLE)
        for c in range(FLOPS_COLUMN, len(COLUMNS)):
            item.setText(c, COLUMNS[c].text(COLUMNS[c].value(node)))

    def _item(self, node: TreeNode, total: int) -> QTreeWidgetItem:
        share = node.device_ns / total if total else 0.0
        texts = [c.text(c.value(node)) for c in COLUMNS]
        texts[0] = terminal_safe(node.label, one_line=True)
        texts[2] = f"{100 * share:.1f} %"
        item = ModuleItem(texts)
        item.setData(0, NODE_ROLE, node)
        path = (
            self.breakdowns.module.rows[node.row].key
            if node.row >= 0 and self.breakdowns
            else node.label
        )
        item.setToolTip(0, tooltip_html(path))
        for c in range(1, len(HEADERS)):
            item.setTextAlignment(c, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if node.kind != "module":
            font = item.font(0)
            font.setItalic(True)
            item.setFont(0, font)
        self._items[id(node)] = item
        for child in node.children:
            item.addChild(self._item(child, total))
        return item

    # -- state ----------------------------------------------------------------------------------
    def paths(self) -> list[str]:
        """Every module path in the tree, depth first (the outside group left out)."""
        out: list[str] = []

        def walk(item: QTreeWidgetItem, prefix: str) -> None:
            node = item.data(0, NODE_ROLE)
            if node.kind != "module":
                return
            path = f"{prefix}.{node.label}" if prefix else node.label
            out.append(path)
            for j in range(item.childCount()):
                walk(item.child(j), path)

        for i in range(self.tree.topLevelItemCount()):
            walk(self.tree.topLevelItem(i), "")
        return out

    def select_path(self, path: str) -> bool:
        """Select the module ``path`` (or an outside row's key) in the tree."""
        bd = self.breakdowns
        if bd is None or bd.module is None:
            return False
        for i, r in enumerate(bd.module.rows):
            if r.key == path:
                return self._select_node(lambda n, i=i: n.row == i)
        return False

    def _select_node(self, test: Any) -> bool:
        for item in self._items.values():
            node = item.data(0, NODE_ROLE)
            if test(node):
                self.tree.setCurrentItem(item)
                self.tree.scrollToItem(item)
                return True
        return False

    def selected_node(self) -> TreeNode | None:
        """The selected node, or None."""
        items = self.tree.selectedItems()
        return items[0].data(0, NODE_ROLE) if items else None

    def selected_kernels(self) -> np.ndarray:
        """The slice rows of the kernels of the selected node (and the nodes under it)."""
        node, bd = self.selected_node(), self.breakdowns
        if node is None or bd is None:
            return np.empty(0, dtype=np.int64)
        if node.row >= 0:
            return row_kernels(bd, "module", node.row)
        parts = [row_kernels(bd, "module", c.row) for c in node.children]
        return np.sort(np.concatenate(parts)) if parts else np.empty(0, dtype=np.int64)

    def show_selected_on_timeline(self) -> None:
        """Ask for the selected module's kernels on the Timeline (none: nothing happens)."""
        if self.show_button.isEnabled():
            self.showKernels.emit(self.selected_kernels())

    def _on_selection_changed(self) -> None:
        node = self.selected_node()
        self.show_button.setEnabled(node is not None and node.device_ns > 0)
        bd = self.breakdowns
        if node is not None and node.row >= 0 and bd is not None and bd.module is not None:
            # The module's forward by its frames, its backward by the kernels attributed to it.
            key = bd.module.rows[node.row].key
            self.whatif.set_target(bd.trace, key, self.selected_kernels())
        else:
            self.whatif.set_target(None, None)
        self.icicle.selected = node
        self.icicle.update()

    def _on_icicle_clicked(self, node: TreeNode) -> None:
        self._select_node(lambda n: n is node)
