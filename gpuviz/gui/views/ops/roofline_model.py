"""What the Roofline view draws, from :class:`~gpuviz.analysis.hardware.Hardware`. Qt-free.

:func:`roofline_points` gives one point per op and shapes with counted FLOPs (intensity,
achieved TFLOP/s, device time, precision); :func:`roof_lines` the device's roofs: for each
precision the points use, ``min(peak, intensity × bandwidth)`` over the plotted range. For a
serving trace, :func:`phase_marks` places its prefill and decode phases beside them (issue
50: prefill judged by MFU, decode by MBU) and :func:`phase_line` says each in a line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.roofline import ridge_point

F64 = npt.NDArray[np.float64]


@dataclass
class RooflinePoints:
    """One entry per plotted op-shape.

    Attributes
    ----------
    shapes : list of int
        Indices into ``Hardware.shapes``.
    intensity, tflops, device_ms : float arrays
    precision : list of str
    """

    shapes: list[int]
    intensity: F64
    tflops: F64
    device_ms: F64
    precision: list[str]

    def __len__(self) -> int:
        return len(self.shapes)


@dataclass
class Roof:
    """One precision's roof: a bandwidth slope up to the ridge, then the flat peak.

    Attributes
    ----------
    precision : str
    peak_tflops, bandwidth_tb_s : float
    x, y : float arrays
        The polyline (intensity, TFLOP/s): from ``x_min`` to the ridge, then to ``x_max``.
    """

    precision: str
    peak_tflops: float
    bandwidth_tb_s: float
    x: F64
    y: F64

    @property
    def ridge(self) -> float:
        """The ridge point, FLOP/byte."""
        return ridge_point(self.peak_tflops, self.bandwidth_tb_s)


def roofline_points(hw: Any) -> RooflinePoints:
    """The op-shapes that have an intensity and an achieved TFLOP/s, largest time first."""
    keep = [
        j
        for j, s in enumerate(hw.shapes)
        if s.intensity is not None and s.tflops is not None and s.tflops > 0 and s.intensity > 0
    ]
    shapes = [hw.shapes[j] for j in keep]
    return RooflinePoints(
        shapes=keep,
        intensity=np.array([s.intensity for s in shapes], dtype=np.float64),
        tflops=np.array([s.tflops for s in shapes], dtype=np.float64),
        device_ms=np.array([s.device_ns / 1e6 for s in shapes], dtype=np.float64),
        precision=[s.precision for s in shapes],
    )


def roof_lines(hw: Any, points: RooflinePoints, extra: Sequence[float] = ()) -> list[Roof]:
    """The roofs of the precisions the points use (bf16 when there are none), over an
    intensity range that holds every point, every ridge and the ``extra`` intensities (the
    serving phases' points)."""
    p = hw.peaks.peaks
    if p is None or not p.bandwidth_tb_s:
        return []
    wanted = sorted(set(points.precision) or {"bf16"})
    peaks = [(k, p.tflops(k)) for k in wanted]
    peaks = [(k, v) for k, v in peaks if v]
    if not peaks:
        return []
    bw = float(p.bandwidth_tb_s)
    ridges = [v / bw for _, v in peaks]
    lo = min([*points.intensity.tolist(), *ridges, *extra]) / 4
    hi = max([*points.intensity.tolist(), *ridges, *extra]) * 4
    out = []
    for k, v in peaks:
        ridge = v / bw
        x = np.array([lo, ridge, hi])
        out.append(Roof(k, float(v), bw, x, np.minimum(v, x * bw)))
    return out


def point_text(hw: Any, j: int) -> str:
    """The hover text of op-shape ``j``: op, shapes, TFLOP/s, intensity, bound, roof share."""
    s = hw.shapes[j]
    share = "?" if s.roof_share is None else f"{100 * s.roof_share:.0f}%"
    return "\n".join(
        [
            f"{s.name}  ({s.precision}, {s.calls} call{'s' if s.calls != 1 else ''})",
            f"shapes: {s.input_dims}",
            f"{s.tflops:.1f} TFLOP/s achieved, {s.device_ns / 1e6:.3f} ms on the GPU",
            f"intensity {s.intensity:.1f} FLOP/byte (bytes a lower bound)",
            f"{s.bound or '?'}-bound, {share} of its roof",
        ]
    )


def log_ticks(lo: float, hi: float) -> list[list[tuple[float, str]]]:
    """Axis ticks for log10 coordinates from ``lo`` to ``hi``: labelled powers of ten, and
    unlabelled 2× and 5× between them (pyqtgraph's own log labels crowd into each other)."""
    major: list[tuple[float, str]] = []
    minor: list[tuple[float, str]] = []
    for k in range(int(np.floor(lo)), int(np.ceil(hi)) + 1):
        value = 10.0**k
        major.append((float(k), f"{value:g}" if -3 <= k <= 5 else f"1e{k}"))
        minor += [(float(np.log10(m * value)), "") for m in (2, 5)]
    return [major, minor]


@dataclass
class PhaseMark:
    """One serving phase beside the roofline: its steps' FLOPs and bytes over their time.

    A prefill is judged on the compute side (its MFU, its achieved TFLOP/s), a decode on the
    memory side (its MBU, the bytes it must read over its time); a mixed step on both.

    Attributes
    ----------
    phase : str
    steps : int
    time_ns : float
    flops : float or None
        Counted from shapes over the phase's steps (a floor where coverage is partial); None
        where a step has none.
    nbytes : int or None
        Weights and KV cache the steps must read (:mod:`gpuviz.analysis.mbu`, a floor).
    tflops, tb_s, intensity : float or None
        ``flops / time``, ``nbytes / time``, ``flops / nbytes``: where the phase sits on the
        roofline (a point only where both are known).
    mfu, mbu : float or None
        The phase's own (:class:`~gpuviz.analysis.serving_phases.PhaseFigures`).
    mfu_lower_bound : bool
    mfu_note, mbu_note : str
    """

    phase: str
    steps: int
    time_ns: float
    flops: float | None
    nbytes: int | None
    tflops: float | None
    tb_s: float | None
    intensity: float | None
    mfu: float | None
    mbu: float | None
    mfu_lower_bound: bool
    mfu_note: str
    mbu_note: str


def phase_marks(report: Any) -> list[PhaseMark]:
    """The prefill, mixed and decode phases of a serving report
    (:class:`~gpuviz.analysis.serving_phases.ServingReport`), in that order."""
    out = []
    for p in report.phases:
        if p.phase not in ("prefill", "mixed", "decode"):
            continue
        rows = [r for r in report.records if r.phase == p.phase]
        flops = [r.flops for r in rows]
        nbytes = [r.bytes_read for r in rows]
        f = None if any(x is None for x in flops) else float(sum(x or 0.0 for x in flops))
        b = None if any(x is None for x in nbytes) else int(sum(x or 0 for x in nbytes))
        t = float(p.total_ns)
        out.append(
            PhaseMark(
                phase=p.phase,
                steps=p.steps,
                time_ns=t,
                flops=f,
                nbytes=b,
                tflops=None if f is None or t <= 0 else f / t / 1e3,  # FLOP/ns = 1e-3 TFLOP/s
                tb_s=None if b is None or t <= 0 else b / t / 1e3,  # byte/ns = 1e-3 TB/s
                intensity=None if f is None or not b else f / b,
                mfu=p.mfu,
                mbu=p.mbu,
                mfu_lower_bound=p.mfu_is_lower_bound,
                mfu_note=p.mfu_note,
                mbu_note=p.mbu_note,
            )
        )
    return out


def phase_line(mark: PhaseMark, bandwidth_tb_s: float | None) -> str:
    """One line for the legend beside the roofline: a prefill's MFU and TFLOP/s, a decode's
    MBU and the bandwidth it used (a mixed phase's both); unknown figures say why."""
    n = f"{mark.steps} step{'s' if mark.steps != 1 else ''}"
    ge = ">= " if mark.mfu_lower_bound else ""
    mfu = (
        f"MFU unknown ({mark.mfu_note or 'no FLOPs'})"
        if mark.mfu is None
        else f"MFU {ge}{_pct(mark.mfu)}"
        + ("" if mark.tflops is None else f", {mark.tflops:.3g} TFLOP/s")
    )
    of = "" if not bandwidth_tb_s else f" of {bandwidth_tb_s:g} TB/s"
    mbu = (
        f"MBU unknown ({mark.mbu_note or 'no bytes'})"
        if mark.mbu is None
        else f"MBU >= {_pct(mark.mbu)}"
        + ("" if mark.tb_s is None else f", reads >= {_rate(mark.tb_s)}{of}")
    )
    where = "" if mark.intensity is None else f", at {mark.intensity:.3g} FLOP/byte (both floors)"
    sides = {"prefill": [mfu], "decode": [mbu], "mixed": [mfu, mbu]}[mark.phase]
    return f"{mark.phase} ({n}): {'; '.join(sides)}{where}"


def _pct(x: float) -> str:
    return f"{100 * x:.2g}%" if x < 0.01 else f"{100 * x:.1f}%"


def _rate(tb_s: float) -> str:
    return f"{tb_s:.3g} TB/s" if tb_s >= 1 else f"{1e3 * tb_s:.3g} GB/s"
