"""The peaks line: which dense peaks MFU and the rooflines are measured against, as
``summary``, ``breakdown --by op-shape|step`` and the agents' breakdown answer print it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuviz.display import terminal_safe

if TYPE_CHECKING:
    from gpuviz.analysis.hardware import Hardware


def peak_phrase(hw: Hardware) -> str:
    """``Peaks: NVIDIA H100 SXM5 80GB, bf16 989.4 TFLOP/s, 3.35 TB/s (source)``.

    Parameters
    ----------
    hw : Hardware
        The trace's hardware figures (:func:`~gpuviz.analysis.hardware.hardware`).

    Returns
    -------
    str
        The line, with every precision a step does FLOPs in (and bf16), or ``Peaks: unknown
        (why)`` when the device's peaks are not known.
    """
    p = hw.peaks.peaks
    if p is None:
        return f"Peaks: unknown ({terminal_safe(hw.peaks.reason, one_line=True)})"
    # every precision a step does FLOPs in: each is measured against its own peak
    used = sorted({p for s in hw.steps for p in s.precisions} | {"bf16"})
    figures = ", ".join(f"{k} {p.tflops(k):g} TFLOP/s" for k in used if p.tflops(k) is not None)
    bw = "" if p.bandwidth_tb_s is None else f", {p.bandwidth_tb_s:g} TB/s"
    return f"Peaks: {terminal_safe(p.label, one_line=True)}, dense {figures}{bw} ({p.source})"
