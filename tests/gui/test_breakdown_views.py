"""The Operators, Modules and Source views (issue 23), and "Show on Timeline" from their rows."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QPoint, Qt

from gpuviz.gui.qt_load_worker import analyze
from gpuviz.gui.views.ops.breakdown_model import (
    NO_STACKS,
    compute_breakdowns,
    kernel_context,
    kernel_details,
    row_kernels,
)
from gpuviz.gui.views.ops.qt_breakdown_table import ROW_ROLE
from gpuviz.gui.views.ops.qt_modules import QtModulesView
from gpuviz.gui.views.ops.qt_operators import TOP_BARS, QtOperatorsView
from gpuviz.gui.views.ops.qt_source import QtSourceView
from gpuviz.gui.views.qt_trace_view import QtTraceView
from gpuviz.trace.kineto import load_trace
from gpuviz.trace.model import Kind

TINYLM = "attribution/tinylm_train.json.gz"


@pytest.fixture(scope="module")
def breakdowns_of(data_dir):
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = compute_breakdowns(load_trace(str(data_dir / name)))
        return cache[name]

    return get


def _device_total(bd, rows) -> int:
    return int(bd.trace.slices.dur_ns[rows].sum())


# -- Operators -----------------------------------------------------------------------------------
def test_operators_rows_are_sorted_by_device_total_and_filter(qtbot, breakdowns_of):
    bd = breakdowns_of(TINYLM)
    view = QtOperatorsView(bd)
    qtbot.addWidget(view)
    keys = view.shown_keys()
    assert len(keys) == len(bd.op.rows) > 10
    totals = {r.key: r.device_total_ns for r in bd.op.rows}
    shown = [totals[k] for k in keys]
    assert shown == sorted(shown, reverse=True)
    assert "aten::mm" in keys

    view.filter_edit.setText("ATEN::MM")  # case-insensitive, on the exact name
    assert view.shown_keys() and all("aten::mm" in k for k in view.shown_keys())
    assert view.count_label.text().startswith(f"{len(view.shown_keys())} of {len(keys)}")
    assert set(view.bar_keys()) <= set(view.shown_keys())
    view.filter_edit.clear()
    assert len(view.shown_keys()) == len(keys)
    # A click on a header sorts by that column (here: calls, fewest first).
    view.table.sortByColumn(1, Qt.SortOrder.AscendingOrder)
    calls = {r.key: r.calls for r in bd.op.rows}
    by_calls = [calls[k] for k in view.shown_keys()]
    assert by_calls == sorted(by_calls) and by_calls[0] < by_calls[-1]
    # Grouping by shape keeps the sort column.
    view.shape_box.setChecked(True)
    assert view.table.horizontalHeader().sortIndicatorSection() == 2  # Input shapes is 1
    shape_calls = [
        view.model.rows[int(view.proxy.index(r, 0).data(ROW_ROLE))].calls
        for r in range(view.proxy.rowCount())
    ]
    assert shape_calls == sorted(shape_calls)


def test_operators_bars_are_the_top_ops_without_the_step_marker(qtbot, breakdowns_of, data_dir):
    bd = breakdowns_of(TINYLM)
    view = QtOperatorsView(bd)
    qtbot.addWidget(view)
    bars = view.bar_keys()
    assert len(bars) == TOP_BARS
    assert not any(k.startswith("ProfilerStep") for k in bars)
    # By self time (issue 47, item 23): a wrapper's total counted its children's kernels again.
    selfs = {r.key: r.device_self_ns for r in bd.op.rows}
    assert [selfs[k] for k in bars] == sorted((selfs[k] for k in bars), reverse=True)
    rest = [r.device_self_ns for r in bd.op.rows if r.key not in bars]
    assert max(rest) <= selfs[bars[-1]]
    assert not any(k.startswith(("Optimizer.step", "autograd::engine")) for k in bars)
    # Each kernel in one bar at most: the bars add up to no more than the trace's kernel time,
    # summed here from the file (total-time bars added up to more than twice that).
    events = json.loads(gzip.decompress((data_dir / TINYLM).read_bytes()))["traceEvents"]
    kernel_us = sum(
        e["dur"] for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")
    )
    assert sum(selfs[k] for k in bars) / 1e3 <= kernel_us
    view.bars.barClicked.emit(2)  # a bar selects its op in the table
    assert bd.op.rows[view.selected_index()].key == bars[2]


def test_group_by_shape_splits_ops_by_their_input_shapes(qtbot, breakdowns_of):
    bd = breakdowns_of(TINYLM)
    view = QtOperatorsView(bd)
    qtbot.addWidget(view)
    by_name = len(view.shown_keys())
    view.shape_box.setChecked(True)
    assert view.by() == "op-shape"
    assert len(view.shown_keys()) == len(bd.op_shape.rows) > by_name
    assert view.model.headerData(1, Qt.Orientation.Horizontal) == "Input shapes"
    # aten::mm ran on several shapes: several rows, each with its shapes shown.
    mm = [r for r in bd.op_shape.rows if r.key == "aten::mm"]
    assert len(mm) > 1
    assert view.shown_keys().count("aten::mm") == len(mm)
    cells = {
        view.proxy.index(r, 1).data()
        for r in range(view.proxy.rowCount())
        if view.proxy.index(r, 0).data() == "aten::mm"
    }
    assert len(cells) == len(mm) and all(c.startswith("[[") for c in cells)
    view.shape_box.setChecked(False)
    assert len(view.shown_keys()) == by_name


def _kernels_inside(bd, name):
    """Brute force: kernels whose launch lies in the time of a call of ``name`` on its thread."""
    att = bd.attribution
    f = att.forest
    calls = [
        n for n in att.op_node_indices().tolist() if bd.trace.symbols[int(att.name[n])] == name
    ]
    out = []
    for k, launch in enumerate(att.gpu_launch.tolist()):
        if launch < 0:
            continue
        t, g = f.start_ns[launch], f.group[launch]
        if any(f.group[n] == g and f.start_ns[n] <= t < f.end_ns[n] for n in calls):
            out.append(int(att.gpu_rows[k]))
    return np.array(sorted(out), dtype=np.int64)


def test_an_ops_kernels_are_those_launched_inside_its_calls(breakdowns_of):
    bd = breakdowns_of(TINYLM)
    keys = [r.key for r in bd.op.rows]
    for name in ("aten::linear", "aten::mm", "aten::addmm", "Optimizer.step#AdamW.step"):
        i = keys.index(name)
        rows = row_kernels(bd, "op", i)
        assert np.array_equal(rows, _kernels_inside(bd, name)), name
        # Each kernel once: torch's total counts a call nested in a call of the same op twice.
        assert _device_total(bd, rows) <= bd.op.rows[i].device_total_ns + 2
    # aten::linear launches nothing itself: its GEMMs are its child addmm's.
    i = keys.index("aten::linear")
    assert bd.op.rows[i].device_self_ns == 0 and len(row_kernels(bd, "op", i)) > 0
    # By shape: the rows of one op share out its kernels.
    mm = [j for j, r in enumerate(bd.op_shape.rows) if r.key == "aten::mm"]
    parts = np.sort(np.concatenate([row_kernels(bd, "op-shape", j) for j in mm]))
    assert np.array_equal(parts, row_kernels(bd, "op", keys.index("aten::mm")))


# -- Modules -------------------------------------------------------------------------------------
def test_module_tree_of_tinylm(qtbot, breakdowns_of):
    bd = breakdowns_of(TINYLM)
    view = QtModulesView(bd)
    qtbot.addWidget(view)
    assert view.stack.currentIndex() == 1
    paths = view.paths()
    assert paths[0] == "TinyLM_0"
    blocks = [p for p in paths if p.count(".") == 1 and p.startswith("TinyLM_0.Block_")]
    assert len(blocks) >= 2
    assert set(paths) == {r.key for r in bd.module.rows if r.kind == "module"}
    top = view.tree.topLevelItem(0)
    assert top.text(0) == "TinyLM_0"
    children = [top.child(j).text(0) for j in range(top.childCount())]
    assert {b.split(".")[1] for b in blocks} <= set(children)
    # Forward + backward is a module's device time, and both are there (a training step).
    node = top.data(0, Qt.ItemDataRole.UserRole)
    assert node.forward_ns > 0 and node.backward_ns > 0 and node.other_ns == 0
    assert node.forward_ns + node.backward_ns == pytest.approx(node.device_ns, abs=2)
    # The outside group comes last and holds the optimizer.
    last = view.tree.topLevelItem(view.tree.topLevelItemCount() - 1)
    assert last.text(0) == "(outside modules)"
    outside = [last.child(j).text(0) for j in range(last.childCount())]
    assert any(k.startswith("Optimizer.step") for k in outside)
    # The optimizer's time is "Other", not "Forward" (issue 47, item 12); each row adds up.
    from gpuviz.gui.views.ops.qt_modules import HEADERS

    col_f, col_o = HEADERS.index("Forward (µs)"), HEADERS.index("Other (µs)")
    opt = next(
        last.child(j)
        for j in range(last.childCount())
        if last.child(j).text(0).startswith("Optimizer.step")
    )
    opt_row = next(r for r in bd.module.rows if r.key.startswith("Optimizer.step"))
    assert opt.text(col_f) == "0.0" and opt.text(col_o) == f"{opt_row.device_total_ns / 1e3:,.1f}"
    assert opt_row.device_total_ns > 100_000  # AdamW's kernels
    for it in [top, last, *(last.child(j) for j in range(last.childCount()))]:
        n = it.data(0, Qt.ItemDataRole.UserRole)
        assert n.forward_ns + n.backward_ns + n.other_ns == pytest.approx(n.device_ns, abs=2)
    # The icicle has a cell for the model and for each block.
    labels = {c.node.label for c in view.icicle.cells}
    assert "TinyLM_0" in labels and {b.split(".")[1] for b in blocks} <= labels


def _module_items(view):
    """Each module or outside row's item, by its key in the module table."""
    rows = view.breakdowns.module.rows
    out = {}
    for item in view._items.values():
        node = item.data(0, Qt.ItemDataRole.UserRole)
        if node.row >= 0:
            out[rows[node.row].key] = item
    return out


