"""The slices of a trace in (track, start, longest first) order, and their stacking rows.

The importer sorts every slice of a trace once, and stacks each track's slices into rows
(:func:`gpuviz.trace.stacking.stack_depths`). On a folder of 64 rank files of 100k kernels
each (37M slices, 16 cores), doing that over all the slices at once took about 6 s of the
importer's serial time. The files of a rank folder hold slices of their own ranks' tracks
only, and the tracks are numbered rank by rank, so each file's slices sort and stack apart
from the others'. Where they do (:func:`file_spans`), the work runs file by file on threads,
since numpy's sorts, takes and arithmetic release the GIL. The result is the same either way:
within a file the sort keys are the same, the sort is stable, and no track spans two files.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import pairwise
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from gpuviz.trace.arrays import mapped_empty
from gpuviz.trace.stacking import stack_depths

Array = npt.NDArray[Any]
T = TypeVar("T")

PARALLEL_MIN_ROWS = 1 << 20
"""Below this many slices the threads' start-up costs more than they save."""


def file_spans(track: Array, counts: Sequence[int]) -> list[tuple[int, int]] | None:
    """Each file's row range, if the files' tracks do not interleave; else None.

    Parameters
    ----------
    track : array
        The joined slices' track column, files one after another.
    counts : sequence of int
        How many slices each file gave, in that order.

    Returns
    -------
    list of (start, stop), or None
        None where one file's tracks are not all below the next file's (two files claiming
        one rank, say): the slices must then be sorted together.
    """
    spans, at, top = [], 0, -1
    for n in counts:
        if n:
            part = track[at : at + n]
            if int(part.min()) <= top:
                return None
            top = int(part.max())
            spans.append((at, at + n))
        at += n
    return spans


def slice_order(track: Array, start: Array, dur: Array) -> npt.NDArray[np.int64]:
    """Sort order by (track, start, -dur): parents before the children they start with."""
    if not len(track):
        return np.empty(0, np.int64)
    # One int64 key where the span allows it (it nearly always does): much faster than lexsort.
    span = int(start.max()) - int(start.min()) + 1
    n_tracks = int(track.max()) + 1
    if span < (1 << 62) // max(n_tracks, 1):
        key = track.astype(np.int64) * span + (start - start.min())
        order = np.argsort(key, kind="stable")
        key = key[order]
        tie = np.flatnonzero(key[1:] == key[:-1])
        if tie.size:  # equal (track, start): longer first, so that parents precede children
            # Only the runs of equal keys are reordered (they keep their places): a small sort.
            at = np.union1d(tie, tie + 1)
            rows = order[at]
            order[at] = rows[np.lexsort((-dur[rows], key[at]))]
        return order
    return np.lexsort((-dur, start, track))  # pragma: no cover - spans of centuries


