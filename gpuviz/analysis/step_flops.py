"""FLOPs and MFU of each step and rank: each precision at its own peak, with the coverage.

A step holds the counted op calls (:mod:`gpuviz.analysis.op_calls`) that started in its CPU
range. Its figures (docs/flops.md says more):

- ``flops``: the FLOPs of those calls; null where none is known (no shapes recorded, shapes
  left out to fit ``--max-memory``, or no op of the step has a FLOP formula).
- ``flops_coverage``: the share of the step's device time (the GPU work launched in its CPU
  range) that ran in calls whose FLOPs are known. Elementwise
  ops but ``add``/``mul``, norms, copies and custom kernels (an mxfp4 grouped GEMM) have none.
- ``mfu``: time at peak over the step's duration, ``Σ_p flops_p / peak_p / duration``: each
  precision's FLOPs against the dense peak of that precision (an fp32 GEMM against fp32, not
  bf16). Below full coverage it is a lower bound (``mfu_is_lower_bound``); below
  :data:`MIN_COVERAGE` it is null, as it is where the figures are impossible: an MFU above 1,
  or a call that ran faster than its peak (``inconsistent``: bad shapes or durations).
  ``mfu_note`` says why it is null or a lower bound; ``mfu_lower_bound`` is the MFU of the known
  FLOPs alone, given below :data:`MIN_COVERAGE` too (null only where unknown or impossible).
- ``precisions``: the precisions the step mixes, most FLOPs first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.peaks import (
    DevicePeaks,
    PeakMatch,
    PeakOverride,
    busiest_devices,
    device_peaks,
)
from gpuviz.analysis.steps import Steps
from gpuviz.trace.model import Trace

if TYPE_CHECKING:
    from gpuviz.analysis.replay_flops import ReplayFlops

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

MIN_COVERAGE = 0.5
"""Below this share of a step's device time in ops with known FLOPs, its MFU is unknown (null),
not a lower bound too loose to read (an MoE step whose mxfp4 grouped GEMMs have no formula)."""

MAX_MFU = 1.0
"""An MFU or roof share above this is impossible: the shapes or the durations are wrong."""

SHAPES_LEFT_OUT = (
    "shapes were left out to fit the memory limit (raise --max-memory or GPUVIZ_MAX_MEMORY)"
)
NO_FORMULA = "no op with a FLOP formula started in it (GEMMs, convolutions, attention, add, mul)"
REPLAYED = (
    "{pct:.0f}% of its GPU time ran in CUDA/HIP graph replays, whose kernels have no op in the "
    "step: their FLOPs are not counted"
)
REPLAYED_UNMATCHED = (
    "{pct:.0f}% of its GPU time ran in CUDA/HIP graph replays whose kernels' capture has no op "
    "with FLOPs for them"
)
NO_SHAPES = "no FLOPs counted: record shapes (torch.profiler record_shapes=True, gpuviz profile --record-shapes)"


@dataclass
class OpCalls:
    """Every counted op call (one entry per call), for rules that look at steps one by one.

    Attributes
    ----------
    rows : int64
        The op's slice row.
    shape : int64
        Its entry in ``Hardware.shapes``.
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
        The call's achieved figure over its roof, as ``OpShape.roof_share`` (for its own
        precision: calls of one shape may run fp32 and TF32); NaN where unknown.
    bad : bool
        The call's figures are impossible: a recorded FLOP count no op does, or more FLOPs
        than its precision's peak allows in its device time.
    """

    rows: I64
    shape: I64
    flops: F64
    device_ns: I64
    precision: npt.NDArray[np.object_]
    rank: I64
    start_ns: I64
    roof_share: F64 = field(default_factory=lambda: np.zeros(0))
    bad: npt.NDArray[np.bool_] | None = None
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


def _round(x: float | None, digits: int) -> float | None:
    return None if x is None or not math.isfinite(x) else round(float(x), digits)


@dataclass
class _Figures:
    """What steps and ranks share: FLOPs per precision, coverage, MFU and why it is unknown."""

    flops: float
    precision: str | None
    peak_tflops: float | None
    mfu: float | None
    by_precision: dict[str, float] = field(default_factory=dict, repr=False, compare=False)
    device_ns: int = 0
    known_ns: int = 0
    peaks_by_precision: dict[str, float] = field(default_factory=dict, compare=False)
    inconsistent: bool = False
    mfu_note: str | None = None
    lower_bound: bool = False
    floor: float | None = None  # the MFU of the known FLOPs, also below MIN_COVERAGE

    @property
    def coverage(self) -> float | None:
        """The share of device time in calls with known FLOPs (None: no device time)."""
        if self.device_ns <= 0:
            return None
        return min(1.0, self.known_ns / self.device_ns)

    @property
    def precisions(self) -> list[str]:
        """The precisions with FLOPs, most first."""
        return sorted(
            (p for p, f in self.by_precision.items() if f > 0), key=lambda p: -self.by_precision[p]
        )

    def flops_json(self) -> dict[str, Any]:
        known = self.flops > 0  # 0: nothing known (no shapes, none left, no formula)
        return {
            "flops": int(self.flops) if known and math.isfinite(self.flops) else None,
            "precision": self.precision,
            "peak_tflops": self.peak_tflops,
            "mfu": _round(self.mfu, 5),
            "flops_coverage": _round(self.coverage, 4),
            "precisions": self.precisions,
            "peak_tflops_by_precision": dict(self.peaks_by_precision),
            "mfu_is_lower_bound": self.lower_bound,
            "mfu_lower_bound": _round(self.floor, 6),
            "inconsistent": self.inconsistent,
            "mfu_note": self.mfu_note,
        }


@dataclass
class StepFigures(_Figures):
    """One step's FLOPs and MFU (see the module notes; JSON fields named as there).

    Attributes
    ----------
    rank : int or None
    step : int
    label : str
    duration_ns : int
        The step's window.
    flops : float
        The known FLOPs of the ops that started in its CPU range (0 where none is known).
    precision : str or None
        The precision doing most of them.
    peak_tflops : float or None
        That precision's dense peak on the rank's device.
    mfu : float or None
        Time at each precision's peak over the duration; None where unknown (``mfu_note``).
    """

    rank: int | None = None
    step: int = 0
    label: str = ""
    duration_ns: int = 0

    def to_json(self) -> dict[str, Any]:
        """``{rank, step, label, duration_us, flops, precision, peak_tflops, mfu,
        flops_coverage, precisions, peak_tflops_by_precision, mfu_is_lower_bound,
        inconsistent, mfu_note}``."""
        return {
            "rank": self.rank,
            "step": self.step,
            "label": self.label,
            "duration_us": round(self.duration_ns / 1000.0, 3),
            **self.flops_json(),
        }


@dataclass
class RankFigures(_Figures):
    """One rank's FLOPs and MFU over all its steps (their time at peak over their time).

    Attributes
    ----------
    rank : int or None
    steps : int
    duration_ns : int
        Its steps' windows, summed.
    """

    rank: int | None = None
    steps: int = 0
    duration_ns: int = 0

    def to_json(self) -> dict[str, Any]:
        """``{rank, steps, duration_us, flops, precision, peak_tflops, mfu, …}`` as a step's."""
        return {
            "rank": self.rank,
            "steps": self.steps,
            "duration_us": round(self.duration_ns / 1000.0, 3),
            **self.flops_json(),
        }