def test_module_flops_and_mfu_columns_are_the_clis(qtbot, data_dir, capsys):
    from gpuviz.analysis.attribution import attribute
    from gpuviz.analysis.breakdown import breakdown
    from gpuviz.analysis.hardware import hardware
    from gpuviz.analysis.module_flops import annotate_modules
    from gpuviz.cli import main
    from gpuviz.gui.views.ops.qt_breakdown_table import format_flops
    from gpuviz.gui.views.ops.qt_modules import HEADERS

    path = data_dir / TINYLM  # recorded with shapes: GEMMs and attention counted
    trace = load_trace(str(path))
    hw = hardware(trace)
    table = breakdown(trace, "module")
    annotate_modules(table, hw, attribute(trace))
    expected = {r.key: (r.extra["flops"], r.extra["mfu"], r.device_total_ns) for r in table.rows}
    # The analysis' figures are those `gpuviz breakdown --by module --json` prints.
    assert main(["breakdown", str(path), "--by", "module", "--json", "--top", "0"]) == 0
    cli = {r["key"]: (r["flops"], r["mfu"]) for r in json.loads(capsys.readouterr().out)["rows"]}
    assert cli == {k: v[:2] for k, v in expected.items()}

    bd = compute_breakdowns(trace)
    view = QtModulesView(bd)
    qtbot.addWidget(view)
    col_flops, col_tflops, col_mfu = (HEADERS.index(h) for h in ("FLOPs", "TFLOP/s", "MFU"))
    items = _module_items(view)
    assert set(items) == set(expected)
    # No figures yet (the advisor's are not there): unknown everywhere, never 0.
    assert {it.text(c) for it in items.values() for c in (col_flops, col_mfu)} == {"—"}

    view.set_hardware(hw)
    dashes = numbers = 0
    for key, (flops, got_mfu, device_ns) in expected.items():
        item = items[key]
        if not flops:  # LayerNorm, Embedding, the optimizer: no counted FLOPs
            assert [item.text(c) for c in (col_flops, col_tflops, col_mfu)] == ["—"] * 3, key
            dashes += 1
            continue
        numbers += 1
        assert item.data(0, Qt.ItemDataRole.UserRole).flops == flops, key
        assert item.text(col_flops) == format_flops(flops), key
        assert item.text(col_tflops) == f"{flops / device_ns / 1e3:,.1f}", key
        assert item.text(col_mfu) == f"{100 * got_mfu:.1f} %", key
    assert dashes >= 5 and numbers >= 10
    # A few figures as typed (tinylm_train on an H100, bf16 peak 989.4 TFLOP/s).
    assert items["TinyLM_0"].text(col_flops) == "23.49 G"
    assert items["TinyLM_0"].text(col_mfu) == "2.6 %"
    assert items["TinyLM_0.Embedding_0"].text(col_flops) == "—"
    # The outside group: its rows' FLOPs summed (none here), no MFU.
    group = view.tree.topLevelItem(view.tree.topLevelItemCount() - 1)
    assert group.text(0) == "(outside modules)" and group.text(col_mfu) == "—"
    # Peaks taken away: back to unknown.
    view.set_hardware(None)
    assert {it.text(c) for it in items.values() for c in (col_flops, col_mfu)} == {"—"}


