"""Attribution: each kernel to the op that launched it, the op tree, and the backward links.

The rules (docs/attribution.md says them for users):

- A kernel, copy or set belongs to the op that launched it. Its launch is the runtime *or
  driver* call with the same correlation (``Trace.launches_of``: cuBLASLt's ``nvjet`` GEMMs are
  launched with ``cuLaunchKernelEx``, a driver call), and the op is the innermost ``cpu_op``
  enclosing that call on its thread. A kernel whose launch is not in the trace, or is in no
  op, belongs to no op.
- Ops nest (``aten::linear`` -> ``aten::addmm``): the op tree is the nesting, on each thread, of
  ``cpu_op`` slices, ``record_function`` ranges (``user_annotation``) and runtime calls, as
  torch's ``EventList._populate_cpu_children`` builds it; an op whose parent has its name and no
  other child is folded into that parent (``_remove_dup_nodes``: autocast records
  ``aten::layer_norm`` twice, nested) and is marked :attr:`NodeKind.DUPLICATE`. Python frames (``python_function``)
  sit in the same forest (:mod:`gpuviz.analysis.call_forest`) but are never an op's child,
  as in torch, whose ``key_averages`` hides them.
- Backward: the autograd engine's thread runs ops under ``autograd::engine::evaluate_function``;
  a ``fwdbwd`` flow ties each backward op (the flow's end) to the forward op that made it (its
  start). Where a trace has no such flows, the ops' ``Sequence number`` does: a backward op
  carries its forward op's number.

:func:`attribute` computes this once per trace (cached while the trace lives); the tables of
:mod:`gpuviz.analysis.op_table`, :mod:`gpuviz.analysis.modules` and
:mod:`gpuviz.analysis.source_lines` are views of it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.call_forest import CallForest, build_forest
from gpuviz.analysis.names import HARNESS_STEP, PROFILER_STEP, name_mask
from gpuviz.analysis.node_args import FIELDS, ArgColumns, decode_args
from gpuviz.analysis.open_ranges import clipped_durations
from gpuviz.trace.model import Kind, Trace, TrackKind

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]

#: Records torch's ``_parse_kineto_results`` drops (``profiler_util._filter_name``): they are
#: no rows and no children, so their time is their parent's own.
FILTERED_NAMES = frozenset(
    {
        "[memory]",
        "[OutOfMemory]",
        "profiler::_record_function_enter",
        "profiler::_record_function_enter_new",
        "profiler::_record_function_exit",
        "aten::is_leaf",
        "aten::output_nr",
        "aten::_version",
    }
)
#: The op the autograd engine wraps each backward node in.
EVALUATE_FUNCTION = "autograd::engine::evaluate_function"
MODULE_PREFIX = "nn.Module: "
#: ``torch.optim`` wraps ``step`` and ``zero_grad`` in ranges named ``Optimizer.step#AdamW.step``.
OPTIMIZER_PREFIX = "Optimizer."


class NodeKind(IntEnum):
    """What a node of the call forest is."""

    OP = 0  # cpu_op
    ANNOTATION = 1  # record_function (user_annotation)
    RUNTIME = 2  # cuda_runtime / cuda_driver call
    PYTHON = 3  # python_function frame
    DUPLICATE = 4  # an op inside an op of its name, its only child: torch folds it into it


@dataclass
class Attribution:
    """Kernels, their launching ops, the op tree and the backward links of one trace.

    Node arrays are indexed like ``forest`` (see :class:`~gpuviz.analysis.call_forest.CallForest`);
    kernel arrays like ``gpu_rows``.

    Attributes
    ----------
    trace : Trace
    forest : CallForest
        Ops, annotations, runtime calls and Python frames of every CPU thread.
    kind : uint8
        :class:`NodeKind` of each node.
    name : int32
        Symbol id of each node's name.
    op_parent : int64
        Each node's enclosing op or annotation (its parent in torch's op tree), -1 at the top.
    backward : bool
        Nodes that run in backward (under ``evaluate_function`` or a ``fwdbwd`` target).
    forward_op : int64
        For backward nodes, the forward op that made them (through the nearest linked
        backward op above them), else -1.
    gpu_rows : int64
        Every kernel, copy and set (slice rows).
    gpu_dur_ns : int64
        Their durations.
    gpu_launch : int64
        The node of each one's launch call, -1 where the launch is not in the trace.
    gpu_op : int64
        The op node that launched each one (innermost ``cpu_op`` around the launch), or -1.
    """

    trace: Trace
    forest: CallForest
    kind: npt.NDArray[np.uint8]
    name: npt.NDArray[np.int32]
    op_parent: I64
    backward: Mask
    forward_op: I64
    gpu_rows: I64
    gpu_dur_ns: I64
    gpu_launch: I64
    gpu_op: I64
    _op_args: ArgColumns | None = field(default=None, repr=False)
    _decoded: set[str] = field(default_factory=set, repr=False)
    _memo: dict[str, Any] = field(default_factory=dict, repr=False)
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False)

    @property
    def is_op(self) -> Mask:
        """Nodes that are ``cpu_op`` slices."""
        return self.kind == NodeKind.OP

    @property
    def is_op_or_annotation(self) -> Mask:
        """Nodes that are rows of torch's op table: ops and ``record_function`` ranges."""
        return self.kind <= NodeKind.ANNOTATION

    def memo(self, key: str, make: Any) -> Any:
        """``make()``, computed once per key for this trace (the tables' shared arrays)."""
        with self._lock:
            if key not in self._memo:
                self._memo[key] = make()
            return self._memo[key]

    def op_args(self, fields: tuple[str, ...] = FIELDS) -> ArgColumns:
        """The args ``fields`` of the ops and annotations (in :meth:`op_node_indices` order):
        shapes, types, sequence numbers, flops; each field decoded once, on first use."""
        with self._lock:
            missing = tuple(f for f in fields if f not in self._decoded)
            if missing or self._op_args is None:
                rows = self.forest.rows[self.is_op_or_annotation]
                got = decode_args(self.trace, rows, missing)
                if self._op_args is None:
                    self._op_args = got
                else:
                    for f in missing:
                        setattr(self._op_args, f, getattr(got, f))
                self._decoded.update(missing)
            return self._op_args

    def op_node_indices(self) -> I64:
        """The node indices that :meth:`op_args` entries belong to, in its order."""
        return np.flatnonzero(self.is_op_or_annotation)

    def names(self, nodes: npt.ArrayLike) -> list[str]:
        """The names of ``nodes``."""
        return self.trace.symbols.lookup(self.name[np.asarray(nodes, dtype=np.int64)])

    def step_marker(self) -> Mask:
        """Nodes that mark a whole step (``ProfilerStep#N``, gpuviz's harness step)."""

        def make() -> Mask:
            sym = self.trace.symbols
            step = name_mask(sym, lambda n: bool(PROFILER_STEP.match(n) or HARNESS_STEP.match(n)))
            return step[self.name] & self.is_op_or_annotation

        return self.memo("step_marker", make)

    def has_stacks(self) -> bool:
        """Whether the trace holds Python frames (``with_stack=True``)."""
        return bool((self.kind == NodeKind.PYTHON).any())

    def node_weights(self) -> tuple[F64, F64]:
        """Device time (ns) held at each node, forward and backward.

        A forward kernel's time is held at its launch node; a backward kernel's at the forward
        op it came from when linked (so that it lands in that op's module and source line),
        else at its launch node. Kernels whose launch is not in the trace are held nowhere.
        """

        def make() -> tuple[F64, F64]:
            n = len(self.forest)
            ok = self.gpu_launch >= 0
            launch = self.gpu_launch[ok]
            dur = self.gpu_dur_ns[ok].astype(np.float64)
            back = self.backward[launch]
            fwd_w: F64 = np.bincount(launch[~back], weights=dur[~back], minlength=n).astype(
                np.float64, copy=False
            )
            src = self.forward_op[launch[back]]
            at = np.where(src >= 0, src, launch[back])
            bwd_w: F64 = np.bincount(at, weights=dur[back], minlength=n).astype(
                np.float64, copy=False
            )
            return fwd_w, bwd_w

        return self.memo("node_weights", make)

    def phase_weights(self) -> tuple[F64, F64, F64]:
        """Device time (ns) held at each node, split into forward, backward and other.

        ``node_weights``'s forward time, split: *other* is the part held at nodes outside
        every ``nn.Module`` frame or inside an ``Optimizer.*`` range (the optimizer step,
        ``zero_grad``, the loss computed outside a module, copies), *forward* the rest. A
        trace without module frames tells only its optimizer ranges apart. The three add up
        to ``node_weights``'s two.
        """

        def make() -> tuple[F64, F64, F64]:
            fwd_w, bwd_w = self.node_weights()
            sym = self.trace.symbols
            module = name_mask(sym, lambda n: n.startswith(MODULE_PREFIX))[self.name]
            module &= self.kind == NodeKind.PYTHON
            optim = name_mask(sym, lambda n: n.startswith(OPTIMIZER_PREFIX))[self.name]
            optim &= self.is_op_or_annotation
            if module.any():
                outside = self.forest.nearest(module) < 0
            else:
                outside = np.zeros(len(self.forest), dtype=bool)
            outside |= self.forest.nearest(optim) >= 0
            other: F64 = np.where(outside, fwd_w, 0.0)
            return fwd_w - other, bwd_w, other

        return self.memo("phase_weights", make)


