"""DataParallel batch splits found in a trace: rows and GPU time of each replica, each step.

A step is one ``DataParallel.forward`` range (a ``record_function`` that DataParallel opens),
counted from 0 per rank. Rows per replica come from the ops DataParallel runs inside it, when the
trace was recorded with ``record_shapes=True``; the first of these that is present wins:

1. the ``aten::split_with_sizes`` inside ``Gather`` (its sizes are the replicas' output rows),
2. the tensor inputs of ``Gather`` (one per replica; dim 0 is its rows),
3. ``aten::chunk`` inside ``Scatter`` (the batch's dim 0 and the chunk count), through
   :func:`~gpuviz.analysis.split_plan.plan_split`,
4. ``Scatter``'s device list and batch shape, through ``plan_split`` too.

The devices are ``Scatter``'s device list; a device that gets no chunk is listed with 0 rows.
A replica's GPU time is the union of that device's kernel and copy intervals whose launch (the
runtime or driver call with the same correlation, on any thread: NCCL kernels are launched by
``cuLaunchKernelEx``) starts inside the step's range.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpuviz.analysis.intervals import union_length
from gpuviz.analysis.split_plan import MAX_GPUS, plan_split, split_input_error
from gpuviz.trace.arrays import unique
from gpuviz.trace.model import Kind, Trace

STEP_NAME = "DataParallel.forward"
_OPS = ("Scatter", "aten::chunk", "Gather", "aten::split_with_sizes")


@dataclass(frozen=True)
class SplitRow:
    """One replica of one DataParallel step.

    Attributes
    ----------
    rank : int or None
        The process's rank (None for a lone file).
    step : int
        The ``DataParallel.forward`` call, from 0.
    device : int
        The replica's GPU.
    rows : int or None
        Rows of the batch it got (0 when it got none); None when the trace has no shapes.
    gpu_ns : int
        Union of the device's kernel and copy intervals launched inside the step.
    planned_rows : int or None
        What ``plan_split`` (``Tensor.chunk`` on dim 0) predicts, when the batch is known.
    source : str
        Where ``rows`` came from: ``split_with_sizes``, ``gather``, ``chunk``, ``scatter`` or
        ``none``.
    """

    rank: int | None
    step: int
    device: int
    rows: int | None
    gpu_ns: int
    planned_rows: int | None = None
    source: str = "none"

    def to_json(self) -> dict[str, Any]:
        """The row as ``gpuviz summary --json`` writes it."""
        return {
            "rank": self.rank,
            "step": self.step,
            "device": self.device,
            "rows": self.rows,
            "gpu_us": self.gpu_ns / 1000.0,
        }


@dataclass
class _Step:
    rank: int
    start_ns: int
    end_ns: int
    devices: list[int] = field(default_factory=list)
    rows: list[int] | None = None
    batch: int | None = None
    source: str = "none"


def find_splits(trace: Trace) -> list[SplitRow]:
    """Every replica of every DataParallel step in ``trace``.

    Parameters
    ----------
    trace : Trace
        The trace.

    Returns
    -------
    list of SplitRow
        Ordered by rank, step, device; empty when the trace has no ``DataParallel.forward``.
    """
    s, t = trace.slices, trace.tracks
    step_id = trace.symbols.find(STEP_NAME)
    if step_id < 0:
        return []
    cpu_kinds = np.isin(s.kind, [int(Kind.USER_ANNOTATION), int(Kind.CPU_OP)])
    step_rows = np.flatnonzero((s.name == step_id) & cpu_kinds)
    if len(step_rows) == 0:
        return []
    slice_rank = t.rank[s.track]
    op_ids = {n: trace.symbols.find(n) for n in _OPS}
    op_rows = np.flatnonzero(np.isin(s.name, [i for i in op_ids.values() if i >= 0]) & cpu_kinds)
    op_rows = op_rows[np.argsort(s.start_ns[op_rows], kind="stable")]
    name_of = {i: n for n, i in op_ids.items()}

    steps: list[_Step] = []
    for rank in unique(slice_rank[step_rows]).tolist():
        mine = step_rows[slice_rank[step_rows] == rank]
        mine = mine[np.argsort(s.start_ns[mine], kind="stable")]
        for row in mine.tolist():
            st = _Step(int(rank), int(s.start_ns[row]), int(s.start_ns[row] + s.dur_ns[row]))
            inside = op_rows[
                (slice_rank[op_rows] == rank)
                & (s.start_ns[op_rows] >= st.start_ns)
                & (s.start_ns[op_rows] < st.end_ns)
            ]
            ops = [(name_of[int(s.name[r])], int(r)) for r in inside.tolist()]
            _read_step(trace, st, ops)
            steps.append(st)

    gpu = _launched_gpu_work(trace)
    out = []
    counter: dict[int, int] = {}
    for st in steps:
        step = counter.get(st.rank, 0)
        counter[st.rank] = step + 1
        devices = st.devices or sorted(set(_devices_busy_in(gpu, st)))
        planned = _plan(st.batch, len(devices)) if st.batch is not None and devices else None
        rows = st.rows
        if rows is not None:
            rows = (rows + [0] * len(devices))[: len(devices)]
        for i, dev in enumerate(devices):
            out.append(
                SplitRow(
                    rank=None if st.rank < 0 else st.rank,
                    step=step,
                    device=dev,
                    rows=None if rows is None else int(rows[i]),
                    gpu_ns=_gpu_ns(gpu, st, dev),
                    planned_rows=None if planned is None else planned[i],
                    source=st.source,
                )
            )
    return out


def _read_step(trace: Trace, st: _Step, ops: list[tuple[str, int]]) -> None:
    """Fill a step's devices, batch and rows from the DataParallel ops inside it."""
    s = trace.slices
    end = {r: int(s.start_ns[r] + s.dur_ns[r]) for _, r in ops}

    def within(outer: str, inner: str) -> list[int]:
        found = []
        for n, r in ops:
            if n != inner:
                continue
            for n2, r2 in ops:
                if n2 == outer and s.start_ns[r2] <= s.start_ns[r] and end[r] <= end[r2]:
                    found.append(r)
                    break
        return found

    scatter = [r for n, r in ops if n == "Scatter"]
    gather = [r for n, r in ops if n == "Gather"]
    chunk = within("Scatter", "aten::chunk")
    split = within("Gather", "aten::split_with_sizes")

    if scatter:
        a = trace.args.get(int(s.args[scatter[0]]))
        concrete = a.get("Concrete Inputs") or []
        devs = _parse(concrete[0]) if concrete else None
        if (
            isinstance(devs, list)
            and len(devs) <= MAX_GPUS
            and all(isinstance(d, int) for d in devs)
        ):
            st.devices = [int(d) for d in devs]
        dims = [d for d in (a.get("Input Dims") or []) if isinstance(d, list) and d]
        dim = _parse(concrete[2]) if len(concrete) > 2 else 0
        if dims and dim in (0, None) and isinstance(dims[-1][0], int):
            st.batch = int(dims[-1][0])
    if chunk:
        a = trace.args.get(int(s.args[chunk[0]]))
        concrete = a.get("Concrete Inputs") or []
        dims = a.get("Input Dims") or []
        n = _parse(concrete[1]) if len(concrete) > 1 else None
        dim = _parse(concrete[2]) if len(concrete) > 2 else 0
        if (
            dims
            and isinstance(dims[0], list)
            and dims[0]
            and dim == 0
            and isinstance(n, int)
            and isinstance(dims[0][0], int)
            and split_input_error(dims[0][0], n) is None
        ):
            st.batch = int(dims[0][0])
            if not st.devices:
                st.devices = list(range(n))
            st.rows, st.source = plan_split(st.batch, n), "chunk"
    elif st.batch is not None and st.devices:
        planned = _plan(st.batch, len(st.devices))
        if planned is not None:
            st.rows, st.source = planned, "scatter"
    if gather:
        a = trace.args.get(int(s.args[gather[0]]))
        types = a.get("Input type") or []
        dims = a.get("Input Dims") or []
        rows = [
            d[0]
            for ty, d in zip(types, dims)
            if ty and ty != "Scalar" and isinstance(d, list) and d
        ]
        if rows and all(isinstance(r, int) for r in rows):
            st.rows, st.source = [int(r) for r in rows], "gather"
    if split:
        a = trace.args.get(int(s.args[split[0]]))
        concrete = a.get("Concrete Inputs") or []
        sizes = _parse(concrete[1]) if len(concrete) > 1 else None
        if isinstance(sizes, list) and sizes and all(isinstance(v, int) for v in sizes):
            st.rows, st.source = [int(v) for v in sizes], "split_with_sizes"