def _sibling_groups(tree):
    """The children of the root and of every item, as lists of items, in the order shown."""
    groups, todo = [], [tree.invisibleRootItem()]
    while todo:
        parent = todo.pop()
        kids = [parent.child(j) for j in range(parent.childCount())]
        if len(kids) > 1:
            groups.append(kids)
        todo.extend(kids)
    return groups


def _click_header(qtbot, tree, col):
    header = tree.header()
    x = header.sectionViewportPosition(col) + header.sectionSize(col) // 2
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, 5))


def test_sorting_modules_by_a_numeric_column(qtbot, data_dir):
    from gpuviz.analysis.hardware import hardware
    from gpuviz.gui.views.ops.qt_modules import HEADERS

    bd = compute_breakdowns(load_trace(str(data_dir / TINYLM)))
    view = QtModulesView(bd)
    qtbot.addWidget(view)
    view.set_hardware(hardware(bd.trace))
    view.resize(1280, 700)
    view.show()
    qtbot.waitExposed(view)
    tree = view.tree

    def node(item):
        return item.data(0, Qt.ItemDataRole.UserRole)

    def check(col, attr, descending):
        assert tree.header().sortIndicatorSection() == col
        assert (tree.header().sortIndicatorOrder() == Qt.SortOrder.DescendingOrder) == descending
        text_order_differs = False
        for kids in _sibling_groups(tree):
            nodes = [node(k) for k in kids]
            if nodes[-1].kind == "group":  # the outside group stays last
                nodes = nodes[:-1]
            assert all(n.kind != "group" for n in nodes)
            values = [getattr(n, attr) for n in nodes]
            known = [v for v in values if v is not None]
            assert values[: len(known)] == known, "unknown figures come last"
            assert known == sorted(known, reverse=descending), (attr, descending, values)
            shown = [k.text(col) for k in kids[: len(known)]]
            text_order_differs |= shown != sorted(shown, reverse=descending)
        assert text_order_differs, "numbers sorted as numbers, not as their text"

    # The first order: device time, largest first (the outside group last).
    check(HEADERS.index("Device (µs)"), "device_ns", True)
    assert node(tree.topLevelItem(tree.topLevelItemCount() - 1)).kind == "group"
    for title, attr in (("CPU (µs)", "cpu_ns"), ("FLOPs", "flops")):
        col = HEADERS.index(title)
        _click_header(qtbot, tree, col)  # first click: largest first
        check(col, attr, True)
        _click_header(qtbot, tree, col)  # second: smallest first
        check(col, attr, False)
    # By name: A to Z first.
    _click_header(qtbot, tree, 0)
    top = tree.topLevelItem(0)
    names = [top.child(j).text(0) for j in range(top.childCount())]
    assert names == sorted(names, key=str.casefold)
    # The selection survives new figures, and so does the sort.
    assert view.select_path("TinyLM_0.Block_0")
    view.set_hardware(None)
    assert view.selected_node().label == "Block_0"
    assert tree.header().sortIndicatorSection() == 0


