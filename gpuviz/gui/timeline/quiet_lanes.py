"""Quiet lanes: GPU streams and their annotation lanes with next to nothing on them. No Qt.

A rank of a serving or NCCL trace can hold a dozen streams that ran a copy or two (NCCL's side
streams, a memset at start-up), each with its annotations lane: expanded, the rank showed 14
lanes of empty rows around the two that did the work. The Timeline hides them until asked
("Quiet lanes" toggle); a search or a jump to a slice on one shows them again.
"""

from __future__ import annotations

import numpy as np

from gpuviz.trace.model import Trace, TrackKind

QUIET_SHARE = 1e-3
"""A GPU lane is quiet when its slices add up to less than this share of the trace's span..."""
QUIET_MAX_SLICES = 4
"""...and it has at most this many (a stream of many short kernels is work, not noise)."""


def quiet_tracks(trace: Trace) -> frozenset[int]:
    """The GPU stream and GPU annotation tracks of at most :data:`QUIET_MAX_SLICES` slices
    whose summed time is below :data:`QUIET_SHARE` of the trace's span (an annotation lane goes with its stream when the
    stream is quiet; a lane with no slices is never laid out anyway)."""
    s, tr = trace.slices, trace.tracks
    if not len(s) or not len(tr):
        return frozenset()
    span = float(trace.slices_end_ns) - float(np.min(s.start_ns))
    if span <= 0:
        return frozenset()
    busy = np.bincount(s.track, weights=s.dur_ns.astype(np.float64), minlength=len(tr))
    gpu = np.isin(tr.kind, (TrackKind.GPU_STREAM, TrackKind.GPU_ANNOTATION))
    count = np.diff(trace.track_offsets)[: len(tr)]
    quiet = gpu & (count > 0) & (count <= QUIET_MAX_SLICES)
    quiet &= busy[: len(tr)] < QUIET_SHARE * span
    # An annotation lane of a quiet stream is quiet too: one stream, one decision.
    streams = {
        (int(tr.rank[t]), int(tr.device[t]), int(tr.stream[t]))
        for t in np.flatnonzero(quiet & (tr.kind == TrackKind.GPU_STREAM)).tolist()
    }
    for t in np.flatnonzero(gpu & (tr.kind == TrackKind.GPU_ANNOTATION)).tolist():
        if (int(tr.rank[t]), int(tr.device[t]), int(tr.stream[t])) in streams:
            quiet[t] = True
    # Never every GPU lane: a trace of tiny kernels shows them all.
    if quiet[gpu & (count > 0)].all():
        return frozenset()
    return frozenset(np.flatnonzero(quiet).tolist())
