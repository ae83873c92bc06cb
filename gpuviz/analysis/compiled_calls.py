"""Inductor's generated kernels as counted op calls, so that a compiled step's FLOPs, bytes,
coverage and MFU count them (issue 49).

:func:`gpuviz.analysis.op_calls.count_calls` counts the ATen ops a trace records with shapes;
inside a compiled graph those are only the library calls (``aten::mm`` of
``extern_kernels.mm``). Each generated kernel is a ``cpu_op`` named for it
(``triton_poi_fused_gelu_view_10``), recorded with no shapes. Where the trace has its
compile-info folder attached (:func:`gpuviz.analysis.compiled_regions.attach_compile_info`:
``--compile-info DIR`` or ``NAME.compile/`` beside the trace), each such op that
:func:`~gpuviz.analysis.compiled_regions.compiled_origins` placed on a kernel call of a
compiled graph becomes one call here, with the FLOPs and bytes of the FX nodes it fuses
(:mod:`gpuviz.analysis.fused_flops`) and the device time of the kernels it launched. Without
the folder nothing changes: those kernels' FLOPs stay unknown.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.compiled_regions import COMPILE_INFO, compile_info_of, compiled_origins
from gpuviz.analysis.fused_flops import FusedFigures, fused_figures
from gpuviz.analysis.op_calls import Calls, shape_key
from gpuviz.trace.model import Trace

I64 = npt.NDArray[np.int64]


def add_compiled_calls(
    trace: Trace, calls: Calls, described: list[tuple[str, Any, Any]]
) -> tuple[Calls, list[tuple[str, Any, Any]], dict[int, str]]:
    """``calls`` with one call more for each placed generated kernel op (see the module notes).

    Parameters
    ----------
    trace : Trace
    calls : Calls
        What :func:`~gpuviz.analysis.op_calls.count_calls` counted.
    described : list
        Its groups: (name, input dims, input types).

    Returns
    -------
    calls : Calls
        A new one where any was added (``calls`` itself otherwise).
    described : list
        The groups, the new ones (kernel name, the fused group's input shapes and types)
        after the old.
    precision : dict
        Index of a new call -> its precision (that of the fused nodes doing most FLOPs).
    """
    info = compile_info_of(trace)
    if info is None:
        return calls, described, {}
    from gpuviz.analysis.attribution import attribute

    att = attribute(trace)
    origins = compiled_origins(att, info)
    placed = (origins.source == COMPILE_INFO) & (origins.index >= 0) & (origins.call >= 0)
    ks = np.flatnonzero(placed)
    generated = np.array(
        [not info.graphs[g].calls[i].extern for g, i in zip(origins.graph[ks], origins.index[ks])],
        dtype=bool,
    )
    ks = ks[generated] if len(ks) else ks
    if not len(ks):
        return calls, described, {}
    order = np.argsort(origins.call[ks], kind="stable")
    ks = ks[order]
    node = origins.call[ks]
    cut = np.flatnonzero(np.diff(node)) + 1
    starts = np.concatenate([[0], cut]).astype(np.int64)
    ends = np.concatenate([cut, [len(ks)]]).astype(np.int64)
    memo: dict[tuple[int, int], FusedFigures] = {}
    groups = {shape_key(*d): j for j, d in enumerate(described)}
    out_described = list(described)
    rows: list[int] = []
    group: list[int] = []
    flops: list[float] = []
    nbytes: list[float] = []
    device_ns: list[int] = []
    precision: dict[int, str] = {}
    n0 = len(calls.rows)
    for a, b in zip(starts.tolist(), ends.tolist()):
        k = int(ks[a])
        hit = (int(origins.graph[k]), int(origins.index[k]))
        if hit not in memo:
            graph = info.graphs[hit[0]]
            call = graph.calls[hit[1]]
            memo[hit] = fused_figures(graph.fx, call.nodes, graph.defined.get(call.name, ()))
        fig = memo[hit]
        row = int(att.forest.rows[int(origins.call[k])])
        name = trace.symbols[int(trace.slices.name[row])]
        key = shape_key(name, fig.input_dims, fig.input_types)
        if key not in groups:
            groups[key] = len(out_described)
            out_described.append((name, fig.input_dims, fig.input_types))
        precision[n0 + len(rows)] = fig.precision
        rows.append(row)
        group.append(groups[key])
        flops.append(fig.flops)
        nbytes.append(fig.nbytes)
        device_ns.append(int(att.gpu_dur_ns[ks[a:b]].sum()))
    kernels = att.gpu_rows[ks].astype(np.int64)
    base = len(calls.sorted_gpu)
    new = Calls(
        rows=np.concatenate([calls.rows, np.asarray(rows, dtype=np.int64)]),
        group=np.concatenate([calls.group, np.asarray(group, dtype=np.int64)]),
        flops=np.concatenate([calls.flops, np.asarray(flops, dtype=np.float64)]),
        nbytes=np.concatenate([calls.nbytes, np.asarray(nbytes, dtype=np.float64)]),
        device_ns=np.concatenate([calls.device_ns, np.asarray(device_ns, dtype=np.int64)]),
        lo=np.concatenate([calls.lo, base + starts]),
        hi=np.concatenate([calls.hi, base + ends]),
        sorted_gpu=np.concatenate([calls.sorted_gpu, kernels]),
        bad_flops=np.concatenate(
            [
                calls.bad_flops
                if calls.bad_flops is not None
                else np.zeros(len(calls.rows), dtype=bool),
                np.zeros(len(rows), dtype=bool),
            ]
        ),
        skipped=calls.skipped,
    )
    return new, out_described, precision
