"""``--peak-tflops``/``--peak-bandwidth`` and the warning for a device with no peaks, shared by
``gpuviz breakdown`` and ``gpuviz summary`` (the peaks line they print is
:func:`gpuviz.report.peaks.peak_phrase`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from gpuviz.display import terminal_safe

if TYPE_CHECKING:
    from gpuviz.analysis.hardware import Hardware
    from gpuviz.analysis.peaks import PeakOverride


PEAK_TFLOPS_RANGE = (1e-3, 1e5)
"""``--peak-tflops``' bounds: 1 GFLOP/s (a CPU core does more) to 100 PFLOP/s, ten times the
fastest GPU's dense FP4 today. Outside them a figure divided by it over- or underflows
(``5e-324`` made MFU ``inf%`` through a numpy overflow warning)."""
PEAK_BANDWIDTH_RANGE = (1e-3, 1e3)
"""``--peak-bandwidth``' bounds, TB/s: 1 GB/s to 1 PB/s (HBM of today's GPUs: 2-8 TB/s)."""


def parse_peak(option: str, text: str) -> float:
    """``--peak-tflops``/``--peak-bandwidth``'s value, within its range.

    Raises
    ------
    ValueError
        Not a number, or outside :data:`PEAK_TFLOPS_RANGE` / :data:`PEAK_BANDWIDTH_RANGE`: one
        line naming the option, the value and the range (and its unit).
    """
    low, high = PEAK_BANDWIDTH_RANGE if option == "--peak-bandwidth" else PEAK_TFLOPS_RANGE
    unit = "TB/s" if option == "--peak-bandwidth" else "TFLOP/s"
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{option} {text!r}: expected a number ({unit})") from None
    if not low <= value <= high:  # NaN too
        raise ValueError(f"{option} {text!r}: expected {low:g} to {high:g} {unit}")
    return value


def peak_override_of(args: argparse.Namespace) -> PeakOverride | None:
    """``--peak-tflops`` and ``--peak-bandwidth`` as a :class:`PeakOverride` (None if neither)."""
    from gpuviz.analysis.peaks import PeakOverride

    tflops = getattr(args, "peak_tflops", None)
    bandwidth = getattr(args, "peak_bandwidth", None)
    if tflops is None and bandwidth is None:
        return None
    return PeakOverride(tflops, bandwidth)


def unknown_device_line(hw: Hardware) -> str | None:
    """The one stderr line for a device with no peaks (None when its peaks are known)."""
    if hw.peaks.peaks is not None or not hw.shapes:
        return None  # known, or nothing counted that a peak would measure
    return (
        f"gpuviz: no peak figures: {terminal_safe(hw.peaks.reason, one_line=True)}; figures that "
        "need a peak are null (give --peak-tflops X --peak-bandwidth Y)"
    )
