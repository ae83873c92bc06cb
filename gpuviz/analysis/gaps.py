"""Why each GPU sat idle: every idle gap inside the steps, with its most likely cause.

A gap is a stretch with nothing (no kernel, copy or set) running on a GPU, between two pieces
of work, inside the steps' windows (cut where the windows end: gpuviz's harness time between
its steps is left out). The gap before a device's first work in the trace is left out too:
it is where the profiler's window began, not something the program did.

Each gap gets one cause, tested in this order (so that no time is counted twice):

``comm``
    a CPU thread of the rank was inside a collective (a ``gloo:``/``nccl:`` range, a
    ``c10d::`` op, ``record_param_comms``) for most of the gap: with gloo the GPU waits while
    the CPU communicates (and, with a straggler, while it waits for the other ranks).
``sync``
    a CPU thread of the rank was blocked in a synchronizing call (``cudaStreamSynchronize``,
    ``cudaDeviceSynchronize``, ``cudaEventSynchronize``, a blocking ``cudaMemcpy``, …) that
    began before the gap and returned as it began: the CPU waited for the GPU to drain, and the
    GPU then waited for the CPU to queue more work. The ``launch`` gaps that follow such a gap
    on its GPU (no other cause between) are the sync's too, as long as their time, with the
    sync's own gap, stays within the time the CPU was blocked in the call: the sync emptied
    the queue, so the GPU waits for each launch (a launch-bound symptom whose cause is the
    sync; CUDA graphs, the launch-bound fix, cannot capture a sync). Without the sync the CPU
    would have been that much further ahead, and no more: past it, the CPU is slower than the
    GPU and the gaps stay ``launch`` (a CPU-bound loop with one ``.item()`` a step keeps its
    launch-bound gaps). :attr:`IdleGaps.sync_ns` is the part of each gap the sync accounts for.
``starved``
    the gap lasts :data:`STARVED_MIN_NS` or more, and the rank's CPU threads ran no PyTorch op
    for most of it (less than :data:`STARVED_OP_SHARE`): Python, data loading or sleeping
    kept the GPU waiting. (Shorter gaps without an op are the Python between two ops: they
    count as ``launch`` when the next work waited for its launch.)
``launch``
    the work after the gap began right after its launch call returned (within
    :data:`LAUNCH_SLACK_NS`): the GPU waited for the CPU to dispatch it.
``other``
    anything else: waits on events of other streams, work launched before the trace began.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.activity import GpuActivity
from gpuviz.analysis.coverage import Coverage
from gpuviz.analysis.names import SYNC_CALLS, is_cpu_collective, name_mask
from gpuviz.analysis.stacks import enclosing_ops
from gpuviz.analysis.steps import Steps, coverage_by_rank, pytorch_op_coverages
from gpuviz.trace.model import NONE, Kind, Trace

I64 = npt.NDArray[np.int64]

CAUSES = ("other", "sync", "starved", "launch", "comm")
"""Gap causes by code (:attr:`IdleGaps.cause`)."""
OTHER, SYNC, STARVED, LAUNCH, COMM = range(5)

LAUNCH_SLACK_NS = 50_000
"""A gap is launch-bound when the work after it started at most this long after its launch
call returned (a kernel starts a few µs after its launch when its stream is empty)."""

STARVED_OP_SHARE = 0.5
"""A gap is starved when PyTorch ops ran during less than this share of it…"""

STARVED_MIN_NS = 1_000_000
"""…and it lasts at least this long."""

HARNESS_PREFIX = "gpuviz/"
"""The ``record_function`` prefix of gpuviz's step harness (``gpuviz.engine.profiling``)."""

COMM_SHARE = 0.5
"""A gap is a collective's when the CPU was inside one for at least this share of it."""

SYNC_SLACK_NS = 20_000
"""A sync call may return up to this long before the gap begins (CPU and GPU clocks differ
by a few µs, and the GPU's last work may end just after the call saw it complete)."""