def test_a_modules_kernels_include_its_submodules(breakdowns_of):
    bd = breakdowns_of(TINYLM)
    for i, row in enumerate(bd.module.rows):
        rows = row_kernels(bd, "module", i)
        assert _device_total(bd, rows) == pytest.approx(row.device_total_ns, abs=2), row.key


@pytest.mark.parametrize("view_class", [QtModulesView, QtSourceView])
def test_a_trace_without_stacks_says_how_to_record_them(qtbot, breakdowns_of, view_class):
    bd = breakdowns_of("streams_overlap.json.gz")
    assert not bd.has_stacks
    view = view_class(bd)
    qtbot.addWidget(view)
    assert view.stack.currentIndex() == 0
    text = view.message.text()
    assert text == NO_STACKS
    assert "gpuviz profile" in text and "--no-stack" in text and "with_stack=True" in text


# -- Show on Timeline, details ------------------------------------------------------------------
@pytest.fixture(scope="module")
def tinylm_analyses(data_dir):
    return analyze(load_trace(str(data_dir / TINYLM)))


def _trace_view(qtbot, analyses, name):
    tv = QtTraceView(analyses, "tinylm")
    qtbot.addWidget(tv)
    tv.resize(1200, 800)
    tv.show()
    tv.set_view(name)
    with qtbot.waitSignal(tv.breakdownsReady, timeout=60_000, raising=False):
        pass
    assert tv.wait_breakdowns(60)
    return tv