_LOCK = threading.Lock()


def attribute(trace: Trace) -> Attribution:
    """The attribution of ``trace`` (computed once, kept while the trace lives).

    Kept in ``trace.derived``: a table keyed by the trace kept every trace alive (the
    Attribution refers to its trace), and a closed tab's trace with it.

    Parameters
    ----------
    trace : Trace

    Returns
    -------
    Attribution
    """
    with _LOCK:
        hit = trace.derived.get("attribution")
    if hit is not None:
        return hit
    result = _attribute(trace)
    with _LOCK:  # two threads may both compute it: the first stored is kept
        return trace.derived.setdefault("attribution", result)


def _attribute(trace: Trace) -> Attribution:
    s = trace.slices
    sym = trace.symbols
    forest, kind = _forest(trace)
    name = s.name[forest.rows]
    is_op = kind == NodeKind.OP
    dup = _duplicates(forest, kind, name)
    kind = np.where(dup, np.uint8(NodeKind.DUPLICATE), kind).astype(np.uint8)
    is_op = kind == NodeKind.OP
    op_parent = forest.nearest(kind <= NodeKind.ANNOTATION, inclusive=False)

    gpu_rows = np.flatnonzero(trace.gpu_activity_mask()).astype(np.int64)
    launch_rows = trace.launches_of(gpu_rows)
    gpu_launch = np.where(launch_rows >= 0, forest.node_of(launch_rows), -1)
    innermost_op = forest.nearest(is_op)
    gpu_op = np.where(gpu_launch >= 0, innermost_op[np.maximum(gpu_launch, 0)], -1)

    evaluate = name_mask(sym, lambda n: n.startswith(EVALUATE_FUNCTION))[name] & is_op
    fwd_of = _fwdbwd_links(trace, forest, kind)
    if not (fwd_of >= 0).any() and evaluate.any():
        fwd_of = _sequence_links(trace, forest, kind, evaluate)
    # The engine's work around a backward node (summing a broadcast gradient, casting it under
    # autocast) runs in evaluate_function outside the node's op: it is that node's too.
    linked = np.flatnonzero(fwd_of >= 0)
    wrapper = forest.nearest(evaluate, inclusive=False)[linked]
    ok = wrapper >= 0
    fwd_of[wrapper[ok]] = np.where(
        fwd_of[wrapper[ok]] >= 0, fwd_of[wrapper[ok]], fwd_of[linked[ok]]
    )
    target = fwd_of >= 0
    backward = forest.nearest(target | evaluate) >= 0
    anchor = forest.nearest(target)
    forward_op = np.where(anchor >= 0, fwd_of[np.maximum(anchor, 0)], -1)
    return Attribution(
        trace=trace,
        forest=forest,
        kind=kind,
        name=name,
        op_parent=op_parent,
        backward=backward,
        forward_op=forward_op,
        gpu_rows=gpu_rows,
        gpu_dur_ns=s.dur_ns[gpu_rows].astype(np.int64),
        gpu_launch=gpu_launch,
        gpu_op=gpu_op,
    )


