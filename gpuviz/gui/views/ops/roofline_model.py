"""What the Roofline view draws, from :class:`~gpuviz.analysis.hardware.Hardware`. Qt-free.

:func:`roofline_points` gives one point per op and shapes with counted FLOPs (intensity,
achieved TFLOP/s, device time, precision); :func:`roof_lines` the device's roofs: for each
precision the points use, ``min(peak, intensity × bandwidth)`` over the plotted range.
"""

from __future__ import annotations

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


def roof_lines(hw: Any, points: RooflinePoints) -> list[Roof]:
    """The roofs of the precisions the points use (bf16 when there are none), over an
    intensity range that holds every point and every ridge."""
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
    lo = min([*points.intensity.tolist(), *ridges]) / 4
    hi = max([*points.intensity.tolist(), *ridges]) * 4
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
