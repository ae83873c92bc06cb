"""Everything the Memory view's snapshot mode draws for one device, computed once, off the GUI
thread: the live and reserved curves, the LOD pyramid, each allocation's site, the markers.

Times are ns from an origin: the trace's zero when the snapshot is shown with a Kineto trace
whose clock it shares (PyTorch stamps both from the same clock, converted to Unix time; on
an H100 they agreed to about a microsecond), else the snapshot's first entry.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.allocator import (
    BEFORE_HISTORY,
    DeviceFigures,
    device_figures,
    live_bytes_curve,
    site_of,
)
from gpuviz.analysis.allocator_state import AnnotationRange, annotation_ranges, reserved_bytes_curve
from gpuviz.trace.allocator_columns import Allocations, AllocatorSnapshot
from gpuviz.trace.allocator_lod import ColumnPyramid, LiveRows
from gpuviz.trace.stacking import stack_depths

I64 = npt.NDArray[np.int64]

CLOCK_SLACK_NS = 60 * 10**9
"""A snapshot is drawn on a trace's time axis when its window and the trace's span overlap, or
are less than a minute apart; else their clocks are taken to differ."""


@dataclass
class AnnotationLanes:
    """The annotation ranges laid out in rows: nested ranges below their parents.

    Attributes
    ----------
    start_ns, end_ns : int64
        From the origin (an open range ends at the last entry).
    row : int64
        0 for the outermost ranges.
    group : int64
        The range's kind (its name before ``#``), for colour.
    names : list of str
    """

    start_ns: I64
    end_ns: I64
    row: I64
    group: I64
    names: list[str]

    def __len__(self) -> int:
        return len(self.start_ns)


def annotation_lanes(
    ranges: list[AnnotationRange], origin_ns: int, last_ns: int
) -> AnnotationLanes:
    """Lay out annotation ranges in rows (:func:`gpuviz.trace.stacking.stack_depths`)."""
    start = np.array([r.start_us * 1000 - origin_ns for r in ranges], dtype=np.int64)
    end = np.array(
        [last_ns if r.end_us is None else r.end_us * 1000 - origin_ns for r in ranges],
        dtype=np.int64,
    )
    dur = np.maximum(end - start, 0)
    order = np.lexsort((-dur, start))
    row = np.zeros(len(ranges), dtype=np.int64)
    if len(ranges):
        row[order] = stack_depths(np.zeros(len(order), np.int32), start[order], dur[order])
    names = [r.name for r in ranges]
    kinds = {k: i for i, k in enumerate(dict.fromkeys(n.split("#")[0] for n in names))}
    group = np.array([kinds[n.split("#")[0]] for n in names], dtype=np.int64)
    return AnnotationLanes(start, start + dur, row, group, names)


@dataclass
class MemoryTimeline:
    """One device of one snapshot, ready to draw.

    Attributes
    ----------
    label : str
        ``cuda:N`` (with the file's name when a tab shows several snapshots).
    snap : AllocatorSnapshot
    device : int
    figures : DeviceFigures
    origin_ns : int
        Absolute time (Unix ns) of ``t = 0``.
    on_trace_axis : bool
        True when the origin is the trace's zero (shared clocks).
    t_ns : int64
        Each entry's time from the origin.
    live, reserved : int64
        Live block bytes and reserved bytes after each entry.
    baseline : int
        Live bytes when the window began.
    pyramid : ColumnPyramid
    live_rows : LiveRows
        Which allocations may be live at the entries a frame shows (built here, in the
        loader's thread: 52 ms at 12M entries, half the first frame otherwise).
    top_bytes : int
        The most bytes reserved or live at any time (at least 1): a view's top (here too: two
        passes over 12M entries took 9 ms of the view's making).
    row_site : int64
        Each allocation row's site: a frame id, ``NO_SITE`` or ``BEFORE_HISTORY``.
    site_ids, row_site_index
        The distinct sites, and each row's index into them (so a view colours rows with one
        gather).
    annotations : list of AnnotationRange
    """

    label: str
    snap: AllocatorSnapshot
    device: int
    figures: DeviceFigures
    origin_ns: int
    on_trace_axis: bool
    t_ns: I64
    live: I64
    reserved: I64
    baseline: int
    pyramid: ColumnPyramid
    live_rows: LiveRows
    top_bytes: int
    row_site: I64
    site_ids: I64
    row_site_index: npt.NDArray[np.intp]
    annotations: list[AnnotationRange] = field(default_factory=list)
    lanes: AnnotationLanes | None = None

    @property
    def allocations(self) -> Allocations:
        """The device's allocation rows, in stacking order."""
        return self.snap.device_allocations(self.device)

    def time_of(self, entry: int) -> int:
        """ns from the origin of an entry (``-1``: the window's start)."""
        if len(self.t_ns) == 0:
            return 0
        return int(self.t_ns[max(entry, 0)])

    def entry_at(self, t_ns: float) -> int:
        """The last entry at or before ``t_ns`` (``-1`` before the first)."""
        return int(np.searchsorted(self.t_ns, t_ns, side="right")) - 1

    def live_at(self, entry: int) -> int:
        """Live bytes after ``entry``."""
        return self.baseline if entry < 0 or len(self.live) == 0 else int(self.live[entry])


def clocks_match(
    snap_first_us: int, snap_last_us: int, trace_zero_ns: int, trace_end_ns: int
) -> bool:
    """Whether a snapshot window and a trace (absolute ns) share a clock (see CLOCK_SLACK_NS)."""
    a0, a1 = snap_first_us * 1000, snap_last_us * 1000
    b0, b1 = trace_zero_ns, trace_zero_ns + trace_end_ns
    gap = max(a0 - b1, b0 - a1, 0)
    return gap <= CLOCK_SLACK_NS and b0 > 10**17  # a Unix time in ns, not a relative one


def build_timeline(
    snap: AllocatorSnapshot,
    device: int,
    label: str = "",
    trace_zero_ns: int | None = None,
    trace_end_ns: int = 0,
) -> MemoryTimeline:
    """The drawing model of one device (its figures included)."""
    tr = snap.trace_columns(device)
    alloc = snap.device_allocations(device)
    baseline, live = live_bytes_curve(alloc, len(tr))
    first = int(tr.time_us[0]) if len(tr) else 0
    last = int(tr.time_us[-1]) if len(tr) else 0
    shared = (
        trace_zero_ns is not None
        and len(tr) > 0
        and clocks_match(first, last, trace_zero_ns, trace_end_ns)
    )
    origin = int(trace_zero_ns) if shared and trace_zero_ns is not None else first * 1000
    # The pyramid needs non-decreasing times, and a file's may step back (an entry recorded
    # without a time reads 0): such an entry is drawn at the latest time before it.
    t_ns = np.maximum.accumulate(tr.time_us.astype(np.int64)) * 1000 - origin
    row_site = site_of(snap, alloc.stack)
    row_site[(alloc.stack < 0) & (alloc.start < 0)] = BEFORE_HISTORY
    site_ids, row_site_index = np.unique(row_site, return_inverse=True)
    ranges = annotation_ranges(snap, device)
    reserved = reserved_bytes_curve(snap, device)
    lanes = annotation_lanes(ranges, origin, int(t_ns[-1]) if len(t_ns) else 0)
    return MemoryTimeline(
        label=label or f"cuda:{device}",
        snap=snap,
        device=device,
        figures=device_figures(snap, device),
        origin_ns=origin,
        on_trace_axis=shared,
        t_ns=t_ns,
        live=live,
        reserved=reserved,
        baseline=baseline,
        pyramid=ColumnPyramid(t_ns, live),
        live_rows=LiveRows(alloc.start, alloc.end),
        top_bytes=max(
            int(reserved.max()) if len(reserved) else 0,
            int(live.max()) if len(live) else 0,
            baseline,
            1,
        ),
        row_site=row_site,
        site_ids=site_ids.astype(np.int64),
        row_site_index=row_site_index.reshape(-1),
        annotations=ranges,
        lanes=lanes,
    )


def build_timelines(
    snap: AllocatorSnapshot,
    name: str = "",
    trace_zero_ns: int | None = None,
    trace_end_ns: int = 0,
) -> list[MemoryTimeline]:
    """One model per device of a snapshot."""
    out = []
    for d in snap.devices():
        label = f"{name} cuda:{d}" if name else f"cuda:{d}"
        out.append(build_timeline(snap, d, label, trace_zero_ns, trace_end_ns))
    return out
