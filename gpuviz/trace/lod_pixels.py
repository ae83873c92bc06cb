"""From a frame's rectangles to pixels: joins within a pixel, runs of one colour, raster rows.

:func:`one_per_pixel` and :func:`merge_runs` keep a frame's rectangles to about one per pixel
and row (:meth:`gpuviz.trace.lod.TimelineLod.frame`); :func:`raster_rows` paints them into one
row of pixel values per lane, which the GUI copies down the lane's height. Pure numpy.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

RUN_GAP_PX = 0.5
"""Rectangles of one colour on one row closer than this (pixels) are drawn as one."""


def one_per_pixel(
    start: I64, end: I64, row: I64, dur: I64, t0_ns: int, px_ns: float
) -> tuple[I64, I64, I64]:
    """Join entries (sorted by start) that begin in the same pixel column.

    Buckets are half a pixel to a pixel wide, so up to two entries share a column; the one
    drawn spans both and shows the longer slice (Perfetto: per pixel, the longest slice).
    """
    col = np.floor((start - t0_ns) / px_ns).astype(np.int64)
    new = np.empty(len(col), dtype=bool)
    new[0] = True
    np.not_equal(col[1:], col[:-1], out=new[1:])
    if new.all():
        return start, end, row
    first = np.flatnonzero(new)
    gid = np.cumsum(new) - 1
    dmax = np.maximum.reduceat(dur, first)
    cand = np.flatnonzero(dur == dmax[gid])
    cg = gid[cand]
    win = cand[np.concatenate(([True], cg[1:] != cg[:-1]))]
    return start[first], np.maximum.reduceat(end, first), row[win]


def merge_runs(
    x_px: F64, w_px: F64, y: F64, key: npt.NDArray[np.int16], width_px: int
) -> tuple[F64, F64, F64, npt.NDArray[np.int16]]:
    """Sort rectangles by (colour, row, x) and join same-colour neighbours on a row.

    The input is sorted by (row, x), so a stable sort on the colour alone (a radix sort of
    int16) gives that order. Drawing costs per rectangle; runs of one colour (launches, one
    hot kernel) become one. Coordinates are pixels from the view's left edge, so offsets stay
    exact in float64.
    """
    order = np.argsort(key, kind="stable")
    x, e, yy, k = x_px[order], (x_px + w_px)[order], y[order], key[order]
    n = len(x)
    if n < 2:
        return x, e - x, yy, k
    change = (k[1:] != k[:-1]) | (yy[1:] != yy[:-1])
    gid = np.concatenate(([0], np.cumsum(change)))
    # Shift each (colour, row) group past the previous one so one running maximum serves all.
    span = 8.0 * (width_px + 64) + float(max(-x.min(), 0.0) + max(e.max(), 0.0))
    off = gid * span
    reach = np.maximum.accumulate(e + off)
    new = np.empty(n, dtype=bool)
    new[0] = True
    new[1:] = (x[1:] + off[1:] > reach[:-1] + RUN_GAP_PX) | change
    first = np.flatnonzero(new)
    last = np.concatenate((first[1:], [n])) - 1
    end = reach[last] - off[first]
    return x[first], end - x[first], yy[first], k[first]


def raster_rows(
    x0_px: npt.ArrayLike,
    x1_px: npt.ArrayLike,
    row: npt.ArrayLike,
    value: npt.ArrayLike,
    n_rows: int,
    width_px: int,
) -> npt.NDArray[np.uint32]:
    """Paint horizontal spans into a ``(n_rows, width_px)`` grid of pixel values.

    The timeline draws a frame's rectangles this way instead of one ``drawRects`` entry per
    rectangle: a rectangle one or two pixels wide and a row tall costs a fill call per scan
    line in Qt's raster engine (about 0.5 µs each, measured here: 10 ms for 18k), while this
    costs about a nanosecond per covered cell, and the scan lines of a row are then copied
    whole. Spans are rounded to whole pixels the way a non-antialiased fill rounds them (a
    pixel is covered when its centre is) and are at least one pixel wide; where spans
    overlap, the later one (in the order given) wins, as it would when drawn in that order.

    Parameters
    ----------
    x0_px, x1_px : float arrays
        Left and right edges in pixels from the grid's left edge.
    row : int array
        Grid row of each span (spans on rows outside ``[0, n_rows)`` are skipped).
    value : uint32 array
        Each span's pixel value (e.g. a premultiplied ARGB colour); 0 is left for "empty".
    n_rows, width_px : int
        The grid's size.

    Returns
    -------
    uint32 array (n_rows, width_px)
    """
    n_rows, width_px = max(int(n_rows), 0), max(int(width_px), 1)
    x0 = np.asarray(x0_px, dtype=np.float64)
    x1 = np.asarray(x1_px, dtype=np.float64)
    if len(x0) == 0 or n_rows == 0:
        return np.zeros((n_rows, width_px), dtype=np.uint32)
    # Clip before converting: far-off coordinates must not overflow.
    # Pixel i is covered when its centre i + 0.5 is in [x0, x1): i in [ceil(x0 - ½), ceil(x1 - ½)).
    a = np.ceil(np.clip(x0, -1.0, width_px + 1.0) - 0.5).astype(np.int64)
    b = np.maximum(np.ceil(np.clip(x1, -1.0, width_px + 1.0) - 0.5).astype(np.int64), a + 1)
    np.clip(a, 0, width_px, out=a)
    np.clip(b, 0, width_px, out=b)
    r = np.asarray(row, dtype=np.int64)
    ok = (b > a) & (r >= 0) & (r < n_rows)
    a, b, r = a[ok], b[ok], r[ok]
    val = np.asarray(value, dtype=np.uint32)[ok]
    n = len(a)
    if n == 0:
        return np.zeros((n_rows, width_px), dtype=np.uint32)
    length = b - a
    total = int(length.sum())
    # The cells of every span, concatenated: run k covers base[k] .. base[k] + length[k] - 1.
    base = r * width_px + a
    before = np.cumsum(length) - length
    cells = np.repeat(base - before, length) + np.arange(total, dtype=np.int64)
    # Last span wins, explicitly (plain fancy assignment does not promise an order).
    winner = np.full(n_rows * width_px, -1, dtype=np.int64)
    np.maximum.at(winner, cells, np.repeat(np.arange(n, dtype=np.int64), length))
    # Index -1 (no span) picks the 0 appended at the end.
    return np.append(val, np.uint32(0))[winner].reshape(n_rows, width_px)


__all__ = ["RUN_GAP_PX", "merge_runs", "one_per_pixel", "raster_rows"]
