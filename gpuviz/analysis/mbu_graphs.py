"""Bytes a serving step's graph replays must read, from the ops of their graphs' captures.

A step that replays a CUDA/HIP graph (vLLM's and SGLang's decode) has none of the graph's ops
in its trace: they were recorded when the graph was captured. Where the capture's trace is
attached (``--capture-trace``, or ``capture_traces/`` beside the run;
:mod:`gpuviz.trace.graph_captures`), the merge (:mod:`gpuviz.analysis.graph_merge`) pairs
each replayed kernel with the launch that captured it. The launch's enclosing GEMM or attention
op in the capture (the outermost, as :func:`gpuviz.analysis.mbu.step_bytes` counts a step's
own) then gives the bytes that op reads, from the capture's recorded shapes and dtypes: a
GEMM's right operand (a weight), an attention op's keys and values. Each op counts once a
replay, for every replay that ran one of its kernels.

The count is a floor, as :mod:`gpuviz.analysis.mbu`'s: activations, and the operands of ops
that are no aten GEMM or attention (a fused MoE of a kernel library), are not in it. Where a
replay's graph matched no capture, or its capture records no such op with shapes, its bytes
are unknown (None), with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.attribution import Attribution, attribute
from gpuviz.analysis.graph_merge import captures_of, merge_of
from gpuviz.analysis.graph_replays import graph_replays
from gpuviz.analysis.mbu import op_bytes
from gpuviz.analysis.op_args import ATTENTION_LEAVES, ATTENTION_PARENTS, GEMMS
from gpuviz.analysis.steps import Steps
from gpuviz.trace.model import Trace

I64 = npt.NDArray[np.int64]

_ATTENTION = {**ATTENTION_LEAVES, **ATTENTION_PARENTS}


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
    """

    nbytes: list[int | None]
    ops: list[int]
    replays: list[int]
    why: list[str]


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
    out = ReplayBytes([None] * n, [0] * n, [0] * n, [""] * n)
    if not len(replays):
        return out
    s = trace.slices
    launch_rows = att.forest.rows[replays.launch_node]
    launch_start = s.start_ns[launch_rows]
    launch_rank = trace.tracks.rank[s.track[launch_rows]].astype(np.int64)
    # Per replay: the capture ops (capture index, op node) its matched kernels came from.
    ops: dict[int, set[tuple[int, int]]] = {}
    if merge is not None:
        replay_of = replays.kernel_replay[merge.kernel]
        for r, c, node in zip(replay_of, merge.capture, merge.launch_node, strict=True):
            op = _counted_op(merge.captures[int(c)], int(node))
            ops.setdefault(int(r), set())
            if op >= 0:
                ops[int(r)].add((int(c), op))
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


def _op_bytes(att: Attribution, node: int) -> int | None:
    """The bytes a capture's GEMM or attention op reads (:func:`gpuviz.analysis.mbu.op_bytes`)."""
    trace = att.trace
    row = int(att.forest.rows[node])
    return op_bytes(
        trace.symbols[int(trace.slices.name[row])], trace.args.get(int(trace.slices.args[row]))
    )
