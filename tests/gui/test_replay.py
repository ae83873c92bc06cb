"""Replaying recorded event streams into the live views: the GPU side of the live path, tested
without a GPU.

Every ``tests/data/events/**/*.jsonl`` (recorded by ``gpuviz run --events`` on real GPUs, with
the trace that ``TraceReady`` names beside it) is replayed, and so is a GPU-like stream written
here by hand. Expected figures are counted from the files with plain ``json``.
"""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings

DATA = Path(__file__).resolve().parents[1] / "data"
RECORDED = sorted((DATA / "events").rglob("*.jsonl")) if (DATA / "events").is_dir() else []
TIMEOUT_MS = 120_000


@pytest.fixture
def make_app(qtbot, tmp_path: Path) -> Iterator[Callable[[], Any]]:
    from gpuviz.gui.qt_main_window import MainWindow
    from gpuviz.gui.run.qt_run_controller import install_run_panel

    made: list[Any] = []

    def make() -> Any:
        settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
        win = MainWindow(settings=settings, modal_errors=False, remember_recent=False)
        qtbot.addWidget(win)
        ctl = install_run_panel(win, runs_dir=tmp_path / "runs", gpus=[], restore=False)
        win.resize(1400, 900)
        win.show()
        made.append(win)
        return ctl

    yield make
    for w in made:
        w.close()


def _gpu_stream(folder: Path) -> Path:
    """A DataParallel-like stream on 2 GPUs, with the real 2-GPU trace beside it."""
    folder.mkdir(parents=True)
    shutil.copy(DATA / "dataparallel_seed_2gpu.json.gz", folder / "dp.json.gz")
    devs = ["cuda:0", "cuda:1"]
    lines: list[dict[str, Any]] = [
        {"type": "Started", "schema": 1, "workload": "dataparallel", "params": {"batch": 30},
         "device": "cuda:0", "devices": devs, "torch_version": "2.x"},
        {"type": "Progress", "step": 0, "total": 4},
    ]  # fmt: skip
    rows = [(15, 15), (15, 15), (15, 15), (5, 5)]
    t = 0.0
    for step, split in enumerate(rows):
        for k in range(5):
            t += 0.05
            for i, d in enumerate(devs):
                lines.append(
                    {
                        "type": "MemorySample",
                        "t_s": t,
                        "device": d,
                        "rss_bytes": 10**9,
                        "allocated_bytes": (step + 1) * 2**20 + i,
                        "reserved_bytes": 2**22,
                        "nvml_used_bytes": 2**23 + k,
                    }
                )
        for i, d in enumerate(devs):
            lines.append({"type": "SplitRecorded", "step": step, "replica": i, "device": d,
                          "rows": split[i], "gpu_ms": 0.1 * split[i]})  # fmt: skip
        lines.append({"type": "StepTimed", "step": step, "label": "dataparallel",
                      "wall_ms": 3.0 + step, "gpu_ms": 2.5 + step, "profiled": step == 0})  # fmt: skip
        lines.append({"type": "Progress", "step": step + 1, "total": 4})
        if step == 0:
            lines.append({"type": "TraceReady", "path": "dp.json.gz"})
    lines.append({"type": "Finished", "result": {"workload": "dataparallel", "strategies": []}})
    path = folder / "dp.events.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    return path


def _expected(path: Path) -> dict[str, Any]:
    events = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    mem: dict[tuple[str, str], int] = defaultdict(int)
    for e in events:
        if e["type"] != "MemorySample":
            continue
        for key, what in (("allocated_bytes", "allocated"), ("reserved_bytes", "reserved"),
                          ("nvml_used_bytes", "NVML used")):  # fmt: skip
            if e.get(key) is not None:
                mem[(e["device"], what)] += 1
    splits: dict[int, dict[str, int]] = defaultdict(dict)
    for e in events:
        if e["type"] == "SplitRecorded":
            splits[e["step"]][e["device"]] = e["rows"]
    devices = sorted({d for rows in splits.values() for d in rows})
    bars = {(s, d): splits[s].get(d, 0) for s in sorted(splits)[-8:] for d in devices}
    traces = [e["path"] for e in events if e["type"] == "TraceReady"]
    return {
        "steps": sum(e["type"] == "StepTimed" for e in events),
        "gpu": sum(e["type"] == "StepTimed" and e.get("gpu_ms") is not None for e in events),
        "memory": dict(mem),
        "devices": {e["device"] for e in events if e["type"] == "MemorySample"},
        "splits": splits[max(splits)] if splits else {},
        "split_bars": bars,
        "trace": (path.parent / traces[-1]).resolve() if traces else None,
        "end": events[-1]["type"],
        "strategies": [s["name"] for s in events[-1].get("result", {}).get("strategies", [])],
    }