def judge(
    fig: _Figures, duration_ns: int, peaks: DevicePeaks | None, bad_calls: int, why_none: str
) -> None:
    """Fill ``fig``'s MFU, its note, ``inconsistent`` and ``lower_bound`` from its FLOPs per
    precision, its coverage and the peaks (``why_none``: the reason when no FLOPs are known)."""
    by = fig.by_precision
    fig.flops = float(sum(by.values()))
    fig.precision = max(by, key=lambda k: by[k]) if fig.flops > 0 else None
    fig.peak_tflops = peaks.tflops(fig.precision) if peaks and fig.precision else None
    fig.peaks_by_precision = {p: t for p in by if peaks and (t := peaks.tflops(p))}
    fig.mfu = None
    if fig.flops <= 0:
        fig.mfu_note = why_none
        return
    if peaks is None:
        fig.mfu_note = "no peak figures for the device"
        return
    no_peak = [p for p in by if p not in fig.peaks_by_precision]
    at_peak_ns = sum(
        f / (fig.peaks_by_precision[p] * 1e3) for p, f in by.items() if p not in no_peak
    )
    if not fig.peaks_by_precision or duration_ns <= 0:
        fig.mfu_note = f"no peak for {', '.join(no_peak)}" if no_peak else "no duration"
        return
    got = at_peak_ns / duration_ns
    if bad_calls or got > MAX_MFU:
        fig.inconsistent = True
        fig.mfu_note = (
            f"inconsistent: {bad_calls} op call(s) did more FLOPs than the peak allows in their "
            "device time (bad shapes or durations)"
            if bad_calls
            else "inconsistent: more FLOPs than the peak does in the step's time "
            "(bad shapes or durations)"
        )
        return
    cov = fig.coverage
    fig.floor = got
    if cov is not None and cov < MIN_COVERAGE:
        fig.mfu_note = f"FLOPs known for only {100 * cov:.0f}% of GPU time"
        return
    fig.mfu = got
    notes = []
    if cov is not None and cov < 1.0 - 1e-9:
        fig.lower_bound = True
        notes.append(f"a lower bound: FLOPs known for {100 * cov:.0f}% of GPU time")
    if no_peak:
        fig.lower_bound = True
        notes.append(f"{', '.join(no_peak)} FLOPs left out (no peak)")
    fig.mfu_note = "; ".join(notes) or None


