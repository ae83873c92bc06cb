"""Build small synthetic Trace objects for analysis tests, without any importer.

``make_trace(events, memory=...)`` takes plain tuples, so a test reads as a timeline:

    make_trace([
        ev(Kind.KERNEL, 0, 100, device=0, stream=7, name="gemm"),
        ev(Kind.MEMCPY, 50, 80, device=0, stream=14, nbytes=1 << 20),
    ])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec
import numpy as np

from gpuviz.trace.errors import ImportWarnings
from gpuviz.trace.model import (
    ArgsStore,
    Flows,
    Instants,
    Kind,
    MemoryEvents,
    RankInfo,
    Slices,
    SymbolTable,
    Trace,
    TrackKind,
    Tracks,
)

GPU_KINDS = {Kind.KERNEL, Kind.MEMCPY, Kind.MEMSET, Kind.GPU_USER_ANNOTATION}


@dataclass
class Ev:
    """One slice: GPU kinds go to (rank, device, stream), CPU kinds to (rank, pid 1, tid)."""

    kind: Kind
    start: int
    dur: int
    name: str = "k"
    rank: int | None = None
    device: int = 0
    stream: int = 7
    tid: int = 1
    corr: int = -1
    nbytes: int = -1
    args: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def ev(kind: Kind, start: int, dur: int, name: str = "k", **kw: Any) -> Ev:
    """Shorthand for :class:`Ev`."""
    return Ev(kind, start, dur, name, **kw)


def mem(
    ts: int,
    device: int,
    nbytes: int,
    total: int = -1,
    reserved: int = -1,
    rank: int | None = None,
    device_type: int = 1,
) -> tuple[Any, ...]:
    """One ``[memory]`` event."""
    return (ts, -1 if rank is None else rank, device_type, device, 0, nbytes, total, reserved)


def make_trace(
    events: list[Ev],
    memory: list[tuple[Any, ...]] = (),
    ranks: list[int | None] | None = None,
    event_count: int | None = None,
) -> Trace:
    """A Trace holding ``events`` (and ``memory``), with the model's invariants."""
    sym = SymbolTable()
    track_keys: dict[tuple[int, int, int, int, int], int] = {}

    def track_of(e: Ev) -> tuple[int, int, int, int, int]:
        rank = -1 if e.rank is None else e.rank
        if e.kind in GPU_KINDS:
            tk = (
                TrackKind.GPU_ANNOTATION
                if e.kind == Kind.GPU_USER_ANNOTATION
                else TrackKind.GPU_STREAM
            )
            return (int(tk), rank, e.device, e.stream, e.device)
        return (int(TrackKind.CPU_THREAD), rank, -1, -1, e.tid)

    keys = sorted(
        {track_of(e) for e in events}
        | {(int(TrackKind.CPU_THREAD), m[1], -1, -1, 1) for m in memory}
    )
    # Order tracks by rank first, like an importer would.
    keys.sort(key=lambda k: (k[1], k[0], k[2], k[3], k[4]))
    for i, k in enumerate(keys):
        track_keys[k] = i
    tracks = Tracks(
        kind=np.array([k[0] for k in keys], np.uint8),
        rank=np.array([k[1] for k in keys], np.int32),
        device=np.array([k[2] for k in keys], np.int32),
        stream=np.array([k[3] for k in keys], np.int64),
        pid=np.array([k[2] if k[2] >= 0 else 1 for k in keys], np.int64),
        tid=np.array([k[3] if k[3] >= 0 else k[4] for k in keys], np.int64),
        label=sym.intern_many([f"stream {k[3]}" if k[3] >= 0 else f"thread {k[4]}" for k in keys]),
    )
    blobs: list[bytes] = []
    rows = []
    for e in events:
        args = dict(e.args or {})
        if e.corr >= 0:
            args.setdefault("correlation", e.corr)
        arg_row = -1
        if args:
            arg_row = len(blobs)
            blobs.append(msgspec.json.encode(args))
        rows.append(
            (
                e.start,
                e.dur,
                track_keys[track_of(e)],
                sym.intern(e.name),
                sym.intern(e.kind.name.lower()),
                int(e.kind),
                e.corr,
                e.nbytes,
                arg_row,
            )
        )
    rows.sort(key=lambda r: (r[2], r[0]))
    n = len(rows)
    col = list(zip(*rows)) if rows else [()] * 9
    slices = Slices(
        start_ns=np.array(col[0], np.int64),
        dur_ns=np.array(col[1], np.int64),
        track=np.array(col[2], np.int32),
        depth=np.zeros(n, np.int16),
        name=np.array(col[3], np.int32),
        cat=np.array(col[4], np.int32),
        kind=np.array(col[5], np.uint8),
        correlation=np.array(col[6], np.int64),
        external_id=np.full(n, -1, np.int64),
        bytes=np.array(col[7], np.int64),
        args=np.array(col[8], np.int32),
    )
    offsets = np.cumsum([0] + [len(b) for b in blobs]).astype(np.int64)
    mcol = list(zip(*memory)) if memory else [()] * 8
    mem_track = [track_keys[(int(TrackKind.CPU_THREAD), r, -1, -1, 1)] for r in mcol[1]]
    memory_events = MemoryEvents(
        ts_ns=np.array(mcol[0], np.int64),
        rank=np.array(mcol[1], np.int32),
        device_type=np.array(mcol[2], np.int8),
        device_id=np.array(mcol[3], np.int32),
        addr=np.array(mcol[4], np.int64),
        bytes=np.array(mcol[5], np.int64),
        total_allocated=np.array(mcol[6], np.int64),
        total_reserved=np.array(mcol[7], np.int64),
        track=np.array(mem_track, np.int32),
    )
    if ranks is None:
        ranks = sorted({e.rank for e in events}, key=lambda r: -1 if r is None else r) or [None]
    return Trace(
        symbols=sym,
        slices=slices,
        tracks=tracks,
        flows=Flows.empty(),
        memory=memory_events,
        instants=Instants.empty(),
        args=ArgsStore(b"".join(blobs), offsets),
        ranks=[RankInfo(rank=r, source=f"synthetic-{r}.json") for r in ranks],
        event_count=len(events) + len(memory) if event_count is None else event_count,
        warnings=ImportWarnings(),
    )


