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
The one-line MFU of a trace (:class:`MfuBrief`, :func:`mfu_brief`) is in
:mod:`gpuviz.analysis.mfu_brief`, re-exported here.

The calls, their kernels and device time come from :func:`gpuviz.analysis.op_calls.count_calls`:
the counted ops are the innermost ones that do the work, so their device time is their device
*self* time, as ``key_averages`` defines it, up to the odd fill kernel of an uncounted child.

Ops with bytes but no FLOP count (elementwise, norms, copies) are memory-bound by definition:
their ``bound`` is ``"memory"``, their ``roof_share`` the achieved bandwidth over the device's,
and their intensity and TFLOP/s are None.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np
import numpy.typing as npt

from gpuviz.analysis.exact_sums import group_sums
from gpuviz.analysis.mfu_brief import MfuBrief, _round, mfu_brief, mfu_unknown_reason
from gpuviz.analysis.op_args import (
    CONV_BACKWARDS,
    CONV_LEAVES,
    FORMER_LEAVES,
    MAX_CALL_FLOPS,
    OLD_CONV_HALVES,
)
from gpuviz.analysis.op_calls import (
    Calls,
    call_precisions,
    call_shares,
    count_calls,
    members,
    shape_key,
    split_by_precision,
)
from gpuviz.analysis.peaks import PeakMatch, PeakOverride
from gpuviz.analysis.roofline import (
    achieved_tb_s,
    achieved_tflops,
    bound,
    flops_by_precision,
    intensity,
    roof_share,
)
from gpuviz.analysis.step_flops import (
    MAX_MFU,
    NO_FORMULA,
    NO_SHAPES,
    SHAPES_LEFT_OUT,
    OpCalls,
    RankFigures,
    RankPeaks,
    StepFigures,
    launched_device_ns,
    rank_figures,
    step_figures,
)
from gpuviz.analysis.steps import Steps, find_steps
from gpuviz.trace.model import Trace

if TYPE_CHECKING:
    from gpuviz.analysis.breakdown_table import Breakdown

__all__ = [
    "Hardware",
    "MfuBrief",
    "OpCalls",
    "OpShape",
    "RankFigures",
    "StepFigures",
    "annotate_breakdown",
    "hardware",
    "mfu_brief",
    "mfu_unknown_reason",
    "shape_figures",
]

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

