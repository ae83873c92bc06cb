"""What the GPU work of one rank waits for, and what waits for it: the GPU side of a step's
dependency graph (:mod:`gpuviz.analysis.dep_graph`).

- **Synchronize calls.** ``cudaDeviceSynchronize`` returns once every stream of the device has
  run all the work launched before it; ``cudaStreamSynchronize`` once its stream has;
  ``cudaEventSynchronize`` once the work before the event's record has. Kineto says which
  stream or event in its ``cuda_sync`` events (``Stream Sync``, ``Context Sync``, ``Event
  Sync``, with the call's correlation id; recorded when the profiler runs with
  ``_ExperimentalConfig(enable_cuda_sync_events=True)``). Where it does not, the call waited for
  the GPU work launched before it that ended last while it was blocked (observed, not assumed).
- **Blocking copies.** A runtime call whose own copy or set (same correlation) ends before the
  call returns held the host until then (``cudaMemcpy``, a pageable ``cudaMemcpyAsync``).
- **Event waits.** A ``Stream Wait Event`` ``cuda_sync`` event names the record call
  (``wait_on_cuda_event_record_corr_id``) and its stream (``wait_on_stream``): the next work
  launched on the waiting stream after ``cudaStreamWaitEvent`` starts after the last work
  launched on the recorded stream before ``cudaEventRecord`` ends. A rank with no ``cuda_sync``
  event at all gets *inferred* waits instead: GPU work that started more than
  :data:`INFER_GAP_NS` after both its launch and the work before it on its stream, within
  :data:`INFER_TOLERANCE_NS` of the end of work on another stream, waited for that work.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpuviz.trace.model import Kind, Trace

I64 = npt.NDArray[np.int64]

INFER_GAP_NS = 20_000
"""GPU work that starts this much after its launch and its stream's previous work waited for
something (an empty stream starts launched work a few µs after the launch)."""

INFER_TOLERANCE_NS = 10_000
"""How soon after the end of other work the waiting work starts, to be taken for its wait."""

_SYNC_WORD = "Synchronize"


@dataclass
class RankGpu:
    """One rank's GPU work in a step, with what each piece of it was launched by.

    Attributes
    ----------
    rows : int64
        Slice rows (kernels, copies, sets), ordered by track then start.
    track : int64
        Their GPU track.
    start_ns, end_ns : int64
    launch_row : int64
        The runtime (or driver) call with the same correlation (-1: not in the trace).
    launch_start_ns : int64
        Its start (the minimum int64 where there is none: launched before the trace).
    """

    rows: I64
    track: I64
    start_ns: I64
    end_ns: I64
    launch_row: I64
    launch_start_ns: I64

    def __len__(self) -> int:
        return len(self.rows)

    def last_launched_before(self, tracks: I64, t_ns: int) -> list[int]:
        """Per track of ``tracks``: the index of the last work launched before ``t_ns``."""
        out = []
        for tr in tracks.tolist():
            idx = np.flatnonzero(self.track == tr)
            if len(idx) == 0:
                continue
            # Work runs on a stream in launch order: the launch times along it only grow.
            launched = np.maximum.accumulate(self.launch_start_ns[idx])
            k = int(np.searchsorted(launched, t_ns, side="left")) - 1
            if k >= 0:
                out.append(int(idx[k]))
        return out


def rank_gpu(trace: Trace, rank: int, w0: int, w1: int) -> RankGpu:
    """The kernels, copies and sets of ``rank`` that start in ``[w0, w1)``."""
    s, t = trace.slices, trace.tracks
    gpu = trace.gpu_activity_mask() & (t.rank[s.track] == rank)
    rows = np.flatnonzero(gpu & (s.start_ns >= w0) & (s.start_ns < w1)).astype(np.int64)
    rows = rows[np.lexsort((s.start_ns[rows], s.track[rows]))]
    launch = trace.launches_of(rows) if len(rows) else np.empty(0, dtype=np.int64)
    none = np.iinfo(np.int64).min
    lstart = np.where(launch >= 0, s.start_ns[np.maximum(launch, 0)], none)
    start = s.start_ns[rows].astype(np.int64)
    return RankGpu(
        rows=rows,
        track=s.track[rows].astype(np.int64),
        start_ns=start,
        end_ns=start + s.dur_ns[rows],
        launch_row=launch.astype(np.int64),
        launch_start_ns=lstart.astype(np.int64),
    )


@dataclass
class SyncInfo:
    """``cuda_sync`` events of one rank, by the correlation id of their runtime call."""

    kind: dict[int, str]
    args: dict[int, dict[str, object]]
    any_events: bool


def sync_info(trace: Trace, rank: int) -> SyncInfo:
    """Read the rank's ``cuda_sync`` events (there are a few per step: their args are read
    one by one)."""
    s, t = trace.slices, trace.tracks
    rows = np.flatnonzero((s.kind == Kind.CUDA_SYNC) & (t.rank[s.track] == rank))
    kinds: dict[int, str] = {}
    args: dict[int, dict[str, object]] = {}
    for r in rows.tolist():
        a = trace.args.get(int(s.args[r]))
        corr = a.get("correlation", int(s.correlation[r]))
        if not isinstance(corr, int):
            continue
        kinds[corr] = str(a.get("cuda_sync_kind") or trace.name_of(r))
        args[corr] = a
    return SyncInfo(kinds, args, len(rows) > 0)


def runtime_by_correlation(trace: Trace, rank: int) -> dict[int, int]:
    """The rank's runtime calls, correlation id -> row (for record and wait calls)."""
    s, t = trace.slices, trace.tracks
    rows = np.flatnonzero(
        (s.kind == Kind.RUNTIME) & (t.rank[s.track] == rank) & (s.correlation >= 0)
    )
    return dict(zip(s.correlation[rows].tolist(), rows.tolist(), strict=True))


