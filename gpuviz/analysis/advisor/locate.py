"""Where a finding's evidence lies in the trace: its time span and the slices to outline."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.advisor.findings import Evidence
from gpuviz.trace.model import NONE, Trace, TrackKind

I64 = npt.NDArray[np.int64]


def evidence_span(evidence: Iterable[Evidence]) -> tuple[int, int] | None:
    """The earliest start and latest end of some evidence (ns), or None when there is none."""
    ev = list(evidence)
    if not ev:
        return None
    return min(e.start_ns for e in ev), max(e.end_ns for e in ev)


def evidence_rows(trace: Trace, evidence: Iterable[Evidence]) -> I64:
    """Slice rows that lie in the evidence: on its lanes, overlapping its ranges.

    An evidence with a stream picks that GPU stream's lanes; with a thread, that CPU thread's;
    with only a device, every lane of that GPU; with neither, every lane of its rank.
    """
    s, t = trace.slices, trace.tracks
    gpu = np.isin(t.kind, [int(TrackKind.GPU_STREAM), int(TrackKind.GPU_ANNOTATION)])
    cpu = np.isin(t.kind, [int(TrackKind.CPU_THREAD), int(TrackKind.CPU_ANNOTATION)])
    out: list[I64] = []
    for e in evidence:
        rank = NONE if e.rank is None else e.rank
        lanes = t.rank == rank
        if e.stream is not None:
            lanes &= (
                gpu
                & (t.stream == e.stream)
                & (t.device == (e.device if e.device is not None else t.device))
            )
        elif e.thread is not None:
            lanes &= cpu & (t.tid == e.thread)
        elif e.device is not None:
            lanes &= gpu & (t.device == e.device)
        for track in np.flatnonzero(lanes).tolist():
            span = trace.track_range(track)
            start = s.start_ns[span]
            # Inclusive: a range that ends where a slice starts (an arrival) still shows it.
            hit = np.flatnonzero((start <= e.end_ns) & (start + s.dur_ns[span] >= e.start_ns))
            out.append(hit.astype(np.int64) + span.start)
    if not out:
        return np.empty(0, dtype=np.int64)
    return np.unique(np.concatenate(out))
