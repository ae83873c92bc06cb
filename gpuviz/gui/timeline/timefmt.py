"""Times as people read them (``1.25 ms``) and nice axis ticks. No Qt."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

_UNITS = ((1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1.0, "ns"))


def format_ns(ns: float, digits: int = 3) -> str:
    """``ns`` with the largest unit that keeps it >= 1 (``1.23 ms``), ``digits`` significant."""
    a = abs(ns)
    for scale, unit in _UNITS:
        if a >= scale or scale == 1.0:
            v = ns / scale
            decimals = max(0, digits - 1 - math.floor(math.log10(abs(v))) if v else 0)
            return f"{v:.{decimals}f} {unit}"
    return f"{ns:.0f} ns"  # pragma: no cover


def format_at(ns: float, resolution_ns: float) -> str:
    """A point in time in the unit of its size, with enough decimals to resolve
    ``resolution_ns`` (``818.745 ms`` for a point at 818 ms seen at µs resolution)."""
    a = max(abs(ns), abs(resolution_ns), 1.0)
    scale, unit = next((s, u) for s, u in _UNITS if a >= s or s == 1.0)
    res = max(resolution_ns, 1.0) / scale
    decimals = max(0, min(9, -math.floor(math.log10(res) + 1e-9)))
    return f"{ns / scale:.{decimals}f} {unit}"


def tick_step(span_ns: float, width_px: float, min_px: float = 90.0) -> float:
    """A 1-2-5 step (ns) so that ticks are at least ``min_px`` apart."""
    raw = max(span_ns * min_px / max(width_px, 1.0), 1.0)
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if m * mag >= raw:
            return float(m * mag)
    return float(10 * mag)  # pragma: no cover


def ticks(
    t0_ns: float, t1_ns: float, width_px: float, min_px: float = 90.0
) -> tuple[npt.NDArray[np.float64], list[str]]:
    """Tick positions in ``[t0_ns, t1_ns]`` and their labels, in one unit chosen by the step."""
    step = tick_step(t1_ns - t0_ns, width_px, min_px)
    first = math.ceil(t0_ns / step) * step
    pos = np.arange(first, t1_ns + step * 1e-9, step)
    # The unit follows the size of the times shown (818.66 ms, not 818660 µs); the decimals
    # follow the step.
    big = max(abs(t0_ns), abs(t1_ns), step)
    scale, unit = next((s, u) for s, u in _UNITS if big >= s or s == 1.0)
    decimals = max(0, -math.floor(math.log10(step / scale) + 1e-9))
    labels = [f"{p / scale:.{decimals}f} {unit}" for p in pos.tolist()]
    return pos, labels


def place_tick_labels(
    xs: list[float],
    widths: list[float],
    right: float,
    left: float = 0.0,
    keep_out: tuple[float, float] | None = None,
    gap: float = 3.0,
) -> list[float | None]:
    """Where each tick's label starts (x of its left edge), or None where it is not drawn.

    A label goes right of its tick; the last ones, where that would run past ``right``, go
    left of it (the last tick's label was cut off). A label that would cover the range badge
    (``keep_out``: its x span) or the label before it is left out, as is one left of ``left``
    (the lane names' gutter).
    """
    out: list[float | None] = []
    end = left
    for x, w in zip(xs, widths, strict=True):
        start = x + gap if x + gap + w <= right else x - gap - w
        stop = start + w
        covered = keep_out is not None and start < keep_out[1] and stop > keep_out[0]
        if x < left - 1 or start < end or covered:
            out.append(None)
            continue
        out.append(start)
        end = stop + gap
    return out
