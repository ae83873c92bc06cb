"""Collective alignment and rank × step measures: real DDP traces, a gloo recording, 64 ranks."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
from synthetic_trace import ev, make_trace

from gpuviz.analysis.collectives import align_collectives
from gpuviz.analysis.intervals import union_length
from gpuviz.analysis.ranks import MEASURES, rank_analysis
from gpuviz.trace.kineto import load_trace
from gpuviz.trace.model import Kind

ROOT = Path(__file__).parent.parent.parent
DATA = ROOT / "tests" / "data"
SAMPLES = ROOT / "assets" / "samples"


def _gen_trace():
    spec = importlib.util.spec_from_file_location("gen_trace", ROOT / "benchmarks" / "gen_trace.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules["gen_trace"] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _parts(trace, rank: int, kernels: bool) -> np.ndarray:
    """Rows of one rank's collective parts, read without the module under test, by start."""
    s = trace.slices
    names = np.asarray(trace.symbols.strings, dtype=object)[s.name]
    if kernels:
        hit = (s.kind == Kind.KERNEL) & np.array(["nccl" in n.lower() for n in names])
    else:
        hit = (s.kind == Kind.USER_ANNOTATION) & np.array([n.startswith("gloo:") for n in names])
    rows = np.flatnonzero(hit & (trace.tracks.rank[s.track] == rank))
    return rows[np.argsort(s.start_ns[rows], kind="stable")]


def _check_against_raw_parts(trace, table, kernels: bool) -> None:
    """Arrivals, waits and last ranks recomputed from the raw slices, by order."""
    s = trace.slices
    starts = np.stack(
        [s.start_ns[_parts(trace, int(r), kernels)] for r in table.ranks.tolist()], axis=1
    )
    assert starts.shape == table.arrival_ns.shape
    assert (table.arrival_ns == starts).all()
    last = starts.max(axis=1)
    assert (table.last_arrival_ns == last).all()
    assert (table.wait_ns == last[:, None] - starts).all()
    assert (table.last_rank == table.ranks[starts.argmax(axis=1)]).all()
    srt = np.sort(starts, axis=1)
    assert (table.delay_ns == srt[:, -1] - srt[:, -2]).all()


def test_gloo_cpu_recording_planted_straggler() -> None:
    # scripts/record_collectives.py: 4 CPU ranks, rank 2 computes 20 ms longer per step.
    trace = load_trace(DATA / "gloo_4rank_cpu")
    ra = rank_analysis(trace)
    table = ra.collectives
    assert table.ranks.tolist() == [0, 1, 2, 3]
    assert len(table) == 8  # 4 steps x (DDP's bucket + the loss all_reduce)
    assert set(table.name) == {"all_reduce"} and set(table.group) == {"gloo"}
    assert table.matched_by == "order"
    _check_against_raw_parts(trace, table, kernels=False)
    st = ra.straggler
    assert st is not None and st.rank == 2 and st.measure == "compute"
    assert st.ratio > 5  # 20 ms of planted matmuls against about 1 ms of real work
    counts = table.last_counts()
    assert counts[2] == max(counts.values()) == st.last
    # Others waited for rank 2: the sum of their waits where it came last.
    last = table.last_rank == 2
    waits = np.where(table.present, table.wait_ns, 0)[last]
    assert st.others_wait_ns == int(waits.sum())
    # Per-step waits add up to the collectives' waits.
    m = ra.matrix
    assert int(m.wait_ns[m.present].sum()) == int(np.where(table.present, table.wait_ns, 0).sum())


def test_ddp_4rank_h200_sample() -> None:
    trace = load_trace(SAMPLES / "ddp_4rank_h200")
    ra = rank_analysis(trace)
    table = ra.collectives
    assert len(table) == 2 and table.group == ["pg 0", "pg 0"]
    assert table.name == ["allreduce", "allreduce"]  # from the kernels' "Collective name" arg
    _check_against_raw_parts(trace, table, kernels=True)
    # Rank 0 is last at both all-reduces, but its compute is the same as the others': its lag
    # is host jitter over two collectives only, which is not called a straggler.
    assert table.last_rank.tolist() == [0, 0]
    assert ra.straggler is None
    m = ra.matrix
    assert m.ranks.tolist() == [0, 1, 2, 3] and m.steps.tolist() == [0, 1]
    assert (m.work_ns == m.step_ns - m.wait_ns).all()


def test_ddp_2rank_no_straggler() -> None:
    trace = load_trace(DATA / "ddp_2rank")
    ra = rank_analysis(trace)
    assert len(ra.collectives) == 3
    _check_against_raw_parts(trace, ra.collectives, kernels=True)
    assert ra.straggler is None
    assert ra.matrix.steps.tolist() == [2, 3, 4]