def _duplicates(
    forest: CallForest, kind: npt.NDArray[np.uint8], name: npt.NDArray[np.int32]
) -> Mask:
    """Ops that torch's ``EventList._remove_dup_nodes`` folds into their parent: an op whose
    parent op has its name and no other child (autocast re-dispatching ``aten::layer_norm``
    records it twice, nested). Judged on the unfolded tree, which gives the same answer as
    torch's repeated passes (a folded op's parent inherits its children and its name)."""
    torch_node = kind <= NodeKind.RUNTIME
    parent = forest.nearest(kind <= NodeKind.ANNOTATION, inclusive=False)
    has = torch_node & (parent >= 0)
    children = np.bincount(parent[has], minlength=len(forest))
    p = np.maximum(parent, 0)
    return (kind <= NodeKind.ANNOTATION) & has & (name[p] == name) & (children[p] == 1)


def thread_groups(trace: Trace) -> I64:
    """A thread id per track: CPU lanes of one (rank, pid, tid) share one (annotation lanes
    join their thread's); GPU lanes get -1."""
    t = trace.tracks
    out = np.full(len(t), -1, dtype=np.int64)
    ids: dict[tuple[int, int, int], int] = {}
    cpu = (t.kind == TrackKind.CPU_THREAD) | (t.kind == TrackKind.CPU_ANNOTATION)
    for i in np.flatnonzero(cpu).tolist():
        k = (int(t.rank[i]), int(t.pid[i]), int(t.tid[i]))
        out[i] = ids.setdefault(k, len(ids))
    return out


