"""How close to the hardware a trace ran: roofline figures per op and shape, and MFU per step.

:func:`hardware` reads a trace's ops that do counted work (GEMMs, convolutions, attention:
FLOPs; elementwise, norm, reduction and copy ops: bytes; see :mod:`gpuviz.analysis.flops`)
and gives

- per op and input shapes (:class:`OpShape`): calls, FLOPs, bytes, device time, achieved
  TFLOP/s, arithmetic intensity, the bound and the share of the roof reached, against the
  device's peaks (:mod:`gpuviz.analysis.peaks`) for the op's precision;
- per step (:class:`StepFigures`): the FLOPs of the ops that started in the step's CPU range
  and the MFU, ``flops / (window × the dense peak of the precision doing most of them)``.

The CLI (``breakdown``, ``summary``), the advisor (``low_mfu``, ``memory_bound_hot``) and the
app's Roofline view all read this one function.

An op's device time is that of the kernels launched by runtime or driver calls on its thread
inside its range. The ops counted here are the innermost ones that do the work (their parents
are :data:`gpuviz.analysis.op_args.COMPOSITE_OPS`, counted nowhere), so that is their device
*self* time, as ``key_averages`` defines it, up to the odd fill kernel of an uncounted child.

Ops with bytes but no FLOP count (elementwise, norms, copies) are memory-bound by definition:
their ``bound`` is ``"memory"``, their ``roof_share`` the achieved bandwidth over the device's,
and their intensity and TFLOP/s are None.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np
import numpy.typing as npt

from gpuviz.analysis.dtypes import op_precision
from gpuviz.analysis.flops import op_bytes, op_flops
from gpuviz.analysis.names import name_mask
from gpuviz.analysis.node_args import decode_args
from gpuviz.analysis.op_args import (
    ATTENTION_LEAVES,
    COMPARISONS,
    COMPOSITE_OPS,
    CONV_BACKWARDS,
    CONV_LEAVES,
    ELEMENTWISE,
    GEMMS,
    REDUCTIONS,
    WRITE_ONLY,
)
from gpuviz.analysis.peaks import PeakMatch, PeakOverride, device_peaks
from gpuviz.analysis.roofline import (
    achieved_tb_s,
    achieved_tflops,
    bound,
    flops_by_precision,
    intensity,
    mfu,
    roof_share,
    tf32_if_faster,
)
from gpuviz.analysis.steps import Steps, find_steps
from gpuviz.trace.model import Kind, Trace

if TYPE_CHECKING:
    from gpuviz.analysis.breakdown_table import Breakdown

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

FLOP_OPS = frozenset(GEMMS) | frozenset(CONV_LEAVES) | CONV_BACKWARDS | frozenset(ATTENTION_LEAVES)
"""The ops that FLOPs are counted at."""


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


@dataclass
class OpShape:
    """One op name with one set of input shapes and types: its roofline figures.

    Attributes
    ----------
    name : str
        The op (``aten::mm``).
    input_dims, input_types : list
        Kineto's ``Input Dims`` and ``Input type``.
    calls : int
    flops, nbytes : float or None
        Summed over the calls; None where not counted (bytes are a lower bound).
    device_ns : int
        The device time of the kernels the calls launched.
    precision : str
        The class the op computes in (``bf16``, ``tf32``...; ``tf32`` also for an fp32 GEMM
        that ran faster than the fp32 peak).
    tflops, tb_s, intensity, roof_share : float or None
        Achieved TFLOP/s and TB/s, FLOP per byte, achieved over the roof at that intensity.
    bound : str or None
        ``"compute"`` or ``"memory"``; None where neither FLOPs nor bytes are known.
    kernels : int64
        The slice rows of the kernels, copies and sets the calls launched.
    """

    name: str
    input_dims: Any
    input_types: Any
    calls: int
    flops: float | None
    nbytes: float | None
    device_ns: int
    precision: str
    tflops: float | None = None
    tb_s: float | None = None
    intensity: float | None = None
    bound: str | None = None
    roof_share: float | None = None
    kernels: I64 = field(default_factory=lambda: np.zeros(0, dtype=np.int64), repr=False)

    @property
    def label(self) -> str:
        """``aten::mm [[8192, 8192], [8192, 8192]] bf16``: what a person reads."""
        return f"{self.name} {self.input_dims} {self.precision}"

    def columns(self) -> dict[str, Any]:
        """The columns ``breakdown --by op-shape`` gains (``flops``, ``bytes``, ``tflops``,
        ``intensity``, ``bound``, ``roof_share``, ``precision``)."""
        return {
            "flops": _int_or_none(self.flops),
            "bytes": _int_or_none(self.nbytes),
            "tflops": _round(self.tflops, 3),
            "intensity": _round(self.intensity, 3),
            "bound": self.bound,
            "roof_share": _round(self.roof_share, 4),
            "precision": self.precision,
        }


@dataclass
class StepFigures:
    """One step's FLOPs and MFU.

    Attributes
    ----------
    rank : int or None
    step : int
    label : str
    duration_ns : int
        The step's window.
    flops : float
        The FLOPs of the ops that started in its CPU range.
    precision : str or None
        The precision doing most of them.
    peak_tflops : float or None
        That precision's dense peak on the rank's device.
    mfu : float or None
    """

    rank: int | None
    step: int
    label: str
    duration_ns: int
    flops: float
    precision: str | None
    peak_tflops: float | None
    mfu: float | None

    def to_json(self) -> dict[str, Any]:
        """``{rank, step, label, duration_us, flops, precision, peak_tflops, mfu}``."""
        return {
            "rank": self.rank,
            "step": self.step,
            "label": self.label,
            "duration_us": round(self.duration_ns / 1000.0, 3),
            "flops": int(self.flops),
            "precision": self.precision,
            "peak_tflops": self.peak_tflops,
            "mfu": _round(self.mfu, 5),
        }


@dataclass
class OpCalls:
    """Every counted op call (one entry per call), for rules that look at steps one by one.

    Attributes
    ----------
    rows : int64
        The op's slice row.
    shape : int64
        Its entry in :attr:`Hardware.shapes`.
    flops : float64
        NaN where not counted.
    device_ns : int64
        The device time of the kernels it launched.
    precision : ndarray of str
    rank : int64
        The rank's code (-1 for a lone file).
    start_ns : int64
        The op's CPU start (a step holds the calls that start in its CPU range).
    roof_share : float64
        The call's achieved figure over its roof, as :attr:`OpShape.roof_share` (for its own
        precision: calls of one shape may run fp32 and TF32); NaN where unknown.
    """

    rows: I64
    shape: I64
    flops: F64
    device_ns: I64
    precision: npt.NDArray[np.object_]
    rank: I64
    start_ns: I64
    roof_share: F64 = field(default_factory=lambda: np.zeros(0))
    _sorted: tuple[I64, I64, I64] | None = field(default=None, init=False, repr=False)

    @classmethod
    def empty(cls) -> OpCalls:
        """No calls."""
        z = np.zeros(0, dtype=np.int64)
        return cls(z, z, np.zeros(0), z, np.zeros(0, dtype=object), z, z, np.zeros(0))

    def in_step(self, steps: Steps, i: int) -> I64:
        """The indices of the calls that started in step ``i``'s CPU range on its rank."""
        if self._sorted is None:
            order = np.lexsort((self.start_ns, self.rank))
            self._sorted = (order, self.rank[order], self.start_ns[order])
        order, rank, start = self._sorted
        r = int(steps.rank[i])
        a, b = np.searchsorted(rank, [r, r + 1])
        lo, hi = a + np.searchsorted(start[a:b], [steps.cpu_start_ns[i], steps.cpu_end_ns[i]])
        return np.sort(order[lo:hi])