class RankPeaks:
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


def launched_device_ns(trace: Trace, steps: Steps, by: npt.NDArray[np.bool_] | None = None) -> I64:
    """Each step's device time: the GPU work (kernels, copies, sets) launched in its CPU range,
    the denominator of the coverage (the calls' kernels are found the same way); with ``by``
    (a mask over symbol ids), only the work whose launch call's name it holds."""
    out = np.zeros(len(steps), dtype=np.int64)
    s = trace.slices
    gpu = np.flatnonzero(trace.gpu_activity_mask())
    if not len(gpu) or not len(steps):
        return out
    launch = trace.launches_of(gpu)
    ok = launch >= 0
    if by is not None:
        ok[ok] = by[s.name[launch[ok]]]
    gpu, launch = gpu[ok], launch[ok]
    rank = trace.tracks.rank[s.track[launch]].astype(np.int64)
    start = s.start_ns[launch].astype(np.int64)
    order = np.lexsort((start, rank))
    rank, start = rank[order], start[order]
    cum = np.concatenate([[0], np.cumsum(s.dur_ns[gpu[order]].astype(np.int64))])
    for i in range(len(steps)):
        r = int(steps.rank[i])
        a, b = np.searchsorted(rank, [r, r + 1])
        lo, hi = a + np.searchsorted(start[a:b], [steps.cpu_start_ns[i], steps.cpu_end_ns[i]])
        out[i] = cum[hi] - cum[lo]
    return out


