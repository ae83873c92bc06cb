"""The steps of a trace, and where each step's time went on every GPU and on the CPU.

Steps are found per rank, from the first of these that the rank has (a serving trace's steps,
:mod:`gpuviz.analysis.serving_markers`, come before all of them; docs/serving.md):

0. gpuviz's own step ranges (``gpuviz/<label>#N``, which ``gpuviz run`` records around each
   profiled step), numbered N. The time between them is gpuviz's harness, not the program:
   these windows do not tile, each one ends when its range and the GPU work it launched end
   (and starts no earlier than the previous one's work ended);
1. ``ProfilerStep#N`` ranges (what ``prof.step()`` records), numbered N;
2. optimizer-step annotations (``Optimizer.step#SGD.step``): a step ends where one ends, and
   the first starts at the rank's first CPU event;
3. ``DataParallel.forward`` ranges: a step runs from one forward to the next;
4. else the whole trace is one step.

A marker recorded more than once (the same ``ProfilerStep#N`` on two threads, an optimizer
step nested in a wrapping one's, a repeated range) is one step: ranges of one number that
overlap, or start together, are merged into their union. The same number on ranges apart in
time (a profiler started twice) gives a step for each.

A step's time is what users mean by one: from the start of its work to the start of the next
step's, counting the GPU work it launched (a kernel, copy or set belongs to the step whose CPU
range holds the launch with its correlation id). Let ``W_k``, the end of step k's own work, be
the later of its CPU range's end and the end of the GPU work it launched. Step k's window starts
at ``b_k = max(c0_k, W_{k-1}, b_{k-1})`` (``c0_k`` its CPU start) and ends where the next step
starts, so the windows tile the time and nothing is counted twice:

- a synchronous or CPU-bound loop (each step's GPU work done before the next step's CPU
  starts) has the windows of its CPU ranges;
- a loop whose CPU runs ahead of the GPU (no sync) has each step start when the previous
  step's GPU work ends: a GPU-bound step lasts as long as its GPU work, as the time between
  CUDA events recorded where each step starts its launches, and the steps add up to the wall
  time (before, a window was the CPU range: 0.5 ms for a 14 ms step, and the last window held
  all the GPU work);
- the first step of a run (and one after a gap in the step numbers) whose GPU work waits
  behind GPU work launched before it (a profiler's warm-up steps, whose launches the trace
  does not hold) starts when that work ends, never after its first queued GPU work starts.

The last window (and one followed by a gap in the step numbers, as a profiler schedule that
skips steps makes) ends at ``W_k``: GPU work runs behind the CPU that launched it.

Inside each window every GPU's time is split into exclusive parts, in this order of
precedence: *compute* (any kernel but a communication kernel runs), *comm* (only NCCL kernels
run: communication that no compute hides), *copy* (only copies), *set* (only memsets), and
*idle*. They add up to the window. On the CPU side, the step's own range is split into the time
inside PyTorch ops (on any thread of the rank) and the time outside any op (Python, data
loading, waiting).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.activity import GpuActivity, gpu_activity, rank_value
from gpuviz.analysis.coverage import Coverage
from gpuviz.analysis.names import (
    DATAPARALLEL_FORWARD,
    HARNESS_STEP,
    OPTIMIZER_STEP_PREFIX,
    PROFILER_STEP,
    is_comm_kernel,
    is_pytorch_op,
    name_mask,
)
from gpuviz.analysis.serving_markers import SOURCES as SERVING_SOURCES
from gpuviz.analysis.serving_markers import serving_markers
from gpuviz.trace.arrays import unique
from gpuviz.trace.model import Kind, Trace, TrackKind

I64 = npt.NDArray[np.int64]

SOURCES = (
    *SERVING_SOURCES,
    "gpuviz",
    "ProfilerStep",
    "Optimizer.step",
    "DataParallel.forward",
    "trace",
)
"""Where steps came from, in the order they are looked for (serving: docs/serving.md)."""

NO_GPU = np.iinfo(np.int64).max
"""A step's first queued GPU start when none of its GPU work waited in the queue."""

