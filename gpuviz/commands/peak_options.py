"""``--peak-tflops``/``--peak-bandwidth`` and the words about the peaks MFU and rooflines are
measured against, shared by ``gpuviz breakdown`` and ``gpuviz summary``."""

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


def peak_phrase(hw: Hardware) -> str:
    """``Peaks: NVIDIA H100 SXM5 80GB, bf16 989.4 TFLOP/s, 3.35 TB/s (source)``."""
    p = hw.peaks.peaks
    if p is None:
        return f"Peaks: unknown ({terminal_safe(hw.peaks.reason, one_line=True)})"
    # every precision a step does FLOPs in: each is measured against its own peak
    used = sorted({p for s in hw.steps for p in s.precisions} | {"bf16"})
    figures = ", ".join(f"{k} {p.tflops(k):g} TFLOP/s" for k in used if p.tflops(k) is not None)
    bw = "" if p.bandwidth_tb_s is None else f", {p.bandwidth_tb_s:g} TB/s"
    return f"Peaks: {terminal_safe(p.label, one_line=True)}, dense {figures}{bw} ({p.source})"
