"""A trace's MFU in one line: the mean and range over its steps, or why it is unknown.

:class:`MfuBrief`, :func:`mfu_brief` and :func:`mfu_unknown_reason` condense the per-step
figures of :func:`gpuviz.analysis.hardware.hardware` for ``gpuviz summary``, the comparison of
two runs and the agents' answers. They read a finished :class:`~gpuviz.analysis.hardware.Hardware`
and compute nothing of their own, so they live apart from the roofline computation;
:mod:`gpuviz.analysis.hardware` re-exports them, where callers import them from.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpuviz.analysis.step_flops import NO_FORMULA, NO_SHAPES, SHAPES_LEFT_OUT

if TYPE_CHECKING:
    from gpuviz.analysis.hardware import Hardware

__all__ = ["MfuBrief", "mfu_brief", "mfu_unknown_reason"]


def _round(x: float | None, digits: int) -> float | None:
    return None if x is None or not math.isfinite(x) else round(float(x), digits)


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
    coverage : float or None
        The lowest ``flops_coverage`` of those steps: below 1 the figures are lower bounds.
    mixed : list of str
        Every precision those steps do FLOPs in, each against its own peak.
    """

    mean: float
    low: float
    high: float
    steps: int
    precisions: dict[str, float]
    peak_label: str | None
    coverage: float | None = None
    mixed: tuple[str, ...] = ()

    @property
    def lower_bound(self) -> bool:
        """Whether the figures are lower bounds (FLOPs known for part of the GPU time)."""
        return self.coverage is not None and self.coverage < 1.0 - 1e-9

    def to_json(self) -> dict[str, Any]:
        """``{mean, min, max, steps, peak_tflops: {precision: peak}, peak_label,
        flops_coverage, is_lower_bound, precisions}``."""
        return {
            "mean": _round(self.mean, 5),
            "min": _round(self.low, 5),
            "max": _round(self.high, 5),
            "steps": self.steps,
            "peak_tflops": dict(self.precisions),
            "peak_label": self.peak_label,
            "flops_coverage": _round(self.coverage, 4),
            "is_lower_bound": self.lower_bound,
            "precisions": list(self.mixed),
        }


def mfu_brief(hw: Hardware) -> MfuBrief | None:
    """The MFU of ``hw``'s steps in brief; None where no step's MFU is known (no FLOPs counted
    or no peak: :func:`mfu_unknown_reason` says which)."""
    known = [s for s in hw.steps if s.mfu is not None and math.isfinite(s.mfu)]
    if not known or not any(s.flops > 0 for s in known):
        return None
    values = [float(s.mfu) for s in known if s.mfu is not None]
    peaks: dict[str, float] = {}
    for s in known:
        peaks.update(s.peaks_by_precision)
    covs = [c for c in (s.coverage for s in known) if c is not None]
    # Most FLOPs first; ties by name: a set's order follows string hashing, which changes from
    # one process to the next (check's JSON differed between runs of the same trace).
    mixed = sorted(
        {p for s in known for p in s.precisions},
        key=lambda p: (-sum(s.by_precision.get(p, 0.0) for s in known), p),
    )
    return MfuBrief(
        mean=sum(values) / len(values),
        low=min(values),
        high=max(values),
        steps=len(values),
        precisions=peaks,
        peak_label=hw.peaks.peaks.label if hw.peaks.peaks is not None else None,
        coverage=min(covs) if covs else None,
        mixed=tuple(mixed),
    )


def mfu_unknown_reason(hw: Hardware, calls_recorded: bool | None = None) -> str:
    """Why :func:`mfu_brief` has no figure, in a few words (``calls_recorded``: whether any
    op call with shapes was recorded, where ``hw`` was merged from ranks without its calls;
    None: ``hw.calls`` says)."""
    if calls_recorded is None:
        calls_recorded = bool(len(hw.calls.rows))
    if hw.shapes_dropped:
        return SHAPES_LEFT_OUT
    if not any(s.flops > 0 for s in hw.steps):
        if hw.warnings:  # shapes there, but none a real tensor has
            return f"no FLOPs counted: {hw.warnings[0]}"
        if calls_recorded:  # shapes recorded (byte-only ops were counted): no formula
            return f"no FLOPs counted: {NO_FORMULA}"
        return NO_SHAPES
    if hw.peaks.peaks is None:
        return f"no peak figures for the device ({hw.peaks.reason})"
    notes = [s.mfu_note for s in hw.steps if s.mfu_note]
    return notes[0] if notes else f"no peak figures for the device ({hw.peaks.reason})"