def _forest(trace: Trace) -> tuple[CallForest, npt.NDArray[np.uint8]]:
    """The call forest of every CPU thread, and each node's :class:`NodeKind`."""
    s = trace.slices
    group_of_track = thread_groups(trace)
    on_cpu = group_of_track[s.track] >= 0
    filtered = name_mask(trace.symbols, lambda n: n in FILTERED_NAMES)[s.name]
    keep = on_cpu & ~filtered
    parts = []
    # Given in this order, so that for equal bounds an annotation encloses a Python frame, a
    # frame an op, and an op a runtime call.
    for node_kind, slice_kind in (
        (NodeKind.ANNOTATION, Kind.USER_ANNOTATION),
        (NodeKind.PYTHON, Kind.PYTHON_FUNCTION),
        (NodeKind.OP, Kind.CPU_OP),
        (NodeKind.RUNTIME, Kind.RUNTIME),
    ):
        rows = np.flatnonzero(keep & (s.kind == slice_kind)).astype(np.int64)
        parts.append((rows, np.full(len(rows), int(node_kind), dtype=np.uint8)))
    rows = np.concatenate([p[0] for p in parts])
    kinds = np.concatenate([p[1] for p in parts])
    group = group_of_track[s.track[rows]]
    start = s.start_ns[rows].astype(np.int64)
    # A range left open at the trace's end is clipped to its step (issue 47, item 10).
    dur = clipped_durations(trace, rows, s.dur_ns[rows].astype(np.int64))
    forest = build_forest(rows, group, start, dur)
    kind = kinds[forest.given]
    # A Python frame that starts inside another and ends after it lost its exit (the tracer
    # closes such frames at the end of the window: torch.compile's FunctionMeta.apply). It
    # would swallow everything after it, so end it where the frame that called it ends.
    if _lost_exits(forest, kind):
        clamped = _clamp_python_ends(trace, forest, kind)
        if clamped is not None:
            end = np.empty_like(start)
            end[forest.given] = clamped
            forest = build_forest(rows, group, start, end - start)
            kind = kinds[forest.given]
    return forest, kind


