"""Streams, devices, kernels, overlap, memory, ranges and splits on hand-made traces."""

from __future__ import annotations

import pytest
from synthetic_trace import ev, make_trace, mem

from gpuviz.analysis.kernels import kernel_table
from gpuviz.analysis.memory import memory_series
from gpuviz.analysis.overlap import device_overlap, overlap_totals
from gpuviz.analysis.ranges import range_stats
from gpuviz.analysis.splits import find_splits
from gpuviz.analysis.streams import device_stats, span_ns, stream_stats
from gpuviz.analysis.summary import summarize
from gpuviz.trace.model import Kind

K, C, S = Kind.KERNEL, Kind.MEMCPY, Kind.MEMSET


@pytest.fixture
def two_streams():
    # device 0: stream 7 kernels [0,100) [150,250); stream 14 kernel [50,200); copy on 18 [180,400)
    # device 1: one kernel [0,10), one set [5,20)
    return make_trace(
        [
            ev(K, 0, 100, "gemm", stream=7),
            ev(K, 150, 100, "gemm", stream=7),
            ev(K, 50, 150, "relu", stream=14),
            ev(C, 180, 220, "Memcpy HtoD", stream=18, nbytes=4096),
            ev(S, 210, 10, "Memset", stream=18, nbytes=99),
            ev(K, 0, 10, "gemm", device=1, stream=7),
            ev(S, 5, 15, "Memset", device=1, stream=7),
            ev(Kind.CPU_OP, -0, 1000, "aten::mm"),
        ]
    )


def test_stream_stats(two_streams) -> None:
    rows = {(r.device, r.stream): r for r in stream_stats(two_streams)}
    assert set(rows) == {(0, 7), (0, 14), (0, 18), (1, 7)}
    s7 = rows[(0, 7)]
    assert (s7.kernels, s7.kernel_ns, s7.memcpy, s7.memset, s7.busy_ns) == (2, 200, 0, 0, 200)
    s18 = rows[(0, 18)]
    assert (s18.memcpy, s18.memcpy_bytes, s18.memset, s18.busy_ns) == (1, 4096, 1, 220)
    d1 = rows[(1, 7)]
    assert (d1.kernels, d1.memset, d1.busy_ns) == (1, 1, 20)


def test_device_stats_and_span(two_streams) -> None:
    assert span_ns(two_streams) == 1000
    s = two_streams.slices
    whole = int((s.start_ns + s.dur_ns).max() - s.start_ns.min())
    for block in (1, 2, 3):  # the latest end in a later block than the earliest start
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr("gpuviz.trace.model.LOOKUP_BLOCK", block)
            two_streams._slices_end_ns = None  # found again, in these blocks
            assert span_ns(two_streams) == whole == 1000
    dev = {d.device: d for d in device_stats(two_streams)}
    assert dev[0].busy_ns == 400 and dev[0].utilization == pytest.approx(0.4)
    assert dev[1].busy_ns == 20


def test_overlap(two_streams) -> None:
    ov = {o.device: o for o in device_overlap(two_streams)}
    # kernels on 0: union [0,250); copy [180,400) -> 70 together
    assert ov[0].compute_copy_ns == 70
    # stream 7 [0,100)+[150,250), stream 14 [50,200) -> [50,100)+[150,200) = 100
    assert ov[0].multi_stream_ns == 100
    assert ov[1].compute_copy_ns == 0 and ov[1].multi_stream_ns == 0  # a set is not a copy
    assert overlap_totals(two_streams) == (70, 100)


def test_kernel_table(two_streams) -> None:
    table = kernel_table(two_streams)
    assert [k.name for k in table] == ["gemm", "relu"]
    g = table[0]
    assert (g.count, g.total_ns, g.min_ns, g.max_ns) == (3, 210, 10, 100)
    assert g.mean_ns == pytest.approx(70)
    assert g.share == pytest.approx(210 / 360)


def test_kernel_table_launch_info() -> None:
    t = make_trace(
        [
            ev(
                K,
                0,
                5,
                "k",
                args={
                    "grid": [2, 1, 1],
                    "block": [128, 1, 1],
                    "registers per thread": 32,
                    "est. achieved occupancy %": 50,
                },
            )
        ]
    )
    (row,) = kernel_table(t)
    assert row.grid == [2, 1, 1] and row.block == [128, 1, 1]
    assert row.registers_per_thread == 32 and row.occupancy_pct == 50


def test_memory_totals_and_deltas() -> None:
    t = make_trace(
        [ev(K, 0, 5)],
        memory=[
            mem(0, 0, 100, total=100, reserved=200),
            mem(5, 0, 400, total=500, reserved=600),
            mem(9, 0, -400, total=100, reserved=600),
            # device 1: 2021 style, only deltas; running sum 10, 40, 20, 60 -> peak 60
            mem(0, 1, 10),
            mem(1, 1, 30),
            mem(2, 1, -20),
            mem(3, 1, 40),
            mem(0, -1, 10**9, device_type=0),  # the CPU is not listed
        ],
    )
    series = {m.device: m for m in memory_series(t)}
    assert set(series) == {0, 1}
    assert (
        series[0].peak_allocated_bytes,
        series[0].peak_reserved_bytes,
        series[0].from_deltas,
    ) == (500, 600, False)
    assert (
        series[1].peak_allocated_bytes,
        series[1].peak_reserved_bytes,
        series[1].from_deltas,
    ) == (60, None, True)
    assert series[1].allocated_bytes.tolist() == [10, 40, 20, 60]
    assert len(memory_series(t, gpu_only=False)) == 3


