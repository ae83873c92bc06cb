"""What the Operators, Modules and Source views show, from the attribution's tables. Qt-free.

:func:`compute_breakdowns` runs the analysis (:mod:`gpuviz.analysis.attribution` and its
tables, each a :class:`~gpuviz.analysis.breakdown_table.Breakdown`) once per trace, off the
GUI thread. The rest turns those tables into what the views draw: the kernels a row stands for
(:func:`row_kernels`, for "Show on Timeline"), a kernel's op, module and line (:func:`kernel_context`,
for the Timeline's details), the module tree (:func:`module_tree`), its icicle
(:func:`icicle_cells`) and the code around a source line (:func:`source_excerpt`).

``Breakdown.kernel_row`` gives each kernel the row it counts towards as *self* time. A row's
device *total* also holds its children's kernels (``aten::linear``'s GEMM is launched by its
child ``aten::addmm``; a module's by its sub-modules): :func:`row_kernels` adds them, so that
the kernels outlined are those the row's device total counts.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from gpuviz.gui.views.ops.source_match import line_mismatch
from gpuviz.trace.model import Trace

I64 = npt.NDArray[np.int64]

NO_STACKS = (
    "This trace has no Python stacks, so there are no modules or source lines to show.\n"
    "Record with `gpuviz profile` (stacks are on unless --no-stack), or torch.profiler's "
    "with_stack=True."
)
"""What the Modules and Source views say for a trace recorded without stacks."""

OUTSIDE_MODULES = "(outside modules)"
"""The tree's group of the rows outside any module (optimizer, loss, ``zero_grad``...)."""

#: The tables the views show, in the order they are computed.
TABLES = ("op", "op-shape", "module", "line")

#: The largest source file read to show a line (a larger one is not a user's source file).
MAX_SOURCE_BYTES = 8 * 1024 * 1024


@dataclass
class Breakdowns:
    """The tables of one trace's Operators, Modules and Source views.

    Attributes
    ----------
    trace : Trace
    op, op_shape, module, line : Breakdown or None
        ``--by op``, ``op-shape``, ``module`` and ``line``; None where not computed (no stacks
        for modules and lines) or failed (see ``errors``).
    has_stacks : bool
        Whether the trace has Python frames (``with_stack=True``).
    errors : dict of str to str
        Table name -> one-line message.
    attribution : object or None
        The :class:`~gpuviz.analysis.attribution.Attribution` the tables came from.
    """

    trace: Trace
    op: Any = None
    op_shape: Any = None
    module: Any = None
    line: Any = None
    has_stacks: bool = False
    errors: dict[str, str] = field(default_factory=dict)
    attribution: Any = None
    _cache: dict[Any, Any] = field(default_factory=dict, repr=False)

    def table(self, by: str) -> Any:
        """The table of ``by`` (``"op"``, ``"op-shape"``, ``"module"``, ``"line"``)."""
        return getattr(self, by.replace("-", "_"))


def compute_breakdowns(trace: Trace) -> Breakdowns:
    """The attribution of ``trace`` and its op, op-shape, module and line tables
    (:func:`gpuviz.analysis.breakdown.breakdown`), for a worker thread.

    A table that fails leaves its field None and its message in ``errors``; the others are
    still computed. A trace without stacks has no module and line tables (and no error).
    """
    from gpuviz.analysis.attribution import attribute
    from gpuviz.analysis.breakdown import breakdown

    out = Breakdowns(trace)
    try:
        att = attribute(trace)
    except Exception as exc:
        msg = f"{type(exc).__name__}: {exc}"
        out.errors = dict.fromkeys(TABLES, msg)
        return out
    out.attribution = att
    out.has_stacks = bool(att.has_stacks())
    for by in TABLES:
        if by in ("module", "line") and not out.has_stacks:
            continue
        try:
            setattr(out, by.replace("-", "_"), breakdown(trace, by))
        except Exception as exc:
            out.errors[by] = f"{type(exc).__name__}: {exc}"
    return out