QUEUE_SLACK_NS = 50_000
"""GPU work that starts more than this long after its launch returned waited in the queue
(an empty stream starts it a few µs after)."""

NO_LAUNCH = np.iinfo(np.int64).min
"""The launch time of GPU work whose launch is not in the trace (before it began)."""

PARTS = ("compute", "comm", "copy", "set", "idle")
"""The exclusive parts of a GPU's step time, in order of precedence."""


@dataclass
class Steps:
    """Step windows of every rank: one row per (rank, step), ordered by rank then start.

    Attributes
    ----------
    rank : int64
        The rank (-1 for a lone file).
    number : int64
        N of ``ProfilerStep#N``; otherwise the step's index on its rank, from 0.
    start_ns, end_ns : int64
        The window (relative to the trace zero; see the module docstring): its start is the
        CPU start, or later where the previous step's work (CPU range and the GPU work it
        launched) ended later. Windows of one rank do not overlap. ``duration_ns`` is the
        step's time for every per-step figure (MFU, savings, the Ranks view).
    cpu_start_ns, cpu_end_ns : int64
        The step's own CPU range (the ``ProfilerStep`` range, or its equivalent).
    source : list of str
        One of :data:`SOURCES` per row.
    """

    rank: I64
    number: I64
    start_ns: I64
    end_ns: I64
    cpu_start_ns: I64
    cpu_end_ns: I64
    source: list[str]

    def __len__(self) -> int:
        return len(self.rank)

    @property
    def duration_ns(self) -> I64:
        """``end_ns - start_ns``."""
        return self.end_ns - self.start_ns

    def of_rank(self, rank: int) -> I64:
        """Row indices of one rank's steps, in time order."""
        return np.flatnonzero(self.rank == rank)

    def label(self, i: int) -> str:
        """``ProfilerStep#N`` or ``step N`` for row ``i``."""
        n = int(self.number[i])
        src = self.source[i]
        if src == "ProfilerStep":
            return f"ProfilerStep#{n}"
        return f"gpuviz step {n}" if src == "gpuviz" else f"step {n}"


@dataclass
class DeviceStepTimes:
    """Per (step, GPU) exclusive times. One row per step row and device of its rank.

    Attributes
    ----------
    step : int64
        Row in :class:`Steps`.
    rank, device : int64
        The GPU.
    compute_ns, comm_ns, copy_ns, set_ns, idle_ns : int64
        Exclusive parts of the step window (see the module docstring); they add up to it.
    comm_total_ns, copy_total_ns : int64
        Union of the NCCL kernels, and of the copies, inside the window, hidden or not.
    """

    step: I64
    rank: I64
    device: I64
    compute_ns: I64
    comm_ns: I64
    copy_ns: I64
    set_ns: I64
    idle_ns: I64
    comm_total_ns: I64
    copy_total_ns: I64

    def __len__(self) -> int:
        return len(self.step)


