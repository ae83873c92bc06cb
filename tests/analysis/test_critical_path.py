"""The critical path and what-if replay on hand-made steps: every expected time is counted by
hand from the timeline each test draws, not read back from the code."""

from __future__ import annotations

from typing import Any

import numpy as np

from gpuviz.analysis.critical_path import critical_path, path_json, replay
from gpuviz.analysis.dep_graph import (
    ARRIVE,
    E_COLL,
    E_EVENT,
    E_INFERRED,
    E_SYNC,
    GPU,
    RETURN,
    XFER,
    StepGraph,
    build_step_graph,
)
from gpuviz.analysis.steps import find_steps
from gpuviz.analysis.whatif import Change, predict
from gpuviz.trace.model import Kind, Trace
from tests.analysis.synthetic_trace import ev, make_trace

US = 1000  # the traces below are drawn in µs; the model counts ns


def _graph(trace: Trace, number: int = 1) -> StepGraph:
    return build_step_graph(trace, find_steps(trace), number)


def _sync(name: str, corr: int, rank: int | None = None, **args: Any) -> Any:
    """A ``cuda_sync`` event of the call with correlation ``corr``."""
    a = {"cuda_sync_kind": name, "correlation": corr, **args}
    return ev(Kind.CUDA_SYNC, 0, 1, name, rank=rank, args=a)


def _edges(g: StepGraph, kind: int) -> list[tuple[int, int]]:
    sel = g.edge_kind == kind
    return list(zip(g.src[sel].tolist(), g.dst[sel].tolist(), strict=True))


def _gpu_node(g: StepGraph, trace: Trace, name: str, rank: int | None = None) -> int:
    names = [trace.name_of(int(r)) if r >= 0 else "" for r in g.row.tolist()]
    hits = [
        i
        for i, n in enumerate(names)
        if n == name and g.kind[i] in (GPU, ARRIVE) and (rank is None or g.rank[i] == rank)
    ]
    assert len(hits) == 1, (name, hits)
    return hits[0]


def _event_wait_trace(side_us: int = 500) -> Trace:
    """Stream 7 runs A (500 µs); stream 14's B waits for A through an event; the CPU then
    synchronizes the device and idles until the step's end at 1000 µs.

    CPU:  |launch A 10-15| record 20-25 | wait 30-35 | launch B 40-45 | cudaDeviceSynchronize 50-640|
    s7:        A 20-520
    s14:                      B 521-621  (after A: the event wait)
    """
    return make_trace(
        [
            ev(Kind.USER_ANNOTATION, 0, 1000 * US, "ProfilerStep#1"),
            ev(Kind.RUNTIME, 10 * US, 5 * US, "cudaLaunchKernel", corr=1),
            ev(Kind.RUNTIME, 20 * US, 5 * US, "cudaEventRecord", corr=2),
            ev(Kind.RUNTIME, 30 * US, 5 * US, "cudaStreamWaitEvent", corr=3),
            ev(Kind.RUNTIME, 40 * US, 5 * US, "cudaLaunchKernel", corr=4),
            ev(Kind.RUNTIME, 50 * US, 590 * US, "cudaDeviceSynchronize", corr=5),
            ev(Kind.KERNEL, 20 * US, side_us * US, "A", stream=7, corr=1),
            ev(Kind.KERNEL, (21 + side_us) * US, 100 * US, "B", stream=14, corr=4),
            _sync(
                "Stream Wait Event",
                3,
                wait_on_cuda_event_record_corr_id=2,
                wait_on_stream=7,
                stream=14,
            ),
            _sync("Context Sync", 5, stream=-1),
        ]
    )


def test_replay_of_the_recorded_durations_gives_back_the_recorded_times() -> None:
    trace = _event_wait_trace()
    g = _graph(trace)
    rp = replay(g)
    assert np.array_equal(rp.start_ns, g.start_ns)
    assert np.array_equal(rp.end_ns, g.end_ns)