# -- the kernels of a row ------------------------------------------------------------------------
def row_kernels(bd: Breakdowns, by: str, index: int) -> I64:
    """The slice rows of the kernels (copies, sets) that row ``index`` of table ``by`` counts in
    its device total, sorted by row number.

    Ops: the kernels launched inside any call of the op (its children's included). Modules:
    those of the module and of the modules under it. Other rows: their own.
    """
    table = bd.table(by)
    if table is None or not 0 <= index < len(table.rows):
        return np.empty(0, dtype=np.int64)
    key = (by, index)
    hit = bd._cache.get(key)
    if hit is not None:
        return hit  # type: ignore[no-any-return]
    row = table.rows[index]
    if by == "module" and row.kind == "module":
        under = [
            i
            for i, r in enumerate(table.rows)
            if r.kind == "module" and (r.key == row.key or r.key.startswith(row.key + "."))
        ]
        mask = np.isin(table.kernel_row, np.asarray(under, dtype=np.int64))
    elif by in ("op", "op-shape") and bd.attribution is not None:
        mask = _op_kernel_mask(bd.attribution, row, by == "op-shape")
        mask |= table.kernel_row == index
    else:
        mask = table.kernel_row == index
    out = np.sort(table.kernel_rows[mask]).astype(np.int64)
    bd._cache[key] = out
    return out


def _op_kernel_mask(att: Any, row: Any, by_shape: bool) -> npt.NDArray[np.bool_]:
    """Kernels launched under a call (at any depth) of the op of ``row``."""
    from gpuviz.analysis.op_table import op_display_name

    nodes = att.op_node_indices()
    names = att.trace.symbols.strings
    ids = np.unique(att.name[nodes])
    wanted = [i for i in ids.tolist() if op_display_name(names[i]) == row.key]
    calls = np.isin(att.name[nodes], np.asarray(wanted, dtype=np.int64))
    if by_shape:
        # The op-shape table groups by name and Input Dims (as key_averages does): compare
        # the dims of each distinct raw value once.
        dims = att.op_args(("input_dims",)).input_dims
        same: dict[Any, bool] = {}
        for j in np.flatnonzero(calls).tolist():
            raw = dims[j]
            hit = same.get(raw)
            if hit is None:
                hit = same[raw] = (_json(raw) or []) == (row.input_shapes or [])
            calls[j] = hit
    mark = np.zeros(len(att.forest), dtype=bool)
    mark[nodes[calls]] = True
    launch = att.gpu_launch
    ok = launch >= 0
    inside = np.zeros(len(launch), dtype=bool)
    inside[ok] = att.forest.nearest(mark)[launch[ok]] >= 0
    return inside


def _json(raw: Any) -> Any:
    if raw is None or raw == b"":
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return None


# -- a kernel's op, module and line --------------------------------------------------------------
@dataclass(frozen=True)
class KernelContext:
    """Where in the code a kernel came from: its op, module path and source line ("" if none)."""

    op: str = ""
    module: str = ""
    line: str = ""
    backward: bool = False
    outside: bool = False  # ``module`` names the op or range outside any module


def kernel_context(bd: Breakdowns, slice_row: int) -> KernelContext | None:
    """The op, module and line of a kernel (copy, set) slice, as
    :func:`gpuviz.analysis.origin.kernel_origins` finds them; None for other slices or before
    the attribution is there."""
    from gpuviz.analysis.origin import kernel_origins

    if bd.attribution is None:
        return None
    found = kernel_origins(bd.trace, [int(slice_row)])[0]
    if found is None:
        return None
    return KernelContext(
        found.op or "", found.module or "", found.line or "", found.backward, found.outside
    )


def kernel_details(bd: Breakdowns, slice_row: int) -> str:
    """A kernel's op, module and line as one line of rich text for the Timeline's details
    (names :func:`~gpuviz.display.html_safe`); "" for a slice that is no kernel."""
    from gpuviz.display import html_safe

    ctx = kernel_context(bd, slice_row)
    if ctx is None:
        return ""
    parts = [f"op <b>{html_safe(ctx.op, one_line=True)}</b>" if ctx.op else "no op"]
    if ctx.module and ctx.outside:
        # Not a module: the op or range outside every module that the kernel counts in.
        where = "" if ctx.module == ctx.op else f" (in {html_safe(ctx.module, one_line=True)})"
        parts.append(f"outside modules{where}")
    elif ctx.module:
        parts.append(f"module {html_safe(ctx.module, one_line=True)}")
    if ctx.line:
        parts.append(f"line {html_safe(ctx.line, one_line=True)}")
    if ctx.backward:
        parts.append("backward")
    return " · ".join(parts)


