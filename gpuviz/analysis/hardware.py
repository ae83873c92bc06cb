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

The calls, their kernels and device time come from :func:`gpuviz.analysis.op_calls.count_calls`:
the counted ops are the innermost ones that do the work, so their device time is their device
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

from gpuviz.analysis.op_calls import (
    Calls,
    call_precisions,
    call_shares,
    count_calls,
    members,
    shape_key,
    split_by_precision,
)
from gpuviz.analysis.peaks import PeakMatch, PeakOverride, busiest_devices, device_peaks
from gpuviz.analysis.roofline import (
    achieved_tb_s,
    achieved_tflops,
    bound,
    flops_by_precision,
    intensity,
    mfu,
    roof_share,
)
from gpuviz.analysis.steps import Steps, find_steps
from gpuviz.trace.model import Trace

if TYPE_CHECKING:
    from gpuviz.analysis.breakdown_table import Breakdown

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]


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
    by_precision: dict[str, float] = field(default_factory=dict, repr=False, compare=False)

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
class RankFigures:
    """One rank's FLOPs and MFU over all its steps.

    Attributes
    ----------
    rank : int or None
    steps : int
    duration_ns : int
        Its steps' windows, summed.
    flops : float
        Its steps' FLOPs, summed.
    precision : str or None
        The precision doing most of them.
    peak_tflops : float or None
        That precision's dense peak on the rank's device.
    mfu : float or None
        ``flops / (duration · peak)``: the steps' MFU weighted by their durations.
    """

    rank: int | None
    steps: int
    duration_ns: int
    flops: float
    precision: str | None
    peak_tflops: float | None
    mfu: float | None

    def to_json(self) -> dict[str, Any]:
        """``{rank, steps, duration_us, flops, precision, peak_tflops, mfu}``."""
        return {
            "rank": self.rank,
            "steps": self.steps,
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
    ranks : list of RankFigures
        Each rank's steps together, by rank.
    """

    peaks: PeakMatch
    shapes: list[OpShape]
    steps: list[StepFigures]
    calls: OpCalls = field(default_factory=OpCalls.empty)
    ranks: list[RankFigures] = field(default_factory=list)
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
                self._by_key.setdefault(shape_key(s.name, s.input_dims, s.input_types), []).append(
                    s
                )
        found = self._by_key.get(shape_key(name, input_dims, input_types), [])
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
        """``summary --json``'s ``"mfu"``: ``{"peak": {...}, "steps": [...], "ranks": [...]}``."""
        return {
            "peak": self.peak_json(),
            "steps": [s.to_json() for s in self.steps],
            "ranks": [r.to_json() for r in self.ranks],
        }


@dataclass(frozen=True)
class MfuBrief:
    """A trace's MFU in a line: the mean and range over its steps, and the peak used.

    Attributes
    ----------
    mean, low, high : float
        The mean of the steps' MFU (as ``gpuviz summary`` states it), the lowest and highest.
    steps : int
        The steps with a known MFU (those figures are over them).
    precisions : dict of str to float
        The precision doing most of a step's FLOPs -> its dense peak (TFLOP/s), of every such
        step.
    peak_label : str or None
        The device the peaks are of (``NVIDIA H100 SXM5 80GB``).
    """

    mean: float
    low: float
    high: float
    steps: int
    precisions: dict[str, float]
    peak_label: str | None

    def to_json(self) -> dict[str, Any]:
        """``{mean, min, max, steps, peak_tflops: {precision: peak}, peak_label}``."""
        return {
            "mean": _round(self.mean, 5),
            "min": _round(self.low, 5),
            "max": _round(self.high, 5),
            "steps": self.steps,
            "peak_tflops": dict(self.precisions),
            "peak_label": self.peak_label,
        }


def mfu_brief(hw: Hardware) -> MfuBrief | None:
    """The MFU of ``hw``'s steps in brief; None where no step's MFU is known (no FLOPs counted
    or no peak: :func:`mfu_unknown_reason` says which)."""
    known = [s for s in hw.steps if s.mfu is not None and math.isfinite(s.mfu)]
    if not known or not any(s.flops > 0 for s in known):
        return None
    values = [float(s.mfu) for s in known if s.mfu is not None]
    peaks = {s.precision: s.peak_tflops for s in known if s.precision and s.peak_tflops}
    return MfuBrief(
        mean=sum(values) / len(values),
        low=min(values),
        high=max(values),
        steps=len(values),
        precisions=peaks,
        peak_label=hw.peaks.peaks.label if hw.peaks.peaks is not None else None,
    )


def mfu_unknown_reason(hw: Hardware) -> str:
    """Why :func:`mfu_brief` has no figure, in a few words."""
    if not any(s.flops > 0 for s in hw.steps):
        return "no FLOPs counted: record shapes, gpuviz profile --record-shapes"
    return f"no peak figures for the device ({hw.peaks.reason})"


def _round(x: float | None, digits: int) -> float | None:
    return None if x is None or not math.isfinite(x) else round(float(x), digits)


def _int_or_none(x: float | None) -> int | None:
    return None if x is None or not math.isfinite(x) else int(x)


def _shapes(
    calls: Calls,
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
    groups = members(g, n)
    for j, (name, dims, types) in enumerate(described):
        mine = groups[j]
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


def _fill(row: OpShape, peaks: Any) -> OpShape:
    """Achieved figures, intensity, bound and roof share from the row's sums."""
    f, b, t = row.flops, row.nbytes, row.device_ns
    row.tflops = _finite(achieved_tflops(f, t)) if f is not None else None
    row.tb_s = _finite(achieved_tb_s(b, t)) if b is not None else None
    row.intensity = _finite(intensity(f, b)) if f is not None and b is not None else None
    _roof(row, peaks)
    return row


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


class _RankPeaks:
    """Each rank's :func:`device_peaks`, found once (its busiest device counted in one pass)."""

    def __init__(self, trace: Trace, override: PeakOverride | None) -> None:
        self.trace, self.override = trace, override
        self.busiest = busiest_devices(trace)
        self.found: dict[int | None, PeakMatch] = {}

    def __call__(self, rank: int | None) -> PeakMatch:
        if rank not in self.found:
            self.found[rank] = device_peaks(
                self.trace, rank, override=self.override, busiest=self.busiest
            )
        return self.found[rank]


def _steps(steps: Steps, calls: OpCalls, match_of: _RankPeaks) -> list[StepFigures]:
    precision = calls.precision
    out = []
    for i in range(len(steps)):
        r = int(steps.rank[i])
        peaks = match_of(None if r < 0 else r).peaks
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
                by_precision=by,
            )
        )
    return out