def _stream_tracks(trace: Trace, g: RankGpu, stream: object) -> I64:
    tracks = np.unique(g.track)
    if not isinstance(stream, int) or stream < 0 or stream >= 0xFFFF_FFFF:
        return tracks  # a context sync (stream -1 or 2**32-1): every stream
    return tracks[trace.tracks.stream[tracks] == stream]


def launched_by(g: RankGpu) -> dict[int, list[int]]:
    """Launch row -> the GPU work (indices into ``g``) it launched."""
    out: dict[int, list[int]] = {}
    for i, row in enumerate(g.launch_row.tolist()):
        if row >= 0:
            out.setdefault(row, []).append(i)
    return out


def sync_targets(
    trace: Trace,
    g: RankGpu,
    call_row: int,
    info: SyncInfo,
    corr_rows: dict[int, int],
    own_work: dict[int, list[int]],
) -> list[int]:
    """The GPU work (indices into ``g``) the blocking call ``call_row`` returned after.

    Empty for a call that is not blocking. ``own_work`` is :func:`launched_by` of ``g``.
    """
    s = trace.slices
    c0 = int(s.start_ns[call_row])
    c1 = c0 + int(s.dur_ns[call_row])
    name = trace.name_of(call_row)
    # Its own copy or set, done before it returned: a blocking copy.
    out = [i for i in own_work.get(call_row, ()) if g.end_ns[i] <= c1]
    if _SYNC_WORD not in name:
        return out
    corr = int(s.correlation[call_row])
    kind = info.kind.get(corr)
    a = info.args.get(corr, {})
    if kind in ("Context Sync", "Stream Sync"):
        out += g.last_launched_before(_stream_tracks(trace, g, a.get("stream")), c0)
        return out
    if kind == "Event Sync":
        rec = a.get("wait_on_cuda_event_record_corr_id")
        rec_row = corr_rows.get(rec) if isinstance(rec, int) else None
        if rec_row is not None:
            tracks = _stream_tracks(trace, g, a.get("wait_on_stream"))
            out += g.last_launched_before(tracks, int(s.start_ns[rec_row]))
            return out
    if "Device" in name:
        out += g.last_launched_before(np.unique(g.track), c0)
        return out
    # Not said: the work launched before the call that ended last while it was blocked.
    cand = np.flatnonzero((g.launch_start_ns < c0) & (g.end_ns <= c1) & (g.end_ns > c0))
    if len(cand):
        out.append(int(cand[np.argmax(g.end_ns[cand])]))
    return out


def event_waits(
    trace: Trace, g: RankGpu, info: SyncInfo, corr_rows: dict[int, int]
) -> list[tuple[int, int]]:
    """``(source, waiting)`` pairs of GPU work (indices into ``g``) joined by event waits."""
    s = trace.slices
    out = []
    for corr, kind in info.kind.items():
        if kind != "Stream Wait Event":
            continue
        a = info.args[corr]
        rec = a.get("wait_on_cuda_event_record_corr_id")
        rec_row = corr_rows.get(rec) if isinstance(rec, int) else None
        wait_row = corr_rows.get(corr)
        if rec_row is None or wait_row is None:
            continue
        src = g.last_launched_before(
            _stream_tracks(trace, g, a.get("wait_on_stream")), int(s.start_ns[rec_row])
        )
        dst_tracks = _stream_tracks(trace, g, a.get("stream"))
        t_wait = int(s.start_ns[wait_row])
        for tr in dst_tracks.tolist():
            idx = np.flatnonzero((g.track == tr) & (g.launch_start_ns > t_wait))
            if len(idx) and src:
                out += [(src[0], int(idx[0]))]
    return out


def inferred_waits(g: RankGpu, launch_end_ns: I64) -> list[tuple[int, int]]:
    """``(source, waiting)`` pairs guessed from timing (see the module docstring).

    ``launch_end_ns`` is the end of each work's launch (the minimum int64 where none).
    """
    n = len(g)
    if n < 2:
        return []
    prev_end = np.full(n, np.iinfo(np.int64).min, dtype=np.int64)
    same = g.track[1:] == g.track[:-1]
    prev_end[1:] = np.where(same, g.end_ns[:-1], prev_end[1:])
    bound = np.maximum(prev_end, launch_end_ns)
    late = np.flatnonzero((g.start_ns - bound > INFER_GAP_NS) & (bound > np.iinfo(np.int64).min))
    if len(late) == 0:
        return []
    by_end = np.argsort(g.end_ns, kind="stable")
    ends = g.end_ns[by_end]
    out = []
    for v in late.tolist():
        hi = int(np.searchsorted(ends, g.start_ns[v], side="right"))
        lo = int(np.searchsorted(ends, g.start_ns[v] - INFER_TOLERANCE_NS, side="left"))
        for j in range(hi - 1, lo - 1, -1):
            u = int(by_end[j])
            if g.track[u] != g.track[v]:
                out.append((u, v))
                break
    return out
