"""Views built over several event-loop turns (gpuviz.gui.views.qt_staged): the Insights and
Ranks views return from their constructors with their text there and their charts queued, draw
them in later turns, finish them when asked, and survive being deleted first (issue 25)."""

from __future__ import annotations

from pathlib import Path

import pyqtgraph as pg
import shiboken6
from PySide6.QtCore import QObject
from PySide6.QtWidgets import QApplication

from gpuviz.analysis.advisor import advise
from gpuviz.gui.qt_load_worker import analyze
from gpuviz.gui.qt_window_exports import export_view
from gpuviz.gui.views.insights.qt_insights import QtInsightsView
from gpuviz.gui.views.qt_staged import StagedBuild
from gpuviz.gui.views.qt_trace_view import QtTraceView
from gpuviz.gui.views.ranks.qt_ranks import QtRanksView
from gpuviz.trace.kineto import load_trace

DATA = Path(__file__).parent.parent / "data"


def _bar_items(plot: pg.PlotItem) -> list[pg.BarGraphItem]:
    return [i for i in plot.items if isinstance(i, pg.BarGraphItem)]


def test_insights_shows_its_findings_at_once_and_draws_its_charts_in_later_turns(qtbot) -> None:
    advice = advise(load_trace(DATA / "ddp_2rank"))
    view = QtInsightsView(advice, "ddp_2rank")
    qtbot.addWidget(view)
    assert view.build_pending()
    assert view.tree.topLevelItemCount() == len(advice.findings) > 0
    assert view._plots == []  # no plot made in the constructor's turn
    qtbot.waitUntil(lambda: not view.build_pending())
    # Drawn by the queued steps, not by reading them: the GPU parts stacked, the CPU split.
    assert len(_bar_items(view._plots[0])) == 5
    assert len(_bar_items(view._plots[1])) == 2
    assert view.bars is not None and len(view.bars) == 6


def test_ranks_view_draws_its_heatmap_and_collectives_in_later_turns(qtbot) -> None:
    a = analyze(load_trace(str(DATA / "ddp_2rank")))
    view = QtRanksView(a.ranks, len(a.trace.ranks))
    qtbot.addWidget(view)
    assert view.build_pending()
    assert view._image is None and view._worst is None
    qtbot.waitUntil(lambda: not view.build_pending())
    assert view._image is not None and view._worst is not None
    assert view._table.rowCount() == len(view._worst)


def _turns(view: StagedBuild, look: object) -> list[object]:
    """Run ``view``'s queued steps one a turn (as the event loop does), ``look()`` after each."""
    seen = []
    while view.build_pending():
        view._run_next_step()
        seen.append(look())  # type: ignore[operator]
    return seen


def test_insights_draws_a_chart_a_turn_and_paints_them_once_all_are_drawn(qtbot) -> None:
    # All three charts in one turn held the GUI thread 87-89 ms as a 64-rank folder opened on
    # a 16-core host; a paint of a plot still empty would size its axis for the wrong labels.
    view = QtInsightsView(advise(load_trace(DATA / "ddp_2rank")), "ddp_2rank")
    qtbot.addWidget(view)
    seen = _turns(
        view,
        lambda: (
            tuple(len(_bar_items(p)) for p in view._plots[:2]),
            view.graphics.updatesEnabled(),
        ),
    )
    assert ((5, 0), False) in seen  # the GPU chart drawn, the CPU chart in a later turn
    assert [s for s in seen if s[1]] == [((5, 2), True)]  # painted only at the end
    assert len(seen) >= 7  # three plots made, then three charts drawn, then painted


def test_ranks_makes_its_colour_bar_a_turn_before_the_values(qtbot) -> None:
    a = analyze(load_trace(str(DATA / "ddp_2rank")))
    view = QtRanksView(a.ranks, len(a.trace.ranks))
    qtbot.addWidget(view)
    seen = _turns(view, lambda: (view._bar is not None, view._values.size > 0))
    assert seen[0] == (True, False)  # the colour bar (half the heatmap's turn) alone first
    assert seen[-1] == (True, True)


def test_reading_a_chart_finishes_the_build_in_this_turn(qtbot) -> None:
    view = QtInsightsView(advise(load_trace(DATA / "ddp_2rank")), "ddp_2rank")
    qtbot.addWidget(view)
    assert view.build_pending()
    assert len(_bar_items(view.gpu_plot)) == 5  # no event loop ran
    assert not view.build_pending()


def test_an_exported_view_just_opened_is_drawn_whole(qtbot, tmp_path) -> None:
    tab = QtTraceView(analyze(load_trace(str(DATA / "ddp_2rank"))), "t")
    qtbot.addWidget(tab)
    tab.set_view("ranks")
    assert tab.ranks_view.build_pending()
    export_view(tab, "ranks", str(tmp_path / "ranks.png"))
    assert not tab.ranks_view.build_pending()
    assert (tmp_path / "ranks.png").stat().st_size > 0


def test_a_view_deleted_before_its_steps_run_drops_them(qtbot) -> None:
    # As a tab closed in the turn it opened: the C++ objects go first, the queued steps are
    # dropped (a step run on a deleted view raises, and pytest-qt fails the test on it).
    ran: list[str] = []

    class Probe(StagedBuild, QObject):
        pass

    probe = Probe()
    probe._stage(lambda: ran.append("first"), lambda: ran.append("second"))
    views = [
        QtInsightsView(advise(load_trace(DATA / "ddp_2rank")), "x"),
        QtRanksView(analyze(load_trace(str(DATA / "ddp_2rank"))).ranks, 2),
    ]
    assert all(v.build_pending() for v in views)
    for obj in (probe, *views):
        shiboken6.delete(obj)
    qtbot.wait(50)  # the turns the steps were queued for
    QApplication.processEvents()
    assert ran == []


def test_the_loading_thread_leaves_the_timeline_its_track_depths() -> None:
    # Computed as the trace loads, off the GUI thread, where the Timeline's first build
    # computed them (part of a 69 ms stall on a 64-rank folder).
    from gpuviz.gui.qt_load_worker import load_and_analyze

    a = load_and_analyze(str(DATA / "ddp_2rank"))
    assert "track_depths" in a.trace.derived


def test_the_event_loop_turns_between_steps(qtbot) -> None:
    # Steps queued as 0 ms single shots (posted events) ran two or three back to back, with
    # no timer or input between them: the split bought nothing. A ticker that is due at every
    # step's end must run between each two.
    import time

    from PySide6.QtCore import QTimer

    class Probe(StagedBuild, QObject):
        pass

    seen: list[str] = []

    def step() -> None:
        seen.append("S")
        time.sleep(0.015)

    ticker = QTimer()
    ticker.setInterval(5)
    ticker.timeout.connect(lambda: seen.append("t"))
    ticker.start()
    probe = Probe()
    probe._stage(*[step] * 5)
    qtbot.waitUntil(lambda: not probe.build_pending(), timeout=5000)
    ticker.stop()
    run = "".join(seen)
    assert run.count("S") == 5 and "SS" not in run, run