def _plan(batch: int, gpus: int) -> list[int] | None:
    """:func:`plan_split` of values read from a trace; None where they cannot be a real split
    (a chunk count of 10**8 would be a list of 10**8 rows: issue 47, item 16)."""
    return plan_split(batch, gpus) if split_input_error(batch, gpus) is None else None


def _parse(text: Any) -> Any:
    """A ``Concrete Inputs`` entry (``"[0, 1]"``, ``"2"``, ``""``) as JSON, or None."""
    if not isinstance(text, str) or not text:
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested too deeply to read
        return None


@dataclass
class _LaunchedWork:
    rank: np.ndarray
    device: np.ndarray
    start_ns: np.ndarray
    end_ns: np.ndarray
    launch_ns: np.ndarray


def _launched_gpu_work(trace: Trace) -> _LaunchedWork:
    """Kernels and copies that have a launch, with the launch's start."""
    s, t = trace.slices, trace.tracks
    rows = np.flatnonzero((s.kind == Kind.KERNEL) | (s.kind == Kind.MEMCPY))
    launch = trace.launches_of(rows) if len(rows) else np.empty(0, dtype=np.int64)
    has = launch >= 0
    rows, launch = rows[has], launch[has]
    # Sorted by launch time, so that a step's work is one searchsorted range.
    order = np.argsort(s.start_ns[launch], kind="stable")
    rows, launch = rows[order], launch[order]
    start = s.start_ns[rows].astype(np.int64)
    return _LaunchedWork(
        t.rank[s.track[rows]],
        t.device[s.track[rows]],
        start,
        start + s.dur_ns[rows],
        s.start_ns[launch].astype(np.int64),
    )


def _in_step(w: _LaunchedWork, st: _Step) -> np.ndarray:
    """Indices of the work of the step's rank launched inside the step."""
    a, b = np.searchsorted(w.launch_ns, [st.start_ns, st.end_ns], side="left")
    idx = np.arange(a, b)
    return idx[w.rank[idx] == st.rank]


def _devices_busy_in(w: _LaunchedWork, st: _Step) -> list[int]:
    return [int(d) for d in unique(w.device[_in_step(w, st)]) if d >= 0]


def _gpu_ns(w: _LaunchedWork, st: _Step, device: int) -> int:
    idx = _in_step(w, st)
    idx = idx[w.device[idx] == device]
    return union_length(w.start_ns[idx], w.end_ns[idx])
