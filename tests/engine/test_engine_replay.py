"""The event streams recorded on an H100 (tests/data/events) replay, and agree with themselves."""

from __future__ import annotations

import gzip
import json
import statistics
from pathlib import Path

import pytest

from gpuviz.engine.events import (
    Finished,
    MemorySample,
    Progress,
    Started,
    StepTimed,
    TraceReady,
    read_events,
)

RECORDED = ["loops_h100", "training_h100"]


@pytest.mark.parametrize("name", RECORDED)
def test_recorded_stream_replays(data_dir: Path, name: str) -> None:
    folder = data_dir / "events" / name
    events = list(read_events(folder / "events.jsonl"))
    first = json.loads((folder / "events.jsonl").read_text().splitlines()[0])
    assert first["type"] == "Started" and first["schema"] == 1
    assert isinstance(events[0], Started) and events[0].device.startswith("cuda")
    assert isinstance(events[-1], Finished)
    (ready,) = [e for e in events if isinstance(e, TraceReady)]
    assert Path(ready.path) == folder / "trace.json.gz" and Path(ready.path).exists()
    result = events[-1].result
    assert Path(result["trace"]) == folder / "trace.json.gz"
    # the result's medians are those of the unprofiled StepTimed events, recomputed here
    timed = [e for e in events if isinstance(e, StepTimed) and not e.profiled]
    for row in result["strategies"]:
        if row["status"] != "ok":
            continue
        walls = [e.wall_ms for e in timed if e.label == row["name"]]
        gpus = [e.gpu_ms for e in timed if e.label == row["name"]]
        assert row["median_wall_ms"] == pytest.approx(statistics.median(walls))
        assert row["median_gpu_ms"] == pytest.approx(statistics.median(gpus))  # type: ignore[type-var]
    progress = [e for e in events if isinstance(e, Progress)]
    assert progress[-1].step == progress[-1].total == sum(isinstance(e, StepTimed) for e in events)
    samples = [e for e in events if isinstance(e, MemorySample)]
    assert all(s.allocated_bytes is not None and s.nvml_used_bytes is not None for s in samples)
    span = samples[-1].t_s - samples[0].t_s
    assert len(samples) - 1 >= 10 * span  # 10 Hz or more


def test_recorded_loops_trace_has_one_kernel_per_element(data_dir: Path) -> None:
    folder = data_dir / "events" / "loops_h100"
    with gzip.open(folder / "trace.json.gz", "rt") as f:
        evs = json.load(f)["traceEvents"]
    (loop,) = [
        e
        for e in evs
        if e.get("cat") == "user_annotation" and e["name"].startswith("gpuviz/for_loop#")
    ]
    kernels = [
        e
        for e in evs
        if e.get("cat") == "kernel" and loop["ts"] <= e["ts"] <= loop["ts"] + loop["dur"]
    ]
    assert len(kernels) == 200
    result = list(read_events(folder / "events.jsonl"))[-1].result
    rows = {r["name"]: r for r in result["strategies"]}
    assert rows["for_loop"]["launches"] == 200 and rows["cuda_graph"]["launches"] == 1
    assert rows["dataparallel_function"]["status"] == "failed"


def test_recorded_traces_open_with_summary(data_dir: Path) -> None:
    from gpuviz.commands.summary import main as summary_main  # noqa: F401 - the command exists
    from gpuviz.trace.kineto import load_trace

    for name in RECORDED:
        trace = load_trace(data_dir / "events" / name / "trace.json.gz")
        assert len(trace.slices) > 0
