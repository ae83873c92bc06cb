"""The app opens a compiled model's trace with the NAME.compile/ folder beside it (issue 49):
the Modules view's table places the compiled kernels on the model's modules."""

from __future__ import annotations

import json
from pathlib import Path

from gpuviz.analysis.breakdown import breakdown
from gpuviz.analysis.compiled_regions import compile_info_of
from gpuviz.gui.qt_load_worker import load_and_analyze
from tests.analysis import compiled_case as case


def test_load_attaches_the_sibling_folder(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": case.events()}))
    case.write_compile_info(tmp_path / "run.compile")
    out = load_and_analyze(str(path))
    assert compile_info_of(out.trace) is not None
    keys = {r.key for r in breakdown(out.trace, "module").rows}
    assert "OptimizedModule_0.Tiny_0.Block_1.Mlp_1.Linear_1" in keys


def test_operators_row_tooltip_opens_the_compiled_kernel(tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import Qt

    from gpuviz.gui.views.ops.qt_breakdown_table import QtBreakdownTableModel
    from gpuviz.gui.views.ops.qt_operators import COLUMNS

    path = tmp_path / "run.json"
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": case.events()}))
    case.write_compile_info(tmp_path / "run.compile")
    out = load_and_analyze(str(path))
    table = breakdown(out.trace, "op")
    model = QtBreakdownTableModel(COLUMNS)
    model.set_rows(table.rows, 1)
    keys = [r.key for r in table.rows]
    key_col = next(i for i, c in enumerate(COLUMNS) if c.fmt == "text")
    tip = model.data(model.index(keys.index(case.GELU), key_col), Qt.ItemDataRole.ToolTipRole)
    assert "fused ops: erf, mul" in tip and "Block_1.Mlp_1" in tip and "compile-info" in tip
    other = model.data(
        model.index(keys.index("aten::empty_strided"), key_col), Qt.ItemDataRole.ToolTipRole
    )
    assert "compiled" not in other


def test_modules_and_source_views_show_unknown_host_time(tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import Qt

    from gpuviz.gui.views.ops.breakdown_model import module_tree
    from gpuviz.gui.views.ops.qt_breakdown_table import QtBreakdownTableModel
    from gpuviz.gui.views.ops.qt_source import COLUMNS

    path = tmp_path / "run.json"
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": case.events()}))
    case.write_compile_info(tmp_path / "run.compile")
    trace = load_and_analyze(str(path)).trace
    tree = module_tree(breakdown(trace, "module"))
    node = tree[0]
    while node.label != "Block_0":
        node = node.children[0]
    assert node.cpu_ns is None and node.device_ns == (case.DUR["gelu0"] + case.DUR["mm0"]) * 1000
    lines = breakdown(trace, "line")
    model = QtBreakdownTableModel(COLUMNS)
    model.set_rows(lines.rows, 1)
    cpu_col = next(i for i, c in enumerate(COLUMNS) if c.attr == "cpu_total_ns")
    keys = [r.key for r in lines.rows]
    cell = model.index(keys.index(f"{case.MODEL}:6"), cpu_col)
    assert model.data(cell, Qt.ItemDataRole.DisplayRole) == "unknown"
    caller = model.index(keys.index("train.py:10"), cpu_col)
    assert model.data(caller, Qt.ItemDataRole.DisplayRole) != "unknown"


def test_load_takes_a_given_folder(tmp_path: Path) -> None:
    # gpuviz open --compile-info DIR: the folder elsewhere, none beside the trace.
    from gpuviz.gui.qt_main_window import _load_job

    path = tmp_path / "run.json"
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": case.events()}))
    info = case.write_compile_info(tmp_path / "elsewhere")
    assert compile_info_of(load_and_analyze(str(path)).trace) is None
    out = _load_job(str(path), None, None, compile_info=str(info))
    assert compile_info_of(out.trace) is not None
    keys = {r.key for r in breakdown(out.trace, "module").rows}
    assert "OptimizedModule_0.Tiny_0.Block_1.Mlp_1.Linear_1" in keys