@dataclass
class Hardware:
    """A trace's roofline figures and MFU.

    Attributes
    ----------
    peaks : PeakMatch
        The device's peaks (of the first rank), or why there are none.
    shapes : list of OpShape
        Largest device time first.
    steps : list of StepFigures
        In the order of :func:`gpuviz.analysis.steps.find_steps`.
    calls : OpCalls
        Every counted call.
    """

    peaks: PeakMatch
    shapes: list[OpShape]
    steps: list[StepFigures]
    calls: OpCalls = field(default_factory=OpCalls.empty)
    _by_key: dict[tuple[str, bytes, bytes], list[OpShape]] | None = field(
        default=None, init=False, repr=False
    )
    _by_dims: dict[tuple[str, bytes], list[OpShape]] | None = field(
        default=None, init=False, repr=False
    )

    def shape(
        self, name: str, input_dims: Any, input_types: Any, precision: str | None = None
    ) -> OpShape | None:
        """The figures of one op, shapes and types (of one precision, or all of them merged:
        fp32 and TF32 calls of a shape are rows of their own), or None."""
        if self._by_key is None:
            self._by_key = {}
            for s in self.shapes:
                self._by_key.setdefault(_key(s.name, s.input_dims, s.input_types), []).append(s)
        found = self._by_key.get(_key(name, input_dims, input_types), [])
        if precision is not None:
            found = [s for s in found if s.precision == precision]
        return self._merge(found)

    def by_dims(self, name: str, input_dims: Any) -> OpShape | None:
        """The figures of one op and shapes over all its input types (``breakdown --by
        op-shape`` groups rows as ``key_averages(group_by_input_shape=True)``: by dims only),
        or None when no call of them was counted."""
        if self._by_dims is None:
            self._by_dims = {}
            for s in self.shapes:
                key = (s.name, msgspec.json.encode(s.input_dims))
                self._by_dims.setdefault(key, []).append(s)
        return self._merge(self._by_dims.get((name, msgspec.json.encode(input_dims)), []))

    def _merge(self, found: list[OpShape]) -> OpShape | None:
        """One row for several (the sums; the precision doing most of the FLOPs)."""
        if len(found) <= 1:
            return found[0] if found else None
        flops = [s.flops for s in found if s.flops is not None]
        nbytes = [s.nbytes for s in found if s.nbytes is not None]
        by: dict[str, float] = {}
        for s in found:
            by[s.precision] = by.get(s.precision, 0.0) + (s.flops or 0.0)
        row = OpShape(
            found[0].name,
            found[0].input_dims,
            found[0].input_types,
            sum(s.calls for s in found),
            float(sum(flops)) if flops else None,
            float(sum(nbytes)) if nbytes else None,
            sum(s.device_ns for s in found),
            max(by, key=lambda k: by[k]),
        )
        row.kernels = np.concatenate([s.kernels for s in found])
        return _fill(row, self.peaks.peaks)

    def peak_json(self) -> dict[str, Any]:
        """``{device, label, source, reason, tflops: {precision: peak}, bandwidth_tb_s}``."""
        p = self.peaks.peaks
        return {
            "device": self.peaks.device_name or None,
            "label": p.label if p else None,
            "source": p.source if p else None,
            "reason": self.peaks.reason,
            "tflops": (
                {k: p.tflops(k) for k in ("fp32", "tf32", "bf16", "fp16", "fp8")} if p else None
            ),
            "bandwidth_tb_s": p.bandwidth_tb_s if p else None,
        }

    def mfu_json(self) -> dict[str, Any]:
        """``summary --json``'s ``"mfu"``: ``{"peak": {...}, "steps": [...]}``."""
        return {"peak": self.peak_json(), "steps": [s.to_json() for s in self.steps]}