def _assert_outlined(tv, rows, expected):
    s = tv.trace.slices
    assert len(rows) == len(expected) > 0
    assert np.array_equal(np.sort(tv.timeline.highlighted_rows()), np.sort(expected))
    first = int(expected[np.argmin(s.start_ns[expected])])
    t0, t1 = tv.timeline.view_range()
    assert t0 <= int(s.start_ns[first]) and int(s.start_ns[first] + s.dur_ns[first]) <= t1
    assert t1 - t0 < int(s.start_ns.max())  # zoomed in, not the whole trace
    assert tv.current_view() == "timeline"


def test_show_on_timeline_from_a_module(qtbot, tinylm_analyses):
    tv = _trace_view(qtbot, tinylm_analyses, "modules")
    view = tv.modules_view
    bd = tv.breakdowns
    path = next(p for p in view.paths() if p.startswith("TinyLM_0.Block_"))
    assert view.select_path(path)
    with qtbot.waitSignal(view.showKernels) as sig:
        view.show_button.click()
    # Independently: the kernels whose innermost module is the block or one under it.
    keys = np.array([r.key for r in bd.module.rows] + [""], dtype=object)[bd.module.kernel_row]
    under = np.array([k == path or k.startswith(path + ".") for k in keys])
    expected = bd.module.kernel_rows[under]
    _assert_outlined(tv, sig.args[0], expected)


def test_the_apps_modules_view_has_the_advisors_figures_and_follows_the_peaks(
    qtbot, tinylm_analyses
):
    from gpuviz.analysis.peaks import PeakOverride
    from gpuviz.gui.views.ops.qt_modules import HEADERS

    tv = _trace_view(qtbot, tinylm_analyses, "modules")
    view = tv.modules_view
    col = HEADERS.index("MFU")
    top = view.tree.topLevelItem(0)
    assert top.text(0) == "TinyLM_0"
    mfu = top.data(0, Qt.ItemDataRole.UserRole).mfu
    assert top.text(col) == "2.6 %" and mfu > 0  # the H100's bf16 peak, as the CLI
    tv.set_peaks(PeakOverride(peak_tflops=989.4 / 2))  # half the peak: twice the MFU
    assert top.data(0, Qt.ItemDataRole.UserRole).mfu == pytest.approx(2 * mfu, rel=1e-3)
    assert top.text(col) == f"{200 * mfu:.1f} %"
    tv.set_peaks(None)
    assert top.text(col) == "2.6 %"


def test_show_on_timeline_from_an_op_and_the_kernels_details(qtbot, tinylm_analyses):
    tv = _trace_view(qtbot, tinylm_analyses, "operators")
    view = tv.operators_view
    bd = tv.breakdowns
    assert view.select_key("aten::mm")
    i = view.selected_index()
    with qtbot.waitSignal(view.showKernels) as sig:
        view.show_selected_on_timeline()
    expected = bd.op.kernel_rows[bd.op.kernel_row == i]  # mm launches its GEMMs itself
    _assert_outlined(tv, sig.args[0], expected)
    # The Timeline's details of that kernel: its op, module path and line.
    first = int(tv.timeline.selected_slice())
    assert first == int(expected[np.argmin(tv.trace.slices.start_ns[expected])])
    ctx = kernel_context(bd, first)
    assert ctx is not None and ctx.op == "aten::mm" and ctx.module.startswith("TinyLM_0")
    info = tv.timeline.info_text
    assert "aten::mm" in info and ctx.module in info and ctx.line in info


def test_kernel_details_are_escaped(breakdowns_of, monkeypatch):
    import gpuviz.analysis.origin as origin

    bd = breakdowns_of(TINYLM)
    row = int(bd.op.kernel_rows[0])
    evil = origin.KernelOrigin("<b>op</b>", "M_0.<i>x</i>", "a&b.py:3\x1b[2J", True)
    monkeypatch.setattr(origin, "kernel_origins", lambda trace, rows: [evil])
    text = kernel_details(bd, row)
    assert "op <b>&lt;b&gt;op&lt;/b&gt;</b>" in text
    assert "M_0.&lt;i&gt;x&lt;/i&gt;" in text and "a&amp;b.py:3\\x1b[2J" in text
    assert "backward" in text and "\x1b" not in text
    monkeypatch.undo()
    assert kernel_details(bd, -5) == ""