@dataclass
class StepBreakdown:
    """Steps with their GPU and CPU time split.

    Attributes
    ----------
    steps : Steps
    cpu_op_ns, cpu_other_ns : int64
        Per step row: time of its CPU range inside any PyTorch op (on any thread of the rank),
        and the rest of that range.
    devices : DeviceStepTimes
    """

    steps: Steps
    cpu_op_ns: I64
    cpu_other_ns: I64
    devices: DeviceStepTimes

    def to_json(self) -> list[dict[str, Any]]:
        """The ``steps`` list of ``gpuviz advise --json`` (times in µs from the trace zero)."""
        st, d = self.steps, self.devices
        by_step: dict[int, list[dict[str, Any]]] = {}
        for j in range(len(d)):
            by_step.setdefault(int(d.step[j]), []).append(
                {
                    "device": int(d.device[j]),
                    "compute_us": _us(d.compute_ns[j]),
                    "comm_us": _us(d.comm_ns[j]),
                    "copy_us": _us(d.copy_ns[j]),
                    "set_us": _us(d.set_ns[j]),
                    "idle_us": _us(d.idle_ns[j]),
                }
            )
        return [
            {
                "rank": rank_value(int(st.rank[i])),
                "step": int(st.number[i]),
                "label": st.label(i),
                "source": st.source[i],
                "start_us": _us(st.start_ns[i]),
                "end_us": _us(st.end_ns[i]),
                "duration_us": _us(st.end_ns[i] - st.start_ns[i]),
                "cpu_op_us": _us(self.cpu_op_ns[i]),
                "cpu_other_us": _us(self.cpu_other_ns[i]),
                "devices": by_step.get(i, []),
            }
            for i in range(len(st))
        ]


def _us(ns: Any) -> float:
    return int(ns) / 1000.0


