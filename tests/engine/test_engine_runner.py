"""The Runner on the CPU build: events, timing vs tracing, failure, cancellation, cleanup."""

from __future__ import annotations

import gzip
import itertools
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import userfiles

from gpuviz.engine.events import (
    Cancelled,
    Failed,
    Finished,
    MemorySample,
    Progress,
    Started,
    StepTimed,
    TraceReady,
)
from gpuviz.engine.runner import Runner, RunRequest, default_trace_path
from gpuviz.errors import BadInputError


def user(tmp_path: Path, source: str, func: str) -> str:
    f = tmp_path / f"{func}.py"
    f.write_text(source)
    return f"{f}:{func}"


def kinds(events: list[Any]) -> list[str]:
    return [type(e).__name__ for e in events]


def trace_events(path: str | Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt") as f:
        return json.load(f)["traceEvents"]  # type: ignore[no-any-return]


def no_sampler_left() -> bool:
    return not any(t.name == "gpuviz-memory-sampler" for t in threading.enumerate())


def test_loops_on_cpu_events_and_result(tmp_path: Path) -> None:
    events = list(Runner(RunRequest("loops", {"n": 30}, device="cpu", steps=2, profile=False)))
    assert isinstance(events[0], Started) and events[0].device == "cpu"
    assert isinstance(events[-1], Finished)
    steps = [e for e in events if isinstance(e, StepTimed)]
    # for_loop, vectorized, vmap, dataparallel_function run; streams and cuda_graph need CUDA.
    runnable = ["for_loop", "vectorized", "vmap", "dataparallel_function"]
    assert [s.label for s in steps] == [name for name in runnable for _ in range(2)]
    assert all(s.gpu_ms is None and not s.profiled and s.wall_ms > 0 for s in steps)
    assert [s.step for s in steps] == list(range(len(steps)))
    progress = [e for e in events if isinstance(e, Progress)]
    assert progress[0] == Progress(0, 8) and progress[-1] == Progress(8, 8)
    result = events[-1].result
    by = {r["name"]: r for r in result["strategies"]}
    assert by["streams"]["status"] == "skipped" and by["streams"]["reason"] == "needs CUDA"
    assert by["cuda_graph"]["status"] == "skipped"
    assert {s["name"] for s in result["skipped"]} == {"streams", "cuda_graph"}
    assert by["dataparallel_function"]["status"] == "ok"  # with no GPU it just calls f
    assert by["for_loop"]["speedup"] == 1.0
    assert by["vectorized"]["speedup"] == pytest.approx(
        by["for_loop"]["median_wall_ms"] / by["vectorized"]["median_wall_ms"]
    )
    assert "launches" not in by["for_loop"]  # no GPU figures are faked on the CPU
    assert result["trace"] is None
    assert result["memory"]["peak_rss_bytes"] > 0 and result["memory"]["devices"] == {}
    json.dumps(result)
    samples = [e for e in events if isinstance(e, MemorySample)]
    assert samples and all(s.allocated_bytes is None and s.rss_bytes > 0 for s in samples)
    assert no_sampler_left()


def test_trace_holds_profiled_steps_only(tmp_path: Path) -> None:
    out = tmp_path / "t.json.gz"
    events = list(Runner(RunRequest("loops", {"n": 7}, device="cpu", steps=2, out=str(out))))
    ready = [e for e in events if isinstance(e, TraceReady)]
    assert ready == [TraceReady(str(out))]
    steps = [e for e in events if isinstance(e, StepTimed)]
    assert [s.profiled for s in steps[:4]] == [True] * 4 and not any(s.profiled for s in steps[4:])
    ranges = [e["name"] for e in trace_events(out) if e.get("name", "").startswith("gpuviz/")]
    labels = sorted(r.split("/", 1)[1].split("#")[0] for r in ranges)
    # one profiled step per strategy, never a warm-up or a timed step
    assert labels == sorted(["for_loop", "vectorized", "vmap", "dataparallel_function"])
    evs = trace_events(out)
    (loop,) = [e for e in evs if e.get("name", "").startswith("gpuviz/for_loop#")]
    pows = [
        e
        for e in evs
        if e.get("name") == "aten::pow" and loop["ts"] <= e["ts"] <= loop["ts"] + loop["dur"]
    ]
    assert len(pows) == 7  # one per element in the profiled for loop


def test_memory_sampled_at_10_hz_or_more(tmp_path: Path) -> None:
    w = user(tmp_path, userfiles.OK, "sleepy")
    events = list(Runner(RunRequest(w, {"sleep_s": 0.25}, device="cpu", steps=3, profile=False)))
    t = [e.t_s for e in events if isinstance(e, MemorySample)]
    span = t[-1] - t[0]
    assert span > 0.9
    # The sampler's pace, not the process's: a pause of the whole process (a full garbage
    # collection late in a long test run stalled one sample for 0.57 s in CI) may delay one
    # sample; the others keep 10 Hz or more.
    gaps = [b - a for a, b in itertools.pairwise(t)]
    assert sorted(gaps)[len(gaps) // 2] <= 0.1
    assert sum(g <= 0.15 for g in gaps) >= 0.8 * len(gaps)


def test_bad_input_is_refused_before_running() -> None:
    with pytest.raises(BadInputError, match="n must be"):
        Runner(RunRequest("loops", {"n": -3}, device="cpu"))
    with pytest.raises(BadInputError, match="--device"):
        Runner(RunRequest("loops", {}, device="tpu"))
    with pytest.raises(BadInputError, match="--steps"):
        Runner(RunRequest("loops", {}, device="cpu", steps=0))


def test_failure_in_a_timed_step_keeps_the_whole_trace(tmp_path: Path) -> None:
    w = user(tmp_path, userfiles.FAILING, "fails")
    out = tmp_path / "t.json.gz"
    events = list(Runner(RunRequest(w, {"fail_at": 3}, device="cpu", steps=3, out=str(out))))
    last = events[-1]
    assert isinstance(last, Failed)
    assert last.error == "ValueError: boom on call 3"
    assert "Traceback" in last.traceback and "fails.py" in last.traceback
    assert last.partial_trace_path == str(out) and out.exists()
    assert no_sampler_left()


def test_failure_in_the_profiled_step_writes_a_partial_trace(tmp_path: Path) -> None:
    w = user(tmp_path, userfiles.FAILING, "fails")
    out = tmp_path / "t.json.gz"
    events = list(Runner(RunRequest(w, {"fail_at": 2}, device="cpu", steps=3, out=str(out))))
    assert kinds(events)[-2:] == ["TraceReady", "Failed"] or kinds(events)[-1] == "Failed"
    last = events[-1]
    assert isinstance(last, Failed) and last.partial_trace_path == str(out)
    assert trace_events(out)  # a readable trace of what was recorded
    # The process stays healthy: the next run works.
    again = list(Runner(RunRequest("loops", {"n": 3}, device="cpu", steps=1, profile=False)))
    assert isinstance(again[-1], Finished)


def test_failure_in_warm_up_has_no_trace(tmp_path: Path) -> None:
    w = user(tmp_path, userfiles.FAILING, "fails")
    events = list(
        Runner(
            RunRequest(w, {"fail_at": 1}, device="cpu", steps=1, out=str(tmp_path / "t.json.gz"))
        )
    )
    assert isinstance(events[-1], Failed) and events[-1].partial_trace_path is None
    assert not (tmp_path / "t.json.gz").exists()


COUNTED = """
def counted(device, log: str = ""):
    with open(log, "a") as f:
        f.write("x")
"""


def test_cancel_between_steps(tmp_path: Path) -> None:
    # Short timed steps are reported in batches, so the cancel comes after the first batch;
    # no step may start after it: every timed call made is one StepTimed seen.
    out, log = tmp_path / "t.json.gz", tmp_path / "calls.txt"
    w = user(tmp_path, COUNTED, "counted")
    runner = Runner(RunRequest(w, {"log": str(log)}, device="cpu", steps=100_000, out=str(out)))
    seen: list[Any] = []
    for e in runner:
        seen.append(e)
        if isinstance(e, StepTimed) and not e.profiled:
            runner.cancel()
    timed = [e for e in seen if isinstance(e, StepTimed) and not e.profiled]
    profiled = [e for e in seen if isinstance(e, StepTimed) and e.profiled]
    calls = len(log.read_text())
    assert 1 <= len(timed) < 100_000
    assert calls == 1 + len(profiled) + len(timed)  # the warm-up, then each step seen
    assert seen[-1] == Cancelled(str(out)) and out.exists()
    assert no_sampler_left()


def test_keyboard_interrupt_in_a_step_is_a_cancel(tmp_path: Path) -> None:
    w = user(tmp_path, userfiles.INTERRUPTED, "interrupted")
    out = tmp_path / "t.json.gz"
    events = list(Runner(RunRequest(w, {"at": 4}, device="cpu", steps=5, out=str(out))))
    assert events[-1] == Cancelled(str(out))
    assert no_sampler_left()


def test_wrong_result_fails_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mod = tmp_path / "wrongplan.py"
    mod.write_text(
        "from gpuviz.workloads.base import Plan, Strategy\n"
        "def build(ctx):\n"
        "    return Plan([Strategy('a', lambda: 1), Strategy('b', lambda: 2)], baseline='a',\n"
        "                check=lambda name, r: None if r == 1 else f'got {r}')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    from gpuviz.workloads.registry import WorkloadSpec

    spec = WorkloadSpec(name="wrong", title="t", entry="wrongplan:build")
    events = list(Runner(RunRequest("wrong", device="cpu", steps=1, profile=False), spec=spec))
    assert isinstance(events[-1], Failed)
    assert "b gave a wrong result: got 2" in events[-1].error


def test_attempt_that_fails_is_an_outcome_not_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mod = tmp_path / "attemptplan.py"
    mod.write_text(
        "from gpuviz.workloads.base import Plan, Strategy\n"
        "def boom():\n"
        "    raise AttributeError('no .to')\n"
        "def build(ctx):\n"
        "    return Plan([Strategy('ok', lambda: 1), Strategy('try', boom, attempt=True, failure_reason='why')])\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    from gpuviz.workloads.registry import WorkloadSpec

    spec = WorkloadSpec(name="att", title="t", entry="attemptplan:build")
    events = list(Runner(RunRequest("att", device="cpu", steps=2, profile=False), spec=spec))
    assert isinstance(events[-1], Finished)
    by = {r["name"]: r for r in events[-1].result["strategies"]}
    assert by["try"] == {
        "name": "try",
        "title": "try",
        "status": "failed",
        "reason": "why",
        "error": "AttributeError: no .to",
    }
    assert [e.label for e in events if isinstance(e, StepTimed)] == ["ok", "ok"]


def test_default_trace_path() -> None:
    from datetime import datetime

    now = datetime(2026, 1, 2, 3, 4, 5)
    assert default_trace_path("loops", now=now) == Path("gpuviz-runs/loops-20260102-030405.json.gz")
    assert default_trace_path("a/b/f.py:sq", now=now) == Path(
        "gpuviz-runs/f-sq-20260102-030405.json.gz"
    )
    assert default_trace_path("ddp", True, now=now) == Path("gpuviz-runs/ddp-20260102-030405")


@pytest.mark.parametrize(
    ("exit_at", "where"),
    [(1, "in the set-up or warm-up of exits"), (2, "in step 0"), (4, "in step 2")],
)
def test_sys_exit_in_the_workload_is_a_failure(tmp_path: Path, exit_at: int, where: str) -> None:
    w = user(tmp_path, userfiles.EXITING, "exits")
    out = tmp_path / "t.json.gz"
    events = list(Runner(RunRequest(w, {"exit_at": exit_at}, device="cpu", steps=3, out=str(out))))
    end = events[-1]
    assert isinstance(end, Failed), end
    assert end.error == f"the workload called sys.exit(5) {where}"
    assert "SystemExit: 5" in end.traceback and "sys.exit(message or code)" in end.traceback
    if exit_at == 1:  # before the profiler started: nothing recorded
        assert end.partial_trace_path is None
    else:  # whatever was recorded is kept
        assert end.partial_trace_path == str(out) and out.exists()
        assert any(isinstance(e, TraceReady) and e.path == str(out) for e in events)
    assert no_sampler_left()


def test_sys_exit_with_a_message_and_on_load(tmp_path: Path) -> None:
    w = user(tmp_path, userfiles.EXITING, "exits")
    req = RunRequest(w, {"exit_at": 2, "message": "bye"}, device="cpu", steps=1, profile=False)
    end = list(Runner(req))[-1]
    assert isinstance(end, Failed) and end.error == "the workload called sys.exit('bye') in step 0"
    w = user(tmp_path, userfiles.EXITS_ON_LOAD, "f")
    end = list(Runner(RunRequest(w, device="cpu", steps=1, profile=False)))[-1]
    assert isinstance(end, Failed)
    assert end.error == "the workload called sys.exit(3) while it was loaded"


def test_short_timed_steps_run_back_to_back_and_nothing_is_lost(tmp_path: Path) -> None:
    # Calls: 1 warm-up, then timed steps (no profiler); the 6th call fails. Short steps are
    # held between flushes, so the four that ran must still come out, in order, before Failed.
    w = user(tmp_path, userfiles.FAILING, "fails")
    events = list(Runner(RunRequest(w, {"fail_at": 6}, device="cpu", steps=8, profile=False)))
    names = kinds(events)
    assert names[-1] == "Failed"
    timed = [e for e in events if isinstance(e, StepTimed)]
    assert [e.step for e in timed] == [0, 1, 2, 3]
    assert all(not e.profiled and e.wall_ms >= 0 for e in timed)
    progress = [e.step for e in events if isinstance(e, Progress)]
    assert progress == sorted(progress) and progress[-1] == 4
    # Each StepTimed is followed by its Progress, as before the batching.
    for i, name in enumerate(names):
        if name == "StepTimed":
            assert names[i + 1] == "Progress"


def test_timed_steps_report_one_by_one_when_they_are_long(tmp_path: Path) -> None:
    # 0.1 s steps exceed the flush period: each StepTimed is out before the next step runs.
    w = user(tmp_path, userfiles.OK, "sleepy")
    seen_at: list[float] = []
    t0 = time.perf_counter()
    for e in Runner(RunRequest(w, {"sleep_s": 0.1}, device="cpu", steps=3, profile=False)):
        if isinstance(e, StepTimed):
            seen_at.append(time.perf_counter() - t0)
    assert len(seen_at) == 3
    assert seen_at[1] - seen_at[0] >= 0.09 and seen_at[2] - seen_at[1] >= 0.09


def test_the_runner_collects_garbage_only_on_the_main_thread(monkeypatch) -> None:
    # On another thread (the app's thread executor) a collection can run Qt destructors of
    # closed windows there, which deadlocked against the GUI thread.
    import gc
    import threading

    from gpuviz.engine import inprocess

    calls: list[str] = []
    monkeypatch.setattr(gc, "collect", lambda *a: calls.append(threading.current_thread().name))
    inprocess.collect_garbage()
    worker = threading.Thread(target=inprocess.collect_garbage, name="worker")
    worker.start()
    worker.join()
    assert calls == [threading.main_thread().name]