def test_kernel_details_call_an_op_outside_modules_no_module(breakdowns_of):
    # issue 47, item 12: "module aten::cross_entropy_loss" called an op a module.
    bd = breakdowns_of(TINYLM)
    mod = bd.module
    loss = next(i for i, r in enumerate(mod.rows) if r.key == "aten::cross_entropy_loss")
    optim = next(i for i, r in enumerate(mod.rows) if r.key.startswith("Optimizer.step"))
    lin = next(i for i, r in enumerate(mod.rows) if r.key.endswith("Linear_8"))
    for i in (loss, optim):
        text = kernel_details(bd, int(mod.kernels_of(i)[0]))
        assert "module " not in text and "outside modules" in text, text
    assert "Optimizer.step" in kernel_details(bd, int(mod.kernels_of(optim)[0]))
    text = kernel_details(bd, int(mod.kernels_of(lin)[0]))
    assert "module TinyLM_0.Linear_8" in text and "outside" not in text


# -- Source --------------------------------------------------------------------------------------
def _stack_trace(
    tmp_path: Path, source: Path, line: int, module: str = "", function: str = "<module>"
) -> Path:
    """A tiny Kineto trace: a Python frame at ``source:line`` of ``function`` (inside module
    frame ``module`` when given) running an op that launches a kernel."""
    frame = f"{source}({line}): {function}"
    outer = []
    if module:
        outer = [
            {"ph": "X", "cat": "python_function", "name": f"nn.Module: {module}", "pid": 1,
             "tid": 1, "ts": 0, "dur": 100, "args": {"Python id": 9, "Python parent id": 0}}
        ]  # fmt: skip
    events = [
        *outer,
        {"ph": "X", "cat": "python_function", "name": frame, "pid": 1, "tid": 1, "ts": 0,
         "dur": 100, "args": {"Python id": 1, "Python parent id": 0}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10,
         "dur": 50, "args": {"External id": 1}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
         "ts": 20, "dur": 5, "args": {"correlation": 7}},
        {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 30, "dur": 40,
         "args": {"correlation": 7, "device": 0, "stream": 7}},
    ]  # fmt: skip
    out = tmp_path / "stack.json"
    out.write_text(json.dumps({"traceEvents": events}))
    return out


def test_source_view_shows_the_code_around_the_line(qtbot, tmp_path):
    src = tmp_path / "model.py"
    src.write_text("".join(f"x_{n} = {n}\n" for n in range(1, 41)))
    bd = compute_breakdowns(load_trace(str(_stack_trace(tmp_path, src, 20))))
    assert bd.line is not None, bd.errors
    view = QtSourceView(bd)
    qtbot.addWidget(view)
    assert view.shown_keys() == [f"{src}:20"]
    assert view.select_key(f"{src}:20")
    text = view.code_text()
    assert "x_20 = 20" in text and "x_8 = 8" in text and "x_32 = 32" in text
    assert "x_7 = 7" not in text  # 12 lines of context each side
    assert view.highlighted_line() == 20
    assert len(view.selected_kernels()) == 1


def test_source_view_names_the_function_and_times_each_line(qtbot, tmp_path):
    src = tmp_path / "model.py"
    src.write_text("import torch\n\n\ndef step(x):\n    return x @ x\n")
    bd = compute_breakdowns(load_trace(str(_stack_trace(tmp_path, src, 4, function="step"))))
    view = QtSourceView(bd)
    qtbot.addWidget(view)
    assert view.select_key(f"{src}:4")
    col = [c.title for c in view.model.columns].index("Function")
    assert view.proxy.index(0, col).data() == "step"
    assert view.highlighted_line() == 4
    # The kernel of the trace lasts 40 µs: the margin of line 4 says so, the others nothing.
    lines = view.code_text().splitlines()
    assert lines[3].split("│")[0].strip() == "40.0"
    assert lines[4].split("│")[0].strip() == ""


def test_source_view_of_another_version_of_the_file_says_so(qtbot, tmp_path):
    # The trace recorded forward() at line 4; the file here has another function there.
    src = tmp_path / "model.py"
    src.write_text(
        "import torch\n\n\ndef helper(x):\n    return x\n\n\ndef forward(x):\n    return x\n"
    )
    bd = compute_breakdowns(load_trace(str(_stack_trace(tmp_path, src, 4, function="forward"))))
    view = QtSourceView(bd)
    qtbot.addWidget(view)
    assert view.select_key(f"{src}:4")
    assert view.highlighted_line() == 0
    label = view.file_label.text()
    assert "in helper(), not in forward()" in label and "not the file that was recorded" in label
    assert "def helper" in view.code_text()  # the code is still shown, without a highlight


