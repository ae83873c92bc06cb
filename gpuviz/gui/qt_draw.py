"""Zero-copy drawing from numpy: rectangles with one ``QPainter.drawRects`` call, and pixel
grids as a ``QImage``.

``QRectF`` is four doubles (x, y, width, height), so a C-contiguous ``(N, 4)`` float64 array
*is* an array of ``QRectF``; shiboken wraps its pointer without copying (STYLE.md). A
C-contiguous ``(H, W)`` uint32 array of premultiplied ARGB values is the pixel buffer of a
``Format_ARGB32_Premultiplied`` image.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import shiboken6
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QImage, QPainter


def as_rect_buffer(rects: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """``rects`` as a C-contiguous ``(N, 4)`` float64 array (a copy only when needed)."""
    arr = np.ascontiguousarray(rects, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] != 4:
        raise ValueError(f"expected an (N, 4) array of rectangles, got shape {arr.shape}")
    return arr


def draw_rects(painter: QPainter, rects: npt.NDArray[np.float64]) -> None:
    """Draw ``(x, y, w, h)`` rows with the painter's current pen and brush, in one call.

    Parameters
    ----------
    painter : QPainter
        An active painter.
    rects : float64 array (N, 4)
        C-contiguous; it must stay alive for the duration of the call.
    """
    n = len(rects)
    if n == 0:
        return
    if rects.dtype != np.float64 or not rects.flags.c_contiguous or rects.shape[1:] != (4,):
        rects = as_rect_buffer(rects)
    painter.drawRects(shiboken6.wrapInstance(rects.ctypes.data, QRectF), n)


def argb_image(pixels: npt.NDArray[np.uint32]) -> QImage:
    """A ``QImage`` over a C-contiguous ``(H, W)`` uint32 array of premultiplied ARGB pixels.

    No copy: keep ``pixels`` alive (and unchanged) as long as the image is used.
    """
    if pixels.dtype != np.uint32 or pixels.ndim != 2 or not pixels.flags.c_contiguous:
        raise ValueError(
            f"expected a C-contiguous (H, W) uint32 array, got {pixels.dtype} {pixels.shape}"
        )
    h, w = pixels.shape
    return QImage(pixels.data, w, h, w * 4, QImage.Format.Format_ARGB32_Premultiplied)


def premultiplied_argb(colours: list[QColor]) -> npt.NDArray[np.uint32]:
    """Each colour as a premultiplied ARGB uint32 pixel value (for :func:`argb_image`)."""
    out = np.empty(len(colours), dtype=np.uint32)
    for i, c in enumerate(colours):
        a = c.alpha()
        r, g, b = (round(v * a / 255) for v in (c.red(), c.green(), c.blue()))
        out[i] = (a << 24) | (r << 16) | (g << 8) | b
    return out
