"""A rank's summary lane in the timeline: its GPU work as busy and compute shares (no Qt).

:class:`RankSource` is the row source of a ``(3, rank, -1)`` key (:mod:`gpuviz.trace.lanes`);
:class:`~gpuviz.trace.lod.TimelineLod` builds it and gives its shares per pixel column in a
frame (``Frame.density_*``).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import numpy.typing as npt

from gpuviz.trace.density import BusyProfile, column_edges
from gpuviz.trace.lod_levels import Level, RowSource
from gpuviz.trace.model import Trace

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]


class RankSource(RowSource):
    """The slices a rank's summary lane stands for, and their busy density.

    The lane shows, per pixel, how much of the time the rank's GPUs were busy and how much of
    that was compute (kernels that are not communication). Its slices are the rank's kernels,
    copies and sets on every GPU; a rank without GPU work (a CPU-only gloo job) shows its CPU
    threads' ops instead, with its gloo ranges as the communication. Building it merges the
    slices into two :class:`~gpuviz.trace.density.BusyProfile` s; after that a frame costs two
    binary searches per pixel, however many slices there are.

    Parameters
    ----------
    rows : int64 array
        Slice rows, sorted by start.
    trace : Trace
    comm : bool array, optional
        Per slice row of ``rows``: communication (NCCL kernels, gloo ranges).
    """

    def __init__(self, rows: I64, trace: Trace, comm: npt.NDArray[np.bool_] | None = None) -> None:
        super().__init__(rows, trace)
        self._comm = comm
        self.busy: BusyProfile | None = None
        self.compute: BusyProfile | None = None

    def build_steps(self) -> Iterator[int]:
        """Merge the slices into the busy and compute profiles (one step each)."""
        s = self._trace.slices
        start = s.start_ns[self.rows]
        end = start + s.dur_ns[self.rows]
        raw = Level.raw(start, end, self.rows)  # for hit testing (the lane's hover)
        yield self.n
        busy = BusyProfile(start, end)
        yield self.n
        comm = self._comm
        compute = busy if comm is None or not comm.any() else BusyProfile(start[~comm], end[~comm])
        self.busy, self.compute = busy, compute
        self.levels = [raw]  # published last: a reader sees the profiles once this is set

    def shares(self, t0_ns: float, t1_ns: float, width_px: int) -> tuple[F64, F64]:
        """Busy and compute shares of each pixel column of ``[t0_ns, t1_ns)``."""
        return self.shares_at(column_edges(t0_ns, t1_ns, width_px))

    def shares_at(self, edges: F64) -> tuple[F64, F64]:
        """Busy and compute shares of the columns between consecutive ``edges`` (float ns)."""
        if self.levels is None:
            self.build()
        assert self.busy is not None and self.compute is not None
        busy = self.busy.shares_at(edges)
        if self.compute is self.busy:
            return busy, busy
        return busy, np.minimum(self.compute.shares_at(edges), busy)


__all__ = ["RankSource"]