def test_source_view_of_a_missing_file_says_so(qtbot, tmp_path):
    bd = compute_breakdowns(load_trace(str(_stack_trace(tmp_path, tmp_path / "gone.py", 3))))
    view = QtSourceView(bd)
    qtbot.addWidget(view)
    assert view.select_key(f"{tmp_path / 'gone.py'}:3")
    assert "not on this machine" in view.file_label.text()
    assert view.highlighted_line() == 0


def test_a_package_path_is_found_on_sys_path(monkeypatch, tmp_path):
    # Kineto writes an installed module's path relative to its sys.path entry
    # ("transformers/activations.py"): the same package installed here is found there.
    from gpuviz.gui.views.ops.breakdown_model import find_source

    site = tmp_path / "site-packages"
    (site / "somepkg").mkdir(parents=True)
    (site / "somepkg" / "layers.py").write_text("a = 1\n")
    monkeypatch.chdir(tmp_path)  # not found relative to the current folder
    assert find_source("somepkg/layers.py") is None
    monkeypatch.syspath_prepend(str(site))
    assert find_source("somepkg/layers.py") == str(site / "somepkg" / "layers.py")
    assert find_source("somepkg/other.py") is None


def test_a_hostile_file_name_and_content_are_plain_text(qtbot, tmp_path):
    src = tmp_path / "<b>evil&amp;<i>.py"
    src.write_text("ok = 1\n<i>x</i> = '\x1b]52;c;AAAA\x07'\n&amp; = 3\n")
    bd = compute_breakdowns(load_trace(str(_stack_trace(tmp_path, src, 2))))
    view = QtSourceView(bd)
    qtbot.addWidget(view)
    assert view.select_key(f"{src}:2")
    assert view.file_label.textFormat() == Qt.TextFormat.PlainText
    assert "<b>evil&amp;<i>.py" in view.file_label.text()
    text = view.code_text()
    assert "<i>x</i>" in text and "&amp; = 3" in text
    assert "\x1b" not in text and "\\x1b]52" in text
    assert view.highlighted_line() == 2
    # The table cell shows the name as text too (the model never returns markup).
    cell = view.proxy.index(0, 0).data()
    assert "<b>evil&amp;<i>.py:2" in cell


def test_a_path_recorded_on_another_machine_is_found_under_a_chosen_folder(qtbot, tmp_path):
    checkout = tmp_path / "checkout"
    (checkout / "proj").mkdir(parents=True)
    (checkout / "proj" / "model.py").write_text("a = 1\nb = 2\nc = 3\n")
    recorded = Path("/root/elsewhere/proj/model.py")  # not on this machine
    bd = compute_breakdowns(load_trace(str(_stack_trace(tmp_path, recorded, 2))))
    view = QtSourceView(bd)
    qtbot.addWidget(view)
    assert view.select_key(f"{recorded}:2")
    assert view.highlighted_line() == 0
    view.add_root(str(checkout))
    assert "b = 2" in view.code_text() and view.highlighted_line() == 2
    assert view.excerpt is not None and view.excerpt.path == str(checkout / "proj" / "model.py")


def test_a_kernel_clicked_on_the_timeline_gets_its_op_module_and_line(qtbot, tinylm_analyses):
    tv = QtTraceView(tinylm_analyses, "tinylm")
    qtbot.addWidget(tv)
    tv.resize(1200, 800)
    tv.show()
    tv.set_view("timeline")
    assert tv.breakdowns is None  # nothing computed until a view or a kernel needs it
    s = tv.trace.slices
    gemm = next(
        int(r)
        for r in np.flatnonzero(s.kind == Kind.KERNEL)
        if tv.trace.name_of(int(r)).startswith("nvjet")
    )
    with qtbot.waitSignal(tv.breakdownsReady, timeout=60_000):
        tv.timeline.select_slice(gemm)
        assert "finding its op, module and line" in tv.timeline.info_text
    ctx = kernel_context(tv.breakdowns, gemm)
    assert ctx is not None and ctx.op and ctx.module.startswith("TinyLM_0") and ctx.line
    info = tv.timeline.info_text
    assert f"op <b>{ctx.op}</b>" in info and f"module {ctx.module}" in info
    assert f"line {ctx.line}" in info