def find_steps(trace: Trace, activity: GpuActivity | None = None) -> Steps:
    """The step windows of every rank (see the module docstring).

    Parameters
    ----------
    trace : Trace
    activity : GpuActivity, optional
        ``gpu_activity(trace)`` when the caller has it.

    Returns
    -------
    Steps
        Empty when the trace has no slices at all.
    """
    s, t = trace.slices, trace.tracks
    a = gpu_activity(trace) if activity is None else activity
    cpu_track = np.isin(t.kind, [int(TrackKind.CPU_THREAD), int(TrackKind.CPU_ANNOTATION)])
    on_cpu = cpu_track[s.track]
    marker_kind = on_cpu & ((s.kind == Kind.USER_ANNOTATION) | (s.kind == Kind.CPU_OP))
    sym = trace.symbols
    # Per symbol: each rank's markers are then looked up by name, not every slice.
    harness = name_mask(sym, lambda n: HARNESS_STEP.match(n) is not None)
    prof = name_mask(sym, lambda n: PROFILER_STEP.match(n) is not None)
    opt = name_mask(sym, lambda n: n.startswith(OPTIMIZER_STEP_PREFIX))
    dpf = name_mask(sym, lambda n: n == DATAPARALLEL_FORWARD)

    parts: list[dict[str, Any]] = []
    # Each rank's rows and GPU activity, grouped once: masks over every slice for each rank
    # had cost about 80 ms a rank on a 64-rank folder (37M slices), 5 s in all.
    # A trace's GPU rows are already in rank order (slices sort by track, tracks by rank):
    # then no sort order and no sorted copy (12 bytes a GPU row, 77 MB of 64 ranks).
    in_order = bool(np.all(a.rank[1:] >= a.rank[:-1]))
    serving = serving_markers(trace)
    act_order = None if in_order else np.argsort(a.rank, kind="stable")
    act_ranks = a.rank if act_order is None else a.rank[act_order]
    for rank, all_rows in _rows_by_rank(trace):
        cpu_rows = all_rows[on_cpu[all_rows]]
        markers = all_rows[marker_kind[all_rows]]
        marker_names = s.name[markers]
        first_cpu = int(s.start_ns[cpu_rows].min()) if len(cpu_rows) else None
        last_cpu = int((s.start_ns[cpu_rows] + s.dur_ns[cpu_rows]).max()) if len(cpu_rows) else None
        tile = True
        if rank in serving:  # each step its own work; the scheduler's time between is none's
            rows, source = serving[rank]
            c0, c1, _ = _merge_repeats(trace, rows, np.zeros(len(rows), dtype=np.int64))
            numbers, tile = np.arange(len(c0), dtype=np.int64), False
        elif (rows := markers[harness[marker_names]]).size:
            c0, c1, numbers = _merge_repeats(trace, rows, _numbers(trace, rows, HARNESS_STEP))
            source, tile = "gpuviz", False
        elif (rows := markers[prof[marker_names]]).size:
            c0, c1, numbers = _merge_repeats(trace, rows, _numbers(trace, rows, PROFILER_STEP))
            source = "ProfilerStep"
        elif (rows := markers[opt[marker_names]]).size and first_cpu is not None:
            _, ends, _ = _merge_repeats(trace, rows, np.zeros(len(rows), dtype=np.int64))
            c0 = np.concatenate(([min(first_cpu, int(ends[0]))], ends[:-1]))
            c1 = ends
            numbers = np.arange(len(ends), dtype=np.int64)
            source = "Optimizer.step"
        elif (rows := markers[dpf[marker_names]]).size and last_cpu is not None:
            c0, _, _ = _merge_repeats(trace, rows, np.zeros(len(rows), dtype=np.int64))
            c1 = np.concatenate((c0[1:], [max(last_cpu, int(c0[-1]))]))
            numbers = np.arange(len(c0), dtype=np.int64)
            source = "DataParallel.forward"
        else:
            ends = s.start_ns[all_rows] + s.dur_ns[all_rows]
            c0 = np.array([int(s.start_ns[all_rows].min())], dtype=np.int64)
            c1 = np.array([int(ends.max())], dtype=np.int64)
            numbers = np.zeros(1, dtype=np.int64)
            source = "trace"
        # The GPU work each step launched (its launch inside the step's CPU range), by
        # correlation: when it ends (the step's own work ends at W = the later of that and
        # its CPU range), and when the first of it that waited in the queue starts.
        own_end = c1.copy()
        first_gpu = np.full(len(c0), NO_GPU, dtype=np.int64)
        lo, hi = np.searchsorted(act_ranks, [rank, rank + 1])
        on_rank = (  # ascending, as a mask's rows were
            np.arange(lo, hi) if act_order is None else act_order[lo:hi]
        )
        # Each rank's launches looked up apart: for every GPU row at once, the launch rows and
        # their starts took 16 bytes a row (100 MB of 64 ranks) through the whole loop.
        launch = trace.launches_of(a.rows[on_rank]) if on_rank.size else on_rank
        launch_ns = np.where(launch >= 0, s.start_ns[np.maximum(launch, 0)], NO_LAUNCH)
        launch_ns = launch_ns.astype(np.int64)
        launch_end = launch_ns + np.where(launch >= 0, s.dur_ns[np.maximum(launch, 0)], 0)
        if on_rank.size:
            idx = np.searchsorted(c0, launch_ns, side="right") - 1
            ok = (launch >= 0) & (idx >= 0) & (launch_ns < c1[np.maximum(idx, 0)])
            np.maximum.at(own_end, idx[ok], a.end_ns[on_rank][ok])
            waited = ok & (a.start_ns[on_rank] > launch_end + QUEUE_SLACK_NS)
            np.minimum.at(first_gpu, idx[waited], a.start_ns[on_rank][waited])
        # Consecutive steps tile the time; a step followed by a gap in the numbering (a
        # profiler schedule that skipped steps) ends with its own work instead.
        follows = np.zeros(len(c0), dtype=bool)  # row k follows row k - 1
        follows[1:] = (numbers[1:] == numbers[:-1] + 1) & tile
        queued = ~follows if tile else np.arange(len(c0)) == 0
        start = _starts(c0, own_end, first_gpu, queued, a, on_rank, launch_ns)
        end = own_end.copy()
        end[:-1] = np.where(follows[1:], start[1:], np.minimum(own_end[:-1], start[1:]))
        if not tile:  # the harness's windows: each one its own work, never overlapping
            end[:-1] = np.minimum(own_end[:-1], start[1:])
        parts.append(
            {
                "rank": np.full(len(c0), rank, dtype=np.int64),
                "number": numbers,
                "start_ns": start,
                "end_ns": np.maximum(end, start),
                "cpu_start_ns": c0,
                "cpu_end_ns": c1,
                "source": [source] * len(c0),
            }
        )
    if not parts:
        e = np.empty(0, dtype=np.int64)
        return Steps(e, e, e, e, e, e, [])
    cols = {k: np.concatenate([p[k] for p in parts]) for k in parts[0] if k != "source"}
    return Steps(
        rank=cols["rank"],
        number=cols["number"],
        start_ns=cols["start_ns"],
        end_ns=cols["end_ns"],
        cpu_start_ns=cols["cpu_start_ns"],
        cpu_end_ns=cols["cpu_end_ns"],
        source=[src for p in parts for src in p["source"]],
    )