def test_nccl_2rank_h200_recording_names_its_planted_straggler() -> None:
    # DDP over NCCL on two H200s (tests/data/scripts/ddp_nccl.py under `gpuviz profile
    # --nproc-per-node 2`): rank 1 sleeps 10 ms before each step, so rank 0's all-reduces wait.
    # Rank 0's window opened a little earlier: its first all-reduce (the step before) has no
    # part on rank 1 and stays out; the other ten match in order.
    trace = load_trace(DATA / "nccl_2rank_h200")
    ra = rank_analysis(trace)
    table = ra.collectives
    assert len(table) == 10 and set(table.group) == {"pg 0"} and table.present.all()
    r0, r1 = _parts(trace, 0, kernels=True), _parts(trace, 1, kernels=True)
    assert (len(r0), len(r1)) == (11, 10)
    assert table.ranks.tolist() == [0, 1]
    starts = trace.slices.start_ns
    assert (table.arrival_ns == np.stack([starts[r0[1:]], starts[r1]], axis=1)).all()
    assert table.last_rank.tolist() == [1] * 10
    col0 = table.ranks.tolist().index(0)
    # Two all-reduces a step (DDP's two buckets): rank 0 waits out rank 1's sleep at the first.
    assert (table.wait_ns[::2, col0] > 8_000_000).all()
    assert (table.wait_ns[1::2, col0] < 1_000_000).all()
    assert ra.straggler is not None and ra.straggler.rank == 1


def _write_ranks(folder: Path, world: int, **kw) -> None:
    gen = _gen_trace()
    folder.mkdir()
    for r in range(world):
        with open(folder / f"rank-{r}.json", "w") as f:
            gen.write_trace(
                f,
                100,
                1,
                3,
                rank=r,
                world=world,
                collective_every=25,
                straggler=kw.get("straggler", -1),
                skip_collectives=kw.get("skip", {}).get(r, 0),
            )