def test_an_event_wait_joins_two_streams_and_carries_the_path() -> None:
    trace = _event_wait_trace()
    g = _graph(trace)
    a, b = _gpu_node(g, trace, "A"), _gpu_node(g, trace, "B")
    assert (a, b) in _edges(g, E_EVENT)
    # The device sync returns after the last work of both streams (B on 14; B also on 7's A).
    ret = int(np.flatnonzero(g.kind == RETURN)[0])
    assert (b, ret) in _edges(g, E_SYNC)
    rp = replay(g)
    path = critical_path(g, rp)
    assert a in path.nodes.tolist() and b in path.nodes.tolist()
    # The path spans the step: 1000 µs from its start; A and B are its compute (600 µs).
    j = path_json(trace, g, rp, path)
    assert j["span_us"] == 1000.0
    assert j["by_category"]["compute"]["us"] == 600.0


def test_removing_the_waited_for_kernel_moves_the_waiting_one_to_its_launch() -> None:
    trace = _event_wait_trace()
    g = _graph(trace)
    p = predict(trace, g, [Change("A")])
    # By hand: A takes no time (ends at 15, its launch's end); B starts after its own launch
    # (45) plus the 1 µs it had after A: 46, ends 146; the sync returns 19 µs after (as it
    # did after 621): 165; then the CPU's 360 µs to the step's end: 525 µs.
    assert int(p.predicted_ns[0]) == 525 * US
    assert int(p.measured_ns[0]) == 1000 * US


def test_a_side_stream_kernel_that_nothing_waits_for_saves_nothing() -> None:
    """X2 on a side stream, overlapped by main-stream work: removing it must not predict its
    time as a saving."""
    trace = make_trace(
        [
            ev(Kind.USER_ANNOTATION, 0, 1000 * US, "ProfilerStep#1"),
            ev(Kind.RUNTIME, 10 * US, 5 * US, "cudaLaunchKernel", corr=1),
            ev(Kind.RUNTIME, 20 * US, 5 * US, "cudaLaunchKernel", corr=2),
            ev(Kind.RUNTIME, 30 * US, 900 * US, "cudaDeviceSynchronize", corr=3),
            ev(Kind.KERNEL, 20 * US, 900 * US, "M", stream=7, corr=1),
            ev(Kind.KERNEL, 30 * US, 300 * US, "X2", stream=14, corr=2),
            _sync("Context Sync", 3, stream=-1),
        ]
    )
    g = _graph(trace)
    p = predict(trace, g, [Change("X2")])
    assert int(p.predicted_ns[0]) == int(p.measured_ns[0])
    main = predict(trace, g, [Change("M", 2.0)])
    # M ends at 20 + 450 = 470 (X2 at 330 is earlier): the sync returns 10 µs later at 480
    # (it returned at 930 after 920), then 70 µs of CPU to 1000: 550.
    assert int(main.predicted_ns[0]) == 550 * US


def test_a_sync_makes_the_cpu_the_path() -> None:
    """launch K, cudaStreamSynchronize (waits for K), then 600 µs of CPU op: the path goes
    CPU -> K -> the sync's return -> the op, and the op is most of it."""
    trace = make_trace(
        [
            ev(Kind.USER_ANNOTATION, 0, 1000 * US, "ProfilerStep#1"),
            ev(Kind.CPU_OP, 0, 8 * US, "aten::mm"),
            ev(Kind.RUNTIME, 2 * US, 5 * US, "cudaLaunchKernel", corr=1),
            ev(Kind.RUNTIME, 8 * US, 150 * US, "cudaStreamSynchronize", corr=2),
            ev(Kind.CPU_OP, 200 * US, 600 * US, "python_work"),
            ev(Kind.KERNEL, 10 * US, 140 * US, "K", stream=7, corr=1),
        ]
    )
    g = _graph(trace)
    k = _gpu_node(g, trace, "K")
    ret = int(np.flatnonzero(g.kind == RETURN)[0])
    # No cuda_sync events: the stream sync waited for what ended last while it blocked (K).
    assert (k, ret) in _edges(g, E_SYNC)
    rp = replay(g)
    path = critical_path(g, rp)
    assert k in path.nodes.tolist() and ret in path.nodes.tolist()
    j = path_json(trace, g, rp, path)
    assert j["ops"][0]["name"] == "python_work"
    assert j["ops"][0]["us"] == 600.0
    assert j["by_category"]["compute"]["us"] == 140.0
    # Faster CPU work saves its time; a faster K saves half of K.
    assert int(predict(trace, g, [Change("python_work", 2.0)]).predicted_ns[0]) == 700 * US
    assert int(predict(trace, g, [Change("K", 2.0)]).predicted_ns[0]) == 930 * US