def _lost_exits(forest: CallForest, kind: npt.NDArray[np.uint8]) -> bool:
    """Whether a Python frame lost its exit: it was closed at the end of the window (it ends
    where its thread's last frame ends) and began inside a Python frame that ended before it.
    Only the frames still open at the end are looked at (tens), each by a walk up its thread."""
    py = np.flatnonzero(kind == NodeKind.PYTHON)
    if len(py) == 0:
        return False
    g = forest.group[py]
    last = np.zeros(int(g.max()) + 1, dtype=np.int64)
    np.maximum.at(last, g, forest.end_ns[py])
    open_at_end = py[forest.end_ns[py] == last[g]]
    start, end, parent = forest.start_ns, forest.end_ns, forest.parent
    for i in open_at_end.tolist():
        x = i - 1
        # The innermost slice running when the frame began (whatever its end).
        while x >= 0 and forest.group[x] == forest.group[i] and end[x] <= start[i]:
            x = int(parent[x])
        if x >= 0 and forest.group[x] == forest.group[i] and x != parent[i]:
            if kind[x] == NodeKind.PYTHON:
                return True
    return False


def _clamp_python_ends(trace: Trace, forest: CallForest, kind: npt.NDArray[np.uint8]) -> I64 | None:
    """Python frames' ends, each at most its caller's (by ``Python parent id``); None where the
    frames carry no ids (time nesting is all there is)."""
    py = np.flatnonzero(kind == NodeKind.PYTHON)
    ids = decode_args(trace, forest.rows[py], ("python_id", "python_parent_id"))
    if not (ids.python_parent_id >= 0).any():
        return None
    # Ids are per process: key them by rank and pid.
    t = trace.tracks
    track = trace.slices.track[forest.rows[py]]
    proc = (t.rank[track].astype(np.int64) + 1) << 40 | (
        t.pid[track].astype(np.int64) & 0xFFFFFFFFFF
    )
    key = proc * (1 << 22) + ids.python_id  # python ids stay far below 2^22 in one window
    order = np.argsort(key, kind="stable")
    want = proc * (1 << 22) + ids.python_parent_id
    pos = np.minimum(np.searchsorted(key[order], want), len(order) - 1)
    found = (key[order][pos] == want) & (ids.python_parent_id >= 0) & (ids.python_id >= 0)
    caller = np.where(found, order[pos], -1)
    caller[caller == np.arange(len(py))] = -1
    end = forest.end_ns[py].copy()
    up = caller.copy()
    # The least end over each frame's callers, by pointer doubling (callers have smaller ids,
    # so the chains end).
    live = np.flatnonzero(up >= 0)
    for _ in range(64):
        if not len(live):
            break
        a = up[live]
        end[live], up[live] = np.minimum(end[live], end[a]), up[a]
        live = live[up[live] >= 0]
    out = forest.end_ns.copy()
    out[py] = end
    return out


def _fwdbwd_links(trace: Trace, forest: CallForest, kind: npt.NDArray[np.uint8]) -> I64:
    """For each node that ends a ``fwdbwd`` flow (a backward op), the node of the flow's start
    (its forward op); -1 elsewhere."""
    f = trace.flows
    n = len(forest)
    out = np.full(n, -1, dtype=np.int64)
    cat = trace.symbols.find("fwdbwd")
    if cat < 0 or len(f) == 0:
        return out
    pts = np.flatnonzero(f.cat == cat)
    if len(pts) == 0:
        return out
    group = thread_groups(trace)[f.track[pts]]
    node = _op_at(forest, kind, group, f.ts_ns[pts].astype(np.int64))
    rank = trace.tracks.rank[f.track[pts]].astype(np.int64)
    phase = f.phase[pts]
    start = phase == ord("s")
    finish = (phase == ord("f")) | (phase == ord("t"))
    key = (rank + 1) << 48 | (f.flow_id[pts].astype(np.int64) & ((1 << 48) - 1))
    s_keys, s_nodes = key[start], node[start]
    order = np.argsort(s_keys, kind="stable")
    s_keys, s_nodes = s_keys[order], s_nodes[order]
    if len(s_keys) == 0:
        return out
    f_keys, f_nodes = key[finish], node[finish]
    pos = np.minimum(np.searchsorted(s_keys, f_keys), len(s_keys) - 1)
    ok = (s_keys[pos] == f_keys) & (f_nodes >= 0) & (s_nodes[pos] >= 0)
    out[f_nodes[ok]] = s_nodes[pos[ok]]
    return out