COMPILE_INFO_KEY = "compile_info"
"""Where a trace keeps its compile info: ``compiled_regions.COMPILE_INFO_KEY``, named here
too so that a trace without it imports none of the compiled-code modules."""


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
    flops, nbytes : int, float or None
        Summed over the calls: exact ints (:mod:`gpuviz.analysis.exact_sums`), float64 sums
        where a call's count is not a whole number; None where not counted (bytes are a
        lower bound).
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
    note : str or None
        Why the row's figures are null: ``inconsistent: …`` where they are impossible (a roof
        share above 100%, a recorded FLOP count no op does; ``inconsistent`` is then true).
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
    inconsistent: bool = False
    note: str | None = None

    @property
    def label(self) -> str:
        """``aten::mm [[8192, 8192], [8192, 8192]] bf16``: what a person reads."""
        return f"{self.name} {self.input_dims} {self.precision}"

    def columns(self) -> dict[str, Any]:
        """The columns ``breakdown --by op-shape`` gains (``flops``, ``bytes``, ``tflops``,
        ``intensity``, ``bound``, ``roof_share``, ``precision``, ``inconsistent`` and
        ``roof_note``: why the figures are null)."""
        return {
            "flops": _int_or_none(self.flops),
            "bytes": _int_or_none(self.nbytes),
            "tflops": _round(self.tflops, 3),
            "intensity": _round(self.intensity, 3),
            "bound": self.bound,
            "roof_share": _round(self.roof_share, 4),
            "precision": self.precision,
            "inconsistent": self.inconsistent,
            "roof_note": self.note,
        }


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
    shapes_dropped : bool
        The import left the ops' args (their shapes) out to fit ``--max-memory``: FLOPs are
        unknown, not 0.
    warnings : list of str
        Calls skipped or flagged (shapes no real tensor has, impossible FLOP counts), counted.
    """

    peaks: PeakMatch
    shapes: list[OpShape]
    steps: list[StepFigures]
    calls: OpCalls = field(default_factory=OpCalls.empty)
    ranks: list[RankFigures] = field(default_factory=list)
    shapes_dropped: bool = False
    warnings: list[str] = field(default_factory=list)
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
            sum(flops) if flops else None,  # exact ints stay exact (not made float)
            sum(nbytes) if nbytes else None,
            sum(s.device_ns for s in found),
            max(by, key=lambda k: by[k]),
        )
        row.kernels = np.concatenate([s.kernels for s in found])
        row = _fill(row, self.peaks.peaks)
        if len({s.precision for s in found}) > 1:
            # Each part against its own roof: the share is their time at their roofs over
            # their time (one roof for bf16 and fp32 calls together would be neither's).
            _mixed_roof(row, found)
        return row

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
            "shapes_dropped": self.shapes_dropped,
        }


def _int_or_none(x: float | None) -> int | None:
    return None if x is None or not math.isfinite(x) else int(x)


def _shapes(
    calls: Calls,
    described: list[tuple[str, Any, Any]],
    precision_of: npt.NDArray[np.object_],
    match: PeakMatch,
    bad: npt.NDArray[np.bool_] | None = None,
) -> list[OpShape]:
    n = len(described)
    g = calls.group
    count = np.bincount(g, minlength=n)
    have_f = np.bincount(g, weights=np.isfinite(calls.flops), minlength=n) > 0
    have_b = np.bincount(g, weights=np.isfinite(calls.nbytes), minlength=n) > 0
    flops = _summed(calls.flops, g, n)
    nbytes = _summed(calls.nbytes, g, n)
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
        f = flops[j] if have_f[j] else None
        b = nbytes[j] if have_b[j] else None
        precision = _majority(precision_of[mine], calls.flops[mine])
        row = OpShape(name, dims, types, int(count[j]), f, b, int(dev[j]), precision)
        row.kernels = kernels
        recorded_bad = calls.bad_flops is not None and bool(calls.bad_flops[mine].any())
        out.append(
            shape_figures(row, peaks, recorded_bad, bad is not None and bool(bad[mine].any()))
        )
    return out


def _summed(values: F64, g: I64, n: int) -> Sequence[float]:
    """Per shape, its calls' FLOPs or bytes: exact ints (whole numbers, however large:
    :mod:`gpuviz.analysis.exact_sums`), else the float64 sums they always were."""
    exact = group_sums(values, g, n)
    if None not in exact:
        return [v for v in exact if v is not None]
    return np.bincount(g, weights=np.nan_to_num(values), minlength=n).tolist()


def shape_figures(row: OpShape, peaks: Any, recorded_bad: bool, bad: bool) -> OpShape:
    """Fill a shape's figures from its sums (``calls``, ``flops``, ``nbytes``, ``device_ns``)
    against ``peaks``: achieved rates, intensity, bound, roof share, and where they are
    impossible, why (the one rule for a trace's shapes and for the sums of a rank folder's
    parts, :mod:`gpuviz.analysis.breakdown_shapes`).

    Parameters
    ----------
    row : OpShape
        The sums; changed in place and returned.
    peaks : DevicePeaks or None
    recorded_bad : bool
        A call of it carries a recorded FLOP count no op does: its FLOPs are unknown.
    bad : bool
        A call of it did more FLOPs than its precision's peak does in its device time.
    """
    _fill(row, peaks)
    if recorded_bad:
        row.flops = row.intensity = None
        _inconsistent(row, RECORDED_BAD)
    elif bad and not row.inconsistent:
        _inconsistent(row, "more FLOPs than the peak does in the kernels' time")
    return row


RECORDED_BAD = "a recorded FLOP count no op does"
"""What a shape's ``note`` says after ``inconsistent: `` where a call's recorded FLOPs were
impossible (its summed FLOPs are then null)."""


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
    if (row.flops is None or row.flops == 0) and row.nbytes is not None:
        # No FLOPs (or a known 0: a compiled kernel of casts and reductions): memory-bound.
        row.bound = "memory"
        if bw and row.tb_s is not None:
            row.roof_share = row.tb_s / bw
            if row.roof_share > MAX_MFU:
                _inconsistent(row, "faster than the device's memory bandwidth")
        return
    if row.intensity is None or not peak or not bw:
        return
    row.bound = str(bound(row.intensity, peak, bw)[()])
    if row.tflops is not None:
        row.roof_share = _finite(roof_share(row.tflops, row.intensity, peak, bw))
    if row.roof_share is not None and row.roof_share > MAX_MFU:
        _inconsistent(row, "faster than the roof at its intensity")


def _mixed_roof(row: OpShape, parts: list[OpShape]) -> None:
    """A merged row of several precisions: time-weighted roof share, a common bound."""
    row.inconsistent, row.note = False, None
    bad = [s for s in parts if s.inconsistent]
    if bad:
        row.inconsistent, row.note = True, bad[0].note
        row.roof_share = row.tflops = row.tb_s = None
        return
    row.tflops = _finite(achieved_tflops(row.flops, row.device_ns)) if row.flops else None
    row.tb_s = _finite(achieved_tb_s(row.nbytes, row.device_ns)) if row.nbytes else None
    shares = [(s.roof_share, s.device_ns) for s in parts if s.roof_share is not None]
    t = sum(ns for _, ns in shares)
    row.roof_share = sum(share * ns for share, ns in shares) / t if t > 0 else None
    bounds = {s.bound for s in parts}
    row.bound = bounds.pop() if len(bounds) == 1 else None


def _inconsistent(row: OpShape, what: str) -> None:
    """Null a row's impossible figures and say why."""
    row.inconsistent = True
    row.note = f"inconsistent: {what} (bad shapes or durations)"
    row.roof_share = row.tflops = row.tb_s = None


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
    from gpuviz.trace.memory_budget import DROP_CPU_ARGS

    match_of = RankPeaks(trace, override)
    match = match_of(None)  # the trace's first rank with device properties
    calls, described = count_calls(trace)
    # Inductor's generated kernels, counted from the FX nodes they fuse where the trace has
    # its compile-info folder (issue 49); their precision is their nodes', not their inputs'.
    compiled: dict[int, str] = {}
    if COMPILE_INFO_KEY in trace.derived:  # only then: its imports cost every summary's start
        from gpuviz.analysis.compiled_calls import add_compiled_calls

        calls, described, compiled = add_compiled_calls(trace, calls, described)
    precision = call_precisions(trace, calls, described, match)
    for i, p in compiled.items():
        precision[i] = p
    described = split_by_precision(calls, described, precision)
    from gpuviz.analysis.names import graph_launch_mask

    graph = graph_launch_mask(trace.symbols)
    rc = None
    if graph.any():  # the attribution: only for graph replays
        from gpuviz.analysis.replay_flops import executed, replay_calls

        rc = replay_calls(trace, calls.rows)
    ran = calls if rc is None else executed(calls, rc)  # a captured call: its replays'
    bad = _bad_calls(trace, ran, precision, match)
    shapes = _shapes(ran, described, precision, match, bad)
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
        roof_share=call_shares(ran, precision, match),
        bad=bad,
    )
    dropped = DROP_CPU_ARGS in trace.dropped
    why_none = SHAPES_LEFT_OUT if dropped else NO_SHAPES
    if not dropped and np.isfinite(calls.flops).any():  # shapes there: this step has no FLOPs
        why_none = NO_FORMULA
    device_ns = launched_device_ns(trace, steps)
    replayed = launched_device_ns(trace, steps, graph) if graph.any() else None
    replays = None
    if rc is not None:
        from gpuviz.analysis.replay_flops import replay_flops

        replays = replay_flops(rc, steps, len(calls.rows), calls.flops, precision)
    figures = step_figures(steps, per_call, match_of, device_ns, why_none, replayed, replays)
    return Hardware(
        match,
        [shapes[j] for j in order],
        figures,
        per_call,
        rank_figures(figures, match_of, why_none),
        shapes_dropped=dropped,
        warnings=calls.warnings(),
    )


