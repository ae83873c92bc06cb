"""Zero-copy drawing of numpy rectangles with one ``QPainter.drawRects`` call.

``QRectF`` is four doubles (x, y, width, height), so a C-contiguous ``(N, 4)`` float64 array
*is* an array of ``QRectF``; shiboken wraps its pointer without copying (STYLE.md).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import shiboken6
from PySide6.QtCore import QRectF
from PySide6.QtGui import QPainter


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