# -- the module tree -----------------------------------------------------------------------------
@dataclass
class TreeNode:
    """One node of the module tree: a module row, the outside group, or an outside row.

    ``flops`` and ``mfu`` are those :func:`gpuviz.analysis.module_flops.annotate_modules` put
    in the row's ``extra`` (the outside group: its rows' FLOPs summed, no MFU); None where not
    known, and ``flops`` None too where no FLOPs were counted (a count of 0 is no figure).
    """

    label: str
    row: int  # index in the module table, -1 for the outside group
    device_ns: int
    forward_ns: int
    backward_ns: int
    calls: int
    cpu_ns: int | None  # None: unknown (a compiled model's module: no frames of its own)
    children: list[TreeNode] = field(default_factory=list)
    kind: str = "module"
    flops: float | None = None
    mfu: float | None = None
    other_ns: int = 0  # outside every module's forward and backward (optimizer, loss...)

    @property
    def tflops(self) -> float | None:
        """Achieved TFLOP/s: the FLOPs over the node's device time; None where either is not
        known."""
        if self.flops is None or self.device_ns <= 0:
            return None
        return self.flops / self.device_ns / 1e3  # FLOP/ns = GFLOP/s


def node_flops_of(node: TreeNode, table: Any) -> None:
    """Set ``node.flops`` and ``node.mfu`` (and its children's) from the module table's rows."""
    for child in node.children:
        node_flops_of(child, table)
    if node.row >= 0:
        extra = table.rows[node.row].extra
        flops, got = extra.get("flops"), extra.get("mfu")
        node.flops = float(flops) if flops else None  # 0 counted FLOPs: unknown, not 0
        node.mfu = float(got) if got is not None and node.flops is not None else None
    else:
        known = [c.flops for c in node.children if c.flops is not None]
        node.flops = float(sum(known)) if known else None
        node.mfu = None  # its rows may run at different precisions: no one peak


def module_tree(table: Any) -> list[TreeNode]:
    """The module table as a tree: the top modules (their sub-modules under them, largest first),
    then one :data:`OUTSIDE_MODULES` node holding the rows outside any module. FLOPs and MFU
    are read from the rows' ``extra`` (:func:`node_flops_of`)."""
    nodes: dict[str, TreeNode] = {}
    roots: list[TreeNode] = []
    modules = [(i, r) for i, r in enumerate(table.rows) if r.kind == "module"]
    # Parents first: a path's parent is a prefix of it, so shorter paths come first.
    modules.sort(key=lambda ir: ir[1].key.count("."))
    for i, r in modules:
        node = _row_node(r, i, r.key.rsplit(".", 1)[-1])
        nodes[r.key] = node
        parent = _parent_of(r.key, nodes)
        (parent.children if parent is not None else roots).append(node)
    outside = [(i, r) for i, r in enumerate(table.rows) if r.kind != "module"]
    if outside:
        group = TreeNode(OUTSIDE_MODULES, -1, 0, 0, 0, 0, 0, kind="group")
        for i, r in outside:
            group.children.append(_row_node(r, i, r.key, kind="outside"))
        group.device_ns = sum(c.device_ns for c in group.children)
        group.forward_ns = sum(c.forward_ns for c in group.children)
        group.backward_ns = sum(c.backward_ns for c in group.children)
        group.other_ns = sum(c.other_ns for c in group.children)
        group.calls = sum(c.calls for c in group.children)
        group.cpu_ns = sum(c.cpu_ns or 0 for c in group.children)
    _sort(roots)
    if outside:
        roots.append(group)
    for node in roots:
        node_flops_of(node, table)
    return roots


def _row_node(r: Any, i: int, label: str, kind: str = "module") -> TreeNode:
    """The tree node of module-table row ``r`` (index ``i``), without children."""
    return TreeNode(
        label=label,
        row=i,
        device_ns=int(r.device_total_ns),
        forward_ns=int(r.forward_device_ns or 0),
        backward_ns=int(r.backward_device_ns or 0),
        calls=int(r.calls),
        cpu_ns=None if r.extra.get("cpu_note") else int(r.cpu_total_ns),
        kind=kind,
        other_ns=int(r.other_device_ns or 0),
    )


def _parent_of(path: str, nodes: dict[str, TreeNode]) -> TreeNode | None:
    while "." in path:
        path = path.rsplit(".", 1)[0]
        if path in nodes:
            return nodes[path]
    return None


def _sort(nodes: list[TreeNode]) -> None:
    nodes.sort(key=lambda n: (-n.device_ns, n.label))
    for n in nodes:
        _sort(n.children)


def tree_total_ns(roots: list[TreeNode]) -> int:
    """The device time of the whole tree (the shares' denominator)."""
    return sum(n.device_ns for n in roots)


