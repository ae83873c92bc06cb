"""What if some work were faster, or gone? A step's graph replayed with changed durations.

A change names work and a factor: ``NAME=2`` makes it twice as fast, removal makes it take no
time (and its delays go with it: a removed kernel's launch latency is not paid). NAME is, in
the order tried:

- ``rank:R``: every node of rank R (with a factor: the rank as fast as that);
- a kernel, copy or set name: those GPU nodes;
- an op, a ``record_function`` range or a Python frame (``nn.Module: Linear_0``; a module
  name ``Linear_0`` or path ``TinyLM_0.Block_1.Linear_0`` is tried as ``nn.Module: Linear_0``
  too): the CPU pieces inside every such range on its thread, and the GPU work launched from
  them; for a module also the kernels the module table counts in it (its backward's, which
  the autograd engine launches, and its sub-modules').

``*`` and ``?`` in NAME match any text (``*gemm*``), unless NAME is a name of the trace as
it is (C++ kernel names hold ``*``). ``rank`` limits a change to one rank.
Nothing else changes: where work waited on a dependency, it now waits as long as the replay
says (slack is kept, not the recorded wait); gaps on the CPU (Python between ops, a launch's
latency) stay as recorded. A removed synchronize no longer waits for the GPU.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.critical_path import Path, Replay, critical_path, replay, step_times
from gpuviz.analysis.dep_graph import E_COLL, E_JOIN, E_SYNC, GPU, XFER, StepGraph, step_graph
from gpuviz.analysis.names import name_mask
from gpuviz.trace.model import Trace, TrackKind

Bool = npt.NDArray[np.bool_]
I64 = npt.NDArray[np.int64]

MODULE_PREFIX = "nn.Module: "


@dataclass
class Change:
    """One change: ``factor`` times faster (``None``: removed).

    ``mask`` (per node of the graph), where given, says which nodes instead of ``name``: what
    the advisor's rules select (a rank's compute kernels, fp32 GEMMs).
    """

    name: str
    factor: float | None = None
    rank: int | None = None
    mask: Bool | None = field(default=None, repr=False)

    def label(self) -> str:
        """``NAME=F`` or ``-NAME`` (and ``@rank R``)."""
        base = f"-{self.name}" if self.factor is None else f"{self.name}={self.factor:g}"
        return base if self.rank is None else f"{base}@rank {self.rank}"


@dataclass
class Prediction:
    """A replay with changes, and what it predicts.

    Attributes
    ----------
    matched : list of int
        Nodes each change matched.
    measured_ns, predicted_ns : int64, per rank of the graph
        The step time recorded and the one predicted (:func:`step_times`).
    replay : Replay
    path : Path
        The critical path of the changed step.
    """

    changes: list[Change]
    matched: list[int]
    matched_ns: list[int]
    measured_ns: I64
    predicted_ns: I64
    replay: Replay
    path: Path
    unmatched: list[str] = field(default_factory=list)


def match(trace: Trace, g: StepGraph, name: str, rank: int | None = None) -> Bool:
    """The nodes of ``g`` that ``name`` names (see the module docstring)."""
    here = np.ones(len(g), dtype=bool) if rank is None else g.rank == rank
    if name.startswith("rank:"):
        try:
            r = int(name[5:])
        except ValueError:
            return np.zeros(len(g), dtype=bool)
        return here & (g.rank == r)
    # A name in the trace is itself (C++ kernel names hold ``*`` and ``[]``), else a pattern.
    pattern = trace.symbols.find(name) < 0 and any(c in name for c in "*?[")
    wanted = name_mask(
        trace.symbols,
        (lambda s: fnmatch.fnmatchcase(s, name)) if pattern else (lambda s: s == name),
    )
    is_gpu = (g.kind == GPU) | ((g.kind == XFER) & (g.thread < 0))
    safe_row = np.maximum(g.row, 0)
    out = is_gpu & (g.row >= 0) & wanted[trace.slices.name[safe_row]]
    cpu, launched = _in_ranges(trace, g, wanted)
    if not cpu.any() and not launched.any() and not pattern:
        # A module: ``Linear_0``, or its path ``TinyLM_0.Block_1.Attn_1`` (its last name).
        frame = MODULE_PREFIX + name.rsplit(".", 1)[-1]
        cpu, launched = _in_ranges(trace, g, name_mask(trace.symbols, lambda s: s == frame))
        if cpu.any():
            # Its backward too: the kernels attribution counts in it and its sub-modules.
            rows = module_kernels(trace, name)
            launched |= is_gpu & (g.row >= 0) & np.isin(g.row, rows)
    return here & (out | cpu | launched)


def module_kernels(trace: Trace, name: str) -> I64:
    """The kernels (slice rows) the module table counts in module ``name`` (a path, or its
    last name) and the modules under it, forward and backward; empty without Python stacks."""
    from gpuviz.analysis.breakdown import NoStacksError, breakdown

    try:
        table = breakdown(trace, "module")
    except NoStacksError:
        return np.empty(0, dtype=np.int64)
    under = [
        i
        for i, r in enumerate(table.rows)
        if r.kind == "module"
        and (
            r.key == name
            or r.key.startswith(name + ".")
            or r.key.rsplit(".", 1)[-1] == name
            or f".{name}." in f".{r.key}"
        )
    ]
    mask = np.isin(table.kernel_row, np.asarray(under, dtype=np.int64))
    return np.asarray(table.kernel_rows[mask], dtype=np.int64)


def _in_ranges(trace: Trace, g: StepGraph, wanted: Bool) -> tuple[Bool, Bool]:
    """CPU nodes whose middle lies inside a slice of a ``wanted`` name on their thread, and
    GPU nodes whose launch (in the graph or before it) does."""
    s, t = trace.slices, trace.tracks
    cpu_out = np.zeros(len(g), dtype=bool)
    gpu_out = np.zeros(len(g), dtype=bool)
    cpu_track = np.isin(t.kind, [int(TrackKind.CPU_THREAD), int(TrackKind.CPU_ANNOTATION)])
    rows = np.flatnonzero(wanted[s.name] & cpu_track[s.track])
    if len(rows) == 0:
        return cpu_out, gpu_out
    mid = g.start_ns + g.dur_ns // 2
    key = _thread_key(trace, rows)
    gpu = np.flatnonzero(g.launch_row >= 0)
    launch_rows = g.launch_row[gpu]
    launch_key = _thread_key(trace, launch_rows)
    for k in np.unique(key).tolist():
        tr = rows[key == k]
        a = s.start_ns[tr]
        order = np.argsort(a)
        a, z = a[order], np.maximum.accumulate((a + s.dur_ns[tr])[order])

        def inside(times: I64, a: I64 = a, z: I64 = z) -> Bool:
            i = np.searchsorted(a, times, side="right") - 1
            return (i >= 0) & (times < z[np.maximum(i, 0)])

        for ti, tp in enumerate(g.threads):
            if hash((tp.rank, tp.pid, tp.tid)) == k:
                nodes = np.flatnonzero(g.thread == ti)
                cpu_out[nodes[inside(mid[nodes])]] = True
        mine = launch_key == k
        gpu_out[gpu[mine][inside(s.start_ns[launch_rows[mine]])]] = True
    return cpu_out, gpu_out


def _thread_key(trace: Trace, rows: I64) -> npt.NDArray[np.int64]:
    """The hash of each slice's thread, ``(rank, pid, tid)``, as :func:`_in_ranges` keys it."""
    t = trace.tracks
    tr = trace.slices.track[rows]
    keys = [
        hash((int(r), int(p), int(d)))
        for r, p, d in zip(t.rank[tr].tolist(), t.pid[tr].tolist(), t.tid[tr].tolist(), strict=True)
    ]
    return np.asarray(keys, dtype=np.int64)