def test_stream_waits_are_inferred_from_timing_without_cuda_sync_events() -> None:
    """B (stream 14) started 100 µs after its launch, right when A (stream 7) ended."""
    trace = make_trace(
        [
            ev(Kind.USER_ANNOTATION, 0, 1000 * US, "ProfilerStep#1"),
            ev(Kind.RUNTIME, 10 * US, 5 * US, "cudaLaunchKernel", corr=1),
            ev(Kind.RUNTIME, 20 * US, 5 * US, "cudaLaunchKernel", corr=2),
            ev(Kind.KERNEL, 20 * US, 100 * US, "A", stream=7, corr=1),
            ev(Kind.KERNEL, 122 * US, 100 * US, "B", stream=14, corr=2),
        ]
    )
    g = _graph(trace)
    assert (_gpu_node(g, trace, "A"), _gpu_node(g, trace, "B")) in _edges(g, E_INFERRED)
    assert any("cuda_sync" in n for n in g.notes)


def _collective_trace(slow_us: int) -> Trace:
    """Two ranks: each computes C (rank 1 for ``slow_us``), then all-reduces. The NCCL kernels
    end together at 500 µs: rank 1 arrives last and releases rank 0."""
    events = []
    for rank, c_us in ((0, 100), (1, slow_us)):
        events += [
            ev(Kind.USER_ANNOTATION, 0, 600 * US, "ProfilerStep#1", rank=rank),
            ev(Kind.RUNTIME, 1 * US, 2 * US, "cudaLaunchKernel", rank=rank, corr=1),
            ev(Kind.RUNTIME, 4 * US, 2 * US, "cudaLaunchKernel", rank=rank, corr=2),
            ev(Kind.RUNTIME, 8 * US, 500 * US, "cudaDeviceSynchronize", rank=rank, corr=3),
            ev(Kind.KERNEL, 10 * US, c_us * US, "C", rank=rank, corr=1),
            ev(
                Kind.KERNEL,
                (10 + c_us) * US,
                (490 - c_us) * US,
                "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                rank=rank,
                corr=2,
            ),
        ]
    return make_trace(events)


def test_a_collective_is_released_by_its_last_rank() -> None:
    trace = _collective_trace(slow_us=400)
    g = _graph(trace)
    nccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
    a0, a1 = _gpu_node(g, trace, nccl, 0), _gpu_node(g, trace, nccl, 1)
    xfers = np.flatnonzero(g.kind == XFER)
    assert len(xfers) == 2
    coll = _edges(g, E_COLL)
    for x in xfers.tolist():
        assert (a0, x) in coll and (a1, x) in coll
        # Both exchanges start at rank 1's arrival (410 µs) and end at 500.
        assert int(g.start_ns[x]) == 410 * US and int(g.end_ns[x]) == 500 * US
    rp = replay(g)
    j = path_json(trace, g, rp, critical_path(g, rp, rank=0))
    # Rank 0's end waited for rank 1's C: the path crosses to rank 1.
    assert {r["rank"] for r in j["ranks_on_path"]} == {0, 1}
    assert j["kernels"][0] == {
        "name": "C",
        "rank": 1,
        "calls": 1,
        "us": 400.0,
        "share": round(400 / 600, 4),
    }


