"""How responsive the app stays while it runs a large profiled workload (issue 6).

Runs ``loops`` with N=100k and the profiler on, on the CPU, inside the app, offscreen. From Run
until the run's result is shown (its trace tab opened), a heartbeat ``QTimer`` on the GUI thread
measures the longest stall (the largest gap between two ticks, less the timer's interval), and
the live plots' redraw counters give their update rates.

Targets: longest stall <= 50 ms; memory plot >= 10 Hz.

Usage::

    .venv/bin/python benchmarks/bench_live.py [--n 100000] [--steps 2] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

HEARTBEAT_MS = 5
STALL_TARGET_MS = 50.0
MEMORY_TARGET_HZ = 10.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QElapsedTimer, QEventLoop, QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    from gpuviz.gui.qt_main_window import MainWindow
    from gpuviz.gui.run.qt_run_controller import install_run_panel

    _app = QApplication.instance() or QApplication(["bench_live"])  # kept alive to the end
    tmp = Path(tempfile.mkdtemp(prefix="gpuviz-bench-live-"))
    settings = QSettings(str(tmp / "settings.ini"), QSettings.Format.IniFormat)
    win = MainWindow(settings=settings, modal_errors=False, remember_recent=False)
    ctl = install_run_panel(win, runs_dir=tmp / "runs", gpus=[], restore=False)
    win.resize(1600, 900)
    win.show()
    # Let the window paint itself once and settle, as it has when a user presses Run: the
    # first paint of a fresh window is not part of the run.
    settle = QEventLoop()
    QTimer.singleShot(1000, settle.quit)
    settle.exec()

    # The heartbeat: the longest gap between two ticks is the GUI thread's longest stall.
    clock = QElapsedTimer()
    gaps: list[float] = []
    last = [0.0]

    beat_at: list[float] = []

    def beat() -> None:
        now = clock.nsecsElapsed() / 1e6
        gaps.append(now - last[0])
        beat_at.append(time.monotonic())
        last[0] = now

    heart = QTimer()
    heart.setInterval(HEARTBEAT_MS)
    heart.timeout.connect(beat)

    marks: dict[str, float] = {}
    loop = QEventLoop()
    ctl.runEnded.connect(lambda _e: marks.setdefault("ended", time.monotonic()))
    ctl.resultShown.connect(lambda _v: (marks.setdefault("shown", time.monotonic()), loop.quit()))
    first_step = []
    ctl.eventReceived.connect(
        lambda e: (
            first_step.append(time.monotonic())
            if type(e).__name__ == "StepTimed" and not first_step
            else None
        )
    )

    request = {
        "workload": "loops",
        "params": {"n": args.n},
        "device": "cpu",
        "steps": args.steps,
        "profile": True,
    }
    load0 = os.getloadavg()[0]
    clock.start()
    last[0] = 0.0
    heart.start()
    t0 = time.monotonic()
    if not ctl.start_run(request):
        print(f"bench_live: the run did not start: {ctl.panel.message.text()}", file=sys.stderr)
        return 1
    loop.exec()
    t_end = marks.get("shown", time.monotonic())
    # Informational, past the target's window: the Timeline then builds its level of detail
    # in a thread of its own; keep beating until it is ready.
    views = win.trace_views()
    timeline = views[-1].timeline if views else None
    if timeline is not None and hasattr(timeline, "lod_ready"):
        deadline = time.monotonic() + 120

        def check() -> None:
            worker = getattr(timeline, "_worker", None)
            busy = worker is not None and worker.isRunning()
            if (timeline.lod_ready and not busy) or time.monotonic() > deadline:
                loop.quit()

        poll = QTimer()
        poll.setInterval(20)
        poll.timeout.connect(check)
        poll.start()
        loop.exec()
        poll.stop()
    t_ready = time.monotonic()
    heart.stop()
    end = ctl.terminal
    plots = ctl.live_plots
    live = ctl.live
    assert live is not None
    run_s = marks.get("ended", t_end) - t0
    total_s = t_end - t0
    mem = live.memory.get("cpu")
    app_samples = int(mem.from_app.view().sum()) if mem is not None else 0
    engine_samples = (len(mem) - app_samples) if mem is not None else 0
    stalls = sorted(g - HEARTBEAT_MS for g in gaps)
    t_ended = marks.get("ended", t_end)
    in_window = [(g, t) for g, t in zip(gaps, beat_at) if t <= t_end]
    stalls = sorted(g - HEARTBEAT_MS for g, _ in in_window)
    during_run = [g - HEARTBEAT_MS for g, t in in_window if t <= t_ended]
    after_run = [g - HEARTBEAT_MS for g, t in in_window if t > t_ended]
    lod_phase = [g - HEARTBEAT_MS for g, t in zip(gaps, beat_at) if t > t_end]
    worst = sorted(in_window, reverse=True)[:5]
    out = {
        "machine": f"{platform.node()} ({os.cpu_count()} cores, {platform.machine()})",
        "load_average_1m_before_after": [round(load0, 2), round(os.getloadavg()[0], 2)],
        "workload": f"loops n={args.n} steps={args.steps} cpu, profiled, child process",
        "end": type(end).__name__,
        "run_s": round(run_s, 2),
        "until_result_shown_s": round(total_s, 2),
        "longest_stall_ms": round(stalls[-1], 1) if stalls else None,
        "p99_stall_ms": round(stalls[int(0.99 * (len(stalls) - 1))], 1) if stalls else None,
        "longest_stall_during_run_ms": round(max(during_run), 1) if during_run else None,
        "longest_stall_opening_result_ms": round(max(after_run), 1) if after_run else None,
        "worst_stalls_ms_at_s": [(round(g - HEARTBEAT_MS, 1), round(t - t0, 2)) for g, t in worst],
        "heartbeats": len(in_window),
        "after_shown_until_timeline_ready_s": round(t_ready - t_end, 2),
        "longest_stall_after_shown_ms (informational)": round(max(lod_phase), 1)
        if lod_phase
        else None,
        "memory_plot_hz_run": round(plots.update_rates_hz("memory", t0, t0 + run_s), 1),
        "memory_plot_hz_until_shown": round(plots.update_rates_hz("memory", t0, t_end), 1),
        "step_plot_redraws": plots.redraws["steps"],
        "memory_samples_engine": engine_samples,
        "memory_samples_app_read": app_samples,
        "steps_timed": live.steps_timed,
        "trace": live.trace_path,
        "trace_mb": round(os.path.getsize(live.trace_path) / 2**20, 1)
        if live.trace_path and os.path.exists(live.trace_path)
        else None,
    }
    ok_stall = out["longest_stall_ms"] is not None and out["longest_stall_ms"] <= STALL_TARGET_MS
    ok_mem = out["memory_plot_hz_run"] >= MEMORY_TARGET_HZ
    out["targets_met"] = {"stall<=50ms": ok_stall, "memory>=10Hz": ok_mem}
    win.close()
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        for k, v in out.items():
            print(f"{k:>28}: {v}")
    return 0 if out["end"] == "Finished" else 1


if __name__ == "__main__":
    sys.exit(main())
