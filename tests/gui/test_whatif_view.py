""" "What if 2× faster?" on a row of the Operators view (issue 52): the answer the CLI gives,
and the predicted critical path outlined on the Timeline."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from gpuviz.cli import main
from gpuviz.gui.views.ops.breakdown_model import compute_breakdowns
from gpuviz.gui.views.ops.qt_operators import QtOperatorsView
from gpuviz.trace.kineto import load_trace

TINYLM = "attribution/tinylm_train.json.gz"


def test_what_if_an_op_were_2x_faster(qtbot, data_dir, capsys) -> None:
    bd = compute_breakdowns(load_trace(str(data_dir / TINYLM)))
    view = QtOperatorsView(bd)
    qtbot.addWidget(view)
    assert not view.whatif.button.isEnabled()  # nothing selected
    assert view.select_key("aten::mm")
    assert view.whatif.button.isEnabled()
    view.whatif.button.click()
    text = view.whatif.text()
    assert "predicted by replay with aten::mm 2× faster" in text
    # The CLI's prediction of the same step and change.
    argv = ["whatif", str(data_dir / TINYLM), "--faster", "aten::mm=2", "--json"]
    assert main(argv) == 0
    j = json.loads(capsys.readouterr().out)
    assert j["predicted_step_us"] < j["measured_step_us"]
    assert f"Step {j['step']}: {j['measured_step_us'] / 1000:.3f} ms recorded" in text
    assert f"{j['predicted_step_us'] / 1000:.3f} ms predicted" in text
    # "Outline path" asks for the predicted path's slices on the Timeline.
    assert view.whatif.outline.isEnabled()
    with qtbot.waitSignal(view.showKernels) as blocker:
        view.whatif.outline.click()
    rows = blocker.args[0]
    assert len(rows) > 0 and np.all(rows >= 0)
    # Grouped by shape, the button waits for a row by name.
    view.shape_box.setChecked(True)
    view.select_row(0)
    assert not view.whatif.button.isEnabled()


def test_what_if_a_module_were_2x_faster(qtbot, data_dir) -> None:
    from gpuviz.gui.views.ops.qt_modules import QtModulesView

    bd = compute_breakdowns(load_trace(str(data_dir / TINYLM)))
    view = QtModulesView(bd)
    qtbot.addWidget(view)
    key = "TinyLM_0.Block_1.Attn_1"
    i = next(k for k, r in enumerate(bd.module.rows) if r.key == key)
    assert view._select_node(lambda n: n.row == i)
    assert view.whatif.button.isEnabled()
    view.whatif.button.click()
    assert "predicted by replay with TinyLM_0.Block_1.Attn_1 2× faster" in view.whatif.text()
    # Forward and backward: the GPU work changed is the module's kernels in the step, those
    # "Show on Timeline" outlines (attribution's), backward ones included.
    from gpuviz.analysis.dep_graph import step_graph
    from gpuviz.analysis.whatif import match

    g = step_graph(bd.trace)
    changed = set(g.row[match(bd.trace, g, key) & (g.thread < 0)].tolist())
    kernels = set(view.selected_kernels().tolist()) & set(g.row[g.thread < 0].tolist())
    assert changed == kernels and len(kernels) > 0


def test_the_insights_bar_of_the_critical_path(qtbot, data_dir, capsys) -> None:
    from gpuviz.analysis.advisor import advise
    from gpuviz.gui.views.insights.qt_insights import QtInsightsView

    path = data_dir / "gloo_2rank_h100"
    view = QtInsightsView(advise(load_trace(str(path))))
    qtbot.addWidget(view)
    assert view.path_bar.parts() == []  # nothing computed until asked
    view.path_bar.button.click()
    parts = dict(view.path_bar.parts())
    # The figures of gpuviz critical-path for the same (median) step.
    assert main(["critical-path", str(path), "--json"]) == 0
    j = json.loads(capsys.readouterr().out)
    assert parts == {c: v["us"] for c, v in j["by_category"].items()}
    assert sum(parts.values()) == pytest.approx(j["span_us"], abs=0.01)
    assert view.path_bar.label.text().startswith(f"Step {j['step']}: ")


def test_what_if_a_kernel_were_2x_faster(qtbot, data_dir) -> None:
    from gpuviz.analysis.dep_graph import step_graph
    from gpuviz.analysis.kernels import kernel_table
    from gpuviz.analysis.whatif import match
    from gpuviz.gui.views.trace.qt_kernels import QtKernelsView, kernel_rows

    trace = load_trace(str(data_dir / "streams_overlap.json.gz"))
    view = QtKernelsView(trace, kernel_rows(kernel_table(trace)))
    qtbot.addWidget(view)
    name = max(view.model.rows, key=lambda r: r["total_us"])["name"]
    assert view.select_name(name)
    view.whatif.button.click()
    assert f"predicted by replay with {name} 2× faster" in view.whatif.text()
    g = step_graph(trace)
    hits = match(trace, g, name)
    assert hits.any() and {trace.name_of(int(r)) for r in g.row[hits]} == {name}