def _round(x: float | None, digits: int) -> float | None:
    return None if x is None or not math.isfinite(x) else round(float(x), digits)


def _int_or_none(x: float | None) -> int | None:
    return None if x is None or not math.isfinite(x) else int(x)


def _key(name: str, dims: Any, types: Any) -> tuple[str, bytes, bytes]:
    return name, msgspec.json.encode(dims), msgspec.json.encode(types)


@dataclass
class _Calls:
    """The counted op calls of a trace (one entry per call)."""

    rows: I64
    group: I64  # index into the groups
    flops: F64
    nbytes: F64
    device_ns: I64
    lo: I64  # the call's kernels: sorted_gpu[lo:hi]
    hi: I64
    sorted_gpu: I64


def _op_calls(trace: Trace) -> tuple[_Calls, list[tuple[str, Any, Any]]]:
    """Decode the counted ops' args, count each call, and find each call's kernels."""
    s = trace.slices
    counted = name_mask(trace.symbols, counted_op)
    rows = np.flatnonzero((s.kind == Kind.CPU_OP) & (s.args >= 0))
    rows = rows[counted[s.name[rows]]] if len(counted) else rows[:0]
    groups: dict[tuple[str, bytes, bytes], int] = {}
    described: list[tuple[str, Any, Any]] = []
    group = np.full(len(rows), -1, dtype=np.int64)
    flops = np.full(len(rows), np.nan)
    nbytes = np.full(len(rows), np.nan)
    args = decode_args(trace, rows, ("input_dims", "input_types", "concrete_inputs", "flops"))
    # Calls of one op and shapes differ only in their concrete inputs (stride, is_causal) and
    # Kineto's flops: count each distinct raw text once.
    memo: dict[tuple[int, bytes, bytes, bytes, float], tuple[float, float, int]] = {}
    names = trace.symbols.strings
    name_ids = s.name[rows].tolist()
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
        got = memo.get(mkey)
        if got is None:
            got = memo[mkey] = _count(names[nid], raw_d, raw_t, raw_c, kf, groups, described)
        flops[i], nbytes[i], group[i] = got
    keep = group >= 0
    rows, group, flops, nbytes = rows[keep], group[keep], flops[keep], nbytes[keep]
    device_ns, lo, hi, sorted_gpu = _kernels_in(trace, rows)
    return _Calls(rows, group, flops, nbytes, device_ns, lo, hi, sorted_gpu), described