# --- Kineto events, imported by the real importer (attribution tests) -----------------------
# Attribution depends on how the importer lays events out (annotation lanes apart from their
# thread, driver calls as runtime, flows), so its tests write Kineto JSON and import it.

PID = 100


def k_op(name: str, ts: float, dur: float, tid: int = 1, **args: Any) -> dict[str, Any]:
    """A ``cpu_op`` (``args`` as Kineto names them: ``**{"Input Dims": ...}``)."""
    return {
        "ph": "X",
        "cat": "cpu_op",
        "name": name,
        "pid": PID,
        "tid": tid,
        "ts": ts,
        "dur": dur,
        "args": args,
    }


def k_annotation(name: str, ts: float, dur: float, tid: int = 1) -> dict[str, Any]:
    """A ``record_function`` range (``user_annotation``)."""
    return {
        "ph": "X",
        "cat": "user_annotation",
        "name": name,
        "pid": PID,
        "tid": tid,
        "ts": ts,
        "dur": dur,
    }


def k_launch(
    ts: float, corr: int, tid: int = 1, dur: float = 2, driver: bool = False
) -> dict[str, Any]:
    """A launch: ``cudaLaunchKernel`` (runtime) or ``cuLaunchKernelEx`` (driver)."""
    return {
        "ph": "X",
        "cat": "cuda_driver" if driver else "cuda_runtime",
        "name": "cuLaunchKernelEx" if driver else "cudaLaunchKernel",
        "pid": PID,
        "tid": tid,
        "ts": ts,
        "dur": dur,
        "args": {"correlation": corr},
    }


def k_kernel(name: str, ts: float, dur: float, corr: int, stream: int = 7) -> dict[str, Any]:
    """A kernel on device 0."""
    return {
        "ph": "X",
        "cat": "kernel",
        "name": name,
        "pid": 0,
        "tid": stream,
        "ts": ts,
        "dur": dur,
        "args": {"correlation": corr, "device": 0, "stream": stream},
    }


def k_py(
    name: str,
    ts: float,
    dur: float,
    tid: int = 1,
    pid_: int | None = None,
    parent: int | None = None,
) -> dict[str, Any]:
    """A ``python_function`` frame (``Python id``/``Python parent id`` when given)."""
    args: dict[str, Any] = {}
    if pid_ is not None:
        args["Python id"] = pid_
        args["Python parent id"] = parent
    return {
        "ph": "X",
        "cat": "python_function",
        "name": name,
        "pid": PID,
        "tid": tid,
        "ts": ts,
        "dur": dur,
        "args": args,
    }


def k_fwdbwd(
    flow_id: int, fwd_ts: float, bwd_ts: float, fwd_tid: int = 1, bwd_tid: int = 2
) -> list[dict[str, Any]]:
    """A ``fwdbwd`` flow from the forward op starting at ``fwd_ts`` to the backward op."""
    common = {"cat": "fwdbwd", "name": "fwdbwd", "id": flow_id, "pid": PID, "bp": "e"}
    return [
        dict(common, ph="s", tid=fwd_tid, ts=fwd_ts),
        dict(common, ph="f", tid=bwd_tid, ts=bwd_ts),
    ]


def kineto_trace(events: list[dict[str, Any]], folder: Any, name: str = "t.json") -> Trace:
    """Write ``events`` as a Kineto trace file in ``folder`` and import it."""
    import json

    from gpuviz.trace.kineto import load_trace

    path = folder / name
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events}))
    return load_trace(path)
