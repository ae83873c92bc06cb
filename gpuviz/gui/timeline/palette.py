"""Colours of the timeline: one per slice kind, a stable per-name hue for kernels and cpu ops."""

from __future__ import annotations

from PySide6.QtGui import QColor

from gpuviz.trace.density import BUSY_LEVELS, MIX_LEVELS
from gpuviz.trace.lod import CPU_KEY0, KERNEL_KEY0, N_COLOUR_KEYS, N_CPU_SHADES, N_KERNEL_HUES
from gpuviz.trace.model import Kind

_KIND_COLOURS = {
    Kind.OTHER: "#a0a4a8",
    Kind.KERNEL: "#5c6bc0",
    Kind.MEMCPY: "#2e9d4f",
    Kind.MEMSET: "#a8a032",
    Kind.RUNTIME: "#f0a04b",
    Kind.CPU_OP: "#8fa8bf",
    Kind.USER_ANNOTATION: "#b7a3e0",
    Kind.GPU_USER_ANNOTATION: "#d4a5de",
    Kind.PYTHON_FUNCTION: "#a9bcc9",
    Kind.CUDA_SYNC: "#e0524f",
}

# Muted blue-greys for cpu ops, so kernels (saturated hues) stand out.
_CPU_SHADES = ["#8fa8bf", "#a3b7c9", "#9db3a7", "#b0b4cf", "#b8ac98", "#a7c1cf"]


def colour_table() -> list[QColor]:
    """``QColor`` of each colour key of :class:`gpuviz.trace.lod.ColourKeys`."""
    out = [QColor("#a0a4a8") for _ in range(N_COLOUR_KEYS)]
    for kind, c in _KIND_COLOURS.items():
        out[int(kind)] = QColor(c)
    for i in range(N_KERNEL_HUES):
        # Spread hues, and alternate lightness so neighbouring hues differ more.
        hue = (i * 360 // N_KERNEL_HUES + 200) % 360
        # toRgb: a colour kept in HSV is converted again on every fill (measured 2-3× slower).
        out[KERNEL_KEY0 + i] = QColor.fromHsv(
            hue, 150 if i % 2 else 120, 215 if i % 2 else 235
        ).toRgb()
    for i in range(N_CPU_SHADES):
        out[CPU_KEY0 + i] = QColor(_CPU_SHADES[i % len(_CPU_SHADES)])
    return out


COMPUTE_COLOUR = "#3567c8"
"""A rank summary lane's colour where its GPUs compute."""
COMM_COLOUR = "#e07b28"
"""…and where they only communicate (NCCL, gloo), copy or set memory."""


def density_colours() -> list[QColor]:
    """``QColor`` of each code of :func:`gpuviz.trace.density.density_codes`.

    The hue goes from :data:`COMM_COLOUR` (no compute) to :data:`COMPUTE_COLOUR` (all
    compute); the opacity follows the busy share, so an idle stretch shows the lane's
    background and a fully busy one the full colour. Code 0 (idle) is transparent.
    """
    a, b = QColor(COMM_COLOUR), QColor(COMPUTE_COLOUR)
    out = []
    for level in range(BUSY_LEVELS):
        alpha = round(255 * (0.12 + 0.88 * level / (BUSY_LEVELS - 1))) if level else 0
        for mix in range(MIX_LEVELS):
            f = mix / (MIX_LEVELS - 1)
            out.append(
                QColor(
                    round(a.red() + (b.red() - a.red()) * f),
                    round(a.green() + (b.green() - a.green()) * f),
                    round(a.blue() + (b.blue() - a.blue()) * f),
                    alpha,
                )
            )
    return out