def test_a_hostile_module_name_is_plain_text_in_the_tree_and_the_icicle(qtbot, tmp_path):
    evil = "<b>Evil</b>\x1b[31m_0"
    bd = compute_breakdowns(
        load_trace(str(_stack_trace(tmp_path, tmp_path / "m.py", 1, module=evil)))
    )
    assert bd.module is not None, bd.errors
    view = QtModulesView(bd)
    qtbot.addWidget(view)
    top = view.tree.topLevelItem(0)
    assert top.text(0) == "<b>Evil</b>\\x1b[31m_0"  # shown as typed, the escape visible
    assert "&lt;b&gt;Evil" in top.toolTip(0)  # a tooltip is rich text: escaped
    assert view.paths() == [evil]  # the exact name, for selection
    assert any(c.node.label == evil for c in view.icicle.cells)
    view.resize(800, 400)
    view.show()
    qtbot.waitExposed(view)
    view.icicle.mouseMoveEvent(_Pos(10, 10))
    assert "&lt;b&gt;Evil" in view.icicle.toolTip()


class _Pos:
    """A stand-in mouse event at (x, y)."""

    def __init__(self, x: float, y: float) -> None:
        from PySide6.QtCore import QPointF

        self._p = QPointF(x, y)

    def position(self):
        return self._p


def test_a_row_without_gpu_work_has_nothing_to_show(qtbot, breakdowns_of):
    bd = breakdowns_of(TINYLM)
    view = QtOperatorsView(bd)
    qtbot.addWidget(view)
    idle = next(i for i, r in enumerate(bd.op.rows) if r.device_total_ns == 0)
    assert view.select_row(idle)
    assert not view.show_button.isEnabled()
    with qtbot.assertNotEmitted(view.showKernels):
        view.show_selected_on_timeline()
    busy = next(i for i, r in enumerate(bd.op.rows) if r.device_total_ns > 0)
    assert view.select_row(busy) and view.show_button.isEnabled()


# -- Operators: columns and sorting (issue 47, item 23) --------------------------------------------
def _shown(qtbot, bd, shape: bool) -> QtOperatorsView:
    view = QtOperatorsView(bd)
    qtbot.addWidget(view)
    view.resize(1260, 700)
    view.show()
    qtbot.waitExposed(view)
    view.shape_box.setChecked(shape)
    view.table.column_fitter.fit()
    return view


def test_grouped_operators_show_names_whole_and_shapes_cut_at_their_end(qtbot, breakdowns_of):
    from PySide6.QtWidgets import QStyledItemDelegate

    view = _shown(qtbot, breakdowns_of(TINYLM), True)
    header, fm = view.table.horizontalHeader(), view.table.fontMetrics()
    # The op names of the top rows fit their column ("autogr…kward0" before).
    names = [str(view.proxy.index(r, 0).data()) for r in range(15)]
    assert all(fm.horizontalAdvance(n) <= header.sectionSize(0) for n in names if len(n) <= 40)
    assert header.sectionSize(0) >= header.sectionSize(1) * 0.9  # names before shapes
    # Every column on screen: the table needs no more than its width.
    total = sum(header.sectionSize(c) for c in range(header.count()))
    assert total <= view.table.viewport().width() + 2
    delegate = view.table.itemDelegateForColumn(1)
    assert (
        isinstance(delegate, QStyledItemDelegate)
        and type(delegate).__name__ == "ElideRightDelegate"
    )


def test_ungrouped_operator_column_is_as_wide_as_its_names(qtbot, breakdowns_of):
    view = _shown(qtbot, breakdowns_of(TINYLM), False)
    header, fm = view.table.horizontalHeader(), view.table.fontMetrics()
    longest = max(
        fm.horizontalAdvance(str(view.proxy.index(r, 0).data()))
        for r in range(view.proxy.rowCount())
    )
    # Its names, not the rest of the window (it took 500 px more than they need).
    assert longest <= header.sectionSize(0) <= longest + 40


@pytest.mark.parametrize("title", ["Calls", "Device self (µs)", "CPU total (µs)"])
def test_a_first_click_on_a_number_column_sorts_largest_first(qtbot, breakdowns_of, title):
    view = _shown(qtbot, breakdowns_of(TINYLM), False)
    col = [c.title for c in view.model.columns].index(title)
    header = view.table.horizontalHeader()
    x = header.sectionViewportPosition(col) + header.sectionSize(col) // 2
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, 5))
    assert header.sortIndicatorSection() == col
    attr = view.model.columns[col].attr
    shown = [
        getattr(view.model.rows[int(view.proxy.index(r, 0).data(ROW_ROLE))], attr)
        for r in range(view.proxy.rowCount())
    ]
    assert shown == sorted(shown, reverse=True) and shown[0] > shown[-1]
    # Text columns still go A to Z first.
    x0 = header.sectionViewportPosition(0) + 10
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x0, 5))
    keys = view.shown_keys()
    assert keys[0].casefold() <= keys[-1].casefold()