def step_figures(
    steps: Steps,
    calls: OpCalls,
    match_of: RankPeaks,
    device_ns: I64,
    why_none: str = NO_SHAPES,
    replayed_ns: I64 | None = None,
    replays: ReplayFlops | None = None,
) -> list[StepFigures]:
    """Each step's figures (see the module notes).

    ``replayed_ns``: each step's device time in graph replays (:func:`launched_device_ns` of
    the graph launch calls),
    which the MFU's note names where its FLOPs are not known. ``replays``: the replays' FLOPs
    from their captures in the trace (:func:`~gpuviz.analysis.replay_flops.replay_flops`),
    counted in the replaying steps, their captured calls in none.
    """
    out = []
    finite = np.isfinite(calls.flops)
    bad = calls.bad if calls.bad is not None else np.zeros(len(calls.rows), dtype=bool)
    for i in range(len(steps)):
        r = int(steps.rank[i])
        peaks = match_of(None if r < 0 else r).peaks
        inside = calls.in_step(steps, i)
        counted = inside if replays is None else inside[~replays.captured[inside]]
        known = counted[finite[counted]]
        by: dict[str, float] = {}
        for p, f in zip(calls.precision[known].tolist(), calls.flops[known].tolist()):
            if f > 0:  # a known 0 (a compiled dtype cast) is time covered, not a precision
                by[p] = by.get(p, 0.0) + f
        replay_known = 0 if replays is None else int(replays.known_ns[i])
        for p, f in ({} if replays is None else replays.by_precision[i]).items():
            by[p] = by.get(p, 0.0) + f
        dur = int(steps.end_ns[i] - steps.start_ns[i])
        fig = StepFigures(
            flops=0.0,
            precision=None,
            peak_tflops=None,
            mfu=None,
            by_precision=by,
            device_ns=int(device_ns[i]),
            known_ns=int(calls.device_ns[known].sum()) + replay_known,
            rank=None if r < 0 else r,
            step=int(steps.number[i]),
            label=steps.label(i),
            duration_ns=dur,
        )
        judge(fig, dur, peaks, int(bad[inside].sum()), why_none)
        if replayed_ns is not None:
            note_replays(fig, int(replayed_ns[i]) - replay_known, matched=replays is not None)
        out.append(fig)
    return out


def note_replays(fig: _Figures, replayed_ns: int, matched: bool = False) -> None:
    """Say in ``fig``'s MFU note that ``replayed_ns`` of its device time ran in graph replays
    with no FLOPs known (``matched``: the replays' kernels were matched to their capture, but
    not to an op with FLOPs), where that time is why its MFU is unknown or a lower bound. An
    MFU withheld as inconsistent keeps its note alone."""
    if replayed_ns <= 0 or fig.inconsistent or (fig.mfu is not None and not fig.lower_bound):
        return
    pct = 100.0 * replayed_ns / fig.device_ns if fig.device_ns else 100.0
    why = (REPLAYED_UNMATCHED if matched else REPLAYED).format(pct=pct)
    if not fig.mfu_note or (fig.flops <= 0 and replayed_ns >= fig.device_ns):
        fig.mfu_note = why
    elif fig.flops <= 0:  # the replays first, then why the rest has no FLOPs either
        fig.mfu_note = f"{why}; the rest: {fig.mfu_note}"
    else:
        fig.mfu_note = f"{fig.mfu_note}; {why}"


def rank_figures(
    steps: list[StepFigures], match_of: RankPeaks, why_none: str = NO_SHAPES
) -> list[RankFigures]:
    """Each rank's steps together: their time at peak over their time."""
    out = []
    of_rank: dict[int | None, list[StepFigures]] = {}
    for s in steps:  # one pass, not one per rank (issue 51: no per-pair work over ranks)
        of_rank.setdefault(s.rank, []).append(s)
    for r in sorted(of_rank, key=lambda x: -1 if x is None else x):
        mine = of_rank[r]
        by: dict[str, float] = {}
        for s in mine:
            for p, f in s.by_precision.items():
                by[p] = by.get(p, 0.0) + f
        fig = RankFigures(
            flops=0.0,
            precision=None,
            peak_tflops=None,
            mfu=None,
            by_precision=by,
            device_ns=sum(s.device_ns for s in mine),
            known_ns=sum(s.known_ns for s in mine),
            rank=r,
            steps=len(mine),
            duration_ns=sum(s.duration_ns for s in mine),
        )
        bad = sum(1 for s in mine if s.inconsistent)
        judge(fig, fig.duration_ns, match_of(r).peaks, 0, why_none)
        if bad and not fig.inconsistent:
            fig.mfu, fig.inconsistent = None, True
            fig.mfu_note = f"inconsistent: {bad} of its steps are (bad shapes or durations)"
        out.append(fig)
    return out