class SliceSorter:
    """Sorts, reorders and stacks joined slice columns, file by file where it may.

    Parameters
    ----------
    track, start, dur : arrays
        The joined columns (tracks already numbered as in the trace).
    counts : sequence of int
        Slices per file, in the order they were joined.
    threads : int
        At most this many threads (1: everything on the caller's thread).
    by_track : int
        Where the sorter has no threads of its own (a single file, or under a million
        slices) and this is over 1: the slices are grouped by track first, and runs of whole
        tracks are sorted, reordered and stacked on this many threads
        (:meth:`_by_track`). The order is the same.

    Attributes
    ----------
    order : int64 array
        The sort order.
    stacked : tuple of arrays, or None
        With ``by_track``: the sorted ``track``, ``start`` and ``dur`` and the stacking rows,
        made on the way (:meth:`take` and :meth:`depths` need not be called for them).
    """

    def __init__(
        self,
        track: Array,
        start: Array,
        dur: Array,
        counts: Sequence[int],
        threads: int,
        by_track: int = 1,
    ) -> None:
        self.spans = file_spans(track, counts) if len(track) >= PARALLEL_MIN_ROWS else None
        self.threads = max(1, min(threads, len(self.spans or ())))
        self.stacked: tuple[Array, Array, Array, npt.NDArray[np.int16]] | None = None
        if self.threads == 1 and by_track > 1 and len(track):
            self.order, self.stacked = self._by_track(track, start, dur, by_track)
        else:
            self.order = self._order(track, start, dur)

    def _map(
        self,
        fn: Callable[[int, int], T],
        spans: Sequence[tuple[int, int]],
        threads: int | None = None,
    ) -> list[T]:
        threads = self.threads if threads is None else threads
        if threads == 1:
            return [fn(a, b) for a, b in spans]
        from concurrent.futures import ThreadPoolExecutor  # only for large imports

        with ThreadPoolExecutor(threads, thread_name_prefix="gpuviz-sort") as pool:
            return list(pool.map(lambda ab: fn(*ab), spans))

    def _order(self, track: Array, start: Array, dur: Array) -> npt.NDArray[np.int64]:
        if self.spans is None or self.threads == 1:
            return slice_order(track, start, dur)
        parts = self._map(
            lambda a, b: slice_order(track[a:b], start[a:b], dur[a:b]) + a, self.spans
        )
        return np.concatenate(parts)

    def _by_track(
        self, track: Array, start: Array, dur: Array, threads: int
    ) -> tuple[npt.NDArray[np.int64], tuple[Array, Array, Array, npt.NDArray[np.int16]]]:
        """The order, and the sorted ``track``, ``start``, ``dur`` and stacking rows, made
        run of tracks by run of tracks on threads.

        A 100k-kernel file on a 16-core H200 (325k slices, 2026-11-29): its one sort took
        20 ms and its stacking 30 ms, one after the other, on one thread each. Grouped by
        track first (a radix sort where the ids fit 16 bits, as they nearly always do), each
        run of whole tracks sorts by (start, longest first) and stacks on its own. Within a track the
        slices keep the file's order before they sort, as the one stable sort kept them,
        and ties are broken the same way, so the order is the same. The file's assembly then
        took 56-64 ms against 67-72 ms (another lease, 4 runs each, in one process); its
        largest runs are two CPU threads of a third of the slices each.
        """
        n = len(track)
        fits = 0 <= int(track.min()) and int(track.max()) < 1 << 16
        grouped = np.argsort(track.astype(np.uint16) if fits else track, kind="stable")
        track_sorted = track[grouped]  # grouped by track is sorted by track
        order = np.empty(n, np.int64)
        start_sorted = mapped_empty(n, start.dtype)
        dur_sorted = mapped_empty(n, dur.dtype)
        depth = np.empty(n, np.int16)

        def run(a: int, b: int) -> None:
            rows = grouped[a:b]
            s, d = start[rows], dur[rows]
            sub = slice_order(track_sorted[a:b], s, d)
            np.take(rows, sub, out=order[a:b])
            np.take(s, sub, out=start_sorted[a:b])
            np.take(d, sub, out=dur_sorted[a:b])
            depth[a:b] = stack_depths(track_sorted[a:b], start_sorted[a:b], dur_sorted[a:b])

        runs = track_runs(track_sorted, threads)
        self._map(run, runs, len(runs))
        return order, (track_sorted, start_sorted, dur_sorted, depth)

    def take(self, column: Array) -> Array:
        """``column`` in the sorted order."""
        out = mapped_empty(len(self.order), column.dtype)
        if self.threads == 1:
            return np.take(column, self.order, out=out)
        step = -(-len(out) // (4 * self.threads))  # a few pieces a thread evens them out
        pieces = [(a, min(a + step, len(out))) for a in range(0, len(out), step)]

        def piece(a: int, b: int) -> None:
            np.take(column, self.order[a:b], out=out[a:b])

        self._map(piece, pieces)
        return out

    def release(self) -> None:
        """Drop the order (8 bytes a slice): the sorter takes nothing more."""
        self.order = np.empty(0, np.int64)

    def depths(self, track: Array, start: Array, dur: Array) -> npt.NDArray[np.int16]:
        """The stacking rows of the sorted slices (:func:`stack_depths`), file by file where
        the sorter has threads (a single file on many cores: :attr:`stacked` has them)."""
        if self.spans is None or self.threads == 1:
            return stack_depths(track, start, dur)
        parts = self._map(lambda a, b: stack_depths(track[a:b], start[a:b], dur[a:b]), self.spans)
        return np.concatenate(parts)


def track_runs(track: Array, pieces: int) -> list[tuple[int, int]]:
    """Up to ``pieces`` row ranges of about equal length over ``track`` (sorted), each cut
    where a track begins (the nearest such place), so that no track spans two."""
    n = len(track)
    cuts = {0, n}
    for k in range(1, pieces):
        at = k * n // pieces
        first = int(np.searchsorted(track, track[at], side="left"))
        after = int(np.searchsorted(track, track[at], side="right"))
        cuts.add(first if at - first <= after - at else after)
    edges = sorted(cuts)
    return [(a, b) for a, b in pairwise(edges) if b > a]


__all__ = ["PARALLEL_MIN_ROWS", "SliceSorter", "file_spans", "slice_order", "track_runs"]
