"""The views of one trace, built straight from a trace's analyses: splits, memory, kernels, summary."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt

from gpuviz.analysis.split_plan import plan_split
from gpuviz.gui.qt_load_worker import analyze
from gpuviz.gui.views.memory.qt_memory import QtMemoryView
from gpuviz.gui.views.qt_trace_view import VIEWS, QtTraceView, trace_end_ns
from gpuviz.gui.views.ranks.qt_splits import QtSplitsView
from gpuviz.gui.views.trace.qt_kernels import NAME_ROLE, QtKernelsView, kernel_rows
from gpuviz.gui.views.trace.qt_summary import QtSummaryView
from gpuviz.trace.kineto import load_trace
from gpuviz.trace.model import Kind


def _events(path: Path) -> list[dict]:
    with gzip.open(path, "rt") as fh:
        data = json.load(fh)
    return data["traceEvents"] if isinstance(data, dict) else data


@pytest.fixture(scope="module")
def analyses_of(data_dir):
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = analyze(load_trace(str(data_dir / name)))
        return cache[name]

    return get


def test_splits_view_stacks_15_15_three_times_then_5_5(qtbot, analyses_of):
    a = analyses_of("dataparallel_seed_2gpu.json.gz")
    view = QtSplitsView(a.splits)
    qtbot.addWidget(view)
    # What the recording ran (tests/data README: replica inputs 15/15 three times, then 5/5).
    assert view.rows_per_step() == {0: [15, 15, 15, 5], 1: [15, 15, 15, 5]}
    assert view.rows_plot.isVisible() or not view.isVisible()
    gpu = view.gpu_ms_per_step()
    assert set(gpu) == {0, 1}
    assert all(len(v) == 4 and min(v) >= 0 for v in gpu.values())
    assert sum(sum(v) for v in gpu.values()) > 0
    # Stacked: device 1's bars start where device 0's end.
    y0 = view.rows_bars[1].opts["y0"]
    assert list(np.asarray(y0, dtype=float)) == [15, 15, 15, 5]


def test_splits_view_says_when_there_are_no_dataparallel_steps(qtbot, analyses_of):
    view = QtSplitsView(analyses_of("streams_overlap.json.gz").splits)
    qtbot.addWidget(view)
    view.show()
    assert "no DataParallel steps" in view.status.text()
    assert not view.graphics.isVisible()
    assert view.rows_per_step() == {}


@pytest.mark.parametrize(("batch", "gpus"), [(30, 8), (10, 8), (30, 4), (10, 4), (7, 7)])
def test_what_if_panel_plans_and_marks_idle_gpus(qtbot, batch, gpus):
    view = QtSplitsView([])
    qtbot.addWidget(view)
    view.gpus_spin.setValue(gpus)
    view.batch_spin.setValue(batch)
    # Tensor.chunk, worked out here: chunks of ceil(batch / gpus) rows until the batch runs out.
    size = -(-batch // gpus)
    expected = [max(0, min(size, batch - i * size)) for i in range(gpus)]
    assert view.plan == expected == plan_split(batch, gpus)
    idle = expected.count(0)
    text = view.plan_label.text()
    if idle:
        assert f"{idle} GPU{'s' if idle != 1 else ''} idle" in text
    else:
        assert "idle" not in text


def test_memory_view_plots_each_device_and_marks_the_peak(qtbot, analyses_of, data_dir):
    a = analyses_of("streams_overlap.json.gz")
    view = QtMemoryView(a.memory, trace_end_ns(a.trace))
    qtbot.addWidget(view)
    # The peak, from the raw [memory] events of device 0.
    mem = [
        e["args"]
        for e in _events(data_dir / "streams_overlap.json.gz")
        if e.get("name") == "[memory]" and e["args"].get("Device Type") == 1
    ]
    peak = max(m["Total Allocated"] for m in mem)
    assert [(label, b) for label, _, b in view.peaks] == [("cuda:0", peak)]
    import pyqtgraph as pg

    curves = [c for c in view.plot.getPlotItem().listDataItems() if isinstance(c, pg.PlotDataItem)]
    assert len(curves) == 2  # allocated and reserved
    assert f"{peak / (1 << 20):.2f} MiB" in view.info.text()


def test_memory_view_empty_state(qtbot, analyses_of):
    a = analyses_of("dataparallel_seed_2gpu.json.gz")
    view = QtMemoryView(a.memory, trace_end_ns(a.trace))
    qtbot.addWidget(view)
    assert a.memory == []
    assert "no GPU [memory] events" in view.info.text()


def test_kernels_view_sorts_and_filters(qtbot, analyses_of, data_dir):
    a = analyses_of("dataparallel_seed_2gpu.json.gz")
    view = QtKernelsView(a.trace, kernel_rows(a.kernels))
    qtbot.addWidget(view)
    kernels = [
        e
        for e in _events(data_dir / "dataparallel_seed_2gpu.json.gz")
        if e.get("ph") == "X" and e.get("cat") == "kernel"
    ]
    names = {e["name"] for e in kernels}
    assert view.proxy.rowCount() == len(names)
    # Sort by count, largest first: the first row has the most launches.
    view.table.sortByColumn(1, Qt.SortOrder.DescendingOrder)
    first = view.proxy.index(0, 0).data(NAME_ROLE)
    counts = {n: sum(1 for e in kernels if e["name"] == n) for n in names}
    assert counts[first] == max(counts.values())
    assert view.proxy.index(0, 1).data() == f"{max(counts.values()):,}"
    # Filter, case-insensitive, on the name.
    view.filter_edit.setText("NCCL")
    assert view.proxy.rowCount() == sum(1 for n in names if "nccl" in n.lower())
    assert "of" in view.count_label.text()
    view.filter_edit.setText("")
    assert view.proxy.rowCount() == len(names)


def test_kernels_view_total_and_share_columns(qtbot, analyses_of, data_dir):
    a = analyses_of("streams_overlap.json.gz")
    view = QtKernelsView(a.trace, kernel_rows(a.kernels))
    qtbot.addWidget(view)
    kernels = [
        e
        for e in _events(data_dir / "streams_overlap.json.gz")
        if e.get("ph") == "X" and e.get("cat") == "kernel"
    ]
    total_us = {}
    for e in kernels:
        total_us[e["name"]] = total_us.get(e["name"], 0.0) + e["dur"]
    row = {r["name"]: r for r in view.model.rows}
    for name, us in total_us.items():
        assert row[name]["total_us"] == pytest.approx(us, abs=0.01)
        assert row[name]["share"] == pytest.approx(us / sum(total_us.values()), rel=1e-3)


def test_summary_view_lists_devices_and_streams(qtbot, analyses_of, data_dir):
    a = analyses_of("streams_overlap.json.gz")
    view = QtSummaryView(a.summary.to_json())
    qtbot.addWidget(view)
    text = view.text()
    assert "Devices" in text and "Streams" in text
    streams = {
        e["args"]["stream"]
        for e in _events(data_dir / "streams_overlap.json.gz")
        if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")
    }
    for s in streams:
        assert f"\tcuda:0\t{s}\t" in text or f"cuda:0\n{s}\n" in text or str(s) in text
    assert "No GPU events" not in text


def test_summary_view_says_plainly_when_there_are_no_gpu_events(qtbot, analyses_of, data_dir):
    name = "hta__cupti_profiler__benchmark_result_924719_1679055439_trace.json.gz"
    raw = _events(data_dir / name)
    assert not [
        e for e in raw if str(e.get("cat", "")).lower() in ("kernel", "gpu_memcpy", "gpu_memset")
    ]
    view = QtSummaryView(analyses_of(name).summary.to_json())
    qtbot.addWidget(view)
    assert "This trace has no GPU events" in view.text()


def test_trace_view_has_the_five_views_and_switches(qtbot, analyses_of):
    view = QtTraceView(analyses_of("worker_thread.json.gz"), "worker_thread")
    qtbot.addWidget(view)
    assert [view.tabs.tabText(i).lower() for i in range(view.tabs.count())] == list(VIEWS)
    with qtbot.waitSignal(view.viewChanged) as changed:
        view.set_view("summary")
    assert changed.args == ["summary"]
    assert view.current_view() == "summary"


def test_a_failed_analysis_shows_in_its_view_only(qtbot, analyses_of):
    from dataclasses import replace

    a = replace(analyses_of("worker_thread.json.gz"), kernels=None, errors={"kernels": "boom"})
    view = QtTraceView(a, "x")
    qtbot.addWidget(view)
    labels = [w.text() for w in view.kernels_view.findChildren(type(view.kernels_view.count_label))]
    assert any("could not be computed: boom" in t for t in labels)
    assert "Summary" in view.summary_view.text()


def _click_slice(qtbot, timeline, row: int) -> None:
    s = timeline.trace.slices
    start, dur = int(s.start_ns[row]), int(s.dur_ns[row])
    timeline.set_view_range(start - 4 * dur - 1000, start + 5 * dur + 1000)
    qtbot.wait(60)  # the redraw timer
    pos = timeline.slice_position(row)
    assert pos is not None
    with qtbot.waitSignal(timeline.sliceClicked, timeout=2000) as sig:
        qtbot.mouseClick(timeline.canvas, Qt.MouseButton.LeftButton, pos=pos.toPoint())
    assert sig.args == [row]


def test_clicking_a_kernel_on_the_timeline_selects_its_row_in_the_kernels_view(
    qtbot, analyses_of, data_dir
):
    name = "tl__torch_compile_triton__trace.json.gz"
    events = _events(data_dir / name)
    kernels = [e for e in events if e.get("cat") == "kernel"]
    names = sorted({e["name"] for e in kernels})
    assert len(names) >= 2
    view = QtTraceView(analyses_of(name), "triton")
    qtbot.addWidget(view)
    view.resize(1400, 800)
    view.show()
    view.set_view("timeline")
    w = view.timeline
    s, trace = w.trace.slices, w.trace

    def first_row(kernel_name: str, cat: int = Kind.KERNEL) -> int:
        return next(
            r for r in range(len(s)) if s.kind[r] == cat and trace.name_of(r) == kernel_name
        )

    for kernel_name in names[:2]:
        _click_slice(qtbot, w, first_row(kernel_name))
        # Only that kernel's row is selected (a second click replaces the first)...
        assert view.kernels_view.selected_names() == [kernel_name]
        # ...and, as a selection in the table does, its slices are highlighted: as many as
        # the file has kernel events of that name.
        want = sum(1 for e in kernels if e["name"] == kernel_name)
        got = w.highlighted_rows()
        assert len(got) == want
        assert {trace.name_of(int(r)) for r in got} == {kernel_name}

    # A filter that hides the kernel is cleared so that its row can be selected.
    view.kernels_view.filter_edit.setText("no kernel is called this")
    assert view.kernels_view.proxy.rowCount() == 0
    _click_slice(qtbot, w, first_row(names[0]))
    assert view.kernels_view.filter_edit.text() == ""
    assert view.kernels_view.selected_names() == [names[0]]

    # A click on something that is not a kernel (a launch) leaves the table as it was.
    launch = next(
        e["name"] for e in events if e.get("cat") == "cuda_runtime" and "Launch" in e["name"]
    )
    _click_slice(qtbot, w, first_row(launch, Kind.RUNTIME))
    assert view.kernels_view.selected_names() == [names[0]]


def test_placeholder_timeline_signals_carry_64_bit_times(qtbot, analyses_of):
    from gpuviz.gui.views.trace.qt_timeline_slot import QtTimelinePlaceholder

    w = QtTimelinePlaceholder(analyses_of("worker_thread.json.gz").trace, "test")
    qtbot.addWidget(w)
    far = 5 * 10**9 + 123  # 5 s in ns: past 2**31
    with qtbot.waitSignal(w.viewRangeChanged) as sig:
        w.set_view_range(far, far + 10**9)
    assert sig.args == [far, far + 10**9]
    with qtbot.waitSignal(w.rangeSelected) as sig:
        w.select_range(far, 2 * far)
    assert sig.args == [far, 2 * far]