def _starts(
    c0: I64,
    own_end: I64,
    first_gpu: I64,
    queued: npt.NDArray[np.bool_],
    a: GpuActivity,
    on_rank: I64,
    launch_ns: I64,
) -> I64:
    """Where each step of one rank starts: ``b_k = max(c0_k, W_{k-1}, Q_k, b_{k-1})``.

    ``c0_k`` is the step's CPU start and ``W_{k-1}`` the end of the previous step's own work
    (its CPU range and the GPU work it launched): a step whose CPU runs ahead starts when the
    previous step's work is done, as a CUDA event recorded where it starts its launches would
    fire. ``Q_k`` (only for the ``queued`` rows: the first step of a run, where no previous
    step says what the GPU was busy with) is the end of the GPU work launched before the step
    (or by an unrecorded launch) that runs before the step's first own GPU work that waited in
    the queue (started more than :data:`QUEUE_SLACK_NS` after its launch returned) starts, and
    never later than that start: the step's work waits behind it on the GPU. Work of the step
    that did not wait (a prefetch copy on a side stream) says nothing of the backlog.

    Parameters
    ----------
    c0, own_end, first_gpu : int64
        Per step: CPU start, end of its own work (``W``), start of its first own GPU work
        that waited in the queue (:data:`NO_GPU` when none did).
    queued : bool
        Per step: whether ``Q_k`` applies.
    a : GpuActivity
    on_rank, launch_ns : int64
        The rank's activity rows and their launches' starts (:data:`NO_LAUNCH` when unknown).
    """
    x = c0.copy()
    x[1:] = np.maximum(x[1:], own_end[:-1])
    starts, ends = a.start_ns[on_rank], a.end_ns[on_rank]
    for k in np.flatnonzero(queued & (first_gpu != NO_GPU)).tolist():
        g0 = int(first_gpu[k])
        before = (launch_ns < c0[k]) & (starts < g0) & (ends > c0[k])
        if before.any():
            x[k] = max(int(x[k]), min(int(ends[before].max()), g0))
    return np.maximum.accumulate(x)


def _rows_by_rank(trace: Trace) -> Iterator[tuple[int, I64]]:
    """Each rank with its slice rows, ascending, from its tracks' ranges; ranks in order, those
    without slices left out (slices are stored by track: ``trace.track_offsets``).

    One rank's rows at a time: all of them at once were an int64 a slice, 300 MB at the same
    moment on a 64-rank folder (37M slices), at the peak of ``gpuviz summary``'s memory.
    """
    t, o = trace.tracks, trace.track_offsets
    held = np.flatnonzero(np.diff(o) > 0)
    held = held[np.argsort(t.rank[held], kind="stable")]  # by rank, then track
    if not held.size:
        return
    for tracks in np.split(held, np.flatnonzero(np.diff(t.rank[held])) + 1):  # a rank each
        rows = [np.arange(o[k], o[k + 1], dtype=np.int64) for k in tracks.tolist()]
        yield int(t.rank[tracks[0]]), np.concatenate(rows)


