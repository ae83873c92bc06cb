"""A rank folder opened from its ranks' reductions (issue 51): the Ranks view first, with no
rank's events loaded, and one rank loaded (from its cache entry) when the user drills down.

The heatmap and the straggler are checked against the folder read whole (``analyze`` of
``load_trace``: every event), a different path from the reductions; the drill-down against the
rank's own file (its slice at the collective's arrival, on the rank's own clock).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QSettings

from gpuviz.analysis import rank_reduction_map
from gpuviz.gui.qt_load_worker import analyze
from gpuviz.gui.qt_main_window import MainWindow
from gpuviz.gui.views.ranks.rank_figures import heatmap_ms
from gpuviz.trace.cache import from_cache
from gpuviz.trace.kineto import import_trace, load_trace

LOAD_TIMEOUT_MS = 60_000
DATA = Path(__file__).parent.parent / "data"


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv(rank_reduction_map.ENV, "1")  # the user asked: any rank folder
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    w = MainWindow(settings=settings, modal_errors=False, remember_recent=False)
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    w.set_open_view("ranks")
    yield w
    if w.is_busy():
        with qtbot.waitSignal(w.idle, timeout=LOAD_TIMEOUT_MS):
            w.cancel_loading()
    w.close()


def _open(qtbot, window, path):
    with qtbot.waitSignal(window.traceOpened, timeout=LOAD_TIMEOUT_MS) as opened:
        window.open_trace(str(path))
    return opened.args[0]


@pytest.mark.parametrize("name", ["gloo_4rank_cpu", "ddp_nccl_4rank"])
def test_the_ranks_view_opens_without_events(qtbot, window, tmp_path, monkeypatch, name) -> None:
    from gpuviz.trace import kineto

    folder = tmp_path / name
    shutil.copytree(DATA / name, folder)
    loaded: list[str] = []
    real = kineto.load_trace
    monkeypatch.setattr(
        kineto, "load_trace", lambda p, **kw: loaded.append(str(p)) or real(p, **kw)
    )
    view = _open(qtbot, window, folder)
    monkeypatch.setattr(kineto, "load_trace", real)
    assert loaded == []  # the folder was not read whole
    assert view.analyses.reduced is not None
    assert len(view.trace.slices) == 0 and view.trace.event_count == 0  # no rank's events
    assert view.current_view() == "ranks"
    assert "timeline" in view.unavailable and "ranks" not in view.unavailable
    ranks = view.ranks_view
    whole = analyze(load_trace(str(folder))).ranks
    got = ranks.heatmap_values()
    np.testing.assert_array_equal(got, heatmap_ms(whole.matrix, ranks.measure()))
    assert ranks.straggler_rank() == (None if whole.straggler is None else whole.straggler.rank)
    assert "reductions of 4 ranks" in ranks.status.text()
    if name == "gloo_4rank_cpu":
        assert ranks.straggler_rank() == 2  # planted: rank 2 computes 20 ms more per step


def test_a_collective_drills_down_to_its_last_rank(qtbot, window, tmp_path) -> None:
    folder = tmp_path / "job"
    shutil.copytree(DATA / "nccl_2rank_h200", folder)
    view = _open(qtbot, window, folder)
    ranks = view.ranks_view
    with qtbot.waitSignal(window.traceOpened, timeout=LOAD_TIMEOUT_MS) as opened:
        target = ranks.click_collective(0)
    assert target is not None
    one = opened.args[0]
    assert window.tabs.count() == 2
    assert [r.rank for r in one.trace.ranks] == [target.rank]  # that rank alone
    assert from_cache(one.trace)  # from the entry its reduction left, not imported again
    assert one.current_view() == "timeline"
    # The collective's part, on the rank's own clock, is where the rank's file has it.
    own = import_trace(str(folder / f"rank-{target.rank}.json.gz")).prepare()
    off = view.analyses.reduced.offset_ns[target.rank]
    assert int(own.slices.start_ns[target.slice_row]) >= target.t0_ns - off
    t0, t1 = one.timeline.view_range()
    assert t0 <= target.t0_ns - off and target.t1_ns - off <= t1
    assert t1 - t0 < one.end_ns  # zoomed in: the shift was applied, not the whole trace shown


def test_open_rank_loads_that_rank_whole(qtbot, window, tmp_path) -> None:
    folder = tmp_path / "job"
    shutil.copytree(DATA / "gloo_4rank_cpu", folder)
    view = _open(qtbot, window, folder)
    with qtbot.waitSignal(window.traceOpened, timeout=LOAD_TIMEOUT_MS) as opened:
        view.ranks_view.open_rank(3)
    one = opened.args[0]
    assert [r.rank for r in one.trace.ranks] == [3]
    assert len(one.trace.slices) > 0


@pytest.mark.parametrize(("flag", "value"), [("--ranks-reduced", "1"), ("--no-ranks-reduced", "0")])
def test_open_passes_the_users_choice_to_the_loader(monkeypatch, flag, value) -> None:
    from gpuviz.cli import build_parser
    from gpuviz.commands import open as open_command
    from gpuviz.gui import app as gui_app

    monkeypatch.delenv(rank_reduction_map.ENV, raising=False)
    seen: list[bool] = []
    monkeypatch.setattr(
        gui_app,
        "run_app",
        lambda paths, **kw: seen.append(rank_reduction_map.wants_reduction(paths[0])) or 0,
    )
    args = build_parser().parse_args(["open", str(DATA / "gloo_4rank_cpu"), flag])
    assert open_command.main(args) == 0
    assert seen == [value == "1"]  # a 4-rank folder: reduced only when asked


def test_screenshot_of_a_reduced_folder(tmp_path) -> None:
    import subprocess
    import sys

    out = tmp_path / "ranks.png"
    folder = DATA / "gloo_4rank_cpu"
    args = ["--ranks-reduced", "--view", "ranks", "--screenshot", str(out), "--size", "1280x800"]
    r = subprocess.run(
        [sys.executable, "-m", "gpuviz", "open", str(folder), *args],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert r.returncode == 0, r.stderr
    assert out.stat().st_size > 10_000


def test_a_bad_rank_is_named_in_the_view_and_the_others_shown(qtbot, window, tmp_path) -> None:
    folder = tmp_path / "job"
    shutil.copytree(DATA / "gloo_4rank_cpu", folder)
    (folder / "rank-4.json").write_text("{not json")
    view = _open(qtbot, window, folder)
    ranks = view.ranks_view
    assert window.errors == []  # the tab opened: the others' figures stand
    assert "rank-4.json" in ranks.status.text() and "left out" in ranks.status.text()
    assert ranks.heatmap_values().shape[0] == 4
    assert ranks.straggler_rank() == 2


def test_cancel_of_a_reduced_open_raises_cancelled(tmp_path) -> None:
    from gpuviz.gui.qt_load_worker import ImportCancelled, load_reduced

    with pytest.raises(ImportCancelled):
        load_reduced(str(DATA / "ddp_nccl_4rank"), cancelled=lambda: True)


def test_progress_says_ranks_done(tmp_path) -> None:
    from gpuviz.gui.qt_load_worker import load_reduced

    folder = tmp_path / "job"
    shutil.copytree(DATA / "ddp_nccl_4rank", folder)
    seen: list[str] = []
    load_reduced(str(folder), lambda f, what: seen.append(what))
    assert seen[-1] == "ranks reduced: 4 of 4"
