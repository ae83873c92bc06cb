"""Step detection and the step breakdown, against brute-force per-nanosecond references."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from synthetic_trace import ev, make_trace

from gpuviz.analysis.coverage import Coverage
from gpuviz.analysis.steps import _rows_by_rank, find_steps, step_breakdown
from gpuviz.trace.kineto import load_trace
from gpuviz.trace.model import Kind

K, C, S = Kind.KERNEL, Kind.MEMCPY, Kind.MEMSET
ANN, OP, RT = Kind.USER_ANNOTATION, Kind.CPU_OP, Kind.RUNTIME
DATA = Path(__file__).parent.parent / "data"


def _paint(n: int, intervals: list[tuple[int, int]]) -> np.ndarray:
    """A boolean per nanosecond: covered by any interval (the brute-force reference)."""
    out = np.zeros(n, dtype=bool)
    for a, b in intervals:
        out[max(a, 0) : max(b, 0)] = True
    return out


def test_coverage_matches_brute_force() -> None:
    rng = np.random.default_rng(1)
    for _ in range(50):
        starts = rng.integers(0, 900, 30)
        ends = starts + rng.integers(0, 120, 30)
        cov = Coverage(starts, ends)
        painted = _paint(1100, list(zip(starts.tolist(), ends.tolist())))
        t0 = rng.integers(0, 1000, 20)
        t1 = t0 + rng.integers(0, 300, 20)
        expect = [int(painted[a:b].sum()) for a, b in zip(t0.tolist(), t1.tolist())]
        assert cov.covered(t0, t1).tolist() == expect
        g0, g1 = cov.gaps(100, 800)
        assert int((g1 - g0).sum()) == 700 - int(painted[100:800].sum())


def test_breakdown_parts_match_brute_force() -> None:
    rng = np.random.default_rng(7)
    events = [ev(ANN, i * 1000, 1000, f"ProfilerStep#{i + 3}") for i in range(3)]
    truth: dict[str, list[tuple[int, int]]] = {"compute": [], "comm": [], "copy": [], "set": []}
    for _ in range(40):
        a = int(rng.integers(0, 2900))
        b = a + int(rng.integers(1, 200))
        what = ["compute", "comm", "copy", "set"][int(rng.integers(0, 4))]
        truth[what].append((a, b))
        kind, name = {
            "compute": (K, "gemm"),
            "comm": (K, "ncclDevKernel_AllReduce_Sum_f32_RING_LL"),
            "copy": (C, "Memcpy HtoD (Pinned -> Device)"),
            "set": (S, "Memset (Device)"),
        }[what]
        events.append(ev(kind, a, b - a, name, stream=7 + int(rng.integers(0, 3))))
    b = step_breakdown(make_trace(events))
    assert b.steps.number.tolist() == [3, 4, 5]
    paint = {k: _paint(3000, v) for k, v in truth.items()}
    comp = paint["compute"]
    comm = paint["comm"] & ~comp
    copy = paint["copy"] & ~comp & ~paint["comm"]
    sets = paint["set"] & ~comp & ~paint["comm"] & ~paint["copy"]
    idle = ~(comp | paint["comm"] | paint["copy"] | paint["set"])
    d = b.devices
    for j in range(len(d)):
        i = int(d.step[j])
        lo, hi = int(b.steps.start_ns[i]), int(b.steps.end_ns[i])
        assert (lo, hi) == (i * 1000, i * 1000 + 1000)
        got = [d.compute_ns[j], d.comm_ns[j], d.copy_ns[j], d.set_ns[j], d.idle_ns[j]]
        want = [int(p[lo:hi].sum()) for p in (comp, comm, copy, sets, idle)]
        assert [int(x) for x in got] == want
        assert int(d.comm_total_ns[j]) == int(paint["comm"][lo:hi].sum())
        assert sum(int(x) for x in got) == hi - lo


def test_cpu_time_inside_and_outside_ops() -> None:
    events = [
        ev(ANN, 0, 1000, "ProfilerStep#0", tid=1),
        ev(OP, 100, 200, "aten::mm", tid=1),
        ev(OP, 150, 100, "aten::addmm", tid=1),  # nested: counted once
        ev(OP, 250, 250, "aten::add", tid=2),  # another thread: [250, 500)
        ev(OP, 600, 50, "ProfilerStep#0", tid=3),  # a wrapper, not an op
        ev(K, 0, 10, "k"),
    ]
    b = step_breakdown(make_trace(events))
    assert int(b.cpu_op_ns[0]) == 400  # [100, 500)
    assert int(b.cpu_other_ns[0]) == 600


def test_last_step_ends_with_the_gpu_work_it_launched() -> None:
    events = [
        ev(ANN, 0, 100, "ProfilerStep#0"),
        ev(ANN, 100, 100, "ProfilerStep#1"),
        ev(RT, 150, 10, "cudaLaunchKernel", corr=5),
        ev(K, 400, 300, "gemm", corr=5),  # runs long after the CPU step ended
        ev(K, 900, 50, "late, launched by nobody"),
    ]
    st = find_steps(make_trace(events))
    assert st.start_ns.tolist() == [0, 100]
    assert st.end_ns.tolist() == [100, 700]
    assert st.cpu_end_ns.tolist() == [100, 200]


@pytest.mark.parametrize(
    ("markers", "source", "starts", "ends"),
    [
        # Optimizer steps: a step ends where one ends; the first starts at the first CPU event.
        (
            [
                (OP, 5, 10, "aten::add"),
                (ANN, 50, 20, "Optimizer.step#SGD.step"),
                (ANN, 150, 30, "Optimizer.step#SGD.step"),
            ],
            "Optimizer.step",
            [5, 70],
            [70, 180],
        ),
        # DataParallel.forward: from one forward to the next; the last ends at the last CPU event.
        (
            [
                (ANN, 10, 20, "DataParallel.forward"),
                (ANN, 100, 20, "DataParallel.forward"),
                (OP, 150, 50, "aten::add"),
            ],
            "DataParallel.forward",
            [10, 100],
            [100, 200],
        ),
        # Nothing: the whole trace.
        ([(OP, 10, 20, "aten::add"), (OP, 300, 20, "aten::mul")], "trace", [10], [320]),
    ],
)
def test_step_fallbacks(markers, source, starts, ends) -> None:
    st = find_steps(make_trace([ev(k, a, d, n) for k, a, d, n in markers]))
    assert st.source == [source] * len(starts)
    assert st.start_ns.tolist() == starts
    assert st.end_ns.tolist() == ends
    assert st.number.tolist() == list(range(len(starts)))


def test_profiler_steps_win_over_optimizer_steps() -> None:
    events = [
        ev(ANN, 0, 100, "ProfilerStep#7"),
        ev(ANN, 50, 20, "Optimizer.step#SGD.step"),
        ev(Kind.GPU_USER_ANNOTATION, 0, 500, "ProfilerStep#9"),  # a GPU copy of a range: ignored
    ]
    st = find_steps(make_trace(events))
    assert (st.source, st.number.tolist()) == (["ProfilerStep"], [7])


def test_steps_per_rank() -> None:
    events = [
        ev(ANN, 0, 100, "ProfilerStep#1", rank=0),
        ev(ANN, 100, 100, "ProfilerStep#2", rank=0),
        ev(ANN, 10, 150, "ProfilerStep#1", rank=1),
        ev(K, 20, 30, "k", rank=1),
    ]
    st = find_steps(make_trace(events, ranks=[0, 1]))
    assert st.rank.tolist() == [0, 0, 1]
    assert st.number.tolist() == [1, 2, 1]


@pytest.mark.parametrize("name", ["ddp_2rank", "ddp_nccl_4rank", "gloo_4rank_cpu"])
def test_real_rank_folders(name: str) -> None:
    trace = load_trace(DATA / name)
    b = step_breakdown(trace)
    st = b.steps
    ranks = sorted(r for r in trace.rank_values() if r is not None)
    assert sorted(set(st.rank.tolist())) == ranks
    for r in ranks:
        idx = st.of_rank(r)
        assert (st.end_ns[idx] > st.start_ns[idx]).all()
        if st.source[idx[0]] == "gpuviz":
            # gpuviz's own steps (ddp_nccl_4rank was recorded by `gpuviz run ddp`): the time
            # between them is the harness's, so they do not tile, and never overlap.
            assert (st.end_ns[idx][:-1] <= st.start_ns[idx][1:]).all()
        else:
            # Windows tile each rank's time: each ends where the next begins.
            assert (st.end_ns[idx][:-1] == st.start_ns[idx][1:]).all()
    d = b.devices
    total = d.compute_ns + d.comm_ns + d.copy_ns + d.set_ns + d.idle_ns
    assert (total == st.duration_ns[d.step]).all()
    assert (d.comm_ns <= d.comm_total_ns).all()
    assert ((b.cpu_op_ns >= 0) & (b.cpu_other_ns >= 0)).all()


def test_ddp_2rank_figures() -> None:
    # Independent: ProfilerStep#N ranges read straight from the rank files' slices.
    trace = load_trace(DATA / "ddp_2rank")
    s = trace.slices
    b = step_breakdown(trace)
    assert b.steps.source == ["ProfilerStep"] * 6
    assert b.steps.number.tolist() == [2, 3, 4, 2, 3, 4]
    for i in range(len(b.steps)):
        row = np.flatnonzero(
            (s.name == trace.symbols.find(b.steps.label(i)))
            & (s.kind == Kind.USER_ANNOTATION)
            & (trace.tracks.rank[s.track] == b.steps.rank[i])
        )
        assert len(row) == 1
        assert int(b.steps.cpu_start_ns[i]) == int(s.start_ns[row[0]])
        assert int(b.steps.cpu_end_ns[i]) == int(s.start_ns[row[0]] + s.dur_ns[row[0]])
    # Every NCCL kernel of a rank falls in one of its windows and is counted in comm_total.
    nccl = np.flatnonzero(
        np.char.find(np.asarray(trace.symbols.strings, dtype=str)[s.name], "nccl") >= 0
    )
    nccl = nccl[s.kind[nccl] == Kind.KERNEL]
    assert int(b.devices.comm_total_ns.sum()) == int(s.dur_ns[nccl].sum())


def test_a_gap_in_step_numbers_does_not_stretch_a_window() -> None:
    events = [
        ev(ANN, 0, 100, "ProfilerStep#1"),
        ev(ANN, 100, 100, "ProfilerStep#2"),
        ev(ANN, 5000, 100, "ProfilerStep#9"),  # a profiler schedule skipped steps 3 to 8
        ev(K, 10, 20, "k"),
    ]
    st = find_steps(make_trace(events))
    assert st.end_ns.tolist() == [100, 200, 5100]


def test_gpuviz_harness_steps_are_their_own_windows() -> None:
    events = [
        ev(ANN, 0, 1000, "ProfilerStep#0"),
        ev(ANN, 100, 500, "gpuviz/loops/for_loop#4"),
        ev(ANN, 1000, 1000, "ProfilerStep#1"),
        ev(ANN, 1200, 300, "gpuviz/loops/for_loop#5"),
        ev(K, 150, 100, "k"),
    ]
    st = find_steps(make_trace(events))
    assert st.source == ["gpuviz", "gpuviz"]
    assert st.number.tolist() == [4, 5]
    assert st.start_ns.tolist() == [100, 1200]
    assert st.end_ns.tolist() == [600, 1500]  # the harness time between them is no step's


def _without(events: list, dup: list) -> tuple[list[dict], list[dict]]:
    """The breakdowns (``--json`` form) of ``events`` plus ``dup``, and of ``events`` alone."""
    with_dup = step_breakdown(make_trace(events + dup)).to_json()
    alone = step_breakdown(make_trace(events)).to_json()
    return with_dup, alone


BASE = [
    ev(OP, 10_000, 30_000, "aten::mm", tid=1),
    ev(RT, 20_000, 5_000, "cudaLaunchKernel", corr=1),
    ev(K, 30_000, 40_000, "gemm", corr=1),
    ev(OP, 120_000, 30_000, "aten::add", tid=1),
]


@pytest.mark.parametrize(
    ("markers", "dup"),
    [
        # The same ProfilerStep#0 range twice (another thread): a 0-length row with 0.100 ms
        # of "cpu other" came of it.
        (
            [ev(ANN, 0, 100_000, "ProfilerStep#0"), ev(ANN, 100_000, 100_000, "ProfilerStep#1")],
            [ev(ANN, 0, 100_000, "ProfilerStep#0", tid=2)],
        ),
        # Recorded twice, the copy a little shorter and later: one step, their union.
        (
            [ev(ANN, 0, 100_000, "ProfilerStep#0"), ev(ANN, 100_000, 100_000, "ProfilerStep#1")],
            [ev(OP, 5_000, 90_000, "ProfilerStep#0", tid=3)],
        ),
        # The same gpuviz harness step twice.
        (
            [ev(ANN, 0, 90_000, "gpuviz/loops/for_loop#4"),
             ev(ANN, 100_000, 90_000, "gpuviz/loops/for_loop#5")],
            [ev(ANN, 0, 90_000, "gpuviz/loops/for_loop#4", tid=2)],
        ),
        # An optimizer step inside a wrapping one's (ZeroRedundancyOptimizer around Adam).
        (
            [ev(ANN, 50_000, 20_000, "Optimizer.step#ZeroRedundancyOptimizer.step"),
             ev(ANN, 150_000, 20_000, "Optimizer.step#ZeroRedundancyOptimizer.step")],
            [ev(ANN, 55_000, 10_000, "Optimizer.step#Adam.step", tid=2),
             ev(ANN, 150_000, 20_000, "Optimizer.step#ZeroRedundancyOptimizer.step", tid=2)],
        ),
        # DataParallel.forward twice at one start.
        (
            [ev(ANN, 0, 50_000, "DataParallel.forward"),
             ev(ANN, 100_000, 50_000, "DataParallel.forward")],
            [ev(ANN, 100_000, 50_000, "DataParallel.forward", tid=2)],
        ),
    ],
    ids=["profiler-step-twice", "profiler-step-nested", "harness-twice", "optimizer-nested",
         "dp-forward-twice"],
)  # fmt: skip
def test_a_marker_recorded_twice_is_one_step(markers: list, dup: list) -> None:
    with_dup, alone = _without(BASE + markers, dup)
    assert [r["duration_us"] for r in with_dup] == [r["duration_us"] for r in alone]
    assert all(r["duration_us"] > 0 for r in with_dup), with_dup
    for a, b in zip(with_dup, alone):  # CPU ranges: the union of the copies
        assert a["label"] == b["label"] and a["cpu_op_us"] == b["cpu_op_us"]
        assert a["devices"] == b["devices"]


def test_a_copy_that_runs_on_widens_its_step_to_the_union() -> None:
    events = [
        *BASE,
        ev(ANN, 0, 100_000, "ProfilerStep#0"),
        ev(ANN, 100_000, 100_000, "ProfilerStep#1"),
    ]
    st = find_steps(make_trace([*events, ev(OP, 90_000, 20_000, "ProfilerStep#0", tid=3)]))
    assert st.number.tolist() == [0, 1]
    assert st.cpu_start_ns.tolist() == [0, 100_000]
    assert st.cpu_end_ns.tolist() == [110_000, 200_000]  # #0's copy ran on to 110 µs
    assert (st.end_ns > st.start_ns).all()


def test_one_label_on_ranges_apart_is_a_step_each() -> None:
    # A profiler started twice numbers both runs from 0: each range is its own step.
    events = [
        *BASE,
        ev(ANN, 0, 100_000, "ProfilerStep#0"),
        ev(ANN, 100_000, 100_000, "ProfilerStep#1"),
        ev(ANN, 500_000, 100_000, "ProfilerStep#0"),
        ev(ANN, 600_000, 100_000, "ProfilerStep#1"),
        ev(OP, 510_000, 20_000, "aten::mm", tid=1),
    ]
    b = step_breakdown(make_trace(events)).to_json()
    assert [r["label"] for r in b] == ["ProfilerStep#0", "ProfilerStep#1"] * 2
    assert [r["start_us"] for r in b] == [0.0, 100.0, 500.0, 600.0]
    assert [r["duration_us"] for r in b] == [100.0] * 4
    assert b[2]["cpu_op_us"] == 20.0 and b[2]["cpu_other_us"] == 80.0


@pytest.mark.parametrize("name", ["ddp_2rank", "ddp_nccl_4rank", "gloo_4rank_cpu", "synthetic"])
def test_each_ranks_rows_are_those_a_mask_over_every_slice_finds(name: str) -> None:
    # find_steps groups the rows by rank once, from the tracks' ranges; a mask per rank over
    # every slice (the old way, independent of the track layout) must find the same rows.
    if name == "synthetic":  # ranks' tracks interleaved: rank 1 first, then 0, then 1 again
        events = [
            ev(ANN, 0, 10, "ProfilerStep#1", rank=1),
            ev(K, 1, 5, "k", rank=0, stream=3),
            ev(K, 2, 5, "k", rank=1, stream=9),
            ev(ANN, 0, 10, "ProfilerStep#1", rank=0, tid=4),
            ev(K, 3, 5, "k", rank=1, stream=2),
        ]
        trace = make_trace(events, ranks=[0, 1])
    else:
        trace = load_trace(DATA / name)
    slice_rank = trace.tracks.rank[trace.slices.track]
    got = list(_rows_by_rank(trace))  # one rank at a time, in order
    assert [rank for rank, _ in got] == sorted(set(slice_rank.tolist()))
    for rank, rows in got:
        assert rows.tolist() == np.flatnonzero(slice_rank == rank).tolist()


@pytest.mark.parametrize("name", ["ddp_2rank", "ddp_nccl_4rank"])
def test_steps_are_the_same_whatever_the_order_of_the_gpu_rows(name: str) -> None:
    # A trace's GPU rows come in rank order and find_steps then skips sorting them; rows in
    # any other order (an activity the caller shuffled) take the sort and give the same steps.
    from gpuviz.analysis.activity import gpu_activity

    trace = load_trace(DATA / name)
    a = gpu_activity(trace)
    assert (np.diff(a.rank) >= 0).all()
    shuffled = a.take(np.random.default_rng(5).permutation(len(a)))
    assert not (np.diff(shuffled.rank) >= 0).all()
    ordered, other = find_steps(trace, a), find_steps(trace, shuffled)
    for col in ("rank", "number", "start_ns", "end_ns"):
        assert getattr(ordered, col).tolist() == getattr(other, col).tolist(), col
    assert len(ordered) > 2


def _cpu_ahead_loop(
    work: list[list[int]], backlog_ns: int = 0, sync: bool = False
) -> tuple[list, list[tuple[int, int]]]:
    """A loop of ``len(work)`` ProfilerSteps, each 100 ns of CPU that launches kernels of the
    given durations at +10, +20, ... on one stream.

    Without ``sync`` the CPU runs ahead: the kernels run back to back, the first 40 ns after
    its launch (or after ``backlog_ns`` of GPU work launched before the trace). With ``sync``
    each step waits for its kernels (its CPU range ends 5 ns after its last kernel). Returns
    the events and each step's GPU work as (first kernel start, last kernel end), worked out
    here by hand from the rules above, not by gpuviz.
    """
    events: list = []
    spans: list[tuple[int, int]] = []
    gpu_free, cpu, corr = 0, 0, 1
    if backlog_ns:  # launched before the trace began: no launch recorded
        events.append(ev(K, 0, backlog_ns, "backlog"))
        gpu_free = backlog_ns
    for n, durations in enumerate(work):
        c0, first, t = cpu, None, cpu
        for d in durations:
            t += 10
            events.append(ev(RT, t, 5, "cudaLaunchKernel", corr=corr))
            k0 = max(gpu_free, t + 40)
            events.append(ev(K, k0, d, f"gemm{n}", corr=corr))
            first = k0 if first is None else first
            gpu_free, corr = k0 + d, corr + 1
        c1 = max(c0 + 100, gpu_free + 5) if sync else c0 + 100
        events.append(ev(ANN, c0, c1 - c0, f"ProfilerStep#{n}"))
        spans.append((int(first or c0), gpu_free))
        cpu = c1
    return events, spans


def test_a_gpu_bound_step_lasts_as_long_as_its_gpu_work() -> None:
    # Issue 47, item 1: the CPU runs ahead (each step's CPU 100 ns, its GPU work 1-3 µs).
    # Before, each window was its CPU range: steps 1-3 had ~0 GPU time and the last had all.
    work = [[1000, 500], [2000, 1000], [700, 300], [1500, 1500]]
    events, spans = _cpu_ahead_loop(work)
    b = step_breakdown(make_trace(events))
    st = b.steps
    gpu = [sum(w) for w in work]
    # After the first, a step starts when the previous step's GPU work ends: its GPU work.
    assert st.duration_ns.tolist()[1:] == gpu[1:]
    # The first also holds the launch latency of its first kernel (CPU start 0, kernel at 50).
    assert int(st.duration_ns[0]) == spans[0][1] - 0 == 50 + gpu[0]
    # The windows tile the wall time, from the first CPU start to the last kernel's end.
    assert int(st.duration_ns.sum()) == spans[-1][1]
    assert (st.end_ns[:-1] == st.start_ns[1:]).all()
    # Each step's GPU time is its own kernels, all of them compute.
    assert b.devices.compute_ns.tolist() == gpu
    assert st.cpu_end_ns.tolist() == [100, 200, 300, 400]  # the CPU ranges are kept


def test_a_first_step_queued_behind_earlier_work_starts_when_that_ends() -> None:
    # A profiler's warm-up steps leave GPU work (launched before the trace) that the first
    # profiled step's kernels wait behind: a CUDA event at its start fires when it ends.
    # Times in ms: the step's kernel waits 5 ms in the queue (past QUEUE_SLACK_NS).
    ms = 1_000_000
    events, spans = _cpu_ahead_loop([[1 * ms], [1 * ms]], backlog_ns=5 * ms)
    st = find_steps(make_trace(events))
    assert st.start_ns.tolist() == [5 * ms, 6 * ms]
    assert st.duration_ns.tolist() == [1 * ms, 1 * ms]
    assert spans == [(5 * ms, 6 * ms), (6 * ms, 7 * ms)]


def test_a_side_stream_copy_that_did_not_wait_says_nothing_of_the_backlog() -> None:
    # As above, with the first step also starting a prefetch copy on a side stream at once:
    # before, its start (not its queued kernel's) capped the backlog, and the first step
    # held the 5 ms of earlier work (adv_clean's first step read 39 ms for 22 ms steps).
    ms = 1_000_000
    events, _ = _cpu_ahead_loop([[1 * ms], [1 * ms]], backlog_ns=5 * ms)
    events += [
        ev(RT, 50, 5, "cudaMemcpyAsync", corr=99),
        ev(C, 60, 100_000, "Memcpy HtoD (Pinned -> Device)", corr=99, stream=14),
    ]
    st = find_steps(make_trace(events))
    assert st.start_ns.tolist() == [5 * ms, 6 * ms]


def test_a_synchronous_loop_keeps_its_cpu_windows() -> None:
    # Each step waits for its GPU work: the windows are the CPU ranges, as before item 1.
    work = [[1000, 500], [2000, 1000], [700, 300]]
    events, spans = _cpu_ahead_loop(work, sync=True)
    trace = make_trace(events)
    st = find_steps(trace)
    s = trace.slices
    marker = np.flatnonzero(s.kind == ANN)
    marker = marker[np.argsort(s.start_ns[marker])]
    assert st.start_ns.tolist() == s.start_ns[marker].tolist()
    assert st.end_ns.tolist() == (s.start_ns[marker] + s.dur_ns[marker]).tolist()
    assert all(a <= g0 and g1 <= b for (g0, g1), a, b in zip(spans, st.start_ns, st.end_ns))


def test_a_cpu_bound_loop_keeps_its_cpu_windows() -> None:
    # CPU 100 ns a step, GPU 20 ns: each kernel ends long before the next step starts.
    events, _ = _cpu_ahead_loop([[20], [20], [20]])
    st = find_steps(make_trace(events))
    assert st.start_ns.tolist() == [0, 100, 200]
    assert st.end_ns.tolist() == [100, 200, 300]