@pytest.fixture(scope="module")
def ranks64(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("r64") / "run"
    _write_ranks(folder, 64, straggler=5, skip={10: 1, 20: 1, 30: 2})
    return folder


def test_64_ranks_straggler_and_misaligned_windows(ranks64: Path) -> None:
    gen = sys.modules["gen_trace"]
    trace = load_trace(ranks64)
    ra = rank_analysis(trace)
    table = ra.collectives
    assert table.ranks.tolist() == list(range(64)) and len(table) == 4
    # Ranks whose files start late are matched with a shift, and are absent where they lack data.
    assert {k[1]: v for k, v in table.shift.items() if v} == {10: -1, 20: -1, 30: -2}
    assert table.matched_by == "order+shift"
    assert table.present.sum(axis=1).tolist() == [61, 63, 64, 64]
    assert not table.present[:2, 30].any() and not table.present[0, 10]
    # Straggler: rank 5, 1.3x the kernels and the work, last everywhere.
    st = ra.straggler
    assert st is not None and (st.rank, st.measure) == (5, "compute")
    assert st.ratio > 1.1 and st.ratio == pytest.approx(st.rank_ns / st.median_ns)
    # Compute cells recomputed: the union of the rank's non-NCCL kernels inside each window.
    s = trace.slices
    names = np.asarray(trace.symbols.strings, dtype=object)[s.name]
    m = ra.matrix
    for r in (5, 30):
        k = np.flatnonzero(
            (s.kind == Kind.KERNEL)
            & (trace.tracks.rank[s.track] == r)
            & np.array(["nccl" not in n for n in names])
        )
        for j in np.flatnonzero(m.present[r]):
            t0, t1 = int(m.start_ns[r, j]), int(m.start_ns[r, j] + m.step_ns[r, j])
            a, b = np.clip(s.start_ns[k], t0, t1), np.clip(s.start_ns[k] + s.dur_ns[k], t0, t1)
            assert m.compute_ns[r, j] == union_length(a, b)
    assert table.last_rank.tolist() == [5, 5, 5, 5]
    # Its delay per collective is what the generator planned: its work minus the next slowest's.
    plan = gen._CollectivePlan(64, 3, 5, 25)
    for c in range(4):
        work = np.array([plan.work_us(r, c) for r in range(64)])[table.present[c]]
        expect_us = work.max() - np.sort(work)[-2]  # among the ranks whose files have it
        assert table.delay_ns[c] / 1000 == pytest.approx(expect_us, abs=0.01)
    assert m.steps.tolist() == [0, 1, 2, 3]
    assert not m.present[30, :2].any() and m.present[30, 2:].all()
    for name in MEASURES:
        cells = m.measure(name)
        assert (cells[~m.present] == -1).all() and (cells[m.present] >= 0).all()
    # The straggler's rank never waits; the others wait about its delay or more.
    assert (m.wait_ns[5, m.present[5]] == 0).all()
    worst = table.worst(2)
    assert table.total_wait_ns[worst[0]] >= table.total_wait_ns[worst[1]]


def test_64_ranks_without_a_straggler(tmp_path: Path) -> None:
    _write_ranks(tmp_path / "run", 64)
    ra = rank_analysis(load_trace(tmp_path / "run"))
    assert len(ra.collectives) == 4
    assert ra.straggler is None


def test_sequence_numbers_win_over_order() -> None:
    # Rank 1 lists its collectives in another order; their seq args match them anyway.
    nccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
    events = [
        ev(Kind.KERNEL, 100, 50, nccl, rank=0, args={"Process Group Name": "0", "seq": 1}),
        ev(Kind.KERNEL, 300, 50, nccl, rank=0, args={"Process Group Name": "0", "seq": 2}),
        ev(Kind.KERNEL, 120, 30, nccl, rank=1, args={"Process Group Name": "0", "seq": 2}),
        ev(Kind.KERNEL, 330, 20, nccl, rank=1, args={"Process Group Name": "0", "seq": 3}),
    ]
    table = align_collectives(make_trace(events, ranks=[0, 1]))
    assert table.matched_by == "seq"
    assert len(table) == 1 and table.seq.tolist() == [2]
    assert table.arrival_ns.tolist() == [[300, 120]]
    assert table.wait_ns.tolist() == [[0, 180]]


def test_streams_group_kernels_without_process_group_args() -> None:
    nccl = "ncclKernel_AllReduce_RING_LL_Sum_float"
    events = [
        ev(Kind.KERNEL, 100, 100, nccl, rank=0, stream=20),
        ev(Kind.KERNEL, 150, 50, nccl, rank=1, stream=33),
        ev(Kind.KERNEL, 400, 100, "ncclDevKernel_SendRecv", rank=0, stream=20),  # p2p: left out
    ]
    table = align_collectives(make_trace(events, ranks=[0, 1]))
    assert table.group == ["stream#0"] and table.name == ["AllReduce"]
    assert table.wait_ns.tolist() == [[50, 0]]


def test_lone_file_has_no_collectives() -> None:
    table = align_collectives(make_trace([ev(Kind.KERNEL, 0, 10, "ncclKernel_AllReduce")]))
    assert len(table) == 0


def test_straggler_is_the_rank_that_held_the_others_up_not_the_lower_of_a_tie() -> None:
    """Two ranks, per step a slow bucket all_reduce (rank 1 arrives 30 ms late) and a quick loss
    all_reduce that rank 0 reaches a few microseconds last: each rank is last in half the
    collectives. Seen on an H100 with gloo; the tie named rank 0."""
    from gpuviz.analysis.collectives import CollectiveTable
    from gpuviz.analysis.ranks import RankStepMatrix, find_straggler

    steps = 4
    ms = 1_000_000
    ranks = np.array([0, 1], dtype=np.int64)
    rows = 2 * steps
    arrival = np.zeros((rows, 2), dtype=np.int64)
    for s in range(steps):
        base = s * 36 * ms
        arrival[2 * s] = [base + 5 * ms, base + 35 * ms]  # bucket: rank 1 is 30 ms late
        arrival[2 * s + 1] = [base + 35_500_000 + 20_000, base + 35_500_000]  # loss: rank 0, 20 us
    last_col = arrival.argmax(axis=1)
    last_arrival = arrival.max(axis=1)
    wait = last_arrival[:, None] - arrival
    ordered = np.sort(arrival, axis=1)
    table = CollectiveTable(
        ranks=ranks,
        group=["gloo"] * rows,
        name=["all_reduce"] * rows,
        seq=np.arange(rows, dtype=np.int64),
        present=np.ones((rows, 2), dtype=bool),
        arrival_ns=arrival,
        end_ns=last_arrival[:, None] + np.zeros((1, 2), dtype=np.int64) + 100_000,
        slice_row=np.arange(2 * rows, dtype=np.int64).reshape(rows, 2),
        step=np.repeat(np.arange(steps, dtype=np.int64), 2)[:, None] + np.zeros((1, 2), np.int64),
        wait_ns=wait,
        last_arrival_ns=last_arrival,
        last_rank=ranks[last_col],
        delay_ns=ordered[:, 1] - ordered[:, 0],
        total_wait_ns=wait.sum(axis=1),
    )
    assert table.last_counts() == {0: steps, 1: steps}

    def cells(a: int, b: int) -> np.ndarray:
        return np.array([[a] * steps, [b] * steps], dtype=np.int64)

    matrix = RankStepMatrix(
        ranks=ranks,
        steps=np.arange(1, steps + 1, dtype=np.int64),
        step_row=np.arange(2 * steps, dtype=np.int64).reshape(2, steps),
        start_ns=cells(0, 0),
        step_ns=cells(36 * ms, 36 * ms),
        compute_ns=cells(56_000, 3_150_000),
        comm_ns=cells(0, 0),
        idle_ns=cells(35 * ms, 32 * ms),
        wait_ns=cells(30 * ms, 20_000),
        work_ns=cells(6 * ms, 36 * ms),
    )
    found = find_straggler(matrix, table)
    assert found is not None
    assert found.rank == 1
    assert found.measure == "compute"
    assert found.last == steps and found.taking_part == rows
