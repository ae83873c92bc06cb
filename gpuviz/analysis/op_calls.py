"""The op calls a trace's FLOPs and bytes are counted at, each with its kernels and precision.

:func:`count_calls` picks the ops that may be counted (the FLOP ops of
:mod:`gpuviz.analysis.flops` and the byte ops: elementwise, norms, reductions, copies; never
their parents, :data:`gpuviz.analysis.op_args.COMPOSITE_OPS`), decodes their args in bulk,
counts each distinct (op, shapes, types, concrete inputs, flops) once, and gives each call the
device time of the kernels launched by runtime or driver calls on its thread inside its range.
The counted ops are innermost, so that is their device self time. :mod:`gpuviz.analysis.hardware`
turns the calls into roofline figures and MFU.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt

from gpuviz.analysis.dtypes import op_precision
from gpuviz.analysis.flops import (
    ConvHints,
    backward_shapes,
    composite_bytes,
    composite_flops,
    kineto_flops_bad,
    op_bytes,
    op_flops,
)
from gpuviz.analysis.names import name_mask
from gpuviz.analysis.node_args import decode_args
from gpuviz.analysis.op_args import (
    ATTENTION_LEAVES,
    COMPARISONS,
    COMPOSITE_OPS,
    CONV_BACKWARDS,
    CONV_LEAVES,
    ELEMENTWISE,
    ELEMENTWISE_FLOPS,
    FORMER_LEAVES,
    GEMMS,
    MAX_CALL_FLOPS,
    MAX_ELEMENTS,
    OLD_CONV_BACKWARDS,
    OLD_CONV_HALVES,
    REDUCTIONS,
    WRITE_ONLY,
    too_large,
)
from gpuviz.analysis.peaks import PeakMatch
from gpuviz.analysis.roofline import (
    achieved_tb_s,
    achieved_tflops,
    intensity,
    roof_share,
)
from gpuviz.trace.arrays import unique
from gpuviz.trace.model import Kind, Trace

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

FLOP_OPS = (
    frozenset(GEMMS)
    | frozenset(CONV_LEAVES)
    | CONV_BACKWARDS
    | frozenset(ATTENTION_LEAVES)
    | frozenset(OLD_CONV_HALVES)
    | FORMER_LEAVES
)
"""The ops that FLOPs are counted at (the former leaves only where no counted op runs inside
them: :func:`count_calls` drops a call that holds a FLOP call)."""


def counted_op(name: str) -> bool:
    """Whether :func:`op_flops` or :func:`op_bytes` may count an op of this name."""
    if name in FLOP_OPS:
        return True
    if name in COMPOSITE_OPS or not name.startswith("aten::"):
        return False
    base = name.removeprefix("aten::")
    base = base[:-1] if base.endswith("_") and not base.endswith("__") else base
    return (
        base == "copy"
        or base in ELEMENTWISE
        or base in COMPARISONS
        or base in WRITE_ONLY
        or (base in REDUCTIONS)
    )


def shape_key(name: str, dims: Any, types: Any) -> tuple[str, bytes, bytes]:
    return name, msgspec.json.encode(dims), msgspec.json.encode(types)


TF32_MARGIN = 1.05
"""How far above the fp32 peak an fp32 call must run to count as TF32
(:func:`gpuviz.analysis.roofline.tf32_if_faster`'s margin)."""

SHAPE_PROBE = 512
"""How many counted ops are looked at first, spread over the trace, for their shapes."""


@dataclass
class Calls:
    """The counted op calls of a trace (one entry per call).

    Attributes
    ----------
    rows : int64
        The op's slice row.
    group : int64
        Its (op, shapes, types) group, an index into the list :func:`count_calls` returns.
    flops, nbytes : float64
        NaN where not counted.
    device_ns : int64
        The device time of the kernels the call launched.
    lo, hi, sorted_gpu : int64
        The call's kernels are ``sorted_gpu[lo:hi]``.
    bad_flops : bool
        The trace gave the call a FLOP figure no call does (Kineto's ``flops`` past
        :data:`~gpuviz.analysis.op_args.MAX_CALL_FLOPS`): its ``flops`` is NaN, its row
        inconsistent.
    skipped : dict of str to int
        Calls left out, by reason (shapes past :data:`~gpuviz.analysis.op_args.MAX_ELEMENTS`),
        with their counts: the warnings the commands print.
    """

    rows: I64
    group: I64  # index into the groups
    flops: F64
    nbytes: F64
    device_ns: I64
    lo: I64  # the call's kernels: sorted_gpu[lo:hi]
    hi: I64
    sorted_gpu: I64
    bad_flops: npt.NDArray[np.bool_] | None = None
    skipped: dict[str, int] | None = None

    def warnings(self) -> list[str]:
        """One line per reason calls were skipped or flagged, with its count."""
        bad = int(self.bad_flops.sum()) if self.bad_flops is not None else 0
        return _warning_lines(self.skipped or {}, bad)


_SKIPPED = " op call(s) skipped: "
_BAD = (
    f" op call(s) with a recorded 'flops' past {MAX_CALL_FLOPS:.3g} "
    "(no real op does that many): their FLOPs are unknown, their rows inconsistent"
)


def _warning_lines(skipped: dict[str, int], bad: int) -> list[str]:
    """:meth:`Calls.warnings` of these counts."""
    out = [f"{n}{_SKIPPED}{why}" for why, n in skipped.items()]
    return [*out, f"{bad}{_BAD}"] if bad else out


def sum_call_warnings(per_rank: Sequence[Sequence[str]]) -> list[str] | None:
    """The :meth:`Calls.warnings` of a folder from those of its ranks' traces (each imported
    alone): each reason once, with the ranks' counts summed.

    Returns
    -------
    list of str or None
        None where the lines cannot be summed into the folder's: a line of another form, or
        calls skipped for two reasons or more (the folder lists them in the order its calls
        come, which the ranks' lines do not keep).
    """
    skipped: dict[str, int] = {}
    bad = 0
    for lines in per_rank:
        for line in lines:
            n, _, rest = line.partition(" ")
            if not n.isdigit():
                return None
            if rest == _BAD[1:]:
                bad += int(n)
            elif rest.startswith(_SKIPPED[1:]):
                why = rest[len(_SKIPPED) - 1 :]
                skipped[why] = skipped.get(why, 0) + int(n)
            else:
                return None
    return None if len(skipped) > 1 else _warning_lines(skipped, bad)


def candidate_rows(trace: Trace) -> I64:
    """The slice rows of the ops :func:`count_calls` may count (by name, with args), in
    order: those it reads the shapes of."""
    s = trace.slices
    counted = name_mask(trace.symbols, counted_op)
    rows = np.flatnonzero((s.kind == Kind.CPU_OP) & (s.args >= 0))
    return rows[counted[s.name[rows]]] if len(counted) else rows[:0]


def count_calls(trace: Trace) -> tuple[Calls, list[tuple[str, Any, Any]]]:
    """Decode the counted ops' args, count each call, and find each call's kernels.

    Returns
    -------
    calls : Calls
        The calls with a FLOP or byte count (those without shapes are left out).
    groups : list of (name, input dims, input types)
        What ``calls.group`` indexes.
    """
    s = trace.slices
    rows = candidate_rows(trace)
    if len(rows) > SHAPE_PROBE:
        # A trace recorded without shapes has none on any op: its first and last ops say so
        # (decoding all of a 300k-kernel trace's ops took 0.46 s of a 0.7 s cached `gpuviz
        # summary`, for nothing). Two runs of rows: args are decoded a span of rows at a time.
        half = SHAPE_PROBE // 2
        if not any(
            any(decode_args(trace, probe, ("input_dims",)).input_dims)
            for probe in (rows[:half], rows[-half:])
        ):
            rows = rows[:0]
    groups: dict[tuple[str, bytes, bytes], int] = {}
    described: list[tuple[str, Any, Any]] = []
    group = np.full(len(rows), -1, dtype=np.int64)
    flops = np.full(len(rows), np.nan)
    nbytes = np.full(len(rows), np.nan)
    bad = np.zeros(len(rows), dtype=bool)
    args = decode_args(trace, rows, ("input_dims", "input_types", "concrete_inputs", "flops"))
    # Calls of one op and shapes differ only in their concrete inputs (stride, is_causal) and
    # Kineto's flops: count each distinct raw text once.
    memo: dict[tuple[int, bytes, bytes, bytes, float], tuple[float, float, int, bool]] = {}
    names = trace.symbols.strings
    name_ids = s.name[rows].tolist()
    hints = _conv_hints(names, name_ids, args.input_dims)
    own_weight = _parents_weights(trace, rows, names, name_ids, args.input_dims)
    skipped: dict[str, int] = {}
    for i, (nid, raw_d, raw_t, raw_c, kf) in enumerate(
        zip(
            name_ids,
            args.input_dims,
            args.input_types,
            args.concrete_inputs,
            args.flops.tolist(),
        )
    ):
        if not raw_d:
            continue  # recorded without shapes: nothing to count
        mkey = (nid, raw_d, raw_t, raw_c, -1.0 if kf != kf else kf)  # NaN never equals itself
        weight = own_weight.get(i)
        got = memo.get(mkey) if weight is None else None
        if got is None:
            mine = hints if weight is None else weight
            got = _count(names[nid], raw_d, raw_t, raw_c, kf, groups, described, mine)
            if weight is None:
                memo[mkey] = got
        flops[i], nbytes[i], group[i], bad[i] = got
        if group[i] == -2:
            why = f"a shape past {MAX_ELEMENTS} elements (no real tensor: bad shapes)"
            skipped[why] = skipped.get(why, 0) + 1
    keep = group >= 0
    rows, group, flops, nbytes, bad = rows[keep], group[keep], flops[keep], nbytes[keep], bad[keep]
    parent = _counted_parents(trace, rows)
    # Counted once, at the innermost op (flops.py, rule 2): a call that holds a counted call is
    # dropped (zero_ around fill_, a wrapper around mm), but a FLOP op keeps its byte-only
    # helpers (the fill_ inside an attention backward) and its elementwise ones (the bias
    # aten::add of a torch 1.x convolution: other work, not the same work again) beside it.
    has_child = np.zeros(len(rows), dtype=bool)
    flop_child = np.zeros(len(rows), dtype=bool)
    inner = parent >= 0
    elementwise = np.isin(s.name[rows], _ids(trace, ELEMENTWISE_FLOPS))
    has_child[parent[inner]] = True
    flop_child[parent[inner & (np.isfinite(flops) | bad) & ~elementwise]] = True
    drop = has_child & (flop_child | ~(np.isfinite(flops) | bad))
    keep = ~drop
    rows, group, flops, nbytes, bad = rows[keep], group[keep], flops[keep], nbytes[keep], bad[keep]
    used, group = np.unique(group, return_inverse=True)
    described = [described[int(g)] for g in used]
    group = group.reshape(-1).astype(np.int64)
    device_ns, lo, hi, sorted_gpu = _kernels_in(trace, rows, _counted_parents(trace, rows))
    calls = Calls(rows, group, flops, nbytes, device_ns, lo, hi, sorted_gpu, bad, skipped)
    return calls, described


def _parents_weights(
    trace: Trace, rows: I64, names: list[str], name_ids: list[int], raw_dims: list[bytes]
) -> dict[int, ConvHints]:
    """For each torch 1.x weight-gradient half (``cudnn_convolution_backward_weight``), the
    weight shape its parent backward recorded, as hints of its own: a 1×1 and a 3×3
    convolution of one input and output shape are told apart only so."""
    halves = {i for i, n in enumerate(names) if OLD_CONV_HALVES.get(n) == "weight"}
    parents = {i for i, n in enumerate(names) if n in OLD_CONV_BACKWARDS}
    if not halves or not parents:
        return {}
    sub = np.asarray(
        [i for i, n in enumerate(name_ids) if n in halves or n in parents], dtype=np.int64
    )
    up = _counted_parents(trace, rows[sub])
    out: dict[int, ConvHints] = {}
    for k, i in enumerate(sub.tolist()):
        p = int(up[k])
        if name_ids[i] not in halves or p < 0 or name_ids[int(sub[p])] not in parents:
            continue
        parent_dims, dims = _decode(raw_dims[int(sub[p])]), _decode(raw_dims[i])
        got = backward_shapes(names[name_ids[int(sub[p])]], parent_dims or [])
        if got is None or not isinstance(dims, list) or len(dims) < 3:
            continue
        hints = ConvHints()
        hints.add(*got)
        out[i] = hints
    return out


def _ids(trace: Trace, names: frozenset[str]) -> list[int]:
    return [i for i in (trace.symbols.find(n) for n in names) if i >= 0]


def _conv_hints(names: list[str], name_ids: list[int], raw_dims: list[bytes]) -> ConvHints:
    """What the trace's convolution backwards say of their forwards (for traces without
    ``Concrete Inputs``: :class:`~gpuviz.analysis.flops.ConvHints`)."""
    hints = ConvHints()
    wanted = [i for i, n in enumerate(names) if n in CONV_BACKWARDS or n in OLD_CONV_BACKWARDS]
    if not wanted:
        return hints
    ids = np.asarray(name_ids, dtype=np.int64)
    seen: set[tuple[int, bytes]] = set()
    for k in np.flatnonzero(np.isin(ids, wanted)).tolist():
        nid, raw = name_ids[k], raw_dims[k]
        if not raw or (nid, raw) in seen:
            continue
        seen.add((nid, raw))
        dims = _decode(raw)
        got = backward_shapes(names[nid], dims) if isinstance(dims, list) else None
        if got is not None:
            hints.add(*got)
    return hints


def _counted_parents(trace: Trace, rows: I64) -> I64:
    """For each call, the innermost other call of ``rows`` on its thread whose range holds it
    (-1 for none)."""
    s = trace.slices
    start = s.start_ns[rows].astype(np.int64)
    end = start + s.dur_ns[rows].astype(np.int64)
    track = s.track[rows].astype(np.int64)
    order = np.lexsort((-end, start, track))  # parents before their children
    parent = np.full(len(rows), -1, dtype=np.int64)
    stack: list[int] = []
    last_track = -1
    for i in order.tolist():
        if track[i] != last_track:
            stack, last_track = [], int(track[i])
        while stack and end[stack[-1]] <= start[i]:
            stack.pop()
        if stack and end[i] <= end[stack[-1]]:
            parent[i] = stack[-1]
        stack.append(i)
    return parent


def _count(
    name: str,
    raw_dims: bytes,
    raw_types: bytes,
    raw_concrete: bytes,
    kineto_flops: float,
    groups: dict[tuple[str, bytes, bytes], int],
    described: list[tuple[str, Any, Any]],
    hints: ConvHints | None = None,
) -> tuple[float, float, int, bool]:
    """FLOPs, bytes and group of one distinct call (group -1: nothing counted; -2: skipped,
    a shape no real tensor has), and whether its recorded FLOPs are impossible."""
    dims, types, concrete = (_decode(raw_dims), _decode(raw_types), _decode(raw_concrete))
    dims = dims if isinstance(dims, list) else []
    types = types if isinstance(types, list) else []
    if too_large(dims):  # 10**200 elements: the products below would overflow a float
        return np.nan, np.nan, -2, False
    args = {"Concrete Inputs": concrete, "flops": None if np.isnan(kineto_flops) else kineto_flops}
    bad = kineto_flops_bad(args)
    if name in FORMER_LEAVES:  # older torch's kernels ran here; dropped if a leaf is inside
        f, b = composite_flops(name, dims, args, hints), composite_bytes(name, dims, types)
    else:
        f, b = op_flops(name, dims, types, args, hints), op_bytes(name, dims, types, args)
    if bad:
        f = None  # not the formula's either: the op's record is not to be trusted
    elif f is not None and f > MAX_CALL_FLOPS:
        f, bad = None, True
    if f is None and b is None and not bad:
        return np.nan, np.nan, -1, False
    key = shape_key(name, dims, types)
    g = groups.get(key)
    if g is None:
        g = groups[key] = len(described)
        described.append((name, dims, types))
    return (np.nan if f is None else float(f)), (np.nan if b is None else float(b)), g, bad


def _decode(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return msgspec.json.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return None


def _kernels_in(trace: Trace, rows: I64, parent: I64) -> tuple[I64, I64, I64, I64]:
    """For op rows: the device time of the GPU work launched on their thread inside their range
    and in none of their counted children (``parent``), and where those kernels lie in the
    returned order of GPU rows (``sorted[lo:hi]``)."""
    s = trace.slices
    if not len(rows):  # nothing counted (no shapes): no need to order every kernel
        none = np.zeros(0, dtype=np.int64)
        return none, none, none, none
    gpu = np.flatnonzero(trace.gpu_activity_mask())
    launch = trace.launches_of(gpu) if len(gpu) else np.zeros(0, dtype=np.int64)
    ok = launch >= 0
    gpu, launch = gpu[ok], launch[ok]
    order = np.lexsort((s.start_ns[launch], s.track[launch]))
    gpu, launch = gpu[order], launch[order]
    l_track, l_start = s.track[launch].astype(np.int64), s.start_ns[launch].astype(np.int64)
    # Each launch to the call that started last before it on its thread, then up its counted
    # parents until one holds it: the innermost counted call around the launch.
    end = (s.start_ns[rows] + s.dur_ns[rows]).astype(np.int64)
    r_order = np.lexsort((-end, s.start_ns[rows], s.track[rows]))  # a child after its parent
    r_track = s.track[rows[r_order]].astype(np.int64)
    r_start = s.start_ns[rows[r_order]].astype(np.int64)
    owner = np.full(len(gpu), -1, dtype=np.int64)
    for tr in unique(r_track).tolist():
        a, b = np.searchsorted(l_track, [tr, tr + 1])
        c, d = np.searchsorted(r_track, [tr, tr + 1])
        pos = np.searchsorted(r_start[c:d], l_start[a:b], side="right") - 1
        owner[a:b] = np.where(pos >= 0, r_order[c + np.maximum(pos, 0)], -1)
    for _ in range(64):  # nesting depth; counted ops nest a level or two
        out = owner >= 0
        out[out] = end[owner[out]] <= l_start[out]
        if not out.any():
            break
        owner[out] = parent[owner[out]]
    mine = owner >= 0
    gpu, owner = gpu[mine], owner[mine]
    by = np.argsort(owner, kind="stable")
    gpu, owner = gpu[by], owner[by]
    cum = np.concatenate([[0], np.cumsum(s.dur_ns[gpu].astype(np.int64))])
    lo = np.searchsorted(owner, np.arange(len(rows)), side="left")
    hi = np.searchsorted(owner, np.arange(len(rows)), side="right")
    return (cum[hi] - cum[lo]).astype(np.int64), lo, hi, gpu


def members(group: I64, n: int) -> list[I64]:
    """The call indices of each of ``n`` groups (one sort, not a pass per group)."""
    order = np.argsort(group, kind="stable")
    bounds = np.searchsorted(group[order], np.arange(n + 1))
    return [order[bounds[j] : bounds[j + 1]] for j in range(n)]


def call_precisions(
    trace: Trace, calls: Calls, described: list[tuple[str, Any, Any]], match: PeakMatch
) -> npt.NDArray[np.object_]:
    """Each call's precision class: from its types (and its group's kernel names: ``tf32`` in
    a cuBLAS name); an fp32 call that ran faster than the fp32 peak is TF32 (calls of one
    shape may differ: ``torch.backends.cuda.matmul.allow_tf32`` can change between them)."""
    s = trace.slices
    out = np.empty(len(calls.rows), dtype=object)
    fp32_peak = match.peaks.fp32_tflops if match.peaks is not None else None
    if match.peaks is not None and not match.peaks.tf32_tflops:
        fp32_peak = None  # no TF32 units (V100): a fast fp32 call is not TF32 (Winograd is)
    groups = members(calls.group, len(described))
    # Whether any of a call's kernels says tf32 in its name (op_precision's rule), for every
    # call at once: a name lookup per call cost 0.3 s of ResNet-50's 0.6 s.
    tf32_name = name_mask(trace.symbols, lambda n: "tf32" in n.lower())
    flagged = (
        tf32_name[s.name[calls.sorted_gpu]].astype(np.int64)
        if len(calls.sorted_gpu) and len(tf32_name)
        else np.zeros(len(calls.sorted_gpu), dtype=np.int64)
    )
    cum = np.concatenate([[0], np.cumsum(flagged)])
    has_tf32 = (cum[calls.hi] - cum[calls.lo]) > 0 if len(calls.rows) else np.zeros(0, bool)
    for j, (_name, _dims, types) in enumerate(described):
        mine = groups[j]
        base = op_precision(types)
        out[mine] = base
        if base != "fp32":
            continue
        tf32 = has_tf32[mine]
        if fp32_peak is not None:  # tf32_if_faster, for the group at once
            tflops = achieved_tflops(calls.flops[mine], calls.device_ns[mine])
            tf32 |= np.isfinite(tflops) & (tflops > fp32_peak * TF32_MARGIN)
        out[mine[tf32]] = "tf32"
    return out


def split_by_precision(
    calls: Calls, described: list[tuple[str, Any, Any]], precision: npt.NDArray[np.object_]
) -> list[tuple[str, Any, Any]]:
    """One group per op, shapes, types *and* precision (fp32 and TF32 calls of one GEMM shape
    have different roofs); regroups ``calls.group`` in place and returns the groups."""
    ids: dict[tuple[int, str], int] = {}
    out: list[tuple[str, Any, Any]] = []
    group = np.zeros(len(calls.group), dtype=np.int64)
    for i, (g, p) in enumerate(zip(calls.group.tolist(), precision.tolist())):
        j = ids.get((g, p))
        if j is None:
            j = ids[(g, p)] = len(out)
            out.append(described[g])
        group[i] = j
    calls.group = group
    return out


def call_shares(calls: Calls, precision: npt.NDArray[np.object_], match: PeakMatch) -> F64:
    """Each call's share of its roof (see :func:`_roof`), NaN where unknown."""
    out = np.full(len(calls.rows), np.nan)
    peaks = match.peaks
    if peaks is None or not peaks.bandwidth_tb_s or len(out) == 0:
        return out
    bw = peaks.bandwidth_tb_s
    # A known 0 (a compiled kernel of casts) is memory-bound, as a call with no formula is.
    flops_known = np.isfinite(calls.flops) & (calls.flops > 0)
    bytes_only = ~flops_known & np.isfinite(calls.nbytes)
    with np.errstate(over="ignore"):  # absurd bytes from a file: inf, made NaN just below
        out[bytes_only] = achieved_tb_s(calls.nbytes[bytes_only], calls.device_ns[bytes_only]) / bw
    out[np.isinf(out)] = np.nan
    both = np.flatnonzero(flops_known & np.isfinite(calls.nbytes))
    got = achieved_tflops(calls.flops[both], calls.device_ns[both])
    ints = intensity(calls.flops[both], calls.nbytes[both])
    for p in set(precision[both].tolist()):
        peak = peaks.tflops(p)
        if peak:
            sel = precision[both] == p
            out[both[sel]] = roof_share(got[sel], ints[sel], peak, bw)
    return out
