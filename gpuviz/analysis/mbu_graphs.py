"""Bytes a serving step's graph replays must read, and the FLOPs they do, from the ops of
their graphs' captures.

A step that replays a CUDA/HIP graph (vLLM's and SGLang's decode) has none of the graph's ops
in its trace: they were recorded when the graph was captured. Where the capture's trace is
attached (``--capture-trace``, or ``capture_traces/`` beside the run;
:mod:`gpuviz.trace.graph_captures`), the merge (:mod:`gpuviz.analysis.graph_merge`) pairs
each replayed kernel with the launch that captured it. The launch's enclosing GEMM or attention
op in the capture (the outermost, as :func:`gpuviz.analysis.mbu.step_bytes` counts a step's
own) then gives the bytes that op reads, from the capture's recorded shapes and dtypes: a
GEMM's right operand (a weight), an attention op's keys and values. Each op counts once a
replay, for every replay that ran one of its kernels.

FLOPs go the same way: a replayed kernel's innermost op with counted FLOPs in the capture
(:func:`gpuviz.analysis.flops.op_flops`, from its recorded shapes), once a replay, each at its
own precision; the kernel's time is then time with known FLOPs, for the step's coverage
(:func:`gpuviz.analysis.serving_phases.serving_report` judges its MFU again with them). A
capture inside the run itself gives no FLOPs here: the step figures count its replays
already (:mod:`gpuviz.analysis.replay_flops`).

The count is a floor, as :mod:`gpuviz.analysis.mbu`'s: activations, and the operands of ops
that are no aten GEMM or attention (a fused MoE of a kernel library), are not in it. Where a
replay's graph matched no capture, or its capture records no such op with shapes, its bytes
are unknown (None), with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.attribution import Attribution, attribute
from gpuviz.analysis.dtypes import op_precision
from gpuviz.analysis.flops import op_flops
from gpuviz.analysis.graph_merge import captures_of, merge_of
from gpuviz.analysis.graph_replays import graph_replays
from gpuviz.analysis.mbu import op_bytes
from gpuviz.analysis.op_args import ATTENTION_LEAVES, ATTENTION_PARENTS, GEMMS
from gpuviz.analysis.steps import Steps
from gpuviz.trace.model import Trace

I64 = npt.NDArray[np.int64]

_ATTENTION = {**ATTENTION_LEAVES, **ATTENTION_PARENTS}
_FLOP_NAMES = frozenset(GEMMS) | frozenset(ATTENTION_LEAVES)
"""The capture ops whose FLOPs count: GEMMs and attention (an elementwise op's are a rounding
error beside them on a decode step, and op_flops would count every view and copy's None)."""


@dataclass
class ReplayBytes:
    """Per step row, the bytes its graph replays read (from their captures).

    Attributes
    ----------
    nbytes : list of int or None
        None where the step replays no graph, or where a replay's bytes are unknown (``why``).
    ops : list of int
        Capture ops counted (once a replay).
    replays : list of int
        Graph replays launched in the step's CPU range.
    why : list of str
        Why ``nbytes`` is None for a step that replays a graph ("" otherwise).
    flops : list of dict
        The capture ops' FLOPs by precision (empty where none are known).
    known_ns : list of int
        Device time of the replayed kernels whose capture op has FLOPs.
    """

    nbytes: list[int | None]
    ops: list[int]
    replays: list[int]
    why: list[str]
    flops: list[dict[str, float]] = field(default_factory=list)
    known_ns: list[int] = field(default_factory=list)


def replay_bytes(trace: Trace, steps: Steps) -> ReplayBytes | None:
    """The bytes each step's graph replays read, from the attached captures' ops.

    Parameters
    ----------
    trace : Trace
        The run, its captures attached (:func:`gpuviz.trace.graph_captures.attach_captures`).
    steps : Steps

    Returns
    -------
    ReplayBytes or None
        None where no capture trace is attached (a graph's own capture inside the run is
        not enough: its ops are this trace's, and a step's count has them already).
    """
    if not captures_of(trace):
        return None
    att = attribute(trace)
    replays = graph_replays(att)
    merge = merge_of(att)
    n = len(steps)
    out = ReplayBytes([None] * n, [0] * n, [0] * n, [""] * n, [{} for _ in range(n)], [0] * n)
    if not len(replays):
        return out
    s = trace.slices
    launch_rows = att.forest.rows[replays.launch_node]
    launch_start = s.start_ns[launch_rows]
    launch_rank = trace.tracks.rank[s.track[launch_rows]].astype(np.int64)
    # Per replay: the capture ops (capture index, op node) its matched kernels came from.
    ops: dict[int, set[tuple[int, int]]] = {}
    flop_ops: dict[int, set[tuple[int, int]]] = {}  # the same, for FLOPs (innermost op)
    known_ns: dict[int, int] = {}
    if merge is not None:
        replay_of = replays.kernel_replay[merge.kernel]
        dur = att.gpu_dur_ns[merge.kernel]
        # A graph's launches repeat in every replay: each one's ops are looked up once.
        found: dict[tuple[int, int], tuple[int, int]] = {}
        for r, c, node, d in zip(replay_of, merge.capture, merge.launch_node, dur, strict=True):
            key = (int(c), int(node))
            if key not in found:
                cap = merge.captures[key[0]]
                found[key] = (_counted_op(cap, key[1]), _flop_op(cap, key[1]))
            op, fop = found[key]
            ops.setdefault(int(r), set())
            if op >= 0:
                ops[int(r)].add((int(c), op))
            # A capture in this trace: its replays' FLOPs are the steps' own already
            # (gpuviz.analysis.replay_flops), not to be added again.
            if fop >= 0 and merge.captures[key[0]] is not att:
                flop_ops.setdefault(int(r), set()).add((int(c), fop))
                known_ns[int(r)] = known_ns.get(int(r), 0) + int(d)
    for i in range(n):
        inside = np.flatnonzero(
            (launch_rank == int(steps.rank[i]))
            & (launch_start >= steps.cpu_start_ns[i])
            & (launch_start < steps.cpu_end_ns[i])
        )
        out.replays[i] = int(inside.size)
        if not inside.size:
            continue
        total = counted = 0
        why = ""
        for r in inside.tolist():
            out.known_ns[i] += known_ns.get(r, 0)
            for c, node in flop_ops.get(r, ()):
                f, precision = _op_flops(merge.captures[c], node) if merge else (None, "")
                if f:
                    out.flops[i][precision] = out.flops[i].get(precision, 0.0) + f
            if r not in ops:
                why = f"graph {int(replays.graph[r])} matched no capture of the attached ones"
                break
            for c, node in ops[r]:
                got = _op_bytes(merge.captures[c], node) if merge is not None else None
                if got is not None:
                    total += got
                    counted += 1
        if not why and counted == 0:
            why = "the graph's capture records no GEMM or attention op with shapes"
        if why:
            out.why[i] = why
            continue
        out.nbytes[i] = total
        out.ops[i] = counted
    return out


def _counted_op(att: Attribution, node: int) -> int:
    """The outermost GEMM or attention op around a capture's launch node, or -1."""
    sym = att.trace.symbols
    found = -1
    at = int(att.op_parent[node])
    while at >= 0:
        name = sym[int(att.name[at])]
        if name in GEMMS or name in _ATTENTION:
            found = at
        at = int(att.op_parent[at])
    return found


def _flop_op(att: Attribution, node: int) -> int:
    """The innermost op with counted FLOPs around a capture's launch node, or -1."""
    at = int(att.op_parent[node])
    while at >= 0:
        if _op_flops(att, at)[0]:
            return at
        at = int(att.op_parent[at])
    return -1


def _op_flops(att: Attribution, node: int) -> tuple[int | None, str]:
    """A capture op's FLOPs from its recorded shapes, and its precision."""
    trace = att.trace
    row = int(att.forest.rows[node])
    name = trace.symbols[int(att.name[node])]
    if name not in _FLOP_NAMES:
        return None, ""
    args = trace.args.get(int(trace.slices.args[row]))
    dims, types = args.get("Input Dims"), args.get("Input type")
    if not isinstance(dims, list):
        return None, ""
    got = op_flops(name, dims, types if isinstance(types, list) else [], args)
    return got, str(op_precision(types if isinstance(types, list) else []))


def _op_bytes(att: Attribution, node: int) -> int | None:
    """The bytes a capture's GEMM or attention op reads (:func:`gpuviz.analysis.mbu.op_bytes`)."""
    trace = att.trace
    row = int(att.forest.rows[node])
    return op_bytes(
        trace.symbols[int(trace.slices.name[row])], trace.args.get(int(trace.slices.args[row]))
    )