@dataclass
class IdleGaps:
    """GPU idle gaps, one row each, ordered by (rank, device, start).

    Attributes
    ----------
    rank, device : int64
        The idle GPU.
    start_ns, end_ns : int64
        The gap (ns from the trace zero).
    step : int64
        Row in :class:`~gpuviz.analysis.steps.Steps` whose window holds the gap's end.
    next_row : int64
        Slice row of the work that ended the gap.
    launch_row : int64
        Slice row of that work's launch call, or -1 (launched before the trace began).
    sync_row : int64
        For ``sync`` gaps, the slice row of the synchronizing call; else -1.
    sync_ns : int64
        For ``sync`` gaps, the part of the gap the sync accounts for: what the CPU, blocked in
        the call, could have queued ahead (the blocked time, less the sync's earlier gaps);
        else 0.
    after_sync : bool
        The gap follows a ``sync`` gap on its GPU with only ``launch`` gaps between (or is
        one): the GPU waits for launches because a sync emptied its queue, whether or not the
        sync's blocked time covers it.
    cpu_op_ns : int64
        Time inside the gap during which the rank's CPU threads ran a PyTorch op.
    cpu_comm_ns : int64
        Time inside the gap during which they were inside a collective.
    cause : uint8
        Index into :data:`CAUSES`.
    """

    rank: I64
    device: I64
    start_ns: I64
    end_ns: I64
    step: I64
    next_row: I64
    launch_row: I64
    sync_row: I64
    sync_ns: I64
    after_sync: npt.NDArray[np.bool_]
    cpu_op_ns: I64
    cpu_comm_ns: I64
    cause: npt.NDArray[np.uint8]

    def __len__(self) -> int:
        return len(self.start_ns)

    @property
    def duration_ns(self) -> I64:
        """``end_ns - start_ns``."""
        return self.end_ns - self.start_ns