def predict(trace: Trace, g: StepGraph, changes: list[Change]) -> Prediction:
    """Replay ``g`` with ``changes`` applied.

    Parameters
    ----------
    trace : Trace
    g : StepGraph
    changes : list of Change

    Returns
    -------
    Prediction
        ``unmatched`` names the changes that matched nothing (their NAME is not in the step).
    """
    dur = g.dur_ns.astype(np.float64)
    delay = g.delay_ns.copy()
    removed = np.zeros(len(g), dtype=bool)
    matched, matched_ns, unmatched = [], [], []
    for c in changes:
        m = match(trace, g, c.name, c.rank) if c.mask is None else c.mask
        matched.append(int(m.sum()))
        matched_ns.append(int(g.dur_ns[m].sum()))
        if not m.any():
            unmatched.append(c.name)
            continue
        if c.factor is None:
            dur[m] = 0
            removed |= m
        else:
            dur[m] = dur[m] / c.factor
    delay[removed] = 0
    on = ~(removed[g.dst] & np.isin(g.edge_kind, [E_SYNC, E_JOIN, E_COLL]))
    rp = replay(g, np.round(dur).astype(np.int64), delay, on)
    measured, predicted = step_times(g, rp)
    return Prediction(
        changes=changes,
        matched=matched,
        matched_ns=matched_ns,
        measured_ns=measured,
        predicted_ns=predicted,
        replay=rp,
        path=critical_path(g, rp),
        unmatched=unmatched,
    )


def what_if_faster(
    trace: Trace,
    name: str,
    factor: float = 2.0,
    number: int | None = None,
    rows: npt.ArrayLike | None = None,
) -> tuple[StepGraph, Prediction]:
    """The graph of step ``number`` (the median step by default) and its prediction with
    ``name`` ``factor`` times faster: the app's "What if 2x faster?". ``rows``: GPU slice rows
    that are the name's too (a module's backward kernels, which attribution finds).

    Raises
    ------
    ValueError
        No step to graph (the message says why).
    """
    g = step_graph(trace, number)
    mask = None
    if rows is not None:
        extra = (g.thread < 0) & (g.row >= 0) & np.isin(g.row, np.asarray(rows, dtype=np.int64))
        mask = match(trace, g, name) | extra
    return g, predict(trace, g, [Change(name, factor, mask=mask)])


def path_rows(g: StepGraph, path: Path) -> I64:
    """The slice rows of a critical path's work (kernels, copies, CPU slices), to outline."""
    rows = g.row[path.nodes]
    return np.unique(rows[rows >= 0]).astype(np.int64)