def test_range_stats(two_streams) -> None:
    r = range_stats(two_streams, 190, 300)
    # kernels overlapping: gemm [150,250) and relu [50,200)
    assert r.kernels == 2 and r.kernel_ns == 60 + 10
    assert r.memcpy == 1 and r.memset == 1
    dev0 = next(d for d in r.devices if d.device == 0)
    assert dev0.busy_ns == 110
    assert r.compute_copy_ns == 60  # kernels [190,250) vs copy [190,300)
    assert r.multi_stream_ns == 10  # [190,200)
    assert range_stats(two_streams, 300, 190).duration_ns == 110


def test_no_gpu_events() -> None:
    t = make_trace([ev(Kind.CPU_OP, 0, 100, "aten::add")])
    s = summarize(t)
    assert not s.has_gpu_events
    j = s.to_json()
    assert j["streams"] == [] and j["devices"] == [] and j["top_kernels"] == []
    assert j["overlap"] == {"compute_copy_us": 0.0, "multi_stream_us": 0.0}
    assert "splits" not in j


def _dp_step(
    t0: int,
    batch: int,
    devices: list[int],
    corr0: int,
    gather_rows: list[int] | None = None,
    shapes: bool = True,
):
    """One DataParallel.forward with Scatter/chunk/Gather/split ops, and a kernel per device."""
    evs = [ev(Kind.USER_ANNOTATION, t0, 1000, "DataParallel.forward")]
    if shapes:
        evs += [
            ev(
                Kind.CPU_OP,
                t0 + 10,
                100,
                "Scatter",
                args={
                    "Concrete Inputs": [str(devices), "", "0", ""],
                    "Input type": ["ScalarList", "", "Scalar", "float"],
                    "Input Dims": [[], [], [], [batch, 5]],
                },
            ),
            ev(
                Kind.CPU_OP,
                t0 + 20,
                10,
                "aten::chunk",
                args={
                    "Concrete Inputs": ["", str(len(devices)), "0"],
                    "Input Dims": [[batch, 5], [], []],
                },
            ),
        ]
        if gather_rows is not None:
            evs += [
                ev(
                    Kind.CPU_OP,
                    t0 + 800,
                    100,
                    "Gather",
                    args={
                        "Concrete Inputs": ["0", "0"] + [""] * len(gather_rows),
                        "Input type": ["Scalar", "Scalar"] + ["float"] * len(gather_rows),
                        "Input Dims": [[], []] + [[r, 2] for r in gather_rows],
                    },
                ),
                ev(
                    Kind.CPU_OP,
                    t0 + 810,
                    10,
                    "aten::split_with_sizes",
                    args={
                        "Concrete Inputs": ["", str(gather_rows), "0"],
                        "Input Dims": [[batch, 2], [], []],
                    },
                ),
            ]
    for i, d in enumerate(devices):
        # launched from a replica thread inside the step; runs on the device partly after it
        evs.append(
            ev(Kind.RUNTIME, t0 + 200 + i, 5, "cudaLaunchKernel", tid=100 + i, corr=corr0 + i)
        )
        evs.append(ev(K, t0 + 300, 50 + 10 * d, "gemm", device=d, stream=7, corr=corr0 + i))
        evs.append(ev(C, t0 + 330, 40, "Memcpy DtoD", device=d, stream=7, corr=corr0 + 100 + i))
        evs.append(
            ev(Kind.RUNTIME, t0 + 250 + i, 5, "cudaMemcpyAsync", tid=100 + i, corr=corr0 + 100 + i)
        )
    return evs


def test_splits_from_split_with_sizes_with_an_idle_gpu() -> None:
    # 10 rows on 4 GPUs: chunk gives 3,3,3,1; the trace says so too.
    t = make_trace(
        _dp_step(0, 10, [0, 1, 2, 3], 1, gather_rows=[3, 3, 3, 1])
        + _dp_step(5000, 4, [0, 1, 2, 3], 50, gather_rows=[2, 2])
    )
    rows = find_splits(t)
    assert [(r.step, r.device, r.rows) for r in rows] == [
        (0, 0, 3),
        (0, 1, 3),
        (0, 2, 3),
        (0, 3, 1),
        (1, 0, 2),
        (1, 1, 2),
        (1, 2, 0),
        (1, 3, 0),
    ]
    assert all(r.source == "split_with_sizes" for r in rows)
    assert [r.planned_rows for r in rows] == [3, 3, 3, 1, 1, 1, 1, 1]
    # gpu time: union of kernel [300, 350+10d) and copy [330, 370)
    assert [r.gpu_ns for r in rows[:4]] == [70, 70, 70, 80]
    j = summarize(t).to_json()
    assert j["splits"][0] == {"rank": None, "step": 0, "device": 0, "rows": 3, "gpu_us": 0.07}


def test_splits_fall_back_to_chunk_and_ignore_work_launched_outside() -> None:
    evs = _dp_step(0, 30, [0, 1], 1)
    # a kernel launched before the step on device 0 does not count, even if it runs inside
    evs += [
        ev(Kind.RUNTIME, -50, 5, "cudaLaunchKernel", corr=999),
        ev(K, 500, 400, "late", corr=999),
    ]
    t = make_trace(evs)
    rows = find_splits(t)
    assert [(r.device, r.rows, r.source) for r in rows] == [(0, 15, "chunk"), (1, 15, "chunk")]
    assert rows[0].gpu_ns == 70


def test_splits_without_shapes_list_busy_devices() -> None:
    t = make_trace(_dp_step(0, 30, [0, 1], 1, shapes=False))
    rows = find_splits(t)
    assert [(r.device, r.rows) for r in rows] == [(0, None), (1, None)]
    assert rows[1].gpu_ns == 70  # kernel [300,360) and copy [330,370)


def test_no_dataparallel_no_splits(two_streams) -> None:
    assert find_splits(two_streams) == []