def idle_gaps(
    trace: Trace,
    steps: Steps,
    activity: GpuActivity,
    coverages: dict[tuple[int, int], dict[str, Coverage]],
    op_coverages: dict[int, Coverage] | None = None,
) -> IdleGaps:
    """Every GPU idle gap inside the steps, with its cause (see the module docstring).

    Parameters
    ----------
    trace : Trace
    steps : Steps
        ``find_steps(trace, activity)``.
    activity : GpuActivity
        ``gpu_activity(trace)``.
    coverages : dict
        ``device_coverages(activity, comm_mask(trace, activity))``.
    op_coverages : dict, optional
        ``pytorch_op_coverages(trace)`` when the caller has it.

    Returns
    -------
    IdleGaps
    """
    s = trace.slices
    parts: list[dict[str, I64]] = []
    syncs = _sync_calls(trace)
    ops_by_rank = pytorch_op_coverages(trace) if op_coverages is None else op_coverages
    comm_by_rank = cpu_collective_coverages(trace)
    none = Coverage([], [])
    for (rank, device), cov in sorted(coverages.items()):
        busy = cov["busy"]
        mine = steps.of_rank(rank)
        if len(busy) < 2 or len(mine) == 0:
            continue
        g0, g1 = busy.ends[:-1], busy.starts[1:]
        # Keep the part of each gap inside the run of step windows that holds its end: windows
        # that tile make one run, and gpuviz's harness time between its steps is no one's gap.
        runs = Coverage(steps.start_ns[mine], steps.end_ns[mine])
        k = np.searchsorted(runs.ends, g1, side="left")
        kk = np.minimum(k, len(runs) - 1)
        keep = (k < len(runs)) & (g1 > runs.starts[kk])
        g0, g1 = np.maximum(g0[keep], runs.starts[kk[keep]]), g1[keep]
        keep = g1 > g0
        g0, g1 = g0[keep], g1[keep]
        if len(g0) == 0:
            continue
        on_dev = (activity.rank == rank) & (activity.device == device)
        rows = activity.rows[on_dev]
        starts = activity.start_ns[on_dev]
        order = np.argsort(starts, kind="stable")
        rows, starts = rows[order], starts[order]
        nxt = rows[np.minimum(np.searchsorted(starts, g1, side="left"), len(rows) - 1)]
        launch = trace.launches_of(nxt)
        has = launch >= 0
        launch_end = np.where(
            has, s.start_ns[np.maximum(launch, 0)] + s.dur_ns[np.maximum(launch, 0)], 0
        )
        k = np.searchsorted(steps.start_ns[mine], g1, side="left") - 1
        step = mine[np.clip(k, 0, len(mine) - 1)]
        ops = ops_by_rank.get(rank, none).covered(g0, g1)
        comm = comm_by_rank.get(rank, none).covered(g0, g1)
        sync_row = _sync_before(syncs, rank, g0, g1)
        dur = g1 - g0
        cause = np.full(len(g0), OTHER, dtype=np.uint8)
        cause[has & (g1 - launch_end <= LAUNCH_SLACK_NS)] = LAUNCH
        cause[(dur >= STARVED_MIN_NS) & (ops < STARVED_OP_SHARE * dur)] = STARVED
        cause[sync_row >= 0] = SYNC
        cause[comm >= COMM_SHARE * dur] = COMM
        sync_ns, after_sync = _follow_syncs(cause, sync_row, dur, s.dur_ns[np.maximum(sync_row, 0)])
        parts.append(
            {
                "rank": np.full(len(g0), rank, dtype=np.int64),
                "device": np.full(len(g0), device, dtype=np.int64),
                "start_ns": g0,
                "end_ns": g1,
                "step": step.astype(np.int64),
                "next_row": nxt.astype(np.int64),
                "launch_row": launch.astype(np.int64),
                "sync_row": sync_row,
                "sync_ns": sync_ns,
                "after_sync": after_sync,  # type: ignore[dict-item]
                "cpu_op_ns": ops,
                "cpu_comm_ns": comm,
                "cause": cause,  # type: ignore[dict-item]
            }
        )
    if not parts:
        e = np.empty(0, dtype=np.int64)
        return IdleGaps(
            e, e, e, e, e, e, e, e, e, np.empty(0, dtype=bool), e, e, np.empty(0, dtype=np.uint8)
        )
    return IdleGaps(**{k: np.concatenate([p[k] for p in parts]) for k in parts[0]})


def _follow_syncs(
    cause: npt.NDArray[np.uint8], sync_row: I64, dur: I64, blocked: I64
) -> tuple[I64, npt.NDArray[np.bool_]]:
    """Give a sync the ``launch`` gaps that follow its gap (see the module docstring).

    ``cause`` and ``sync_row`` (one device's gaps, in time order) are changed in place: a
    ``launch`` gap after a ``sync`` gap, with only ``launch`` gaps between, becomes ``sync``
    (with that sync's row) while the gaps before it since the sync's own gap add up to less
    than ``blocked`` (the time the CPU was blocked in the call, per gap).

    Returns
    -------
    sync_ns : int64
        Per gap, the part the sync accounts for (0 for gaps of other causes).
    after_sync : bool
        Per gap: a ``sync`` gap, or a ``launch`` gap after one with only ``launch`` gaps
        between (:attr:`IdleGaps.after_sync`).
    """
    n = len(cause)
    idx = np.arange(n)
    is_sync = cause == SYNC
    last_sync = np.maximum.accumulate(np.where(is_sync, idx, -1)) if n else idx
    breaks = (cause != SYNC) & (cause != LAUNCH)
    last_break = np.maximum.accumulate(np.where(breaks, idx, -1)) if n else idx
    head = np.maximum(last_sync, 0)
    # The gaps' time from the sync's own gap up to each gap (not counting it).
    cum = np.concatenate(([0], np.cumsum(dur)))
    before = cum[idx] - cum[head]
    credit = np.where(last_sync >= 0, blocked[head] - before, 0)
    after = (cause == LAUNCH) & (last_sync > last_break)
    follows = after & (credit > 0)
    cause[follows] = SYNC
    sync_row[follows] = sync_row[head[follows]]
    sync_ns = np.where(cause == SYNC, np.clip(credit, 0, dur), 0).astype(np.int64)
    return sync_ns, after | (cause == SYNC)