def _count(
    name: str,
    raw_dims: bytes,
    raw_types: bytes,
    raw_concrete: bytes,
    kineto_flops: float,
    groups: dict[tuple[str, bytes, bytes], int],
    described: list[tuple[str, Any, Any]],
) -> tuple[float, float, int]:
    """FLOPs, bytes and group of one distinct call (group -1: nothing counted)."""
    dims, types, concrete = (_decode(raw_dims), _decode(raw_types), _decode(raw_concrete))
    dims = dims if isinstance(dims, list) else []
    types = types if isinstance(types, list) else []
    args = {"Concrete Inputs": concrete, "flops": None if np.isnan(kineto_flops) else kineto_flops}
    f = op_flops(name, dims, types, args)
    b = op_bytes(name, dims, types, args)
    if f is None and b is None:
        return np.nan, np.nan, -1
    key = _key(name, dims, types)
    g = groups.get(key)
    if g is None:
        g = groups[key] = len(described)
        described.append((name, dims, types))
    return (np.nan if f is None else float(f)), (np.nan if b is None else float(b)), g


def _decode(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return msgspec.json.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return None


def _kernels_in(trace: Trace, rows: I64) -> tuple[I64, I64, I64, I64]:
    """For op rows: the device time of the GPU work launched on their thread inside their range,
    and where those kernels lie in the returned order of GPU rows (``sorted[lo:hi]``)."""
    s = trace.slices
    gpu = np.flatnonzero(trace.gpu_activity_mask())
    launch = trace.launches_of(gpu) if len(gpu) else np.zeros(0, dtype=np.int64)
    ok = launch >= 0
    gpu, launch = gpu[ok], launch[ok]
    order = np.lexsort((s.start_ns[launch], s.track[launch]))
    gpu, launch = gpu[order], launch[order]
    l_track, l_start = s.track[launch].astype(np.int64), s.start_ns[launch]
    cum = np.concatenate([[0], np.cumsum(s.dur_ns[gpu].astype(np.int64))])
    lo = np.zeros(len(rows), dtype=np.int64)
    hi = np.zeros(len(rows), dtype=np.int64)
    tracks = s.track[rows].astype(np.int64)
    for t in np.unique(tracks).tolist():
        mine = np.flatnonzero(tracks == t)
        a, b = np.searchsorted(l_track, [t, t + 1])
        starts = s.start_ns[rows[mine]]
        lo[mine] = a + np.searchsorted(l_start[a:b], starts, side="left")
        hi[mine] = a + np.searchsorted(l_start[a:b], starts + s.dur_ns[rows[mine]], side="left")
    return (cum[hi] - cum[lo]).astype(np.int64), lo, hi, gpu


def _shapes(
    calls: _Calls,
    described: list[tuple[str, Any, Any]],
    precision_of: npt.NDArray[np.object_],
    match: PeakMatch,
) -> list[OpShape]:
    n = len(described)
    g = calls.group
    count = np.bincount(g, minlength=n)
    have_f = np.bincount(g, weights=np.isfinite(calls.flops), minlength=n) > 0
    have_b = np.bincount(g, weights=np.isfinite(calls.nbytes), minlength=n) > 0
    flops = np.bincount(g, weights=np.nan_to_num(calls.flops), minlength=n)
    nbytes = np.bincount(g, weights=np.nan_to_num(calls.nbytes), minlength=n)
    dev = np.bincount(g, weights=calls.device_ns, minlength=n)
    peaks = match.peaks
    out = []
    members = _members(g, n)
    for j, (name, dims, types) in enumerate(described):
        mine = members[j]
        kernels = (
            np.concatenate([calls.sorted_gpu[a:b] for a, b in zip(calls.lo[mine], calls.hi[mine])])
            if len(mine)
            else np.zeros(0, dtype=np.int64)
        )
        f = float(flops[j]) if have_f[j] else None
        b = float(nbytes[j]) if have_b[j] else None
        precision = _majority(precision_of[mine], calls.flops[mine])
        row = OpShape(name, dims, types, int(count[j]), f, b, int(dev[j]), precision)
        row.kernels = kernels
        out.append(_fill(row, peaks))
    return out


def _members(group: I64, n: int) -> list[I64]:
    """The call indices of each of ``n`` groups (one sort, not a pass per group)."""
    order = np.argsort(group, kind="stable")
    bounds = np.searchsorted(group[order], np.arange(n + 1))
    return [order[bounds[j] : bounds[j + 1]] for j in range(n)]


def _fill(row: OpShape, peaks: Any) -> OpShape:
    """Achieved figures, intensity, bound and roof share from the row's sums."""
    f, b, t = row.flops, row.nbytes, row.device_ns
    row.tflops = _finite(achieved_tflops(f, t)) if f is not None else None
    row.tb_s = _finite(achieved_tb_s(b, t)) if b is not None else None
    row.intensity = _finite(intensity(f, b)) if f is not None and b is not None else None
    _roof(row, peaks)
    return row


def _call_precisions(
    trace: Trace, calls: _Calls, described: list[tuple[str, Any, Any]], match: PeakMatch
) -> npt.NDArray[np.object_]:
    """Each call's precision class: from its types (and its group's kernel names: ``tf32`` in
    a cuBLAS name); an fp32 call that ran faster than the fp32 peak is TF32 (calls of one
    shape may differ: ``torch.backends.cuda.matmul.allow_tf32`` can change between them)."""
    s = trace.slices
    out = np.empty(len(calls.rows), dtype=object)
    fp32_peak = match.peaks.fp32_tflops if match.peaks is not None else None
    members = _members(calls.group, len(described))
    for j, (_name, _dims, types) in enumerate(described):
        mine = members[j]
        base = op_precision(types)
        out[mine] = base
        if base != "fp32":
            continue
        tflops = achieved_tflops(calls.flops[mine], calls.device_ns[mine])
        for i, v in zip(mine.tolist(), tflops.tolist()):
            kernels = calls.sorted_gpu[calls.lo[i] : calls.hi[i]]
            p = op_precision(types, trace.symbols.lookup(np.unique(s.name[kernels])))
            out[i] = tf32_if_faster(p, v, fp32_peak) if fp32_peak is not None else p
    return out


def _split_by_precision(
    calls: _Calls, described: list[tuple[str, Any, Any]], precision: npt.NDArray[np.object_]
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


def _call_shares(calls: _Calls, precision: npt.NDArray[np.object_], match: PeakMatch) -> F64:
    """Each call's share of its roof (see :func:`_roof`), NaN where unknown."""
    out = np.full(len(calls.rows), np.nan)
    peaks = match.peaks
    if peaks is None or not peaks.bandwidth_tb_s or len(out) == 0:
        return out
    bw = peaks.bandwidth_tb_s
    flops_known = np.isfinite(calls.flops)
    bytes_only = ~flops_known & np.isfinite(calls.nbytes)
    out[bytes_only] = achieved_tb_s(calls.nbytes[bytes_only], calls.device_ns[bytes_only]) / bw
    both = np.flatnonzero(flops_known & np.isfinite(calls.nbytes))
    got = achieved_tflops(calls.flops[both], calls.device_ns[both])
    ints = intensity(calls.flops[both], calls.nbytes[both])
    for p in set(precision[both].tolist()):
        peak = peaks.tflops(p)
        if peak:
            sel = precision[both] == p
            out[both[sel]] = roof_share(got[sel], ints[sel], peak, bw)
    return out


def _majority(precisions: npt.NDArray[np.object_], flops: F64) -> str:
    """The precision doing most of the FLOPs of some calls (the first call's when none)."""
    if len(precisions) == 0:
        return "other"
    ok = np.isfinite(flops)
    by = flops_by_precision(flops[ok], precisions[ok]) if ok.any() else {}
    return max(by, key=lambda k: by[k]) if by else str(precisions[0])


def _finite(x: Any) -> float | None:
    v = float(x)
    return v if math.isfinite(v) else None


def _roof(row: OpShape, peaks: Any) -> None:
    """Fill ``bound`` and ``roof_share`` from the device's peaks for the row's precision."""
    bw = peaks.bandwidth_tb_s if peaks is not None else None
    peak = peaks.tflops(row.precision) if peaks is not None else None
    if row.flops is None and row.nbytes is not None:
        row.bound = "memory"
        if bw and row.tb_s is not None:
            row.roof_share = row.tb_s / bw
        return
    if row.intensity is None or not peak or not bw:
        return
    row.bound = str(bound(row.intensity, peak, bw)[()])
    if row.tflops is not None:
        row.roof_share = _finite(roof_share(row.tflops, row.intensity, peak, bw))


def _steps(
    trace: Trace, steps: Steps, calls: OpCalls, override: PeakOverride | None
) -> list[StepFigures]:
    precision = calls.precision
    match_of: dict[int, PeakMatch] = {}
    out = []
    for i in range(len(steps)):
        r = int(steps.rank[i])
        if r not in match_of:
            match_of[r] = device_peaks(trace, None if r < 0 else r, override=override)
        peaks = match_of[r].peaks
        inside = calls.in_step(steps, i)
        inside = inside[np.isfinite(calls.flops[inside])]
        by: dict[str, float] = {}
        for p, f in zip(precision[inside].tolist(), calls.flops[inside].tolist()):
            by[p] = by.get(p, 0.0) + f
        total = float(sum(by.values()))
        top = max(by, key=lambda k: by[k]) if total > 0 else None
        peak = peaks.tflops(top) if peaks is not None and top is not None else None
        dur = int(steps.end_ns[i] - steps.start_ns[i])
        out.append(
            StepFigures(
                rank=None if r < 0 else r,
                step=int(steps.number[i]),
                label=steps.label(i),
                duration_ns=dur,
                flops=total,
                precision=top,
                peak_tflops=peak,
                mfu=mfu(total, dur, peak) if total > 0 else (0.0 if peak else None),
            )
        )
    return out


def hardware(
    trace: Trace, override: PeakOverride | None = None, steps: Steps | None = None
) -> Hardware:
    """The roofline figures of every counted op and shape, and the MFU of every step.

    Parameters
    ----------
    trace : Trace
        Recorded with shapes (``record_shapes=True``); without them nothing is counted.
    override : PeakOverride, optional
        The caller's peaks (``--peak-tflops``, ``--peak-bandwidth``).
    steps : Steps, optional
        The step windows (default: :func:`gpuviz.analysis.steps.find_steps`).

    Returns
    -------
    Hardware
    """
    match = device_peaks(trace, override=override)
    calls, described = _op_calls(trace)
    precision = _call_precisions(trace, calls, described, match)
    described = _split_by_precision(calls, described, precision)
    shapes = _shapes(calls, described, precision, match)
    order = sorted(range(len(shapes)), key=lambda j: (-shapes[j].device_ns, shapes[j].name))
    remap = np.zeros(len(shapes), dtype=np.int64)
    remap[np.asarray(order, dtype=np.int64)] = np.arange(len(order))
    if steps is None:
        steps = find_steps(trace)
    s = trace.slices
    per_call = OpCalls(
        rows=calls.rows,
        shape=remap[calls.group] if len(calls.group) else calls.group,
        flops=calls.flops,
        device_ns=calls.device_ns,
        precision=precision,
        rank=trace.tracks.rank[s.track[calls.rows]].astype(np.int64),
        start_ns=s.start_ns[calls.rows].astype(np.int64),
        roof_share=_call_shares(calls, precision, match),
    )
    return Hardware(
        match,
        [shapes[j] for j in order],
        _steps(trace, steps, per_call, override),
        per_call,
    )


def annotate_breakdown(table: Breakdown, hw: Hardware) -> None:
    """Add the roofline columns to a ``breakdown`` table's rows (in their ``extra``).

    ``op-shape`` rows gain ``flops``, ``bytes``, ``tflops``, ``intensity``, ``bound``,
    ``roof_share`` and ``precision`` (null where not counted); ``step`` rows gain ``flops``
    and ``mfu`` (matched to :attr:`Hardware.steps` by rank and step number). Other tables are
    left as they are.
    """
    if table.by == "op-shape":
        empty = dict.fromkeys(("flops", "bytes", "tflops", "intensity", "bound", "roof_share"))
        for row in table.rows:
            found = hw.by_dims(row.key, row.input_shapes or [])
            cols = found.columns() if found is not None else {**empty, "precision": None}
            if cols["flops"] is None and row.flops is not None:
                cols["flops"] = row.flops  # Kineto's or the attribution's own figure
            row.extra.update(cols)
    elif table.by == "step":
        by_step: dict[tuple[Any, Any], StepFigures] = {(s.rank, s.step): s for s in hw.steps}
        for row in table.rows:
            got = by_step.get((row.extra.get("rank"), row.extra.get("step")))
            row.extra["flops"] = int(got.flops) if got is not None else None
            row.extra["mfu"] = _round(got.mfu, 5) if got is not None else None