def _ranks(steps: list[StepFigures], match_of: _RankPeaks) -> list[RankFigures]:
    """Each rank's steps summed; its MFU at the peak of the precision doing most of its FLOPs."""
    out = []
    for r in sorted({s.rank for s in steps}, key=lambda x: -1 if x is None else x):
        mine = [s for s in steps if s.rank == r]
        by: dict[str, float] = {}
        for s in mine:
            for p, f in s.by_precision.items():
                by[p] = by.get(p, 0.0) + f
        total = float(sum(by.values()))
        dur = sum(s.duration_ns for s in mine)
        top = max(by, key=lambda k: by[k]) if total > 0 else None
        peaks = match_of(r).peaks
        peak = peaks.tflops(top) if peaks is not None and top is not None else None
        got = mfu(total, dur, peak) if total > 0 else (0.0 if peaks is not None else None)
        out.append(RankFigures(r, len(mine), dur, total, top, peak, got))
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
    match_of = _RankPeaks(trace, override)
    match = match_of(None)  # the trace's first rank with device properties
    calls, described = count_calls(trace)
    precision = call_precisions(trace, calls, described, match)
    described = split_by_precision(calls, described, precision)
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
        roof_share=call_shares(calls, precision, match),
    )
    step_figures = _steps(steps, per_call, match_of)
    return Hardware(
        match,
        [shapes[j] for j in order],
        step_figures,
        per_call,
        _ranks(step_figures, match_of),
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