def test_a_straggler_as_fast_as_the_others() -> None:
    """Rank 1's C as fast as rank 0's (400 -> 100 µs): rank 1 arrives at 110, like rank 0,
    and the exchange (90 µs after the last arrival) ends at 200 on both ranks."""
    slow = _collective_trace(slow_us=400)
    g = _graph(slow)
    p = predict(slow, g, [Change("C", 4.0, rank=1)])
    # By hand: each rank's step ends 100 µs after its exchange (at 600 after 500): 300.
    assert p.predicted_ns.tolist() == [300 * US, 300 * US]
    # The exchange now starts at 110 µs on both ranks: rank 0 (arrived at 110) no longer
    # waits, and rank 1 (C ends at 10 + 100) arrives with it.
    xfers = np.flatnonzero(g.kind == XFER)
    assert sorted(p.replay.start_ns[xfers].tolist()) == [110 * US, 110 * US]
    assert sorted(p.replay.end_ns[xfers].tolist()) == [200 * US, 200 * US]


def test_a_name_that_is_not_in_the_step_matches_nothing() -> None:
    trace = _event_wait_trace()
    g = _graph(trace)
    p = predict(trace, g, [Change("nothing-like-it", 2.0)])
    assert p.unmatched == ["nothing-like-it"]
    assert int(p.predicted_ns[0]) == int(p.measured_ns[0])


def test_a_range_matches_gpu_work_launched_before_the_step_window() -> None:
    """A CPU that runs ahead launches step 2's kernel (under ``record_function("X1")``) while
    step 1's kernel still runs: step 2's window starts when K1 ends (1020 µs), after the
    launch. Removing X1 must still remove K2, the whole of step 2's work."""
    trace = make_trace(
        [
            ev(Kind.USER_ANNOTATION, 0, 100 * US, "ProfilerStep#1"),
            ev(Kind.RUNTIME, 10 * US, 5 * US, "cudaLaunchKernel", corr=1),
            ev(Kind.USER_ANNOTATION, 100 * US, 100 * US, "ProfilerStep#2"),
            ev(Kind.USER_ANNOTATION, 110 * US, 10 * US, "X1"),
            ev(Kind.RUNTIME, 112 * US, 5 * US, "cudaLaunchKernel", corr=2),
            ev(Kind.KERNEL, 20 * US, 1000 * US, "K1", stream=7, corr=1),
            ev(Kind.KERNEL, 1021 * US, 1000 * US, "K2", stream=7, corr=2),
        ]
    )
    g = _graph(trace, 2)
    assert int(g.window_start_ns[0]) == 1020 * US
    p = predict(trace, g, [Change("X1")])
    assert p.matched == [1]
    # By hand: K2 takes no time and no delay: the step's work ends where it starts.
    assert int(p.measured_ns[0]) == 1001 * US
    assert int(p.predicted_ns[0]) == 0


def test_a_kernel_name_with_pattern_characters_is_itself() -> None:
    """C++ kernel names hold ``*`` and ``[]``: a name of the trace is matched as it is."""
    name = "void k<float*, 4>(float [4])"
    trace = make_trace(
        [
            ev(Kind.USER_ANNOTATION, 0, 1000 * US, "ProfilerStep#1"),
            ev(Kind.RUNTIME, 10 * US, 5 * US, "cudaLaunchKernel", corr=1),
            ev(Kind.RUNTIME, 20 * US, 5 * US, "cudaLaunchKernel", corr=2),
            ev(Kind.KERNEL, 20 * US, 100 * US, name, stream=7, corr=1),
            ev(Kind.KERNEL, 121 * US, 100 * US, "void k<float*, 8>(float [8])", stream=7, corr=2),
        ]
    )
    g = _graph(trace)
    p = predict(trace, g, [Change(name)])
    assert p.matched == [1]
    # As a pattern it names both ("*" any text, "?" any character).
    assert predict(trace, g, [Change("void k<float?, *")]).matched == [2]