def _merge_repeats(trace: Trace, rows: I64, numbers: I64) -> tuple[I64, I64, I64]:
    """Marker ranges in time order, a marker recorded more than once merged into one.

    Ranges of one number that overlap the group before, or start with it, are one step, the
    union of them. Before, two ``ProfilerStep#0`` ranges at one time made a step of length 0
    that still had the range's CPU time (0.100 ms of "cpu other" in a 0.000 ms step).

    Returns
    -------
    start_ns, end_ns, numbers : int64
        One row per step.
    """
    s = trace.slices
    starts = s.start_ns[rows].astype(np.int64)
    order = np.lexsort((starts, numbers))  # by number, then start: each number's ranges in a run
    a0, a1 = starts[order].tolist(), (starts + s.dur_ns[rows])[order].tolist()
    c0: list[int] = []
    c1: list[int] = []
    out: list[int] = []
    for start, end, n in zip(a0, a1, numbers[order].tolist()):
        if c0 and n == out[-1] and (start < c1[-1] or start == c0[-1]):
            c1[-1] = max(c1[-1], end)
        else:
            c0.append(start)
            c1.append(end)
            out.append(n)
    m0, m1, mn = (np.array(x, dtype=np.int64) for x in (c0, c1, out))
    by_time = np.lexsort((mn, m0))
    return m0[by_time], m1[by_time], mn[by_time]


def _numbers(trace: Trace, rows: I64, pattern: Any) -> I64:
    """The step number each marker's name carries (``ProfilerStep#7`` -> 7)."""
    names = trace.symbols.lookup(trace.slices.name[rows])
    return np.array([int(pattern.match(n).group(1)) for n in names], dtype=np.int64)


def comm_mask(trace: Trace, activity: GpuActivity) -> npt.NDArray[np.bool_]:
    """Which activity rows are communication (NCCL) kernels."""
    is_comm = name_mask(trace.symbols, is_comm_kernel)
    return (activity.kind == Kind.KERNEL) & is_comm[trace.slices.name[activity.rows]]


def coverage_by_rank(trace: Trace, rows: npt.NDArray[np.integer]) -> dict[int, Coverage]:
    """Per rank, the time covered by the given slice rows (one sort, no scan per rank)."""
    s, t = trace.slices, trace.tracks
    rows = np.asarray(rows, dtype=np.int64)
    rank = t.rank[s.track[rows]].astype(np.int64)
    order = np.argsort(rank, kind="stable")
    rows, rank = rows[order], rank[order]
    bounds = np.flatnonzero(np.diff(rank)) + 1
    out = {}
    for part in np.split(np.arange(len(rows)), bounds):
        if len(part) == 0:
            continue
        r = rows[part]
        out[int(rank[part[0]])] = Coverage(s.start_ns[r], s.start_ns[r] + s.dur_ns[r])
    return out


def pytorch_op_coverages(trace: Trace) -> dict[int, Coverage]:
    """Per rank, the time any of its CPU threads spends inside a PyTorch op (``cpu_op``)."""
    s = trace.slices
    ok = name_mask(trace.symbols, is_pytorch_op)
    rows = np.flatnonzero(s.kind == Kind.CPU_OP)
    return coverage_by_rank(trace, rows[ok[s.name[rows]]])


