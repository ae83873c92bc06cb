"""The operator table: ops by name, or by name and input shapes, as ``key_averages`` counts them.

Definitions (torch's ``torch/autograd/profiler_util.py``, ``FunctionEvent``):

- an op's children are the ops, ``record_function`` ranges and runtime calls directly inside
  it on its thread (Python frames are not events there);
- CPU total = its duration; CPU self = CPU total minus its children's CPU totals;
- device self = the kernels, copies and sets it launched itself (see
  :mod:`gpuviz.analysis.attribution`); device total = device self plus its children's device
  totals. A ``record_function`` range launches nothing itself in torch's accounting (a kernel
  launched directly under one is linked to no op), but its device total holds its ops';
- rows are ops and ``record_function`` ranges, ``ProfilerStep#N`` named ``ProfilerStep*``, and
  a row sums every call of its key (calls nested in a call of the same name too).

FLOPs: Kineto's ``flops`` arg (``with_flops=True``) where the trace has it; otherwise
:func:`formula_flops`, the hook where shape-based formulas plug in. A row's FLOPs are the
exact int sum of its calls' (:func:`gpuviz.analysis.exact_sums.group_sums`): past 2**53 a
float64 sum would depend on the order of its terms, and a rank folder's row, summed from its
ranks' (:mod:`gpuviz.analysis.breakdown_parts`), must be the folder read whole's. A count
that is not a whole number (a recorded ``flops`` of 1.5 or 1e308) keeps its row's float64
sum, marked (:attr:`~gpuviz.analysis.breakdown_table.BreakdownRow.flops_exact`).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt

from gpuviz.analysis.attribution import Attribution, NodeKind
from gpuviz.analysis.breakdown_table import Breakdown, BreakdownRow
from gpuviz.analysis.exact_sums import group_sums
from gpuviz.analysis.graph_replays import graph_op_rows, loose_graph_launch
from gpuviz.analysis.node_args import decode_args

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

SAMPLE = 4096
"""Ops whose args are probed for Kineto's ``flops`` before decoding every op's."""

FlopsFn = Callable[[str, Any, Any, Any], "int | None"]


def formula_flops(name: str, input_dims: Any, input_types: Any, args: Any = None) -> int | None:
    """FLOPs of one call of op ``name`` from its ``Input Dims``, ``Input type`` and ``args``
    (``{"Concrete Inputs": ...}``).

    The hook for shape-based formulas: it calls ``gpuviz.analysis.flops.op_flops(name,
    input_dims, input_types, args)`` when that module exists, and returns None otherwise (or
    where it knows no formula: elementwise ops, and parents such as ``aten::linear`` whose
    child op is counted).
    """
    module = _formula_module()
    fn = getattr(module, "op_flops", None) if module is not None else None
    if fn is None:
        return None
    value = fn(name, input_dims, input_types, args)
    return None if value is None else int(value)


def _formula_module() -> Any:
    """``gpuviz.analysis.flops`` where it exists, else None."""
    if importlib.util.find_spec("gpuviz.analysis.flops") is None:
        return None
    return importlib.import_module("gpuviz.analysis.flops")


def op_display_name(name: str) -> str:
    """The name an op's row goes under (torch's ``_rewrite_name(with_wildcard=True)``)."""
    return "ProfilerStep*" if name.startswith("ProfilerStep#") else name


def node_times(att: Attribution) -> tuple[I64, I64, F64, F64]:
    """Per node of the call forest: CPU total and self (ns), device self and total (ns), as
    :mod:`torch.autograd.profiler_util` defines them for ops."""

    def make() -> tuple[I64, I64, F64, F64]:
        f = att.forest
        n = len(f)
        dur: I64 = f.end_ns - f.start_ns
        child = (att.kind <= NodeKind.RUNTIME) & (att.op_parent >= 0)
        taken = np.bincount(att.op_parent[child], weights=dur[child], minlength=n)
        cpu_self: I64 = dur - np.rint(taken).astype(np.int64)
        # A graph replay outside every op is held at its launch call, so that the ranges
        # around it (vLLM's execute_… record_function) count it in their device total.
        holder = np.where(att.gpu_op >= 0, att.gpu_op, loose_graph_launch(att))
        ok = holder >= 0
        dev_self: F64 = np.bincount(holder[ok], weights=att.gpu_dur_ns[ok], minlength=n).astype(
            np.float64, copy=False
        )
        dev_total = f.subtree_sum(dev_self)
        return dur, cpu_self, dev_self, dev_total

    return att.memo("node_times", make)


def op_table(
    att: Attribution,
    by_shape: bool = False,
    flops_fn: FlopsFn | None = formula_flops,
    runs: I64 | None = None,
) -> Breakdown:
    """Ops (and ``record_function`` ranges) grouped by name, or by name and input shapes.

    Parameters
    ----------
    att : Attribution
        ``attribute(trace)``.
    by_shape : bool
        Group by ``(name, Input Dims)`` instead of by name, as ``key_averages(
        group_by_input_shape=True)`` does; a row's ``input_types`` are its first call's.
    flops_fn : callable, optional
        FLOPs of one call from ``(name, input_dims, input_types)`` where Kineto wrote none;
        None to use Kineto's only.
    runs : int64, optional
        Per forest node, how many times the GPU ran its work
        (:func:`~gpuviz.analysis.graph_merge.capture_runs`: a captured op once per replay);
        its FLOPs count that many times. Default: once.

    Returns
    -------
    Breakdown
        ``by`` is ``"op"`` or ``"op-shape"``; largest device total first.
    """
    dur, cpu_self, dev_self, dev_total = node_times(att)
    nodes = att.op_node_indices()
    names = att.trace.symbols.strings
    name_ids = att.name[nodes]
    uniq_names, name_inv = np.unique(name_ids, return_inverse=True)
    display = [op_display_name(names[i]) for i in uniq_names.tolist()]
    disp_ids: dict[str, int] = {}
    name_key = np.array([disp_ids.setdefault(d, len(disp_ids)) for d in display], dtype=np.int64)
    key = name_key[name_inv] if len(nodes) else np.zeros(0, dtype=np.int64)
    if flops_fn is formula_flops and _formula_module() is None:
        flops_fn = None  # no formulas installed: decode no shapes for them
    args = att.op_args(("input_dims",)) if by_shape else None
    if args is not None:
        # By name and Input Dims only, as key_averages(group_by_input_shape=True) groups (an
        # op under autocast runs in float and bfloat16 with the same shapes: one row).
        dims_id, _ = _intern(args.input_dims)
        key = key * (int(dims_id.max(initial=0)) + 1) + dims_id
    groups, first, inverse, counts = np.unique(
        key, return_index=True, return_inverse=True, return_counts=True
    )
    inverse = inverse.reshape(-1)
    g = len(groups)

    def total(values: npt.ArrayLike) -> list[int]:
        return np.rint(np.bincount(inverse, weights=values, minlength=g)).astype(np.int64).tolist()

    cpu_t, cpu_s = total(dur[nodes]), total(cpu_self[nodes])
    dev_s, dev_t = total(dev_self[nodes]), total(dev_total[nodes])
    flops, exact = _flops(att, nodes, inverse, g, flops_fn, None if runs is None else runs[nodes])
    kind = att.kind[nodes]
    # A row's types are its first call's: decoded for those calls only.
    first_types = (
        decode_args(att.trace, att.forest.rows[nodes[first]], ("input_types",)).input_types
        if args is not None
        else []
    )
    rows = []
    for j in range(g):
        i = int(first[j])
        row = BreakdownRow(
            key=display[int(name_inv[i])],
            calls=int(counts[j]),
            cpu_self_ns=cpu_s[j],
            cpu_total_ns=cpu_t[j],
            device_self_ns=dev_s[j],
            device_total_ns=dev_t[j],
            kind="annotation" if kind[i] == NodeKind.ANNOTATION else "op",
            flops=flops[j],
            flops_exact=exact[j],
        )
        if by_shape and args is not None:
            row.input_shapes = decode_arg(args.input_dims[i]) or []
            row.input_types = decode_arg(first_types[j]) or []
        rows.append(row)
    # The row of each kernel: its op's group.
    group_of_node = np.full(len(att.forest), -1, dtype=np.int64)
    group_of_node[nodes] = inverse
    kernel_row = np.where(att.gpu_op >= 0, group_of_node[np.maximum(att.gpu_op, 0)], -1)
    # Graph replays launched outside any op: a "graph N: K kernels" row each, not "no row".
    graph_rows, kernel_row = graph_op_rows(att, len(rows), kernel_row)
    rows += graph_rows
    unattributed = int(att.gpu_dur_ns[kernel_row < 0].sum())
    return Breakdown(
        by="op-shape" if by_shape else "op",
        rows=rows,
        kernel_rows=att.gpu_rows,
        kernel_row=kernel_row,
        unattributed_device_ns=unattributed,
    ).sorted()


def _has_kineto_flops(att: Attribution, nodes: I64) -> bool:
    """Whether the ops carry Kineto's ``flops`` arg (``with_flops=True``; torch 2.11 writes none
    into the JSON): asked of the ops that have a formula and of a spread sample of the others,
    not of every op (whose args text may be compressed)."""
    counted = _formula_names() or frozenset()
    sym = att.trace.symbols
    ids = [i for i in (sym.find(n) for n in counted) if i >= 0]
    probe = np.flatnonzero(np.isin(att.name[nodes], ids))[:SAMPLE]
    spread = np.linspace(0, len(nodes) - 1, min(SAMPLE, len(nodes))).astype(np.int64)
    probe = np.union1d(probe, spread) if len(nodes) else probe
    if len(probe) == 0:
        return False
    got = decode_args(att.trace, att.forest.rows[nodes[probe]], ("flops",))
    return bool((~np.isnan(got.flops)).any())


def _intern(values: list[bytes]) -> tuple[I64, list[bytes]]:
    """An id per value, and the distinct values."""
    ids: dict[bytes, int] = {}
    put = ids.setdefault
    out = np.array([put(v, len(ids)) for v in values], dtype=np.int64)
    return out, list(ids)


def decode_arg(raw: bytes) -> Any:
    """A JSON-encoded op arg (``Input Dims``, ``Input type``...) decoded; None where it is
    empty or not JSON (Kineto writes some args truncated)."""
    if not raw:
        return None
    try:
        return msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return None


def _flops(
    att: Attribution,
    nodes: I64,
    inverse: I64,
    g: int,
    flops_fn: FlopsFn | None,
    runs: I64 | None = None,
) -> tuple[list[int | None], list[bool]]:
    """Summed FLOPs per group: Kineto's where a group's calls have them, else the formula's
    (once per distinct name, shapes, types and scalar inputs, times its calls, each call
    ``runs`` times); None where neither knows. Only the calls of ops that have a formula are
    decoded. And per group, whether its sum is exact (:func:`_sums`)."""
    out: list[int | None] = [None] * g
    exact = [True] * g
    have = np.zeros(len(nodes), dtype=bool)
    times = np.ones(len(nodes)) if runs is None else runs.astype(np.float64)
    if _has_kineto_flops(att, nodes):
        kineto = att.op_args(("flops",)).flops
        have = ~np.isnan(kineto)
        sums = _sums(kineto[have] * times[have], inverse[have], g)
        seen = np.bincount(inverse[have], minlength=g) > 0
        for j in np.flatnonzero(seen).tolist():
            out[j], exact[j] = sums[j]
    if flops_fn is None:
        return out, exact
    names = att.trace.symbols.strings
    counted = _formula_names()
    name_ids = att.name[nodes]
    if counted is not None:
        known = np.zeros(len(names), dtype=bool)
        known[[i for i in (att.trace.symbols.find(n) for n in counted) if i >= 0]] = True
        todo = np.flatnonzero(known[name_ids] & ~have)
    else:
        todo = np.flatnonzero(~have)
    todo = todo[np.isin(inverse[todo], [j for j in range(g) if out[j] is None])]
    if len(todo) == 0:
        return out, exact
    got = decode_args(
        att.trace, att.forest.rows[nodes[todo]], ("input_dims", "input_types", "concrete_inputs")
    )
    per_call = np.zeros(len(todo))
    hit = np.zeros(len(todo), dtype=bool)
    memo: dict[tuple[int, bytes, bytes, bytes], int | None] = {}
    for k, (nm, dims, types, conc) in enumerate(
        zip(
            name_ids[todo].tolist(),
            got.input_dims,
            got.input_types,
            got.concrete_inputs,
            strict=True,
        )
    ):
        if not dims:
            continue  # no shapes recorded: nothing to count from
        combo = (nm, dims, types, conc)
        if combo not in memo:
            concrete = decode_arg(conc)
            memo[combo] = flops_fn(
                names[nm],
                decode_arg(dims),
                decode_arg(types) or [],
                None if concrete is None else {"Concrete Inputs": concrete},
            )
        value = memo[combo]
        if value is not None:
            per_call[k], hit[k] = value * times[todo[k]], True
    if not hit.any():
        return out, exact
    sums = _sums(per_call[hit], inverse[todo[hit]], g)
    seen = np.bincount(inverse[todo[hit]], minlength=g) > 0
    for j in np.flatnonzero(seen).tolist():
        total, exact[j] = sums[j]
        out[j] = total + (out[j] or 0)
    return out, exact


def _sums(values: F64, group: I64, g: int) -> list[tuple[int, bool]]:
    """Per group, its calls' summed FLOPs as an int and whether that is exact: the exact sum
    where every count is a whole number (every formula's and Kineto's integer counts), else
    the float64 sum made int as it always was (Kineto's 1.5 or 1e308: not exact)."""
    exact = group_sums(values, group, g)
    floats = None
    out: list[tuple[int, bool]] = []
    for j, v in enumerate(exact):
        if v is None:
            if floats is None:
                floats = np.bincount(group, weights=values, minlength=g)
            out.append((_whole_number(floats[j]), False))
        else:
            out.append((v, True))
    return out


def _whole_number(total: float) -> int:
    """A row's summed FLOPs as an int; two recorded 1e308s add up to inf, which no int is: the
    largest float instead, which :attr:`BreakdownRow.sane_flops` flags as no op's figure."""
    return int(total) if np.isfinite(total) else int(np.finfo(np.float64).max)


def _formula_names() -> frozenset[str] | None:
    """The op names the shape formulas count (None: unknown, try every op)."""
    try:
        from gpuviz.analysis import op_args
    except ImportError:
        return None
    tables = ("GEMMS", "CONV_LEAVES", "CONV_BACKWARDS", "ATTENTION_LEAVES")
    if not all(hasattr(op_args, t) for t in tables):
        return None
    return frozenset(n for t in tables for n in getattr(op_args, t))