def cpu_collective_coverages(trace: Trace) -> dict[int, Coverage]:
    """Per rank, the time any of its CPU threads spends inside a collective."""
    s = trace.slices
    hit = name_mask(trace.symbols, is_cpu_collective)
    cpu = (s.kind == Kind.CPU_OP) | (s.kind == Kind.USER_ANNOTATION)
    return coverage_by_rank(trace, np.flatnonzero(cpu & hit[s.name]))


@dataclass
class _Syncs:
    rank: I64
    start_ns: I64
    end_ns: I64
    row: I64


def _sync_calls(trace: Trace) -> _Syncs:
    """The synchronizing runtime calls of every rank, sorted by (rank, end).

    gpuviz's own step harness (``gpuviz run``) synchronizes the device around each profiled
    step, inside its ``gpuviz/<label>#<step>`` range and outside any op: those calls measure
    the step, they are not the program's, and are left out.
    """
    s, t = trace.slices, trace.tracks
    ids = [i for i in (trace.symbols.find(n) for n in SYNC_CALLS) if i >= 0]
    rows = np.flatnonzero((s.kind == Kind.RUNTIME) & np.isin(s.name, ids))
    rows = rows[~_harness_syncs(trace, rows)]
    end = s.start_ns[rows] + s.dur_ns[rows]
    rank = t.rank[s.track[rows]].astype(np.int64)
    order = np.lexsort((end, rank))
    return _Syncs(rank[order], s.start_ns[rows][order], end[order], rows[order].astype(np.int64))


def _harness_syncs(trace: Trace, rows: I64) -> npt.NDArray[np.bool_]:
    """Which sync rows are gpuviz's step harness's: a bare device sync in a ``gpuviz/`` range."""
    s, t = trace.slices, trace.tracks
    out = np.zeros(len(rows), dtype=bool)
    device_sync = np.isin(
        s.name[rows],
        [trace.symbols.find(n) for n in ("cudaDeviceSynchronize", "hipDeviceSynchronize")],
    )
    harness = name_mask(trace.symbols, lambda n: n.startswith(HARNESS_PREFIX))
    ranges = np.flatnonzero((s.kind == Kind.USER_ANNOTATION) & harness[s.name])
    if not device_sync.any() or len(ranges) == 0:
        return out
    bare = np.array([not chain for chain in enclosing_ops(trace, rows)], dtype=bool)
    rank = t.rank[s.track[rows]]
    for r in np.unique(rank[device_sync & bare]).tolist():
        mine = ranges[t.rank[s.track[ranges]] == r]
        cov = Coverage(s.start_ns[mine], s.start_ns[mine] + s.dur_ns[mine])
        q = np.flatnonzero(device_sync & bare & (rank == r))
        start = s.start_ns[rows[q]]
        inside = cov.covered(start, start + s.dur_ns[rows[q]]) == s.dur_ns[rows[q]]
        out[q[inside]] = True
    return out


def _sync_before(syncs: _Syncs, rank: int, g0: I64, g1: I64) -> I64:
    """Per gap: a sync call of ``rank`` that began before the gap and returned at its start."""
    out = np.full(len(g0), NONE, dtype=np.int64)
    mine = syncs.rank == rank
    if not mine.any():
        return out
    end, start, row = syncs.end_ns[mine], syncs.start_ns[mine], syncs.row[mine]
    # The first call that returns at or after (gap start - slack); it must return before the
    # gap ends and have started before the gap began (it was waiting while the GPU worked).
    i = np.searchsorted(end, g0 - SYNC_SLACK_NS, side="left")
    ok = i < len(end)
    ic = np.minimum(i, len(end) - 1)
    ok &= (end[ic] <= g1) & (start[ic] < g0)
    out[ok] = row[ic[ok]]
    return out