def _bad_calls(
    trace: Trace, calls: Calls, precision: npt.NDArray[np.object_], match: PeakMatch
) -> npt.NDArray[np.bool_]:
    """The calls whose figures are impossible: a recorded FLOP count no op does, or more FLOPs
    than their precision's peak does in their device time (a bf16 8192³ GEMM in 0.5 µs)."""
    bad = calls.bad_flops.copy() if calls.bad_flops is not None else np.zeros(len(calls.rows), bool)
    peaks = match.peaks
    if peaks is None or not len(bad):
        return bad
    got = achieved_tflops(calls.flops, calls.device_ns)
    # cuDNN's Winograd and FFT convolutions do up to ~4x fewer multiplies than the direct
    # formula counts: a convolution may beat the peak by that much, a GEMM never.
    margin = np.where(np.isin(trace.slices.name[calls.rows], _conv_ids(trace)), 4.0, MAX_MFU)
    for p in set(precision.tolist()):
        peak = peaks.tflops(p)
        if peak:
            sel = (precision == p) & np.isfinite(got)
            bad[sel] |= got[sel] > peak * margin[sel]
    return bad


def _conv_ids(trace: Trace) -> list[int]:
    names = CONV_BACKWARDS | set(CONV_LEAVES) | set(OLD_CONV_HALVES) | FORMER_LEAVES
    return [i for i in (trace.symbols.find(n) for n in names) if i >= 0]


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
            cols = (
                found.columns()
                if found is not None
                else {**empty, "precision": None, "inconsistent": False, "roof_note": None}
            )
            if cols["flops"] is None and row.flops is not None and not cols["inconsistent"]:
                if row.flops <= MAX_CALL_FLOPS * max(row.calls, 1):
                    cols["flops"] = row.flops  # Kineto's or the attribution's own figure
                else:
                    cols["inconsistent"] = True
                    cols["roof_note"] = "inconsistent: a recorded FLOP count no op does"
            row.extra.update(cols)
    elif table.by == "step":
        by_step: dict[tuple[Any, Any], StepFigures] = {(s.rank, s.step): s for s in hw.steps}
        keys = (
            "flops",
            "mfu",
            "flops_coverage",
            "precisions",
            "mfu_is_lower_bound",
            "mfu_lower_bound",
        )
        for row in table.rows:
            got = by_step.get((row.extra.get("rank"), row.extra.get("step")))
            if got is None:
                row.extra.update(dict.fromkeys(keys))
                row.extra.update(inconsistent=False, mfu_note="not a step of the MFU figures")
                continue
            j = got.flops_json()
            row.extra.update({k: j[k] for k in (*keys, "inconsistent", "mfu_note")})
