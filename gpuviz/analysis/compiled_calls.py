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
(:mod:`gpuviz.analysis.fused_flops`) and the device time of the kernels it launched. Its
bytes are those of the kernel's tensor arguments as the op records them (``Input Dims``:
each pointer a kernel takes it loads from or stores to), else the fused group's. Without the
folder nothing changes: those kernels' FLOPs stay unknown.
"""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt

from gpuviz.analysis.attribution import Attribution, attribute
from gpuviz.analysis.breakdown_table import Breakdown
from gpuviz.analysis.compiled_regions import (
    COMPILE_INFO,
    KernelOrigins,
    compile_info_of,
    compiled_origins,
)
from gpuviz.analysis.dtypes import element_bytes
from gpuviz.analysis.fused_flops import FusedFigures, fused_figures
from gpuviz.analysis.inductor_provenance import CompileInfo
from gpuviz.analysis.node_args import decode_args
from gpuviz.analysis.op_args import numel
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
    op_rows = att.forest.rows[node[starts]].astype(np.int64)
    args = decode_args(trace, op_rows, ("input_dims", "input_types"))
    for j, (a, b) in enumerate(zip(starts.tolist(), ends.tolist())):
        k = int(ks[a])
        hit = (int(origins.graph[k]), int(origins.index[k]))
        if hit not in memo:
            memo.update(graph_figures(att, info, hit[0]))
        fig = memo[hit]
        row = int(op_rows[j])
        name = trace.symbols[int(trace.slices.name[row])]
        # Grouped by the op's own recorded args (the kernel's tensor arguments), as the
        # op-shape table's rows are.
        dims, types = _decode(args.input_dims[j]), _decode(args.input_types[j])
        dims = dims if isinstance(dims, list) else fig.input_dims
        types = types if isinstance(types, list) else fig.input_types
        key = shape_key(name, dims, types)
        if key not in groups:
            groups[key] = len(out_described)
            out_described.append((name, dims, types))
        precision[n0 + len(rows)] = fig.precision
        rows.append(row)
        group.append(groups[key])
        flops.append(fig.flops)
        recorded = _argument_bytes(dims, types)
        nbytes.append(fig.nbytes if recorded is None else float(recorded))
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


def graph_figures(
    att: Attribution, info: CompileInfo, g: int
) -> dict[tuple[int, int], FusedFigures]:
    """(``g``, call index) -> the figures of each generated kernel call of graph ``g``, in
    call order, each FX node's FLOPs counted once (:func:`fused_figures`'s ``counted``)."""

    def make() -> tuple[CompileInfo, dict[tuple[int, int], FusedFigures]]:
        graph, counted = info.graphs[g], set[str]()
        return info, {
            (g, i): fused_figures(graph.fx, c.nodes, graph.defined.get(c.name, ()), counted)
            for i, c in enumerate(graph.calls)
            if not c.extern
        }

    # The memo holds ``info`` too: while it lives, its id names no other folder's info.
    kept: tuple[CompileInfo, dict[tuple[int, int], FusedFigures]] = att.memo(
        f"fused_figures:{id(info)}:{g}", make
    )
    return kept[1]


def _decode(raw: bytes) -> Any:
    try:
        return msgspec.json.decode(raw) if raw else None
    except (msgspec.DecodeError, RecursionError):
        return None


def _argument_bytes(dims: Any, types: Any) -> int | None:
    """The bytes of a generated kernel's tensor arguments as the trace records them (each read
    or written once: every pointer a kernel takes it loads from or stores to); None where
    none is recorded or one's size is unknown (a symbolic size)."""
    total, tensors = 0, 0
    for d, t in zip(dims or [], types or []):
        size = element_bytes(t) if isinstance(t, str) else None
        if size is None:
            continue  # a Scalar (xnumel, rnumel)
        if not isinstance(d, list) or not all(isinstance(v, int) for v in d):
            return None
        total += numel(d) * size
        tensors += 1
    return total if tensors else None


NO_TRACE_FLOPS = "unknown (Inductor kernel: the trace records no FLOP count for generated code)"
EXTERN_FLOPS = (
    "unknown (a library call of compiled code, extern_kernels: its FLOPs come from its op's "
    "recorded shapes, absent here: shapes not recorded, or the call replayed from a CUDA graph)"
)


def annotate_fused_flops(table: Breakdown, att: Attribution, origins: KernelOrigins) -> Breakdown:
    """Give the ``op`` and ``op-shape`` rows of generated kernels (refined by
    :func:`~gpuviz.analysis.compiled_regions.refine`) the FLOPs of the FX nodes they fuse, or
    say why not (``flops_note``); ``table`` is changed in place and returned."""
    if table.by not in ("op", "op-shape"):
        return table
    ks = np.flatnonzero((origins.source > 0) & (table.kernel_row >= 0))
    ks = ks[np.argsort(table.kernel_row[ks], kind="stable")]
    cut = np.flatnonzero(np.diff(table.kernel_row[ks])) + 1
    for part in np.split(ks, cut):
        row = table.rows[int(table.kernel_row[part[0]])] if len(part) else None
        if row is None or row.flops is not None:
            continue
        row.flops, why = fused_row_flops(att, origins, part)
        if why:
            row.extra["flops_note"] = why
    return table


def fused_row_flops(
    att: Attribution, origins: KernelOrigins, kernels: npt.ArrayLike
) -> tuple[int | None, str | None]:
    """The FLOPs of an op row's generated kernels (indices into ``att.gpu_rows``) from the FX
    nodes they fuse, each kernel call once; None where any of them is unknown.

    Returns
    -------
    (int or None, str or None)
        The FLOPs, and why they are unknown (or what was left out).
    """
    info = compile_info_of(att.trace)
    ks = np.asarray(kernels, dtype=np.int64)
    if info is None or not len(ks) or (origins.index[ks] < 0).any():
        return None, NO_TRACE_FLOPS + (
            "; pass --compile-info DIR to count it from its FX nodes" if info is None else ""
        )
    total = 0.0
    notes: list[str] = []
    seen: set[int] = set()
    for k in ks.tolist():
        if int(origins.call[k]) in seen:
            continue  # a call's FLOPs once, however many kernels it ran
        seen.add(int(origins.call[k]))
        g = int(origins.graph[k])
        fig = graph_figures(att, info, g).get((g, int(origins.index[k])))
        if fig is None:  # a library call (extern_kernels.mm): counted from its op's shapes
            return None, EXTERN_FLOPS
        if not np.isfinite(fig.flops):
            return None, fig.note
        total += fig.flops
        notes += [fig.note] if fig.note else []
    # A call's "0: no formula" note stands for the row only where the row's total is 0.
    other = [n for n in notes if not n.startswith("0:")]
    return int(total), other[0] if other else (notes[0] if notes and total == 0 else None)