@dataclass(frozen=True)
class IcicleCell:
    """One rectangle of the icicle chart, in units of the tree's total (x) and levels (depth)."""

    x0: float
    x1: float
    depth: int
    node: TreeNode


def icicle_cells(roots: list[TreeNode], min_width: float = 0.0) -> list[IcicleCell]:
    """The icicle of the tree: each node spans its share of its parent's width, children one
    level below, largest first. Cells narrower than ``min_width`` (a share) are left out with
    their children."""
    total = float(tree_total_ns(roots)) or 1.0
    cells: list[IcicleCell] = []

    def place(nodes: list[TreeNode], x: float, depth: int) -> None:
        for n in nodes:
            w = n.device_ns / total
            if w > 0 and w >= min_width:
                cells.append(IcicleCell(x, x + w, depth, n))
                place(n.children, x, depth + 1)
            x += w

    place(roots, 0.0, 0)
    return cells


# -- source lines --------------------------------------------------------------------------------
def split_location(key: str) -> tuple[str, int]:
    """``("file", line)`` of a ``file:line`` key; line 0 where the key has none."""
    path, sep, line = key.rpartition(":")
    if sep and line.isdigit():
        return path, int(line)
    return key, 0


@dataclass(frozen=True)
class SourceExcerpt:
    """Lines of a source file around one line.

    Attributes
    ----------
    path : str
    first : int
        The number of ``lines[0]`` (1-based).
    lines : list of str
        The file's lines, as read (never run), decoded as UTF-8 with undecodable bytes replaced.
    line : int
        The line the row is about.
    error : str
        Why no lines could be shown ("" when there are lines).
    mismatch : str
        Why the file found is not the one recorded (the function at ``line`` is not the
        recorded one, :func:`~gpuviz.gui.views.ops.source_match.line_mismatch`), "" where it is.
    """

    path: str
    first: int
    lines: list[str]
    line: int
    error: str = ""
    mismatch: str = ""


def find_source(path: str, roots: tuple[str, ...] = ()) -> str | None:
    """The file on this machine that a recorded path names: the path itself (absolute, or
    relative to the current folder), else under one of ``roots`` (the path's last parts,
    longest first: a trace recorded at ``/root/proj/model.py`` finds ``ROOT/model.py``, or
    ``ROOT/proj/model.py``). None where there is none."""
    if os.path.isfile(path):
        return path
    parts = [p for p in path.replace("\\", "/").split("/") if p and p not in (".", "..")]
    if not os.path.isabs(path):
        # Kineto writes a module's path relative to the sys.path entry it was found in
        # (``transformers/activations.py``): the same package installed here has it there.
        for entry in sys.path:
            candidate = os.path.join(entry or ".", *parts)
            if entry and os.path.isfile(candidate):
                return candidate
    for root in roots:
        for k in range(min(len(parts), 8), 0, -1):
            candidate = os.path.join(root, *parts[-k:])
            if os.path.isfile(candidate):
                return candidate
    return None


def source_excerpt(
    path: str, line: int, context: int = 12, roots: tuple[str, ...] = (), function: str = ""
) -> SourceExcerpt:
    """The lines ``line - context`` to ``line + context`` of ``path`` on this machine (see
    :func:`find_source`), read as text, never run. A missing, unreadable or huge file gives an
    excerpt with ``error``; one where ``function`` (the recorded frame's) is not at ``line``, an
    excerpt with ``mismatch``."""
    found = find_source(path, roots)
    if found is None:
        return SourceExcerpt(path, 0, [], line, "not on this machine")
    path = found
    try:
        size = os.path.getsize(path)
        if size > MAX_SOURCE_BYTES:
            return SourceExcerpt(path, 0, [], line, f"too large to show ({size:,} bytes)")
        with open(path, "rb") as fh:
            raw = fh.read(MAX_SOURCE_BYTES + 1)
    except OSError as exc:
        return SourceExcerpt(path, 0, [], line, exc.strerror or str(exc))
    whole = raw.decode("utf-8", errors="replace")
    text = whole.splitlines()
    if line < 1 or line > len(text):
        return SourceExcerpt(
            path,
            0,
            [],
            line,
            f"the file has {len(text)} lines, not line {line}: it is not the file recorded",
        )
    first = max(1, line - context)
    last = min(len(text), line + context)
    mismatch = line_mismatch(whole, line, function)
    return SourceExcerpt(path, first, text[first - 1 : last], line, mismatch=mismatch)
