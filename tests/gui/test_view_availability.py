"""Tabs with nothing for a trace are disabled with their reason, a new trace opens on Insights,
and a CPU-only trace has no empty MFU chart (issue 47, item 22)."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings

from gpuviz.gui.qt_main_window import MainWindow
from gpuviz.gui.views.qt_trace_view import VIEWS

LOAD_TIMEOUT_MS = 60_000


@pytest.fixture
def window(qtbot, tmp_path):
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    win = MainWindow(settings=settings, modal_errors=False, remember_recent=False)
    qtbot.addWidget(win)
    win.resize(1280, 800)
    win.show()
    yield win
    win.close()


def _open(qtbot, win: MainWindow, path: Path):
    with qtbot.waitSignal(win.idle, timeout=LOAD_TIMEOUT_MS):
        win.open_trace(str(path))
    assert not win.errors
    return win.trace_views()[-1]


def _disabled(view) -> dict[str, str]:
    return {
        v: view.tabs.tabToolTip(i) for i, v in enumerate(VIEWS) if not view.tabs.isTabEnabled(i)
    }


def _events(path: Path) -> list[dict]:
    files = sorted(path.glob("*.json.gz")) if path.is_dir() else [path]
    out: list[dict] = []
    for f in files:
        data = json.loads(gzip.decompress(f.read_bytes()))
        out += data["traceEvents"] if isinstance(data, dict) else data
    return out


def test_a_one_rank_training_trace_disables_splits_memory_and_ranks(qtbot, window, data_dir):
    path = data_dir / "attribution" / "tinylm_train.json.gz"
    ev = _events(path)
    # The hand count: one process, no [memory] events, no DataParallel range, kernels and stacks.
    assert len({e.get("pid") for e in ev if e.get("cat") == "cpu_op"}) == 1
    assert not any(e.get("name") == "[memory]" for e in ev)
    assert not any("DataParallel" in str(e.get("name")) for e in ev)
    view = _open(qtbot, window, path)
    off = _disabled(view)
    assert set(off) == {"splits", "memory", "ranks"}
    assert all(off.values()) and all("\n" not in why for why in off.values())
    assert "profile_memory" in off["memory"] and "per-rank" in off["ranks"]
    assert view.current_view() == "insights"


def test_a_cpu_only_folder_of_ranks_keeps_ranks_and_has_no_kernel_views(qtbot, window, data_dir):
    path = data_dir / "gloo_4rank_cpu"
    assert not any(e.get("cat") == "kernel" for e in _events(path))
    view = _open(qtbot, window, path)
    off = _disabled(view)
    assert "ranks" not in off and {"kernels", "roofline"} <= set(off)
    # No MFU without GPU work: no chart at all, rather than an empty one.
    ins = view.insights_view
    ins.finish_build()
    assert ins.mfu is None or ins.mfu.mean() is None
    assert not ins._has_mfu and not ins._mfu_placed


def test_an_allocator_snapshot_has_only_its_memory_view(qtbot, window, data_dir):
    view = _open(qtbot, window, data_dir / "snapshots" / "snap_train.pickle.gz")
    off = _disabled(view)
    assert set(off) == set(VIEWS) - {"memory"}
    assert view.current_view() == "memory"


def test_a_new_trace_opens_on_insights_not_on_the_last_view_used(qtbot, window, data_dir):
    first = _open(qtbot, window, data_dir / "gloo_4rank_cpu")
    first.tabs.setCurrentIndex(VIEWS.index("ranks"))  # as a click on the tab
    assert first.current_view() == "ranks"
    second = _open(qtbot, window, data_dir / "streams_overlap.json.gz")
    assert second.current_view() == "insights"
    assert first.current_view() == "ranks"  # the other tab keeps its view


def test_open_view_falls_back_to_insights_where_the_trace_has_nothing(qtbot, window, data_dir):
    window.set_open_view("ranks")  # `gpuviz open --view ranks`
    ranks = _open(qtbot, window, data_dir / "gloo_4rank_cpu")
    assert ranks.current_view() == "ranks"
    one = _open(qtbot, window, data_dir / "streams_overlap.json.gz")
    assert one.current_view() == "insights"