def device_coverages(
    activity: GpuActivity, comm: npt.NDArray[np.bool_]
) -> dict[tuple[int, int], dict[str, Coverage]]:
    """For every (rank, device): coverages of compute, compute+comm, +copy, +set, comm, copy.

    The nested unions give the exclusive parts by difference (see the module docstring).
    """
    out: dict[tuple[int, int], dict[str, Coverage]] = {}
    if len(activity) == 0:
        return out
    key = activity.rank.astype(np.int64) * (1 << 20) + activity.device
    order = np.lexsort((activity.start_ns, key))
    k_sorted = key[order]
    bounds = np.flatnonzero(np.diff(k_sorted)) + 1
    for idx in np.split(order, bounds):
        r, d = int(activity.rank[idx[0]]), int(activity.device[idx[0]])
        if d < 0:
            continue
        kind = activity.kind[idx]
        c = comm[idx]
        s0, e0 = activity.start_ns[idx], activity.end_ns[idx]
        compute = (kind == Kind.KERNEL) & ~c
        with_comm = compute | c
        with_copy = with_comm | (kind == Kind.MEMCPY)
        out[(r, d)] = {
            "compute": Coverage(s0[compute], e0[compute]),
            "compute+comm": Coverage(s0[with_comm], e0[with_comm]),
            "compute+comm+copy": Coverage(s0[with_copy], e0[with_copy]),
            "busy": Coverage(s0, e0),
            "comm": Coverage(s0[c], e0[c]),
            "copy": Coverage(s0[kind == Kind.MEMCPY], e0[kind == Kind.MEMCPY]),
        }
    return out


def step_breakdown(
    trace: Trace,
    steps: Steps | None = None,
    activity: GpuActivity | None = None,
    coverages: dict[tuple[int, int], dict[str, Coverage]] | None = None,
    op_coverages: dict[int, Coverage] | None = None,
) -> StepBreakdown:
    """Split every step's time on each GPU and on the CPU (see the module docstring).

    Parameters
    ----------
    trace : Trace
    steps : Steps, optional
        ``find_steps(trace)`` when the caller has it.
    activity : GpuActivity, optional
        ``gpu_activity(trace)`` when the caller has it.
    coverages : dict, optional
        ``device_coverages(activity, comm_mask(trace, activity))`` when the caller has it.
    op_coverages : dict, optional
        ``pytorch_op_coverages(trace)`` when the caller has it.

    Returns
    -------
    StepBreakdown
    """
    a = gpu_activity(trace) if activity is None else activity
    st = find_steps(trace, a) if steps is None else steps
    cov = device_coverages(a, comm_mask(trace, a)) if coverages is None else coverages
    ops = pytorch_op_coverages(trace) if op_coverages is None else op_coverages
    no_ops = Coverage([], [])
    cpu_op = np.zeros(len(st), dtype=np.int64)
    cols: dict[str, list[I64]] = {f.name: [] for f in fields(DeviceStepTimes)}
    for rank in unique(st.rank).tolist():
        idx = st.of_rank(rank)
        cpu_op[idx] = ops.get(rank, no_ops).covered(st.cpu_start_ns[idx], st.cpu_end_ns[idx])
        t0, t1 = st.start_ns[idx], st.end_ns[idx]
        for (r, device), c in sorted(cov.items()):
            if r != rank:
                continue
            f1 = c["compute"].covered(t0, t1)
            f2 = c["compute+comm"].covered(t0, t1)
            f3 = c["compute+comm+copy"].covered(t0, t1)
            f4 = c["busy"].covered(t0, t1)
            cols["step"].append(idx.astype(np.int64))
            cols["rank"].append(np.full(len(idx), rank, dtype=np.int64))
            cols["device"].append(np.full(len(idx), device, dtype=np.int64))
            cols["compute_ns"].append(f1)
            cols["comm_ns"].append(f2 - f1)
            cols["copy_ns"].append(f3 - f2)
            cols["set_ns"].append(f4 - f3)
            cols["idle_ns"].append((t1 - t0) - f4)
            cols["comm_total_ns"].append(c["comm"].covered(t0, t1))
            cols["copy_total_ns"].append(c["copy"].covered(t0, t1))
    devices = DeviceStepTimes(
        **{k: np.concatenate(v) if v else np.empty(0, dtype=np.int64) for k, v in cols.items()}
    )
    order = np.lexsort((devices.device, devices.step))
    devices = DeviceStepTimes(**{k: getattr(devices, k)[order] for k in cols})
    cpu_dur = st.cpu_end_ns - st.cpu_start_ns
    return StepBreakdown(st, cpu_op, cpu_dur - cpu_op, devices)