def _replay(qtbot, ctl: Any, path: Path) -> tuple[Any, Any]:
    ended: list[Any] = []
    shown: list[Any] = []
    ctl.runEnded.connect(ended.append)
    ctl.resultShown.connect(shown.append)
    assert ctl.replay(path)
    qtbot.waitUntil(lambda: bool(ended and shown), timeout=TIMEOUT_MS)
    return ended[0], shown[0]


def _check(ctl: Any, path: Path, end: Any, view: Any) -> None:
    exp = _expected(path)
    plots = ctl.live_plots
    assert type(end).__name__ == exp["end"]
    assert plots.step_points() == exp["steps"]
    assert plots.gpu_points() == exp["gpu"]  # GPU times shown
    curves = plots.memory_curves()
    for key, n in exp["memory"].items():  # per-device allocated, reserved, NVML used
        assert curves[key] == n, key
    assert {d for d, _ in curves} == exp["devices"]
    assert plots.split_rows() == exp["splits"]  # per-GPU split bars
    assert plots.split_bars() == exp["split_bars"]  # the latest 8 steps, side by side
    assert plots.splits_shown() == bool(exp["splits"])
    if len(exp["strategies"]) > 1:  # the comparison lists every strategy
        assert ctl.comparison.strategy_names() == exp["strategies"]
    if exp["trace"] is not None:  # the recorded trace, found beside the events file
        assert view is not None
        assert Path(view.source).resolve() == exp["trace"]


def test_replay_gpu_stream(make_app, qtbot, tmp_path: Path) -> None:
    path = _gpu_stream(tmp_path / "recorded")
    ctl = make_app()
    end, view = _replay(qtbot, ctl, path)
    _check(ctl, path, end, view)
    assert ctl.live_plots.split_rows() == {"cuda:0": 5, "cuda:1": 5}
    assert ctl.live_plots.gpu_points() == 4
    assert ctl.worker is None


def test_replay_moved_stream_finds_its_trace(make_app, qtbot, tmp_path: Path) -> None:
    """A stream copied elsewhere with its trace still opens it (paths are relative)."""
    first = _gpu_stream(tmp_path / "a")
    moved = tmp_path / "elsewhere" / "deeper"
    shutil.copytree(first.parent, moved)
    shutil.rmtree(first.parent)
    ctl = make_app()
    _end, view = _replay(qtbot, ctl, moved / first.name)
    assert view is not None and Path(view.source).resolve() == (moved / "dp.json.gz").resolve()


@pytest.mark.parametrize("path", RECORDED, ids=[str(p.relative_to(DATA)) for p in RECORDED])
def test_replay_recorded_stream(make_app, qtbot, path: Path) -> None:
    ctl = make_app()
    end, view = _replay(qtbot, ctl, path)
    _check(ctl, path, end, view)


def test_replay_refuses_missing_and_reports_bad_lines(make_app, qtbot, tmp_path: Path) -> None:
    ctl = make_app()
    assert ctl.replay(tmp_path / "nope.jsonl") is False
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "Started", "schema": 1, "workload": "x", "params": {}, '
                   '"device": "cpu", "devices": ["cpu"], "torch_version": "2"}\nnot json\n')  # fmt: skip
    end, view = _replay(qtbot, ctl, bad)
    assert type(end).__name__ == "Failed"
    assert "bad.jsonl:2" in end.error
    assert view is None


def test_paced_replay_can_be_cancelled(make_app, qtbot, tmp_path: Path) -> None:
    path = _gpu_stream(tmp_path / "recorded")
    ctl = make_app()
    assert ctl.replay(path, speed=0.2)  # 50 ms apart becomes 250 ms apart
    with qtbot.waitSignal(
        ctl.eventReceived,
        check_params_cb=lambda e: type(e).__name__ == "MemorySample",
        timeout=TIMEOUT_MS,
    ):
        pass
    assert ctl.replay(path) is False  # one at a time
    ended: list[Any] = []
    ctl.runEnded.connect(ended.append)
    ctl.cancel_run()
    qtbot.waitUntil(lambda: bool(ended), timeout=TIMEOUT_MS)
    assert type(ended[0]).__name__ == "Cancelled"
    assert ctl.live.steps_timed < _expected(path)["steps"]
    assert ctl.worker is None