def _op_at(forest: CallForest, kind: npt.NDArray[np.uint8], group: I64, ts: I64) -> I64:
    """The op node a flow point binds to: the outermost op of its thread starting at ``ts``,
    else the innermost op running at ``ts``; -1 where there is none."""
    ops = np.flatnonzero(kind == NodeKind.OP)  # in (group, start, longest first) order
    out = np.full(len(ts), -1, dtype=np.int64)
    if len(ops) == 0:
        return out
    g, st = forest.group[ops], forest.start_ns[ops]
    op_anc: I64 | None = None
    for grp in np.unique(group).tolist():
        mine = np.flatnonzero(group == grp)
        lo, hi = np.searchsorted(g, [grp, grp + 1])
        if lo == hi:
            continue
        starts = st[lo:hi]
        q = ts[mine]
        i = np.searchsorted(starts, q, side="left")
        exact = (i < hi - lo) & (starts[np.minimum(i, hi - lo - 1)] == q)
        out[mine[exact]] = ops[lo + i[exact]]
        # Otherwise the last op starting before ts, or the op around it that still runs.
        j = np.searchsorted(starts, q, side="right") - 1
        cand = np.where(~exact & (j >= 0), ops[lo + np.maximum(j, 0)], -1)
        if op_anc is None and (cand >= 0).any():
            op_anc = forest.nearest(kind == NodeKind.OP, inclusive=False)
        for _ in range(64):  # nesting levels; bounded so odd data cannot loop
            live = cand >= 0
            if op_anc is None or not live.any():
                break
            ended = live & (forest.end_ns[np.maximum(cand, 0)] <= q)
            if not ended.any():
                break
            cand[ended] = op_anc[cand[ended]]
        fill = ~exact & (cand >= 0)
        out[mine[fill]] = cand[fill]
    return out


def _sequence_links(
    trace: Trace, forest: CallForest, kind: npt.NDArray[np.uint8], evaluate: Mask
) -> I64:
    """Backward op -> forward op by ``Sequence number`` (per rank), for traces without
    ``fwdbwd`` flows. The backward op is the outermost numbered op under each
    ``evaluate_function``; the forward op, the outermost op outside backward with that number."""
    n = len(forest)
    out = np.full(n, -1, dtype=np.int64)
    att_nodes = np.flatnonzero(kind <= NodeKind.ANNOTATION)
    seq = np.full(n, -1, dtype=np.int64)
    seq[att_nodes] = decode_args(trace, forest.rows[att_nodes], ("sequence",)).sequence
    numbered = (seq >= 0) & (kind == NodeKind.OP)
    under_eval = forest.nearest(evaluate, inclusive=False) >= 0
    in_backward = under_eval | evaluate
    bwd = numbered & under_eval & ~evaluate
    # outermost numbered op under each evaluate_function: its own numbered ancestors are none
    bwd &= forest.nearest(bwd, inclusive=False) < 0
    fwd = numbered & ~in_backward
    fwd &= forest.nearest(fwd, inclusive=False) < 0
    rank = trace.tracks.rank[trace.slices.track[forest.rows]].astype(np.int64)
    key = (rank + 1) << 48 | (seq & ((1 << 48) - 1))
    f_nodes = np.flatnonzero(fwd)
    if len(f_nodes) == 0:
        return out
    order = np.argsort(key[f_nodes], kind="stable")
    f_keys, f_nodes = key[f_nodes][order], f_nodes[order]
    b_nodes = np.flatnonzero(bwd)
    pos = np.minimum(np.searchsorted(f_keys, key[b_nodes]), len(f_keys) - 1)
    ok = f_keys[pos] == key[b_nodes]
    out[b_nodes[ok]] = f_nodes[pos[ok]]
    return out
